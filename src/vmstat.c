/*
 * vmstat.c - counters named as /proc/vmstat names them.
 *
 * Event counters (pgscan_kswapd, pgpgin, ...) and the gauges that change on
 * hot paths (nr_dirty, nr_writeback) live in shards:
 *
 *     shards[shard * nr_nodes + node].v[item]      (_Atomic uint64_t)
 *
 * A thread adds to the shard its context picked (pc__tctx: round-robin over
 * PC_VMSTAT_SHARDS), so two threads rarely write one cache line; a reader
 * sums the shards.  Gauges are kept as wrapping sums of signed deltas, so a
 * shard may hold a "negative" value and only the sum is meaningful.  Adds
 * are relaxed atomics: no lock, and TSan-clean.
 *
 * The gauges that a lock already protects are read from their owners
 * instead: nr_free_pages (node free list), nr_budget_pages (the node's
 * share of the budget, node.c and resize.c), nr_inactive_file and
 * nr_active_file (node LRU), nr_shadow_entries (cache), the dirty
 * thresholds (throttle.c) and the wait-queue counters (pagewait.c).
 * io_uring_fallback is 1 when io=uring was asked and the sync backend
 * does the I/O: io_uring missing at create (cache.c), or the ring lost
 * (the backend's `lost`, io.h).
 *
 * The tree, bdi, lru and free locks count their acquisitions here
 * (pc__lock_counted): lock.c, a leaf, takes them and says how long it
 * waited.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "io.h"
#include "mem.h"
#include "node.h"
#include "pagewait.h"
#include "policy.h"
#include "share.h"
#include "tctx.h"

static const char *const names[] = {
#define PC_VM_NAME(n) #n,
	PC_VMSTAT_ITEMS(PC_VM_NAME)
#undef PC_VM_NAME
};

_Static_assert(sizeof(names) / sizeof(names[0]) == PC_NR_VMSTAT,
	       "vmstat names and items out of step");

static size_t shards_size(int nr_nodes)
{
	return (size_t)PC_VMSTAT_SHARDS * (size_t)nr_nodes *
	       sizeof(struct pc_vmstat_shard);
}

int pc__vmstat_init(struct pc_cache *c)
{
	struct pc_vmstat *s = &c->stat;

	s->nr_nodes = c->nr_nodes;
	s->shards = pc__cache_zalloc(c, shards_size(c->nr_nodes));
	return s->shards ? 0 : -ENOMEM;
}

void pc__vmstat_fini(struct pc_cache *c)
{
	pc__cache_free(c, c->stat.shards, shards_size(c->stat.nr_nodes));
	c->stat.shards = NULL;
}

void pc__count(struct pc_cache *c, int node, enum pc_vmstat_item i, int64_t d)
{
	pc__count_ctx(c, pc__tctx(c), node, i, d);
}

void pc__count_ctx(struct pc_cache *c, struct pc_tctx *t, int node,
		   enum pc_vmstat_item i, int64_t d)
{
	unsigned shard = t ? t->shard : 0;

	if (node < 0 || node >= c->nr_nodes)
		node = 0;
	atomic_fetch_add_explicit(
		&c->stat.shards[shard * (unsigned)c->nr_nodes + (unsigned)node].v[i],
		(uint64_t)d, memory_order_relaxed);
}

/* An acquisition of @l, and its wait if @waited. */
static void lock_count(struct pc_lock *l, bool waited, uint64_t waited_ns)
{
	struct pc_tctx *t = pc__tctx(l->cache);
	int node = t ? t->node : 0;

	pc__count_ctx(l->cache, t, node, l->stat, 1);
	if (waited) {
		pc__count_ctx(l->cache, t, node, l->stat + 1, 1);
		pc__count_ctx(l->cache, t, node, l->stat + 2,
			      (int64_t)waited_ns);
	}
}

void pc__lock_counted(struct pc_lock *l)
{
	uint64_t ns = 0;
	bool waited = pc__lock_timed(l, &ns);

	PC_ASSERT(l->cache && l->stat >= 0);
	lock_count(l, waited, ns);
}

