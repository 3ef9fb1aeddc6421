/*
 * util.c - helpers shared by the tests: child processes (run, killed,
 * counted in a shared cache), scratch directory, seeds, patterns,
 * counters, the reference model of a file.  Its assertions go through
 * util_assert.c like the tests' own, so any thread may call these.
 * State is the caller's: tu_rand's, a model's (one thread at a time).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void tu_in_child(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	(void)tu_dir();	/* the parent's: the child must not make its own */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child %d failed: status %#x", (int)pid, status);
}

void tu_in_children(unsigned n, void (*fn)(unsigned i, void *arg), void *arg)
{
	pid_t pid[64];

	assert_true(n <= 64);
	(void)tu_dir();
	fflush(stdout);
	fflush(stderr);
	for (unsigned i = 0; i < n; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			fn(i, arg);
			fflush(stdout);
			_exit(tu_thread_failures() ? 1 : 0);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int status;

		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("child %u (%d) failed: status %#x", i,
				 (int)pid[i], status);
	}
}

void tu_kill_wait(pid_t pid)
{
	int status;

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
}

void tu_wait_processes(pc_cache *c, unsigned n)
{
	while (pc_cache_processes(c) > n)
		tu_sleep_us(500);
	assert_int_equal(pc_cache_processes(c), n);
}

/* ------------------------------------------------------------------ */
/* Scratch files, seeds, patterns.                                      */

static char dir[512];

static void rm_dir(void)
{
	char cmd[600];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
}

static void make_dir(void)
{
	const char *base = getenv("PC_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/pctest.XXXXXX", base ? base : "/var/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(rm_dir);
}

const char *tu_dir(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_dir);	/* worker threads may be first */
	return dir;
}

const char *tu_path(const char *name)
{
	static __thread char buf[8][600];
	static __thread int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tu_dir(), name);
	return buf[i];
}

uint64_t tu_seed(const char *test)
{
	const char *e = getenv("PC_SEED");
	uint64_t s;

	if (e) {
		s = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		    (uint64_t)getpid();
	}
	if (!s)
		s = 1;
	printf("seed %s: %" PRIu64 " (replay with PC_SEED=%" PRIu64 ")\n",
	       test, s, s);
	fflush(stdout);
	return s;
}

uint64_t tu_rand(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

void tu_pattern(void *buf, size_t len, uint64_t seed, uint64_t off)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ULL ^ seed;

		b[i] = (unsigned char)(x >> 56 ^ x >> 13);
	}
}

void tu_source(char *buf, size_t size, const char *rel)
{
	const char *build = getenv("PC_TEST_BUILD");
	const char *slash = strrchr(__FILE__, '/');	/* tests/util.c */
	struct stat st;

	snprintf(buf, size, "%.*s../%s",
		 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__, rel);
	if (stat(buf, &st) != 0)
		snprintf(buf, size, "%s/../../%s", build ? build : ".", rel);
}

int tu_dir_is_tmpfs(void)
{
	struct statfs sf;

	return statfs(tu_dir(), &sf) == 0 && sf.f_type == 0x01021994;
}

void tu_make_file(const char *path, size_t pages, uint64_t seed)
{
	const size_t chunk = 256 * PC_PAGE_SIZE;
	size_t len = pages * PC_PAGE_SIZE;
	unsigned char *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_non_null(buf);
	assert_true(fd >= 0);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		tu_pattern(buf, n, seed, off);
		assert_int_equal(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
	}
	assert_int_equal(close(fd), 0);
	free(buf);
}

void tu_make_sparse(const char *path, uint64_t bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	assert_int_equal(close(fd), 0);
}

void tu_disk_check(const char *path, const void *want, size_t len)
{
	const unsigned char *w = want;
	unsigned char *got = malloc(len);
	int fd = open(path, O_RDONLY);

	assert_non_null(got);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, len, 0), (ssize_t)len);
	close(fd);
	for (size_t i = 0; i < len; i++)
		if (got[i] != w[i])
			fail_msg("%s: byte %zu is %#x on the disk, want %#x",
				 path, i, got[i], w[i]);
	free(got);
}

pc_cache *tu_cache(const char *cfg)
{
	pc_cache *c;

	if (pc_cache_create(&c, cfg) != 0)
		fail_msg("cannot create a cache with \"%s\"", cfg);
	return c;
}

pc_file *tu_open_ro(pc_cache *c, const char *path)
{
	pc_file *f;

	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	return f;
}

pc_file *tu_open_random(pc_cache *c, const char *path, int flags)
{
	pc_file *f;

	assert_int_equal(pc_open(c, path, flags, 0644, &f), 0);
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_RANDOM), 0);
	return f;
}

void tu_read_page(pc_file *f, uint64_t idx, uint64_t seed)
{
	unsigned char buf[PC_PAGE_SIZE], want[PC_PAGE_SIZE];

	assert_int_equal(pc_pread(f, buf, PC_PAGE_SIZE,
				  (off_t)(idx * PC_PAGE_SIZE)), PC_PAGE_SIZE);
	tu_pattern(want, PC_PAGE_SIZE, seed, idx * PC_PAGE_SIZE);
	if (memcmp(buf, want, PC_PAGE_SIZE) != 0)
		fail_msg("page %llu differs", (unsigned long long)idx);
}

