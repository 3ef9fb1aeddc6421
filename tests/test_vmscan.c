/*
 * test_vmscan.c - reclaim (vmscan.c, kswapd.c): kswapd, direct reclaim,
 * shrinking the lists, and the reclaim policies.
 *
 *   safety      a random workload on 64-page budgets, 1 to 4 nodes,
 *               several threads, each with the reference model of its
 *               files (tests/util): pinned and locked pages stay where
 *               they are with their data, dirty data is never lost (reads
 *               and, after fsync, the disk equal the model), writes are
 *               slowed so reclaim keeps meeting pages under writeback;
 *   kswapd      a node taken below low wakes its kswapd, which balances
 *               it above high by itself (counters, and a wait for kswapd
 *               to be done rather than a time limit); a late kswapd raises
 *               the boost by what was taken while it waited; an
 *               allocation at min gives way to a woken kswapd, counted;
 *   balance     the active list is aged when it outgrows the inactive one;
 *   policies    reclaim.batch_remove moves the counters it must;
 *               reclaim.contention_backoff's decisions (a held lock, the
 *               waits and stalls, stale contention, the cap), each driven
 *               by the test with a held lock and the cache's clock.
 *
 * Deterministic cases run with reclaim.kswapd=off (only direct reclaim,
 * in the test's own thread) and POSIX_FADV_RANDOM (one page per miss), so
 * the LRU order is the order of the test's reads.  Random cases print
 * their seed; PC_SEED=N replays.  Tests look inside the cache (internal.h).
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
#include "tctx.h"
#include "vmscan.h"
#include "node.h"
#include "io.h"
#include "util.h"

#define PG 4096

/* ------------------------------------------------------------------ */
/* Safety under constant reclaim                                       */

#define S_MAX_FILE (48 * PG)
#define S_PINS 2

struct s_pin {
	pc_page *page;
	struct tu_model *md;
	uint64_t idx;
};

struct s_run {
	pc_cache *c;
	uint64_t seed;
	int id;
	int ops;
};

/* The pinned page is still page @idx of its mapping, with the model's data. */
static void s_check_pin(struct s_pin *pin)
{
	struct pc_page *p = (struct pc_page *)pin->page;
	struct tu_model *md = pin->md;
	size_t off = pin->idx * PG;
	size_t len = off < md->size ? pc_min((size_t)PG, md->size - off) : 0;

	if (page_mapping(p) != md->f->mapping || page_index(p) != pin->idx)
		fail_msg("pinned page %llu left its mapping",
			 (unsigned long long)pin->idx);
	if (pc__find_get_page(md->f->mapping, pin->idx) != p)
		fail_msg("pinned page %llu was replaced",
			 (unsigned long long)pin->idx);
	pc__put_page(md->f->cache, p);
	/* (Bytes past end of file are not the model's business.) */
	tu_model_check(md, pc_page_data(pin->page), off, len, "pinned page");
}

static void s_unpin_all(struct s_pin *pins, int *npins)
{
	while (*npins > 0) {
		struct s_pin *pin = &pins[--*npins];

		s_check_pin(pin);
		pc_put_page(pin->page);
	}
}

static void s_read(struct tu_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % (S_MAX_FILE + PG);
	size_t len = 1 + tu_rand(rs) % (6 * PG);

	tu_model_read(md, off, len);
}

static void s_write(struct tu_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % S_MAX_FILE;
	size_t len = 1 + tu_rand(rs) % pc_min((size_t)(5 * PG), S_MAX_FILE - off);

	tu_model_write(md, off, len, tu_rand(rs));
}

