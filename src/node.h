/*
 * node.h - memory nodes: struct pc_node (a slice of the budget: frames,
 * free list, watermarks, LRU lists, kswapd), and what works on one node:
 * its setup (node.c), its free lists (page_alloc.c), a thread's own list
 * of its free frames (pcp.c), memory faulted in ahead (populate.c), its
 * LRU lists under the lru lock (lru.c), its reclaim (vmscan.c) and its
 * kswapd (kswapd.c).  Included by the files that look inside a node;
 * pages are allocated and freed through internal.h, and the LRU and
 * reclaim are called from outside a node through vmscan.h.
 */
#ifndef PC_NODE_H
#define PC_NODE_H

#include "internal.h"

enum pc_lru_list { PC_LRU_INACTIVE, PC_LRU_ACTIVE, PC_NR_LRU };

struct pc_lru {
	uint32_t head, tail;		/* frame numbers; head = most recent */
	_Atomic uint64_t nr;		/* written under lru_lock */
};

#define PC_MAX_NR_GENS 4	/* mglru: generations at most (MAX_NR_GENS) */
#define PC_MIN_NR_GENS 2	/* ... and at least (MIN_NR_GENS) */

/* reclaim.policy=mglru (mglru.c): written under lru_lock; the seqs are
 * atomic, read without it (the counters). */
struct pc_lru_gen {
	_Atomic uint64_t max_seq, min_seq;
	struct pc_lru lists[PC_MAX_NR_GENS];	/* by seq % PC_MAX_NR_GENS */
};

/* Frames a node takes from never-used memory at a time: 2 MiB of data. */
#define PC_FRAME_STEP 512u
/* Frames kswapd faults in ahead of the allocator at most (populate.c). */
#define PC_POPULATE_AHEAD_MAX (4 * PC_FRAME_STEP)
#define PC_MIN_NODE_FRAMES 16	/* the smallest share of the budget */

struct pc_arena;

struct pc_node {
	int id;
	struct pc_cache *cache;
	uint32_t first_pfn;		/* read-only: span c->frames_per_node */
	/* The node's share of the budget, and the watermarks made from it:
	 * written under free_lock (create, resize.c), read without it. */
	_Atomic uint32_t nr_frames;
	_Atomic uint64_t wmark_min, wmark_low, wmark_high;

	struct pc_lock free_lock;
	uint32_t free_head;		/* free_lock; linked through lru_next */
	_Atomic uint32_t hw;		/* written under free_lock: frames
					   [0, hw) of the span initialized */
	_Atomic uint64_t nr_free;	/* written under free_lock: free-listed
					   and never-used frames of the share */
	_Atomic uint64_t nr_retiring;	/* free_lock: frames above the share
					   still in use (a shrink, resize.c) */
	_Atomic uint64_t nr_pcp;	/* frames on threads' lists (pcp.c),
					   out of nr_free; atomic */
	/* populate.c: frames [hw, ready) faulted in ahead by kswapd; ready
	 * written under free_lock (atomic: read without it); populate_mtx
	 * held across each populate step and each give-back (resize.c) */
	_Atomic uint32_t ready;
	/* populate.c, shared caches: every step of [0, huge) was collapsed
	 * to a huge page, or tried; written under populate_mtx */
	_Atomic uint32_t huge;
	struct pc_lock populate_mtx;
	struct pc_arena *tree_arena;	/* read-only: tree nodes (arena.c) */

	struct pc_lock lru_lock;
	struct pc_lru lru[PC_NR_LRU];	/* lru_lock; under reclaim.policy
					   sieve and s3fifo, what each list
					   holds is policy.h's */
	uint32_t hand;			/* lru_lock: sieve's hand (policy.h),
					   a frame; PC_NO_PFN: the tail */
	struct pc_lru_gen lrugen;	/* lru_lock: mglru's generations */

	_Atomic uint64_t nonresident_age;	/* workingset clock */
	_Atomic uint64_t dirty_pages;	/* pages dirty on this node */

