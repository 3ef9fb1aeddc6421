/*
 * resize.c - pc_cache_resize: the budget grows or shrinks while the cache
 * is in use.
 *
 * A node's share of the budget is the first nr_frames frames of its span
 * (node.c has the picture).  Growing raises the share: the new frames are
 * never-used memory, counted free at once and initialized on demand like
 * any other.  Shrinking lowers it to `per` and then vacates the frames
 * above, in this order (each node in turn; one resize at a time, under
 * c->resize_lock, with none of the ranked locks held):
 *
 *   1. under free_lock: nr_frames = per, watermarks from it; the frames
 *      above that sit on the free list are taken off it and retired (count
 *      PC_REF_RETIRED: below 1, so no reference can be taken), never-used
 *      ones leave the count; what is left above is in use, counted in
 *      nr_retiring.  From now on no frame above per is handed out, and
 *      pc__free_page retires one that is freed there;
 *   2. dirty pages are written back and waited for (pc__bdi_sync_all once
 *      for the whole cache, then page by page for pages dirtied since):
 *      never dropped;
 *   3. each page above per is evicted as reclaim evicts it (page lock,
 *      off its LRU, count frozen at the mapping's and ours, a shadow
 *      left, freed - so retired); a page in a per-thread LRU batch is
 *      retried after draining the batches, one under writeback after the
 *      write ends, one pinned (pc_get_page, a reader) after a wait;
 *   4. when pinned pages still hold frames after PIN_WAIT_NS without
 *      progress, the share stops above the highest of them: the frames
 *      between per and there come back into service (retired ones onto
 *      the free list), and the call returns -EBUSY with the budget where
 *      it got to (nr_budget_pages);
 *   5. the frames above the share are given back to the system
 *      (discard(): MADV_DONTNEED, a shared cache's memfd MADV_REMOVE):
 *      their data from the first whole 2 MiB step, their descriptors -
 *      after a grace period, so no speculative reader still looks at
 *      one - from the first whole 2 MiB of descriptors, and hw
 *      comes down to the share, so a later growth initializes them anew;
 *      memory kswapd faulted in ahead (populate.c) above the share goes
 *      too, under populate_mtx so that none is being populated meanwhile.
 *
 * Why a retired descriptor is safe: its memory is never unmapped, only
 * given back (it then reads as zeros); its count is 0, so a speculative
 * reader that found it before it left its tree fails get_unless_zero and
 * looks again; nothing else reaches a frame off every list.
 *
 * Then the cache-wide figures follow the budget: c->nr_frames, the shadow
 * bound (c->max_shadows, trimmed at once when over), and the dirty limits
 * (pc__update_dirty_limits).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "bdi.h"
#include "internal.h"
#include "dirty.h"
#include "filemap.h"
#include "mem.h"
#include "node.h"
#include "pagewait.h"
#include "tctx.h"
#include "trace_fmt.h"
#include "tracepoint.h"
#include "tree.h"
#include "vmscan.h"

#define PIN_WAIT_NS (250ull * 1000 * 1000)	/* no progress: -EBUSY */
#define RETRY_WAIT_NS (1000ull * 1000)		/* between passes */
#define HUGE_BYTES (2ull << 20)
#define DESC_STEP (HUGE_BYTES / sizeof(struct pc_page))	/* frames */

enum { EVICTED, RETRY, PINNED };

static uint32_t round_up(uint32_t v, uint32_t step)
{
	return (uint32_t)(((uint64_t)v + step - 1) / step * step);
}

/* ------------------------------------------------------------------ */
/* Growing.                                                            */

static void grow_node(struct pc_cache *c, struct pc_node *n, uint32_t per)
{
	pc__lock_counted(&n->free_lock);
	PC_ASSERT(atomic_load(&n->hw) <= atomic_load(&n->nr_frames));
	atomic_fetch_add(&n->nr_free, per - atomic_load(&n->nr_frames));
	atomic_store(&n->nr_frames, per);
	pc__node_watermarks_locked(c, n);
	pc__unlock(&n->free_lock);
	pc__alloc_wake(n);	/* allocators waiting */
}