static void *s_worker(void *arg)
{
	struct s_run *r = arg;
	uint64_t rs = r->seed * 7919 + (uint64_t)r->id + 1;
	struct tu_model md[2];
	struct s_pin pins[S_PINS];
	int npins = 0;

	for (int i = 0; i < 2; i++) {
		char name[64];

		snprintf(name, sizeof(name), "safety-%d-%d", r->id, i);
		tu_model_init(&md[i], tu_path(name), S_MAX_FILE + PG);
		tu_model_open(&md[i], r->c, O_RDWR | O_CREAT | O_TRUNC);
	}
	for (int op = 0; op < r->ops; op++) {
		struct tu_model *m = &md[tu_rand(&rs) % 2];
		struct tu_model *other = m == &md[0] ? &md[1] : &md[0];
		unsigned k = (unsigned)(tu_rand(&rs) % 100);

		if (k < 35) {
			s_write(m, &rs);
		} else if (k < 65) {
			s_read(m, &rs);
		} else if (k < 77) {	/* pin a page, keep up to S_PINS */
			uint64_t npages = (m->size + PG - 1) / PG;
			uint64_t idx;
			pc_page *pg;
			int e;

			if (!npages)
				continue;
			idx = tu_rand(&rs) % npages;
			if (npins == S_PINS) {
				s_check_pin(&pins[0]);
				pc_put_page(pins[0].page);
				pins[0] = pins[1];
				npins--;
			}
			e = pc_get_page(m->f, idx, 0, &pg);
			if (e != 0)
				fail_msg("pc_get_page(%llu) = %d",
					 (unsigned long long)idx, e);
			pins[npins++] = (struct s_pin){ pg, m, idx };
			s_check_pin(&pins[npins - 1]);
		} else if (k < 82 && npins) {
			/*
			 * Lock a pinned page, then push the other file through
			 * reclaim: the locked page must stay put.  (Not the
			 * page's own file: a write to it would wait for us.)
			 */
			struct s_pin *pin = &pins[tu_rand(&rs) % (uint64_t)npins];

			if (pin->md == other)
				continue;
			pc__lock_page(&r->c->wait, (struct pc_page *)pin->page);
			for (int i = 0; i < 4; i++)
				s_read(other, &rs);
			s_check_pin(pin);
			pc__unlock_page(&r->c->wait, (struct pc_page *)pin->page);
		} else if (k < 90) {
			assert_int_equal(pc_fsync(m->f), 0);
			tu_model_check_disk(m);
		} else if (k < 94) {	/* truncate: pins go first */
			s_unpin_all(pins, &npins);
			tu_model_truncate(m, tu_rand(&rs) % S_MAX_FILE);
		} else {
			off_t off = (off_t)(tu_rand(&rs) % S_MAX_FILE);

			assert_int_equal(pc_fadvise(m->f, off, 8 * PG,
						    POSIX_FADV_DONTNEED), 0);
		}
	}
	s_unpin_all(pins, &npins);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pc_fsync(md[i].f), 0);
		tu_model_check_disk(&md[i]);
		tu_model_fini(&md[i]);
	}
	return NULL;
}

