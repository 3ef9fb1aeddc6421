/*
 * vmscan.c - reclaim: kswapd, direct reclaim, shrinking the LRU lists.
 *
 * Each node has a kswapd thread.  An allocation that leaves a node at or
 * below its low watermark wakes it; kswapd reclaims until the node is above
 * high, then sleeps.  An allocation that finds every node at min reclaims
 * directly (pc__try_to_free_pages: allocstall, priority loop from 12 down
 * to 0, scanning list >> priority pages in batches of 32).
 *
 * Shrinking the inactive list (shrink_inactive):
 *   1. isolate: under lru_lock take up to 32 pages from the tail, each with
 *      a reference (page_get_unless_zero) and PG_lru cleared;
 *   2. decide, page lock by trylock, no lru lock held:
 *        under writeback   -> mark PG_reclaim, keep (kswapd counts them;
 *                             a tail full of them throttles kswapd)
 *        dirty             -> mark PG_reclaim, hand to the flusher, keep
 *        truncated         -> drop our reference (frees it)
 *        clean             -> remove from its mapping, leaving a shadow
 *   3. remove: with reclaim.batch_remove the clean pages are grouped by
 *      mapping (=sorted: the batch is sorted by mapping first; =on: runs of
 *      consecutive pages only, seed 000's "bourney") and each group is
 *      removed under one tree-lock hold; off: one hold per page (vanilla);
 *   4. put back what was kept (one lru_lock hold), free what was removed.
 * A page is removed only if its count can be frozen at exactly 2 (the
 * mapping's reference and ours): a reader's speculative reference makes
 * the freeze fail and the page stays.
 *
 * Tree-lock contention (seed 000): with reclaim.contention_backoff=sleepy a
 * kswapd that found the tree lock contended sleeps until its node makes
 * progress or 10 ms pass; with =blunt, while any tree lock is contended,
 * only one kswapd (the first to claim c->blunt_owner) keeps reclaiming and
 * the others stall.
 *
 * Shrinking the active list moves pages to the inactive list; pages
 * referenced since they were last looked at rotate to the active head
 * instead.  The inactive list is "low" when inactive * sqrt(10 * GiB) <
 * active (inactive_list_is_low).
 *
 * Locks: page lock (trylock) → tree lock → lru lock → free lock; nothing
 * else is held while reclaiming.
 */
#include <stdlib.h>
#include <time.h>

#include "internal.h"

#define DEF_PRIORITY 12

struct scan_control {
	bool kswapd;
	int priority;
	unsigned long nr_scanned;
	unsigned long nr_reclaimed;
	unsigned long nr_writeback_tail;	/* isolated pages under writeback */
	unsigned long nr_dirty;
	bool contended;
};

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

