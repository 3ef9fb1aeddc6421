/*
 * s3fifo.c - reclaim.policy=s3fifo: a small FIFO, a main FIFO and a ghost
 * FIFO (Yang et al., "FIFO queues are all you need for cache eviction",
 * SOSP'23).
 *
 *   node->lru[INACTIVE] = S, small:  head (new) ... tail  -> M, or out
 *   node->lru[ACTIVE]   = M, main:   head ... tail  -> M's head, or out
 *   G, ghost: the shadow entries workingset.c leaves in the mappings
 *
 *   insert     a page whose shadow is in G (see below) enters M, any
 *              other S; both at the head, frequency 0
 *   hit        frequency + 1, capped at 3 (PC_POL_FREQ of pc_page.pol: one
 *              compare-and-swap, none at 3); nothing moves
 *   evict      from S while S holds at least 10% of the node's pages on
 *              the two queues, else from M:
 *     S tail   hit since it came (frequency >= 1): to M's head, frequency
 *              cleared (s3fifo_promote); else the victim, leaving a
 *              shadow: into G
 *     M tail   frequency > 0: back to M's head, frequency - 1
 *              (s3fifo_main_reinsert); else the victim
 *
 * The ghost is workingset.c's shadow entries, reused: where the paper
 * keeps a FIFO of the ids S evicted, as many as M holds, a shadow records
 * the node's eviction clock, and under s3fifo that clock ticks only when
 * a page leaves S (evicted: false for a page of M), so a refault's
 * distance is the page's position in G.  A page is in G if its distance
 * is at most M's share of the node (90% of nr_frames) and it left from S:
 * pages of M carry PG_workingset (set when they enter M), which the
 * shadow keeps (its workingset bit), and a page M evicted is not a ghost
 * (the paper's M evicts into nothing).  A ghost hit starts on M
 * (PG_active: workingset_activate_file, s3fifo_ghost_admit).  Shadows stay
 * bounded and trimmed as under classic; a trimmed one is a ghost that
 * fell out of G early.
 *
 * Where it follows the paper: the three queues, S at 10%, 2-bit
 * frequencies, hits that move nothing, S's accessed pages promoted with
 * their frequency cleared, M as a 2-bit CLOCK by reinsertion, G with M's
 * size and only S's victims in it.
 *
 * Where it departs:
 *   - "accessed" in S means a hit after the insertion's own access
 *     (policy.h): the read that missed marks its page, the paper's
 *     objects enter with no hit;
 *   - S's share is of the pages on the two queues, not of the budget: the
 *     free frames the watermarks keep are in neither;
 *   - M is not "full" on its own: a promotion never evicts from M at
 *     once; the next victim comes from M when S is below its share;
 *   - victims are taken a batch (up to 32) at a time, the queue chosen
 *     again for each, and one call moves at most S3FIFO_SCAN_MAX pages
 *     under the lru lock (the next call goes on);
 *   - a victim reclaim cannot take now (dirty, writeback, locked,
 *     pinned) goes back to its queue's head, as under classic; fadvise
 *     DONTNEED moves a page to S's tail, its frequency forgotten.
 *
 * Locks: the queues and the moves under node->lru_lock; the frequency is
 * atomic, raised without a lock and lowered or cleared under lru_lock.
 */
#include "policy.h"
#include "tracepoint.h"

#define S3FIFO_SCAN_MAX (32u * PC_RECLAIM_BATCH)	/* pages a call moves */

static void s3fifo_access(struct pc_cache *c, struct pc_page *p)
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

/* From its queue's tail to M's head, with frequency @freq. */
static void to_main_locked(struct pc_node *n, struct pc_page *p, uint32_t freq)
{
	uint32_t w = atomic_load_explicit(&p->pol, memory_order_relaxed);

	pc__lru_del_locked(n, p);
	if (!page_test(p, PG_active)) {
		page_set(p, PG_active);
		page_set(p, PG_workingset);	/* its shadow: not a ghost */
	}
	while (!atomic_compare_exchange_weak_explicit(&p->pol, &w,
			(w & ~PC_POL_FREQ) | freq,
			memory_order_relaxed, memory_order_relaxed))
		;
	pc__lru_add_locked(n, p, false);
}

static unsigned s3fifo_isolate_locked(struct pc_cache *c, struct pc_node *n,
				      struct pc_page **pages, unsigned nr)
{
	struct pc_tctx *t = pc__held_ctx(c);
	struct pc_lru *s = &n->lru[PC_LRU_INACTIVE], *m = &n->lru[PC_LRU_ACTIVE];
	unsigned count = 0, promoted = 0, reinserted = 0;

	PC_ASSERT_HELD(&n->lru_lock);
	for (unsigned steps = 0; count < nr && steps < S3FIFO_SCAN_MAX; steps++) {
		uint64_t ns = atomic_load_explicit(&s->nr, memory_order_relaxed);
		uint64_t nm = atomic_load_explicit(&m->nr, memory_order_relaxed);
		bool small = ns && ns * 10 >= ns + nm;
		struct pc_page *p;
		uint32_t freq;

		if (!ns && !nm)
			break;
		p = pfn_page(c, small ? s->tail : m->tail);
		freq = atomic_load_explicit(&p->pol, memory_order_relaxed) &
		       PC_POL_FREQ;
		if (small && freq) {
			to_main_locked(n, p, 0);
			pc_trace(c, PC_TR_ACTIVATE, p, 0);
			promoted++;
		} else if (!small && freq) {
			to_main_locked(n, p, freq - 1);
			pc_trace(c, PC_TR_ROTATE, p, 0);
			reinserted++;
		} else if (pc__isolate_page_locked(c, n, t, p, pages, count)) {
			count++;
		} else {
			break;	/* being freed at the tail: leave it to its user */
		}
	}
	if (promoted) {
		pc__add(c, n->id, s3fifo_promote, promoted);
		pc__add(c, n->id, pgactivate, promoted);
	}
	if (reinserted)
		pc__add(c, n->id, s3fifo_main_reinsert, reinserted);
	return count;
}

static void s3fifo_refault(struct pc_cache *c, struct pc_node *n,
			   struct pc_page *p, uint64_t distance, bool workingset)
{
	uint64_t ghost = (uint64_t)atomic_load(&n->nr_frames) * 9 / 10;

	if (workingset || distance > ghost)
		return;
	page_set(p, PG_active);
	page_set(p, PG_workingset);
	pc__inc(c, page_node(c, p)->id, workingset_activate_file);
	pc__inc(c, page_node(c, p)->id, s3fifo_ghost_admit);
}

/* The clock ticks for S's victims only: G holds nothing else. */
static bool s3fifo_evicted(struct pc_cache *c, const struct pc_page *p)
{
	(void)c;
	return !page_test(p, PG_active);
}

static void s3fifo_del_locked(struct pc_node *n, struct pc_page *p)
{
	(void)n;
	(void)p;
}

const struct pc_policy_ops pc__policy_s3fifo = {
	.name = "s3fifo",
	.access = s3fifo_access,
	.isolate_locked = s3fifo_isolate_locked,
	.refault = s3fifo_refault,
	.evicted = s3fifo_evicted,
	.del_locked = s3fifo_del_locked,
};
