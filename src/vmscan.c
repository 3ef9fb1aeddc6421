/*
 * vmscan.c - reclaim: shrinking the LRU lists, direct reclaim, the
 * watermark boost (kswapd.c runs each node's reclaim thread).
 *
 * Who reclaims (each node has its own lists, lock and kswapd):
 *
 *   free pages of a node
 *     high ──────────  kswapd stops here and sleeps
 *     low  ──────────  an allocation that leaves the node here wakes kswapd
 *     min  ──────────  an allocation that finds every node it may use here
 *                      reclaims directly (pc__alloc_page, page_alloc.c,
 *                      calls pc__direct_reclaim)
 *
 * kswapd (kswapd.c) shrinks its node (pc__shrink_node) in batches of 32
 * until it is above high.  Direct reclaim (allocstall) runs the priority
 * loop from 12 down to 0, scanning max(32, inactive >> priority) pages a
 * pass in batches of 32, until it has freed a batch; it
 * drains its own LRU batches first and everyone's at priority 10.  It
 * reports the pages it saw that will become reclaimable on their own
 * (dirty, under writeback, locked for I/O): page_alloc.c waits for those
 * (not counted against the allocation) where pinned ones count toward its
 * give-up.
 *
 * Watermark boost: kswapd wakes at low, but runs only when it gets a CPU;
 * what allocations take meanwhile must fit between low and min.  So when
 * kswapd starts it looks at how far free frames fell since its wake was
 * sent (pc__boost_for_latency) and raises the boost until low is twice that
 * above min; and each direct reclaim adds 32 pages more.  The boost (at
 * most 1/16 of the node, and high + 2 * boost at most half of it) raises
 * low by itself and high by twice itself (node_wmark_low/high in
 * node.h): kswapd wakes earlier and works longer.  Every balancing run
 * that ends balanced with no direct reclaim on the node meanwhile takes
 * 1/32 of the boost back (kswapd.c).  An allocation that reaches min
 * anyway while kswapd is woken or running gives way to it first
 * (pc__kswapd_give_way, kswapd.c) and reclaims directly only then.
 *
 * Shrinking the inactive list (shrink_inactive):
 *   1. isolate: under lru_lock take up to 32 pages from the tail, each with
 *      a reference (page_get_unless_zero) and PG_lru cleared;
 *   2. decide, page lock by trylock, no lru lock held:
 *        locked by someone  -> keep (busy)
 *        truncated          -> drop our reference (frees it)
 *        activated while isolated (deferred activation) -> keep: the
 *                              putback puts it on the active list
 *        under writeback    -> mark PG_reclaim, keep
 *        dirty              -> mark PG_reclaim, hand to the flusher, keep
 *                              (a batch at least half dirty or under
 *                              writeback throttles kswapd for 1 ms)
 *        in use (count > 2: pinned, or a reader in flight)
 *                           -> referenced: activate; else rotate (keep)
 *        clean              -> remove from its mapping, leaving a shadow
 *   3. remove: reclaim.batch_remove groups the clean pages by mapping
 *      (=sorted: the batch is sorted by mapping first; =on: runs of
 *      consecutive pages only, seed 000's "bourney") and removes each group
 *      under one tree-lock hold; off: one hold per page (vanilla);
 *   4. put back what was kept (one lru_lock hold), free what was removed
 *      (one free_lock hold), highest frame first (pc__free_batch): the
 *      free list is a stack, so the batch is handed out lowest first and
 *      a file written next gets frames side by side - its writeback
 *      requests few segments (writeback_io.c).  In the order the batch left
 *      the LRU (oldest first, which for pages read or written in order is
 *      lowest frame first) it was handed out highest first, each 1 MiB
 *      request some 250 segments, a request split in two by a virtio disk
 *      of 254.
 * A page is removed only if its count can be frozen at exactly 2 (the
 * mapping's reference and ours) while it is locked, clean and not under
 * writeback: a pinned, locked, dirty or writeback page is never freed.  A
 * referenced page that nobody holds is reclaimed (the kernel's
 * PAGEREF_RECLAIM_CLEAN): its second access would have activated it.
 *
 * A shared cache: a reclaimer's process may die with its batch isolated
 * (off every list, one reference each).  So each isolated page is
 * recorded in the thread's context (tctx.h: held[], PC_HELD_ISO at
 * its batch position) for the reaper to put back on its list and give
 * back: set at isolation, made plain in the lru_lock hold that puts the
 * page back on a list (from then on only our reference is left), cleared
 * before each put and before the freeze that takes it (set again if the
 * freeze fails).
 *
 * Tree-lock contention (seed 000).  A reclaimer takes a mapping's tree lock
 * by trylock first; when that fails it counts reclaim_tree_contended and:
 *   =sleepy  (kswapd or direct) waits until a reclaimer on its node frees
 *            pages or 10 ms pass (reclaim_backoff_wait), then takes the
 *            lock - Mel's "stall for a real reason" patch;
 *   =blunt   kswapd notes the time (c->tree_contended_ns) and claims
 *            c->blunt_owner if free; the other kswapds stall at the top
 *            of their balancing passes (kswapd.c) - "all but one kswapd
 *            stall".
 * Those times are the cache's clock (pc__clock), which tests drive.
 *
 * A stream that finds stale pages at the inactive tail (dropbehind.c)
 * reclaims them itself in exchange for pages it keeps: pc__reclaim_tail
 * shrinks the inactive list by at most a batch, counted as direct reclaim
 * (pgscan_direct, pgsteal_direct) but with no allocstall and no boost,
 * since no allocation waited.
 *
 * Shrinking the active list moves pages to the inactive list (setting
 * PG_workingset, as the kernel does); pages referenced since they were
 * last looked at rotate to the active head instead.  The inactive list is
 * "low" when inactive * int_sqrt(10 * GiB of both lists) < active.
 *
 * reclaim.policy (policy.h): all of the above is classic's, the default.
 * Under another policy only step 1 differs: the policy's isolate_locked
 * chooses the batch (sieve: its hand; s3fifo: the small or the main
 * queue's tail; mglru: the oldest generation's tail) and may move pages
 * between its queues while it looks;
 * no active list is shrunk, the pass is scaled by both lists, and steps 2
 * to 4 are the same code, except what is classic's two-list logic: a
 * page with PG_active is not "activated while isolated" (it is s3fifo's
 * main queue), and an in-use referenced page is kept where it was, not
 * activated.  kswapd, direct reclaim, the boost and the backoffs do not
 * know which policy chose the batch.
 *
 * Locks: page lock (trylock) → tree lock → lru lock → free lock; nothing
 * is held while a backoff sleeps, except the page locks of the batch
 * during a sleepy wait (as in the kernel's __remove_mapping).  kswapd_mtx
 * (kswapd.c) is the mutex of alloc_cond, broadcast when reclaim makes
 * progress; reclaim_progress, blunt_owner and tree_contended_ns are
 * atomics read without a lock.
 */
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "filemap.h"
#include "tctx.h"
#include "vmscan.h"
#include "node.h"
#include "bdi.h"
#include "pagewait.h"
#include "policy.h"
#include "tracepoint.h"

