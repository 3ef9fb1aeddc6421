/*
 * test_process.c - the library in a process it shares with a program:
 * its own descriptors (backing files, the io_uring ring) sit high, out of
 * the program's way (fd.c), and a forked child can make a cache of its
 * own and use it while the parent's threads keep taking the locks a new
 * cache needs (tctx.c's fork handlers; the race they close is not forced
 * here, the test shows the child works).  Not under TSan, which cannot
 * run threads in the child of a multi-threaded fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "pagecache.h"
#include "util.h"

/* The lowest free descriptor number now. */
static int lowest_free(void)
{
	int fd = open("/dev/null", O_RDONLY);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

static void test_fds_high(void **state)
{
	char buf[4096], link[512], want[600];
	struct rlimit rl;
	long base;
	int low, found = 0;
	pc_cache *c;
	pc_file *f;
	DIR *d;
	struct dirent *e;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	base = (long)(rl.rlim_cur / 2 < 4096 ? rl.rlim_cur / 2 : 4096);
	low = lowest_free();
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, tu_path("high"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	memset(buf, 'h', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_fsync(f), 0);
	/* The program's next descriptor is the one it would have had. */
	assert_int_equal(lowest_free(), low);
	snprintf(want, sizeof(want), "%s", tu_path("high"));
	d = opendir("/proc/self/fd");
	assert_non_null(d);
	while ((e = readdir(d))) {
		char p[300];
		ssize_t n;
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, want) || strstr(link, "io_uring")) {
			found++;
			assert_true(fd >= base);
			assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
		}
	}
	closedir(d);
	assert_true(found >= 1);	/* the backing fd (and the ring) */
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* The descriptor open on @path, or -1; the first found. */
static int fd_of(const char *path)
{
	char p[300], link[512];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int found = -1;

	assert_non_null(d);
	while (found < 0 && (e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, path))
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/*
 * fd.c keeps the soft limit it read: a limit lowered since is seen at
 * the next move (F_DUPFD's EINVAL), and the descriptor lands at half the
 * new limit, not left low.
 */
static void test_fds_high_limit_lowered(void **state)
{
	struct rlimit old, low;
	char buf[4096], want[600];
	pc_cache *c;
	pc_file *f, *g;
	int fd;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_cur < 1024)
		skip();		/* the base would be under 512 already */
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	/* the first move: the limit is read, and kept */
	assert_int_equal(pc_open(c, tu_path("first"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	low = old;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(pc_open(c, tu_path("second"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &g), 0);
	memset(buf, 's', sizeof(buf));
	assert_int_equal(pc_pwrite(g, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_fsync(g), 0);
	snprintf(want, sizeof(want), "%s", tu_path("second"));
	fd = fd_of(want);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_true(fd >= 128 && fd < 256);
	assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static _Atomic int churn_stop;

/* Short-lived threads that each touch the cache: their exit takes the
 * process-wide lock a new cache needs too. */
static void *toucher(void *arg)
{
	pc_cache *c = arg;

	pc_thread_set_node(c, 0);
	return NULL;
}

static void *churn(void *arg)
{
	while (!atomic_load(&churn_stop)) {
		pthread_t t;

		if (pthread_create(&t, NULL, toucher, arg) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static int child_cache(int round)
{
	char name[64], buf[8192], back[8192];
	pc_cache *c;
	pc_file *f;

	alarm(60);	/* a deadlocked child fails, it does not hang the test */
	snprintf(name, sizeof(name), "child-%d", round);
	memset(buf, 'a' + round % 26, sizeof(buf));
	if (pc_cache_create(&c, "memory=1M") || pc_open(c, tu_path(name),
			O_RDWR | O_CREAT | O_TRUNC, 0644, &f))
		return 1;
	for (int i = 0; i < 64; i++)	/* enough to reclaim and free nodes */
		if (pc_pwrite(f, buf, sizeof(buf), (off_t)i * 8192) != 8192)
			return 2;
	if (pc_fsync(f) || pc_pread(f, back, sizeof(back), 8192 * 63) != 8192 ||
	    memcmp(back, buf, sizeof(buf)))
		return 3;
	if (pc_close(f) || pc_cache_destroy(c))
		return 4;
	return 0;
}

static void test_fork_child_cache(void **state)
{
	pthread_t churner;
	pc_cache *c;
	pc_file *f;

	(void)state;
#ifdef PC_TSAN
	/* TSan cannot start threads in the child of a multi-threaded fork
	 * (die_after_fork; with it off, it fails on reused thread ids). */
	skip();
#endif
#ifdef __SANITIZE_ADDRESS__
	/* gcc 12's ASan takes no allocator lock across fork: a child of
	 * threads that allocate (the churner's, freeing into the
	 * quarantine) can inherit a held one and hang at its first malloc.
	 * glibc's malloc is fork-safe: the other builds run it. */
	skip();
#endif
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, tu_path("parent"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, "parent", 6, 0), 6);
	atomic_store(&churn_stop, 0);
	pthread_create(&churner, NULL, churn, c);
	for (int round = 0; round < 20; round++) {
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(child_cache(round));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("round %d: child status 0x%x", round, status);
	}
	atomic_store(&churn_stop, 1);
	pthread_join(churner, NULL);
	/* The parent's cache is untouched by it all. */
	{
		char back[8] = { 0 };

		assert_int_equal(pc_pread(f, back, sizeof(back), 0), 6);
		assert_string_equal(back, "parent");
	}
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fds_high),
		cmocka_unit_test(test_fds_high_limit_lowered),
		cmocka_unit_test(test_fork_child_cache),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
