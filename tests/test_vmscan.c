/*
 * test_vmscan.c - reclaim (vmscan.c): kswapd, direct reclaim, shrinking
 * the lists, and the reclaim policies.
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
 *   policies    reclaim.batch_remove and reclaim.contention_backoff move
 *               the counters they must.
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
	assert_int_equal(pc__io_fault_add(c->io, &slow), 0);
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
 * reclaim.contention_backoff: the test holds a mapping's tree lock while
 * both nodes' kswapds try to reclaim that mapping's pages (the cache is
 * full of them, and the test takes free frames down to min with
 * allocations that never reclaim), then keeps the lock busy in 1 ms
 * slices while they work.
 */
struct backoff_counts {
	uint64_t contended, waits, stalls;
};

static struct backoff_counts contention_run(const char *backoff)
{
	const char *path = tu_path("contended");
	const uint64_t frames = 2048;	/* 8M */
	struct pc_page *taken[2048];
	unsigned ntaken = 0;
	struct backoff_counts r;
	char cfg[200];
	pc_cache *c;
	pc_file *f;
	struct pc_lock *tl;

	tu_make_file(path, frames + frames / 2, 21);
	snprintf(cfg, sizeof(cfg), "memory=8M nodes=2 numa.node_reclaim=off "
		 "cache.stickiness=off reclaim.watermark_scale=3000 "
		 "reclaim.contention_backoff=%s", backoff);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < frames + frames / 2; i++) {
		/* Both nodes get their share of the file. */
		assert_int_equal(pc_thread_set_node(c, (int)(i % 2)), 0);
		tu_read_page(f, i, 21);
	}
	pc__lru_drain(c, pc__tctx(c));
	/* Let both kswapds finish balancing. */
	for (int i = 0; i < 5000 && (atomic_load(&c->nodes[0].kswapd_active) ||
				     atomic_load(&c->nodes[1].kswapd_active)); i++)
		tu_sleep_us(1000);
	tl = &f->mapping->tree_lock;
	pc__lock(tl);
	while (ntaken < 2048) {
		struct pc_page *p = pc__alloc_page(c, NULL, PC_GFP_NORETRY);

		if (!p)
			break;
		taken[ntaken++] = p;
	}
	/* Both kswapds are awake and stuck on our lock (or done). */
	for (int i = 0; i < 5000 && tu_vm(c, "reclaim_tree_contended") < 2; i++)
		tu_sleep_us(1000);
	pc__unlock(tl);
	/* Keep the lock contended while they balance. */
	for (int i = 0; i < 3000; i++) {
		if (!atomic_load(&c->nodes[0].kswapd_active) &&
		    !atomic_load(&c->nodes[1].kswapd_active))
			break;
		if (!strcmp(backoff, "blunt") && tu_vm(c, "kswapd_contended_stall"))
			break;
		pc__lock(tl);
		tu_sleep_us(1000);
		pc__unlock(tl);
		tu_sleep_us(200);
	}
	r.contended = tu_vm(c, "reclaim_tree_contended");
	r.waits = tu_vm(c, "reclaim_backoff_wait");
	r.stalls = tu_vm(c, "kswapd_contended_stall");
	printf("  contention_backoff=%s: reclaim_tree_contended %llu "
	       "reclaim_backoff_wait %llu kswapd_contended_stall %llu\n", backoff,
	       (unsigned long long)r.contended, (unsigned long long)r.waits,
	       (unsigned long long)r.stalls);
	while (ntaken)
		pc__put_page(c, taken[--ntaken]);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
	return r;
}

static void test_policy_contention_backoff(void **state)
{
	struct backoff_counts r;

	(void)state;
	r = contention_run("off");
	assert_true(r.contended >= 1);
	assert_int_equal(r.waits, 0);
	assert_int_equal(r.stalls, 0);
	r = contention_run("sleepy");
	assert_true(r.contended >= 1);
	assert_true(r.waits >= 1);
	assert_int_equal(r.stalls, 0);
	r = contention_run("blunt");
	assert_true(r.contended >= 2);
	assert_int_equal(r.waits, 0);
	assert_true(r.stalls >= 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inactive_balance),
		cmocka_unit_test(test_policy_batch_remove),
		cmocka_unit_test(test_policy_contention_backoff),
		cmocka_unit_test(test_kswapd_balances),
		cmocka_unit_test(test_boost_for_latency),
		cmocka_unit_test(test_give_way),
		cmocka_unit_test(test_safety_under_reclaim),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
