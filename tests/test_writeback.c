/*
 * test_writeback.c - dirty accounting and limits, the flusher, the dirty
 * throttle, errors on writeback, unlinked files, reclaim's PG_reclaim
 * (src/writeback.c, src/throttle.c, src/errseq.c, src/bdi.c).  The page
 * lock and writeback waits through a whole cache, and their stress, are
 * test_writeback_stress.c's.
 *
 * Checks are made on counters, not on timings: a slow or busy machine may
 * make a case slower, never wrong.  The few time limits are generous upper
 * bounds (a stall is minutes, not seconds) or lower bounds that only a bug
 * can break.  The fault backend (io=fault) slows writes down (a slow
 * device) or fails them (EIO, ENOSPC, short writes); it runs requests in
 * the submitting thread, so with it one flusher has one request in flight.
 * Random cases print their seed; PC_SEED=N replays.  The worker threads
 * here count what went wrong (a writer its errors) and the main thread
 * checks; they could assert as well (util.h), they have not needed to.
 * The crash-safety case is in test_crash.c.
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
#include "util.h"

#define PAGE 4096
#define MIB (1024 * 1024)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static uint64_t vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	assert_int_equal(pc_vmstat(c, name, &v), 0);
	return v;
}

/* Thread-safe: no assert. */
static uint64_t vm_t(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	pc_vmstat(c, name, &v);
	return v;
}

static pc_cache *mk(const char *cfg)
{
	pc_cache *c = NULL;

	assert_int_equal(pc_cache_create(&c, cfg), 0);
	return c;
}

static pc_file *op(pc_cache *c, const char *path, int flags)
{
	pc_file *f = NULL;

	assert_int_equal(pc_open(c, path, flags, 0644, &f), 0);
	return f;
}

