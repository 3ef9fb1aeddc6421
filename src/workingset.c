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
 * Shadow entries are bounded: past c->max_shadows (twice the frames) an
 * evicted page leaves none.  The clock is atomic; the rest is computed
 * from values read without locks (a stale size only shifts a decision).
 */
#include "internal.h"

#define WS_NODE_BITS 6
#define WS_FLAG_BITS 1

void *pc__workingset_eviction(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);
	uint64_t age;

	age = atomic_fetch_add_explicit(&n->nonresident_age, 1,
					memory_order_relaxed);
	if (atomic_load_explicit(&c->nr_shadows, memory_order_relaxed) >=
	    c->max_shadows)
		return NULL;
	age &= (1ull << (62 - WS_NODE_BITS - WS_FLAG_BITS)) - 1;
	return pc_tree_mkvalue(age << (WS_NODE_BITS + WS_FLAG_BITS) |
			       (uint64_t)n->id << WS_FLAG_BITS |
			       (page_test(p, PG_workingset) ? 1 : 0));
}

void pc__workingset_refault(struct pc_cache *c, struct pc_page *p, void *shadow)
{
	uint64_t v = pc_tree_value(shadow);
	int nid = (int)((v >> WS_FLAG_BITS) & ((1u << WS_NODE_BITS) - 1));
	bool workingset = v & 1;
	uint64_t eviction = v >> (WS_NODE_BITS + WS_FLAG_BITS);
	uint64_t mask = (1ull << (62 - WS_NODE_BITS - WS_FLAG_BITS)) - 1;
	struct pc_node *n;
	uint64_t now, distance;

	if (nid >= c->nr_nodes)
		return;
	n = &c->nodes[nid];
	now = atomic_load_explicit(&n->nonresident_age, memory_order_relaxed);
	distance = (now - eviction) & mask;
	pc__inc(c, page_node(c, p)->id, workingset_refault_file);
	pc_trace(c, PC_TR_REFAULT, p, (uint32_t)pc_min(distance, UINT32_MAX));
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
