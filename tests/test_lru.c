/*
 * test_lru.c - the LRU lists and per-thread batches (lru.c).
 *
 *   two_step_activation  a first access marks a page referenced, a second
 *                        activates it; new pages wait in the thread's batch
 *                        and reach the list when it fills;
 *   deferred_activation  lru.deferred_activation (seed 004): a page read
 *                        twice while still in the batch is activated by
 *                        the drain, or (off) the activation is lost.
 *
 * No kswapd, one page per miss (POSIX_FADV_RANDOM): the lists hold what
 * the test's own reads put there.  Tests look inside the cache.
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

/*
 * One node, 1M: pages read once are inactive and referenced; the batch
 * puts them on the list PC_LRU_BATCH at a time; a second read of a page
 * on the inactive list activates it (pgactivate, active list).
 */
static void test_two_step_activation(void **state)
{
	const char *path = tu_path("twostep");
	struct pc_node *n;
	struct pc_page *p;
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, 64, 81);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	f = tu_open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < PC_LRU_BATCH - 1; i++)
		tu_read_page(f, i, 81);
	/* Still in the batch: nothing on the lists yet. */
	assert_int_equal(atomic_load(&n->lru[PC_LRU_INACTIVE].nr), 0);
	tu_read_page(f, PC_LRU_BATCH - 1, 81);	/* fills it: drained */
	assert_int_equal(atomic_load(&n->lru[PC_LRU_INACTIVE].nr), PC_LRU_BATCH);
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), 0);
	p = pc__find_get_page(f->mapping, 3);
	assert_non_null(p);
	assert_true(page_test(p, PG_lru));
	assert_false(page_test(p, PG_active));
	assert_true(page_test(p, PG_referenced));
	assert_int_equal(tu_vm(c, "pgactivate"), 0);
	/* The second access activates it: queued, then on the active list. */
	tu_read_page(f, 3, 81);
	pc__lru_drain(c, pc__tctx(c));
	assert_int_equal(tu_vm(c, "pgactivate"), 1);
	assert_true(page_test(p, PG_lru) && page_test(p, PG_active));
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), 1);
	assert_int_equal(atomic_load(&n->lru[PC_LRU_INACTIVE].nr), PC_LRU_BATCH - 1);
	pc__put_page(c, p);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * lru.deferred_activation (seed 004): a page read twice while it still
 * sits in the thread's add batch.  On, the drain puts it on the active
 * list; off, the activation is lost.
 */
static void deferred_run(bool on, bool *active, uint64_t *pgactivate)
{
	const char *path = tu_path("deferred");
	char cfg[160];
	struct pc_page *p;
	pc_cache *c;
	pc_file *f;

	tu_make_file(path, 8, 41);
	snprintf(cfg, sizeof(cfg), "memory=1M reclaim.kswapd=off "
		 "cache.stickiness=off lru.deferred_activation=%s",
		 on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	f = tu_open_random(c, path, O_RDONLY);
	tu_read_page(f, 3, 41);
	p = pc__find_get_page(f->mapping, 3);
	assert_non_null(p);
	assert_false(page_test(p, PG_lru));	/* still in the batch */
	tu_read_page(f, 5, 41);	/* (a read of the same page is one access) */
	tu_read_page(f, 3, 41);
	assert_false(page_test(p, PG_lru));
	pc__lru_drain(c, pc__tctx(c));
	assert_true(page_test(p, PG_lru));
	*active = page_test(p, PG_active);
	*pgactivate = tu_vm(c, "pgactivate");
	printf("  deferred_activation=%s: page read twice in its batch %s, "
	       "pgactivate %llu\n", on ? "on" : "off",
	       *active ? "active" : "inactive", (unsigned long long)*pgactivate);
	pc__put_page(c, p);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_deferred_activation(void **state)
{
	bool active;
	uint64_t n;

	(void)state;
	deferred_run(true, &active, &n);
	assert_true(active);
	assert_int_equal(n, 1);
	deferred_run(false, &active, &n);
	assert_false(active);
	assert_int_equal(n, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_step_activation),
		cmocka_unit_test(test_policy_deferred_activation),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
