/*
 * test_node.c - memory nodes (node.c): frames, watermarks, allocation
 * order and the NUMA placement policies, and the bounded wait when every
 * frame is pinned.
 *
 *   nodes           nodes=N splits the budget; watermarks in order; a
 *                   thread's node is allocated first (numa_hit, _local);
 *   node_reclaim    numa.node_reclaim: the local node is reclaimed before
 *                   another is used;
 *   mapping_sticky  numa.mapping_sticky: a file's pages follow its first;
 *   dirty_spread    numa.dirty_spread: pages to be dirtied leave a node
 *                   at its share of the dirty limit;
 *   all_pinned      every frame pinned: -ENOMEM within the bounded wait.
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
#include "node.h"
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
	uint64_t frames, n = 0, t0, waited;
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
	t0 = pc__now_ns();
	r = pc_pread(f, buf, PG, (off_t)((frames + 4) * PG));
	waited = pc__now_ns() - t0;
	assert_int_equal(r, -ENOMEM);
	assert_true(tu_vm(c, "allocfail") >= 2);
	printf("  %s: %llu frames pinned, -ENOMEM after %.0f ms\n", cfgs,
	       (unsigned long long)frames, (double)waited / 1e6);
	/* Bounded: 250 ms without progress (generous margin for slow runs). */
	assert_true(waited < 3000ull * 1000 * 1000);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_all_pinned),
		cmocka_unit_test(test_policy_node_reclaim),
		cmocka_unit_test(test_policy_mapping_sticky),
		cmocka_unit_test(test_policy_dirty_spread),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
