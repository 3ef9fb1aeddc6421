/*
 * node.c - memory nodes: page frames, free lists, watermarks, allocation.
 *
 * The budget is cut into nr_nodes equal slices at create.  Each node owns
 * frames [first_pfn, first_pfn + nr_frames) of c->pages / c->data, touched
 * once at create (and bound to a real NUMA node with nodes=auto).
 *
 *   free list   singly linked through pc_page.lru_next, node->free_lock;
 *               nr_free is written under the lock, read without it.
 *   watermarks  min < low < high, read-only: min = 1/128 of the node,
 *               low = min + gap, high = min + 2 * gap, gap the
 *               reclaim.watermark_scale share (1/10000) of the node; low
 *               and high in force add the node's boost (node_wmark_low/
 *               high, raised by direct reclaim, see vmscan.c):
 *                 free > low          allocate, nothing else to do
 *                 min < free <= low   allocate, wake this node's kswapd
 *                 free <= min         direct reclaim first (vmscan.c)
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
 *   pc__alloc_page:  pass 1  every node allowed, above low   (fast path)
 *                    pass 2  the same, above min
 *                    direct reclaim of the start node, then any node
 *                    above min, then direct reclaim of each other node,
 *                    then the reserve below min when nothing was freed
 *                    wait for progress (2 ms at most), and again
 *   PC_GFP_NORETRY (readahead) stops after pass 2.
 *
 * NUMA counters as the kernel keeps them: numa_hit on the policy's node,
 * else numa_miss there and numa_foreign on the policy's node; numa_local
 * when the frame is on the allocating thread's node, else numa_other.
 *
 * When nothing can be freed the allocation gives up and returns NULL
 * (callers turn it into -ENOMEM): after 250 ms without a frame freed
 * anywhere when direct reclaim finds only pinned pages, after 1 s when it
 * also finds pages that will become free on their own (dirty, under
 * writeback, locked for I/O).  Waiting is on the node's alloc_cond, which
 * reclaimers signal whenever they free pages: never a spin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "numa_topology.h"

#define MIN_NODE_FRAMES 16
#define ALLOC_GIVE_UP_NS (1000ull * 1000 * 1000)	/* busy pages seen */
#define ALLOC_GIVE_UP_PINNED_NS (250ull * 1000 * 1000)	/* only pinned ones */
#define ALLOC_WAIT_NS (2L * 1000 * 1000)	/* one wait for progress */

static void node_watermarks(struct pc_cache *c, struct pc_node *n)
{
	uint64_t f = n->nr_frames;
	uint64_t gap = pc_max(2, f * c->cfg.watermark_scale / 10000);

	n->wmark_min = pc_max(2, f / 128);
	n->wmark_low = n->wmark_min + gap;
	n->wmark_high = n->wmark_min + 2 * gap;
	if (n->wmark_high > f / 2) {	/* tiny budgets */
		n->wmark_high = f / 2;
		n->wmark_low = pc_max(n->wmark_min + 1, f / 4);
		n->wmark_min = pc_min(n->wmark_min, n->wmark_low - 1);
	}
}

