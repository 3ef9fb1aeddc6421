/*
 * test_policy.c - reclaim.policy (policy.h, sieve.c, s3fifo.c, mglru.c): each
 * policy's choices pinned by counters and by which pages stay resident,
 * on constructed access patterns in a small cache (1M: 256 frames, one
 * node, reclaim.kswapd=off so that only the test's own thread reclaims,
 * in the order of its reads; POSIX_FADV_RANDOM: one page per miss).
 *
 *   config             the key takes classic, sieve and s3fifo and
 *                      refuses anything else, booleans too, with -EINVAL
 *   idle_hot_set       a hot set read three times, then a one-pass scan
 *                      of four budgets: classic (active list), sieve (the
 *                      hand passes it once and stays among the scan's
 *                      pages), s3fifo (promoted to main) and mglru (to
 *                      the second oldest generation) keep every hot page
 *   live_hot_set       the same scan with the hot set read on beside it
 *                      (one hot page every two scan pages): no hot page
 *                      misses under any policy, sieve included
 *   sieve_hand         a visited page survives the hand's pass, its
 *                      neighbours going, and a stream read once never
 *                      brings the hand back to it; visited pages after it
 *                      do, and it goes
 *   s3fifo_ghost       a page evicted from the small queue and read again
 *                      soon is a ghost hit and starts on the main queue;
 *                      one read again after more than the ghost holds is
 *                      not
 *   mglru_aging        pages read twice roll mglru's generations (min_seq,
 *                      max_seq), and an idle hot set ages out
 *   reclaim_works      under each policy, with kswapd, private and shared
 *                      (two processes reading at once): reads of twice
 *                      the budget and writes of twice the budget come
 *                      back right and reclaim happened
 *
 * Each case prints its counters; nothing is timed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "node.h"
#include "policy.h"
#include "tctx.h"
#include "vmscan.h"
#include "util.h"

#ifdef PC_TSAN
#define IO " io=sync"
#else
#define IO ""
#endif

#define HOT 48
#define SCAN 1024

static const char *const policy_names[] = {
	"classic", "sieve", "s3fifo", "mglru" };

static pc_cache *small_cache(const char *policy)
{
	char cfg[256];

	snprintf(cfg, sizeof(cfg), "memory=1M nodes=1 reclaim.kswapd=off "
		 "cache.stickiness=off reclaim.policy=%s", policy);
	return tu_cache(cfg);
}

static bool resident(pc_file *f, uint64_t index)
{
	void *item = pc__tree_lookup(&f->mapping->tree, index);

	return item && !pc_tree_is_value(item);
}

static bool has_shadow(pc_file *f, uint64_t index)
{
	void *item = pc__tree_lookup(&f->mapping->tree, index);

	return item && pc_tree_is_value(item);
}

/* ------------------------------------------------------------------ */
/* The key                                                              */

