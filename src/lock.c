/*
 * lock.c - the ranked locks of lock.h: statistics for the four that keep
 * them, and in debug builds the lock-order witness.
 *
 * The witness (PC_DEBUG only) is a per-thread stack of the locks this
 * thread holds, each with its rank:
 *
 *   pc__lock(l)      1. check: every lock on the stack ranks before l,
 *                       and l is not on it (a self-deadlock)
 *                    2. take the mutex (statistics: contended, wait ns)
 *                    3. push l
 *   pc__trylock(l)   take it or fail; on success push l (no order check:
 *                    a trylock cannot deadlock)
 *   pc__unlock(l)    remove l from the stack (locks may be released in
 *                    any order), abort if it is not there; unlock
 *
 * A violation prints both locks (rank name and address) and aborts.  The
 * stack is the thread's own (__thread): no lock guards it.  Release builds
 * compile none of it.
 *
 * Statistics: the tree, bdi, lru and free locks count acquisitions,
 * contended acquisitions and the time waited (vmstat *_lock_acquired,
 * _contended, _wait_ns) in their cache's counters.  The counting is the
 * core's (pc__lock_counted, vmstat.c): this file only says whether an
 * acquisition waited and for how long (pc__lock_timed).  A leaf: it
 * includes lock.h and base.h, and calls nothing of the core.
 *
 * Shared locks (pc__lock_init_shared: process-shared, robust): a lock
 * whose holder died is taken all the same (EOWNERDEAD): owner_died marks
 * it consistent and sets the region's broken flag when it has one.
 *
 * Shared rwlocks (pc__rwlock_init_shared) are this file's own, since
 * glibc's have no robust kind: an owner word (the exclusive holder's
 * pid), a count of shared holds per process in PC_RW_SLOTS slots, and a
 * futex word waiters sleep on (the protocol is at rw_sleep).  A dead
 * process's holds are let go by pc__rwlock_reap, which the cache's reaper
 * calls (procs.c).  pc__pid, the process's pid for these and for the
 * page lock's owner, lives here so that leaves can read it.
 */
#include <execinfo.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lock.h"

pid_t pc__pid;

#ifdef PC_DEBUG
#define WITNESS_DEPTH 32

static const char *const rank_names[PC_NR_RANKS] = {
#define PC_LOCK_RANK_NAME(r) [PC_RANK_##r] = #r,
	PC_LOCK_RANKS(PC_LOCK_RANK_NAME)
#undef PC_LOCK_RANK_NAME
};

struct witness {
	const void *lock;
	int rank;
};

static __thread struct witness held[WITNESS_DEPTH];
static __thread unsigned nr_held;

static const char *rank_name(int rank)
{
	return rank >= 0 && rank < PC_NR_RANKS ? rank_names[rank] : "?";
}

static _Noreturn void witness_fail(const char *what, int rank,
				   const void *lock, const struct witness *w)
{
	if (w)
		fprintf(stderr, "pagecache: lock order: %s %s %p while holding "
			"%s %p (lock.h: the order)\n", what, rank_name(rank),
			lock, rank_name(w->rank), w->lock);
	else
		fprintf(stderr, "pagecache: lock order: %s %s %p\n", what,
			rank_name(rank), lock);
	{
		void *bt[32];
		int n = backtrace(bt, 32);

		backtrace_symbols_fd(bt, n, STDERR_FILENO);
	}
	abort();
}

/* Before blocking on @lock of @rank: all held rank before it. */
static void witness_check(const void *lock, int rank)
{
	for (unsigned i = 0; i < nr_held; i++) {
		if (held[i].lock == lock)
			witness_fail("taking again", rank, lock, &held[i]);
		if (held[i].rank >= rank)
			witness_fail("taking", rank, lock, &held[i]);
	}
}

static void witness_push(const void *lock, int rank)
{
	if (nr_held == WITNESS_DEPTH)
		witness_fail("too many locks held taking", rank, lock, NULL);
	held[nr_held].lock = lock;
	held[nr_held].rank = rank;
	nr_held++;
}

static void witness_pop(const void *lock, int rank)
{
	for (unsigned i = nr_held; i-- > 0;)
		if (held[i].lock == lock) {
			held[i] = held[--nr_held];
			return;
		}
	witness_fail("releasing (not held by this thread)", rank, lock, NULL);
}

