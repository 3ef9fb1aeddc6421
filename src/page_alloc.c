/*
 * page_alloc.c - allocating and freeing page frames (the kernel's
 * mm/page_alloc.c): each node's free list and its growth into never-used
 * memory, the allocation policy (which node), the fast and slow paths,
 * and the retry rule that decides when an allocation waits and when it
 * gives up.  node.c reserves the memory, sets the nodes up and holds the
 * picture of a node's frames and fields; vmscan.c reclaims; pcp.c keeps
 * each thread's own list of frames.
 *
 * Frames come from never-used memory in 2 MiB steps (FRAME_STEP frames)
 * on demand: when the free list is empty, rmqueue initializes the next
 * step's descriptors (touching 32 KiB of them) and pushes its frames on
 * the free list; the data is first touched by whoever fills a page.
 * Freed frames go back on the free list and stay for reuse (LIFO: the
 * warmest first; a step is taken only when the list is empty); memory goes
 * back to the system only when the budget shrinks (resize.c).  kswapd
 * faults the next steps in ahead of the allocator (populate.c), so the
 * hot path seldom touches never-used memory itself (pggrow_cold counts
 * the frames it did).
 *
 * Allocation order (the kernel's zonelist): the policy's node - the
 * thread's (round-robin at its first call, or pc_thread_set_node), or with
 * numa.mapping_sticky the node of the mapping's first page - then the
 * others in ascending distance (id order, wrapping).  numa.dirty_spread
 * (__GFP_WRITE) starts a page to be dirtied at the first node, in that
 * order, under its share of the dirty limit.  With numa.node_reclaim the
 * start node is reclaimed (directly, below min) before any other node is
 * used (zone_reclaim_mode=1); without it allocation spills to any node
 * above its low mark, waking the kswapds it passes - seed 000's vanilla.
 *
 *   pc__alloc_page:  pass 0  the thread's own list of the start node
 *                            (pcp.c), refilled above low
 *                    pass 1  every node allowed, above low   (fast path)
 *                    pass 2  the same, above min
 *                    once: a woken or running kswapd of the start node
 *                    is given way until it frees pages (1 ms at most),
 *                    then pass 2 again
 *                    direct reclaim of the start node, then any node
 *                    above min, then direct reclaim of each other node,
 *                    then the reserve below min when nothing was freed
 *                    once: every thread's list given back
 *                    (pc__tctx_drain_all), and the round again
 *                    then the retry rule below: wait for progress and
 *                    again, or give up
 *   PC_GFP_NORETRY (readahead) stops after pass 2.
 *
 * NUMA counters as the kernel keeps them: numa_hit on the policy's node,
 * else numa_miss there and numa_foreign on the policy's node; numa_local
 * when the frame is on the allocating thread's node, else numa_other.
 *
 * The retry rule (the kernel's should_reclaim_retry, no_progress_loops):
 * decided by what each round of the slow path found, never by time.
 *
 *   a frame freed anywhere since the last round   progress: the count of
 *     (pgfree moved, or ours)                      rounds without it is 0
 *   none, but pages that will free themselves     progress to come: wait
 *     were seen - under writeback or dirty (the    for it, not counted
 *     flusher was handed them), locked (a read
 *     or a writer at work) - or writeback is in
 *     flight anywhere in the cache
 *   none, and nothing to come: only pinned pages  counted (alloc_retries);
 *     (references their holders must drop), or    the allocation gives up
 *     none at all                                  after more than
 *                                                  PC_MAX_RECLAIM_RETRIES
 *
 * Giving up returns NULL (allocfail; callers turn it into -ENOMEM): every
 * frame held by references, the caller's own for instance.  A resize or
 * kswapd at work frees frames (progress) or ends.  Pages to come cannot
 * keep an allocation waiting for ever: writeback in flight ends, with the
 * page clean or (a failed write) dirty again, and once a write has
 * failed since the allocation began, or while a device's last write
 * failed (pc__bdi_failing: its flusher backs off), dirty and writeback
 * pages are progress to come no more (a device that fails every write
 * would rewrite them for ever): those rounds count too.  A locked
 * page is unlocked by its holder, who never waits here with it: nothing
 * allocates while holding a page lock of a page not yet sent to its read
 * (readahead.c sends its run before it waits in the allocator).
 *
 * Each wait (alloc_busy_waits counts those for progress to come) sleeps
 * on the node's alloc_cond until the node's reclaim_progress moves: a
 * frame freed on the node (pc__free_page(s) wake the node's allocators
 * when any wait: n->alloc_waiters), a page reclaim had met under
 * writeback or dirty made reclaimable (lru.c's rotation at writeback's
 * end), reclaim's frees, the budget grown (resize.c).  Events with no
 * wake-up (an unlock, a reference dropped, a frame freed on another
 * node) are seen at the next look, ALLOC_WAIT_NS later: a re-check, not
 * a deadline; no decision depends on how long a wait took.
 *
 * The page sanity checks (pc__page_sanity, debug builds) are here too: the
 * free state they check is this file's.
 *
 * Locks: node->free_lock guards the free list, and the writes of nr_free
 * and hw (node.c's table; its rank in lock.h); a waiting allocation
 * sleeps on the node's alloc_cond under kswapd_mtx, and pc__alloc_wake
 * takes kswapd_mtx to wake it.
 */
