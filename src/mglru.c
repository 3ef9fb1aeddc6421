/*
 * mglru.c - reclaim.policy=mglru, PARTIAL: the generations and their
 * aging of the kernel's multi-gen LRU (mm/vmscan.c, lru_gen, 6.1), file
 * pages only.  Not yet: the tiers' refault statistics and the PID
 * controller that chooses the protected tier, the kernel's refault token
 * (min_seq and refs in the shadow), the page-table walk (this cache has
 * no page tables), and the lru_gen counters.
 *
 *   node->lrugen.lists[seq % PC_MAX_NR_GENS], for seq in [min_seq, max_seq]:
 *
 *     max_seq   youngest: refaulting pages the shadows say are recent
 *     ...       promoted pages, one generation at a time
 *     min_seq   oldest: new pages, and the victims (tail first)
 *
 * As lru_gen_add_folio: a page enters the youngest generation if
 * PG_active (set by refault), the second youngest if reclaim left it
 * dirty or under writeback (PG_reclaim), else the oldest - PG_active is
 * cleared once the generation is chosen.  The page's generation is in its
 * policy word (bits 4-5, PC_POL_PLACED while it is on a list).  A hit
 * counts in refs (PC_POL_FREQ, capped at 3: folio_inc_refs, whose tier is
 * order_base_2(refs + 1)) and moves nothing.
 *
 * Eviction (sort_folio and isolate_folio, scan_folios): from the tail of
 * the oldest generation; a page of tier 1 or more - a hit since it came
 * there - is protected: moved to the next generation's head, its refs
 * cleared (folio_inc_gen); one of tier 0 is the victim.  The kernel's PID
 * controller would raise the first protected tier when protected pages
 * refault less than unprotected ones; here the protected tier is always 1
 * (the controller's starting point when it has no refaults to go by).
 *
 * Aging (inc_min_seq, inc_max_seq): when the oldest generation is empty
 * it is retired (min_seq + 1) while more than PC_MIN_NR_GENS remain, else
 * a new youngest generation is made (max_seq + 1) first - aging as the
 * eviction needs it, where the kernel also ages ahead of need
 * (should_run_aging) and with page tables walked.
 *
 * Refaults: the shadows and the clock are classic's; a refault within
 * the distance of the pages in the generations younger than the oldest
 * starts in the youngest (workingset_activate_file).
 *
 * nr_inactive_file and nr_active_file: the two youngest generations are
 * active, the others inactive (lru_gen_is_active).
 *
 * Locks: the generations, the seqs and every move under node->lru_lock;
 * refs are atomic, raised without a lock.
 */
#include "policy.h"
#include "tracepoint.h"

#define MGLRU_SCAN_MAX (32u * PC_RECLAIM_BATCH)	/* pages a call moves */
#define GEN_SHIFT 4
#define GEN_MASK (3u << GEN_SHIFT)

_Static_assert(PC_MAX_NR_GENS == 4, "the generation is two bits");

static unsigned gen_of(uint64_t seq)
{
	return (unsigned)(seq % PC_MAX_NR_GENS);
}

static void set_word(struct pc_page *p, uint32_t clear, uint32_t set)
{
	uint32_t w = atomic_load_explicit(&p->pol, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&p->pol, &w,
			(w & ~clear) | set, memory_order_relaxed,
			memory_order_relaxed))
		;
}

static struct pc_lru *mglru_list(struct pc_node *n, struct pc_page *p)
{
	uint32_t w = atomic_load_explicit(&p->pol, memory_order_relaxed);

	return &n->lrugen.lists[(w & GEN_MASK) >> GEN_SHIFT];
}

/* lru_gen_add_folio's choice, unless a move chose already (PLACED). */
static void mglru_place_locked(struct pc_node *n, struct pc_page *p, bool tail)
{
	struct pc_lru_gen *g = &n->lrugen;
	uint64_t seq;

	(void)tail;
	PC_ASSERT_HELD(&n->lru_lock);
	if (atomic_load_explicit(&p->pol, memory_order_relaxed) & PC_POL_PLACED)
		return;
	if (page_test(p, PG_active))
		seq = g->max_seq;
	else if (page_test(p, PG_reclaim) &&
		 (page_test(p, PG_dirty) || page_test(p, PG_writeback)))
		seq = g->max_seq - 1;
	else
		seq = g->min_seq;
	page_clear(p, PG_active);
	set_word(p, GEN_MASK, PC_POL_PLACED | gen_of(seq) << GEN_SHIFT);
}