static void test_config(void **state)
{
	struct pc_config cfg;
	pc_cache *c;

	(void)state;
	assert_int_equal(pc__config_parse(&cfg, NULL), 0);
	assert_int_equal(cfg.reclaim_policy, PC_POLICY_CLASSIC);
	for (int i = 0; i < PC_NR_POLICIES; i++) {
		char s[64];

		snprintf(s, sizeof(s), "reclaim.policy=%s", policy_names[i]);
		assert_int_equal(pc__config_parse(&cfg, s), 0);
		assert_int_equal(cfg.reclaim_policy, i);
	}
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy=on"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy=off"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy=1"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy=lru"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy="), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "reclaim.policy=SIEVE"), -EINVAL);
	assert_int_equal(pc_config_check("reclaim.policy=lirs"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "reclaim.policy=clock"), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* A hot set and a scan                                                 */

struct scan_result {
	unsigned hot_misses;	/* hot reads during the scan that missed */
	unsigned hot_resident;	/* hot pages resident after it */
	uint64_t steal, activate, promote, reinsert, cleared, admit;
	uint64_t gen_promote, min_seq, max_seq;	/* mglru */
};

/*
 * HOT pages read three times each (three rounds), then SCAN new pages
 * read once each (@twice: twice each, at once); with @live, one hot page
 * (round robin) is read after every second scan page.
 */
static void scan_run_twice(const char *policy, bool live, bool twice,
			   struct scan_result *r)
{
	const char *hot = tu_path("pol-hot"), *scan = tu_path("pol-scan");
	uint64_t steal0, act0, pro0, rei0, clr0, adm0, gp0, min0, max0;
	pc_cache *c = small_cache(policy);
	pc_file *fh, *fs, *fs2;
	unsigned h = 0;

	memset(r, 0, sizeof(*r));
	tu_make_file(hot, HOT, 11);
	tu_make_file(scan, SCAN, 12);
	fh = tu_open_random(c, hot, O_RDONLY);
	fs = tu_open_random(c, scan, O_RDONLY);
	fs2 = tu_open_random(c, scan, O_RDONLY);	/* see test_sieve_hand */
	for (int round = 0; round < 3; round++)
		for (uint64_t i = 0; i < HOT; i++)
			tu_read_page(fh, i, 11);
	pc__lru_drain(c, pc__tctx(c));
	steal0 = tu_vm(c, "pgsteal_direct");
	act0 = tu_vm(c, "pgactivate");
	pro0 = tu_vm(c, "s3fifo_promote");
	rei0 = tu_vm(c, "s3fifo_main_reinsert");
	clr0 = tu_vm(c, "sieve_hand_cleared");
	adm0 = tu_vm(c, "s3fifo_ghost_admit");
	gp0 = tu_vm(c, "mglru_promote");
	min0 = tu_vm(c, "mglru_min_seq");
	max0 = tu_vm(c, "mglru_max_seq");
	for (uint64_t s = 0; s < SCAN; s++) {
		tu_read_page(fs, s, 12);
		if (twice)
			tu_read_page(fs2, s, 12);
		if (live && s % 2) {
			r->hot_misses += !resident(fh, h);
			tu_read_page(fh, h, 11);
			h = (h + 1) % HOT;
		}
	}
	for (uint64_t i = 0; i < HOT; i++)
		r->hot_resident += resident(fh, i);
	r->steal = tu_vm(c, "pgsteal_direct") - steal0;
	r->activate = tu_vm(c, "pgactivate") - act0;
	r->promote = tu_vm(c, "s3fifo_promote") - pro0;
	r->reinsert = tu_vm(c, "s3fifo_main_reinsert") - rei0;
	r->cleared = tu_vm(c, "sieve_hand_cleared") - clr0;
	r->admit = tu_vm(c, "s3fifo_ghost_admit") - adm0;
	r->gen_promote = tu_vm(c, "mglru_promote") - gp0;
	r->min_seq = tu_vm(c, "mglru_min_seq") - min0;
	r->max_seq = tu_vm(c, "mglru_max_seq") - max0;
	printf("  %-7s %s: hot misses %u, hot resident %u/%d, pgsteal %llu, "
	       "pgactivate %llu, promote %llu, reinsert %llu, hand cleared "
	       "%llu, ghost admit %llu, gen promote %llu, min_seq +%llu, "
	       "max_seq +%llu\n", policy,
	       twice ? "twice" : live ? "live" : "idle",
	       r->hot_misses, r->hot_resident, HOT,
	       (unsigned long long)r->steal, (unsigned long long)r->activate,
	       (unsigned long long)r->promote, (unsigned long long)r->reinsert,
	       (unsigned long long)r->cleared, (unsigned long long)r->admit,
	       (unsigned long long)r->gen_promote,
	       (unsigned long long)r->min_seq, (unsigned long long)r->max_seq);
	pc_close(fh);
	pc_close(fs);
	pc_close(fs2);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(hot);
	unlink(scan);
}

static void scan_run(const char *policy, bool live, struct scan_result *r)
{
	scan_run_twice(policy, live, false, r);
}

static void test_idle_hot_set(void **state)
{
	struct scan_result r;

	(void)state;
	/* classic: the hot set is on the active list, the scan inactive. */
	scan_run("classic", false, &r);
	assert_int_equal(r.hot_resident, HOT);
	assert_true(r.steal >= SCAN - 256);
	/* What the tree before reclaim.policy (bdc1985) counts here too. */
	assert_int_equal(r.steal, 832);
	assert_int_equal(r.activate, 0);
	assert_int_equal(r.promote + r.reinsert + r.cleared + r.admit, 0);
	/* sieve: the hand clears the hot set's bits once and stays among
	 * the scan's pages, which it takes as they come (they are as many
	 * between it and the head as ever): it never comes round. */
	scan_run("sieve", false, &r);
	assert_int_equal(r.hot_resident, HOT);
	assert_true(r.steal >= SCAN - 256);
	assert_int_equal(r.cleared, HOT);
	assert_int_equal(r.promote + r.reinsert + r.admit, 0);
	/* s3fifo: the hot set leaves the small queue for main, the scan's
	 * pages (no hit after their read) are the small queue's victims. */
	scan_run("s3fifo", false, &r);
	assert_int_equal(r.hot_resident, HOT);
	assert_true(r.steal >= SCAN - 256);
	assert_int_equal(r.promote, HOT);
	assert_int_equal(r.reinsert, 0);
	assert_int_equal(r.cleared, 0);
	/* Nothing refaulted: the scan's pages are read once. */
	assert_int_equal(r.admit, 0);
	/* mglru: the hot set goes to the second oldest generation; the
	 * scan's pages enter the oldest, which never empties: no aging. */
	scan_run("mglru", false, &r);
	assert_int_equal(r.hot_resident, HOT);
	assert_true(r.steal >= SCAN - 256);
	assert_int_equal(r.gen_promote, HOT);
	assert_int_equal(r.min_seq + r.max_seq, 0);
	assert_int_equal(r.promote + r.reinsert + r.cleared + r.admit, 0);
}

static void test_live_hot_set(void **state)
{
	struct scan_result r;

	(void)state;
	for (int i = 0; i < PC_NR_POLICIES; i++) {
		scan_run(policy_names[i], true, &r);
		assert_int_equal(r.hot_misses, 0);
		assert_int_equal(r.hot_resident, HOT);
		assert_true(r.steal >= SCAN - 256);
		if (i == PC_POLICY_SIEVE) {
			/* As idle: the hand passed the hot set once. */
			assert_int_equal(r.cleared, HOT);
			assert_int_equal(r.promote + r.reinsert + r.admit, 0);
		} else if (i == PC_POLICY_S3FIFO) {
			assert_int_equal(r.promote, HOT);
			assert_int_equal(r.cleared, 0);
		} else if (i == PC_POLICY_MGLRU) {
			assert_int_equal(r.gen_promote, HOT);
			assert_int_equal(r.promote + r.cleared + r.admit, 0);
		} else {
			assert_int_equal(r.promote + r.reinsert + r.cleared, 0);
			assert_int_equal(r.gen_promote, 0);
		}
	}
}

/*
 * mglru's aging: the scan's pages read twice each (a hit: tier 1) are
 * promoted when their generation is the oldest, so it empties and is
 * retired (min_seq), a new youngest made when two are left (max_seq);
 * the idle hot set, promoted once and not read since, is the oldest
 * generation's after one retirement, and goes.
 */
static void test_mglru_aging(void **state)
{
	struct scan_result r;

	(void)state;
	scan_run_twice("mglru", false, true, &r);
	assert_int_equal(r.hot_resident, 0);
	assert_true(r.min_seq >= 3);
	assert_true(r.max_seq >= 1);
	assert_true(r.gen_promote >= SCAN - 256);
}

/* ------------------------------------------------------------------ */
/* SIEVE: a visited page survives one pass of the hand                  */

#define SV_X 10		/* the visited page, 11th from the queue's tail */

/*
 * 100 pages read once, page X read again (visited); then new pages read
 * once each until reclaim takes X's neighbours: the hand cleared X and
 * left it.  A stream of pages read once never brings the hand round (it
 * stays at the oldest of them, as far from the head as they are many), so
 * then new pages are read twice each (visited): the hand clears them all
 * on its way to the head, comes round to the tail, where X is, unvisited
 * now, and takes it.
 */
static void test_sieve_hand(void **state)
{
	const char *path = tu_path("pol-sieve");
	uint64_t clr0, clr1, s, passed_at;
	pc_cache *c = small_cache("sieve");
	pc_file *f, *f2;

	(void)state;
	tu_make_file(path, 2048, 21);
	f = tu_open_random(c, path, O_RDONLY);
	/* A second open: a read of the page another ended in is a hit (one
	 * file's re-read of the page it ended in is not, as the kernel's) */
	f2 = tu_open_random(c, path, O_RDONLY);
	for (s = 0; s < 100; s++)
		tu_read_page(f, s, 21);
	tu_read_page(f, SV_X, 21);	/* a hit: visited */
	pc__lru_drain(c, pc__tctx(c));
	assert_true(resident(f, 0));	/* no reclaim yet */
	clr0 = tu_vm(c, "sieve_hand_cleared");
	/* Read on until the hand has passed X: its newer neighbour gone. */
	while (resident(f, SV_X + 1)) {
		assert_true(s < 2048);
		tu_read_page(f, s++, 21);
	}
	passed_at = s;
	assert_true(resident(f, SV_X));
	for (uint64_t i = 0; i <= SV_X + 1; i++)
		if (i != SV_X)
			assert_true(has_shadow(f, i));
	clr1 = tu_vm(c, "sieve_hand_cleared");
	assert_int_equal(clr1 - clr0, 1);	/* X's bit, and only X's */
	assert_int_equal(atomic_load(&c->nodes[0].lru[PC_LRU_ACTIVE].nr), 0);
	/* More pages read once: the hand stays behind X's newer pages. */
	for (unsigned k = 0; k < 256; k++)
		tu_read_page(f, s++, 21);
	assert_true(resident(f, SV_X));
	assert_int_equal(tu_vm(c, "sieve_hand_cleared"), clr1);
	/* Pages read twice: the hand comes round and takes X. */
	while (resident(f, SV_X)) {
		assert_true(s < 2048);
		tu_read_page(f, s, 21);
		tu_read_page(f2, s++, 21);
	}
	printf("  hand passed X after %llu reads, took it %llu pages later, "
	       "%llu visited bits cleared meanwhile\n",
	       (unsigned long long)passed_at,
	       (unsigned long long)(s - passed_at),
	       (unsigned long long)(tu_vm(c, "sieve_hand_cleared") - clr1));
	assert_true(tu_vm(c, "sieve_hand_cleared") - clr1 >= 100);
	pc_close(f);
	pc_close(f2);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/* ------------------------------------------------------------------ */
/* S3-FIFO: a page in the ghost is admitted to main                     */

/* Read page 1 of a target, stream until it is evicted and @gap more
 * evictions from the small queue, read it again: admitted to main? */
static bool ghost_run(uint64_t gap, bool *on_main)
{
	const char *tgt = tu_path("pol-ghost"), *str = tu_path("pol-stream");
	uint64_t adm0, act0, ref0, evicted_at = 0, s = 0;
	bool evicted = false;
	pc_cache *c = small_cache("s3fifo");
	struct pc_node *n = &c->nodes[0];
	struct pc_page *p;
	pc_file *ft, *fs;
	bool admitted;

	tu_make_file(tgt, 4, 31);
	tu_make_file(str, 2048, 32);
	ft = tu_open_random(c, tgt, O_RDONLY);
	fs = tu_open_random(c, str, O_RDONLY);
	tu_read_page(ft, 1, 31);
	while (!evicted) {
		void *item;

		assert_true(s < 2048);
		tu_read_page(fs, s++, 32);
		item = pc__tree_lookup(&ft->mapping->tree, 1);
		assert_non_null(item);
		if ((evicted = pc_tree_is_value(item)))	/* its clock: may be 0 */
			evicted_at = pc_tree_value(item) >> 7;
	}
	while (atomic_load(&n->nonresident_age) - evicted_at < gap) {
		assert_true(s < 2048);
		tu_read_page(fs, s++, 32);
	}
	adm0 = tu_vm(c, "s3fifo_ghost_admit");
	act0 = tu_vm(c, "workingset_activate_file");
	ref0 = tu_vm(c, "workingset_refault_file");
	tu_read_page(ft, 1, 31);
	assert_int_equal(tu_vm(c, "workingset_refault_file"), ref0 + 1);
	admitted = tu_vm(c, "s3fifo_ghost_admit") == adm0 + 1;
	assert_int_equal(tu_vm(c, "workingset_activate_file"),
			 act0 + (admitted ? 1 : 0));
	pc__lru_drain(c, pc__tctx(c));
	p = pc__find_get_page(ft->mapping, 1);
	assert_non_null(p);
	*on_main = page_test(p, PG_active) && page_test(p, PG_lru);
	pc__put_page(c, p);
	printf("  distance >= %llu: %s\n", (unsigned long long)gap,
	       admitted ? "ghost hit, main" : "not a ghost, small");
	pc_close(ft);
	pc_close(fs);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(tgt);
	unlink(str);
	return admitted;
}

static void test_s3fifo_ghost(void **state)
{
	bool on_main;

	(void)state;
	assert_true(ghost_run(0, &on_main));
	assert_true(on_main);
	/* The ghost holds 90% of 256 frames' evictions: 230. */
	assert_false(ghost_run(300, &on_main));
	assert_false(on_main);
}

/* ------------------------------------------------------------------ */
/* kswapd, direct reclaim, dirty pages: under each policy               */

struct readers {
	pc_cache *c;
	const char *path;
	uint64_t pages, seed;
};

/* 4 x pages random reads of a tu_make_file(41) file, checked. */
static void random_reads(unsigned i, void *arg)
{
	struct readers *x = arg;
	uint64_t st = x->seed + i;
	pc_file *f = tu_open_random(x->c, x->path, O_RDONLY);

	for (unsigned k = 0; k < 4 * x->pages; k++)
		tu_read_page(f, tu_rand(&st) % x->pages, 41);
	pc_close(f);
}

/*
 * Twice the budget written and read back, then read at random, with
 * kswapd; @shared: a shared cache, whose reads are two processes' at
 * once (the hand, the generations, the policy words in its region).
 */
static void reclaim_run(const char *policy, bool shared)
{
	const char *rpath = tu_path("pol-read"), *wpath = tu_path("pol-write");
	const uint64_t pages = 512;	/* twice the budget */
	unsigned char buf[PC_PAGE_SIZE];
	struct readers x = { NULL, rpath, pages, tu_seed("reclaim_works") };
	char cfg[128];
	pc_cache *c;
	pc_file *f;

	snprintf(cfg, sizeof(cfg), "memory=1M nodes=1 reclaim.policy=%s%s",
		 policy, shared ? " shared=on" IO : "");
	c = x.c = tu_cache(cfg);
	tu_make_file(rpath, pages, 41);
	assert_int_equal(pc_open(c, wpath, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 &f), 0);
	for (uint64_t i = 0; i < pages; i++) {
		tu_pattern(buf, sizeof(buf), 42, i * PC_PAGE_SIZE);
		assert_int_equal(pc_pwrite(f, buf, sizeof(buf),
					   (off_t)(i * PC_PAGE_SIZE)),
				 (ssize_t)sizeof(buf));
	}
	assert_int_equal(pc_fsync(f), 0);
	for (uint64_t i = 0; i < pages; i++)
		tu_read_page(f, i, 42);
	/* The writes first: a shared cache's first use of a device made in a
	 * child that exits left a later writer here throttled with no
	 * flusher (seen under classic; not this test's subject). */
	if (shared)
		tu_in_children(2, random_reads, &x);
	else
		random_reads(0, &x);
	printf("  %-7s%s pgsteal kswapd %llu direct %llu\n", policy,
	       shared ? " shared" : "",
	       (unsigned long long)tu_vm(c, "pgsteal_kswapd"),
	       (unsigned long long)tu_vm(c, "pgsteal_direct"));
	assert_true(tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct") >=
		    pages);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(rpath);
	unlink(wpath);
}

static void test_reclaim_works(void **state)
{
	(void)state;
	for (int i = 0; i < PC_NR_POLICIES; i++) {
		reclaim_run(policy_names[i], false);
		reclaim_run(policy_names[i], true);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_idle_hot_set),
		cmocka_unit_test(test_live_hot_set),
		cmocka_unit_test(test_sieve_hand),
		cmocka_unit_test(test_s3fifo_ghost),
		cmocka_unit_test(test_mglru_aging),
		cmocka_unit_test(test_reclaim_works),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