bool pc__trylock_counted(struct pc_lock *l)
{
	PC_ASSERT(l->cache && l->stat >= 0);
	if (!pc__trylock(l))
		return false;
	lock_count(l, false, 0);
	return true;
}

static uint64_t shard_sum(struct pc_cache *c, int node, enum pc_vmstat_item i)
{
	uint64_t sum = 0;

	for (unsigned s = 0; s < PC_VMSTAT_SHARDS; s++)
		sum += atomic_load_explicit(
			&c->stat.shards[s * (unsigned)c->nr_nodes + (unsigned)node].v[i],
			memory_order_relaxed);
	return sum;
}

/* A gauge's value; wrapped negatives (racing deltas) read as 0. */
static uint64_t gauge(uint64_t v)
{
	return (int64_t)v < 0 ? 0 : v;
}

uint64_t pc__vmstat_node(struct pc_cache *c, int node, enum pc_vmstat_item i)
{
	struct pc_node *n = &c->nodes[node];

	switch (i) {
	case PC_VM_nr_free_pages:
		return atomic_load(&n->nr_free);
	case PC_VM_nr_inactive_file:
		if (c->cfg.reclaim_policy == PC_POLICY_MGLRU)
			return pc__mglru_nr(n, false);
		return atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	case PC_VM_nr_active_file:
		if (c->cfg.reclaim_policy == PC_POLICY_MGLRU)
			return pc__mglru_nr(n, true);
		return atomic_load(&n->lru[PC_LRU_ACTIVE].nr);
	case PC_VM_nr_file_pages:	/* in use: in the share, or retiring,
					   and not on a thread's list */
		return gauge(n->nr_frames + atomic_load(&n->nr_retiring) -
			     atomic_load(&n->nr_free) -
			     atomic_load(&n->nr_pcp));
	case PC_VM_nr_budget_pages:
		return n->nr_frames;
	case PC_VM_nr_dirty:
	case PC_VM_nr_writeback:
		return gauge(shard_sum(c, node, i));
	case PC_VM_nr_shadow_entries:
		return node == 0 ? atomic_load(&c->nr_shadows) : 0;
	case PC_VM_nr_dirty_threshold:
		return node == 0 ? atomic_load(&c->dirty_limit) : 0;
	case PC_VM_nr_dirty_background_threshold:
		return node == 0 ? atomic_load(&c->dirty_bg_limit) : 0;
	case PC_VM_waitqueue_lookups:
		return node == 0 ? pc__pagewait_lookups(&c->wait) : 0;
	case PC_VM_waitqueue_wakeups:
		return node == 0 ? pc__pagewait_wakeups(&c->wait) : 0;
	case PC_VM_shared_attaches:
		return node == 0 ? pc__share_attaches(c) : 0;
	case PC_VM_io_uring_fallback:	/* 1: io=uring asked, sync doing it */
		return node == 0 && (c->io_fallback || pc__io_lost(c));
	default:
		return shard_sum(c, node, i);
	}
}

uint64_t pc__vmstat_sum(struct pc_cache *c, enum pc_vmstat_item i)
{
	uint64_t sum = 0;

	for (int n = 0; n < c->nr_nodes; n++)
		sum += pc__vmstat_node(c, n, i);
	if (i == PC_VM_nr_dirty || i == PC_VM_nr_writeback)
		sum = gauge(sum);
	return sum;
}

PC_EXPORT const char *pc_vmstat_name(unsigned i)
{
	return i < PC_NR_VMSTAT ? names[i] : NULL;
}

PC_EXPORT int pc_vmstat(pc_cache *c, const char *name, uint64_t *value)
{
	int node = -1;

	if (!c || !name || !value)
		return -EINVAL;
	if (strncmp(name, "node", 4) == 0) {
		char *end;
		long n = strtol(name + 4, &end, 10);

		if (end == name + 4 || *end != '.' || n < 0 || n >= c->nr_nodes)
			return -ENOENT;
		node = (int)n;
		name = end + 1;
	}
	for (unsigned i = 0; i < PC_NR_VMSTAT; i++) {
		if (strcmp(names[i], name) != 0)
			continue;
		*value = node < 0 ? pc__vmstat_sum(c, i)
				  : pc__vmstat_node(c, node, i);
		return 0;
	}
	return -ENOENT;
}