static void shrink_active(struct pc_cache *c, struct pc_node *n,
			  unsigned long nr)
{
	struct pc_page *batch[PC_RECLAIM_BATCH];
	unsigned count = 0, moved = 0;

	nr = pc_min(nr, PC_RECLAIM_BATCH);
	pc__lock(&n->lru_lock);
	uint32_t pfn = n->lru[PC_LRU_ACTIVE].tail;
	while (pfn != PC_NO_PFN && count < nr) {
		struct pc_page *p = pfn_page(c, pfn);

		pfn = p->lru_prev;
		if (!page_get_unless_zero(p))
			continue;
		page_clear(p, PG_lru);
		pc__lru_del_locked(n, p);
		batch[count++] = p;
	}
	pc__add(c, n->id, pgrefill, count);
	for (unsigned i = 0; i < count; i++) {
		struct pc_page *p = batch[i];

		page_set(p, PG_lru);
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
	for (unsigned i = 0; i < count; i++)
		pc__put_page(c, batch[i]);
}

static int cmp_mapping(const void *a, const void *b)
{
	uintptr_t ma = (uintptr_t)page_mapping(*(struct pc_page *const *)a);
	uintptr_t mb = (uintptr_t)page_mapping(*(struct pc_page *const *)b);

	return ma < mb ? -1 : ma > mb;
}

static void take_tree_lock(struct pc_cache *c, struct pc_mapping *m,
			   struct scan_control *sc)
{
	if (pc__trylock(&m->tree_lock))
		return;
	sc->contended = true;
	if (sc->kswapd && c->cfg.contention_backoff)
		atomic_store_explicit(&c->tree_contended, 1, memory_order_relaxed);
	pc__lock(&m->tree_lock);
}

/* Remove one locked, clean page (count frozen) under the held tree lock. */
static bool remove_locked(struct pc_cache *c, struct pc_mapping *m,
			  struct pc_page *p)
{
	void *shadow;

	if (page_test(p, PG_dirty) || page_test(p, PG_writeback) ||
	    !page_ref_freeze(p, 2))
		return false;
	if (page_test(p, PG_dirty)) {	/* dirtied before the freeze */
		page_ref_unfreeze(p, 2);
		return false;
	}
	shadow = pc__workingset_eviction(c, p);
	pc_trace(c, PC_TR_EVICT, p, 0);
	pc__delete_from_page_cache_locked(m, p, shadow);
	return true;
}

bool pc__remove_mapping(struct pc_cache *c, struct pc_page *p, bool shadow)
{
	struct pc_mapping *m = page_mapping(p);
	bool ok;

	(void)shadow;
	pc__lock(&m->tree_lock);
	ok = remove_locked(c, m, p);
	pc__unlock(&m->tree_lock);
	return ok;
}

/* Remove the clean pages in @pages: they are locked, we hold one ref. */
static unsigned remove_batch(struct pc_cache *c, struct pc_page **pages,
			     unsigned nr, bool *removed,
			     struct scan_control *sc)
{
	unsigned done = 0;
	int mode = c->cfg.batch_remove;

	if (mode == 2)
		qsort(pages, nr, sizeof(*pages), cmp_mapping);
	for (unsigned i = 0; i < nr;) {
		struct pc_mapping *m = page_mapping(pages[i]);
		unsigned j = i + 1;

		if (mode)
			while (j < nr && page_mapping(pages[j]) == m)
				j++;
		take_tree_lock(c, m, sc);
		for (unsigned k = i; k < j; k++) {
			removed[k] = remove_locked(c, m, pages[k]);
			done += removed[k];
		}
		pc__unlock(&m->tree_lock);
		i = j;
	}
	return done;
}

static void putback(struct pc_cache *c, struct pc_node *n,
		    struct pc_page **pages, unsigned nr)
{
	if (!nr)
		return;
	pc__lock(&n->lru_lock);
	for (unsigned i = 0; i < nr; i++) {
		page_set(pages[i], PG_lru);
		pc__lru_add_locked(n, pages[i], false);
	}
	pc__unlock(&n->lru_lock);
	for (unsigned i = 0; i < nr; i++)
		pc__put_page(c, pages[i]);
}

static void shrink_inactive(struct pc_cache *c, struct pc_node *n,
			    unsigned long nr, struct scan_control *sc)
{
	struct pc_page *iso[PC_RECLAIM_BATCH], *keep[PC_RECLAIM_BATCH];
	struct pc_page *clean[PC_RECLAIM_BATCH];
	bool removed[PC_RECLAIM_BATCH];
	unsigned count = 0, nkeep = 0, nclean = 0, freed = 0;
	bool wake_flusher = false;

	nr = pc_min(nr, PC_RECLAIM_BATCH);
	pc__lock(&n->lru_lock);
	uint32_t pfn = n->lru[PC_LRU_INACTIVE].tail;
	while (pfn != PC_NO_PFN && count < nr) {
		struct pc_page *p = pfn_page(c, pfn);

		pfn = p->lru_prev;
		if (!page_get_unless_zero(p))
			continue;	/* being freed by its last user */
		page_clear(p, PG_lru);
		pc__lru_del_locked(n, p);
		iso[count++] = p;
	}
	pc__unlock(&n->lru_lock);
	sc->nr_scanned += count;
	if (sc->kswapd)
		pc__add(c, n->id, pgscan_kswapd, count);
	else
		pc__add(c, n->id, pgscan_direct, count);

	for (unsigned i = 0; i < count; i++) {
		struct pc_page *p = iso[i];

		if (!pc__trylock_page(p)) {
			keep[nkeep++] = p;
			continue;
		}
		if (!page_mapping(p)) {	/* truncated: ours is the last ref */
			pc__unlock_page(&c->wait, p);
			pc__put_page(c, p);
			freed++;
			continue;
		}
		if (page_test(p, PG_writeback)) {
			sc->nr_writeback_tail++;
			page_set(p, PG_reclaim);
			pc__inc(c, n->id, pgsteal_writeback_skip);
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		if (page_test(p, PG_dirty)) {
			sc->nr_dirty++;
			page_set(p, PG_reclaim);
			wake_flusher = true;
			pc__unlock_page(&c->wait, p);
			keep[nkeep++] = p;
			continue;
		}
		page_clear(p, PG_referenced);
		clean[nclean++] = p;
	}
	if (nclean) {
		unsigned done = remove_batch(c, clean, nclean, removed, sc);

		for (unsigned i = 0; i < nclean; i++) {
			struct pc_page *p = clean[i];

			pc__unlock_page(&c->wait, p);
			if (removed[i]) {
				/* Count frozen at 0 by the removal: free it. */
				pc__free_page(c, p);
			} else {
				keep[nkeep++] = p;
			}
		}
		freed += done;
	}
	putback(c, n, keep, nkeep);
	sc->nr_reclaimed += freed;
	if (sc->kswapd)
		pc__add(c, n->id, pgsteal_kswapd, freed);
	else
		pc__add(c, n->id, pgsteal_direct, freed);
	if (freed)
		atomic_fetch_add(&n->reclaim_progress, freed);
	if (wake_flusher) {
		pc__inc(c, n->id, dirty_reclaim_handoff);
		pc__bdi_wakeup_all(c, PC_WB_RECLAIM);
	}
}

static void shrink_node(struct pc_cache *c, struct pc_node *n,
			struct scan_control *sc)
{
	uint64_t inactive = atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	unsigned long nr = pc_max(PC_RECLAIM_BATCH, inactive >> sc->priority);
	unsigned long target = sc->nr_reclaimed + PC_RECLAIM_BATCH;

	if (inactive_is_low(n))
		shrink_active(c, n, PC_RECLAIM_BATCH);
	while (nr > 0 && sc->nr_reclaimed < target) {
		unsigned long batch = pc_min(nr, PC_RECLAIM_BATCH);

		shrink_inactive(c, n, batch, sc);
		nr -= batch;
		if (inactive_is_low(n))
			shrink_active(c, n, PC_RECLAIM_BATCH);
		if (!atomic_load(&n->lru[PC_LRU_INACTIVE].nr))
			break;
	}
}

unsigned long pc__try_to_free_pages(struct pc_cache *c, struct pc_node *n)
{
	struct pc_tctx *t = pc__tctx(c);
	struct scan_control sc = { .kswapd = false };

	pc__inc(c, n->id, allocstall);
	if (t) {
		t->in_reclaim = true;
		pc__lru_drain(c, t);
	}
	for (sc.priority = DEF_PRIORITY; sc.priority >= 0; sc.priority--) {
		shrink_node(c, n, &sc);
		if (sc.nr_reclaimed >= PC_RECLAIM_BATCH)
			break;
		if (sc.priority == DEF_PRIORITY - 2)
			pc__tctx_drain_all(c);
	}
	if (t)
		t->in_reclaim = false;
	return sc.nr_reclaimed;
}

/* ------------------------------------------------------------------ */
/* kswapd                                                              */

static bool node_balanced(struct pc_node *n)
{
	return atomic_load(&n->nr_free) > n->wmark_high;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* seed 000 "blunt": one kswapd reclaims while a tree lock is contended. */
static bool blunt_stall(struct pc_cache *c, struct pc_node *n)
{
	int owner = -1;

	if (c->cfg.contention_backoff != 2 ||
	    !atomic_load_explicit(&c->tree_contended, memory_order_relaxed))
		return false;
	if (atomic_compare_exchange_strong(&c->blunt_owner, &owner, n->id) ||
	    owner == n->id)
		return false;
	return true;
}

static void balance_node(struct pc_cache *c, struct pc_node *n)
{
	struct scan_control sc = { .kswapd = true };

	pc__inc(c, n->id, pageoutrun);
	for (sc.priority = DEF_PRIORITY; sc.priority >= 0 && !n->stop;) {
		unsigned long before = sc.nr_reclaimed;

		if (node_balanced(n))
			break;
		if (blunt_stall(c, n)) {
			sleep_ms(1);
			atomic_store(&c->tree_contended, 0);
			continue;
		}
		sc.contended = false;
		sc.nr_writeback_tail = 0;
		sc.nr_scanned = 0;
		shrink_node(c, n, &sc);
		pthread_mutex_lock(&n->kswapd_mtx);
		pthread_cond_broadcast(&n->alloc_cond);
		pthread_mutex_unlock(&n->kswapd_mtx);
		if (sc.contended && c->cfg.contention_backoff == 1) {
			/* sleepy: wait for progress here or 10 ms. */
			uint64_t p0 = atomic_load(&n->reclaim_progress);

			for (int i = 0; i < 10 && atomic_load(&n->reclaim_progress) == p0; i++)
				sleep_ms(1);
		}
		if (sc.nr_scanned && sc.nr_writeback_tail * 2 >= sc.nr_scanned) {
			/* The tail is mostly under writeback: let it finish. */
			pc__inc(c, n->id, kswapd_throttle);
			sleep_ms(1);
		}
		if (sc.nr_reclaimed == before)
			sc.priority--;
	}
	if (atomic_load(&c->blunt_owner) == n->id)
		atomic_store(&c->blunt_owner, -1);
	pthread_mutex_lock(&n->kswapd_mtx);
	pthread_cond_broadcast(&n->alloc_cond);
	pthread_mutex_unlock(&n->kswapd_mtx);
}

static void *kswapd(void *arg)
{
	struct pc_node *n = arg;
	struct pc_cache *c = n->cache;

	pc_thread_set_node(c, n->id);
	pthread_mutex_lock(&n->kswapd_mtx);
	while (!n->stop) {
		if (!n->kswapd_wake) {
			pthread_cond_wait(&n->kswapd_cond, &n->kswapd_mtx);
			continue;
		}
		n->kswapd_wake = false;
		pthread_mutex_unlock(&n->kswapd_mtx);
		atomic_store(&n->kswapd_active, 1);
		balance_node(c, n);
		atomic_store(&n->kswapd_active, 0);
		pthread_mutex_lock(&n->kswapd_mtx);
	}
	pthread_mutex_unlock(&n->kswapd_mtx);
	return NULL;
}

void pc__wakeup_kswapd(struct pc_cache *c, struct pc_node *n)
{
	if (!c->cfg.kswapd || !n->kswapd_started ||
	    atomic_load_explicit(&n->kswapd_active, memory_order_relaxed))
		return;
	pthread_mutex_lock(&n->kswapd_mtx);
	if (!n->kswapd_wake) {
		n->kswapd_wake = true;
		pc__inc(c, n->id, kswapd_wakeup);
		pthread_cond_signal(&n->kswapd_cond);
	}
	pthread_mutex_unlock(&n->kswapd_mtx);
}

int pc__kswapd_start(struct pc_cache *c)
{
	if (!c->cfg.kswapd)
		return 0;
	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		if (pthread_create(&n->kswapd, NULL, kswapd, n) != 0)
			return -EAGAIN;
		n->kswapd_started = true;
	}
	return 0;
}

void pc__kswapd_stop(struct pc_cache *c)
{
	if (!c->nodes)
		return;
	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		if (!n->kswapd_started)
			continue;
		pthread_mutex_lock(&n->kswapd_mtx);
		n->stop = true;
		pthread_cond_signal(&n->kswapd_cond);
		pthread_mutex_unlock(&n->kswapd_mtx);
		pthread_join(n->kswapd, NULL);
		n->kswapd_started = false;
	}
}