static uint64_t now_ms(void)
{
	return pc__now_ns() / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll @name until it is <= @want (or >= when @up), at most @ms. */
static bool wait_vm(pc_cache *c, const char *name, uint64_t want, bool up,
		    unsigned ms)
{
	uint64_t end = now_ms() + ms;

	for (;;) {
		uint64_t v = vm_t(c, name);

		if (up ? v >= want : v <= want)
			return true;
		if (now_ms() > end)
			return false;
		sleep_ms(5);
	}
}

/* Write @len bytes of pattern @seed at @off in 4 KiB pwrites. */
static void write_pat(pc_file *f, uint64_t off, size_t len, uint64_t seed)
{
	unsigned char buf[PAGE];

	for (size_t done = 0; done < len; done += PAGE) {
		size_t n = pc_min((size_t)PAGE, len - done);

		tu_pattern(buf, n, seed, off + done);
		assert_int_equal(pc_pwrite(f, buf, n, (off_t)(off + done)),
				 (ssize_t)n);
	}
}

/* The file on disk, read with read(2), equals the pattern. */
static void check_disk(const char *path, uint64_t off, size_t len,
		       uint64_t seed)
{
	unsigned char *want = malloc(len), *got = malloc(len);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	tu_pattern(want, len, seed, off);
	assert_int_equal(pread(fd, got, len, (off_t)off), (ssize_t)len);
	assert_memory_equal(got, want, len);
	close(fd);
	free(want);
	free(got);
}

static struct pc_io_fault write_rule(int error, unsigned delay_us, int count)
{
	struct pc_io_fault r = { .op = PC_IO_WRITE, .fd = -1, .off_lo = 0,
				 .off_hi = 0, .error = error,
				 .delay_us = delay_us, .count = count };
	return r;
}

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

/*
 * Writes past the file's end on the disk: the pass allocates what it
 * writes there first (writeback_extends: once a run, not once a request),
 * so its O_DIRECT requests are overwrites within the file's size.  The
 * size stays exactly the program's, a hole stays a hole reading zeros,
 * and the data read through the kernel is what was written.  @nofalloc:
 * as on a file system without fallocate(2) (EOPNOTSUPP): ftruncate(2) to
 * the file's size instead (writeback_extend_truncates).
 */
static void extend_case(bool nofalloc)
{
	const char *path = tu_path(nofalloc ? "extend-trunc" : "extend");
	const char *done = nofalloc ? "writeback_extend_truncates"
				    : "writeback_extends";
	const char *not = nofalloc ? "writeback_extends"
				   : "writeback_extend_truncates";
	/* Nothing written behind the test's back: no background pass. */
	pc_cache *c = mk("memory=64M writeback.dirty_ratio=90 "
			 "writeback.dirty_background_ratio=80 "
			 "writeback.dirty_expire_ms=600000");
	uint64_t ext0, not0, req0;
	char *zero = calloc(1, MIB), *got = malloc(MIB);
	struct stat st;
	pc_file *f;
	int fd;

	atomic_store(&pc__test_no_fallocate, nofalloc);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	if (!f->mapping->direct) {
		pc_close(f);
		pc_cache_destroy(c);
		printf("no O_DIRECT here: nothing to extend\n");
		skip();
	}
	/* A new file, written in order past its end, a partial last page:
	 * one extension for the pass (7 requests), the size exact. */
	write_pat(f, 0, 6 * MIB + 100, 11);
	ext0 = vm(c, done);
	not0 = vm(c, not);
	req0 = vm(c, "writeback_requests");
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 1);
	assert_int_equal(vm(c, not) - not0, 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 7);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 6 * MIB + 100);
	check_disk(path, 0, 6 * MIB + 100, 11);

	/* Overwrites within the disk's end: nothing to extend. */
	ext0 = vm(c, done);
	write_pat(f, MIB, 3 * MIB, 12);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 0);
	check_disk(path, MIB, 3 * MIB, 12);

	/* One request's worth past the end: it runs alone anyway. */
	write_pat(f, 6 * MIB + 100, 512 * 1024, 13);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 0);
	check_disk(path, 6 * MIB + 100, 512 * 1024, 13);

	/* Far past the end, a hole before: the runs are allocated (the
	 * fallback: the size set), the hole stays one and reads zeros. */
	write_pat(f, 8 * MIB, 2 * MIB, 14);
	write_pat(f, 64 * MIB, MIB + 5, 15);
	ext0 = vm(c, done);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, nofalloc ? 1 : 2);
	assert_int_equal(pc_size(f), 65 * MIB + 5);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 65 * MIB + 5);
	/* The writes' blocks and the first file's, not the hole's. */
	assert_true(st.st_blocks * 512 < 16 * MIB);
	check_disk(path, 8 * MIB, 2 * MIB, 14);
	check_disk(path, 64 * MIB, MIB + 5, 15);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 10 * MIB, SEEK_DATA), 64 * MIB);
	for (uint64_t off = 10 * MIB; off < 64 * MIB; off += MIB) {
		assert_int_equal(pread(fd, got, MIB, (off_t)off), MIB);
		assert_memory_equal(got, zero, MIB);
	}
	close(fd);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	atomic_store(&pc__test_no_fallocate, false);
	free(zero);
	free(got);
}

static void test_extend_once(void **state)
{
	(void)state;
	extend_case(false);
}

