/*
 * test_node.c - memory nodes and their frames (node.c, page_alloc.c):
 * frames, watermarks, allocation order and the NUMA placement policies,
 * and the retry rule when every frame is pinned or under writeback.
 *
 *   nodes           nodes=N splits the budget; watermarks in order; a
 *                   thread's node is allocated first (numa_hit, _local);
 *   node_reclaim    numa.node_reclaim: the local node is reclaimed before
 *                   another is used;
 *   mapping_sticky  numa.mapping_sticky: a file's pages follow its first;
 *   dirty_spread    numa.dirty_spread: pages to be dirtied leave a node
 *                   at its share of the dirty limit;
 *   all_pinned      every frame pinned by the test: -ENOMEM after
 *                   PC_MAX_RECLAIM_RETRIES + 1 rounds without progress;
 *   writeback_wait  the frames not pinned under writeback held in flight
 *                   (a fault-backend gate): the allocation waits, far
 *                   past the counted rounds, and has a frame once the
 *                   write ends;
 *   writeback_fails the same with every write failing: -ENOMEM after the
 *                   counted rounds, no wait for pages that never come
 *                   clean.
 *
 * Checks are on counters and page placement.  Tests look inside the cache.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "io.h"
#include "node.h"
#include "tctx.h"
#include "util.h"

#define PG 4096

static void test_nodes(void **state)
{
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=4M nodes=4"), 0);
	assert_int_equal(c->nr_nodes, 4);
	for (int i = 0; i < 4; i++) {
		struct pc_node *n = &c->nodes[i];

		assert_int_equal(n->nr_frames, 256);
		assert_true(n->wmark_min < n->wmark_low);
		assert_true(n->wmark_low < n->wmark_high);
		assert_true(n->wmark_high < n->nr_frames / 2);
		assert_int_equal(atomic_load(&n->nr_free), 256);
	}
	assert_int_equal(pc_thread_set_node(c, 3), 0);
	assert_int_equal(pc__tctx(c)->node, 3);
	assert_int_equal(pc_thread_set_node(c, 4), -EINVAL);
	assert_int_equal(pc_thread_set_node(c, -1), -EINVAL);
	assert_int_equal(pc_thread_set_node(NULL, 0), -EINVAL);
	/* A frame from the thread's node first, counted as a local hit. */
	{
		struct pc_page *p = pc__alloc_page(c, NULL, 0);

		assert_non_null(p);
		assert_int_equal(page_node(c, p)->id, 3);
		assert_int_equal(tu_vm(c, "node3.numa_hit"), 1);
		assert_int_equal(tu_vm(c, "node3.numa_local"), 1);
		pc__put_page(c, p);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	/* nodes=auto: the machine's nodes (one without libnuma). */
	assert_int_equal(pc_cache_create(&c, "memory=4M nodes=auto"), 0);
	assert_true(c->nr_nodes >= 1);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * numa.node_reclaim: a thread of node 0 reads two budgets of a clean file.
 * Off, its pages spill to node 1 (numa_miss); on, node 0 is reclaimed
 * first and node 1 is never used.
 */
static void node_reclaim_run(bool on, uint64_t *miss, uint64_t *node1)
{
	const char *path = tu_path("nodereclaim");
	char cfg[160];
	pc_cache *c;
	pc_file *f;

	tu_make_file(path, 512, 31);
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=2 reclaim.kswapd=off "
		 "cache.stickiness=off numa.node_reclaim=%s", on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < 512; i++)
		tu_read_page(f, i, 31);
	*miss = tu_vm(c, "numa_miss");
	*node1 = tu_vm(c, "node1.pgalloc");
	assert_int_equal(tu_vm(c, "numa_miss"), tu_vm(c, "numa_foreign"));
	assert_int_equal(tu_vm(c, "numa_hit") + tu_vm(c, "numa_miss"), tu_vm(c, "pgalloc"));
	assert_int_equal(tu_vm(c, "numa_local") + tu_vm(c, "numa_other"), tu_vm(c, "pgalloc"));
	printf("  node_reclaim=%s: numa_miss %llu, node1 pgalloc %llu, "
	       "pgsteal_direct %llu\n", on ? "on" : "off",
	       (unsigned long long)*miss, (unsigned long long)*node1,
	       (unsigned long long)tu_vm(c, "pgsteal_direct"));
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_node_reclaim(void **state)
{
	uint64_t miss, node1;

	(void)state;
	node_reclaim_run(false, &miss, &node1);
	assert_true(miss > 0);
	assert_true(node1 > 0);
	node_reclaim_run(true, &miss, &node1);
	assert_int_equal(miss, 0);
	assert_int_equal(node1, 0);
}

/*
 * numa.mapping_sticky: page 0 of a file is written from node 0, the rest
 * from node 1.  Sticky, every page lands on node 0 (numa_other counts the
 * node-1 allocations that went there); not sticky, they land on node 1.
 */
static void sticky_run(bool on, unsigned *on_node0)
{
	const char *path = tu_path("sticky");
	unsigned char buf[PG];
	char cfg[160];
	pc_cache *c;
	pc_file *f;

	memset(buf, 7, sizeof(buf));
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=2 reclaim.kswapd=off "
		 "numa.mapping_sticky=%s", on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	assert_int_equal(pc_pwrite(f, buf, PG, 0), PG);
	assert_int_equal(pc_thread_set_node(c, 1), 0);
	for (uint64_t i = 1; i < 40; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)(i * PG)), PG);
	*on_node0 = 0;
	for (uint64_t i = 0; i < 40; i++) {
		struct pc_page *p = pc__find_get_page(f->mapping, i);

		assert_non_null(p);
		*on_node0 += page_node(c, p)->id == 0;
		pc__put_page(c, p);
	}
	if (on)
		assert_true(tu_vm(c, "numa_other") >= 39);
	else
		assert_int_equal(tu_vm(c, "numa_other"), 0);
	assert_int_equal(tu_vm(c, "numa_miss"), 0);
	printf("  mapping_sticky=%s: %u of 40 pages on node 0\n",
	       on ? "on" : "off", *on_node0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_mapping_sticky(void **state)
{
	unsigned n0;

	(void)state;
	sticky_run(true, &n0);
	assert_int_equal(n0, 40);
	sticky_run(false, &n0);
	assert_int_equal(n0, 1);
}

/*
 * numa.dirty_spread: a node-0 thread dirties 400 pages under a dirty limit
 * of 512 (a share of 256 a node).  Nothing writes them back meanwhile: the
 * background threshold is not reached and the flusher's interval and the
 * expiry are an hour.  Spread, node 0 stops at its share and node 1 takes
 * the rest.
 */
static void spread_run(bool on, uint64_t *dirty0, uint64_t *dirty1)
{
	const char *path = tu_path("spread");
	unsigned char buf[PG];
	char cfg[200];
	pc_cache *c;
	pc_file *f;

	memset(buf, 9, sizeof(buf));
	snprintf(cfg, sizeof(cfg), "memory=8M nodes=2 writeback.dirty_bytes=2M "
		 "writeback.dirty_background_bytes=2M writeback.interval_ms=3600000 "
		 "writeback.dirty_expire_ms=3600000 numa.dirty_spread=%s",
		 on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	for (uint64_t i = 0; i < 400; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)(i * PG)), PG);
	*dirty0 = tu_vm(c, "node0.nr_dirty");
	*dirty1 = tu_vm(c, "node1.nr_dirty");
	printf("  dirty_spread=%s: dirty pages node0 %llu node1 %llu, "
	       "numa_miss %llu\n", on ? "on" : "off",
	       (unsigned long long)*dirty0, (unsigned long long)*dirty1,
	       (unsigned long long)tu_vm(c, "numa_miss"));
	if (on)
		assert_true(tu_vm(c, "numa_miss") >= *dirty1);
	else
		assert_int_equal(tu_vm(c, "numa_miss"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_dirty_spread(void **state)
{
	uint64_t d0, d1;

	(void)state;
	spread_run(true, &d0, &d1);
	assert_int_equal(d0 + d1, 400);
	assert_true(d0 <= 256);
	assert_true(d1 >= 144);
	spread_run(false, &d0, &d1);
	assert_int_equal(d0, 400);
	assert_int_equal(d1, 0);
}

/* ------------------------------------------------------------------ */
/* All pinned                                                           */

static void pinned_run(const char *cfgs)
{
	const char *path = tu_path("allpinned");
	pc_page **pins;
	unsigned char buf[PG];
	uint64_t frames, n = 0, fails, retries, waits;
	ssize_t r;
	pc_cache *c;
	pc_file *f;

	assert_int_equal(pc_cache_create(&c, cfgs), 0);
	frames = c->nr_frames;
	tu_make_file(path, frames + 8, 61);
	pins = calloc(frames + 8, sizeof(*pins));
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < frames + 8; i++) {
		int e = pc_get_page(f, i, 0, &pins[n]);

		if (e == -ENOMEM)
			break;
		assert_int_equal(e, 0);
		n++;
	}
	assert_int_equal(n, frames);	/* every frame, and not one more */
	fails = tu_vm(c, "allocfail");
	retries = tu_vm(c, "alloc_retries");
	waits = tu_vm(c, "alloc_busy_waits");
	r = pc_pread(f, buf, PG, (off_t)((frames + 4) * PG));
	assert_int_equal(r, -ENOMEM);
	fails = tu_vm(c, "allocfail") - fails;
	retries = tu_vm(c, "alloc_retries") - retries;
	waits = tu_vm(c, "alloc_busy_waits") - waits;
	printf("  %s: %llu frames pinned, -ENOMEM: %llu allocations failed "
	       "after %llu rounds without progress, %llu waits for pages to "
	       "come\n", cfgs, (unsigned long long)frames,
	       (unsigned long long)fails, (unsigned long long)retries,
	       (unsigned long long)waits);
	/* Each failure took exactly the counted rounds: nothing in flight,
	 * nothing dirty or locked, so no round waited for pages to come. */
	assert_true(fails >= 1);
	assert_int_equal(retries, fails * (PC_MAX_RECLAIM_RETRIES + 1));
	assert_int_equal(waits, 0);
	while (n)
		pc_put_page(pins[--n]);
	tu_read_page(f, frames + 4, 61);
	pc_close(f);
	free(pins);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_all_pinned(void **state)
{
	(void)state;
	pinned_run("memory=64K");
	pinned_run("memory=256K nodes=4");
	pinned_run("memory=128K nodes=2 reclaim.kswapd=off");
}

/* ------------------------------------------------------------------ */
/* Writeback in flight                                                  */

/* Rounds the held write outlasts: far more than the counted give-up
 * allows, and more than the second the old clock allowed. */
#define HOLD_ROUNDS 512

struct wb_io {
	pc_file *f;
	unsigned char *buf;
	uint64_t off;
	ssize_t r;
	_Atomic bool done;
};

static void *wb_fsync(void *arg)
{
	struct wb_io *w = arg;

	w->r = pc_fsync(w->f);
	atomic_store(&w->done, true);
	return NULL;
}

static void *wb_read(void *arg)
{
	struct wb_io *w = arg;

	w->r = pc_pread(w->f, w->buf, PG, (off_t)w->off);
	atomic_store(&w->done, true);
	return NULL;
}

/*
 * Every frame either pinned by the test or dirty and then held under
 * writeback (the fault backend's gate): an allocation must wait for the
 * write, however many rounds it takes, count none of them toward its
 * give-up, and have a frame once the write ends.
 */
static void test_writeback_wait(void **state)
{
	const char *path = tu_path("wbwait");
	static unsigned char data[4 * PG], want[PG], got[PG];
	_Atomic bool gate = false;
	struct pc_io_fault hold = { .op = PC_IO_WRITE, .fd = -1, .count = -1,
				    .gate = &gate };
	struct wb_io sync = { 0 }, rd = { 0 };
	uint64_t frames, n = 0, fails, retries, waits;
	pc_page **pins;
	pthread_t ts, tr;
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=64K io=fault "
					 "reclaim.kswapd=off "
					 "writeback.dirty_ratio=90 "
					 "writeback.dirty_background_ratio=90 "
					 "writeback.interval_ms=3600000"), 0);
	frames = c->nr_frames;
	tu_make_file(path, 64, 71);
	pins = calloc(frames, sizeof(*pins));
	f = tu_open_random(c, path, O_RDWR);
	for (; n < frames - 4; n++)
		assert_int_equal(pc_get_page(f, n, 0, &pins[n]), 0);
	/* The last four frames: whole pages written, dirty; any write of
	 * them held in flight (reclaim may hand the first to the flusher
	 * while the last take the frames below min). */
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &hold), 0);
	tu_pattern(data, sizeof(data), 72, 0);
	assert_int_equal(pc_pwrite(f, data, sizeof(data), 32 * PG),
			 (ssize_t)sizeof(data));
	assert_int_equal(tu_vm(c, "nr_free_pages"), 0);
	assert_int_equal(tu_vm(c, "nr_dirty") + tu_vm(c, "nr_writeback"), 4);
	sync.f = f;
	assert_int_equal(pthread_create(&ts, NULL, wb_fsync, &sync), 0);
	while (pc__io_fault_hits(pc__local(c)->io) < 1)
		tu_sleep_us(200);
	assert_true(tu_vm(c, "nr_writeback") >= 1);
	assert_int_equal(tu_vm(c, "nr_dirty") + tu_vm(c, "nr_writeback"), 4);
	/* A read of a page not cached needs a frame. */
	fails = tu_vm(c, "allocfail");
	retries = tu_vm(c, "alloc_retries");
	waits = tu_vm(c, "alloc_busy_waits");
	rd = (struct wb_io){ .f = f, .buf = got, .off = 40 * PG };
	assert_int_equal(pthread_create(&tr, NULL, wb_read, &rd), 0);
	while (!atomic_load(&rd.done) &&
	       tu_vm(c, "alloc_busy_waits") - waits < HOLD_ROUNDS)
		tu_sleep_us(200);
	printf("  %llu frames: %llu pinned, 4 dirty with their write held: the read "
	       "waited %llu rounds for them, %llu counted\n",
	       (unsigned long long)frames, (unsigned long long)n,
	       (unsigned long long)(tu_vm(c, "alloc_busy_waits") - waits),
	       (unsigned long long)(tu_vm(c, "alloc_retries") - retries));
	assert_false(atomic_load(&rd.done));	/* it waits, no -ENOMEM */
	assert_int_equal(tu_vm(c, "allocfail"), fails);
	assert_int_equal(tu_vm(c, "alloc_retries"), retries);
	/* The write ends: its pages are reclaimable, the read has one. */
	atomic_store(&gate, true);
	tu_join(ts);
	tu_join(tr);
	assert_int_equal(sync.r, 0);
	assert_int_equal(rd.r, PG);
	tu_pattern(want, PG, 71, 40 * PG);
	assert_memory_equal(got, want, PG);
	assert_int_equal(tu_vm(c, "allocfail"), fails);
	while (n)
		pc_put_page(pins[--n]);
	assert_int_equal(pc_close(f), 0);
	free(pins);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * The same frames, but every write fails: the dirty pages will never come
 * clean, so they are no progress to come, and the allocation gives up
 * after the counted rounds instead of waiting on them for ever.
 */
