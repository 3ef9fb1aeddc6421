/*
 * pagewait.h - the page lock and bit waits on hashed wait queues
 * (pagewait.c, a leaf module: it knows pages, nothing else of the core).
 */
#ifndef PC_PAGEWAIT_H
#define PC_PAGEWAIT_H

#include "base.h"
#include "list.h"
#include "lock.h"
#include "page.h"

/*
 * 256 queues per cache, hashed by page address.  PG_waiters is set on a
 * page while a waiter for it is queued; with the waiters bit policy on,
 * unlock_page and end_page_writeback look at a queue only when it is set.
 * Waiters sleep on a futex of their own; unlock hands the lock directly to
 * the first exclusive waiter.
 */
#define PC_WAITQ_BITS 8
#define PC_NR_WAITQ (1u << PC_WAITQ_BITS)

struct pc_waiter;
struct pc_waitq {
	struct pc_lock lock;
	struct pc_list waiters;		/* of struct pc_waiter, FIFO */
	_Atomic uint64_t lookups;	/* times this queue was searched */
	_Atomic uint64_t wakeups;	/* waiters woken */
} __attribute__((aligned(64)));

struct pc_pagewait {
	bool waiters_bit;	/* read-only after init */
	struct pc_waiter *pool;	/* read-only: shared waiters; NULL: stacks */
	uint32_t pool_n;	/* read-only */
	_Atomic uint64_t pool_head;	/* version << 32 | 1 + first free */
	struct pc_waitq q[PC_NR_WAITQ];
};

void pc__pagewait_init(struct pc_pagewait *w, bool waiters_bit);
/*
 * A pagewait that processes share: @w, its pages and @pool (@n records of
 * pc__pagewait_waiter_size() bytes: one per thread that may wait at once,
 * in every process) in memory they all map at one address (shm.h); the
 * queue locks record a dead holder in @broken.
 */
void pc__pagewait_init_shared(struct pc_pagewait *w, bool waiters_bit,
			      void *pool, unsigned n, _Atomic int *broken);
size_t pc__pagewait_waiter_size(void);
void pc__pagewait_fini(struct pc_pagewait *w);
/*
 * Shared caches: this process's owner bits (page.h: id << PG_OWNER_SHIFT)
 * for page @p's lock - the id 1 + its slot in @p's cache's table of
 * processes (procs.c), the slot naming the entry that holds the process's
 * identity - or 0: none (a private cache's page).  Asked of the
 * process's table of caches (local.c sets the hook; NULL: 0 for every
 * page) without a lock, from the page lock's fast paths.  The page lock's
 * owner is written by the operation that takes the lock (hand-off too).
 */
typedef uint32_t (*pc_pagewait_owner_fn)(const struct pc_page *p);
extern _Atomic(pc_pagewait_owner_fn) pc__pagewait_owner_hook;
void pc__lock_page(struct pc_pagewait *w, struct pc_page *p);
bool pc__trylock_page(struct pc_page *p);
/*
 * @p, new and in no tree yet, locked by this process.  A frame scan may
 * see it once its mapping is set (filemap.c): the lock goes with
 * pc__unlock_page even if the page never enters a tree.
 */
void pc__page_lock_new(struct pc_page *p);
/* The flags that say @p is locked by this process (migrate.c's new page). */
uint32_t pc__page_lock_flags(const struct pc_page *p);
void pc__unlock_page(struct pc_pagewait *w, struct pc_page *p);
/*
 * Sleep until @bit has been cleared since the call: for PG_locked the lock
 * may already be handed to its next owner when this returns (look at
 * PG_uptodate, not at the lock); for PG_writeback it loops while set.
 * Only PG_locked and PG_writeback can be waited on.
 */
void pc__wait_on_page_bit(struct pc_pagewait *w, struct pc_page *p, int bit);
/* Clear PG_writeback and wake its waiters. */
void pc__end_page_writeback_bit(struct pc_pagewait *w, struct pc_page *p);
/*
 * A shared pagewait: what the dead process of owner @id left - its
 * waiters out of the queues, their records back in the pool, the wakes a
 * dead waker left undone done.  Its page locks are the caller's to let go
 * after this (page_lock_owner == @id; no lock is handed to it from then
 * on).  Returns the waiters taken out.
 */
unsigned pc__pagewait_reap(struct pc_pagewait *w, uint32_t id);
uint64_t pc__pagewait_lookups(struct pc_pagewait *w);
uint64_t pc__pagewait_wakeups(struct pc_pagewait *w);

/*
 * Test builds: park points.  A test's forked child sets pc__park_at to
 * one and pc__park_fd to a pipe; the first thread that reaches it writes
 * a byte there and sleeps until the process is killed - the child dies
 * at that point of the code, for the reaper to mend.  Release builds:
 * nothing.
 */
enum {
	PC_PARK_NONE,
	PC_PARK_LOCKED,		/* pc__lock_page: the lock just taken */
	PC_PARK_UNLOCKED,	/* pc__unlock_page: cleared, none woken yet */
	PC_PARK_WAKE,		/* wake_page_bit: told DONE, not futex-woken */
	PC_PARK_REF,		/* pc_pread: a page held, its copy not made */
	PC_PARK_ISOLATED,	/* vmscan: a batch isolated from the LRU */
	PC_PARK_WB_TAGGED,	/* writeback: a gang locked, its tags moved */
	PC_PARK_WB_MARKED,	/* writeback: a page under writeback, locked */
	PC_PARK_READ_WAIT,	/* get_read_page: held, waiting for a read */
	PC_PARK_PINNED,		/* pc_get_page: the pin taken */
	PC_PARK_RA_NEW,		/* readahead: a run added, not yet read */
	PC_PARK_DRAIN,		/* lru.c: a drain's copies taken */
	PC_PARK_WB_ENDING,	/* wb_finish: counters moved, PG_writeback on */
	PC_PARK_WB_QUEUED,	/* wb_queue: counted in flight, not marked */
};
#ifdef PC_DEBUG
extern _Atomic int pc__park_at;
extern int pc__park_fd;
void pc__park(int where);
#define PC_PARK(where) \
	(atomic_load_explicit(&pc__park_at, memory_order_relaxed) == (where) \
		 ? pc__park(where) : (void)0)
/* Waiters of the pool asleep (or going to sleep) now. */
unsigned pc__pagewait_sleeping(struct pc_pagewait *w);
#else
#define PC_PARK(where) ((void)0)
#endif

#endif /* PC_PAGEWAIT_H */
