/*
 * workingset.c - the eviction clock, shadow entries, refault decisions.
 *
 * As in mm/workingset.c: each node keeps a clock, nonresident_age, that
 * ticks once per eviction and once per activation.  An evicted page leaves
 * a shadow entry in its mapping's slot recording the node and the clock at
 * eviction (and whether the page was part of the working set):
 *
 *   shadow value = age << 7 | node << 1 | workingset     (pc_tree_mkvalue)
 *
 * When the page faults back in, the refault distance is the clock now minus
 * the clock at eviction: how many pages the inactive list would have needed
 * to hold for the page to stay resident.  If that distance is within the
 * active list's size, the page would have stayed had the active list given
 * up those pages, so it starts on the active list (workingset_activate);
 * if it was in the working set before, it is a restore as well.
 *
 *      |<--- inactive --->|<----------- active ----------->|
 *      evicted here ... refault distance <= nr_active: activate
 *
 * Shadow entries are bounded by c->max_shadows (twice the frames, plus a
 * little): past it an evicted page leaves none.  So that the bound does
 * not keep the oldest shadows and refuse the new ones, a shadow whose
 * distance already exceeds its node's size - it can never activate again,
 * since the active list is smaller - is stale, and stale shadows are
 * trimmed (workingset_nodereclaim counts them): once the count passes 7/8
 * of the bound an eviction asks for a trim, and kswapd, woken for it,
 * walks every mapping and deletes stale shadows, then ones at half that
 * distance and so on, until the count is at most 3/4 of the bound.  With
 * reclaim.kswapd=off nothing trims and the bound alone holds.
 *
 * reclaim.policy (policy.h): the shadows are left and refaults counted
 * under every policy; whether an eviction ticks the clock (evicted) and
 * what a refault does with its distance (refault) are the policy's -
 * s3fifo's ghost queue is these shadows, its clock ticking for evictions
 * from its small queue only; sieve ignores refaults.  The trim is the
 * same.
 *
 * Locks: the clock and the counts are atomics read without a lock (a stale
 * list size only shifts a decision).  Eviction runs under the evicted
 * page's tree lock.  The trim takes c->mappings_lock to take a reference
 * on each mapping, drops it, then one mapping at a time looks its tree up
 * under RCU and deletes under that mapping's tree lock; it runs in kswapd
 * with nothing else held, one trim at a time (c->shadow_trim).
 */
#include <stdlib.h>

#include "internal.h"
#include "node.h"
#include "policy.h"
#include "tracepoint.h"
#include "tree.h"
#include "vmscan.h"

#define WS_NODE_BITS 6
#define WS_FLAG_BITS 1
#define WS_AGE_MASK ((1ull << (62 - WS_NODE_BITS - WS_FLAG_BITS)) - 1)
#define TRIM_GANG 64

void *pc__workingset_eviction(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);
	uint64_t age, shadows;

	if (pc__policy_classic(c) || pc__policy_ops(c)->evicted(c, p))
		age = atomic_fetch_add_explicit(&n->nonresident_age, 1,
						memory_order_relaxed);
	else
		age = atomic_load_explicit(&n->nonresident_age,
					   memory_order_relaxed);
	shadows = atomic_load_explicit(&c->nr_shadows, memory_order_relaxed);
	if (shadows >= c->max_shadows - c->max_shadows / 8 &&
	    !atomic_exchange(&c->shadow_trim, 1)) {
		/* Any kswapd will do; this node's is the one at hand. */
		if (c->cfg.kswapd)
			pc__wakeup_kswapd(c, n);
		else
			atomic_store(&c->shadow_trim, 0);
	}
	if (shadows >= c->max_shadows)
		return NULL;
	age &= WS_AGE_MASK;
	return pc_tree_mkvalue(age << (WS_NODE_BITS + WS_FLAG_BITS) |
			       (uint64_t)n->id << WS_FLAG_BITS |
			       (page_test(p, PG_workingset) ? 1 : 0));
}

/* The node of a shadow, or -1; its refault distance in *distance. */
static int shadow_distance(struct pc_cache *c, void *shadow, uint64_t *distance)
{
	uint64_t v = pc_tree_value(shadow);
	int nid = (int)((v >> WS_FLAG_BITS) & ((1u << WS_NODE_BITS) - 1));
	uint64_t eviction = v >> (WS_NODE_BITS + WS_FLAG_BITS);
	uint64_t now;

	if (nid >= c->nr_nodes)
		return -1;
	now = atomic_load_explicit(&c->nodes[nid].nonresident_age,
				   memory_order_relaxed);
	*distance = (now - eviction) & WS_AGE_MASK;
	return nid;
}