#include <stdlib.h>
#include <string.h>

#include "bdi.h"
#include "internal.h"
#include "node.h"
#include "tctx.h"
#include "tree.h"

#define ALLOC_WAIT_NS (2ull * 1000 * 1000)	/* a wait's re-check */


/*
 * Initialize the next step of never-used frames of @n and put them on the
 * free list, lowest first.  Their count was in nr_free all along.  The
 * descriptors are written whole: a step that a shrink gave back may hold
 * anything a late speculative reader left (it reads, never writes, a
 * frame whose count is 0).
 */
static void grow_locked(struct pc_cache *c, struct pc_node *n)
{
	uint32_t hw = atomic_load_explicit(&n->hw, memory_order_relaxed);
	uint32_t step = pc_min(PC_FRAME_STEP, atomic_load(&n->nr_frames) - hw);

	uint32_t ready = atomic_load_explicit(&n->ready, memory_order_relaxed);

	PC_ASSERT_HELD(&n->free_lock);
	if (hw + step > ready)	/* memory nothing faulted in ahead */
		pc__add(c, n->id, pggrow_cold, hw + step - pc_max(hw, ready));
	for (uint32_t f = hw + step; f-- > hw;) {
		uint32_t pfn = n->first_pfn + f;
		struct pc_page *p = pfn_page(c, pfn);

		atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
		atomic_store_explicit(&p->refcount, 0, memory_order_relaxed);
		atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
		atomic_store_explicit(&p->index, 0, memory_order_relaxed);
		p->data = c->data + ((size_t)pfn << PC_PAGE_SHIFT);
		p->lru_prev = PC_NO_PFN;
		p->lru_next = n->free_head;
		atomic_store_explicit(&p->last_node, -1, memory_order_relaxed);
		atomic_store_explicit(&p->hint_count, 0, memory_order_relaxed);
		n->free_head = pfn;
	}
	atomic_store_explicit(&n->hw, hw + step, memory_order_release);
}

static struct pc_page *rmqueue(struct pc_cache *c, struct pc_node *n,
			       uint64_t floor)
{
	struct pc_page *p = NULL;
	bool grew = false;

	if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) <= floor)
		return NULL;
	pc__lock_counted(&n->free_lock);
	if (atomic_load(&n->nr_free) > floor) {
		if (n->free_head == PC_NO_PFN &&
		    atomic_load_explicit(&n->hw, memory_order_relaxed) <
		    atomic_load(&n->nr_frames)) {
			grow_locked(c, n);
			grew = true;
		}
		if (n->free_head != PC_NO_PFN) {
			p = pfn_page(c, n->free_head);
			n->free_head = p->lru_next;
			p->lru_next = p->lru_prev = PC_NO_PFN;
			atomic_store_explicit(&n->nr_free,
					      atomic_load(&n->nr_free) - 1,
					      memory_order_relaxed);
		}
	}
	pc__unlock(&n->free_lock);
	if (grew)	/* the next step faulted in ahead, by kswapd */
		pc__populate_after_grow(c, n);
	if (!p)
		return NULL;
	pc__prep_new_page(p);
	return p;
}