/* ------------------------------------------------------------------ */
/* Shrinking, step 1: the share comes down.                            */

static void lower_share(struct pc_cache *c, struct pc_node *n, uint32_t per)
{
	uint32_t old, hw, *link, removed = 0;

	pc__lock_counted(&n->free_lock);
	old = atomic_load(&n->nr_frames);
	hw = atomic_load(&n->hw);
	atomic_store(&n->nr_frames, per);
	pc__node_watermarks_locked(c, n);
	if (old > pc_max(hw, per))	/* never used, above the new share */
		atomic_fetch_sub(&n->nr_free, old - pc_max(hw, per));
	for (link = &n->free_head; *link != PC_NO_PFN;) {
		struct pc_page *p = pfn_page(c, *link);

		if (*link - n->first_pfn >= per) {
			*link = p->lru_next;
			p->lru_next = PC_NO_PFN;
			atomic_store(&p->refcount, PC_REF_RETIRED);
			removed++;
		} else {
			link = &p->lru_next;
		}
	}
	atomic_fetch_sub(&n->nr_free, removed);
	if (hw > per)
		atomic_fetch_add(&n->nr_retiring, hw - per - removed);
	pc__unlock(&n->free_lock);
}

/* ------------------------------------------------------------------ */
/* Step 2 and 3: one page above the share.                             */

/* Write @p's page of @m (locked by us, dirty or under writeback) and
 * wait for it; the page is unlocked on return. */
static void write_and_wait(struct pc_cache *c, struct pc_mapping *m,
			   struct pc_page *p)
{
	uint64_t index = page_index(p);

	if (!pc__mapping_tryget(m)) {	/* being torn down: it writes back */
		pc__unlock_page(&c->wait, p);
		return;
	}
	pc__unlock_page(&c->wait, p);
	if (page_test(p, PG_dirty))
		pc__writeback_range(m, index, index, true, NULL);
	pc__wait_writeback_range(m, index, index);
	pc__mapping_put(m);
}

/*
 * Evict @p, on which we hold a reference, from its mapping: EVICTED when
 * it is gone (ours or someone else's doing: a frame freed above the share
 * retires itself), RETRY when it should be looked at again (written back
 * just now, in an LRU batch, isolated by reclaim), PINNED when someone
 * else holds a reference.  Our reference is dropped.
 */
static int evict(struct pc_cache *c, struct pc_node *n, struct pc_page *p)
{
	struct pc_mapping *m = page_mapping(p);
	bool on_lru, removed = false;
	void *shadow;

	if (!m) {
		pc__put_page(c, p);
		return EVICTED;		/* leaving already */
	}
	pc__lock_page(&c->wait, p);
	if (page_mapping(p) != m) {
		pc__unlock_page(&c->wait, p);
		pc__put_page(c, p);
		return RETRY;
	}
	if (page_test(p, PG_dirty) || page_test(p, PG_writeback)) {
		write_and_wait(c, m, p);	/* never dropped: written */
		pc__put_page(c, p);
		return RETRY;
	}
	pc__lock_counted(&n->lru_lock);
	on_lru = page_test_clear(p, PG_lru);
	if (on_lru)
		pc__lru_del_locked(n, p);
	pc__unlock(&n->lru_lock);
	if (!on_lru) {
		pc__unlock_page(&c->wait, p);
		pc__put_page(c, p);
		return RETRY;
	}
	pc__lock_counted(&m->tree_lock);
	if (page_ref_freeze(p, 2)) {	/* the mapping's and ours */
		if (page_test(p, PG_dirty)) {
			page_ref_unfreeze(p, 2);
		} else {
			shadow = pc__workingset_eviction(c, p);
			pc_trace(c, PC_TR_EVICT, p, PC_TRACE_EV_RECLAIM);
			pc__delete_from_page_cache_locked(m, p, shadow);
			removed = true;
		}
	}
	pc__unlock(&m->tree_lock);
	if (!removed) {		/* back where it was, as reclaim puts back */
		int r = page_test(p, PG_dirty) ? RETRY : PINNED;

		pc__lock_counted(&n->lru_lock);
		page_set(p, PG_lru);
		pc__lru_add_locked(n, p, false);
		pc__unlock(&n->lru_lock);
		pc__unlock_page(&c->wait, p);
		pc__put_page(c, p);
		return r;
	}
	pc__unlock_page(&c->wait, p);
	pc__free_page(c, p);	/* frozen at 0, off its LRU: retired */
	pc__inc(c, n->id, pgsteal_resize);
	return EVICTED;
}

