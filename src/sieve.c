/*
 * sieve.c - reclaim.policy=sieve: one FIFO queue, a visited bit, a hand
 * (Zhang et al., "SIEVE is simpler than LRU", NSDI'24).
 *
 *   node->lru[INACTIVE]:  head (new) ... <-hand- ... tail (old)
 *   node->lru[ACTIVE]:    empty: sieve has one queue
 *
 * A page enters at the head, unvisited; a hit sets its visited bit
 * (PC_POL_VISITED in pc_page.pol, one atomic or, and none once set) and
 * moves nothing.  Reclaim asks for victims: the hand walks from where it
 * stopped towards the head, clearing the visited bits it passes (they
 * stay where they are: the survivors keep their place, which is what
 * sets SIEVE apart from CLOCK's reinsertion), and takes the first
 * unvisited pages; past the head it starts again at the tail.  The hand
 * is a frame number in the node (node->hand, lru_lock; PC_NO_PFN: start
 * at the tail) and a page that leaves the queue with the hand on it
 * moves the hand to its head-side neighbour (del_locked), as the paper's
 * hand moves to the evicted object's predecessor.
 *
 * What that does with a scan: pages read once are taken where the hand
 * stands, one for each that comes in at the head, so the hand stays at
 * the oldest of them, as far from the head as ever, and never comes round
 * to the pages it left behind (a hot set, visited once) while the scan
 * lasts - new pages are demoted at once, survivors stay without moving.
 * Only visited pages between the hand and the head bring it round.
 *
 * Where it follows the paper: one queue, insertion at the head, the
 * visited bit set by hits only (the insertion's own access is not one:
 * policy.h), the hand's walk and the survivors left in place.
 *
 * Where it departs:
 *   - victims are taken a batch at a time (up to 32, what shrink_list
 *     asks), the hand walking on from each to the next, and a walk looks
 *     at most SIEVE_SCAN_MAX pages under the lru lock: when every page it
 *     passed was visited it returns fewer (or none) and the next call goes
 *     on where it stopped - a full revolution takes several calls, never
 *     one long lock hold;
 *   - a victim reclaim cannot take now (dirty, under writeback, locked,
 *     pinned) goes back to the head, as under classic, where the paper
 *     has no such page; end of writeback of a page marked PG_reclaim
 *     moves it to the tail (lru.c), behind the hand, found after a wrap;
 *   - refaults: shadows are left and refaults counted (workingset.c) but
 *     SIEVE keeps no history, so a refaulting page enters unvisited like
 *     any (workingset_activate_file stays 0); the clock ticks at every
 *     eviction, so refault distances keep their meaning for the trace;
 *   - fadvise DONTNEED moves a page to the tail and forgets its visits.
 *
 * Locks: the queue, the hand and isolation under node->lru_lock; the
 * visited bit is atomic, set without a lock and cleared under lru_lock.
 */
#include "policy.h"
#include "tracepoint.h"

#define SIEVE_SCAN_MAX (32u * PC_RECLAIM_BATCH)	/* pages a walk looks at */

static void sieve_access(struct pc_cache *c, struct pc_page *p)
{
	uint32_t w = atomic_load_explicit(&p->pol, memory_order_relaxed);

	(void)c;
	if (pc__policy_hit(p, w) && !(w & PC_POL_VISITED))
		atomic_fetch_or_explicit(&p->pol, PC_POL_VISITED,
					 memory_order_relaxed);
}

static unsigned sieve_isolate_locked(struct pc_cache *c, struct pc_node *n,
				     struct pc_page **pages, unsigned nr)
{
	struct pc_tctx *t = pc__held_ctx(c);
	struct pc_lru *q = &n->lru[PC_LRU_INACTIVE];
	uint32_t pfn = n->hand != PC_NO_PFN ? n->hand : q->tail;
	unsigned count = 0, cleared = 0;

	PC_ASSERT_HELD(&n->lru_lock);
	for (unsigned steps = 0; pfn != PC_NO_PFN && count < nr &&
	     steps < SIEVE_SCAN_MAX; steps++) {
		struct pc_page *p = pfn_page(c, pfn);
		uint32_t next = p->lru_prev;

		if (atomic_load_explicit(&p->pol, memory_order_relaxed) &
		    PC_POL_VISITED) {
			atomic_fetch_and_explicit(&p->pol, ~PC_POL_VISITED,
						  memory_order_relaxed);
			cleared++;
		} else if (pc__isolate_page_locked(c, n, t, p, pages, count)) {
			count++;
		}
		/* Past the head: round again from the tail (none if @p was
		 * alone and went). */
		pfn = next != PC_NO_PFN ? next : q->tail;
	}
	n->hand = pfn;
	if (cleared)
		pc__add(c, n->id, sieve_hand_cleared, cleared);
	return count;
}

static void sieve_refault(struct pc_cache *c, struct pc_node *n,
			  struct pc_page *p, uint64_t distance, bool workingset)
{
	(void)c;
	(void)n;
	(void)p;
	(void)distance;
	(void)workingset;
}

static bool sieve_evicted(struct pc_cache *c, const struct pc_page *p)
{
	(void)c;
	(void)p;
	return true;
}

static void sieve_del_locked(struct pc_node *n, struct pc_page *p)
{
	PC_ASSERT_HELD(&n->lru_lock);
	if (n->hand == page_pfn(n->cache, p))
		n->hand = p->lru_prev;
}

const struct pc_policy_ops pc__policy_sieve = {
	.name = "sieve",
	.access = sieve_access,
	.isolate_locked = sieve_isolate_locked,
	.refault = sieve_refault,
	.evicted = sieve_evicted,
	.del_locked = sieve_del_locked,
};