static void test_extend_no_fallocate(void **state)
{
	(void)state;
	extend_case(true);
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

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* An error of the flusher's (no fsync running) reaches every handle. */
static void test_background_error(void **state)
{
	const char *path = tu_path("bgerr");
	pc_cache *c = mk("memory=16M io=fault writeback.dirty_expire_ms=50 "
			 "writeback.interval_ms=20");
	struct pc_io_fault fail = write_rule(EIO, 0, 1);
	pc_file *a, *b, *d, *late;

	(void)state;
	a = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	b = op(c, path, O_RDWR);
	d = op(c, path, O_RDONLY);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	write_pat(a, 0, 8 * PAGE, 14);
	/* The flusher's expiry pass meets the error. */
	assert_true(wait_vm(c, "writeback_errors", 1, true, 20000));
	/* Then writes the pages again, after its back-off. */
	assert_true(wait_vm(c, "nr_dirty", 0, false, 20000));
	assert_true(vm(c, "writeback_backoff") > 0);
	assert_int_equal(pc_fsync(a), -EIO);
	assert_int_equal(pc_fsync(a), 0);
	/* Seen once by a: a handle opened now is not told. */
	late = op(c, path, O_RDWR);
	assert_int_equal(pc_fsync(late), 0);
	/* b hears of it at fsync, once; d (read-only) at close. */
	assert_int_equal(pc_fdatasync(b), -EIO);
	assert_int_equal(pc_fdatasync(b), 0);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_close(d), -EIO);
	assert_int_equal(pc_close(late), 0);
	assert_int_equal(pc_close(a), 0);
	check_disk(path, 0, 8 * PAGE, 14);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* One failed request of many: its pages, and only they, stay dirty. */
static void test_partial_failure(void **state)
{
	const char *path = tu_path("partial");
	pc_cache *c = mk("memory=64M io=fault");
	struct pc_io_fault fail = { .op = PC_IO_WRITE, .fd = -1,
				    .off_lo = MIB, .off_hi = 2 * MIB,
				    .error = ENOSPC, .short_io = true,
				    .count = 1 };
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 4 * MIB, 15);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	assert_int_equal(pc_fsync(f), -ENOSPC);
	assert_int_equal(vm(c, "nr_dirty"), 256);
	assert_int_equal(atomic_load(&f->mapping->nr_dirty), 256);
	assert_int_equal(vm(c, "pgpgout"), 3 * 1024);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 0, 4 * MIB, 15);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* O_SYNC and O_DSYNC writes return the error; the data stays dirty. */
static void test_sync_open_errors(void **state)
{
	static const int modes[] = { O_SYNC, O_DSYNC };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		const char *path = tu_path(i ? "dsync" : "osync");
		pc_cache *c = mk("memory=16M io=fault");
		struct pc_io_fault fail = write_rule(EIO, 0, 1);
		unsigned char buf[PAGE];
		pc_file *f, *other;
		uint64_t out0;

		f = op(c, path, O_RDWR | O_CREAT | O_TRUNC | modes[i]);
		other = op(c, path, O_RDONLY);
		/* Written through: on disk when pwrite returns. */
		write_pat(f, 0, 2 * PAGE, 16);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		check_disk(path, 0, 2 * PAGE, 16);
		assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
		tu_pattern(buf, PAGE, 17, 2 * PAGE);
		assert_int_equal(pc_pwrite(f, buf, PAGE, 2 * PAGE), -EIO);
		assert_int_equal(vm(c, "nr_dirty"), 1);
		/* The next sync write succeeds; the failed page is fsync's. */
		out0 = vm(c, "pgpgout");
		tu_pattern(buf, PAGE, 17, 3 * PAGE);
		assert_int_equal(pc_pwrite(f, buf, PAGE, 3 * PAGE), PAGE);
		assert_int_equal(vm(c, "pgpgout") - out0, 4);
		assert_int_equal(vm(c, "nr_dirty"), 1);
		assert_int_equal(pc_fsync(f), 0);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		check_disk(path, 2 * PAGE, 2 * PAGE, 17);
		assert_int_equal(pc_close(other), -EIO);
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
}

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

/*
 * A real ENOSPC: a small filesystem, mostly full.  fsync returns -ENOSPC
 * (not 0) every time until space is freed; then it writes the data.
 */
static bool try_mount(const char *dir, const char *img, bool ext4)
{
	char cmd[4096];

	mkdir(dir, 0755);
	if (!ext4)
		return mount("tmpfs", dir, "tmpfs", 0, "size=2m") == 0;
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 8M '%s' && mkfs.ext4 -q -F '%s' >/dev/null 2>&1 && "
		 "mount -o loop '%s' '%s' >/dev/null 2>&1", img, img, img, dir);
	return system(cmd) == 0;
}

