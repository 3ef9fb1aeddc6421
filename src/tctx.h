/*
 * tctx.h - each thread's context in each cache (tctx.c): struct pc_tctx,
 * with its LRU batches (lru.c), its own free frames (pcp.c), its
 * dirty-throttle state (throttle.c), and the ledger of what its thread
 * holds where its process may die - the references (held[]) and the pins
 * (pins[]) that the reaper of a dead process gives back (pc__tctx_reap).
 * Included by the files that find or look inside a context.
 */
#ifndef PC_TCTX_H
#define PC_TCTX_H

#include "internal.h"

/*
 * held[]'s slots, carved up by call site: each code path that records
 * the references it holds has a range of its own, its size given once
 * here and its first slot, PC_HELD_<range>_AT, counted from the ranges
 * before it (PC_HELD_SLOTS: all of them).  The ranges may not overlap: a
 * thread can hold records in several at once (the write path's page
 * recorded while marking it accessed drains the thread's batches), and
 * a slot is set and cleared by the code of its range alone.
 *
 *   range   slots               recorded by: what (from the get on)
 *   ONE     1                   filemap.c: the read or write path's page
 *   ISO     PC_RECLAIM_BATCH    vmscan.c: the batch reclaim isolated
 *                               (PC_HELD_ISO while off its list)
 *   WB      64                  writeback.c: a gang's pages (WB_GANG at
 *                               most, asserted there), to the io_pid mark
 *   DRAIN   2 * PC_LRU_BATCH    lru.c: the copies a drain took of a
 *                               context's two batches (the adds'
 *                               PC_HELD_ISO until each is on a list)
 */
#define PC_HELD_RANGES(X)						\
	X(ONE, 1)							\
	X(ISO, PC_RECLAIM_BATCH)					\
	X(WB, 64)							\
	X(DRAIN, 2 * PC_LRU_BATCH)

enum pc_held_slot {
#define PC_HELD_RANGE_ENUM(r, n)					\
	PC_HELD_##r##_AT, PC_HELD_##r##_LAST = PC_HELD_##r##_AT + (n) - 1,
	PC_HELD_RANGES(PC_HELD_RANGE_ENUM)
#undef PC_HELD_RANGE_ENUM
	PC_HELD_SLOTS
};
/* The slots of range @r (ONE, ISO, WB or DRAIN). */
#define PC_HELD_N(r) (PC_HELD_##r##_LAST - PC_HELD_##r##_AT + 1)

#define PC_PINS 16			/* pins[]: pages a thread pinned */
#define PC_HELD_ISO (1u << 31)		/* the page is off its LRU by us */

/* Per-thread, per-cache context (tctx.c): node, LRU batches. */
struct pc_tctx {
	struct pc_cache *cache;
	uint64_t cache_id;
	int node;
	unsigned shard;
	struct pc_lock lock;		/* batches; remote drains take it */
	struct pc_page *add[PC_LRU_BATCH];
	unsigned nr_add;
	struct pc_page *act[PC_LRU_BATCH];
	unsigned nr_act;
	unsigned dirty_ratelimit;	/* pages dirtied since last throttle */
	unsigned nr_dirtied_pause;	/* throttle.c: check after this many */
	int64_t bdp_owed_ns;		/* throttle.c: pause owed (paced) */
	uint64_t bdp_period;		/* throttle.c: counted as a dirtier */
	struct pc_bdi *bdp_bdi;		/* ... of this bdi, in this period */
	bool in_reclaim;		/* direct reclaim recursion guard */
	/*
	 * pcp.c: free frames of node pcp_node taken off its free list
	 * together, handed to this thread's allocations from the end (the
	 * lowest frame last in, first out: ascending); t->lock (its owner
	 * and remote drains).  Count 0, out of the node's nr_free.
	 */
	uint32_t pcp[PC_PCP_MAX];
	_Atomic unsigned nr_pcp;	/* written under t->lock */
	int pcp_node;
	int32_t pid;			/* the thread's process (shared caches
					   hold every process's contexts) */
	struct pc_tctx *next;		/* c->tctx_lock */
	/*
	 * Shared caches: the pages this thread holds a reference on across
	 * code where its process may die, each as pfn + 1 (| PC_HELD_ISO:
	 * off its LRU list by this thread), 0 for none.  Written by the
	 * thread alone - recorded after its get (a release store: the get
	 * comes first), cleared before its put or before the reference goes
	 * to another holder (the put's RMW orders it) - so a death between
	 * the two can only leak a reference, never give one back twice.
	 * Read by the reaper of its process (pc__tctx_reap), who gives back
	 * what is recorded.  A line of its own: the read path writes it on
	 * every page.  Slots: by call site (PC_HELD_RANGES, above).
	 */
	_Atomic uint32_t held[PC_HELD_SLOTS] __attribute__((aligned(64)));
	/*
	 * Shared caches: the pins (pc_get_page) this thread took or gave
	 * back, each as (pfn + 1) << 32 | its net count (int32: a put from
	 * a thread other than the getter's is -1 here, +1 in the getter's);
	 * 0 for none.  Written by the thread alone with plain stores (a
	 * spare context, below: under c->tctx_lock), summed over the
	 * process's contexts by its reaper, which gives back what is left
	 * (tctx.c).  After the get, before the put: a death between can
	 * only leak.
	 */
	_Atomic uint64_t pins[PC_PINS] __attribute__((aligned(64)));
	bool spare;			/* no thread's: a process's overflow
					   and exited threads' pins */
};

/* tctx.c: the process's caches and the threads' contexts in them. */
int pc__cache_register(struct pc_cache *c);
void pc__cache_unregister(struct pc_cache *c);
struct pc_tctx *pc__tctx(struct pc_cache *c);
/* Every context's LRU batches onto the lists and its frames (pcp.c)
 * back on the free lists: reclaim, resize, invalidation, destroy. */
unsigned pc__tctx_drain_all(struct pc_cache *c);	/* frames given back */
/* The contexts of process @pid's threads (it died): drained, freed. */
void pc__tctx_reap(struct pc_cache *c, pid_t pid);
/*
 * The references this thread holds (struct pc_tctx: held[]).  The
 * context to record them in: a shared cache's only (NULL: a private
 * cache records nothing, and every helper does nothing with NULL).
 */
static inline struct pc_tctx *pc__held_ctx(struct pc_cache *c)
{
	return c->shared ? pc__tctx(c) : NULL;
}
/* After the get: slot @i holds a reference on @p (@kind 0 or PC_HELD_ISO). */
static inline void pc__held_set(struct pc_tctx *t, int i, struct pc_cache *c,
				const struct pc_page *p, uint32_t kind)
{
	if (t && i >= 0)
		atomic_store_explicit(&t->held[i], (page_pfn(c, p) + 1) | kind,
				      memory_order_release);
}
/* Before the put (or the hand-off): slot @i holds nothing. */
static inline void pc__held_clear(struct pc_tctx *t, int i)
{
	if (t && i >= 0)
		atomic_store_explicit(&t->held[i], 0, memory_order_relaxed);
}
/*
 * A pin of @p taken (@delta 1, after the get) or given back (-1, before
 * the put) by this process, in a shared cache (@t: pc__held_ctx): no
 * atomic read-modify-write in the common case (the thread's own table).
 */
void pc__pin_note(struct pc_cache *c, struct pc_tctx *t,
		  const struct pc_page *p, int delta);
/* The slot of [@from, @from + @n) that records @p, or -1. */
int pc__held_find(struct pc_tctx *t, unsigned from, unsigned n,
		  struct pc_cache *c, const struct pc_page *p);

#endif /* PC_TCTX_H */