/* One pass over the frames above the share; returns the pinned ones. */
static uint64_t vacate_pass(struct pc_cache *c, struct pc_node *n,
			    uint32_t per, uint64_t *evicted)
{
	uint32_t hw = atomic_load(&n->hw);
	uint64_t pinned = 0;

	for (uint32_t f = per; f < hw; f++) {
		struct pc_page *p = pfn_page(c, n->first_pfn + f);
		int r;

		if (!atomic_load_explicit(&n->nr_retiring, memory_order_relaxed))
			break;
		if (!page_get_unless_zero(p))
			continue;	/* retired, or on its way there */
		r = evict(c, n, p);
		if (r == EVICTED)
			(*evicted)++;
		else if (r == PINNED)
			pinned++;
	}
	return pinned;
}

/* Sleep @ns, or less if someone frees pages on @n meanwhile. */
static void wait_a_little(struct pc_node *n, uint64_t ns)
{
	struct timespec ts;

	pc__deadline(&ts, ns);
	pc__lock(&n->kswapd_mtx);
	pc__cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts);
	pc__unlock(&n->kswapd_mtx);
}

/* Steps 2 and 3 until nothing is left above @per, or only pinned pages
 * that stay so for PIN_WAIT_NS.  Returns 0 or -EBUSY. */
