/*
 * test_writeback.c - writing pages out (src/writeback.c) and its requests
 * (src/writeback_io.c): 1 MiB requests where the file allows and several
 * in flight, a failing device at destroy (the bounded retries of
 * pc__writeback_mapping_retry), unlinked files, and reclaim's PG_reclaim
 * at a write's end.  util_wb.h has the helpers and says how the checks
 * are made.  The page lock and writeback waits through a whole cache,
 * and their stress, are test_writeback_stress.c's; the flusher is
 * test_bdi.c's, the throttle test_throttle.c's, errors test_errseq.c's,
 * commits and fsync test_sync.c's, the file's end on the disk
 * test_backing_extend.c's; the crash-safety case is in test_crash.c.
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
#include "dirty.h"
#include "filemap.h"
#include "inode.h"
#include "tctx.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "util_wb.h"

/* ------------------------------------------------------------------ */
/* Requests: 1 MiB where the file allows, several in flight            */

static void test_request_sizes(void **state)
{
	const char *path = tu_path("reqs");
	struct pc_io_fault count = write_rule(0, 0, -1);	/* only counts */
	pc_cache *c = mk("memory=64M io=fault");
	uint64_t req0, now0, out0;
	pc_file *f;

	(void)state;
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &count), 0);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	/* 6 MiB, contiguous: six requests of 1 MiB, to the ring. */
	write_pat(f, 0, 6 * MIB, 5);
	req0 = vm(c, "writeback_requests");
	now0 = vm(c, "writeback_requests_now");
	out0 = vm(c, "pgpgout");
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 6);
	assert_int_equal(vm(c, "writeback_requests_now") - now0, 0);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 6);
	assert_int_equal(vm(c, "pgpgout") - out0, 6 * 1024);
	check_disk(path, 0, 6 * MIB, 5);

	/* Pages 1..770: runs of 256 from the first dirty page: 4 requests. */
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &count), 0);
	write_pat(f, PAGE, 770 * PAGE, 6);
	req0 = vm(c, "writeback_requests");
	assert_int_equal(pc_fdatasync(f), 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 4);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 4);

	/* Holes between: one request per run. */
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &count), 0);
	for (int i = 0; i < 8; i++)
		write_pat(f, (uint64_t)i * MIB, 3 * PAGE, 7);
	req0 = vm(c, "writeback_requests");
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 8);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 8);
	for (int i = 0; i < 8; i++)
		check_disk(path, (uint64_t)i * MIB, 3 * PAGE, 7);

	/* A commit's few pages, whatever the range fsync asks for (the whole
	 * file): written by the caller itself, no completion thread. */
	write_pat(f, 2 * MIB, 3 * PAGE, 8);
	write_pat(f, 5 * MIB, 2 * PAGE, 8);
	req0 = vm(c, "writeback_requests");
	now0 = vm(c, "writeback_requests_now");
	assert_int_equal(pc_fdatasync(f), 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 2);
	assert_int_equal(vm(c, "writeback_requests_now") - now0, 2);
	check_disk(path, 2 * MIB, 3 * PAGE, 8);
	check_disk(path, 5 * MIB, 2 * PAGE, 8);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

struct inflight_watch {
	struct pc_bdi *b;
	_Atomic bool stop;
	int max;
};

static void *inflight_watcher(void *arg)
{
	struct inflight_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		int n = pc__bdi_in_flight(w->b);

		if (n > w->max)
			w->max = n;
	}
	return NULL;
}

/* With io_uring, fsync keeps several 1 MiB requests in flight at once. */
static void test_several_in_flight(void **state)
{
	const char *path = tu_path("inflight");
	int best = 0;

	(void)state;
	for (int round = 0; round < 5 && best < 2; round++) {
		pc_cache *c = mk("memory=96M writeback.dirty_ratio=90 "
				 "writeback.dirty_background_ratio=80");
		struct inflight_watch w = { 0 };
		pthread_t th;
		pc_file *f;

		if (pc__local(c)->io_ops != &pc__io_uring_ops) {
			pc_cache_destroy(c);
			printf("no io_uring here: one request in flight at a time\n");
			skip();
		}
		f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
		write_pat(f, 0, 48 * MIB, 8);
		w.b = f->mapping->bdi;
		pthread_create(&th, NULL, inflight_watcher, &w);
		assert_int_equal(pc_fsync(f), 0);
		atomic_store(&w.stop, true);
		tu_join(th);
		best = pc_max(best, w.max);
		printf("round %d: at most %d requests in flight, %" PRIu64
		       " requests for 48 MiB\n", round, w.max,
		       vm(c, "writeback_requests"));
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	assert_true(best >= 2);
	check_disk(path, 0, 48 * MIB, 8);
}

/* ------------------------------------------------------------------ */
/* A failing device at destroy                                        */

/* A device that keeps failing does not hang destroy, which reports it. */
static void test_destroy_failing_device(void **state)
{
	const char *path = tu_path("dead");
	pc_cache *c = mk("memory=16M io=fault");
	struct pc_io_fault fail = write_rule(EIO, 0, -1);
	uint64_t t0;
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 16 * PAGE, 18);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	t0 = now_ms();
	assert_int_equal(pc_cache_destroy(c), -EIO);
	printf("destroy gave up after %" PRIu64 " ms\n", now_ms() - t0);
}