static bool witness_held(const void *lock)
{
	for (unsigned i = 0; i < nr_held; i++)
		if (held[i].lock == lock)
			return true;
	return false;
}

void pc__lock_check_sleep(int rank, const void *what)
{
	for (unsigned i = 0; i < nr_held; i++)
		if (held[i].rank >= rank)
			witness_fail("sleeping for", rank, what, &held[i]);
}
#else
static inline void witness_check(const void *lock, int rank)
{
	(void)lock;
	(void)rank;
}
static inline void witness_push(const void *lock, int rank)
{
	(void)lock;
	(void)rank;
}
static inline void witness_pop(const void *lock, int rank)
{
	(void)lock;
	(void)rank;
}
/* Release builds cannot tell: assertions of it hold. */
static inline bool witness_held(const void *lock)
{
	(void)lock;
	return true;
}
#endif

/* ------------------------------------------------------------------ */
/* Mutexes.                                                            */

void pc__lock_init(struct pc_lock *l, struct pc_cache *c, int rank, int stat)
{
	PC_ASSERT(rank >= 0 && rank < PC_NR_RANKS && rank != PC_RANK_PAGE);
	pthread_mutex_init(&l->m, NULL);
	l->cache = c;
	l->broken = NULL;
	l->rank = rank;
	l->stat = stat;
}

void pc__lock_init_shared(struct pc_lock *l, int rank, _Atomic int *broken)
{
	pthread_mutexattr_t a;

	PC_ASSERT(rank >= 0 && rank < PC_NR_RANKS && rank != PC_RANK_PAGE);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
	l->cache = NULL;
	l->broken = broken;
	l->rank = rank;
	l->stat = -1;
}

/*
 * A pthread call on @l said @r.  EOWNERDEAD (only a robust, shared lock
 * says it): the holder died and we hold the lock now; record it and make
 * the lock usable again.  Returns 0 when we hold the lock.
 */
static int owner_died(struct pc_lock *l, int r)
{
	if (r != EOWNERDEAD)
		return r;
	if (l->broken)
		atomic_store(l->broken, 1);
	pthread_mutex_consistent(&l->m);
	return 0;
}

void pc__lock_destroy(struct pc_lock *l)
{
	pthread_mutex_destroy(&l->m);
}

/*
 * Take @l (the witness checks first); if @waited_ns, say whether another
 * thread had it (true) and how long this one waited (*@waited_ns).
 */
static bool mutex_take(struct pc_lock *l, uint64_t *waited_ns)
{
	bool contended = false;
	int r;

	witness_check(l, l->rank);
	r = pthread_mutex_trylock(&l->m);
	if (r != 0 && owner_died(l, r) != 0) {
		uint64_t t0 = waited_ns ? pc__now_ns() : 0;

		r = owner_died(l, pthread_mutex_lock(&l->m));
		PC_ASSERT(r == 0);
		if (waited_ns)
			*waited_ns = pc__now_ns() - t0;
		contended = true;
	}
	witness_push(l, l->rank);
	return contended;
}

bool pc__lock_timed(struct pc_lock *l, uint64_t *waited_ns)
{
	return mutex_take(l, waited_ns);
}

void pc__lock(struct pc_lock *l)
{
	PC_ASSERT(l->stat < 0);	/* else pc__lock_counted */
	mutex_take(l, NULL);
}

bool pc__trylock(struct pc_lock *l)
{
	int r = pthread_mutex_trylock(&l->m);

	if (r != 0 && owner_died(l, r) != 0)
		return false;
	witness_push(l, l->rank);
	return true;
}

void pc__unlock(struct pc_lock *l)
{
	witness_pop(l, l->rank);
	pthread_mutex_unlock(&l->m);
}

bool pc__lock_held(const struct pc_lock *l)
{
	return witness_held(l);
}

void pc__cond_wait(pthread_cond_t *cv, struct pc_lock *l)
{
	PC_ASSERT_HELD(l);
	owner_died(l, pthread_cond_wait(cv, &l->m));
}

int pc__cond_timedwait(pthread_cond_t *cv, struct pc_lock *l,
		       const struct timespec *abstime)
{
	PC_ASSERT_HELD(l);
	return owner_died(l, pthread_cond_timedwait(cv, &l->m, abstime));
}