static int vacate(struct pc_cache *c, struct pc_node *n, uint32_t per)
{
	uint64_t last_progress = pc__now_ns();

	while (atomic_load(&n->nr_retiring)) {
		uint64_t evicted = 0, left = atomic_load(&n->nr_retiring);

		pc__tctx_drain_all(c);	/* pages in per-thread LRU batches */
		vacate_pass(c, n, per, &evicted);
		if (!atomic_load(&n->nr_retiring))
			break;
		if (evicted || atomic_load(&n->nr_retiring) < left)
			last_progress = pc__now_ns();
		else if (pc__now_ns() - last_progress > PIN_WAIT_NS)
			return -EBUSY;
		wait_a_little(n, RETRY_WAIT_NS);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Step 4: pinned pages keep the share above them.                     */

static uint32_t settle_above_pins(struct pc_cache *c, struct pc_node *n,
				  uint32_t per)
{
	uint32_t hw, top = per;

	pc__lock_counted(&n->free_lock);
	hw = atomic_load(&n->hw);
	for (uint32_t f = per; f < hw; f++)
		if (page_count(pfn_page(c, n->first_pfn + f)) != PC_REF_RETIRED)
			top = f + 1;	/* in use: the share must hold it */
	for (uint32_t f = per; f < top; f++) {
		struct pc_page *p = pfn_page(c, n->first_pfn + f);

		if (page_count(p) == PC_REF_RETIRED) {	/* back into service */
			atomic_store(&p->refcount, 0);
			p->lru_next = n->free_head;
			n->free_head = n->first_pfn + f;
			atomic_fetch_add(&n->nr_free, 1);
		} else {
			atomic_fetch_sub(&n->nr_retiring, 1);
		}
	}
	atomic_store(&n->nr_frames, top);
	pc__node_watermarks_locked(c, n);
	pc__unlock(&n->free_lock);
	return top;
}

/* ------------------------------------------------------------------ */
/* Step 5: memory back to the system.                                  */

/*
 * Memory back to the system, as the cache's provider gives it back
 * (mem.h: a private cache's anonymous memory by MADV_DONTNEED, a shared
 * cache's memfd by MADV_REMOVE, a hole punched in the file).
 */
static void discard(struct pc_cache *c, void *addr, size_t len)
{
	madvise(addr, len, pc__mem(c)->discard);
}

static void give_back(struct pc_cache *c, struct pc_node *n)
{
	uint32_t share, hw, data_from, desc_from;

	/* No step is being populated ahead while it is given back. */
	pc__lock(&n->populate_mtx);
	pc__lock_counted(&n->free_lock);
	share = atomic_load(&n->nr_frames);
	/* Touched: initialized, or faulted in ahead (populate.c). */
	hw = pc_max(atomic_load(&n->hw), atomic_load(&n->ready));
	PC_ASSERT(!atomic_load(&n->nr_retiring));
	if (atomic_load(&n->hw) > share)
		atomic_store(&n->hw, share);	/* above: never used again */
	pc__populate_forget_locked(n, share);
	pc__unlock(&n->free_lock);
	if (hw > share) {
		data_from = round_up(share, PC_FRAME_STEP);
		if (data_from < hw)
			discard(c, c->data + ((size_t)(n->first_pfn + data_from) << PC_PAGE_SHIFT),
				(size_t)(hw - data_from) << PC_PAGE_SHIFT);
		/* No reader that found a retired page in a tree is still at it. */
		pc__tree_barrier(c->ebr);
		desc_from = round_up(n->first_pfn + share, (uint32_t)DESC_STEP) -
			    n->first_pfn;
		if (desc_from < hw)
			discard(c, pfn_page(c, n->first_pfn + desc_from),
				(size_t)(hw - desc_from) * sizeof(struct pc_page));
	}
	pc__unlock(&n->populate_mtx);
}

/* ------------------------------------------------------------------ */

static int shrink_node(struct pc_cache *c, struct pc_node *n, uint32_t per)
{
	int r;

	lower_share(c, n, per);
	r = vacate(c, n, per);
	if (r)
		settle_above_pins(c, n, per);
	give_back(c, n);
	return r;
}

/* The cache-wide figures that follow the budget. */
static void budget_changed(struct pc_cache *c)
{
	uint64_t frames = 0;

	for (int i = 0; i < c->nr_nodes; i++)
		frames += atomic_load(&c->nodes[i].nr_frames);
	atomic_store(&c->nr_frames, frames);
	atomic_store(&c->max_shadows, frames * 2 + 1024);
	pc__update_dirty_limits(c);
	if (atomic_load(&c->nr_shadows) > atomic_load(&c->max_shadows))
		pc__workingset_trim(c);
}

PC_EXPORT int pc_cache_resize(pc_cache *c, size_t bytes)
{
	uint64_t per;
	bool shrink = false;
	int r = 0;

	if (!c)
		return -EINVAL;
	per = ((uint64_t)bytes >> PC_PAGE_SHIFT) / (uint64_t)c->nr_nodes;
	if (per < PC_MIN_NODE_FRAMES || per > c->frames_per_node)
		return -EINVAL;
	pc__lock(&c->resize_lock);
	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		if (per > atomic_load(&n->nr_frames))
			grow_node(c, n, (uint32_t)per);
		else if (per < atomic_load(&n->nr_frames))
			shrink = true;
	}
	if (shrink) {
		/* Dirty pages above any new share are written, not dropped:
		 * all of them at once, in large requests. */
		if (pc__vmstat_sum(c, PC_VM_nr_dirty))
			pc__bdi_sync_all(c);
		for (int i = 0; i < c->nr_nodes; i++) {
			struct pc_node *n = &c->nodes[i];
			int e;

			if (per >= atomic_load(&n->nr_frames))
				continue;
			e = shrink_node(c, n, (uint32_t)per);
			if (e && !r)
				r = e;
		}
	}
	budget_changed(c);
	pc__unlock(&c->resize_lock);
	return r;
}
