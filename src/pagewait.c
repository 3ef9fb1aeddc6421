/*
 * pagewait.c - page lock and page bit waits: hashed wait queues, PG_waiters.
 *
 * What this file owns: the PG_locked sleeping lock (lock, trylock, unlock),
 * waiting for a page bit to clear (PG_locked, PG_writeback), the clearing of
 * PG_writeback at the end of writeback, and the PG_waiters bit.  Waits need
 * no cache: a struct pc_pagewait (one per cache, c->wait) and the pages.
 *
 * Shared between processes (pc__pagewait_init_shared: the pagewait and the
 * pages in memory every process maps, shm.h): the queue locks are
 * process-shared and robust, the futexes are not FUTEX_PRIVATE, and the
 * waiters are records of a pool in that memory, not on stacks another
 * process cannot read.  A process's death is mended for it (procs.c calls
 * pc__pagewait_reap, then lets go the dead one's page locks), which asks
 * three things of this file:
 *   - the lock's owner is part of the acquisition.  The high half of the
 *     flags word (page.h: PG_OWNER_SHIFT) holds 1 + the holder's slot in
 *     the cache's table of processes, set by the compare-and-swap that
 *     takes PG_locked (lock_take: trylock, lock, the waiter's re-check and
 *     the waker's hand-off, which sets the waiter's owner, kept in its
 *     record) and cleared by the fetch_and that lets it go.  So there is
 *     no moment at which the lock is held and its owner unknown (the
 *     window a robust futex list closes with list_op_pending), and no
 *     stale owner of a dead releaser left on a lock another took since.
 *     A process finds its owner bits by the page's address, asking the
 *     process's table of caches (local.c) through pc__pagewait_owner_hook;
 *     a private cache's pages have none and are taken with a test-and-set
 *     as before;
 *   - a waker tells its waiters DONE while it holds q->lock, together
 *     with unlinking them: after that only futex wakes remain, and a waker
 *     that dies before them leaves its waiters DONE, which the reaper
 *     wakes again (a waker that dies holding q->lock is a robust mutex's
 *     death: the cache is broken);
 *   - a waiter's record carries its owner, so the reaper finds the dead
 *     one's records, unlinks those still queued (before its page scan: no
 *     lock is handed to the dead after it) and gives them back; and it
 *     wakes the waiters a dead waker left with their bit clear.
 *
 *   struct pc_pagewait                     waiters, each on its own
 *   ┌──────────────────────────────┐       thread's stack
 *   │ waiters_bit (policy, r/o)    │
 *   │ q[0]   lock waiters ─────────┼──► {page A, PG_locked, excl} ◄─► {page B,
 *   │ q[1]   lock waiters          │     state (futex word)}          PG_writeback}
 *   │  ...   lookups wakeups       │
 *   │ q[255]                       │     q[hash(page address)]: several pages
 *   └──────────────────────────────┘     share a queue; a waiter names its page
 *
 * Protection:
 *   q->lock        the queue's list (q->waiters, the waiters' links), and
 *                  every change of PG_waiters: it is set by a waiter after it
 *                  queued itself and cleared only when no waiter of that page
 *                  is left in the queue.  The lock is a leaf: nothing is
 *                  taken under it, and it may be taken under any lock of the
 *                  order in lock.h (unlock_page runs under tree locks).
 *   q->lookups,    atomic counters, written under q->lock, read without it.
 *   q->wakeups
 *   waiter->state  the futex word: written by the waker after it unlinked
 *                  the waiter, read by the waiter (release / acquire).
 *   page flags     atomic; PG_locked is owned by whoever set it.
 *
 * Waiting (lock_page, wait_on_page_bit), after a failed fast path:
 *   1. take q->lock, append the waiter, set PG_waiters;
 *   2. re-check under q->lock: for an exclusive waiter try to take PG_locked,
 *      for a shared one test the bit.  If done, unlink, clear PG_waiters if
 *      no other waiter of the page is queued, and return;
 *   3. drop q->lock and sleep on the futex until the state says DONE.  The
 *      waker unlinked us before it said so: nothing of ours is left in the
 *      queue.  An exclusive waiter returns owning the lock (hand-off).
 *
 * Waking (unlock_page, end_page_writeback):
 *   1. one atomic fetch_and clears the bit and returns the old flags;
 *   2. with the waiters_bit policy on, stop there unless PG_waiters was set
 *      in those old flags (seed 001: no queue lookup when no one waits);
 *      with it off (the kernel before seed 001), always go on (waiters
 *      still keep PG_waiters up to date: it costs only their slow path);
 *   3. take q->lock (a lookup), walk the queue: waiters of this page and bit
 *      are unlinked and told DONE.  For PG_locked the first exclusive waiter
 *      is handed the lock: the waker sets PG_locked for it, as its owner (if a
 *      trylock barged in between step 1 and now, the waiter stays queued and
 *      PG_waiters stays set, so the barger's unlock comes back here).  Later
 *      exclusive waiters stay queued: no thundering herd.  Shared waiters of
 *      the bit are all woken;
 *   4. if no waiter of this page is left in the queue (other pages may have
 *      some: the queues are shared), clear PG_waiters -- under q->lock, so a
 *      waiter of the page is either still queued (and the bit stays) or
 *      queues later (and sets it again).  This is the race of seed 001:
 *      never clear the bit while a waiter of the page may still be queued;
 *   5. drop q->lock, then FUTEX_WAKE each waiter that had gone to sleep
 *      (the exchange to DONE in step 3 said so).
 *
 * No lost wake-up.  PG_waiters and the waited-for bit live in one atomic
 * word, so the waiter's "set PG_waiters, then re-read the bit" and the
 * waker's "clear the bit and read PG_waiters" (one RMW) are ordered by that
 * word's modification order alone, no fence needed (the kernel needed
 * smp_mb__after_atomic because its waitqueue_active was another word):
 *   - waker's RMW after waiter's set: the waker sees PG_waiters, takes
 *     q->lock and finds the waiter, queued before it set the bit;
 *   - waker's RMW before waiter's set: the waiter's re-read, after its own
 *     set, sees the bit clear and it does not sleep.
 * PG_waiters cannot be cleared under a queued waiter (step 4), so the first
 * case holds until the waiter is unlinked.  A waiter that is unlinked and
 * marked DONE cannot miss the futex wake: it sleeps only with the word at
 * SLEEPING, and the waker's exchange to DONE precedes its FUTEX_WAKE.
 *
 * The argument holds only if every clear of PG_locked is a waker's step 1:
 * pc__unlock_page, never a plain clear of the bit (page_clear, a store of
 * the flags).  That goes for a page no lookup can find too: lockers also
 * reach pages by frame number (resize.c's evict, with a reference and a
 * mapping seen), and a new page is in sight of them from the moment its
 * mapping is set, before its insertion into the tree - so one that loses
 * the insertion race is let go with pc__unlock_page (filemap.c).  Issue
 * 36 was that case: a readahead page that lost the race was unlocked by a
 * plain clear and a shrink slept on it for ever, PG_waiters set and
 * PG_locked clear.  The frees (page_alloc.c) store 0 in the flags, which is
 * safe because no waiter is queued on a page without a reference to it:
 * at most a waker still holding the queue lock clears a PG_waiters that
 * is already gone.
 *
 * Lifetime: a waiter lives on its thread's stack (a shared pagewait's, on
 * a record of its pool: see waiter_get); once it sees DONE it may return
 * and the stack or the record is reused.  The waker reads nothing of it after its
 * store of DONE (its link to the next waiter is read before) except to pass
 * its address to FUTEX_WAKE, which at worst
 * wakes an unrelated futex sleeper at that address spuriously (every futex
 * user tolerates that; glibc's mutexes rely on the same).  Waiters that
 * never went to sleep cost the waker no system call.
 *
 * What "wait until the bit is clear" means: a shared waiter returns once it
 * saw the bit clear or a clear of the bit woke it.  For PG_writeback it then
 * re-checks and waits again if writeback was started anew (as the kernel's
 * wait_on_page_writeback loops).  For PG_locked it does not: with hand-off
 * the lock is usually owned again by the next waiter by the time a shared
 * waiter runs, and looping would starve it (the kernel's SHARED behaviour).
 * Callers of wait_on_page_locked test what they care about (PG_uptodate).
 *
 * Callers must not hold any queue lock (none is visible outside this file),
 * and must not hold a lock that a page lock holder may take (lock.h:
 * the page lock is outside the tree, bdi, lru and free locks) when they
 * sleep in lock_page or wait_on_page_bit.
 */
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pagewait.h"