/* A device that fails twice and then works: destroy's retries write it. */
static void test_destroy_retries(void **state)
{
	const char *path = tu_path("hiccup");
	pc_cache *c = mk("memory=16M io=fault");
	struct pc_io_fault fail = write_rule(EIO, 0, 2);
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 16 * PAGE, 19);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	/* The error is reported (no file was open to hear of it)... */
	assert_int_equal(pc_cache_destroy(c), -EIO);
	/* ... and the data written all the same. */
	check_disk(path, 0, 16 * PAGE, 19);
}

/* ------------------------------------------------------------------ */
/* Unlinked files                                                      */

static void test_unlinked_close_writes_nothing(void **state)
{
	const char *pa = tu_path("unl-a"), *pb = tu_path("unl-b");
	/* Expiry 50 ms, background 409 pages, freerun 614. */
	pc_cache *c = mk("memory=16M writeback.dirty_expire_ms=50 "
			 "writeback.interval_ms=20");
	pc_file *a, *b;
	struct stat st;

	(void)state;
	/* Unlinked at once, then written (aim7 disk_wrt). */
	a = op(c, pa, O_RDWR | O_CREAT | O_TRUNC);
	assert_int_equal(pc_unlink(c, pa), 0);
	write_pat(a, 0, 100 * PAGE, 21);
	/* Written, then unlinked while open; above the background threshold. */
	b = op(c, pb, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(b, 0, 50 * PAGE, 22);
	assert_int_equal(pc_unlink(c, pb), 0);
	write_pat(b, 50 * PAGE, 400 * PAGE, 22);
	assert_int_equal(vm(c, "nr_dirty"), 550);
	/* Expired and over the background threshold: the flusher leaves them. */
	sleep_ms(400);
	assert_int_equal(vm(c, "pgpgout"), 0);
	assert_int_equal(vm(c, "nr_dirty"), 550);
	assert_true(vm(c, "flusher_wakeups") > 0);
	assert_int_equal(pc_close(a), 0);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(vm(c, "pgpgout"), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	assert_int_equal(vm(c, "nr_writeback"), 0);
	assert_int_equal(stat(pa, &st), -1);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Past the freerun point unlinked files are written like any other. */
static void test_unlinked_written_under_pressure(void **state)
{
	const char *path = tu_path("unl-big");
	pc_cache *c = mk("memory=16M io=sync");
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	assert_int_equal(pc_unlink(c, path), 0);
	write_pat(f, 0, 8 * MIB, 23);	/* 2048 pages: limit is 819 */
	assert_true(vm(c, "pgpgout") > 0);
	assert_true(vm(c, "nr_dirty") + vm(c, "nr_writeback") <= 819 + 40);
	assert_int_equal(pc_close(f), 0);
	/* Dropped when the flusher, if it is on it, lets go. */
	assert_true(wait_vm(c, "nr_dirty", 0, false, 20000));
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Reclaim interplay                                                   */

/* A page reclaim marked while under writeback goes to the tail at its end. */
static void test_end_writeback_rotates(void **state)
{
	const char *path = tu_path("rotate");
	pc_cache *c = mk("memory=16M io=sync cache.stickiness=off");
	struct pc_page *p;
	struct pc_node *n;
	uint64_t rot0;
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 8 * PAGE, 24);
	assert_int_equal(pc_fsync(f), 0);
	pc__tctx_drain_all(c);
	p = pc__find_get_page(f->mapping, 3);
	assert_non_null(p);
	n = page_node(c, p);
	assert_true(page_test(p, PG_lru));
	assert_false(page_test(p, PG_active));
	assert_int_not_equal(n->lru[PC_LRU_INACTIVE].tail, page_pfn(c, p));

	rot0 = vm(c, "pgrotated");
	page_set(p, PG_writeback);
	page_set(p, PG_reclaim);
	pc__end_page_writeback(c, p);
	assert_false(page_test(p, PG_writeback));
	assert_false(page_test(p, PG_reclaim));
	assert_int_equal(vm(c, "pgrotated") - rot0, 1);
	assert_int_equal(n->lru[PC_LRU_INACTIVE].tail, page_pfn(c, p));

	pc__put_page(c, p);

	/* Dirtied again meanwhile: not rotated (it is not reclaimable). */
	p = pc__find_get_page(f->mapping, 5);
	assert_non_null(p);
	page_set(p, PG_writeback);
	page_set(p, PG_reclaim);
	page_set(p, PG_dirty);
	pc__end_page_writeback(c, p);
	page_clear(p, PG_dirty);
	assert_int_equal(vm(c, "pgrotated") - rot0, 1);
	assert_false(page_test(p, PG_reclaim));
	assert_int_not_equal(n->lru[PC_LRU_INACTIVE].tail, page_pfn(c, p));
	pc__put_page(c, p);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_sizes),
		cmocka_unit_test(test_several_in_flight),
		cmocka_unit_test(test_destroy_failing_device),
		cmocka_unit_test(test_destroy_retries),
		cmocka_unit_test(test_unlinked_close_writes_nothing),
		cmocka_unit_test(test_unlinked_written_under_pressure),
		cmocka_unit_test(test_end_writeback_rotates),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
