/*
 * node.c - memory nodes: the memory reserved at create, the nodes' set-up
 * and teardown, their frames and watermarks (page_alloc.c allocates and
 * frees the frames).
 *
 * Memory at scale (docs/design.md): the cache costs what it caches.  At create
 * the largest budget the cache may ever have (memory.max, default the
 * machine's memory or memory= if larger; only memory= where strict
 * overcommit refuses that much address space) is reserved as address space -
 * the frames' data in c->data, their descriptors in c->pages, both
 * MAP_NORESERVE and MADV_HUGEPAGE (data on MAP_HUGETLB pages when the
 * machine has enough hugetlbfs pages free for the budget) - and nothing
 * is touched, so create is constant-time and RSS follows what is cached.
 * Each node owns a span of c->frames_per_node frames, of which the first
 * nr_frames (its share of the budget) may hold pages:
 *
 *   node k:  first_pfn = k * span
 *   |<------------- nr_frames (budget share) ------------>|
 *   |<---- hw: initialized ---->|<- never used ---------->|<- reserved ->|
 *   | in use | free list | in use|                         |   (resize)  |
 *
 * Frames come from never-used memory in 2 MiB steps on demand, and go
 * back on the free list when freed (page_alloc.c); memory goes back to
 * the system only when the budget shrinks (resize.c).
 *
 *   free list   singly linked through pc_page.lru_next, node->free_lock;
 *   nr_free     free-listed frames plus never-used frames below nr_frames:
 *               the budget, not the initialized frames, so every "is
 *               memory short" test (watermarks, dirty limits,
 *               pc__memory_tight) means the same with lazy memory.  Written
 *               under free_lock, read without it.
 *   hw          frames [first_pfn, first_pfn + hw) initialized; free_lock
 *               (atomic: scans read it without the lock).
 *   nr_retiring frames at or above nr_frames still in use while a shrink
 *               vacates them (resize.c); freeing one retires it.
 *   watermarks  min < low < high, from nr_frames: min = 1/128 of the node,
 *               low = min + gap, high = min + 2 * gap, gap the
 *               reclaim.watermark_scale share (1/10000) of the node; low
 *               and high in force add the node's boost (node_wmark_low/
 *               high, raised by direct reclaim, see vmscan.c).  Written
 *               (with nr_frames) under free_lock by create and resize.
 *                 free > low          allocate, nothing else to do
 *                 min < free <= low   allocate, wake this node's kswapd
 *                 free <= min         direct reclaim first (vmscan.c)
 *
 * Each node also has an arena (arena.c) for the radix-tree nodes of the
 * mappings created by its threads, reserved as large as the node's
 * descriptors and, like them, touched only as used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"
#include "bdi.h"
#include "internal.h"
#include "mem.h"
#include "node.h"
#include "numa_topology.h"
#include "tctx.h"
#include "tree.h"

#define HUGE_BYTES (2ull << 20)

/* Watermarks of @n from its share, no lock: create's, @n seen by no
 * other thread yet and its free_lock not made. */
static void watermarks_init(struct pc_cache *c, struct pc_node *n)
{
	uint64_t f = atomic_load(&n->nr_frames);
	uint64_t gap = pc_max(2, f * c->cfg.watermark_scale / 10000);
	uint64_t min = pc_max(2, f / 128), low = min + gap, high = min + 2 * gap;

	if (high > f / 2) {	/* tiny budgets */
		high = f / 2;
		low = pc_max(min + 1, f / 4);
		min = pc_min(min, low - 1);
	}
	atomic_store(&n->wmark_min, min);
	atomic_store(&n->wmark_low, low);
	atomic_store(&n->wmark_high, high);
}

/* A share changed (resize): under free_lock. */
void pc__node_watermarks_locked(struct pc_cache *c, struct pc_node *n)
{
	PC_ASSERT_HELD(&n->free_lock);
	watermarks_init(c, n);
}

/* Frames each node may ever have: memory.max (or the machine, or the
 * budget) over the nodes, in whole 2 MiB steps. */
static uint64_t node_span(const struct pc_config *cfg, int nodes, uint64_t per)
{
	uint64_t max = cfg->memory_max;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t span;

	if (!max && pc__mem_for(cfg->shared)->fixed)	/* sized for it */
		max = cfg->memory;
	if (!max && pages > 0 && psize > 0)
		max = (uint64_t)pages * (uint64_t)psize;
	span = pc_max(per, (max >> PC_PAGE_SHIFT) / (uint64_t)nodes);
	return (span + PC_FRAME_STEP - 1) / PC_FRAME_STEP * PC_FRAME_STEP;
}