/* ------------------------------------------------------------------ */
/* Rwlocks.                                                            */

void pc__rwlock_init(struct pc_rwlock *l, int rank)
{
	pthread_rwlockattr_t a;

	PC_ASSERT(rank >= 0 && rank < PC_NR_RANKS && rank != PC_RANK_PAGE);
	memset(l, 0, sizeof(*l));
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&l->rw, &a);
	pthread_rwlockattr_destroy(&a);
	l->rank = rank;
}

void pc__rwlock_init_shared(struct pc_rwlock *l, int rank)
{
	PC_ASSERT(rank >= 0 && rank < PC_NR_RANKS && rank != PC_RANK_PAGE);
	memset(l, 0, sizeof(*l));
	l->rank = rank;
	l->shared = true;
}

void pc__rwlock_destroy(struct pc_rwlock *l)
{
	if (!l->shared)
		pthread_rwlock_destroy(&l->rw);
}

/*
 * The shared kind.  A sleeper first counts itself in @waiters, then reads
 * @seq, then looks at the lock; a releaser changes the lock, then moves
 * @seq and wakes if @waiters is not 0.  All of it sequentially
 * consistent, so either the releaser sees the sleeper counted or the
 * sleeper sees the change (and @seq moved: the futex does not sleep).
 * The same order between a reader (count up, then look at @owner) and a
 * writer (@owner set, then look at the counts): one sees the other.
 */
static void rw_sleep(struct pc_rwlock *l, uint32_t seq)
{
	syscall(SYS_futex, &l->seq, FUTEX_WAIT, seq, NULL, NULL, 0);
}