static void safety_run(uint64_t seed, int nodes, int threads, int ops)
{
	char cfg[160];
	pthread_t tid[8];
	struct s_run runs[8];
	/* Slow writes down so reclaim meets pages under writeback. */
	struct pc_io_fault slow = { .op = PC_IO_WRITE, .fd = -1, .delay_us = 300,
				    .count = -1 };
	pc_cache *c;

	snprintf(cfg, sizeof(cfg), "memory=256K nodes=%d io=fault", nodes);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &slow), 0);
	for (int t = 0; t < threads; t++) {
		runs[t] = (struct s_run){ .c = c, .seed = seed + (uint64_t)nodes,
					  .id = t, .ops = ops };
		pthread_create(&tid[t], NULL, s_worker, &runs[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	tu_check_threads();
	printf("  nodes=%d: pgscan %llu pgsteal %llu (direct %llu) "
	       "writeback skipped %llu, dirty handed off %llu, refaults %llu\n",
	       nodes,
	       (unsigned long long)(tu_vm(c, "pgscan_kswapd") + tu_vm(c, "pgscan_direct")),
	       (unsigned long long)(tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct")),
	       (unsigned long long)tu_vm(c, "pgsteal_direct"),
	       (unsigned long long)tu_vm(c, "pgsteal_writeback_skip"),
	       (unsigned long long)tu_vm(c, "dirty_reclaim_handoff"),
	       (unsigned long long)tu_vm(c, "workingset_refault_file"));
	/* Reclaim did run, all the time. */
	assert_true(tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct") > 100);
	assert_true(tu_vm(c, "nr_free_pages") <= c->nr_frames);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_safety_under_reclaim(void **state)
{
	uint64_t seed = tu_seed("safety_under_reclaim");

	(void)state;
	for (int nodes = 1; nodes <= 4; nodes++)
		safety_run(seed, nodes, 3, 700);
}

/* ------------------------------------------------------------------ */
/* kswapd balances its node                                             */

/*
 * kswapd of @n is asleep with no wake pending.  (A wake sets kswapd_wake
 * under kswapd_mtx before the waker returns, and kswapd sets kswapd_active
 * under it when it takes the wake: asleep means done with every wake.)
 */
static bool kswapd_idle(struct pc_node *n)
{
	bool idle;

	pc__lock(&n->kswapd_mtx);
	idle = !atomic_load(&n->kswapd_active) && !n->kswapd_wake;
	pc__unlock(&n->kswapd_mtx);
	return idle;
}

/*
 * A node full of clean pages is taken below its low mark by allocations
 * that never reclaim: that wakes its kswapd, which brings the node back
 * above high on its own.  The test waits for kswapd to be done - a poll
 * that ends when it is, however late the scheduler runs it - and checks
 * the counters it moved: a wake-up, pages stolen by kswapd, none by direct
 * reclaim (no one allocated meanwhile).  How much of a stream's reclaim
 * kswapd does on a busy machine is a benchmark figure (pgsteal_kswapd and
 * pgsteal_direct of `pagecache bench --counters`), not a test.
 */
static void test_kswapd_balances(void **state)
{
	const char *path = tu_path("balance");
	const uint64_t pages = 3 * 2048;	/* three budgets */
	struct pc_page *taken[2048];
	uint64_t wakeups, kswapd, direct, stalls, low, high, freed;
	unsigned ntaken = 0;
	struct pc_node *n;
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, pages, 5);
	assert_int_equal(pc_cache_create(&c, "memory=8M nodes=1 "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < pages; i++)	/* the cache fills, and more */
		tu_read_page(f, i, 5);
	pc__lru_drain(c, pc__tctx(c));
	while (!kswapd_idle(n))
		tu_sleep_us(1000);
	/*
	 * The fill's direct reclaim boosted the watermarks, and kswapd lowers
	 * the boost when it balances: start from the fixed marks, so that the
	 * low this test takes the node to is the low kswapd checks.
	 */
	atomic_store(&n->wmark_boost, 0);
	wakeups = tu_vm(c, "kswapd_wakeup");
	kswapd = tu_vm(c, "pgsteal_kswapd");
	direct = tu_vm(c, "pgsteal_direct");
	stalls = tu_vm(c, "allocstall");
	low = node_wmark_low(n);
	/*
	 * Down to low: the allocation that leaves the node there wakes
	 * kswapd.  Stop at that wake-up, not at the free count: kswapd may
	 * run at once on the other CPU and lift the node above low again,
	 * and taking on would race it until the cache is all taken.
	 */
	while (atomic_load(&n->nr_free) > low && ntaken < 2048 &&
	       tu_vm(c, "kswapd_wakeup") == wakeups) {
		struct pc_page *p = pc__alloc_page(c, NULL, PC_GFP_NORETRY);

		assert_non_null(p);
		taken[ntaken++] = p;
	}
	while (!kswapd_idle(n))
		tu_sleep_us(1000);
	high = node_wmark_high(n);
	freed = tu_vm(c, "pgsteal_kswapd") - kswapd;
	printf("  %u frames taken to low %llu; kswapd woke %llu time(s) and "
	       "freed %llu pages: %llu free, high %llu\n", ntaken,
	       (unsigned long long)low,
	       (unsigned long long)(tu_vm(c, "kswapd_wakeup") - wakeups),
	       (unsigned long long)freed,
	       (unsigned long long)atomic_load(&n->nr_free),
	       (unsigned long long)high);
	assert_true(tu_vm(c, "kswapd_wakeup") > wakeups);
	assert_true(atomic_load(&n->nr_free) > high);	/* balanced */
	assert_true(freed >= high - low);
	assert_int_equal(tu_vm(c, "pgsteal_direct"), direct);
	assert_int_equal(tu_vm(c, "allocstall"), stalls);
	while (ntaken)
		pc__put_page(c, taken[--ntaken]);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * kswapd woken late: what allocations took between the wake and kswapd's
 * start raises the boost until low is twice that above min (capped at a
 * sixteenth of the node), never lowers it.  Called as kswapd calls it,
 * with the node's kswapd asleep, so the figures are exact.
 */
static void test_boost_for_latency(void **state)
{
	struct pc_node *n;
	uint64_t gap, now;
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=16M nodes=1"), 0);
	n = &c->nodes[0];
	gap = n->wmark_low - n->wmark_min;
	now = atomic_load(&n->nr_free);
	pc__boost_for_latency(c, n, now);		/* nothing taken */
	assert_int_equal(atomic_load(&n->wmark_boost), 0);
	pc__boost_for_latency(c, n, now + gap / 2);	/* fits twice */
	assert_int_equal(atomic_load(&n->wmark_boost), 0);
	pc__boost_for_latency(c, n, now + 50);
	assert_int_equal(atomic_load(&n->wmark_boost), 2 * 50 - gap);
	pc__boost_for_latency(c, n, now + 30);		/* raise only */
	assert_int_equal(atomic_load(&n->wmark_boost), 2 * 50 - gap);
	pc__boost_for_latency(c, n, now + 3000);	/* capped */
	assert_int_equal(atomic_load(&n->wmark_boost), n->nr_frames / 16);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * An allocation at min gives way to a kswapd that was woken: it waits (a
 * bounded time) only while kswapd is woken or running, and counts the
 * wait in pgscan_direct_throttle.  The wake here is the flag alone, not
 * sent: kswapd sleeps on, frees nothing, and the wait ends at its bound.
 */
static void test_give_way(void **state)
{
	struct pc_node *n;
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=16M nodes=1 reclaim.kswapd=off"), 0);
	n = &c->nodes[0];
	assert_false(pc__kswapd_give_way(c, n));	/* no kswapd at all */
	assert_int_equal(tu_vm(c, "pgscan_direct_throttle"), 0);
	assert_int_equal(pc_cache_destroy(c), 0);

	assert_int_equal(pc_cache_create(&c, "memory=16M nodes=1"), 0);
	n = &c->nodes[0];
	while (!kswapd_idle(n))
		tu_sleep_us(1000);
	assert_false(pc__kswapd_give_way(c, n));	/* asleep, not woken */
	assert_int_equal(tu_vm(c, "pgscan_direct_throttle"), 0);
	pc__lock(&n->kswapd_mtx);
	n->kswapd_wake = true;				/* woken, not yet run */
	pc__unlock(&n->kswapd_mtx);
	assert_false(pc__kswapd_give_way(c, n));	/* it freed nothing */
	assert_int_equal(tu_vm(c, "pgscan_direct_throttle"), 1);
	pc__lock(&n->kswapd_mtx);
	n->kswapd_wake = false;
	pc__unlock(&n->kswapd_mtx);
	assert_int_equal(tu_vm(c, "allocstall"), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * The active list is aged when it outgrows the inactive one: a hot set of
 * 3/4 of the budget, then a stream.  Unreferenced active pages move to
 * the inactive list (pgrefill, pgdeactivate), until inactive is not low.
 */
static void test_inactive_balance(void **state)
{
	const char *hot = tu_path("bal-hot"), *str = tu_path("bal-stream");
	struct pc_node *n;
	pc_cache *c;
	pc_file *fh, *fs;
	uint64_t a, i;

	(void)state;
	tu_make_file(hot, 192, 51);
	tu_make_file(str, 512, 52);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	fh = tu_open_random(c, hot, O_RDONLY);
	fs = tu_open_random(c, str, O_RDONLY);
	for (int round = 0; round < 2; round++)
		for (uint64_t k = 0; k < 192; k++)
			tu_read_page(fh, k, 51);
	pc__lru_drain(c, pc__tctx(c));
	assert_true(atomic_load(&n->lru[PC_LRU_ACTIVE].nr) >= 150);
	for (uint64_t k = 0; k < 512; k++)
		tu_read_page(fs, k, 52);
	a = atomic_load(&n->lru[PC_LRU_ACTIVE].nr);
	i = atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	printf("  active %llu inactive %llu pgrefill %llu pgdeactivate %llu\n",
	       (unsigned long long)a, (unsigned long long)i,
	       (unsigned long long)tu_vm(c, "pgrefill"),
	       (unsigned long long)tu_vm(c, "pgdeactivate"));
	assert_true(tu_vm(c, "pgrefill") > 0);
	assert_true(tu_vm(c, "pgdeactivate") > 0);
	assert_true(a <= i + PC_RECLAIM_BATCH + PC_LRU_BATCH);
	pc_close(fh);
	pc_close(fs);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Frames freed by reclaim are handed out lowest first (pc__free_batch),
 * so a file written after a reclaim gets them side by side and its
 * writeback requests are few segments (writeback_segments): here 3 for
 * 2 MiB in two requests, where freed in the order a batch left the LRU
 * they made 32.  One file read in order fills the cache (one page
 * per miss, no kswapd: the LRU's order is the reads'), then a new file
 * written in order takes its frames from direct reclaim's batches: they
 * come out ascending but where a batch ends (allocstall counts them).
 */
static void test_freed_frames_ascending(void **state)
{
	const char *old = tu_path("asc-old"), *new = tu_path("asc-new");
	const uint64_t frames = 1024, pages = 512;	/* memory=4M; 2 MiB */
	uint64_t stall0, seg0, req0, descents = 0, stalls, segs, reqs;
	uint32_t prev = 0;
	char buf[PG];
	pc_cache *c;
	pc_file *fo, *fn;

	(void)state;
	tu_make_file(old, 2 * frames, 61);
	assert_int_equal(pc_cache_create(&c, "memory=4M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off "
					 "writeback.dirty_ratio=90 "
					 "writeback.dirty_background_ratio=80 "
					 "writeback.dirty_expire_ms=600000"), 0);
	fo = tu_open_random(c, old, O_RDONLY);
	for (uint64_t i = 0; i < 2 * frames; i++)
		tu_read_page(fo, i, 61);
	pc__lru_drain(c, pc__tctx(c));
	assert_int_equal(pc_open(c, new, O_RDWR | O_CREAT | O_TRUNC, 0644, &fn), 0);
	stall0 = tu_vm(c, "allocstall");
	for (uint64_t i = 0; i < pages; i++) {
		tu_pattern(buf, PG, 62, i * PG);
		assert_int_equal(pc_pwrite(fn, buf, PG, (off_t)(i * PG)), PG);
	}
	stalls = tu_vm(c, "allocstall") - stall0;
	for (uint64_t i = 0; i < pages; i++) {
		struct pc_page *p = pc__find_get_page(fn->mapping, i);
		uint32_t pfn;

		assert_non_null(p);
		pfn = page_pfn(c, p);
		pc__put_page(c, p);
		if (i && pfn < prev)
			descents++;
		prev = pfn;
	}
	seg0 = tu_vm(c, "writeback_segments");
	req0 = tu_vm(c, "writeback_requests");
	assert_int_equal(pc_fsync(fn), 0);
	segs = tu_vm(c, "writeback_segments") - seg0;
	reqs = tu_vm(c, "writeback_requests") - req0;
	printf("  %llu pages: %llu direct reclaims, %llu descents; "
	       "%llu requests, %llu segments\n", (unsigned long long)pages,
	       (unsigned long long)stalls, (unsigned long long)descents,
	       (unsigned long long)reqs, (unsigned long long)segs);
	assert_true(stalls >= pages / PC_RECLAIM_BATCH);
	assert_true(descents <= stalls + 1);
	/* the old file's frames, freed in order: side by side but where a
	 * batch or a huge page ends */
	assert_true(segs <= reqs + stalls + pages / 512 + 1);
	assert_true(segs < pages / 4);
	pc_close(fo);
	pc_close(fn);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * reclaim.batch_remove: tree-lock holds taken to remove a reclaimed page.
 * One page per miss, no kswapd: every tree-lock acquisition is an insert
 * (one per page read) or a removal.  Two files read alternately make a
 * batch alternate mappings too: "on" finds runs of one, "sorted" two.
 */
static double removal_locks_per_page(const char *mode, bool two_files)
{
	const char *a = tu_path("br-a"), *b = tu_path("br-b");
	const uint64_t pages = 1024;	/* 4 budgets */
	char cfg[160];
	uint64_t reads = 0, locks, steal;
	pc_cache *c;
	pc_file *fa, *fb;

	tu_make_file(a, pages, 11);
	tu_make_file(b, pages, 12);
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=1 reclaim.kswapd=off "
		 "cache.stickiness=off reclaim.batch_remove=%s", mode);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	fa = tu_open_random(c, a, O_RDONLY);
	fb = tu_open_random(c, b, O_RDONLY);
	locks = tu_vm(c, "tree_lock_acquired");
	for (uint64_t i = 0; i < pages; i++) {
		tu_read_page(fa, i, 11);
		reads++;
		if (two_files) {
			tu_read_page(fb, i, 12);
			reads++;
		}
	}
	locks = tu_vm(c, "tree_lock_acquired") - locks;
	steal = tu_vm(c, "pgsteal_direct");
	assert_true(steal >= reads / 2);
	pc_close(fa);
	pc_close(fb);
	assert_int_equal(pc_cache_destroy(c), 0);
	printf("  batch_remove=%s, %s: %.3f tree-lock holds per reclaimed page\n",
	       mode, two_files ? "two files" : "one file",
	       (double)(locks - reads) / (double)steal);
	return (double)(locks - reads) / (double)steal;
}

static void test_policy_batch_remove(void **state)
{
	(void)state;
	/* off: one hold per page. */
	assert_true(removal_locks_per_page("off", false) >= 0.95);
	/* on: one hold per run; a batch of one file is one run. */
	assert_true(removal_locks_per_page("on", false) <= 0.1);
	/* Alternating mappings: "on" gains nothing, "sorted" does. */
	assert_true(removal_locks_per_page("on", true) >= 0.9);
	assert_true(removal_locks_per_page("sorted", true) <= 0.15);
	assert_true(removal_locks_per_page("off", true) >= 0.95);
}

/*
 * reclaim.contention_backoff, each decision driven by the test: it holds a
 * mapping's tree lock (the contention), freezes the cache's clock
 * (pc__test_clock_set) and moves it by hand, and takes a node exactly
 * down to its low mark with allocations that never reclaim, which wakes
 * that node's kswapd onto pages of that mapping.  Counters are read as
 * deltas from a baseline.  Where a case checks that a reclaimer is still
 * held back, it first lets real time pass (more than the back-off's real
 * length): with the clock frozen nothing may change, however long.
 */
#define BACKOFF_FRAMES 2048	/* 8M */
#define SLEEPY_NS (10ull * 1000 * 1000)		/* vmscan.c */
#define BLUNT_QUIET_NS (10ull * 1000 * 1000)
#define BLUNT_CAP_NS (100ull * 1000 * 1000)

struct backoff {
	pc_cache *c;
	pc_file *f;
	struct pc_lock *tl;
	uint64_t now;		/* the frozen clock */
	uint64_t pages;		/* of the file */
	struct pc_page *taken[BACKOFF_FRAMES];
	unsigned ntaken;
};

static uint64_t node_vm(pc_cache *c, int node, const char *name)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "node%d.%s", node, name);
	return tu_vm(c, buf);
}

static void backoff_clock(struct backoff *b, uint64_t ns)
{
	b->now = ns;
	pc__test_clock_set(b->c, ns);
}

/*
 * Give back the frames taken, read the whole file again (both nodes get
 * their share), wait for the kswapds to be idle: each case starts from a
 * cache full of clean pages of one mapping, with fixed watermarks.
 */
static void backoff_refill(struct backoff *b)
{
	int nodes = b->c->nr_nodes;

	/*
	 * The real clock while refilling: a kswapd that finds the tree lock
	 * taken by our inserts waits (sleepy) for progress or the clock, and
	 * with the clock frozen and no other reclaimer it would wait for
	 * ever while we wait for it to be idle.  Frozen again after, anew.
	 */
	pc__test_clock_set(b->c, 0);
	while (b->ntaken)
		pc__put_page(b->c, b->taken[--b->ntaken]);
	for (uint64_t i = 0; i < b->pages; i++) {
		assert_int_equal(pc_thread_set_node(b->c, (int)(i % nodes)), 0);
		tu_read_page(b->f, i, 21);
	}
	pc__lru_drain(b->c, pc__tctx(b->c));
	for (int i = 0; i < nodes; i++) {
		while (!kswapd_idle(&b->c->nodes[i]))
			tu_sleep_us(1000);
		atomic_store(&b->c->nodes[i].wmark_boost, 0);
	}
	if (b->now)
		backoff_clock(b, pc__now_ns());
}

/* A cache of @nodes nodes full of one clean file's pages, kswapds idle. */
static void backoff_setup(struct backoff *b, const char *mode, int nodes)
{
	const char *path = tu_path("contended");
	char cfg[200];

	memset(b, 0, sizeof(*b));
	b->pages = BACKOFF_FRAMES + BACKOFF_FRAMES / 2;
	tu_make_file(path, b->pages, 21);
	/*
	 * A wide gap between low and high: balancing takes many batches.  No
	 * per-thread lists (pcp.c): backoff_to_low counts frames off the
	 * free list, and a frame left on the thread's list from the refill
	 * would leave the node one above low, its kswapd never woken.
	 */
	snprintf(cfg, sizeof(cfg), "memory=8M nodes=%d numa.node_reclaim=off "
		 "cache.stickiness=off reclaim.watermark_scale=3000 "
		 "memory.thread_frames=0 reclaim.contention_backoff=%s",
		 nodes, mode);
	assert_int_equal(pc_cache_create(&b->c, cfg), 0);
	b->f = tu_open_random(b->c, path, O_RDONLY);
	backoff_refill(b);
	b->tl = &b->f->mapping->tree_lock;
	backoff_clock(b, pc__now_ns());
}

static void backoff_done(struct backoff *b)
{
	pc__test_clock_set(b->c, 0);
	while (b->ntaken)
		pc__put_page(b->c, b->taken[--b->ntaken]);
	assert_int_equal(pc_close(b->f), 0);
	assert_int_equal(pc_cache_destroy(b->c), 0);
}

/* Node @nid exactly down to low: its kswapd is woken by the last frame. */
static void backoff_to_low(struct backoff *b, int nid)
{
	struct pc_node *n = &b->c->nodes[nid];
	uint64_t low = node_wmark_low(n);

	assert_int_equal(pc_thread_set_node(b->c, nid), 0);
	assert_true(atomic_load(&n->nr_free) > low);
	for (uint64_t k = atomic_load(&n->nr_free) - low; k; k--) {
		struct pc_page *p = pc__alloc_page(b->c, NULL, PC_GFP_NORETRY);

		assert_non_null(p);
		assert_int_equal(page_node(b->c, p)->id, nid);
		b->taken[b->ntaken++] = p;
	}
}

static void wait_vm_above(pc_cache *c, int nid, const char *name,
			  uint64_t base)
{
	while (node_vm(c, nid, name) <= base)
		tu_sleep_us(500);
}

/* off: a contended reclaimer waits for the lock, and only for it. */
static void test_backoff_off(void **state)
{
	uint64_t contended, steal;
	struct backoff b;

	(void)state;
	backoff_setup(&b, "off", 1);
	contended = node_vm(b.c, 0, "reclaim_tree_contended");
	steal = node_vm(b.c, 0, "pgsteal_kswapd");
	pc__lock_counted(b.tl);
	backoff_to_low(&b, 0);
	wait_vm_above(b.c, 0, "reclaim_tree_contended", contended);
	tu_sleep_us(30000);
	assert_int_equal(node_vm(b.c, 0, "pgsteal_kswapd"), steal);	/* held */
	pc__unlock(b.tl);
	wait_vm_above(b.c, 0, "pgsteal_kswapd", steal);	/* clock never moved */
	while (!kswapd_idle(&b.c->nodes[0]))
		tu_sleep_us(1000);
	assert_int_equal(tu_vm(b.c, "reclaim_backoff_wait"), 0);
	assert_int_equal(tu_vm(b.c, "kswapd_contended_stall"), 0);
	backoff_done(&b);
}

/*
 * sleepy: a contended reclaimer waits for reclaim progress on its node or
 * 10 ms of the clock - not for the lock: released, it still waits.
 */
static void test_backoff_sleepy(void **state)
{
	struct pc_node *n;
	uint64_t waits, steal;
	struct backoff b;

	(void)state;
	backoff_setup(&b, "sleepy", 1);
	n = &b.c->nodes[0];
	/* The timeout ends the wait. */
	waits = node_vm(b.c, 0, "reclaim_backoff_wait");
	steal = node_vm(b.c, 0, "pgsteal_kswapd");
	pc__lock_counted(b.tl);
	backoff_to_low(&b, 0);
	wait_vm_above(b.c, 0, "reclaim_backoff_wait", waits);
	pc__unlock(b.tl);
	tu_sleep_us(30000);	/* three times the wait, in real time */
	assert_int_equal(node_vm(b.c, 0, "pgsteal_kswapd"), steal);
	backoff_clock(&b, b.now + SLEEPY_NS - 1);
	tu_sleep_us(5000);
	assert_int_equal(node_vm(b.c, 0, "pgsteal_kswapd"), steal);
	backoff_clock(&b, b.now + 1);	/* 10 ms */
	wait_vm_above(b.c, 0, "pgsteal_kswapd", steal);
	while (!kswapd_idle(n))
		tu_sleep_us(1000);
	assert_int_equal(node_vm(b.c, 0, "reclaim_backoff_wait"), waits + 1);
	/* Progress on the node ends it, the clock frozen. */
	backoff_refill(&b);
	waits = node_vm(b.c, 0, "reclaim_backoff_wait");
	steal = node_vm(b.c, 0, "pgsteal_kswapd");
	pc__lock_counted(b.tl);
	backoff_to_low(&b, 0);
	wait_vm_above(b.c, 0, "reclaim_backoff_wait", waits);
	pc__unlock(b.tl);
	tu_sleep_us(30000);
	assert_int_equal(node_vm(b.c, 0, "pgsteal_kswapd"), steal);
	assert_true(pc__direct_reclaim(b.c, n, NULL) > 0);	/* ours: progress */
	wait_vm_above(b.c, 0, "pgsteal_kswapd", steal);
	while (!kswapd_idle(n))
		tu_sleep_us(1000);
	assert_int_equal(tu_vm(b.c, "kswapd_contended_stall"), 0);
	backoff_done(&b);
}

/*
 * blunt: a kswapd that is not the owner stalls while contention is fresh
 * (seen in the last 10 ms), 100 ms at most at a time; the owner does not.
 * The test plays the owner's part: it sets c->blunt_owner and the time of
 * the last contention, as a contended owner does (take_tree_lock).
 */
static void test_backoff_blunt(void **state)
{
	struct backoff b;
	uint64_t stalls, steal, t;

	(void)state;
	backoff_setup(&b, "blunt", 2);
	/* Fresh contention, node 0 the owner: node 1's kswapd stalls. */
	atomic_store(&b.c->blunt_owner, 0);
	atomic_store(&b.c->tree_contended_ns, b.now);
	stalls = node_vm(b.c, 1, "kswapd_contended_stall");
	steal = node_vm(b.c, 1, "pgsteal_kswapd");
	backoff_to_low(&b, 1);
	wait_vm_above(b.c, 1, "kswapd_contended_stall", stalls);
	tu_sleep_us(30000);
	assert_int_equal(node_vm(b.c, 1, "pgsteal_kswapd"), steal);
	/* Stale contention (10 ms and more): it goes on. */
	backoff_clock(&b, b.now + BLUNT_QUIET_NS);
	tu_sleep_us(5000);
	assert_int_equal(node_vm(b.c, 1, "pgsteal_kswapd"), steal);
	backoff_clock(&b, b.now + 1);
	wait_vm_above(b.c, 1, "pgsteal_kswapd", steal);
	while (!kswapd_idle(&b.c->nodes[1]))
		tu_sleep_us(1000);
	assert_int_equal(node_vm(b.c, 1, "kswapd_contended_stall"), stalls + 1);

	/* The owner itself never stalls, and gives the claim up when done. */
	backoff_refill(&b);
	atomic_store(&b.c->blunt_owner, 1);
	atomic_store(&b.c->tree_contended_ns, b.now);
	stalls = node_vm(b.c, 1, "kswapd_contended_stall");
	steal = node_vm(b.c, 1, "pgsteal_kswapd");
	backoff_to_low(&b, 1);
	wait_vm_above(b.c, 1, "pgsteal_kswapd", steal);
	while (!kswapd_idle(&b.c->nodes[1]))
		tu_sleep_us(1000);
	assert_int_equal(node_vm(b.c, 1, "kswapd_contended_stall"), stalls);
	assert_int_equal(atomic_load(&b.c->blunt_owner), -1);

	/* The cap: contention kept fresh, a stall lasts 100 ms, then ends. */
	backoff_refill(&b);
	atomic_store(&b.c->blunt_owner, 0);
	atomic_store(&b.c->tree_contended_ns, b.now);
	stalls = node_vm(b.c, 1, "kswapd_contended_stall");
	steal = node_vm(b.c, 1, "pgsteal_kswapd");
	backoff_to_low(&b, 1);
	wait_vm_above(b.c, 1, "kswapd_contended_stall", stalls);
	t = b.now;	/* the stall's start */
	for (uint64_t d = 5; d <= 100; d += 5) {
		backoff_clock(&b, t + d * 1000 * 1000);
		atomic_store(&b.c->tree_contended_ns, b.now);	/* still fresh */
		tu_sleep_us(2000);
		assert_int_equal(node_vm(b.c, 1, "pgsteal_kswapd"), steal);
	}
	backoff_clock(&b, t + BLUNT_CAP_NS + 1);
	atomic_store(&b.c->tree_contended_ns, b.now);
	wait_vm_above(b.c, 1, "pgsteal_kswapd", steal);
	/* A pass later it stalls again: the contention is still fresh. */
	wait_vm_above(b.c, 1, "kswapd_contended_stall", stalls + 1);
	atomic_store(&b.c->blunt_owner, -1);	/* the owner is done */
	while (!kswapd_idle(&b.c->nodes[1]))
		tu_sleep_us(1000);
	assert_int_equal(tu_vm(b.c, "reclaim_backoff_wait"), 0);
	backoff_done(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inactive_balance),
		cmocka_unit_test(test_policy_batch_remove),
		cmocka_unit_test(test_freed_frames_ascending),
		cmocka_unit_test(test_backoff_off),
		cmocka_unit_test(test_backoff_sleepy),
		cmocka_unit_test(test_backoff_blunt),
		cmocka_unit_test(test_kswapd_balances),
		cmocka_unit_test(test_boost_for_latency),
		cmocka_unit_test(test_give_way),
		cmocka_unit_test(test_safety_under_reclaim),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