enum {
	W_WAITING,	/* queued, not yet asleep */
	W_SLEEPING,	/* queued, in (or entering) FUTEX_WAIT */
	W_DONE,		/* unlinked by a waker: the wait is over */
};

struct pc_waiter {
	struct pc_page *page;		/* read-only while queued */
	int bit;			/* PG_locked or PG_writeback */
	bool exclusive;			/* wants PG_locked handed to it */
	_Atomic uint32_t state;		/* W_*; the futex word */
	struct pc_link link;		/* on q->waiters: q->lock */
	_Atomic uint32_t next_free;	/* shared pool: the next free record + 1 */
	/* Shared pool: the waiter's process (owner bits, page.h), set once
	 * the record is taken, 0 on the free stack; the lock is handed to it
	 * as this owner, and a dead process's records are found by it. */
	_Atomic uint32_t owner;
};

/* ------------------------------------------------------------------ */
/* Owners: this process's id in each shared cache it uses.            */

/*
 * Found by the page's address, since trylock and lock_new see only the
 * page: the process's table of caches (local.c) keeps the bits in its
 * entry for each cache and sets the hook when it first has any, so a
 * process that uses only private caches calls nothing (hook NULL: owner
 * 0).  The hook is lock-free (pagewait.h).
 */
_Atomic(pc_pagewait_owner_fn) pc__pagewait_owner_hook;