static void rw_wake(struct pc_rwlock *l)
{
	if (!atomic_load(&l->waiters))
		return;
	atomic_fetch_add(&l->seq, 1);
	syscall(SYS_futex, &l->seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static uint64_t rd_pack(pid_t pid, uint32_t n)
{
	return (uint64_t)(uint32_t)pid << 32 | n;
}

/* One more shared hold of this process: its slot, or -1 (none free). */
static int rd_take(struct pc_rwlock *l)
{
	uint64_t v;

	for (int i = 0; i < PC_RW_SLOTS; i++) {	/* ours, if held */
		v = atomic_load(&l->readers[i]);
		while ((uint32_t)v && (pid_t)(v >> 32) == pc__pid)
			if (atomic_compare_exchange_weak(&l->readers[i], &v,
							 v + 1))
				return i;
	}
	for (int i = 0; i < PC_RW_SLOTS; i++) {	/* a free one */
		v = atomic_load(&l->readers[i]);
		while (!(uint32_t)v)
			if (atomic_compare_exchange_weak(&l->readers[i], &v,
							 rd_pack(pc__pid, 1)))
				return i;
	}
	return -1;
}

/*
 * One shared hold of this process fewer.  Not necessarily in the slot
 * that was counted up: the process's holds are counted in any of its
 * slots, and another of its threads may have taken ours down.  Some slot
 * of ours is above 0 while we hold, so the scan ends.
 */
static void rd_put(struct pc_rwlock *l)
{
	for (;;)
		for (int i = 0; i < PC_RW_SLOTS; i++) {
			uint64_t v = atomic_load(&l->readers[i]);

			while ((uint32_t)v && (pid_t)(v >> 32) == pc__pid)
				if (atomic_compare_exchange_weak(
					    &l->readers[i], &v, v - 1)) {
					rw_wake(l);
					return;
				}
		}
}

static bool rd_any(struct pc_rwlock *l)
{
	for (int i = 0; i < PC_RW_SLOTS; i++)
		if ((uint32_t)atomic_load(&l->readers[i]))
			return true;
	return false;
}

static void shared_read_lock(struct pc_rwlock *l)
{
	bool counted = false;

	for (;;) {
		uint32_t seq = atomic_load(&l->seq);

		if (!atomic_load(&l->owner)) {
			int i = rd_take(l);

			if (i >= 0 && !atomic_load(&l->owner))
				break;
			if (i >= 0)	/* a writer came: it goes first */
				rd_put(l);
		}
		if (!counted) {	/* count ourselves, then look again */
			atomic_fetch_add(&l->waiters, 1);
			counted = true;
			continue;
		}
		rw_sleep(l, seq);
	}
	if (counted)
		atomic_fetch_sub(&l->waiters, 1);
}

static void shared_read_unlock(struct pc_rwlock *l)
{
	rd_put(l);
}

/* Exclusive: @owner first (new readers keep out), then the readers gone. */
static bool shared_write_take(struct pc_rwlock *l, bool wait)
{
	bool counted = false;
	int32_t none = 0;

	for (;;) {
		uint32_t seq = atomic_load(&l->seq);

		if (atomic_compare_exchange_strong(&l->owner, &none, pc__pid))
			break;
		none = 0;
		if (!wait)
			return false;
		if (!counted) {
			atomic_fetch_add(&l->waiters, 1);
			counted = true;
			continue;
		}
		rw_sleep(l, seq);
	}
	for (;;) {
		uint32_t seq = atomic_load(&l->seq);

		if (!rd_any(l))
			break;
		if (!wait) {
			atomic_store(&l->owner, 0);
			rw_wake(l);
			return false;
		}
		if (!counted) {
			atomic_fetch_add(&l->waiters, 1);
			counted = true;
			continue;
		}
		rw_sleep(l, seq);
	}
	if (counted)
		atomic_fetch_sub(&l->waiters, 1);
	return true;
}

static void shared_write_unlock(struct pc_rwlock *l)
{
	PC_ASSERT(atomic_load(&l->owner) == pc__pid);
	atomic_store(&l->fragile, false);
	atomic_store(&l->owner, 0);
	rw_wake(l);
}

void pc__read_lock(struct pc_rwlock *l)
{
	witness_check(l, l->rank);
	if (l->shared)
		shared_read_lock(l);
	else
		pthread_rwlock_rdlock(&l->rw);
	witness_push(l, l->rank);
}

void pc__write_lock(struct pc_rwlock *l)
{
	witness_check(l, l->rank);
	if (l->shared)
		(void)shared_write_take(l, true);
	else
		pthread_rwlock_wrlock(&l->rw);
	witness_push(l, l->rank);
}

bool pc__write_trylock(struct pc_rwlock *l)
{
	if (l->shared ? !shared_write_take(l, false)
		      : pthread_rwlock_trywrlock(&l->rw) != 0)
		return false;
	witness_push(l, l->rank);
	return true;
}

void pc__read_unlock(struct pc_rwlock *l)
{
	witness_pop(l, l->rank);
	if (l->shared)
		shared_read_unlock(l);
	else
		pthread_rwlock_unlock(&l->rw);
}

void pc__write_unlock(struct pc_rwlock *l)
{
	witness_pop(l, l->rank);
	if (l->shared)
		shared_write_unlock(l);
	else
		pthread_rwlock_unlock(&l->rw);
}

void pc__rwlock_fragile(struct pc_rwlock *l, bool fragile)
{
	if (l->shared)
		atomic_store(&l->fragile, fragile);
}

int pc__rwlock_reap(struct pc_rwlock *l, pid_t pid, _Atomic int *broken)
{
	int32_t dead = pid;
	int r = 0;

	if (!l->shared || !pid)
		return 0;
	for (int i = 0; i < PC_RW_SLOTS; i++) {
		uint64_t v = atomic_load(&l->readers[i]);

		while ((uint32_t)v && (pid_t)(v >> 32) == pid)
			if (atomic_compare_exchange_weak(&l->readers[i], &v,
							 rd_pack(pid, 0)))
				r = PC_RW_REAPED;
	}
	if (atomic_load(&l->owner) == pid) {
		bool fragile = atomic_load(&l->fragile);

		atomic_store(&l->fragile, false);
		if (fragile && broken)	/* said before anyone takes it */
			atomic_store(broken, 1);
		if (atomic_compare_exchange_strong(&l->owner, &dead, 0))
			r = PC_RW_REAPED | (fragile ? PC_RW_FRAGILE : 0);
	}
	if (r) {	/* as a release: everyone looks again */
		atomic_fetch_add(&l->seq, 1);
		syscall(SYS_futex, &l->seq, FUTEX_WAKE, INT32_MAX, NULL,
			NULL, 0);
	}
	return r;
}

bool pc__rwlock_held(const struct pc_rwlock *l)
{
	return witness_held(l);
}
