/*
 * test_io_uring.c - the io_uring backend (io_uring.c, io_uring_cq.c)
 * losing its ring.
 *
 *   ring_lost   the ring's descriptor is closed behind the cache's back
 *               (as a program that closes every descriptor it did not
 *               open does): the next submission fails; the process goes
 *               on, the requests the kernel never took are done through
 *               the sync backend's way, io_uring_fallback says so, and
 *               every byte written reaches the disk;
 *   fallback    a healthy ring: io_uring_fallback is 0 (the cases that
 *               mean to test io_uring check it).
 *
 * Skipped (cmocka skip) where io_uring cannot be set up.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

#define PG 4096

/* A cache on io=uring, or skip: this machine has no io_uring. */
static pc_cache *uring_cache(const char *cfg)
{
	pc_cache *c;

	assert_int_equal(pc_cache_create(&c, cfg), 0);
	if (tu_vm(c, "io_uring_fallback")) {
		printf("  io_uring unavailable here: skipped\n");
		pc_cache_destroy(c);
		skip();
	}
	return c;
}

/* The process's io_uring descriptors, closed; how many. */
static unsigned close_rings(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;
	int fds[16];

	assert_non_null(d);
	while ((e = readdir(d))) {
		char link[300], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strcmp(target, "anon_inode:[io_uring]") == 0 && n < 16)
			fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	return n;
}

static void test_ring_lost(void **state)
{
	struct tu_model a;
	pc_cache *c;
	int e;

	(void)state;
	c = uring_cache("memory=8M io=uring");
	tu_model_init(&a, tu_path("ringlost"), 1 << 20);
	tu_model_open(&a, c, O_RDWR | O_CREAT | O_TRUNC);
	tu_model_write(&a, 0, 256 * 1024 + 100, 1);
	assert_int_equal(pc_fsync(a.f), 0);	/* the ring works */
	tu_model_write(&a, 4096, 128 * 1024, 2);	/* dirty again */
	assert_int_equal(close_rings(), 1);
	/* The process lives; the error, if the ring held some, is told. */
	e = pc_fsync(a.f);
	if (e)
		assert_int_equal(e, -EIO);
	assert_int_equal(pc_fsync(a.f), 0);
	assert_int_equal(tu_vm(c, "io_uring_fallback"), 1);
	tu_model_check_disk(&a);
	/* I/O goes on: writes, reads of pages not cached. */
	tu_model_write(&a, 300 * 1024, 200 * 1024 + 7, 3);
	assert_int_equal(pc_fsync(a.f), 0);
	tu_model_check_disk(&a);
	assert_int_equal(pc_fadvise(a.f, 0, 0, POSIX_FADV_DONTNEED), 0);
	tu_model_read(&a, 0, a.size);
	tu_model_fini(&a);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_fallback(void **state)
{
	pc_cache *c;

	(void)state;
	c = uring_cache("memory=4M io=uring");
	assert_int_equal(tu_vm(c, "io_uring_fallback"), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_create(&c, "memory=4M io=sync"), 0);
	assert_int_equal(tu_vm(c, "io_uring_fallback"), 0);	/* not asked */
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_ring_lost),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