/* This process's owner bits for @p's lock: 0 in a private cache. */
static uint32_t owner_bits(const struct pc_page *p)
{
	pc_pagewait_owner_fn fn = atomic_load_explicit(&pc__pagewait_owner_hook,
						       memory_order_acquire);

	return fn ? fn(p) : 0;
}

/*
 * Take PG_locked for @owner (bits) if it is free: the owner goes into the
 * flags word by the same operation (a compare-and-swap), so there is no
 * moment at which the lock is held and its owner unknown.  Without an
 * owner, a test-and-set (a private cache; a shared one's page taken by a
 * process not in its table).
 */
static bool lock_take(struct pc_page *p, uint32_t owner)
{
	uint32_t f;

	if (!owner)
		return !page_test_set(p, PG_locked);
	f = atomic_load_explicit(&p->flags, memory_order_relaxed);
	do {
		if (f & (1u << PG_locked))
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
			 &p->flags, &f,
			 (f & ~PG_OWNER_MASK) | (1u << PG_locked) | owner,
			 memory_order_acq_rel, memory_order_relaxed));
	return true;
}

/* ------------------------------------------------------------------ */
/* Waiter records: the waiter's stack, or the shared pool.             */

/*
 * A shared pagewait's waiters must be where every process can reach them:
 * records of w->pool, taken and given back on a lock-free stack (its head
 * is a version in the high half and 1 + the index of the first free
 * record in the low half, so a record popped and pushed again between a
 * reader's load and its compare-and-swap fails the swap: no ABA).  All
 * taken: wait for one (a thread waits for one page at a time, so a pool
 * with a record per thread never runs dry).
 */
static struct pc_waiter *waiter_get(struct pc_pagewait *w,
				    struct pc_waiter *on_stack)
{
	uint64_t head, next;
	struct pc_waiter *x;

	if (!w->pool)
		return on_stack;
	for (;;) {
		head = atomic_load_explicit(&w->pool_head, memory_order_acquire);
		if ((uint32_t)head == 0) {
			sched_yield();
			continue;
		}
		x = &w->pool[(uint32_t)head - 1];
		next = ((head >> 32) + 1) << 32 |
		       atomic_load_explicit(&x->next_free, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			    &w->pool_head, &head, next, memory_order_acquire,
			    memory_order_relaxed))
			return x;
	}
}