/* Reserve the data and the descriptors of @span frames a node. */
static int reserve_spans(struct pc_cache *c, uint64_t span)
{
	const struct pc_mem_ops *mem = pc__mem(c);

	c->frames_per_node = (uint32_t)span;
	c->span_frames = span * (uint64_t)c->nr_nodes;
	c->data = mem->reserve(c, c->span_frames << PC_PAGE_SHIFT,
			       &c->data_map, &c->data_map_len);
	c->pages = mem->reserve(c, c->span_frames * sizeof(struct pc_page),
				&c->pages_map, &c->pages_map_len);
	if (c->data && c->pages)
		return 0;
	if (c->data_map)
		munmap(c->data_map, c->data_map_len);
	if (c->pages_map)
		munmap(c->pages_map, c->pages_map_len);
	c->data = NULL;
	c->pages = NULL;
	c->data_map = c->pages_map = NULL;
	return -ENOMEM;
}

/* Free hugetlbfs pages of the default size, in bytes (0: none). */
static uint64_t hugetlb_free_bytes(void)
{
	unsigned long long total = 0, free_pages = 0, size_kb = 0, v;
	char key[64];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu%*[^\n]", key, &v) == 2) {
		if (!strcmp(key, "HugePages_Total:"))
			total = v;
		else if (!strcmp(key, "HugePages_Free:"))
			free_pages = v;
		else if (!strcmp(key, "Hugepagesize:"))
			size_kb = v;
	}
	fclose(f);
	return total && size_kb == HUGE_BYTES / 1024 ? free_pages * size_kb * 1024 : 0;
}

/*
 * The data of the budget on hugetlbfs pages, where the machine has enough
 * of them free: mapped over the start of the reserved range (MAP_FIXED,
 * without MAP_NORESERVE, so the kernel reserves the pages now and a fault
 * can never fail); anything it cannot map stays on transparent huge pages.
 * Only for a budget in one node (fake or real nodes slice the range).
 */