#define NS_PER_MS (1000ull * 1000)
#define SLEEPY_WAIT_NS (10ull * 1000 * 1000)

static unsigned long int_sqrt(unsigned long x)
{
	unsigned long r = 0;

	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

static bool inactive_is_low(struct pc_node *n)
{
	uint64_t inactive = atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	uint64_t active = atomic_load(&n->lru[PC_LRU_ACTIVE].nr);
	uint64_t gb = ((inactive + active) << PC_PAGE_SHIFT) >> 30;
	unsigned long ratio = gb ? int_sqrt(10 * gb) : 1;

	return inactive * ratio < active;
}

/* Pages were freed on @n: wake allocators and sleepy reclaimers. */
static void reclaim_progress(struct pc_node *n, unsigned long freed)
{
	atomic_fetch_add(&n->reclaim_progress, freed);
	pc__lock(&n->kswapd_mtx);
	pthread_cond_broadcast(&n->alloc_cond);
	pc__unlock(&n->kswapd_mtx);
}

/*
 * Take up to @nr pages from the tail of @n's list @lru into @pages, each
 * with a reference, off the list and PG_lru cleared; returns how many.  A
 * page whose count is 0 is being freed by its last user: left to it.
 */
static unsigned isolate_lru_locked(struct pc_cache *c, struct pc_node *n,
				   enum pc_lru_list lru, struct pc_page **pages,
				   unsigned long nr)
{
	struct pc_tctx *t = pc__held_ctx(c);
	uint32_t pfn = n->lru[lru].tail;
	unsigned count = 0;

	PC_ASSERT_HELD(&n->lru_lock);
	PC_ASSERT(nr <= PC_RECLAIM_BATCH);
	while (pfn != PC_NO_PFN && count < nr) {
		struct pc_page *p = pfn_page(c, pfn);

		pfn = p->lru_prev;
		/* Shared: recorded, for a reaper to put back if we die. */
		count += pc__isolate_page_locked(c, n, t, p, pages, count);
	}
	return count;
}

static void shrink_active(struct pc_cache *c, struct pc_node *n,
			  unsigned long nr)
{
	struct pc_page *batch[PC_RECLAIM_BATCH];
	struct pc_tctx *t = pc__held_ctx(c);
	unsigned count, moved = 0;

	nr = pc_min(nr, PC_RECLAIM_BATCH);
	pc__lock_counted(&n->lru_lock);
	count = isolate_lru_locked(c, n, PC_LRU_ACTIVE, batch, nr);
	pc__add(c, n->id, pgrefill, count);
	for (unsigned i = 0; i < count; i++) {
		struct pc_page *p = batch[i];

		page_set(p, PG_lru);
		pc__held_set(t, PC_HELD_ISO_AT + (int)i, c, p, 0);	/* back */
		if (page_test_clear(p, PG_referenced)) {
			pc__lru_add_locked(n, p, false);	/* rotate */
			continue;
		}
		page_clear(p, PG_active);
		page_set(p, PG_workingset);
		pc__lru_add_locked(n, p, false);
		pc_trace(c, PC_TR_DEACTIVATE, p, 0);
		moved++;
	}
	pc__unlock(&n->lru_lock);
	pc__add(c, n->id, pgdeactivate, moved);
	for (unsigned i = 0; i < count; i++) {
		pc__held_clear(t, PC_HELD_ISO_AT + (int)i);
		pc__put_page(c, batch[i]);
	}
}

static int cmp_mapping(const void *a, const void *b)
{
	uintptr_t ma = (uintptr_t)page_mapping(*(struct pc_page *const *)a);
	uintptr_t mb = (uintptr_t)page_mapping(*(struct pc_page *const *)b);

	return ma < mb ? -1 : ma > mb;
}

/*
 * =sleepy: wait for reclaim progress on our node, or SLEEPY_WAIT_NS of
 * the cache's clock (pc__clock: a test may drive it), looked at every
 * millisecond.
 */
static void sleepy_wait(struct pc_cache *c, struct pc_node *n)
{
	uint64_t p0 = atomic_load(&n->reclaim_progress);
	uint64_t deadline = pc__clock(c) + SLEEPY_WAIT_NS;

	pc__inc(c, n->id, reclaim_backoff_wait);
	pc__lock(&n->kswapd_mtx);
	while (atomic_load(&n->reclaim_progress) == p0 && !n->stop &&
	       pc__clock(c) < deadline) {
		struct timespec ts;

		pc__deadline(&ts, pc_min(deadline - pc__clock(c), NS_PER_MS));
		pc__cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts);
	}
	pc__unlock(&n->kswapd_mtx);
}