static void waiter_put(struct pc_pagewait *w, struct pc_waiter *x)
{
	uint64_t head, next;

	if (!w->pool)
		return;
	atomic_store_explicit(&x->owner, 0, memory_order_relaxed);
	head = atomic_load_explicit(&w->pool_head, memory_order_relaxed);
	do {
		atomic_store_explicit(&x->next_free, (uint32_t)head,
				      memory_order_relaxed);
		next = ((head >> 32) + 1) << 32 | (uint32_t)(x - w->pool + 1);
	} while (!atomic_compare_exchange_weak_explicit(
			 &w->pool_head, &head, next, memory_order_release,
			 memory_order_relaxed));
}

static struct pc_waitq *page_waitq(struct pc_pagewait *w,
				   const struct pc_page *p)
{
	/* Fibonacci hashing of the address; pages are 8-byte aligned. */
	uint64_t h = ((uint64_t)(uintptr_t)p >> 3) * 0x9E3779B97F4A7C15ull;

	return &w->q[h >> (64 - PC_WAITQ_BITS)];
}

/* ------------------------------------------------------------------ */
/* The queue: a doubly linked FIFO (list.h) under q->lock.             */

#define waiter_of(l) pc_list_entry(l, struct pc_waiter, link)

static void waitq_add_tail_locked(struct pc_waitq *q, struct pc_waiter *x)
{
	PC_ASSERT_HELD(&q->lock);
	pc_list_add_tail(&q->waiters, &x->link);
}

static void waitq_del_locked(struct pc_waitq *q, struct pc_waiter *x)
{
	PC_ASSERT_HELD(&q->lock);
	pc_list_del(&q->waiters, &x->link);
}

static bool waitq_has_page_locked(const struct pc_waitq *q,
				  const struct pc_page *p)
{
	PC_ASSERT_HELD(&q->lock);
	for (const struct pc_link *l = q->waiters.head; l; l = l->next)
		if (waiter_of(l)->page == p)
			return true;
	return false;
}

/* Unlinked from its queue: clear PG_waiters unless another waiter remains. */
static void waiters_update_locked(struct pc_waitq *q, struct pc_page *p)
{
	PC_ASSERT_HELD(&q->lock);
	if (page_test(p, PG_waiters) && !waitq_has_page_locked(q, p))
		page_clear(p, PG_waiters);
}

/* ------------------------------------------------------------------ */
/* Sleeping and waking one waiter.                                     */

static void waiter_sleep(struct pc_pagewait *w, struct pc_waiter *me)
{
	for (;;) {
		uint32_t s = atomic_load_explicit(&me->state,
						  memory_order_acquire);

		if (s == W_DONE)
			return;
		if (s == W_WAITING &&
		    !atomic_compare_exchange_strong_explicit(
			    &me->state, &s, W_SLEEPING, memory_order_acquire,
			    memory_order_acquire))
			continue;	/* became DONE meanwhile */
		/* Returns at once (EAGAIN) if the word is no longer SLEEPING;
		 * EINTR and spurious wakes just go round again. */
		syscall(SYS_futex, &me->state,
			w->pool ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, W_SLEEPING,
			NULL, NULL, 0);
	}
}

/*
 * The futex wake of a waiter told DONE (under q->lock, see wake_page_bit);
 * by then it may be gone: at worst a spurious wake of whoever sleeps on
 * that address now.
 */