static void data_hugetlb(struct pc_cache *c, int nodes)
{
	size_t len = c->nr_frames << PC_PAGE_SHIFT;
	void *p;

	len = (len + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
	if (nodes != 1 || !pc__mem(c)->hugetlb || hugetlb_free_bytes() < len)
		return;
	p = mmap(c->data, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {	/* back to what it was: reserved THP memory */
		mmap(c->data, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
		madvise(c->data, len, MADV_HUGEPAGE);
		return;
	}
	c->hugetlb_bytes = len;
}

/* The nodes @cfg asks for: its nodes=, or the machine's, within bounds. */
static int config_nodes(const struct pc_config *cfg)
{
	int nodes = cfg->nodes ? cfg->nodes : pc__numa_nr_nodes();

	return nodes < 1 || nodes > PC_MAX_NODES ? 1 : nodes;
}

int pc__config_check_budget(const struct pc_config *cfg)
{
	int nodes = config_nodes(cfg);

	if ((cfg->memory >> PC_PAGE_SHIFT) / (uint64_t)nodes < PC_MIN_NODE_FRAMES) {
		fprintf(stderr, "pagecache: memory=%llu is too small for %d node(s): "
			"each node needs at least %d pages (%d KiB)\n",
			(unsigned long long)cfg->memory, nodes, PC_MIN_NODE_FRAMES,
			PC_MIN_NODE_FRAMES * 4);
		return -EINVAL;
	}
	if (cfg->memory_max && cfg->memory_max < cfg->memory) {
		fprintf(stderr, "pagecache: memory.max=%llu is below memory=%llu\n",
			(unsigned long long)cfg->memory_max,
			(unsigned long long)cfg->memory);
		return -EINVAL;
	}
	return 0;
}

/* The nodes' span, whole steps, bounded (pc__nodes_init); 0: too large. */
static uint64_t config_span(const struct pc_config *cfg, int nodes)
{
	uint64_t per = (cfg->memory >> PC_PAGE_SHIFT) / (uint64_t)nodes;
	uint64_t span = node_span(cfg, nodes, per);

	if (span * (uint64_t)nodes >= UINT32_MAX) {
		if (per * (uint64_t)nodes >= UINT32_MAX - PC_FRAME_STEP * (uint64_t)nodes)
			return 0;
		span = (UINT32_MAX - 1) / (uint64_t)nodes / PC_FRAME_STEP * PC_FRAME_STEP;
	}
	return span;
}

uint64_t pc__config_span_frames(const struct pc_config *cfg)
{
	int nodes = config_nodes(cfg);

	return config_span(cfg, nodes) * (uint64_t)nodes;
}

int pc__nodes_init(struct pc_cache *c)
{
	int nodes = config_nodes(&c->cfg);
	uint64_t per, span;
	int r;

	r = pc__config_check_budget(&c->cfg);
	if (r)
		return r;
	per = (c->cfg.memory >> PC_PAGE_SHIFT) / (uint64_t)nodes;
	span = config_span(&c->cfg, nodes);
	if (!span) {
		fprintf(stderr, "pagecache: memory=%llu is too large\n",
			(unsigned long long)c->cfg.memory);
		return -EINVAL;
	}
	c->nr_nodes = nodes;
	atomic_store(&c->nr_frames, per * (uint64_t)nodes);
	c->nodes = pc__cache_zalloc(c, (size_t)nodes * sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	if (reserve_spans(c, span) < 0) {
		/* Strict overcommit counts address space as memory: without
		 * memory.max, room to grow is given up before the budget. */
		if (c->cfg.memory_max || pc__mem(c)->fixed ||
		    reserve_spans(c, (per + PC_FRAME_STEP - 1) / PC_FRAME_STEP *
				     PC_FRAME_STEP) < 0)
			return -ENOMEM;
	}
	/* Huge pages: a random 4 KiB hit costs a TLB miss less. */
	madvise(c->data, c->span_frames << PC_PAGE_SHIFT, MADV_HUGEPAGE);
	madvise(c->pages, c->span_frames * sizeof(struct pc_page), MADV_HUGEPAGE);
	data_hugetlb(c, nodes);
	for (int i = 0; i < nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		n->id = i;
		n->cache = c;
		n->first_pfn = (uint32_t)(i * span);
		atomic_init(&n->nr_frames, (uint32_t)per);
		watermarks_init(c, n);
		pc__cache_lock_init(c, &n->free_lock, PC_RANK_FREE,
				    PC_VM_free_lock_acquired);
		pc__cache_lock_init(c, &n->lru_lock, PC_RANK_LRU,
				    PC_VM_lru_lock_acquired);
		for (int l = 0; l < PC_NR_LRU; l++)
			n->lru[l].head = n->lru[l].tail = PC_NO_PFN;
		n->hand = PC_NO_PFN;
		for (int g = 0; g < PC_MAX_NR_GENS; g++)
			n->lrugen.lists[g].head = n->lrugen.lists[g].tail =
				PC_NO_PFN;
		atomic_init(&n->lrugen.min_seq, 0);
		atomic_init(&n->lrugen.max_seq, PC_MIN_NR_GENS + 1);
		pc__cache_lock_init(c, &n->kswapd_mtx, PC_RANK_KSWAPD, -1);
		pc__cache_cond_init(c, &n->kswapd_cond, false);
		pc__cache_cond_init(c, &n->alloc_cond, false);
		pc__cache_lock_init(c, &n->populate_mtx, PC_RANK_POPULATE, -1);
		if (!c->cfg.nodes) {	/* real nodes: first touch lands there */
			pc__numa_bind(c->data + ((size_t)n->first_pfn << PC_PAGE_SHIFT),
				      span << PC_PAGE_SHIFT, i);
			pc__numa_bind(c->pages + n->first_pfn,
				      span * sizeof(struct pc_page), i);
		}
		r = pc__mem(c)->arena(c, n, span * sizeof(struct pc_page),
				      c->cfg.nodes ? -1 : i);
		if (r)
			return r;
		n->free_head = PC_NO_PFN;
		atomic_store(&n->nr_free, per);
	}
	return 0;
}

void pc__nodes_fini(struct pc_cache *c)
{
	if (c->nodes) {
		/* Retired tree nodes go back to the arenas first (every tree
		 * of the cache retires into c->ebr). */
		pc__tree_barrier(c->ebr);
		for (int i = 0; i < c->nr_nodes; i++) {
			struct pc_node *n = &c->nodes[i];

			if (!n->cache)
				continue;	/* create failed before it */
			pc__lock_destroy(&n->free_lock);
			pc__lock_destroy(&n->lru_lock);
			pc__lock_destroy(&n->kswapd_mtx);
			pthread_cond_destroy(&n->kswapd_cond);
			pthread_cond_destroy(&n->alloc_cond);
			pc__lock_destroy(&n->populate_mtx);
			pc__mem(c)->arena_fini(n);
		}
	}
	if (c->data_map)
		munmap(c->data_map, c->data_map_len);
	if (c->pages_map)
		munmap(c->pages_map, c->pages_map_len);
	pc__cache_free(c, c->nodes, (size_t)c->nr_nodes * sizeof(*c->nodes));
	c->data = NULL;
	c->pages = NULL;
	c->data_map = c->pages_map = NULL;
	c->nodes = NULL;
}

struct pc_arena *pc__node_arena(struct pc_cache *c)
{
	struct pc_tctx *t = pc__tctx(c);

	return c->nodes[t ? t->node : 0].tree_arena;
}
