/*
 * page.h - struct pc_page, its flag bits and its reference count.
 *
 * One struct pc_page describes one 4 KiB frame.  The descriptors of a
 * cache live in one array (c->pages) reserved at create for the largest
 * budget the cache may grow to, and never unmapped; the frames' data in
 * another (c->data).  A descriptor is initialized when its frame is first
 * handed out (page_alloc.c: frames come in 2 MiB steps from never-used memory),
 * and a page pointer stays valid memory for the cache's life, which is
 * what lets readers take a speculative reference on a page they found
 * without any lock (RCU lookup, then get_unless_zero, then a re-check
 * that the page is still the one they looked up).  A frame retired by a
 * shrink keeps its descriptor readable: its count is below 1, so a late
 * speculative reader fails get_unless_zero and looks again.
 *
 * A descriptor is exactly one cache line, aligned to one: a hit reads the
 * flags, takes the reference, checks mapping and index and finds the data
 * in the line it already has.
 *
 *   refcount -1: retired: above its node's share of the budget since a
 *                shrink, off every list (PC_REF_RETIRED, resize.c);
 *             0: the frame is free (on its node's free list), never used,
 *                or frozen by the thread that is removing it from its
 *                mapping;
 *             1: in a mapping, no one else holds it (the mapping's ref);
 *            >1: plus readers, pinners, LRU isolation, per-thread batches.
 *   The reference that takes the count to zero releases the frame
 *   (pc__page_release: off the LRU if on it, then back to the free list).
 *
 *   flags     atomic bit set; PG_locked is a sleeping lock (pagewait.c).
 *             Bits 16-31 (PG_OWNER_SHIFT): in a shared cache, who holds
 *             PG_locked - 1 + the holder's slot in the cache's table of
 *             processes (procs.c), 0 for none - set by the one atomic
 *             operation that takes the lock and cleared by the one that
 *             lets it go, so a death leaves no lock without its owner.
 *   mapping,  written while the page is locked and frozen or new; read
 *   index     without a lock by speculative lookups, who re-check them.
 *   lru_prev, protected by the page's node lru lock while PG_lru is set;
 *   lru_next  lru_next links the free list under the node's free lock.
 *   data      set when the descriptor is initialized, then read-only.
 *   pol       the reclaim policy's word (policy.h: sieve's visited bit,
 *             s3fifo's frequency), 0 when the frame becomes a page;
 *             atomic, written by the hit path without a lock.
 */
#ifndef PC_PAGE_H
#define PC_PAGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pc_mapping;

enum pc_page_flag {
	PG_locked,	/* page lock: I/O in flight for read, or owner */
	PG_waiters,	/* someone waits on this page in a wait queue */
	PG_referenced,	/* accessed once since it was last considered */
	PG_uptodate,	/* data is valid */
	PG_dirty,	/* data differs from disk */
	PG_writeback,	/* write to disk in flight */
	PG_reclaim,	/* reclaim wants it: rotate to the tail at end of wb */
	PG_readahead,	/* the async readahead marker */
	PG_active,	/* on (or bound for) the active list */
	PG_lru,		/* on an LRU list of its node */
	PG_workingset,	/* refaulted page that was part of the working set */
	PG_error,	/* last I/O on the page failed */
	PG_unevictable,	/* never set today; reserved */
	PG_dropbehind,	/* use-once stream page: drop when consumed */
	PG_hint,	/* marked by the NUMA balancing scanner: the next
			   reader reports a hint fault (migrate.c) */
	PG_rapage,	/* brought in by readahead, not yet used */
	PG_nr_flags
};

/* The page lock's owner (shared caches): flags bits 16-31, see above. */
#define PG_OWNER_SHIFT 16
#define PG_OWNER_MASK (0xffffu << PG_OWNER_SHIFT)
_Static_assert(PG_nr_flags <= PG_OWNER_SHIFT, "flags and owner overlap");

#define PC_NO_PFN UINT32_MAX
#define PC_REF_RETIRED (-1)	/* refcount of a retired frame */
#define PC_IO_FIRST (1 << 30)	/* io_pid: the first page of a request */
#define PC_IO_MOVING (1 << 29)	/* io_pid: its write's counters moving */
#define PC_IO_ENDED (1 << 28)	/* io_pid: its write's counters moved, its
				   PG_writeback yet to end, its ref ours */
#define PC_IO_PID(v) ((v) & ~(PC_IO_FIRST | PC_IO_MOVING | PC_IO_ENDED))

