/*
 * test_dropbehind.c - use-once pages (dropbehind.c): how full a stream
 * leaves the cache, that it recycles its own frames without waking
 * kswapd, on one node and on four, which pages it drops and which it
 * keeps, and the working set it protects.
 *
 *   floor   one stream of 64 KiB reads through a sparse file of four
 *           budgets: from the first drop on, the node's free frames stay
 *           between its low mark and the use-once floor (low plus two
 *           readahead windows, or the band from min to high), so the
 *           cache holds all but that floor (the first wave kept an eighth
 *           of the budget free); kswapd is never woken, nothing is
 *           reclaimed, almost every page is dropped behind.
 *   nodes   the same on a cache of four nodes, each tight on its own
 *           while the cache as a whole has room: no direct reclaim.
 *   stale   a file written and never read goes to reclaim before a
 *           stream's pages: the stream keeps what it read meanwhile,
 *           then drops behind (counters: pgsteal, dropbehind, and
 *           pgfault_hit of a look at every page without I/O).
 *   kept    a consumed page another reader touched before its batch
 *           went stays, and so do pages read ahead but not consumed and
 *           a stream's first window; closing the stream drops its batch.
 *   twice   a page twice in the batch (its frame taken again for the same
 *           index) is dropped once at the close, which returns.
 *   hotcold a hot set of half the budget read at random keeps a hit
 *           ratio above 95% while four budgets stream past once (one
 *           thread, then two; without drop-behind shown, not held).
 *
 * floor, nodes and kept: one reader, no other thread allocating, so every
 * count is exact; stale holds bounds, since with kswapd on the end state
 * depends on how far kswapd got.  hotcold's second pass runs the hot reader in a thread
 * and holds only the ratio; its seed is printed (PC_SEED replays).
 * Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "inode.h"
#include "node.h"
#include "readahead.h"
#include "util.h"
#include "util_inside.h"

#define PG 4096
#define KB 1024

static void test_stream_floor(void **state)
{
	const char *path = tu_path("floor");
	const uint64_t pages = 4 * 4096;	/* four budgets */
	unsigned char *buf = malloc(64 * KB);
	uint64_t low, floor, lowest = UINT64_MAX, highest = 0, ra_max;
	struct pc_node *n;
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_non_null(buf);
	tu_make_sparse(path, pages * PG);
	assert_int_equal(pc_cache_create(&c, "memory=16M nodes=1"), 0);
	n = &c->nodes[0];
	ra_max = pc__ra_default_max(c);
	low = node_wmark_low(n);
	floor = low + pc_max(n->wmark_high - n->wmark_min, 2 * ra_max);
	assert_true(floor < n->nr_frames / 8);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB) {
		uint64_t free_now;

		assert_int_equal(pc_pread(f, buf, 64 * KB, (off_t)off), 64 * KB);
		if (!tu_vm(c, "dropbehind"))
			continue;	/* still filling the cache */
		free_now = atomic_load(&n->nr_free);
		lowest = pc_min(lowest, free_now);
		highest = pc_max(highest, free_now);
	}
	printf("  16M, floor %llu (low %llu, ra max %llu): free frames stayed "
	       "in [%llu, %llu]; dropbehind %llu of %llu, kswapd woken %llu\n",
	       (unsigned long long)floor, (unsigned long long)low,
	       (unsigned long long)ra_max, (unsigned long long)lowest,
	       (unsigned long long)highest,
	       (unsigned long long)tu_vm(c, "dropbehind"),
	       (unsigned long long)pages,
	       (unsigned long long)tu_vm(c, "kswapd_wakeup"));
	assert_true(lowest > low);
	/* a drop batch and a window over holes above the floor at most */
	assert_true(highest <= floor + PC_DROP_BATCH + 32);
	assert_int_equal(tu_vm(c, "kswapd_wakeup"), 0);
	assert_int_equal(tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct"), 0);
	assert_true(tu_vm(c, "dropbehind") >= pages - n->nr_frames);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
	free(buf);
}


/*
 * Streams on a cache of four nodes: each node fills and is tight on its
 * own (numa.node_reclaim keeps a thread's pages on its node) while the
 * cache as a whole still has room - drop-behind must work per node.
 */