static void take_tree_lock(struct pc_cache *c, struct pc_mapping *m,
			   struct pc_scan_control *sc)
{
	enum pc_contention_backoff backoff = c->cfg.contention_backoff;

	if (pc__trylock_counted(&m->tree_lock))
		return;
	sc->contended = true;
	pc__inc(c, sc->node->id, reclaim_tree_contended);
	if (backoff == PC_BACKOFF_SLEEPY) {
		sleepy_wait(c, sc->node);
	} else if (backoff == PC_BACKOFF_BLUNT && sc->kswapd) {
		int none = -1;

		atomic_compare_exchange_strong(&c->blunt_owner, &none,
					       sc->node->id);
		atomic_store(&c->tree_contended_ns, pc__clock(c));
	}
	pc__lock_counted(&m->tree_lock);
	if (backoff == PC_BACKOFF_BLUNT && sc->kswapd)
		atomic_store(&c->tree_contended_ns, pc__clock(c));
}

/* Remove one locked, clean page (count frozen) under the held tree lock. */
static bool remove_locked(struct pc_cache *c, struct pc_mapping *m,
			  struct pc_page *p)
{
	void *shadow;

	PC_ASSERT_HELD(&m->tree_lock);
	PC_ASSERT(page_test(p, PG_locked) && page_mapping(p) == m);
	if (page_test(p, PG_dirty) || page_test(p, PG_writeback) ||
	    !page_ref_freeze(p, 2))
		return false;
	if (page_test(p, PG_dirty)) {	/* dirtied before the freeze */
		page_ref_unfreeze(p, 2);
		return false;
	}
	PC_ASSERT(!page_test(p, PG_writeback) && !page_test(p, PG_lru));
	shadow = pc__workingset_eviction(c, p);
	pc_trace(c, PC_TR_EVICT, p, PC_TRACE_EV_RECLAIM);
	pc__delete_from_page_cache_locked(m, p, shadow);
	return true;
}

