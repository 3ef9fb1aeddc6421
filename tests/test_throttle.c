/*
 * test_throttle.c - dirty accounting, the dirty limits and the writers'
 * throttle (src/throttle.c): the limits from ratios and from bytes, the
 * dirty and writeback counters at each level, a fast writer paced
 * against a slow device (one writer and two), and no stall when the
 * flusher cannot make progress.  util_wb.h has the helpers and says how
 * the checks are made.  Random cases print their seed; PC_SEED=N
 * replays.  The worker threads here count what went wrong (a writer its
 * errors) and the main thread checks; they could assert as well (util.h),
 * they have not needed to.
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
#include "inode.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "util_wb.h"

/* ------------------------------------------------------------------ */
/* Dirty accounting and limits                                         */

static void test_limits(void **state)
{
	const char *path = tu_path("limits");
	struct pc_bdi *b;
	uint64_t want;
	pc_cache *c;
	pc_file *f;

	(void)state;
	/* 64M = 16384 frames: 20% and 10% of them. */
	c = mk("memory=64M io=sync");
	assert_int_equal(vm(c, "nr_dirty_threshold"), 16384 * 20 / 100);
	assert_int_equal(vm(c, "nr_dirty_background_threshold"), 16384 * 10 / 100);
	assert_int_equal(pc_cache_destroy(c), 0);

	c = mk("memory=64M writeback.dirty_ratio=30 "
	       "writeback.dirty_background_ratio=5");
	assert_int_equal(vm(c, "nr_dirty_threshold"), 16384 * 30 / 100);
	assert_int_equal(vm(c, "nr_dirty_background_threshold"), 16384 * 5 / 100);
	assert_int_equal(pc_cache_destroy(c), 0);

	/* In bytes. */
	c = mk("memory=64M writeback.dirty_bytes=8M "
	       "writeback.dirty_background_bytes=2M");
	assert_int_equal(vm(c, "nr_dirty_threshold"), 2048);
	assert_int_equal(vm(c, "nr_dirty_background_threshold"), 512);
	assert_int_equal(pc_cache_destroy(c), 0);

	/*
	 * By time: the bytes the device writes in 100 ms at its bandwidth
	 * (100 MiB/s until measured), per bdi; background at half.
	 */
	c = mk("memory=64M io=sync writeback.dirty_time_ms=100");
	assert_int_equal(vm(c, "nr_dirty_threshold"), 16384 * 20 / 100);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	b = f->mapping->bdi;
	want = (100ull << 20) / 1000 * 100 / PAGE;	/* 2559 */
	assert_int_equal(atomic_load(&b->dirty_limit), want);
	assert_int_equal(atomic_load(&b->dirty_bg_limit), want / 2);
	assert_int_equal(vm(c, "nr_dirty_threshold"), want);
	assert_int_equal(vm(c, "nr_dirty_background_threshold"), want / 2);
	/* A slower device gets fewer dirty pages, down to two requests. */
	atomic_store(&b->write_bw, 40ull << 20);
	pc__update_dirty_limits(c);
	assert_int_equal(vm(c, "nr_dirty_threshold"),
			 (40ull << 20) / 1000 * 100 / PAGE);
	atomic_store(&b->write_bw, 1ull << 20);
	pc__update_dirty_limits(c);
	assert_int_equal(vm(c, "nr_dirty_threshold"), 2 * PC_MAX_IO_PAGES);
	/* A fast one no more than half the budget. */
	atomic_store(&b->write_bw, 10ull << 30);
	pc__update_dirty_limits(c);
	assert_int_equal(vm(c, "nr_dirty_threshold"), 16384 / 2);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);

	assert_int_equal(pc_cache_create(&c, "writeback.dirty_time_ms=-1"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "writeback.dirty_bytes=x"), -EINVAL);
}