	/* kswapd: kswapd_mtx */
	pthread_t kswapd;
	bool kswapd_started;
	struct pc_lock kswapd_mtx;
	pthread_cond_t kswapd_cond;	/* kswapd sleeps here */
	pthread_cond_t alloc_cond;	/* allocators wait for progress */
	bool kswapd_wake;
	bool populate_wake;		/* kswapd: populate ahead (populate.c) */
	uint64_t wake_free;		/* nr_free when that wake was sent */
	_Atomic bool stop;
	_Atomic uint64_t reclaim_progress;	/* bumped when pages are freed */
	_Atomic int alloc_waiters;	/* allocators in the slow path here
					   (page_alloc.c: frees wake them) */
	_Atomic int kswapd_active;
	/*
	 * Pages added to low (twice that to high) while direct reclaim keeps
	 * happening (vmscan.c): kswapd starts earlier and stops later.
	 * Atomic, read without a lock.
	 */
	_Atomic uint64_t wmark_boost;
};

static inline struct pc_node *page_node(struct pc_cache *c,
					const struct pc_page *p)
{
	return &c->nodes[page_pfn(c, p) / c->frames_per_node];
}
/* The low and high marks in force: the fixed ones plus the boost. */
static inline uint64_t node_wmark_low(struct pc_node *n)
{
	return n->wmark_low + atomic_load_explicit(&n->wmark_boost,
						   memory_order_relaxed);
}
static inline uint64_t node_wmark_high(struct pc_node *n)
{
	return n->wmark_high + 2 * atomic_load_explicit(&n->wmark_boost,
							memory_order_relaxed);
}

/* node.c */
/* memory= against its nodes and memory.max= (message on stderr): 0, -EINVAL */
int pc__config_check_budget(const struct pc_config *cfg);
/* Frames @cfg's nodes may ever have in all (shared=on: memory.max, else
 * memory; a private cache may grow to the machine's memory). */
uint64_t pc__config_span_frames(const struct pc_config *cfg);
int pc__nodes_init(struct pc_cache *c);
void pc__nodes_fini(struct pc_cache *c);
/* Set @n's watermarks from its nr_frames; free_lock held (resize). */
void pc__node_watermarks_locked(struct pc_cache *c, struct pc_node *n);
/* The tree-node arena of the calling thread's node. */
struct pc_arena *pc__node_arena(struct pc_cache *c);
/* page_alloc.c: the free lists */
/*
 * Up to @want frames of @n off its free list at once, into @pfns in the
 * list's order (lowest first after a reclaim's batch or a new step), for
 * a thread's own list (pcp.c): only while @n is above its low mark, never
 * leaving it below min; kswapd woken when it is left at low.  The frames
 * keep count 0 and leave nr_free.  Returns how many.
 */
unsigned pc__rmqueue_bulk(struct pc_cache *c, struct pc_node *n,
			  uint32_t *pfns, unsigned want);
/* Frames of @n that a thread's list held (count 0), back on the free list
 * (or retired, above the share); wakes @n's waiting allocators. */
void pc__free_frames(struct pc_cache *c, struct pc_node *n,
		     const uint32_t *pfns, unsigned nr);
/* A frame off a free list becomes a page: count 1, flags clear. */
static inline void pc__prep_new_page(struct pc_page *p)
{
	PC_ASSERT(page_count(p) == 0);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&p->hint_count, 0, memory_order_relaxed);
	atomic_store_explicit(&p->pol, 0, memory_order_relaxed);
	atomic_store_explicit(&p->refcount, 1, memory_order_release);
}
/* A frame of node @nid only if it stays above its low mark; never reclaims. */
struct pc_page *pc__alloc_page_on(struct pc_cache *c, int nid);
/*
 * Rounds of the slow path in a row with no frame freed anywhere and
 * nothing to come (only pinned pages) after which an allocation gives up
 * (the kernel's MAX_RECLAIM_RETRIES): it fails after one more.
 */
#define PC_MAX_RECLAIM_RETRIES 16
/* Something on @n may let a waiting allocator have a frame: wake those
 * waiting (none: one atomic load).  No lock at or after KSWAPD held. */
