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
 * process cannot read.  Whoever takes a page lock writes its process in
 * the page (lock_pid, pc__pid; the unlock clears it), so that a dead
 * process's page locks can be let go for it (share.c).
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
 *      are unlinked to be woken.  For PG_locked the first exclusive waiter is
 *      handed the lock: the waker sets PG_locked for it (test-and-set: if a
 *      trylock barged in between step 1 and now, the waiter stays queued and
 *      PG_waiters stays set, so the barger's unlock comes back here).  Later
 *      exclusive waiters stay queued: no thundering herd.  Shared waiters of
 *      the bit are all woken;
 *   4. if no waiter of this page is left in the queue (other pages may have
 *      some: the queues are shared), clear PG_waiters -- under q->lock, so a
 *      waiter of the page is either still queued (and the bit stays) or
 *      queues later (and sets it again).  This is the race of seed 001:
 *      never clear the bit while a waiter of the page may still be queued;
 *   5. drop q->lock, then store DONE in each unlinked waiter and FUTEX_WAKE
 *      it if it went to sleep.
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
 * Lifetime: a waiter lives on its thread's stack (a shared pagewait's, on
 * a record of its pool: see waiter_get); once it sees DONE it may return
 * and the stack or the record is reused.  The waker reads nothing of it after its
 * store of DONE except to pass its address to FUTEX_WAKE, which at worst
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
};

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

/* The waiter was unlinked by the caller; after this it may be gone. */
static void waiter_wake(struct pc_pagewait *w, struct pc_waiter *x)
{
	if (atomic_exchange_explicit(&x->state, W_DONE,
				     memory_order_release) == W_SLEEPING)
		syscall(SYS_futex, &x->state,
			w->pool ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
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
	for (;;) {
		atomic_store_explicit(&me->state, W_WAITING,
				      memory_order_relaxed);
		pc__lock(&q->lock);
		waitq_add_tail_locked(q, me);
		page_set(p, PG_waiters);
		/* The re-check, after PG_waiters is visible in the word. */
		if (exclusive)
			done = !page_test_set(p, PG_locked);
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
 * For PG_locked, hand the lock to the first exclusive waiter.
 */
static void wake_page_bit(struct pc_pagewait *w, struct pc_page *p, int bit)
{
	struct pc_waitq *q = page_waitq(w, p);
	struct pc_list wake = { NULL, NULL };
	struct pc_link *l, *next;
	bool handed = false, others = false;
	uint64_t n = 0;

	pc__lock(&q->lock);
	atomic_fetch_add_explicit(&q->lookups, 1, memory_order_relaxed);
	for (l = q->waiters.head; l; l = next) {
		struct pc_waiter *x = waiter_of(l);

		next = l->next;
		if (x->page != p)
			continue;
		if (x->bit != bit) {
			others = true;
			continue;
		}
		if (x->exclusive) {
			/* One hand-off; none if a trylock barged in. */
			if (handed || page_test_set(p, PG_locked)) {
				others = true;
				continue;
			}
			handed = true;
		}
		waitq_del_locked(q, x);
		pc_list_add_tail(&wake, &x->link);	/* ours now */
		n++;
	}
	if (!others && page_test(p, PG_waiters))
		page_clear(p, PG_waiters);
	if (n)
		atomic_fetch_add_explicit(&q->wakeups, n, memory_order_relaxed);
	pc__unlock(&q->lock);

	for (l = wake.head; l; l = next) {
		next = l->next;	/* read before DONE: the waiter may vanish after */
		waiter_wake(w, waiter_of(l));
	}
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
	/* Test before test-and-set: a failing trylock writes no line. */
	if (page_test(p, PG_locked) || page_test_set(p, PG_locked))
		return false;
	atomic_store_explicit(&p->lock_pid, pc__pid, memory_order_relaxed);
	return true;
}

void pc__lock_page(struct pc_pagewait *w, struct pc_page *p)
{
	pc__lock_check_sleep(PC_RANK_PAGE, p);	/* even when it would not */
	if (page_test_set(p, PG_locked)) {
		wait_on_page_bit_common(w, p, PG_locked, true);
		PC_ASSERT(page_test(p, PG_locked));
	}
	atomic_store_explicit(&p->lock_pid, pc__pid, memory_order_relaxed);
}

void pc__page_lock_new(struct pc_page *p)
{
	PC_ASSERT(!page_test(p, PG_locked));
	page_set(p, PG_locked);
	atomic_store_explicit(&p->lock_pid, pc__pid, memory_order_relaxed);
}

void pc__unlock_page(struct pc_pagewait *w, struct pc_page *p)
{
	uint32_t old;

	atomic_store_explicit(&p->lock_pid, 0, memory_order_relaxed);
	old = atomic_fetch_and_explicit(&p->flags, ~(1u << PG_locked),
					memory_order_acq_rel);
	PC_ASSERT(old & (1u << PG_locked));
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