/* Descriptors lie in frame order (c->pages): highest first. */
static int frame_desc(const void *a, const void *b)
{
	const struct pc_page *x = *(struct pc_page *const *)a;
	const struct pc_page *y = *(struct pc_page *const *)b;

	return (x < y) - (x > y);
}

void pc__free_batch(struct pc_cache *c, struct pc_page **pages, unsigned nr)
{
	qsort(pages, nr, sizeof(pages[0]), frame_desc);
	pc__free_pages(c, pages, nr);
}

/* Remove the clean pages in @pages: they are locked, we hold one ref. */
static unsigned remove_batch(struct pc_cache *c, struct pc_page **pages,
			     unsigned nr, bool *removed,
			     struct pc_scan_control *sc)
{
	struct pc_tctx *t = pc__held_ctx(c);
	unsigned done = 0;
	enum pc_batch_remove mode = c->cfg.batch_remove;

	if (mode == PC_REMOVE_SORTED)
		qsort(pages, nr, sizeof(*pages), cmp_mapping);
	for (unsigned i = 0; i < nr;) {
		struct pc_mapping *m = page_mapping(pages[i]);
		unsigned j = i + 1;

		if (mode != PC_REMOVE_OFF)
			while (j < nr && page_mapping(pages[j]) == m)
				j++;
		take_tree_lock(c, m, sc);
		for (unsigned k = i; k < j; k++) {
			/* Ours goes with the freeze: not recorded across it. */
			int h = pc__held_find(t, PC_HELD_ISO_AT,
					      PC_HELD_N(ISO), c, pages[k]);

			pc__held_clear(t, h);
			removed[k] = remove_locked(c, m, pages[k]);
			if (!removed[k])
				pc__held_set(t, h, c, pages[k], PC_HELD_ISO);
			done += removed[k];
		}
		pc__unlock(&m->tree_lock);
		i = j;
	}
	return done;
}

/* Back on their lists, head first; activated pages go to the active list. */
static void putback(struct pc_cache *c, struct pc_node *n,
		    struct pc_page **pages, unsigned nr)
{
	struct pc_tctx *t = pc__held_ctx(c);
	int held[PC_RECLAIM_BATCH];
	unsigned activated = 0;
	bool classic = pc__policy_classic(c);	/* else PG_active: s3fifo's M */

	if (!nr)
		return;
	PC_ASSERT(nr <= PC_RECLAIM_BATCH);
	pc__lock_counted(&n->lru_lock);
	for (unsigned i = 0; i < nr; i++) {
		page_set(pages[i], PG_lru);
		pc__lru_add_locked(n, pages[i], false);
		/* On its list again: only our reference is left to give. */
		held[i] = pc__held_find(t, PC_HELD_ISO_AT, PC_HELD_N(ISO), c,
					pages[i]);
		pc__held_set(t, held[i], c, pages[i], 0);
		if (classic && page_test(pages[i], PG_active)) {
			activated++;
			pc_trace(c, PC_TR_ACTIVATE, pages[i], 0);
		}
	}
	pc__unlock(&n->lru_lock);
	if (activated)
		pc__add(c, n->id, pgactivate, activated);
	for (unsigned i = 0; i < nr; i++) {
		pc__held_clear(t, held[i]);
		pc__put_page(c, pages[i]);
	}
}