int pc__nodes_init(struct pc_cache *c)
{
	int nodes = c->cfg.nodes ? c->cfg.nodes : pc__numa_nr_nodes();
	uint64_t frames = c->cfg.memory >> PC_PAGE_SHIFT;
	uint64_t per;

	if (nodes < 1 || nodes > PC_MAX_NODES)
		nodes = 1;
	per = frames / (uint64_t)nodes;
	if (per < MIN_NODE_FRAMES) {
		fprintf(stderr, "pagecache: memory=%llu is too small for %d node(s): "
			"each node needs at least %d pages (%d KiB)\n",
			(unsigned long long)c->cfg.memory, nodes, MIN_NODE_FRAMES,
			MIN_NODE_FRAMES * 4);
		return -EINVAL;
	}
	if (per > UINT32_MAX / (uint64_t)nodes - 1) {
		fprintf(stderr, "pagecache: memory=%llu is too large\n",
			(unsigned long long)c->cfg.memory);
		return -EINVAL;
	}
	c->nr_nodes = nodes;
	c->frames_per_node = (uint32_t)per;
	c->nr_frames = per * (uint64_t)nodes;
	c->nodes = calloc((size_t)nodes, sizeof(*c->nodes));
	c->pages = calloc(c->nr_frames, sizeof(*c->pages));
	if (!c->nodes || !c->pages)
		return -ENOMEM;
	c->data = mmap(NULL, c->nr_frames << PC_PAGE_SHIFT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->data == MAP_FAILED) {
		c->data = NULL;
		return -ENOMEM;
	}
	/* Huge pages: a random 4 KiB hit costs a TLB miss less. */
	madvise(c->data, c->nr_frames << PC_PAGE_SHIFT, MADV_HUGEPAGE);
	for (int i = 0; i < nodes; i++) {
		struct pc_node *n = &c->nodes[i];
		char *base = c->data + ((size_t)i * per << PC_PAGE_SHIFT);

		n->id = i;
		n->cache = c;
		n->first_pfn = (uint32_t)(i * per);
		n->nr_frames = (uint32_t)per;
		node_watermarks(c, n);
		pc__lock_init(&n->free_lock, c, PC_RANK_FREE, PC_VM_free_lock_acquired);
		pc__lock_init(&n->lru_lock, c, PC_RANK_LRU, PC_VM_lru_lock_acquired);
		for (int l = 0; l < PC_NR_LRU; l++)
			n->lru[l].head = n->lru[l].tail = PC_NO_PFN;
		pthread_mutex_init(&n->kswapd_mtx, NULL);
		pthread_cond_init(&n->kswapd_cond, NULL);
		pthread_cond_init(&n->alloc_cond, NULL);
		if (!c->cfg.nodes)
			pc__numa_bind(base, per << PC_PAGE_SHIFT, i);
		memset(base, 0, per << PC_PAGE_SHIFT);	/* first touch, now */
		/* Free list in ascending frame order. */
		n->free_head = PC_NO_PFN;
		for (uint64_t f = per; f-- > 0;) {
			struct pc_page *p = &c->pages[n->first_pfn + f];

			p->data = base + (f << PC_PAGE_SHIFT);
			p->lru_next = n->free_head;
			p->lru_prev = PC_NO_PFN;
			atomic_init(&p->last_node, -1);
			n->free_head = n->first_pfn + (uint32_t)f;
		}
		atomic_store(&n->nr_free, per);
	}
	return 0;
}

void pc__nodes_fini(struct pc_cache *c)
{
	if (c->nodes && c->pages) {
		for (int i = 0; i < c->nr_nodes; i++) {
			struct pc_node *n = &c->nodes[i];

			pc__lock_destroy(&n->free_lock);
			pc__lock_destroy(&n->lru_lock);
			pthread_mutex_destroy(&n->kswapd_mtx);
			pthread_cond_destroy(&n->kswapd_cond);
			pthread_cond_destroy(&n->alloc_cond);
		}
	}
	if (c->data)
		munmap(c->data, c->nr_frames << PC_PAGE_SHIFT);
	free(c->pages);
	free(c->nodes);
	c->data = NULL;
	c->pages = NULL;
	c->nodes = NULL;
}

/* ------------------------------------------------------------------ */

static struct pc_page *rmqueue(struct pc_cache *c, struct pc_node *n,
			       uint64_t floor)
{
	struct pc_page *p = NULL;

	if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) <= floor)
		return NULL;
	pc__lock(&n->free_lock);
	if (n->free_head != PC_NO_PFN && atomic_load(&n->nr_free) > floor) {
		p = pfn_page(c, n->free_head);
		n->free_head = p->lru_next;
		p->lru_next = p->lru_prev = PC_NO_PFN;
		atomic_store_explicit(&n->nr_free, atomic_load(&n->nr_free) - 1,
				      memory_order_relaxed);
	}
	pc__unlock(&n->free_lock);
	if (!p)
		return NULL;
	PC_ASSERT(page_count(p) == 0);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&p->hint_count, 0, memory_order_relaxed);
	atomic_store_explicit(&p->refcount, 1, memory_order_release);
	return p;
}