struct pc_page {
	_Atomic uint32_t flags;
	_Atomic int32_t refcount;
	_Atomic(struct pc_mapping *) mapping;
	_Atomic uint64_t index;
	void *data;			/* the frame; read-only once initialized */
	uint32_t lru_prev;		/* node lru lock */
	uint32_t lru_next;		/* node lru lock (free list: free lock) */
	_Atomic int32_t last_node;	/* NUMA hint: node of last hint fault */
	_Atomic uint32_t hint_count;	/* NUMA hint: repeated remote hints;
					   bit 31: queued for migration
					   (migrate.c) */
	/* Shared caches: the process whose I/O holds the page (locked for
	 * a read, or under writeback), | PC_IO_FIRST on a request's first
	 * page; 0: none.  Written by the submitter and its completion; a
	 * dead process's are finished by the reaper (procs.c).  A write's
	 * completion (writeback_io.c: pc__wb_finish) marks it PC_IO_MOVING while
	 * the counters move, PC_IO_ENDED until its PG_writeback has ended;
	 * a new writeback of the page waits for 0. */
	_Atomic int32_t io_pid;
	_Atomic uint32_t pol;		/* reclaim policy's word: policy.h */
	uint64_t spare;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct pc_page) == 64, "struct pc_page is one line");

static inline bool page_test(const struct pc_page *p, int bit)
{
	return atomic_load_explicit(&((struct pc_page *)p)->flags,
				    memory_order_acquire) & (1u << bit);
}

static inline void page_set(struct pc_page *p, int bit)
{
	atomic_fetch_or_explicit(&p->flags, 1u << bit, memory_order_acq_rel);
}

static inline void page_clear(struct pc_page *p, int bit)
{
	atomic_fetch_and_explicit(&p->flags, ~(1u << bit), memory_order_acq_rel);
}

/* Returns whether the bit was set before. */
static inline bool page_test_set(struct pc_page *p, int bit)
{
	return atomic_fetch_or_explicit(&p->flags, 1u << bit,
					memory_order_acq_rel) & (1u << bit);
}

static inline bool page_test_clear(struct pc_page *p, int bit)
{
	return atomic_fetch_and_explicit(&p->flags, ~(1u << bit),
					 memory_order_acq_rel) & (1u << bit);
}

/* Who holds @p's page lock in a shared cache (see flags), or 0. */
static inline uint32_t page_lock_owner(const struct pc_page *p)
{
	uint32_t f = atomic_load_explicit(&((struct pc_page *)p)->flags,
					  memory_order_acquire);

	return f & (1u << PG_locked) ? f >> PG_OWNER_SHIFT : 0;
}

static inline struct pc_mapping *page_mapping(const struct pc_page *p)
{
	return atomic_load_explicit(&((struct pc_page *)p)->mapping,
				    memory_order_acquire);
}

static inline uint64_t page_index(const struct pc_page *p)
{
	return atomic_load_explicit(&((struct pc_page *)p)->index,
				    memory_order_acquire);
}

static inline int32_t page_count(const struct pc_page *p)
{
	return atomic_load_explicit(&((struct pc_page *)p)->refcount,
				    memory_order_acquire);
}

/* Take a reference the caller knows cannot be the first (it holds one). */
static inline void page_get(struct pc_page *p)
{
	atomic_fetch_add_explicit(&p->refcount, 1, memory_order_relaxed);
}

/* Take a reference unless the page is free or frozen (count 0). */
static inline bool page_get_unless_zero(struct pc_page *p)
{
	int32_t c = atomic_load_explicit(&p->refcount, memory_order_relaxed);

	while (c > 0) {
		if (atomic_compare_exchange_weak_explicit(&p->refcount, &c, c + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

/* Freeze: the count goes from exactly @expected to 0, or nothing changes. */
static inline bool page_ref_freeze(struct pc_page *p, int32_t expected)
{
	return atomic_compare_exchange_strong_explicit(&p->refcount, &expected, 0,
						       memory_order_acq_rel,
						       memory_order_relaxed);
}

static inline void page_ref_unfreeze(struct pc_page *p, int32_t count)
{
	atomic_store_explicit(&p->refcount, count, memory_order_release);
}

/* Drop a reference; true when it was the last (the caller releases). */
static inline bool page_put_testzero(struct pc_page *p)
{
	return atomic_fetch_sub_explicit(&p->refcount, 1,
					 memory_order_acq_rel) == 1;
}

#endif /* PC_PAGE_H */