static void test_accounting(void **state)
{
	const char *pa = tu_path("acct-a"), *pb = tu_path("acct-b");
	pc_cache *c = mk("memory=16M nodes=2 io=sync");
	struct pc_bdi *b;
	pc_file *fa, *fb;
	uint64_t out0;

	(void)state;
	fa = op(c, pa, O_RDWR | O_CREAT | O_TRUNC);
	fb = op(c, pb, O_RDWR | O_CREAT | O_TRUNC);
	b = fa->mapping->bdi;
	write_pat(fa, 0, 10 * PAGE, 1);
	write_pat(fb, 0, 5 * PAGE, 2);
	write_pat(fa, 3 * PAGE, 100, 3);	/* a dirty page again */
	assert_int_equal(vm(c, "nr_dirty"), 15);
	assert_int_equal(vm(c, "node0.nr_dirty") + vm(c, "node1.nr_dirty"), 15);
	assert_int_equal(atomic_load(&c->nodes[0].dirty_pages) +
			 atomic_load(&c->nodes[1].dirty_pages), 15);
	assert_int_equal(atomic_load(&fa->mapping->nr_dirty), 10);
	assert_int_equal(atomic_load(&fb->mapping->nr_dirty), 5);
	assert_int_equal(atomic_load(&b->nr_dirty), 15);
	assert_int_equal(vm(c, "nr_dirtied"), 15);
	assert_true(atomic_load(&fa->mapping->on_dirty_list));

	out0 = vm(c, "pgpgout");
	assert_int_equal(pc_fsync(fa), 0);
	assert_int_equal(vm(c, "nr_dirty"), 5);
	assert_int_equal(vm(c, "nr_writeback"), 0);
	assert_int_equal(atomic_load(&b->nr_dirty), 5);
	assert_int_equal(atomic_load(&b->nr_writeback), 0);
	assert_int_equal(atomic_load(&fa->mapping->nr_dirty), 0);
	assert_int_equal(vm(c, "pgpgout") - out0, 10 * 4);
	assert_int_equal(vm(c, "nr_written"), 10);
	/* Truncation cleans without I/O. */
	assert_int_equal(pc_ftruncate(fb, 0), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	assert_int_equal(atomic_load(&b->nr_dirty), 0);
	assert_int_equal(atomic_load(&c->nodes[0].dirty_pages) +
			 atomic_load(&c->nodes[1].dirty_pages), 0);
	assert_int_equal(vm(c, "pgpgout") - out0, 10 * 4);
	check_disk(pa, 0, 3 * PAGE, 1);
	assert_int_equal(pc_close(fa), 0);
	assert_int_equal(pc_close(fb), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* The throttle: a fast writer against a slow device                   */

struct writer {
	pc_cache *c;
	pc_file *f;
	uint64_t pages;
	uint64_t seed;
	_Atomic uint64_t done;		/* pages written */
	_Atomic bool finished;
	int errors;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned char buf[PAGE];

	for (uint64_t i = 0; i < w->pages; i++) {
		tu_pattern(buf, PAGE, w->seed, i * PAGE);
		if (pc_pwrite(w->f, buf, PAGE, (off_t)(i * PAGE)) != PAGE)
			w->errors++;
		atomic_store(&w->done, i + 1);
	}
	atomic_store(&w->finished, true);
	return NULL;
}

struct monitor {
	pc_cache *c;
	struct writer *w;
	int nw;
	_Atomic bool stop;
	uint64_t max_dirty;		/* dirty + writeback seen */
	unsigned windows;		/* whole seconds observed */
	unsigned stalled;		/* seconds in which a writer did nothing */
};

static void *monitor_main(void *arg)
{
	struct monitor *mo = arg;
	uint64_t last[8] = { 0 }, window = now_ms();

	while (!atomic_load(&mo->stop)) {
		/* Writeback first: a page moving on in between is not counted twice. */
		uint64_t d = vm_t(mo->c, "nr_writeback");

		d += vm_t(mo->c, "nr_dirty");

		mo->max_dirty = pc_max(mo->max_dirty, d);
		if (now_ms() - window >= 1000) {
			window = now_ms();
			mo->windows++;
			for (int i = 0; i < mo->nw; i++) {
				uint64_t done = atomic_load(&mo->w[i].done);

				if (!atomic_load(&mo->w[i].finished) &&
				    done == last[i])
					mo->stalled++;
				last[i] = done;
			}
		}
		sleep_ms(1);
	}
	return NULL;
}

static void slow_device_case(int nw, unsigned delay_us, uint64_t pages)
{
	char cfg[128];
	struct pc_io_fault slow = write_rule(0, delay_us, -1);
	struct writer w[2];
	struct monitor mo = { 0 };
	pthread_t wt[2], mt;
	uint64_t limit, pauses, pause_ms, asked_ms, t0, elapsed, periods;
	pc_cache *c;

	snprintf(cfg, sizeof(cfg), "memory=16M io=fault");
	c = mk(cfg);
	limit = vm(c, "nr_dirty_threshold");
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &slow), 0);
	for (int i = 0; i < nw; i++) {
		char name[32];

		snprintf(name, sizeof(name), "slow-%d", i);
		memset(&w[i], 0, sizeof(w[i]));
		w[i].c = c;
		w[i].f = op(c, tu_path(name), O_RDWR | O_CREAT | O_TRUNC);
		w[i].pages = pages;
		w[i].seed = 100 + (uint64_t)i;
	}
	mo.c = c;
	mo.w = w;
	mo.nw = nw;
	t0 = now_ms();
	pthread_create(&mt, NULL, monitor_main, &mo);
	for (int i = 0; i < nw; i++)
		pthread_create(&wt[i], NULL, writer_main, &w[i]);
	for (int i = 0; i < nw; i++)
		pthread_join(wt[i], NULL);
	tu_check_threads();
	atomic_store(&mo.stop, true);
	tu_join(mt);
	elapsed = now_ms() - t0;
	periods = atomic_load(&w[0].f->mapping->bdi->period);
	pauses = vm(c, "balance_dirty_pages_pauses");
	pause_ms = vm(c, "balance_dirty_pages_pause_ms");
	asked_ms = vm(c, "balance_dirty_pages_pause_asked_ms");
	printf("%d writer(s), %" PRIu64 " pages each, %" PRIu64 " ms: dirty at "
	       "most %" PRIu64 " (limit %" PRIu64 "), %" PRIu64 " pauses, %"
	       PRIu64 " ms paused (%" PRIu64 " asked), %" PRIu64 " requests, bw %" PRIu64
	       " KiB/s (%" PRIu64 " updates), %u stalled seconds of %u\n", nw,
	       pages, elapsed, mo.max_dirty, limit, pauses, pause_ms, asked_ms,
	       vm(c, "writeback_requests"),
	       atomic_load(&w[0].f->mapping->bdi->write_bw) >> 10, periods,
	       mo.stalled, mo.windows);
	for (int i = 0; i < nw; i++)
		assert_int_equal(w[i].errors, 0);
	/* Dirty stayed under the hard limit (give or take a check's pages). */
	assert_true(mo.max_dirty <= limit + 32 * (uint64_t)nw + 8);
	/* It got there: the writers were held back, not the device idle. */
	assert_true(mo.max_dirty > vm(c, "nr_dirty_background_threshold"));
	/*
	 * Paced, in pauses the policy asks of at most 200 ms each.  What was
	 * slept, the stalled seconds and the bandwidth periods per second
	 * are the scheduler's as much as ours: printed above, not asserted.
	 */
	assert_true(pauses > 0);
	assert_true(asked_ms <= pauses * 200);
	/* The bandwidth estimate came down from its initial 100 MiB/s. */
	assert_true(atomic_load(&w[0].f->mapping->bdi->write_bw) < (100ull << 20));
	for (int i = 0; i < nw; i++) {
		assert_int_equal(pc_fsync(w[i].f), 0);
		check_disk(tu_path(i ? "slow-1" : "slow-0"), 0, pages * PAGE,
			   w[i].seed);
		assert_int_equal(pc_close(w[i].f), 0);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_slow_device_one_writer(void **state)
{
	(void)state;
	/* 80 ms a request: at most 13 MB/s, less with smaller requests. */
	slow_device_case(1, 80000, 12288);
}

static void test_slow_device_two_writers(void **state)
{
	(void)state;
	slow_device_case(2, 80000, 6144);
}

/*
 * Over the limit with a flusher that cannot make progress (every write
 * fails, it backs off): the writer is not stalled, and the failed pages
 * stay dirty until a later fsync writes them.
 */
static void test_no_stall_when_flusher_idle(void **state)
{
	const char *path = tu_path("nostall");
	pc_cache *c = mk("memory=16M io=fault writeback.dirty_bytes=1M "
			 "writeback.dirty_background_bytes=512K");
	struct pc_io_fault fail = write_rule(EIO, 0, -1);
	uint64_t t0, elapsed;
	pc_file *f;
	int r;

	(void)state;
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	t0 = now_ms();
	write_pat(f, 0, 4 * MIB, 13);	/* four times the limit */
	elapsed = now_ms() - t0;
	printf("4 MiB against a dead device in %" PRIu64 " ms: %" PRIu64
	       " pauses (%" PRIu64 " ms), %" PRIu64 " idle, %" PRIu64
	       " back-offs\n", elapsed, vm(c, "balance_dirty_pages_pauses"),
	       vm(c, "balance_dirty_pages_pause_ms"),
	       vm(c, "balance_dirty_pages_idle"), vm(c, "writeback_backoff"));
	assert_true(vm(c, "balance_dirty_pages_idle") > 0);
	assert_true(vm(c, "writeback_errors") > 0);
	assert_true(elapsed < 60000);
	assert_int_equal(pc_fsync(f), -EIO);
	/* Nothing was lost (a flusher retry may be running: wait for it). */
	assert_true(wait_vm(c, "nr_dirty", 1024, true, 10000));
	pc__io_fault_clear(pc__local(c)->io);
	/* A flusher retry may have failed after that fsync: told once more. */
	r = pc_fsync(f);
	if (r == -EIO)
		r = pc_fsync(f);
	assert_int_equal(r, 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 0, 4 * MIB, 13);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_accounting),
		cmocka_unit_test(test_slow_device_one_writer),
		cmocka_unit_test(test_slow_device_two_writers),
		cmocka_unit_test(test_no_stall_when_flusher_idle),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
