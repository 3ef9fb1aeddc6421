/*
 * preload_util.h - what the programs under the shim share (test_preload,
 * test_preload_handoff): a scratch directory, seeds, the kernel's view
 * with raw system calls (syscall(2) bypasses the shim, but for the copies'
 * numbers, which the shim serves: kernel_syscall is libc's own), the errno
 * oracle,
 * and the main that configures the cache before the first managed open.
 * The programs link libpagecache-preload.so of their build's flavour and
 * of tests/util only the thread-safe assertions (util.h).
 */
#ifndef PC_PRELOAD_UTIL_H
#define PC_PRELOAD_UTIL_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* 2 MiB, writeback held back: dirty data stays dirty until written back. */
#define CONFIG "memory=2M writeback.interval_ms=3600000 writeback.dirty_expire_ms=3600000"

static char dir[256];

static inline const char *path(const char *name)
{
	static __thread char buf[4][320];
	static __thread int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static inline uint64_t seed_of(const char *test)
{
	const char *e = getenv("PC_SEED");
	struct timespec ts;
	uint64_t s;

	clock_gettime(CLOCK_REALTIME, &ts);
	s = e ? strtoull(e, NULL, 0) : ((uint64_t)ts.tv_nsec ^ (uint64_t)getpid()) | 1;
	printf("seed %s: %" PRIu64 " (replay with PC_SEED=%" PRIu64 ")\n", test, s, s);
	fflush(stdout);
	return s;
}

static inline uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1Dull;
}

static inline void fill(char *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('a' + (rnd(&seed) % 26));
}

/*
 * libc's syscall(2), behind the shim's: the shim serves copy_file_range,
 * sendfile and splice made with syscall(2) (preload/copy.c).
 */
static inline long (*kernel_syscall_fn(void))(long, ...)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *p = libc ? dlsym(libc, "syscall") : NULL;

	assert_non_null(p);
	return (long (*)(long, ...))p;
}
#define kernel_syscall(...) (kernel_syscall_fn()(__VA_ARGS__))

/* The kernel's view, bypassing the shim. */
static inline ssize_t raw_pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

static inline off_t raw_size(int fd)
{
	struct stat st;

	assert_int_equal(syscall(SYS_fstat, fd, &st), 0);
	return st.st_size;
}

static inline off_t shim_size(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

/* The shim's errno of a failed call equals the raw call's. */
#define SAME_ERRNO(call, rawcall) \
	do { \
		long r1_, r2_; \
		int e1_, e2_; \
		errno = 0; \
		r1_ = (long)(call); \
		e1_ = errno; \
		errno = 0; \
		r2_ = (long)(rawcall); \
		e2_ = errno; \
		if (r1_ != -1 || r2_ != -1 || e1_ != e2_) \
			fail_msg("%s: %ld errno %d, kernel %ld errno %d", #call, \
				 r1_, e1_, r2_, e2_); \
	} while (0)

static inline int open_rw(const char *name)
{
	int fd = open(path(name), O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	return fd;
}

/* Configure the cache, make the directory, run, clean up. */
static inline int preload_main(const struct CMUnitTest *tests, size_t n,
			       int argc, char **argv)
{
	const char *base = getenv("PC_TEST_DIR");
	char cmd[300];
	int r;

	/* The cache is made at the first managed open: configure it first. */
	setenv("PAGECACHE_CONFIG", CONFIG, 1);
	snprintf(dir, sizeof(dir), "%s/pcpreload.XXXXXX", base ? base : "/var/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	r = _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return r;
}

#endif