static void futex_wake(struct pc_pagewait *w, _Atomic uint32_t *state)
{
	syscall(SYS_futex, state, w->pool ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, 1,
		NULL, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* The wait and wake paths.                                            */

/*
 * Queue a waiter for @bit of @p and sleep until a waker is done with it.
 * Exclusive (PG_locked only): returns owning the lock.  Shared: returns
 * once the bit was clear (see the top of the file for PG_locked).
 */
static void wait_on_page_bit_common(struct pc_pagewait *w, struct pc_page *p,
				    int bit, bool exclusive)
{
	struct pc_waitq *q = page_waitq(w, p);
	struct pc_waiter on_stack, *me = waiter_get(w, &on_stack);
	bool done;

	PC_ASSERT(!exclusive || bit == PG_locked);
	me->page = p;
	me->bit = bit;
	me->exclusive = exclusive;
	atomic_store_explicit(&me->owner, w->pool ? owner_bits(p) : 0,
			      memory_order_relaxed);
	for (;;) {
		atomic_store_explicit(&me->state, W_WAITING,
				      memory_order_relaxed);
		pc__lock(&q->lock);
		waitq_add_tail_locked(q, me);
		page_set(p, PG_waiters);
		/* The re-check, after PG_waiters is visible in the word. */
		if (exclusive)
			done = lock_take(p, atomic_load_explicit(
						    &me->owner,
						    memory_order_relaxed));
		else
			done = !page_test(p, bit);
		if (done) {
			waitq_del_locked(q, me);
			waiters_update_locked(q, p);
		}
		pc__unlock(&q->lock);
		if (done)
			break;

		waiter_sleep(w, me);
		if (exclusive || bit == PG_locked || !page_test(p, bit))
			break;
		/* Writeback started again before we ran: wait for it too. */
	}
	waiter_put(w, me);
}

/*
 * @bit of @p was just cleared and someone may wait for it: wake them.
 * For PG_locked, hand the lock to the first exclusive waiter, as its
 * owner.  Each waiter is unlinked and told DONE under q->lock, in one
 * hold: a waker that dies cannot leave a waiter unlinked and never told
 * (dying under q->lock is a robust mutex's death: the cache is broken).
 * Only the futex wakes of those asleep come after the lock - a death
 * there is mended by the reaper, which wakes every record that is DONE
 * (pc__pagewait_reap).  More sleepers than WAKE_BATCH: the rest are woken
 * under the lock.
 */
#define WAKE_BATCH 16

static void wake_page_bit(struct pc_pagewait *w, struct pc_page *p, int bit)
{
	struct pc_waitq *q = page_waitq(w, p);
	_Atomic uint32_t *sleeping[WAKE_BATCH];
	struct pc_link *l, *next;
	bool handed = false, others = false;
	unsigned nsleep = 0;
	uint64_t n = 0;

	pc__lock(&q->lock);
	atomic_fetch_add_explicit(&q->lookups, 1, memory_order_relaxed);
	for (l = q->waiters.head; l; l = next) {
		struct pc_waiter *x = waiter_of(l);

		next = l->next;	/* read before DONE: the waiter may go after */
		if (x->page != p)
			continue;
		if (x->bit != bit) {
			others = true;
			continue;
		}
		if (x->exclusive) {
			/* One hand-off; none if a trylock barged in. */
			if (handed ||
			    !lock_take(p, atomic_load_explicit(
						  &x->owner,
						  memory_order_relaxed))) {
				others = true;
				continue;
			}
			handed = true;
		}
		waitq_del_locked(q, x);
		n++;
		if (atomic_exchange_explicit(&x->state, W_DONE,
					     memory_order_release) ==
		    W_SLEEPING) {
			if (nsleep < WAKE_BATCH)
				sleeping[nsleep++] = &x->state;
			else
				futex_wake(w, &x->state);
		}
	}
	if (!others && page_test(p, PG_waiters))
		page_clear(p, PG_waiters);
	if (n)
		atomic_fetch_add_explicit(&q->wakeups, n, memory_order_relaxed);
	pc__unlock(&q->lock);
	PC_PARK(PC_PARK_WAKE);
	for (unsigned k = 0; k < nsleep; k++)
		futex_wake(w, sleeping[k]);
}

/* ------------------------------------------------------------------ */
/* The interface (pagewait.h).                                         */

void pc__pagewait_init(struct pc_pagewait *w, bool waiters_bit)
{
	w->waiters_bit = waiters_bit;
	w->pool = NULL;
	w->pool_n = 0;
	atomic_init(&w->pool_head, 0);
	for (unsigned i = 0; i < PC_NR_WAITQ; i++) {
		struct pc_waitq *q = &w->q[i];

		pc__lock_init(&q->lock, NULL, PC_RANK_WAITQ, -1);
		q->waiters.head = q->waiters.tail = NULL;
		atomic_init(&q->lookups, 0);
		atomic_init(&q->wakeups, 0);
	}
}

size_t pc__pagewait_waiter_size(void)
{
	return sizeof(struct pc_waiter);
}

void pc__pagewait_init_shared(struct pc_pagewait *w, bool waiters_bit,
			      void *pool, unsigned n, _Atomic int *broken)
{
	pc__pagewait_init(w, waiters_bit);
	for (unsigned i = 0; i < PC_NR_WAITQ; i++)
		pc__lock_init_shared(&w->q[i].lock, PC_RANK_WAITQ, broken);
	w->pool = pool;
	w->pool_n = n;
	for (unsigned i = 0; i < n; i++)	/* record i links to i + 1 */
		atomic_init(&w->pool[i].next_free, i + 1 < n ? i + 2 : 0);
	atomic_store(&w->pool_head, n ? 1 : 0);
}

/* No thread may be waiting any more. */
void pc__pagewait_fini(struct pc_pagewait *w)
{
	for (unsigned i = 0; i < PC_NR_WAITQ; i++) {
		PC_ASSERT(pc_list_empty(&w->q[i].waiters));
		pc__lock_destroy(&w->q[i].lock);
	}
}

bool pc__trylock_page(struct pc_page *p)
{
	/* Test before taking it: a failing trylock writes no line. */
	return !page_test(p, PG_locked) && lock_take(p, owner_bits(p));
}

void pc__lock_page(struct pc_pagewait *w, struct pc_page *p)
{
	pc__lock_check_sleep(PC_RANK_PAGE, p);	/* even when it would not */
	if (!lock_take(p, w->pool ? owner_bits(p) : 0)) {
		wait_on_page_bit_common(w, p, PG_locked, true);
		PC_ASSERT(page_test(p, PG_locked));
	}
	PC_PARK(PC_PARK_LOCKED);
}

uint32_t pc__page_lock_flags(const struct pc_page *p)
{
	return 1u << PG_locked | owner_bits(p);
}

void pc__page_lock_new(struct pc_page *p)
{
	PC_ASSERT(!page_test(p, PG_locked));
	PC_ASSERT(!(atomic_load(&p->flags) & PG_OWNER_MASK));
	atomic_fetch_or_explicit(&p->flags, pc__page_lock_flags(p),
				 memory_order_acq_rel);
}

void pc__unlock_page(struct pc_pagewait *w, struct pc_page *p)
{
	uint32_t old;

	/* The lock and its owner go in one operation: no stale owner is
	 * left for a reaper to match against the next holder. */
	old = atomic_fetch_and_explicit(&p->flags,
					~(1u << PG_locked | PG_OWNER_MASK),
					memory_order_acq_rel);
	PC_ASSERT(old & (1u << PG_locked));
	PC_PARK(PC_PARK_UNLOCKED);
	if (w->waiters_bit && !(old & (1u << PG_waiters)))
		return;
	wake_page_bit(w, p, PG_locked);
}

void pc__wait_on_page_bit(struct pc_pagewait *w, struct pc_page *p, int bit)
{
	PC_ASSERT(bit == PG_locked || bit == PG_writeback);
	pc__lock_check_sleep(PC_RANK_PAGE, p);
	if (!page_test(p, bit))
		return;
	wait_on_page_bit_common(w, p, bit, false);
}

void pc__end_page_writeback_bit(struct pc_pagewait *w, struct pc_page *p)
{
	uint32_t old = atomic_fetch_and_explicit(&p->flags,
						 ~(1u << PG_writeback),
						 memory_order_acq_rel);

	PC_ASSERT(old & (1u << PG_writeback));
	if (w->waiters_bit && !(old & (1u << PG_waiters)))
		return;
	wake_page_bit(w, p, PG_writeback);
}

uint64_t pc__pagewait_lookups(struct pc_pagewait *w)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < PC_NR_WAITQ; i++)
		n += atomic_load_explicit(&w->q[i].lookups,
					  memory_order_relaxed);
	return n;
}

