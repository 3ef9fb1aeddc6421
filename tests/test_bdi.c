/*
 * test_bdi.c - the flusher of each backing device (src/bdi.c): its
 * background threshold and the expiry of dirty pages.  util_wb.h has the
 * helpers and says how the checks are made.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "util_wb.h"

/* ------------------------------------------------------------------ */
/* The flusher: background threshold, expiry, bandwidth                */

static void test_background_threshold(void **state)
{
	const char *path = tu_path("bg");
	/* 16M: 4096 frames, background 409 pages, limit 819, freerun 614. */
	pc_cache *c = mk("memory=16M io=sync");
	uint64_t bg = vm(c, "nr_dirty_background_threshold");
	pc_file *f;

	(void)state;
	assert_int_equal(bg, 409);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	/* Below the threshold nothing is written (expiry is 30 s away). */
	write_pat(f, 0, 300 * PAGE, 9);
	sleep_ms(300);
	assert_int_equal(vm(c, "nr_dirty"), 300);
	assert_int_equal(vm(c, "pgpgout"), 0);
	/* Above it the flusher writes until dirty is below it again. */
	write_pat(f, 300 * PAGE, 300 * PAGE, 10);
	assert_true(wait_vm(c, "nr_dirty", bg, false, 20000));
	assert_true(wait_vm(c, "pgpgout", 1, true, 20000));
	assert_true(vm(c, "flusher_wakeups") > 0);
	assert_int_equal(pc_fsync(f), 0);
	check_disk(path, 0, 300 * PAGE, 9);
	check_disk(path, 300 * PAGE, 300 * PAGE, 10);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_expire(void **state)
{
	const char *path = tu_path("expire");
	pc_cache *c;
	pc_file *f;
	uint64_t t0;

	(void)state;
	/* Default: 30 s.  Nothing moves in half a second. */
	c = mk("memory=64M io=sync writeback.interval_ms=50");
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 10 * PAGE, 11);
	sleep_ms(500);
	assert_int_equal(vm(c, "nr_dirty"), 10);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	check_disk(path, 0, 10 * PAGE, 11);	/* destroy wrote it */

	/*
	 * Expiry 300 ms, interval 100 ms: written without fsync, not before
	 * it expired, and whole (1200 pages: more than one chunk, below the
	 * background threshold of 1638).
	 */
	c = mk("memory=64M io=sync writeback.dirty_expire_ms=300 "
	       "writeback.interval_ms=100");
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	t0 = now_ms();
	write_pat(f, 0, 1200 * PAGE, 12);
	assert_true(wait_vm(c, "pgpgout", 1200 * 4, true, 20000));
	assert_true(now_ms() - t0 >= 300);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	assert_int_equal(vm(c, "pgpgout"), 1200 * 4);
	check_disk(path, 0, 1200 * PAGE, 12);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_background_threshold),
		cmocka_unit_test(test_expire),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