static void enospc_case(bool ext4)
{
	const char *dir = tu_path(ext4 ? "mnt-ext4" : "mnt-tmpfs");
	char img[600], filler[700], path[700];
	struct statvfs sv;
	pc_cache *c;
	pc_file *f;
	uint64_t avail;
	int fd, r;

	snprintf(img, sizeof(img), "%s.img", dir);
	if (!try_mount(dir, img, ext4)) {
		printf("cannot mount %s here: skipped\n", ext4 ? "ext4 (loop)" : "tmpfs");
		unlink(img);
		skip();
	}
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	snprintf(path, sizeof(path), "%s/data", dir);
	/* Leave about 256 KiB free. */
	assert_int_equal(statvfs(dir, &sv), 0);
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	{
		static char zero[64 * 1024];
		uint64_t want = avail > 256 * 1024 ? avail - 256 * 1024 : 0;

		for (uint64_t done = 0; done < want;) {
			ssize_t n = write(fd, zero, pc_min(sizeof(zero), want - done));

			if (n <= 0)
				break;
			done += (uint64_t)n;
		}
		fsync(fd);
	}
	close(fd);

	c = mk("memory=16M");
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, MIB, 20);	/* four times what is left */
	r = pc_fsync(f);
	printf("%s: fsync of 1 MiB with ~256 KiB free: %d (%s), %" PRIu64
	       " pages still dirty\n", ext4 ? "ext4" : "tmpfs", r,
	       strerror(-r), vm(c, "nr_dirty"));
	assert_int_equal(r, -ENOSPC);
	assert_true(vm(c, "nr_dirty") > 0);
	assert_int_equal(pc_fsync(f), -ENOSPC);	/* tried again, still full */
	/* Space freed: the same data goes out. */
	unlink(filler);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 0, MIB, 20);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	r = umount2(dir, MNT_DETACH);
	assert_int_equal(r, 0);
	unlink(img);
}

static void test_enospc_tmpfs(void **state)
{
	(void)state;
	enospc_case(false);
}

static void test_enospc_ext4(void **state)
{
	(void)state;
	enospc_case(true);
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

/*
 * An O_SYNC or O_DSYNC write's pages are written by the writer itself
 * (pc_io_req.now: no completion thread between the device and it), and
 * only its pages: a 1 KiB write, one request of one page; an fsync of
 * 64 dirty pages is queued as ever (no request marked now).
 */
static void test_sync_write_by_writer(void **state)
{
	const char *path = tu_path("syncnow");
	pc_cache *c = mk("memory=16M io=fault");
	unsigned char kb[1024];
	uint64_t pages;
	pc_file *f;

	(void)state;
	memset(kb, 's', sizeof(kb));
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 64 * PAGE, 31);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc__io_fault_now(pc__local(c)->io, NULL), 0);
	assert_int_equal(pc_close(f), 0);
	for (int mode = 0; mode < 2; mode++) {
		f = op(c, path, O_WRONLY | (mode ? O_DSYNC : O_SYNC));
		pc__io_fault_clear(pc__local(c)->io);
		assert_int_equal(pc_pwrite(f, kb, sizeof(kb), 5 * PAGE + 100),
				 (ssize_t)sizeof(kb));
		assert_int_equal(pc__io_fault_now(pc__local(c)->io, &pages), 1);
		assert_int_equal(pages, 1);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		assert_int_equal(pc_close(f), 0);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/*
 * A commit's few scattered pages are staged: written through the buffered
 * descriptor, none through the O_DIRECT one - the device takes them at
 * once, not one round trip each - and, under fsync, made durable by the
 * file's fdatasync through that descriptor, with no second sync after
 * it (a pass of many pages: one sync after it, no commit).  A staged
 * write that fails keeps its pages dirty.
 */
static void test_commit_staged(void **state)
{
	const char *path = tu_path("staged");
	pc_cache *c = mk("memory=16M io=fault");
	struct pc_io_fault direct = write_rule(0, 0, -1), fail = write_rule(EIO, 0, -1);
	uint64_t st0, cm0, now0, cs0, fs0;
	pc_file *f;
	int tail;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 64 * PAGE, 41);
	cs0 = vm(c, "writeback_commit_syncs");
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fsync(f), 0);	/* 64 pages: O_DIRECT, ring */
	assert_int_equal(vm(c, "writeback_commit_syncs") - cs0, 0);
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 1);
	/* Four pages apart and the file's short last page: five requests. */
	write_pat(f, 3 * PAGE, PAGE, 42);
	write_pat(f, 9 * PAGE, PAGE, 42);
	write_pat(f, 20 * PAGE, PAGE, 42);
	write_pat(f, 40 * PAGE, PAGE, 42);
	write_pat(f, 64 * PAGE, 100, 42);
	direct.fd = pc__bk(f->mapping)->fd;
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &direct), 0);
	st0 = vm(c, "writeback_requests_staged");
	cm0 = vm(c, "writeback_commits");
	now0 = vm(c, "writeback_requests_now");
	cs0 = vm(c, "writeback_commit_syncs");
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fdatasync(f), 0);
	assert_int_equal(vm(c, "writeback_requests_now") - now0, 5);
	assert_int_equal(vm(c, "writeback_requests_staged") - st0, 5);
	assert_int_equal(vm(c, "writeback_commits") - cm0, 1);
	assert_int_equal(vm(c, "writeback_commit_syncs") - cs0, 1);
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 0);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	tail = atomic_load(&pc__bk(f->mapping)->tail_fd);
	assert_true(tail >= 0);
	for (int i = 0; i < 64; i++)
		if (i == 3 || i == 9 || i == 20 || i == 40)
			check_disk(path, (uint64_t)i * PAGE, PAGE, 42);
		else
			check_disk(path, (uint64_t)i * PAGE, PAGE, 41);
	check_disk(path, 64 * PAGE, 100, 42);

	/* The staged writes fail: the pages stay dirty, fsync says so once. */
	write_pat(f, 5 * PAGE, 2 * PAGE, 43);
	fail.fd = tail;
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fsync(f), -EIO);
	assert_int_equal(vm(c, "nr_dirty"), 2);
	/* The transfers failed, not the commit's sync: no sync after it
	 * (the pages say the error, once, through errseq). */
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 0);
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 5 * PAGE, 2 * PAGE, 43);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/* Is [0, 100) of @path write-locked by another process? (asked from a child) */
static bool locked_by_parent(const char *path)
{
	pid_t pid = fork();
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 0, .l_len = 100 };
		int fd = open(path, O_RDWR);

		if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
	return WEXITSTATUS(status) == 0;
}