uint64_t pc__pagewait_wakeups(struct pc_pagewait *w)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < PC_NR_WAITQ; i++)
		n += atomic_load_explicit(&w->q[i].wakeups,
					  memory_order_relaxed);
	return n;
}

/* ------------------------------------------------------------------ */
/* A dead process's part (shared pagewaits: procs.c's reaper).         */

static bool waitq_has_locked(const struct pc_waitq *q,
			     const struct pc_waiter *x)
{
	PC_ASSERT_HELD(&q->lock);
	for (const struct pc_link *l = q->waiters.head; l; l = l->next)
		if (l == &x->link)
			return true;
	return false;
}

/*
 * A waiter of @q whose bit is clear, with no waker left to wake it (its
 * waker died between clearing the bit and the queue): its page and bit.
 */
static bool waitq_find_due(struct pc_waitq *q, struct pc_page **p, int *bit)
{
	bool found = false;

	pc__lock(&q->lock);
	for (const struct pc_link *l = q->waiters.head; l && !found;
	     l = l->next) {
		struct pc_waiter *x = waiter_of(l);

		if (!page_test(x->page, x->bit)) {
			*p = x->page;
			*bit = x->bit;
			found = true;
		}
	}
	pc__unlock(&q->lock);
	return found;
}

/*
 * In this order, each step closing what the one before may still open:
 *   1. the records the dead process's threads had taken (owner @id): one
 *      still queued is unlinked (no lock can be handed to it from then
 *      on), and each goes back to the pool.  A lock handed to one before
 *      is the dead process's by its owner bits: the page scan that
 *      follows (procs.c) lets it go;
 *   2. every queue is looked through for waiters whose bit is clear - a
 *      waker that died between its clearing RMW and its queue leaves
 *      those - and they are woken as the waker would have (a hand-off
 *      included).  A waiter found so is either handed the lock (and
 *      unlinked) or finds it taken again by a barger (then the bit is set
 *      and a later unlock comes for it), so the look ends;
 *   3. every record told DONE is woken once more: a waker that died after
 *      its queue hold and before its futex wakes leaves its sleepers
 *      DONE and asleep.  A spurious wake of a record since reused costs
 *      its waiter one more look at its state.
 * A death inside a queue's lock is the robust mutex's (the cache is
 * broken); a death within the few instructions between taking a pool
 * record and marking it ours (or giving it back) leaks that one record.
 * Returns the waiters taken out in step 1.
 */