unsigned pc__rmqueue_bulk(struct pc_cache *c, struct pc_node *n,
			  uint32_t *pfns, unsigned want)
{
	uint64_t low = node_wmark_low(n), nr_free;
	unsigned got = 0;
	bool grew = false;

	if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) <= low)
		return 0;
	pc__lock_counted(&n->free_lock);
	nr_free = atomic_load(&n->nr_free);
	/* Above low to start with (the fast path's test), and never below
	 * min for the run: a thread's frames are no reserve. */
	if (nr_free > low)
		want = (unsigned)pc_min((uint64_t)want, nr_free - n->wmark_min);
	else
		want = 0;
	while (got < want) {
		struct pc_page *p;

		if (n->free_head == PC_NO_PFN) {
			if (atomic_load_explicit(&n->hw, memory_order_relaxed) >=
			    atomic_load(&n->nr_frames))
				break;
			grow_locked(c, n);
			grew = true;
		}
		p = pfn_page(c, n->free_head);
		PC_ASSERT(page_count(p) == 0);
		pfns[got++] = n->free_head;
		n->free_head = p->lru_next;
		p->lru_next = p->lru_prev = PC_NO_PFN;
	}
	atomic_store_explicit(&n->nr_free, nr_free - got, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->nr_pcp, got, memory_order_relaxed);
	pc__unlock(&n->free_lock);
	if (grew)
		pc__populate_after_grow(c, n);
	if (got && nr_free - got <= low)
		pc__wakeup_kswapd(c, n);
	return got;
}

/* @p (count 0, off the LRU, clean) back to @n's free list or retired. */
static void free_one_locked(struct pc_cache *c, struct pc_node *n,
			    struct pc_page *p)
{
	uint32_t pfn = page_pfn(c, p);

	PC_ASSERT_HELD(&n->free_lock);
	PC_ASSERT(page_count(p) == 0);
	PC_ASSERT(!page_test(p, PG_lru) && !page_test(p, PG_locked));
	/* Nothing dirty or in flight is ever freed: written data would be lost. */
	PC_ASSERT(!page_test(p, PG_dirty) && !page_test(p, PG_writeback));
	pc__page_sanity(c, p, false);
	atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	if (pfn - n->first_pfn >= atomic_load(&n->nr_frames)) {
		/* Above the node's share: a shrink is vacating it (resize.c). */
		atomic_store_explicit(&p->refcount, PC_REF_RETIRED,
				      memory_order_relaxed);
		atomic_fetch_sub_explicit(&n->nr_retiring, 1, memory_order_relaxed);
	} else {
		p->lru_next = n->free_head;
		n->free_head = pfn;
		atomic_store_explicit(&n->nr_free, atomic_load(&n->nr_free) + 1,
				      memory_order_relaxed);
	}
}

void pc__free_frames(struct pc_cache *c, struct pc_node *n,
		     const uint32_t *pfns, unsigned nr)
{
	if (!nr)
		return;
	pc__lock_counted(&n->free_lock);
	for (unsigned i = 0; i < nr; i++)
		free_one_locked(c, n, pfn_page(c, pfns[i]));
	atomic_fetch_sub_explicit(&n->nr_pcp, nr, memory_order_relaxed);
	pc__unlock(&n->free_lock);
	pc__alloc_wake(n);
}

void pc__free_page(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);

	pc__lock_counted(&n->free_lock);
	free_one_locked(c, n, p);
	pc__unlock(&n->free_lock);
	pc__inc(c, n->id, pgfree);
	pc__alloc_wake(n);
}

void pc__free_pages(struct pc_cache *c, struct pc_page **pages, unsigned nr)
{
	for (unsigned i = 0; i < nr;) {
		struct pc_node *n = page_node(c, pages[i]);
		unsigned j = i;

		pc__lock_counted(&n->free_lock);
		for (; j < nr && page_node(c, pages[j]) == n; j++)
			free_one_locked(c, n, pages[j]);
		pc__unlock(&n->free_lock);
		pc__add(c, n->id, pgfree, j - i);
		pc__alloc_wake(n);
		i = j;
	}
}