static void mglru_access(struct pc_cache *c, struct pc_page *p)
{
	uint32_t w = atomic_load_explicit(&p->pol, memory_order_relaxed);

	(void)c;
	if (!pc__policy_hit(p, w))
		return;
	while ((w & PC_POL_FREQ) < PC_POL_FREQ &&
	       !atomic_compare_exchange_weak_explicit(&p->pol, &w, w + 1,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* The oldest generation is empty: retire it, making a new one first if
 * only PC_MIN_NR_GENS are left.  False if every generation is empty. */
static bool age_locked(struct pc_cache *c, struct pc_node *n)
{
	struct pc_lru_gen *g = &n->lrugen;
	bool any = false;

	for (unsigned i = 0; i < PC_MAX_NR_GENS; i++)
		any |= g->lists[i].tail != PC_NO_PFN;
	if (!any)
		return false;
	if (g->max_seq - g->min_seq + 1 <= PC_MIN_NR_GENS) {
		g->max_seq++;
		pc__inc(c, n->id, mglru_max_seq);
	}
	g->min_seq++;
	pc__inc(c, n->id, mglru_min_seq);
	return true;
}

static unsigned mglru_isolate_locked(struct pc_cache *c, struct pc_node *n,
				     struct pc_page **pages, unsigned nr)
{
	struct pc_tctx *t = pc__held_ctx(c);
	struct pc_lru_gen *g = &n->lrugen;
	unsigned count = 0, promoted = 0;

	PC_ASSERT_HELD(&n->lru_lock);
	for (unsigned steps = 0; count < nr && steps < MGLRU_SCAN_MAX; steps++) {
		struct pc_lru *l = &g->lists[gen_of(g->min_seq)];
		struct pc_page *p;

		if (l->tail == PC_NO_PFN) {
			if (!age_locked(c, n))
				break;
			continue;
		}
		p = pfn_page(c, l->tail);
		if (atomic_load_explicit(&p->pol, memory_order_relaxed) &
		    PC_POL_FREQ) {
			/* Tier 1 or more: to the next generation. */
			pc__lru_del_locked(n, p);
			set_word(p, GEN_MASK | PC_POL_FREQ, PC_POL_PLACED |
				 gen_of(g->min_seq + 1) << GEN_SHIFT);
			page_set(p, PG_workingset);
			pc__lru_add_locked(n, p, false);
			pc_trace(c, PC_TR_ACTIVATE, p, 0);
			promoted++;
		} else if (pc__isolate_page_locked(c, n, t, p, pages, count)) {
			count++;
		} else {
			break;	/* being freed at the tail: leave it to its user */
		}
	}
	if (promoted)
		pc__add(c, n->id, mglru_promote, promoted);
	return count;
}

/* Pages in the generations younger than the oldest. */
static uint64_t young_pages(struct pc_node *n)
{
	struct pc_lru_gen *g = &n->lrugen;
	uint64_t sum = 0;

	for (uint64_t seq = g->min_seq + 1; seq <= g->max_seq; seq++)
		sum += atomic_load(&g->lists[gen_of(seq)].nr);
	return sum;
}

static void mglru_refault(struct pc_cache *c, struct pc_node *n,
			  struct pc_page *p, uint64_t distance, bool workingset)
{
	(void)workingset;
	if (distance > young_pages(n))
		return;
	page_set(p, PG_active);
	page_set(p, PG_workingset);
	pc__inc(c, page_node(c, p)->id, workingset_activate_file);
}

static bool mglru_evicted(struct pc_cache *c, const struct pc_page *p)
{
	(void)c;
	(void)p;
	return true;
}

static void mglru_del_locked(struct pc_node *n, struct pc_page *p)
{
	(void)n;
	set_word(p, PC_POL_PLACED, 0);
}

uint64_t pc__mglru_nr(struct pc_node *n, bool active)
{
	struct pc_lru_gen *g = &n->lrugen;
	uint64_t sum = 0;

	for (uint64_t seq = g->min_seq; seq <= g->max_seq; seq++)
		if ((seq + 1 >= g->max_seq) == active)
			sum += atomic_load(&g->lists[gen_of(seq)].nr);
	return sum;
}

const struct pc_policy_ops pc__policy_mglru = {
	.name = "mglru",
	.access = mglru_access,
	.isolate_locked = mglru_isolate_locked,
	.refault = mglru_refault,
	.evicted = mglru_evicted,
	.del_locked = mglru_del_locked,
	.place_locked = mglru_place_locked,
	.list = mglru_list,
};
