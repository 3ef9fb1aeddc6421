/*
 * test_workingset.c - refault detection (workingset.c): the eviction
 * clock, shadow entries and the refault distance.
 *
 *   refault_distance  a refault within the workingset distance activates
 *                     the page, one beyond it does not;
 *   shadow_bound      shadow entries stay bounded, and the recent ones are
 *                     kept (stale ones trimmed).
 *
 * The cases run with reclaim.kswapd=off where they need the LRU order to
 * be the order of the test's reads (only direct reclaim, in the test's own
 * thread) and POSIX_FADV_RANDOM (one page per miss).  Tests look inside
 * the cache (internal.h).
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
#include "node.h"
#include "tctx.h"
#include "util.h"
#include "vmscan.h"

#define PG 4096

/* ------------------------------------------------------------------ */
/* Refault distance                                                     */

/*
 * Budget 1M (256 frames), one node, no kswapd, one page per miss.  A hot
 * file of ACT pages read twice sits on the active list.  Page X of a
 * third file is read once, then a stream of new pages pushes it out; when
 * the node's eviction clock has moved @distance past X's eviction, X is
 * read again.
 */
#define ACT 64

static void refault_run(uint64_t distance, bool *activated, bool *on_active)
{
	const char *hot = tu_path("ws-hot"), *tgt = tu_path("ws-target"),
		   *str = tu_path("ws-stream");
	uint64_t act0, ref0, evicted_at = 0;
	struct pc_node *n;
	struct pc_page *p;
	pc_cache *c;
	pc_file *fh, *ft, *fs;
	uint64_t s = 0;

	tu_make_file(hot, ACT, 1);
	tu_make_file(tgt, 4, 2);
	tu_make_file(str, 1024, 3);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	fh = tu_open_random(c, hot, O_RDONLY);
	ft = tu_open_random(c, tgt, O_RDONLY);
	fs = tu_open_random(c, str, O_RDONLY);
	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < ACT; i++)
			tu_read_page(fh, i, 1);
	pc__lru_drain(c, pc__tctx(c));
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), ACT);
	tu_read_page(ft, 1, 2);
	/* Stream until X is gone; remember the clock of its eviction. */
	while (!evicted_at) {
		void *item;

		assert_true(s < 1024);
		tu_read_page(fs, s++, 3);
		item = pc__tree_lookup(&ft->mapping->tree, 1);
		if (item && pc_tree_is_value(item))
			evicted_at = pc_tree_value(item) >> 7;
		else
			assert_non_null(item);
	}
	while ((atomic_load(&n->nonresident_age) - evicted_at) < distance) {
		assert_true(s < 1024);
		tu_read_page(fs, s++, 3);
	}
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), ACT);
	act0 = tu_vm(c, "workingset_activate_file");
	ref0 = tu_vm(c, "workingset_refault_file");
	tu_read_page(ft, 1, 2);
	assert_int_equal(tu_vm(c, "workingset_refault_file"), ref0 + 1);
	*activated = tu_vm(c, "workingset_activate_file") == act0 + 1;
	pc__lru_drain(c, pc__tctx(c));
	p = pc__find_get_page(ft->mapping, 1);
	assert_non_null(p);
	*on_active = page_test(p, PG_active) && page_test(p, PG_lru);
	pc__put_page(c, p);
	printf("  distance >= %llu (active list %d): %s\n",
	       (unsigned long long)distance, ACT,
	       *activated ? "activated" : "inactive");
	pc_close(fh);
	pc_close(ft);
	pc_close(fs);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_refault_distance(void **state)
{
	bool activated, on_active;

	(void)state;
	/* Direct reclaim evicts up to 32 at a time: distance is at most +32. */
	refault_run(ACT / 2 - PC_RECLAIM_BATCH / 2, &activated, &on_active);
	assert_true(activated);
	assert_true(on_active);
	refault_run(2 * ACT, &activated, &on_active);
	assert_false(activated);
	assert_false(on_active);
}

/*
 * Shadow entries stay bounded, and the bound does not keep the old ones
 * at the expense of the new: a stream of 50 budgets through 64 frames
 * evicts far more pages than c->max_shadows; kswapd trims the stale
 * shadows (workingset_nodereclaim), so the pages evicted last still leave
 * a shadow and their refaults are seen.
 */
static void test_shadow_bound(void **state)
{
	const char *path = tu_path("shadows");
	const uint64_t pages = 3200;
	uint64_t over = 0, last_evicted = 0, refaults;
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, pages, 71);
	assert_int_equal(pc_cache_create(&c, "memory=256K nodes=1 "
					 "cache.stickiness=off"), 0);
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < pages - 100; i++) {
		tu_read_page(f, i, 71);
		over += tu_vm(c, "nr_shadow_entries") > c->max_shadows;
	}
	assert_int_equal(over, 0);
	/* kswapd trimmed on its own. */
	for (int i = 0; i < 10000 && !tu_vm(c, "workingset_nodereclaim"); i++)
		tu_sleep_us(1000);
	assert_true(tu_vm(c, "workingset_nodereclaim") > 0);
	/* Trim now (as kswapd does), then evict some more: they leave shadows. */
	pc__workingset_trim(c);
	assert_true(tu_vm(c, "nr_shadow_entries") <= c->max_shadows / 4 * 3);
	for (uint64_t i = pages - 100; i < pages; i++) {
		void *item;

		tu_read_page(f, i, 71);
		for (uint64_t k = pages - 100; k < i; k++) {
			item = pc__tree_lookup(&f->mapping->tree, k);
			if (item && pc_tree_is_value(item) && k > last_evicted)
				last_evicted = k;
		}
	}
	printf("  %llu pages through 64 frames: %llu shadows (bound %llu), "
	       "%llu trimmed, page %llu evicted late has one\n",
	       (unsigned long long)pages,
	       (unsigned long long)tu_vm(c, "nr_shadow_entries"),
	       (unsigned long long)c->max_shadows,
	       (unsigned long long)tu_vm(c, "workingset_nodereclaim"),
	       (unsigned long long)last_evicted);
	assert_true(last_evicted >= pages - 100);
	refaults = tu_vm(c, "workingset_refault_file");
	tu_read_page(f, last_evicted, 71);
	assert_int_equal(tu_vm(c, "workingset_refault_file"), refaults + 1);
	assert_true(tu_vm(c, "nr_shadow_entries") <= c->max_shadows);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refault_distance),
		cmocka_unit_test(test_shadow_bound),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