void pc__put_page(struct pc_cache *c, struct pc_page *p)
{
	if (page_put_testzero(p))
		pc__page_release(c, p);
}

void pc__page_release(struct pc_cache *c, struct pc_page *p)
{
	if (page_test(p, PG_lru)) {
		struct pc_node *n = page_node(c, p);

		pc__lock_counted(&n->lru_lock);
		if (page_test_clear(p, PG_lru))
			pc__lru_del_locked(n, p);
		pc__unlock(&n->lru_lock);
	}
	pc__free_page(c, p);
}

#ifdef PC_DEBUG
/*
 * The page sanity checks (SQLite's sqlite3PcachePageSanity), as this cache
 * keeps pages:
 *   on the LRU     not free: it has a reference;
 *   free           (count 0, no mapping) off the LRU, clean, not under
 *                  writeback, unlocked;
 *   dirty          tagged dirty in its mapping, which counts it (checked
 *                  under the page lock only: dirtying sets the bit, then
 *                  the tag);
 *   writeback      still in its mapping and not frozen by a remover (the
 *                  kernel's "locked by reclaim": reclaim, truncation and
 *                  migration never take a page under writeback).  Its tag
 *                  is not checked: the completion clears it before the
 *                  bit, without the page lock.
 */
void pc__page_sanity(struct pc_cache *c, struct pc_page *p, bool locked)
{
	uint32_t f = atomic_load(&p->flags);
	struct pc_mapping *m = page_mapping(p);
	int32_t count = page_count(p);

	assert(p >= c->pages && p < c->pages + c->span_frames);
	if (f & (1u << PG_lru))
		assert(count > 0);
	if (count == 0 && !m)
		assert(!(f & (1u << PG_lru | 1u << PG_dirty |
			      1u << PG_writeback | 1u << PG_locked)));
	if (locked && m && (f & (1u << PG_dirty))) {
		assert(atomic_load(&m->nr_dirty) > 0);
		pc__tree_read_lock(&m->tree);
		assert(pc__tree_tag_get(&m->tree, page_index(p), PC_TAG_DIRTY));
		pc__tree_read_unlock(&m->tree);
	}
	if (f & (1u << PG_writeback))
		assert(m && count > 0);
}
#endif

/* ------------------------------------------------------------------ */

struct pc_page *pc__alloc_page_on(struct pc_cache *c, int nid)
{
	struct pc_node *n = &c->nodes[nid];
	struct pc_page *p = rmqueue(c, n, node_wmark_low(n));

	if (p)
		pc__inc(c, nid, pgalloc);
	return p;
}

/* The node the allocation policy wants: the thread's, or the mapping's. */
static int policy_node(struct pc_cache *c, struct pc_mapping *m,
		       struct pc_tctx *t)
{
	int nid = t ? t->node : 0;

	if (c->cfg.mapping_sticky && m) {
		int first = atomic_load_explicit(&m->first_node,
						 memory_order_relaxed);

		if (first < 0) {
			int unset = -1;

			if (!atomic_compare_exchange_strong(&m->first_node,
							    &unset, nid))
				nid = unset;	/* another thread was first */
		} else {
			nid = first;
		}
	}
	return nid;
}

/*
 * numa.dirty_spread (__GFP_WRITE): the first node from @nid, in zonelist
 * order, whose dirty pages are under its share of the dirty limit; @nid
 * when every node is over it (the throttle deals with that).
 */
static int dirty_spread_node(struct pc_cache *c, int nid)
{
	uint64_t share = atomic_load(&c->dirty_limit) / (uint64_t)c->nr_nodes;

	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[(nid + i) % c->nr_nodes];

		if (atomic_load_explicit(&n->dirty_pages, memory_order_relaxed) <
		    share)
			return n->id;
	}
	return nid;
}