void tu_read_check(pc_file *f, void *buf, size_t len, uint64_t off,
		   uint64_t seed)
{
	unsigned char *want;
	ssize_t got = pc_pread(f, buf, len, (off_t)off);

	if (got != (ssize_t)len)
		fail_msg("pread %zu at %llu: %zd", len, (unsigned long long)off, got);
	want = malloc(len);
	assert_non_null(want);
	tu_pattern(want, len, seed, off);
	if (memcmp(buf, want, len) != 0)
		fail_msg("pread %zu at %llu: wrong data", len, (unsigned long long)off);
	free(want);
}

uint64_t tu_vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	if (pc_vmstat(c, name, &v) != 0)
		fail_msg("no counter %s", name);
	return v;
}

void tu_sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ------------------------------------------------------------------ */
/* The reference model of a file.                                       */

void tu_model_init(struct tu_model *m, const char *path, size_t cap)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->cap = cap;
	m->data = calloc(1, cap);
	assert_non_null(m->data);
}

void tu_model_fini(struct tu_model *m)
{
	if (m->f)
		tu_model_close(m);
	free(m->data);
	m->data = NULL;
}

void tu_model_open(struct tu_model *m, pc_cache *c, int flags)
{
	int e = pc_open(c, m->path, flags, 0644, &m->f);

	if (e)
		fail_msg("pc_open %s: %s", m->path, strerror(-e));
	if (flags & O_TRUNC) {
		memset(m->data, 0, m->size);
		m->size = 0;
	}
	assert_int_equal(pc_size(m->f), (off_t)m->size);
}

void tu_model_close(struct tu_model *m)
{
	int e = pc_close(m->f);

	m->f = NULL;
	if (e)
		fail_msg("pc_close %s: %s", m->path, strerror(-e));
}

void tu_model_apply(struct tu_model *m, size_t off, const void *buf,
		    size_t len)
{
	assert_true(off + len <= m->cap);
	memcpy(m->data + off, buf, len);	/* a gap before it is zeros */
	if (off + len > m->size)
		m->size = off + len;
}

void tu_model_write(struct tu_model *m, size_t off, size_t len, uint64_t pat)
{
	unsigned char *buf = malloc(len ? len : 1);
	ssize_t got;

	assert_non_null(buf);
	tu_pattern(buf, len, pat, off);
	got = pc_pwrite(m->f, buf, len, (off_t)off);
	if (got != (ssize_t)len)
		fail_msg("pwrite %s (%zu, %zu) = %zd", m->path, off, len, got);
	tu_model_apply(m, off, buf, len);
	free(buf);
}

void tu_model_truncate(struct tu_model *m, size_t len)
{
	int e = pc_ftruncate(m->f, (off_t)len);

	if (e)
		fail_msg("ftruncate %s %zu: %s", m->path, len, strerror(-e));
	assert_true(len <= m->cap);
	if (len < m->size)
		memset(m->data + len, 0, m->size - len);
	m->size = len;
	assert_int_equal(pc_size(m->f), (off_t)len);
}

void tu_model_check(const struct tu_model *m, const void *got, size_t off,
		    size_t len, const char *what)
{
	const unsigned char *g = got;
	size_t i = 0;

	if (memcmp(g, m->data + off, len) == 0)
		return;
	while (g[i] == m->data[off + i])
		i++;
	fail_msg("%s %s (%zu, %zu): byte %zu is %#x, the model's %#x", what,
		 m->path, off, len, off + i, g[i], m->data[off + i]);
}

void tu_model_read(struct tu_model *m, size_t off, size_t len)
{
	unsigned char *buf = malloc(len ? len : 1);
	size_t want = off >= m->size ? 0 : len < m->size - off ? len
							      : m->size - off;
	ssize_t got = pc_pread(m->f, buf, len, (off_t)off);

	if (got != (ssize_t)want)
		fail_msg("pread %s (%zu, %zu) = %zd, want %zu", m->path, off,
			 len, got, want);
	tu_model_check(m, buf, off, want, "pread");
	free(buf);
}

void tu_model_check_disk(const struct tu_model *m)
{
	unsigned char *buf = malloc(m->size + 1);
	int fd = open(m->path, O_RDONLY);
	struct stat st;

	assert_non_null(buf);
	if (fd < 0)
		fail_msg("open %s: %s", m->path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	if ((size_t)st.st_size != m->size)
		fail_msg("%s: size on disk %lld, the model's %zu", m->path,
			 (long long)st.st_size, m->size);
	assert_int_equal(pread(fd, buf, m->size + 1, 0), (ssize_t)m->size);
	tu_model_check(m, buf, 0, m->size, "disk");
	close(fd);
	free(buf);
}