static void shrink_inactive(struct pc_cache *c, struct pc_node *n,
			    unsigned long nr, struct pc_scan_control *sc)
{
	struct pc_page *iso[PC_RECLAIM_BATCH], *keep[PC_RECLAIM_BATCH];
	struct pc_page *clean[PC_RECLAIM_BATCH];
	bool removed[PC_RECLAIM_BATCH];
	unsigned count, nkeep = 0, nclean = 0, freed = 0;
	bool wake_flusher = false, classic = pc__policy_classic(c);

	nr = pc_min(nr, PC_RECLAIM_BATCH);
	pc__lock_counted(&n->lru_lock);
	count = classic ? isolate_lru_locked(c, n, PC_LRU_INACTIVE, iso, nr)
			: pc__policy_ops(c)->isolate_locked(c, n, iso,
							    (unsigned)nr);
	pc__unlock(&n->lru_lock);
	PC_PARK(PC_PARK_ISOLATED);
	sc->nr_scanned += count;
	if (sc->kswapd)
		pc__add(c, n->id, pgscan_kswapd, count);
	else
		pc__add(c, n->id, pgscan_direct, count);

	for (unsigned i = 0; i < count; i++) {
		struct pc_page *p = iso[i];

		if (!pc__trylock_page(p)) {
			sc->nr_busy++;
			keep[nkeep++] = p;
			continue;
		}
		if (!page_mapping(p)) {	/* truncated: ours is the last ref */
			pc__unlock_page(&c->wait, p);
			pc__held_clear(pc__held_ctx(c), PC_HELD_ISO_AT + (int)i);
			pc__put_page(c, p);
			freed++;
			continue;
		}
		if (classic && page_test(p, PG_active)) {
			/* activated while isolated (deferred activation) */
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		if (page_test(p, PG_writeback)) {
			sc->nr_writeback_tail++;
			sc->nr_busy++;
			page_set(p, PG_reclaim);
			pc__inc(c, n->id, pgsteal_writeback_skip);
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		if (page_test(p, PG_dirty)) {
			sc->nr_dirty++;
			sc->nr_busy++;
			page_set(p, PG_reclaim);
			wake_flusher = true;
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		if (page_count(p) > 2) {
			/*
			 * In use (pinned, or a reader between lookup and
			 * put): it cannot go now.  Referenced as well, it is
			 * hot - activate it (the kernel's referenced mapped
			 * page); otherwise it rotates to the inactive head.
			 */
			if (classic && page_test_clear(p, PG_referenced)) {
				page_set(p, PG_active);
				pc__workingset_activation(c, p);
			}
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		page_clear(p, PG_referenced);
		clean[nclean++] = p;
	}
	if (nclean) {
		unsigned done = remove_batch(c, clean, nclean, removed, sc), nf = 0;

		for (unsigned i = 0; i < nclean; i++) {
			struct pc_page *p = clean[i];

			pc__unlock_page(&c->wait, p);
			if (removed[i])	/* count frozen at 0 by the removal */
				clean[nf++] = p;
			else
				keep[nkeep++] = p;
		}
		pc__free_batch(c, clean, nf);	/* one free-lock hold */
		freed += done;
	}
	putback(c, n, keep, nkeep);
	sc->nr_reclaimed += freed;
	if (sc->kswapd)
		pc__add(c, n->id, pgsteal_kswapd, freed);
	else
		pc__add(c, n->id, pgsteal_direct, freed);
	if (freed)
		reclaim_progress(n, freed);
	if (wake_flusher) {
		pc__inc(c, n->id, dirty_reclaim_handoff);
		pc__bdi_wakeup_all(c, PC_WB_RECLAIM);
	}
}

/*
 * Another policy (policy.h) than classic: its isolation chooses among all
 * the node's pages, no list is refilled from the other; the priority
 * scales the pass by both lists.
 */
static void shrink_node_policy(struct pc_cache *c, struct pc_node *n,
			       struct pc_scan_control *sc)
{
	unsigned long nr = pc_max(PC_RECLAIM_BATCH,
				  pc__policy_nr_pages(n) >> sc->priority);
	unsigned long target = sc->nr_reclaimed + PC_RECLAIM_BATCH;

	while (nr > 0 && sc->nr_reclaimed < target) {
		unsigned long batch = pc_min(nr, PC_RECLAIM_BATCH);

		shrink_inactive(c, n, batch, sc);
		nr -= batch;
		if (!pc__policy_nr_pages(n))
			break;
	}
}

void pc__shrink_node(struct pc_cache *c, struct pc_node *n,
		     struct pc_scan_control *sc)
{
	uint64_t inactive = atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	unsigned long nr = pc_max(PC_RECLAIM_BATCH, inactive >> sc->priority);
	unsigned long target = sc->nr_reclaimed + PC_RECLAIM_BATCH;

	if (!pc__policy_classic(c)) {
		shrink_node_policy(c, n, sc);
		return;
	}
	if (inactive_is_low(n))
		shrink_active(c, n, PC_RECLAIM_BATCH);
	while (nr > 0 && sc->nr_reclaimed < target) {
		unsigned long batch = pc_min(nr, PC_RECLAIM_BATCH);

		shrink_inactive(c, n, batch, sc);
		nr -= batch;
		if (inactive_is_low(n))
			shrink_active(c, n, PC_RECLAIM_BATCH);
		if (!atomic_load(&n->lru[PC_LRU_INACTIVE].nr) &&
		    !atomic_load(&n->lru[PC_LRU_ACTIVE].nr))
			break;
	}
}

/*
 * Direct reclaim happened on @n although its kswapd runs: kswapd was woken
 * too late for this allocation rate (or this machine's scheduling), so
 * widen the band it works in.  The boost decays in balance_node.
 */
static void boost_watermarks(struct pc_cache *c, struct pc_node *n)
{
	uint64_t f = n->nr_frames, cap = f / 16, b;

	if (!c->cfg.kswapd)
		return;
	/* high + 2 * boost stays at most half the node. */
	cap = pc_min(cap, f / 2 > n->wmark_high ? (f / 2 - n->wmark_high) / 2 : 0);
	b = atomic_load_explicit(&n->wmark_boost, memory_order_relaxed);
	if (b < cap)
		atomic_store_explicit(&n->wmark_boost,
				      pc_min(cap, b + PC_RECLAIM_BATCH),
				      memory_order_relaxed);
}

/*
 * kswapd starts: the node had @woken_at free frames when the wake was sent
 * and has fewer now - what allocations took while kswapd waited for a CPU.
 * Low must stay that far (twice: the next wait may be longer) above min,
 * or the next wait ends in direct reclaim: raise the boost to make it so.
 */
void pc__boost_for_latency(struct pc_cache *c, struct pc_node *n,
			   uint64_t woken_at)
{
	uint64_t now = atomic_load(&n->nr_free), f = n->nr_frames, cap, want, b;

	if (!c->cfg.kswapd || woken_at <= now)
		return;
	want = 2 * (woken_at - now);
	if (want <= n->wmark_low - n->wmark_min)
		return;
	want -= n->wmark_low - n->wmark_min;
	cap = pc_min(f / 16, f / 2 > n->wmark_high ? (f / 2 - n->wmark_high) / 2 : 0);
	b = atomic_load_explicit(&n->wmark_boost, memory_order_relaxed);
	if (b < want)
		atomic_store_explicit(&n->wmark_boost, pc_min(cap, want),
				      memory_order_relaxed);
}

unsigned long pc__direct_reclaim(struct pc_cache *c, struct pc_node *n,
				 unsigned long *busy)
{
	struct pc_tctx *t = pc__tctx(c);
	struct pc_scan_control sc = { .node = n, .kswapd = false };

	pc__inc(c, n->id, allocstall);
	boost_watermarks(c, n);
	if (t) {
		t->in_reclaim = true;
		pc__lru_drain(c, t);
	}
	for (sc.priority = PC_DEF_PRIORITY; sc.priority >= 0; sc.priority--) {
		pc__shrink_node(c, n, &sc);
		if (sc.nr_reclaimed >= PC_RECLAIM_BATCH)
			break;
		if (sc.priority == PC_DEF_PRIORITY - 2)
			pc__tctx_drain_all(c);
	}
	if (t)
		t->in_reclaim = false;
	if (busy)
		*busy = sc.nr_busy;
	return sc.nr_reclaimed;
}

unsigned long pc__reclaim_tail(struct pc_cache *c, struct pc_node *n,
			       unsigned nr)
{
	struct pc_scan_control sc = { .node = n, .kswapd = false,
				   .priority = PC_DEF_PRIORITY };

	shrink_inactive(c, n, pc_min(nr, PC_RECLAIM_BATCH), &sc);
	return sc.nr_reclaimed;
}