void pc__free_page(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);

	PC_ASSERT(page_count(p) == 0);
	PC_ASSERT(!page_test(p, PG_lru) && !page_test(p, PG_locked));
	/* Nothing dirty or in flight is ever freed: written data would be lost. */
	PC_ASSERT(!page_test(p, PG_dirty) && !page_test(p, PG_writeback));
	atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	pc__lock(&n->free_lock);
	p->lru_next = n->free_head;
	n->free_head = page_pfn(c, p);
	atomic_store_explicit(&n->nr_free, atomic_load(&n->nr_free) + 1,
			      memory_order_relaxed);
	pc__unlock(&n->free_lock);
	pc__inc(c, n->id, pgfree);
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

		pc__lock(&n->lru_lock);
		if (page_test_clear(p, PG_lru))
			pc__lru_del_locked(n, p);
		pc__unlock(&n->lru_lock);
	}
	pc__free_page(c, p);
}

void pc__page_sanity(struct pc_cache *c, struct pc_page *p)
{
	(void)c;
	(void)p;
#ifdef PC_DEBUG
	uint32_t f = atomic_load(&p->flags);
	struct pc_mapping *m = page_mapping(p);

	if (f & (1u << PG_lru))
		assert(page_count(p) > 0);
	if (f & (1u << PG_writeback))
		assert(!(f & (1u << PG_dirty)) || m);
	if ((f & (1u << PG_dirty)) && m && (f & (1u << PG_locked)))
		assert(atomic_load(&m->nr_dirty) > 0);
#endif
}

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

/* Sleep until a reclaimer on @n makes progress, at most @ns. */
static void wait_for_progress(struct pc_node *n, long ns)
{
	struct timespec ts;

	pthread_mutex_lock(&n->kswapd_mtx);
	pc__deadline(&ts, (uint64_t)ns);
	pthread_cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts);
	pthread_mutex_unlock(&n->kswapd_mtx);
}

struct pc_page *pc__alloc_page(struct pc_cache *c, struct pc_mapping *m,
			       unsigned gfp)
{
	struct pc_tctx *t = pc__tctx(c);
	int local = t ? t->node : 0;
	int want = policy_node(c, m, t);
	int nid = want;
	bool local_only = c->cfg.node_reclaim;
	bool can_reclaim = t && !t->in_reclaim;
	uint64_t start = 0, last_progress = 0, last_frees = 0;
	struct pc_page *p;
	int got = nid;

	if (c->cfg.dirty_spread && (gfp & PC_GFP_WRITE) && c->nr_nodes > 1)
		nid = dirty_spread_node(c, nid);
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
	for (;;) {
		unsigned long freed = 0, busy = 0, b;
		uint64_t now, frees;

		/* Slow path: down to min; kswapds are awake by now. */
		p = zonelist_pass(c, nid, false, local_only, &got);
		if (p)
			goto out;
		/* Direct reclaim: the local node, then (spilling) the others. */
		if (can_reclaim) {
			freed = pc__direct_reclaim(c, &c->nodes[nid], &busy);
			p = rmqueue(c, &c->nodes[nid], 0);
			if (p) {
				got = nid;
				goto out;
			}
		}
		p = zonelist_pass(c, nid, false, false, &got);
		if (p)
			goto out;
		for (int i = 1; i < c->nr_nodes && !p; i++) {
			int o = (nid + i) % c->nr_nodes;

			if (can_reclaim) {
				freed += pc__direct_reclaim(c, &c->nodes[o], &b);
				busy += b;
			}
			p = rmqueue(c, &c->nodes[o], 0);
			got = o;
		}
		if (p)
			goto out;
		if (!freed) {
			p = rmqueue(c, &c->nodes[nid], 0);	/* last frames */
			if (p) {
				got = nid;
				goto out;
			}
		}
		/*
		 * Bounded wait.  Progress is a frame freed anywhere; without
		 * any, give up after ALLOC_GIVE_UP_NS while reclaim still sees
		 * pages that will become reclaimable on their own, and after
		 * ALLOC_GIVE_UP_PINNED_NS when all it sees is pinned.
		 */
		now = pc__now_ns();
		frees = frees_so_far(c);
		if (!start) {
			start = last_progress = now;
			last_frees = frees;
		}
		if (freed || frees != last_frees) {
			last_progress = now;
			last_frees = frees;
		} else if (now - last_progress >
			   (busy || !can_reclaim ? ALLOC_GIVE_UP_NS
						 : ALLOC_GIVE_UP_PINNED_NS)) {
			pc__inc(c, nid, allocfail);
			return NULL;
		}
		wait_for_progress(&c->nodes[nid], ALLOC_WAIT_NS);
	}
out:
	account_numa(c, want, got, local);
	pc__inc(c, got, pgalloc);
	return p;
}