static void test_stream_nodes(void **state)
{
	const char *path = tu_path("nodes");
	const uint64_t pages = 4 * 4096;	/* four budgets */
	unsigned char *buf = malloc(64 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_sparse(path, pages * PG);
	c = tu_cache("memory=16M nodes=4");
	f = tu_open_ro(c, path);
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB)
		assert_int_equal(pc_pread(f, buf, 64 * KB, (off_t)off), 64 * KB);
	printf("  four nodes: dropbehind %llu of %llu, reclaimed %llu (direct %llu)\n",
	       (unsigned long long)tu_vm(c, "dropbehind"), (unsigned long long)pages,
	       (unsigned long long)(tu_vm(c, "pgsteal_kswapd") +
				    tu_vm(c, "pgsteal_direct")),
	       (unsigned long long)tu_vm(c, "pgsteal_direct"));
	assert_true(tu_vm(c, "dropbehind") >= pages / 2);
	assert_int_equal(tu_vm(c, "pgsteal_direct"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/*
 * Pages nobody wanted at the inactive tail (a file written and fsynced,
 * never read: tiobench's warm-up file) go before a stream's: a stream of
 * four budgets trades its consumed pages for those (reclaims them in its
 * drop batches, one for one, so it never wakes kswapd), keeping what it
 * read meanwhile, then drops behind as before.  Which pages went and which stayed is read off the
 * counters: the old file's pages reclaimed (pgsteal), the stream's rest
 * dropped behind, and a look at every page of both files without I/O
 * (pc_get_page NOWAIT, pgfault_hit) finds the stream's pages, not the old
 * file's.  Without the policy the old file stays whole, nothing is
 * reclaimed, and the stream keeps only what fitted beside it.
 */
static uint64_t nowait_hits(pc_cache *c, const char *path, uint64_t pages,
			    uint64_t *first)
{
	pc_file *f = tu_open_random(c, path, O_RDONLY);
	uint64_t before = tu_vm(c, "pgfault_hit");

	*first = UINT64_MAX;
	for (uint64_t i = 0; i < pages; i++) {
		pc_page *p;

		if (pc_get_page(f, i, PC_GET_NOWAIT, &p) == 0) {
			pc_put_page(p);
			*first = pc_min(*first, i);
		}
	}
	assert_int_equal(pc_close(f), 0);
	return tu_vm(c, "pgfault_hit") - before;
}

static void stream_past_stale(const char *cfg)
{
	const char *old = tu_path("stale-old"), *path = tu_path("stale-stream");
	const uint64_t old_pages = 2048, pages = 4 * 4096;	/* 16M budget */
	unsigned char *buf = malloc(64 * KB);
	uint64_t steal0, drop0, wake0, stall0, steal, dropped, kept, old_left;
	uint64_t first, frames, refault0;
	pc_cache *c;
	pc_file *f;

	assert_non_null(buf);
	memset(buf, 0x5a, 64 * KB);
	c = tu_cache(cfg);
	frames = c->nodes[0].nr_frames;
	/* The old file: written through the cache, fsynced, closed. */
	assert_int_equal(pc_open(c, old, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	for (uint64_t i = 0; i < old_pages; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)(i * PG)), PG);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(tu_vm(c, "nr_file_pages"), old_pages);
	tu_make_sparse(path, pages * PG);
	f = tu_open_ro(c, path);
	/* A fast device (holes measure nothing; the old file's writeback
	 * measured the disk's write bandwidth, which may be anything). */
	atomic_store(&f->mapping->bdi->read_bw, 1ull << 30);
	atomic_store(&f->mapping->bdi->write_bw, 1ull << 30);
	steal0 = tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct");
	drop0 = tu_vm(c, "dropbehind");
	wake0 = tu_vm(c, "kswapd_wakeup");
	stall0 = tu_vm(c, "allocstall");
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB)
		assert_int_equal(pc_pread(f, buf, 64 * KB, (off_t)off), 64 * KB);
	assert_int_equal(pc_close(f), 0);
	steal = tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct") - steal0;
	dropped = tu_vm(c, "dropbehind") - drop0;
	old_left = nowait_hits(c, old, old_pages, &first);
	kept = nowait_hits(c, path, pages, &first);
	printf("  %s: old file %llu of %llu pages left, reclaimed %llu; stream "
	       "kept %llu of %llu frames (from page %llu), dropped behind %llu\n",
	       cfg, (unsigned long long)old_left, (unsigned long long)old_pages,
	       (unsigned long long)steal, (unsigned long long)kept,
	       (unsigned long long)frames, (unsigned long long)first,
	       (unsigned long long)dropped);
	/* The old file went, every page of it, to reclaim (shadows left)... */
	assert_int_equal(old_left, 0);
	assert_int_equal(steal, old_pages);
	/* ...done by the stream itself, at the pace it read: kswapd was
	 * never woken and no allocation waited. */
	assert_int_equal(tu_vm(c, "kswapd_wakeup") - wake0, 0);
	assert_int_equal(tu_vm(c, "allocstall") - stall0, 0);
	/* Then it dropped behind as before. */
	assert_true(dropped >= pages - frames);
	/* It holds the cache: its first pages, read while the old file's
	 * went (all but the use-once floor, at most an eighth, and a batch). */
	assert_int_equal(first, 0);
	assert_true(kept >= frames - frames / 8 - PC_DROP_BATCH);
	/* Evicted as reclaim evicts, with shadows: read again, they refault. */
	refault0 = tu_vm(c, "workingset_refault_file");
	f = tu_open_random(c, old, O_RDONLY);
	for (uint64_t i = 0; i < 16; i++)
		assert_int_equal(pc_pread(f, buf, PG, (off_t)(i * PG)), PG);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(tu_vm(c, "workingset_refault_file") - refault0, 16);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(old);
	unlink(path);
	free(buf);
}

static void test_stream_evicts_stale(void **state)
{
	(void)state;
	/* Direct reclaim alone (one thread: every step in order) ... */
	stream_past_stale("memory=16M nodes=1 reclaim.kswapd=off");
	/* ... and with kswapd doing it, as in the lab. */
	stream_past_stale("memory=16M nodes=1");
}

/* ------------------------------------------------------------------ */
/* Use-once pages.                                                     */

/* A consumed stream page touched before its batch is dropped stays. */
static void test_use_once_touched_kept(void **state)
{
	const char *path = tu_path("touched");
	unsigned char buf[PG];
	pc_cache *c;
	pc_file *s, *r;

	(void)state;
	tu_make_file(path, 1024, 12);
	c = tu_cache("memory=32M cache.stickiness=always reclaim.kswapd=off");
	s = tu_open_ro(c, path);
	r = tu_open_ro(c, path);
	assert_int_equal(pc_fadvise(r, 0, 0, POSIX_FADV_RANDOM), 0);
	/*
	 * Pages 0-3 are the first window (not use-once); 4-35 fill the batch,
	 * dropped when page 36 finds it full.
	 */
	for (uint64_t i = 0; i < 51; i++)
		tu_read_check(s, buf, PG, i * PG, 12);
	for (uint64_t i = 4; i < 36; i++)
		assert_false(tu_resident(s, i));
	assert_int_equal(tu_vm(c, "dropbehind"), 32);
	tu_read_check(r, buf, PG, 40 * PG, 12);	/* consumed, in the batch */
	tu_read_check(r, buf, PG, 80 * PG, 12);	/* read ahead, not consumed */
	for (uint64_t i = 51; i < 100; i++)
		tu_read_check(s, buf, PG, i * PG, 12);
	assert_true(tu_resident(s, 40));
	assert_true(tu_resident(s, 80));
	assert_false(tu_resident(s, 39));		/* the batch 36-67 went */
	assert_false(tu_resident(s, 41));
	assert_true(tu_resident(s, 79));		/* in the batch 68-99 */
	assert_int_equal(pc_close(s), 0);	/* drops the batch */
	assert_false(tu_resident(r, 79));
	assert_false(tu_resident(r, 99));
	assert_true(tu_resident(r, 80));
	assert_true(tu_resident(r, 0));		/* the first window stays */
	assert_int_equal(pc_close(r), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * A page twice in the batch, as a frame freed while its entry waits and
 * taken again for the same index leaves it (the copies of
 * tests/test_copy.sh, truncating and re-reading a file, hung in the close
 * 1 run in 40): the close drops it once and returns; before, it slept on
 * the lock it had just taken itself.
 */
static void test_batch_twice(void **state)
{
	const char *path = tu_path("twice");
	unsigned char buf[PG];
	struct pc_file *f;
	pc_cache *c;
	pc_file *s;

	(void)state;
	tu_make_file(path, 64, 13);
	c = tu_cache("memory=32M cache.stickiness=always reclaim.kswapd=off");
	s = tu_open_ro(c, path);
	/* Pages 0-3 are the first window; 4-9 go in the batch. */
	for (uint64_t i = 0; i < 10; i++)
		tu_read_check(s, buf, PG, i * PG, 13);
	f = (struct pc_file *)s;
	pc__lock(&f->ra_lock);
	assert_int_equal(f->nr_drop, 6);
	f->drop_index[f->nr_drop] = f->drop_index[2];	/* page 6 again */
	f->drop[f->nr_drop++] = f->drop[2];
	pc__unlock(&f->ra_lock);
	assert_int_equal(pc_close(s), 0);	/* drops the batch */
	assert_int_equal(tu_vm(c, "dropbehind"), 6);
	s = tu_open_ro(c, path);
	for (uint64_t i = 4; i < 10; i++)
		assert_false(tu_resident(s, i));
	assert_true(tu_resident(s, 0));
	assert_int_equal(pc_close(s), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Scan resistance (hotcold): a hot set of half the budget, read at random,
 * and a stream of four budgets read once.  The hot set's hit ratio stays
 * above 95% (hits counted with pc_get_page(PC_GET_NOWAIT)).
 */
struct hot {
	pc_file *f;
	uint64_t pages, seed;
	_Atomic bool *stop;
	uint64_t hits, misses;
};

static void hot_read(struct hot *h)
{
	uint64_t idx = tu_rand(&h->seed) % h->pages;
	unsigned char buf[PG];
	pc_page *p;

	if (pc_get_page(h->f, idx, PC_GET_NOWAIT, &p) == 0) {
		pc_put_page(p);
		h->hits++;
		return;
	}
	h->misses++;
	tu_read_check(h->f, buf, PG, idx * PG, 13);
}

static void *hot_thread(void *arg)
{
	struct hot *h = arg;

	while (!atomic_load(h->stop))
		hot_read(h);
	return NULL;
}

static double hotcold(const char *cfg, bool threads, uint64_t seed)
{
	const uint64_t budget = 4096, hot_pages = budget / 2;
	const char *hot = tu_path("hot"), *cold = tu_path("cold");
	unsigned char *buf = malloc(64 * KB);
	_Atomic bool stop = false;
	struct hot h = { .pages = hot_pages, .seed = seed, .stop = &stop };
	pthread_t tid;
	pc_file *s;
	pc_cache *c;
	double ratio;

	c = tu_cache(cfg);
	h.f = tu_open_ro(c, hot);
	s = tu_open_ro(c, cold);
	for (int pass = 0; pass < 2; pass++)	/* warm: each page read twice */
		for (uint64_t off = 0; off < hot_pages * PG; off += 64 * KB)
			tu_read_check(h.f, buf, 64 * KB, off, 13);
	if (threads)
		pthread_create(&tid, NULL, hot_thread, &h);
	for (uint64_t off = 0; off < 4 * budget * PG; off += 64 * KB) {
		tu_read_check(s, buf, 64 * KB, off, 14);
		if (!threads)
			for (int i = 0; i < 16; i++)
				hot_read(&h);
	}
	if (threads) {
		atomic_store(&stop, true);
		tu_join(tid);
	}
	ratio = (double)h.hits / (double)(h.hits + h.misses);
	printf("  hotcold %s (%s): hit ratio %.2f%% (%llu reads), dropbehind %llu, "
	       "reclaimed %llu (direct %llu), active %llu, inactive %llu\n", cfg,
	       threads ? "two threads" : "one thread", 100 * ratio,
	       (unsigned long long)(h.hits + h.misses),
	       (unsigned long long)tu_vm(c, "dropbehind"),
	       (unsigned long long)(tu_vm(c, "pgsteal_kswapd") +
				    tu_vm(c, "pgsteal_direct")),
	       (unsigned long long)tu_vm(c, "pgsteal_direct"),
	       (unsigned long long)tu_vm(c, "nr_active_file"),
	       (unsigned long long)tu_vm(c, "nr_inactive_file"));
	assert_int_equal(pc_close(s), 0);
	assert_int_equal(pc_close(h.f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
	return ratio;
}

static void test_scan_resistance(void **state)
{
	uint64_t seed = tu_seed("scan_resistance");

	(void)state;
	tu_make_file(tu_path("hot"), 2048, 13);
	tu_make_file(tu_path("cold"), 4 * 4096, 14);
	assert_true(hotcold("memory=16M", false, seed) > 0.95);
	assert_true(hotcold("memory=16M", true, seed) > 0.95);
	/* Without drop-behind it is the LRU's doing alone: shown, not held. */
	hotcold("memory=16M cache.stickiness=off", false, seed);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_floor),
		cmocka_unit_test(test_stream_nodes),
		cmocka_unit_test(test_stream_evicts_stale),
		cmocka_unit_test(test_use_once_touched_kept),
		cmocka_unit_test(test_batch_twice),
		cmocka_unit_test(test_scan_resistance),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