void pc__alloc_wake(struct pc_node *n);

/*
 * pcp.c: a frame of node @nid from @t's own list, refilled from the
 * node's free list while the node is above low (memory.thread_frames at
 * a time): consecutive allocations of one thread get frames side by side
 * however many threads allocate.  NULL: none (the caller takes one from
 * the free list as before).
 */
struct pc_page *pc__pcp_alloc(struct pc_cache *c, struct pc_tctx *t, int nid);
/* @t's frames back on their free list: frames given back. */
unsigned pc__pcp_drain(struct pc_cache *c, struct pc_tctx *t);

/*
 * populate.c: never-used memory faulted in ahead of the allocator, off the
 * hot path.  After the allocator initialized a step of @n:
 */
void pc__populate_after_grow(struct pc_cache *c, struct pc_node *n);
/* Fault in the next step ahead of @n's allocator (kswapd); frames done. */
unsigned pc__populate_step(struct pc_cache *c, struct pc_node *n);
/* Frames [hw, ready) that nothing will use again: ready down to @share
 * (free_lock and populate_mtx held). */
void pc__populate_forget_locked(struct pc_node *n, uint32_t share);

/* lru.c: lru_lock held */
void pc__lru_del_locked(struct pc_node *n, struct pc_page *p);
void pc__lru_add_locked(struct pc_node *n, struct pc_page *p, bool tail);

/* vmscan.c */
#define PC_DEF_PRIORITY 12	/* a reclaim pass scans inactive >> priority */
/* One reclaim's state (the kernel's scan_control), of kswapd or direct. */
struct pc_scan_control {
	struct pc_node *node;
	bool kswapd;
	int priority;
	unsigned long nr_scanned;
	unsigned long nr_reclaimed;
	unsigned long nr_writeback_tail;	/* isolated pages under writeback */
	unsigned long nr_dirty;		/* isolated dirty pages */
	unsigned long nr_busy;		/* will become reclaimable by itself */
	bool contended;
};
/* Shrink @n's lists by a batch at @sc's priority (its totals grow). */
void pc__shrink_node(struct pc_cache *c, struct pc_node *n,
		     struct pc_scan_control *sc);
/*
 * Direct reclaim on @n; returns pages freed.  *busy (if @busy) gets how
 * many of the pages it looked at will become reclaimable without their
 * users' help (dirty, under writeback, locked for I/O) as opposed to
 * pinned: for the allocator those are progress to come, waited for and
 * not counted against the allocation (page_alloc.c, the retry rule).
 */
unsigned long pc__direct_reclaim(struct pc_cache *c, struct pc_node *n,
				 unsigned long *busy);
/*
 * Reclaim up to @nr (at most a batch) pages from the tail of @n's inactive
 * list, as direct reclaim does but with no allocstall and no boost: for a
 * stream that keeps as many pages of its own (dropbehind.c).  Returns
 * pages freed.  No lock held but ra_lock.
 */
unsigned long pc__reclaim_tail(struct pc_cache *c, struct pc_node *n,
			       unsigned nr);
/*
 * kswapd of @n starts, woken when @n had @woken_at free frames: raise the
 * boost so that low is twice what was taken meanwhile above min.
 */
void pc__boost_for_latency(struct pc_cache *c, struct pc_node *n,
			   uint64_t woken_at);

/* kswapd.c */
void pc__wakeup_kswapd(struct pc_cache *c, struct pc_node *n);
/* Ask @n's kswapd to populate ahead (populate.c) when it has nothing to
 * reclaim; false when there is no kswapd to ask. */
bool pc__wakeup_populate(struct pc_cache *c, struct pc_node *n);
/*
 * @n is at min and its kswapd was woken or is running: wait (at most 1 ms)
 * for it to free pages before reclaiming directly; true if it did.
 */
bool pc__kswapd_give_way(struct pc_cache *c, struct pc_node *n);

#endif /* PC_NODE_H */
