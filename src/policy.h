/*
 * policy.h - reclaim.policy: which pages reclaim takes, behind one small
 * ops table (sieve.c, s3fifo.c, mglru.c - partial; classic is lru.c's
 * and vmscan.c's).
 *
 * What every policy shares.  Pages sit on their node's two lists
 * (node.h: lru[INACTIVE], lru[ACTIVE], lru_lock, PG_lru, PG_active naming
 * the list) and everything around the lists is the same code under each
 * policy: the per-thread batches (lru.c), isolation with a reference and
 * the held[] record of a shared cache, the decide step under the page
 * lock (busy, dirty, writeback, pinned), removal with a shadow entry,
 * putback at the head, kswapd, direct reclaim and its retry rule, the
 * watermarks and their boost, the seeds' switches (batch_remove,
 * contention_backoff, deferred_activation, stickiness ...).  A policy
 * decides only where a page goes and which pages reclaim takes:
 *
 *   hook            called from                   classic (today's)
 *   access          pc__mark_accessed (lru.c):     two-step activation
 *                   every hit, mark_page_accessed
 *   isolate_locked  shrink_list (vmscan.c): the   inactive tail, the
 *                   next victims off their lists  active list refilled
 *                                                 when inactive is low
 *   refault         pc__workingset_refault: a     distance <= active:
 *                   page inserted over its        start on the active
 *                   shadow, before its list add   list (activation)
 *   evicted         pc__workingset_eviction: a    the node's clock ticks
 *                   page leaves with a shadow;
 *                   does the clock tick?
 *   del_locked      pc__lru_del_locked: a page    nothing
 *                   leaves its list (any cause)
 *   place_locked    pc__lru_add_locked: a page    (NULL) the list its
 *   list            goes on a list, and which     PG_active names
 *                   list it is on
 *
 * Insertion: a new page goes to the head of the list its PG_active names
 * (set by refault, or by nothing: inactive), or the one place_locked and
 * list choose (mglru's generations), and its policy word (pc_page.pol)
 * starts at 0 (pc__prep_new_page).
 *
 * Cost.  Classic is never called through the table: each seam is one
 * branch on c->cfg.reclaim_policy against PC_POLICY_CLASSIC (a field of
 * the config, read-only after create, so the branch always goes one way
 * in a cache's life), with classic's code after it in the same function
 * as before - the hit path (pc__mark_accessed) and the list operations
 * (pc__lru_del_locked) pay one load of the cache's config and one
 * compare with a constant, no call and no indirect call; the isolation
 * (shrink_inactive's isolate_lru_locked) and the refault and eviction
 * decisions (workingset.c) the same, once per batch or per miss.  The table is looked up by
 * the enum (pc__policy_ops), never stored in the cache: a shared cache's
 * struct is mapped by processes whose copies of the library, and so of
 * the table, lie at different addresses.
 *
 * The policy word (pc_page.pol, atomic, written by hits without a lock):
 *
 *   bit 0-1  PC_POL_FREQ     s3fifo: hits since it entered its queue, capped at 3
 *   bit 2    PC_POL_SEEN     the insertion's own access happened
 *   bit 3    PC_POL_VISITED  sieve: hit since the hand last passed it
 *   bit 4-5  (mglru.c)       mglru: its generation, seq % PC_MAX_NR_GENS
 *   bit 6    PC_POL_PLACED   mglru: on the generation of bits 4-5
 *
 * The insertion's access: a page read on its miss is marked accessed by
 * that read (as the kernel's mark_page_accessed after a readpage), which
 * the papers do not count - their objects enter with no hit.  So the
 * first access after a page became one only sets PC_POL_SEEN; hits are
 * the accesses after it.  For a readahead page that is its first use (a
 * prefetched page read once is a scan's), for a page a write created
 * (not marked, seed 000) its first access after the write.
 *
 * Locks: the hooks run where their callers run - access with nothing
 * held (the page referenced), isolate_locked and del_locked under the
 * node's lru_lock, refault with the page locked and new, evicted under
 * the page's tree lock.
 */
#ifndef PC_POLICY_H
#define PC_POLICY_H

#include "internal.h"
#include "node.h"
#include "tctx.h"

#define PC_POL_FREQ 3u
#define PC_POL_SEEN (1u << 2)
#define PC_POL_VISITED (1u << 3)
#define PC_POL_PLACED (1u << 6)