/*
 * As the kernel counts: hit on the node the policy wanted, else miss
 * there and foreign on the wanted one; local when the frame is on the
 * allocating thread's node, else other.
 */
static void account_numa(struct pc_cache *c, int want, int got, int local)
{
	if (got == want) {
		pc__inc(c, got, numa_hit);
	} else {
		pc__inc(c, got, numa_miss);
		pc__inc(c, want, numa_foreign);
	}
	if (got == local)
		pc__inc(c, got, numa_local);
	else
		pc__inc(c, got, numa_other);
}

/*
 * One pass over the zonelist from @nid (only @nid when @local_only),
 * taking a frame from the first node above its low (@low) or min mark.
 * Every node passed, and the one taken from if that leaves it at or
 * below low, has its kswapd woken (wake_all_kswapds).
 */
static struct pc_page *zonelist_pass(struct pc_cache *c, int nid, bool low,
				     bool local_only, int *got)
{
	int count = local_only ? 1 : c->nr_nodes;

	for (int i = 0; i < count; i++) {
		struct pc_node *n = &c->nodes[(nid + i) % c->nr_nodes];
		uint64_t mark = low ? node_wmark_low(n) : n->wmark_min;
		struct pc_page *p;

		p = rmqueue(c, n, mark);
		if (p) {
			*got = n->id;
			if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) <=
			    node_wmark_low(n))
				pc__wakeup_kswapd(c, n);
			return p;
		}
		pc__wakeup_kswapd(c, n);
	}
	return NULL;
}

/* Frames freed anywhere in the cache so far: the allocator's "progress". */
static uint64_t frees_so_far(struct pc_cache *c)
{
	return pc__vmstat_sum(c, PC_VM_pgfree);
}

void pc__alloc_wake(struct pc_node *n)
{
	if (!atomic_load(&n->alloc_waiters))
		return;
	atomic_fetch_add(&n->reclaim_progress, 1);
	pc__lock(&n->kswapd_mtx);
	pthread_cond_broadcast(&n->alloc_cond);
	pc__unlock(&n->kswapd_mtx);
}

/*
 * Sleep until @n's reclaim_progress moves from @gen (read before the
 * round's last look at the free lists, with n->alloc_waiters raised
 * already, so a wake-up after that look is never lost), or ALLOC_WAIT_NS
 * for a look at what sends none.
 */
static void wait_for_progress(struct pc_node *n, uint64_t gen)
{
	struct timespec ts;

	pc__deadline(&ts, ALLOC_WAIT_NS);
	pc__lock(&n->kswapd_mtx);
	if (atomic_load(&n->reclaim_progress) == gen && !n->stop)
		pc__cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts);
	pc__unlock(&n->kswapd_mtx);
}

/* What one round of the slow path saw: the retry rule (top of file). */
struct alloc_retry {
	uint64_t frees;		/* frees_so_far at the last round */
	uint64_t errors;	/* writeback_errors when the allocation began */
	unsigned no_progress;	/* rounds in a row counted */
};

enum alloc_verdict { ALLOC_AGAIN, ALLOC_WAIT, ALLOC_GIVE_UP };

static enum alloc_verdict should_retry(struct pc_cache *c, int nid,
				       struct alloc_retry *r,
				       unsigned long freed, unsigned long busy)
{
	uint64_t frees = frees_so_far(c);
	bool progress = freed || frees != r->frees;
	bool failed;

	r->frees = frees;
	if (progress) {
		r->no_progress = 0;
		return ALLOC_AGAIN;
	}
	failed = pc__vmstat_sum(c, PC_VM_writeback_errors) != r->errors ||
		 pc__bdi_failing(c);
	if (!failed && (busy || pc__vmstat_sum(c, PC_VM_nr_writeback))) {
		pc__inc(c, nid, alloc_busy_waits);
		return ALLOC_WAIT;
	}
	pc__inc(c, nid, alloc_retries);
	if (++r->no_progress > PC_MAX_RECLAIM_RETRIES)
		return ALLOC_GIVE_UP;
	return ALLOC_WAIT;
}