/*
 * The program's fcntl locks outlive its commits: a staged commit (and a
 * short last block) goes through the buffered descriptor, opened by
 * pc_lock_prepare before the lock - opening it at the commit would close
 * a descriptor of the file, and any close drops the process's locks on it
 * (SQLite's, lost between its commit and its unlock: "disk I/O error").
 */
static void test_commit_keeps_locks(void **state)
{
	const char *path = tu_path("locks");
	pc_cache *c = mk("memory=16M");
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 100 };
	pc_file *f;
	int fd;

	(void)state;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR, &f), 0);
	assert_int_equal(pc_lock_prepare(f), 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_true(locked_by_parent(path));
	write_pat(f, 0, 2 * PAGE, 51);
	write_pat(f, 2 * PAGE, 100, 51);
	assert_int_equal(pc_fsync(f), 0);
	assert_true(vm(c, "writeback_commits") > 0);
	assert_true(locked_by_parent(path));
	check_disk(path, 0, 2 * PAGE + 100, 51);
	assert_int_equal(pc_close(f), 0);
	close(fd);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
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
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_accounting),
		cmocka_unit_test(test_request_sizes),
		cmocka_unit_test(test_several_in_flight),
		cmocka_unit_test(test_extend_once),
		cmocka_unit_test(test_extend_no_fallocate),
		cmocka_unit_test(test_background_threshold),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_slow_device_one_writer),
		cmocka_unit_test(test_slow_device_two_writers),
		cmocka_unit_test(test_no_stall_when_flusher_idle),
		cmocka_unit_test(test_background_error),
		cmocka_unit_test(test_partial_failure),
		cmocka_unit_test(test_sync_open_errors),
		cmocka_unit_test(test_destroy_failing_device),
		cmocka_unit_test(test_destroy_retries),
		cmocka_unit_test(test_enospc_tmpfs),
		cmocka_unit_test(test_enospc_ext4),
		cmocka_unit_test(test_unlinked_close_writes_nothing),
		cmocka_unit_test(test_unlinked_written_under_pressure),
		cmocka_unit_test(test_end_writeback_rotates),
		cmocka_unit_test(test_sync_write_by_writer),
		cmocka_unit_test(test_commit_staged),
		cmocka_unit_test(test_commit_keeps_locks),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