struct pc_policy_ops {
	const char *name;
	void (*access)(struct pc_cache *c, struct pc_page *p);
	/* Up to @nr victims (nr <= PC_RECLAIM_BATCH) into @pages, isolated
	 * by pc__isolate_page_locked; returns how many. */
	unsigned (*isolate_locked)(struct pc_cache *c, struct pc_node *n,
				   struct pc_page **pages, unsigned nr);
	/* @p (new, locked) comes back @distance evictions after it left
	 * node @n; @workingset: its shadow's bit.  Sets PG_active (and
	 * counts workingset_activate_file) if it is to be protected. */
	void (*refault)(struct pc_cache *c, struct pc_node *n,
			struct pc_page *p, uint64_t distance, bool workingset);
	bool (*evicted)(struct pc_cache *c, const struct pc_page *p);
	void (*del_locked)(struct pc_node *n, struct pc_page *p);
	/* NULL: the two lists by PG_active.  place_locked runs first in
	 * pc__lru_add_locked, list in every add and delete after it. */
	void (*place_locked)(struct pc_node *n, struct pc_page *p, bool tail);
	struct pc_lru *(*list)(struct pc_node *n, struct pc_page *p);
};

extern const struct pc_policy_ops pc__policy_sieve, pc__policy_s3fifo,
	pc__policy_mglru;

/* The ops of a policy other than classic (whose code is called direct). */
static inline const struct pc_policy_ops *pc__policy_ops(const struct pc_cache *c)
{
	switch (c->cfg.reclaim_policy) {
	case PC_POLICY_SIEVE:
		return &pc__policy_sieve;
	case PC_POLICY_MGLRU:
		return &pc__policy_mglru;
	default:
		PC_ASSERT(c->cfg.reclaim_policy == PC_POLICY_S3FIFO);
		return &pc__policy_s3fifo;
	}
}

/* mglru.c: pages of @n's generations, the two youngest (@active) or the
 * others (nr_active_file, nr_inactive_file). */
uint64_t pc__mglru_nr(struct pc_node *n, bool active);

/* Pages on @n's lists, whatever the policy keeps them in. */
static inline uint64_t pc__policy_nr_pages(struct pc_node *n)
{
	uint64_t sum = atomic_load(&n->lru[PC_LRU_INACTIVE].nr) +
		       atomic_load(&n->lru[PC_LRU_ACTIVE].nr);

	for (unsigned i = 0; i < PC_MAX_NR_GENS; i++)
		sum += atomic_load(&n->lrugen.lists[i].nr);
	return sum;
}

static inline bool pc__policy_classic(const struct pc_cache *c)
{
	return c->cfg.reclaim_policy == PC_POLICY_CLASSIC;
}

/*
 * Isolation, every policy's: @p off its list with a reference, PG_lru
 * cleared, recorded in @t's held[] (shared caches; @t: pc__held_ctx) at
 * batch position @at, stored in @pages[@at].  False, and nothing done, if
 * its count is 0: its last user is freeing it, and takes it off.
 */
static inline bool pc__isolate_page_locked(struct pc_cache *c,
					   struct pc_node *n, struct pc_tctx *t,
					   struct pc_page *p,
					   struct pc_page **pages, unsigned at)
{
	PC_ASSERT_HELD(&n->lru_lock);
	if (!page_get_unless_zero(p))
		return false;
	page_clear(p, PG_lru);
	pc__lru_del_locked(n, p);
	pc__held_set(t, PC_HELD_ISO_AT + (int)at, c, p, PC_HELD_ISO);
	pages[at] = p;
	return true;
}

/*
 * The insertion's access or a hit (see the top)?  Sets PC_POL_SEEN and
 * PG_referenced (what dropbehind.c and the decide step read as "touched")
 * on the first; true for a hit.  @w: the word as loaded.
 */
static inline bool pc__policy_hit(struct pc_page *p, uint32_t w)
{
	if (w & PC_POL_SEEN)
		return true;
	atomic_fetch_or_explicit(&p->pol, PC_POL_SEEN, memory_order_relaxed);
	if (!page_test(p, PG_referenced))
		page_set(p, PG_referenced);
	return false;
}

#endif /* PC_POLICY_H */