/* One round of the slow path; NULL with *freed, *busy what reclaim saw. */
static struct pc_page *alloc_round(struct pc_cache *c, int nid, bool local_only,
				   bool can_reclaim, bool *gave_way, int *got,
				   unsigned long *freed, unsigned long *busy)
{
	struct pc_page *p;
	unsigned long b;

	*freed = *busy = 0;
	/* Slow path: down to min; kswapds are awake by now. */
	p = zonelist_pass(c, nid, false, local_only, got);
	if (p)
		return p;
	/* A kswapd woken, not yet run: give way once (vmscan.c). */
	if (can_reclaim && !*gave_way) {
		*gave_way = true;
		if (pc__kswapd_give_way(c, &c->nodes[nid])) {
			p = zonelist_pass(c, nid, false, local_only, got);
			if (p)
				return p;
		}
	}
	/* Direct reclaim: the local node, then (spilling) the others. */
	if (can_reclaim) {
		*freed = pc__direct_reclaim(c, &c->nodes[nid], busy);
		p = rmqueue(c, &c->nodes[nid], 0);
		if (p) {
			*got = nid;
			return p;
		}
	}
	p = zonelist_pass(c, nid, false, false, got);
	if (p)
		return p;
	for (int i = 1; i < c->nr_nodes && !p; i++) {
		int o = (nid + i) % c->nr_nodes;

		if (can_reclaim) {
			*freed += pc__direct_reclaim(c, &c->nodes[o], &b);
			*busy += b;
		}
		p = rmqueue(c, &c->nodes[o], 0);
		*got = o;
	}
	if (p)
		return p;
	if (!*freed) {
		p = rmqueue(c, &c->nodes[nid], 0);	/* last frames */
		*got = nid;
	}
	return p;
}

struct pc_page *pc__alloc_page(struct pc_cache *c, struct pc_mapping *m,
			       unsigned gfp)
{
	struct pc_tctx *t = pc__tctx(c);
	int local = t ? t->node : 0;
	int want = policy_node(c, m, t);
	int nid = want;
	bool local_only = c->cfg.node_reclaim;
	bool can_reclaim = t && !t->in_reclaim, gave_way = false;
	bool drained = false;
	struct alloc_retry retry;
	struct pc_node *n;
	struct pc_page *p;
	int got = nid;

	if (c->cfg.dirty_spread && (gfp & PC_GFP_WRITE) && c->nr_nodes > 1)
		nid = dirty_spread_node(c, nid);
	/* The thread's own list (pcp.c), refilled above the low mark. */
	if (t && (p = pc__pcp_alloc(c, t, nid)))
		goto out;
	/* Fast path: above the low mark. */
	p = zonelist_pass(c, nid, true, local_only, &got);
	if (p)
		goto out;
	if (gfp & PC_GFP_NORETRY) {
		p = zonelist_pass(c, nid, false, local_only, &got);
		if (p)
			goto out;
		return NULL;
	}
	n = &c->nodes[nid];
	/* Raised before the first look, so no free after it goes unheard. */
	atomic_fetch_add(&n->alloc_waiters, 1);
	retry = (struct alloc_retry){
		.frees = frees_so_far(c),
		.errors = pc__vmstat_sum(c, PC_VM_writeback_errors),
	};
	for (;;) {
		uint64_t gen = atomic_load(&n->reclaim_progress);
		unsigned long freed, busy;
		enum alloc_verdict v;

		p = alloc_round(c, nid, local_only, can_reclaim, &gave_way,
				&got, &freed, &busy);
		if (p)
			break;
		/* Frames on threads' lists, once: out of reach till now. */
		if (!drained) {
			drained = true;
			if (pc__tctx_drain_all(c))
				continue;
		}
		v = should_retry(c, nid, &retry, freed, busy);
		if (v == ALLOC_GIVE_UP)
			break;
		if (v == ALLOC_WAIT)
			wait_for_progress(n, gen);
	}
	atomic_fetch_sub(&n->alloc_waiters, 1);
	if (!p) {
		pc__inc(c, nid, allocfail);
		return NULL;
	}
out:
	account_numa(c, want, got, local);
	pc__inc(c, got, pgalloc);
	return p;
}