static void test_writeback_fails(void **state)
{
	const char *path = tu_path("wbfail");
	static unsigned char data[4 * PG], got[PG];
	struct pc_io_fault eio = { .op = PC_IO_WRITE, .fd = -1, .count = -1,
				   .error = EIO };
	uint64_t frames, n = 0, fails, retries, waits, errors;
	pc_page **pins;
	pc_cache *c;
	pc_file *f;
	int rc;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=64K io=fault "
					 "reclaim.kswapd=off "
					 "writeback.dirty_ratio=90 "
					 "writeback.dirty_background_ratio=90 "
					 "writeback.interval_ms=3600000"), 0);
	frames = c->nr_frames;
	tu_make_file(path, 64, 73);
	pins = calloc(frames, sizeof(*pins));
	f = tu_open_random(c, path, O_RDWR);
	for (; n < frames - 4; n++)
		assert_int_equal(pc_get_page(f, n, 0, &pins[n]), 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &eio), 0);
	tu_pattern(data, sizeof(data), 74, 0);
	assert_int_equal(pc_pwrite(f, data, sizeof(data), 32 * PG),
			 (ssize_t)sizeof(data));
	assert_int_equal(pc_fsync(f), -EIO);	/* still dirty */
	errors = tu_vm(c, "writeback_errors");
	assert_int_equal(tu_vm(c, "nr_dirty"), 4);
	assert_int_equal(tu_vm(c, "nr_free_pages"), 0);
	fails = tu_vm(c, "allocfail");
	retries = tu_vm(c, "alloc_retries");
	waits = tu_vm(c, "alloc_busy_waits");
	assert_int_equal(pc_pread(f, got, PG, 40 * PG), -ENOMEM);
	fails = tu_vm(c, "allocfail") - fails;
	retries = tu_vm(c, "alloc_retries") - retries;
	waits = tu_vm(c, "alloc_busy_waits") - waits;
	printf("  %llu pinned, 4 dirty on a device failing every write: "
	       "-ENOMEM after %llu rounds, %llu waits for them\n",
	       (unsigned long long)n, (unsigned long long)retries,
	       (unsigned long long)waits);
	assert_true(fails >= 1);
	assert_int_equal(retries, fails * (PC_MAX_RECLAIM_RETRIES + 1));
	assert_int_equal(waits, 0);
	/*
	 * The device mends: the pages are written, and the read has one.
	 * The read's reclaim handed the dirty pages to the flusher, which
	 * writes a failing device again once its back-off (100 ms, wall
	 * time) has passed: on a loaded machine it may have, and failed
	 * once more.  That error is this file's since its last fsync, so
	 * the next fsync reports it, as the kernel's would (once, the
	 * pages written all the same): decided by the counter, read after
	 * the fsync, which waits for a write still in flight, not by time.
	 */
	pc__io_fault_clear(pc__local(c)->io);
	rc = pc_fsync(f);
	errors = tu_vm(c, "writeback_errors") - errors;
	assert_int_equal(rc, errors ? -EIO : 0);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(tu_vm(c, "nr_dirty"), 0);
	tu_read_page(f, 40, 73);
	while (n)
		pc_put_page(pins[--n]);
	assert_int_equal(pc_close(f), 0);
	free(pins);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_all_pinned),
		cmocka_unit_test(test_writeback_wait),
		cmocka_unit_test(test_writeback_fails),
		cmocka_unit_test(test_policy_node_reclaim),
		cmocka_unit_test(test_policy_mapping_sticky),
		cmocka_unit_test(test_policy_dirty_spread),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
