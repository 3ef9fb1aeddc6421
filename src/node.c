/*
 * node.c - memory nodes: page frames, free lists, watermarks, allocation.
 *
 * The budget is cut into nr_nodes equal slices at create.  Each node owns
 * frames [first_pfn, first_pfn + nr_frames) of c->pages / c->data, touched
 * once at create (and bound to a real NUMA node with nodes=auto).
 *
 *   free list   singly linked through pc_page.lru_next, node->free_lock;
 *               nr_free is written under the lock, read without it.
 *   watermarks  min < low < high, read-only:
 *                 free > low          allocate, nothing else to do
 *                 min < free <= low   allocate, wake this node's kswapd
 *                 free <= min         direct reclaim first (vmscan.c)
 *
 * Allocation order (the kernel's zonelist): the thread's node (or, with
 * numa.mapping_sticky, the node of the mapping's first page; with
 * numa.dirty_spread, a node under its share of the dirty limit), then the
 * others in ascending distance (id order, wrapping).  With
 * numa.node_reclaim the local node is reclaimed before any other node is
 * used (zone_reclaim_mode=1); without it allocation spills to any node
 * above its low mark, waking the kswapds it passes - seed 000's vanilla.
 *
 * When nothing can be freed (every frame pinned), the allocation gives up
 * after a bounded wait (about a second without progress) and returns NULL:
 * callers turn it into -ENOMEM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "numa_topology.h"

#define MIN_NODE_FRAMES 16
#define ALLOC_GIVE_UP_NS (1000ull * 1000 * 1000)

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
	struct pc_page *p = rmqueue(c, n, n->wmark_low);

	if (p)
		pc__inc(c, nid, pgalloc);
	return p;
}

static int preferred_node(struct pc_cache *c, struct pc_mapping *m,
			  bool for_write, struct pc_tctx *t)
{
	int nid = t ? t->node : 0;

	if (c->cfg.mapping_sticky && m) {
		int first = atomic_load_explicit(&m->first_node,
						 memory_order_relaxed);

		if (first < 0) {
			int unset = -1;

			atomic_compare_exchange_strong(&m->first_node, &unset, nid);
		} else {
			nid = first;
		}
	}
	if (c->cfg.dirty_spread && for_write && c->nr_nodes > 1) {
		/* __GFP_WRITE: skip nodes over their share of the dirty limit. */
		uint64_t share = atomic_load(&c->dirty_limit) / (uint64_t)c->nr_nodes;

		for (int i = 0; i < c->nr_nodes; i++) {
			struct pc_node *n = &c->nodes[(nid + i) % c->nr_nodes];

			if (atomic_load(&n->dirty_pages) < share) {
				nid = n->id;
				break;
			}
		}
	}
	return nid;
}

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

/* One pass over the zonelist from @nid, taking pages above @mark. */
static struct pc_page *zonelist_pass(struct pc_cache *c, int nid, bool low,
				     bool local_only, int *got)
{
	int count = local_only ? 1 : c->nr_nodes;

	for (int i = 0; i < count; i++) {
		struct pc_node *n = &c->nodes[(nid + i) % c->nr_nodes];
		uint64_t mark = low ? n->wmark_low : n->wmark_min;
		struct pc_page *p;

		p = rmqueue(c, n, mark);
		if (p) {
			*got = n->id;
			if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) <=
			    n->wmark_low)
				pc__wakeup_kswapd(c, n);
			return p;
		}
		pc__wakeup_kswapd(c, n);
	}
	return NULL;
}

struct pc_page *pc__alloc_page(struct pc_cache *c, struct pc_mapping *m,
			       unsigned gfp)
{
	struct pc_tctx *t = pc__tctx(c);
	int local = t ? t->node : 0;
	int nid = preferred_node(c, m, gfp & PC_GFP_WRITE, t);
	uint64_t start = 0, last_progress = 0;
	struct pc_page *p;
	int got = nid;

	/* Fast path: above the low mark. */
	p = zonelist_pass(c, nid, true, c->cfg.node_reclaim, &got);
	if (p)
		goto out;
	if (gfp & PC_GFP_NORETRY) {
		p = zonelist_pass(c, nid, false, c->cfg.node_reclaim, &got);
		if (p)
			goto out;
		return NULL;
	}
	for (;;) {
		unsigned long freed = 0;

		/* Slow path: down to min; kswapds are awake by now. */
		p = zonelist_pass(c, nid, false, c->cfg.node_reclaim, &got);
		if (p)
			goto out;
		/* Direct reclaim: the local node, then (spilling) the others. */
		if (t && !t->in_reclaim) {
			freed = pc__try_to_free_pages(c, &c->nodes[nid]);
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

			if (t && !t->in_reclaim)
				freed += pc__try_to_free_pages(c, &c->nodes[o]);
			p = rmqueue(c, &c->nodes[o], 0);
			got = o;
		}
		if (p)
			goto out;
		if (!freed && !p) {
			p = rmqueue(c, &c->nodes[nid], 0);	/* last frames */
			if (p) {
				got = nid;
				goto out;
			}
		}
		/* Bounded wait: give up after a while without progress. */
		if (!start)
			start = last_progress = pc__now_ns();
		if (freed)
			last_progress = pc__now_ns();
		else if (pc__now_ns() - last_progress > ALLOC_GIVE_UP_NS) {
			pc__inc(c, nid, allocfail);
			return NULL;
		}
		{
			struct pc_node *n = &c->nodes[nid];
			struct timespec ts;

			pthread_mutex_lock(&n->kswapd_mtx);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 2 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts);
			pthread_mutex_unlock(&n->kswapd_mtx);
		}
	}
out:
	account_numa(c, nid, got, local);
	pc__inc(c, got, pgalloc);
	return p;
}