unsigned pc__pagewait_reap(struct pc_pagewait *w, uint32_t id)
{
	uint32_t bits = id << PG_OWNER_SHIFT;
	unsigned n = 0;

	if (!w->pool || !id)
		return 0;
	for (uint32_t i = 0; i < w->pool_n; i++) {
		struct pc_waiter *x = &w->pool[i];
		struct pc_waitq *q;

		if (atomic_load(&x->owner) != bits)
			continue;
		q = page_waitq(w, x->page);
		pc__lock(&q->lock);
		if (waitq_has_locked(q, x)) {
			waitq_del_locked(q, x);
			waiters_update_locked(q, x->page);
			n++;
		}
		pc__unlock(&q->lock);
		waiter_put(w, x);
	}
	for (unsigned k = 0; k < PC_NR_WAITQ; k++) {
		struct pc_page *p;
		int bit;

		for (uint32_t tries = 0; tries <= w->pool_n &&
		     waitq_find_due(&w->q[k], &p, &bit); tries++)
			wake_page_bit(w, p, bit);
	}
	for (uint32_t i = 0; i < w->pool_n; i++)
		if (atomic_load(&w->pool[i].state) == W_DONE)
			futex_wake(w, &w->pool[i].state);
	return n;
}

#ifdef PC_DEBUG
_Atomic int pc__park_at;
int pc__park_fd = -1;

void pc__park(int where)
{
	char b = (char)where;

	atomic_store(&pc__park_at, 0);	/* once */
	if (write(pc__park_fd, &b, 1) != 1)
		_exit(99);
	for (;;)
		pause();
}

unsigned pc__pagewait_sleeping(struct pc_pagewait *w)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < w->pool_n; i++)
		if (atomic_load(&w->pool[i].state) == W_SLEEPING &&
		    atomic_load(&w->pool[i].owner))
			n++;
	return n;
}
#endif