void pc__workingset_refault(struct pc_cache *c, struct pc_page *p, void *shadow)
{
	bool workingset = pc_tree_value(shadow) & 1;
	uint64_t distance;
	struct pc_node *n;
	int nid = shadow_distance(c, shadow, &distance);

	if (nid < 0)
		return;
	n = &c->nodes[nid];
	pc__inc(c, page_node(c, p)->id, workingset_refault_file);
	pc_trace(c, PC_TR_REFAULT, p, (uint32_t)pc_min(distance, UINT32_MAX));
	if (!pc__policy_classic(c)) {
		pc__policy_ops(c)->refault(c, n, p, distance, workingset);
		return;
	}
	if (distance > atomic_load(&n->lru[PC_LRU_ACTIVE].nr))
		return;
	page_set(p, PG_active);
	page_set(p, PG_workingset);
	atomic_fetch_add_explicit(&n->nonresident_age, 1, memory_order_relaxed);
	pc__inc(c, page_node(c, p)->id, workingset_activate_file);
	if (workingset)
		pc__inc(c, page_node(c, p)->id, workingset_restore_file);
}

void pc__workingset_activation(struct pc_cache *c, struct pc_page *p)
{
	atomic_fetch_add_explicit(&page_node(c, p)->nonresident_age, 1,
				  memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Trimming stale shadows                                              */

/* Delete @m's shadows farther than a node's share of the budget >> @shift. */
static uint64_t trim_mapping(struct pc_cache *c, struct pc_mapping *m,
			     unsigned shift)
{
	uint64_t limit = c->nr_frames / (uint64_t)c->nr_nodes >> shift;
	uint64_t index = 0, trimmed = 0;
	void *items[TRIM_GANG];
	uint64_t idx[TRIM_GANG];

	for (;;) {
		unsigned n, nstale = 0;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang(&m->tree, index, UINT64_MAX, items, idx,
				  TRIM_GANG);
		pc__tree_read_unlock(&m->tree);
		if (!n)
			break;
		for (unsigned k = 0; k < n; k++) {
			uint64_t d;

			if (pc_tree_is_value(items[k]) &&
			    (shadow_distance(c, items[k], &d) < 0 || d > limit)) {
				items[nstale] = items[k];
				idx[nstale++] = idx[k];
			}
		}
		index = idx[n - 1] + 1;
		if (nstale) {
			unsigned done = 0;

			pc__lock_counted(&m->tree_lock);
			for (unsigned k = 0; k < nstale; k++)
				if (pc__tree_lookup(&m->tree, idx[k]) == items[k]) {
					pc__tree_store(&m->tree, idx[k], NULL);
					done++;
				}
			pc__unlock(&m->tree_lock);
			atomic_fetch_sub(&c->nr_shadows, done);
			trimmed += done;
		}
		if (n < TRIM_GANG || index == 0)
			break;
	}
	return trimmed;
}

uint64_t pc__workingset_trim(struct pc_cache *c)
{
	uint64_t target = c->max_shadows / 4 * 3, trimmed = 0;
	struct pc_mapping **maps;
	unsigned nmaps = 0, cap;

	pc__lock(&c->mappings_lock);
	cap = c->nr_mappings + 1;
	maps = malloc(cap * sizeof(*maps));
	for (unsigned h = 0; maps && h < c->hash_size; h++)
		for (struct pc_mapping *m = c->hash[h]; m && nmaps < cap;
		     m = m->hash_next)
			if (!m->dead && pc__mapping_tryget(m))
				maps[nmaps++] = m;
	pc__unlock(&c->mappings_lock);
	if (!maps)
		return 0;
	/* Stale first, then ever younger, until under the target. */
	for (unsigned shift = 0; shift < 4; shift++) {
		if (atomic_load(&c->nr_shadows) <= target)
			break;
		for (unsigned i = 0; i < nmaps; i++)
			trimmed += trim_mapping(c, maps[i], shift);
	}
	for (unsigned i = 0; i < nmaps; i++)
		pc__mapping_put(maps[i]);
	free(maps);
	if (trimmed)
		pc__add(c, 0, workingset_nodereclaim, (int64_t)trimmed);
	return trimmed;
}
