/*
 * lock.h - the library's locks and their one order.
 *
 * Every mutex and rwlock of the library is a struct pc_lock or a struct
 * pc_rwlock with a rank from the table below.  In debug builds (PC_DEBUG:
 * V=test, asan, tsan) each thread keeps a stack of the locks it holds
 * (jemalloc's witness): a blocking acquisition checks that every lock
 * held comes before the new one in the table, and a violation aborts
 * naming both locks and both instances.  A trylock cannot deadlock: it is
 * not checked against the order, only recorded.  pc__lock_held asks
 * whether this thread holds this very lock.  Release builds keep none of
 * this: a lock is a pthread mutex plus, for the four with statistics, a
 * counter update.
 *
 * LOCK ORDER, outermost first: a thread holding a lock may block on a
 * lock further down the table only.
 *
 *   rank                 lock                    what it protects
 *   FPOS                 m->pos_lock (fpos.c)    a shared file position:
 *                                                its callers' read-modify-
 *                                                write of the kernel's
 *   TABLE                table_lock (local.c)    the process's one table of
 *                                                its caches (tctx.c holds it
 *                                                across a context's drain)
 *   RESIZE               c->resize_lock          one pc_cache_resize at a time
 *   MAPPINGS             c->mappings_lock        open/close table, files
 *   I_RWSEM  (rwlock)    m->i_rwsem              size; writers shared,
 *                                                truncate, appends exclusive
 *   DISK_SIZE            m->disk_size_lock       ftruncate of the backing fd
 *   RA                   f->ra_lock              readahead state, drop batch
 *   PAGE     (pseudo)    PG_locked               the page lock: sleeping,
 *                                                not a pc_lock (see below)
 *   TCTX_LIST            c->tctx_lock            the cache's thread contexts
 *   TREE                 m->tree_lock            the mapping's tree
 *   BDI                  b->lock                 a bdi's dirty list
 *   TCTX                 t->lock                 a thread's LRU batches
 *   LRU                  n->lru_lock             a node's LRU lists
 *   POPULATE             n->populate_mtx         a step faulted in ahead
 *                                                (populate.c)
 *   FREE                 n->free_lock            a node's free list
 *   BDI_LIST             c->bdi_lock             the cache's bdi list
 *   BDI_BW               b->bw_lock              bandwidth period (trylock)
 *   KSWAPD               n->kswapd_mtx           kswapd's sleep and wake
 *   BDI_WAKE             b->wake_mtx             flusher's sleep and work
 *   THROTTLE             b->throttle_mtx         dirty throttle queue
 *   NUMAB                nb->lock (migrate.c)    balancing scanner's queue
 *   READ_WAIT            w->lock (filemap.c)     a read's completion count
 *   TRACE_DRAIN          t->drain_lock           the trace file, rings
 *   TRACE_KICK           t->mtx (trace.c)        the drain thread's sleep
 *   IO                   u->lock (io_uring.c)    slots, in-flight count
 *   IO_SQ                u->sq_lock              the submission queue
 *   IO_FAULT             f->lock (io_fault.c)    the fault rules
 *   EBR                  e->lock (ebr.c)         retired objects, the epoch
 *   SHARE                s->lock (procs.c)       a shared cache's processes
 *   ARENA                a->lock (arena.c)       an arena's free objects
 *   SHM                  s->lock (shm.c)         a shared region's allocator
 *   BK                   bk_lock (local.c)       this process's descriptors
 *                                                of shared caches' mappings
 *   WAITQ                q->lock (pagewait.c)    a page wait queue: a leaf
 *   SELF                 self_lock (proc.c)      this process's identity:
 *                                                nothing is taken under it
 *
 * The page lock is a bit, and its owner is not a thread: a reader locks
 * pages and the I/O completion, in another thread, unlocks them.  So it
 * has a rank but no place on a thread's stack: pc__lock_page and
 * pc__wait_on_page_bit (both sleep) check that this thread holds nothing
 * at or after PAGE; pc__trylock_page and pc__unlock_page take only the
 * queue lock, a checked leaf.  Several page locks are held at once only
 * by trylock.
 *
 * No lock is held across I/O submission and wait, except the page lock
 * of pages being read (the lock is the "I/O in flight" signal, as in the
 * kernel).  Condition variables wait with pc__cond_wait and
 * pc__cond_timedwait on a pc_lock: the lock stays on the stack meanwhile.
 *
 * Locks that live in memory shared between processes (shm.h) are made
 * with pc__lock_init_shared: process-shared and robust (the kernel's
 * robust futex list).  When a holder dies, the next one to take the lock
 * gets it all the same: the lock is marked consistent and, if what it
 * guards may be half-updated, the region's broken flag is set.  Ranks and
 * the witness are the same for them: the witness is per thread.
 *
 * The functions live in lock.c, a leaf; the counting of the four with
 * statistics in vmstat.c.
 */
#ifndef PC_LOCK_H
#define PC_LOCK_H

#include <sys/types.h>
#include <time.h>

#include "base.h"

#define PC_LOCK_RANKS(X) \
	X(FPOS) X(TABLE) X(RESIZE) X(MAPPINGS) X(I_RWSEM) X(DISK_SIZE) X(RA) X(PAGE) \
	X(TCTX_LIST) X(TREE) X(BDI) X(TCTX) X(LRU) X(POPULATE) X(FREE) X(BDI_LIST) X(BDI_BW) \
	X(KSWAPD) X(BDI_WAKE) X(THROTTLE) X(NUMAB) X(READ_WAIT) \
	X(TRACE_DRAIN) X(TRACE_KICK) X(IO) X(IO_SQ) X(IO_FAULT) X(EBR) \
	X(SHARE) X(ARENA) X(SHM) X(BK) X(WAITQ) X(SELF)

enum pc_lock_rank {
#define PC_LOCK_RANK_ENUM(r) PC_RANK_##r,
	PC_LOCK_RANKS(PC_LOCK_RANK_ENUM)
#undef PC_LOCK_RANK_ENUM
	PC_NR_RANKS
};

struct pc_cache;

/*
 * A mutex.  @cache and @stat: the vmstat items it counts into
 * (acquisitions; +1 contended; +2 wait ns), for the tree, bdi, lru and
 * free locks; NULL and -1 for the others.  All fields read-only after init.
 */
struct pc_lock {
	pthread_mutex_t m;
	struct pc_cache *cache;
	_Atomic int *broken;	/* shared locks: set when a holder died */
	int rank;		/* enum pc_lock_rank */
	int stat;		/* enum pc_vmstat_item, or -1: none */
};

#define PC_LOCK_INITIALIZER(r) \
	{ PTHREAD_MUTEX_INITIALIZER, NULL, NULL, (r), -1 }

void pc__lock_init(struct pc_lock *l, struct pc_cache *c, int rank, int stat);
/*
 * A lock in memory shared between processes: process-shared, robust.
 * @broken: where to record that a holder died (the region's flag); NULL
 * when what the lock guards is whole at every step, so that a holder's
 * death leaves nothing half-done.  No statistics.
 */
void pc__lock_init_shared(struct pc_lock *l, int rank, _Atomic int *broken);
void pc__lock_destroy(struct pc_lock *l);
void pc__lock(struct pc_lock *l);
bool pc__trylock(struct pc_lock *l);
void pc__unlock(struct pc_lock *l);
/*
 * The four locks with statistics (@cache and @stat set: tree, bdi, lru,
 * free) are taken with pc__lock_counted and pc__trylock_counted
 * (vmstat.h), which count into their cache; pc__lock asserts it is not
 * given one.  What pc__lock_counted takes them with: pc__lock that says
 * whether it had to wait (true) and for how long (*@waited_ns, set only
 * then).
 */
bool pc__lock_timed(struct pc_lock *l, uint64_t *waited_ns);
/* Debug builds: does this thread hold @l?  Release builds: true. */
bool pc__lock_held(const struct pc_lock *l);
#define PC_ASSERT_HELD(l) PC_ASSERT(pc__lock_held(l))

/* pthread_cond_wait and _timedwait (0 or ETIMEDOUT) on a held @l. */
void pc__cond_wait(pthread_cond_t *cv, struct pc_lock *l);
int pc__cond_timedwait(pthread_cond_t *cv, struct pc_lock *l,
		       const struct timespec *abstime);

/*
 * A rwlock, checked like a mutex whether taken shared or exclusive.  It
 * prefers writers, as the kernel's rw_semaphore does: glibc's default lets
 * a stream of shared holders keep an exclusive one out for ever.  So no
 * thread may take one shared twice (a writer waiting between would
 * deadlock it).
 *
 * A shared one (pc__rwlock_init_shared, in memory many processes map) is
 * not glibc's, which has no robust kind: it knows its holders' processes,
 * so that a holder's death does not keep everyone else out.  The
 * exclusive holder (or the one waiting for the shared holders to leave)
 * is @owner, a pid; shared holders are counted per process in @readers
 * (pid << 32 | count; a slot whose count is 0 is free), PC_RW_SLOTS
 * processes at once, more wait for a slot.  Waiters sleep on the futex
 * @seq, which a release moves when @waiters says anyone sleeps.
 * pc__rwlock_reap lets go what a dead process held.
 */
#define PC_RW_SLOTS 16

struct pc_rwlock {
	pthread_rwlock_t rw;	/* a private one's */
	int rank;		/* read-only after init */
	bool shared;		/* read-only after init: the kind below */
	_Atomic bool fragile;	/* the exclusive holder's work cannot be
				   repaired if it dies (pc__rwlock_fragile) */
	_Atomic int32_t owner;	/* exclusive (or waiting for it): its pid */
	_Atomic uint32_t seq;	/* futex word: moves at a release seen */
	_Atomic uint32_t waiters;	/* sleeping on seq */
	_Atomic uint64_t readers[PC_RW_SLOTS];
};

/* The pid of this process, for a shared rwlock and the page lock's owner
 * (page.h); set by local.c when it joins a shared cache and at fork. */
extern pid_t pc__pid;

void pc__rwlock_init(struct pc_rwlock *l, int rank);
/* The same in memory shared between processes (see above). */
void pc__rwlock_init_shared(struct pc_rwlock *l, int rank);
void pc__rwlock_destroy(struct pc_rwlock *l);
void pc__read_lock(struct pc_rwlock *l);
void pc__write_lock(struct pc_rwlock *l);
bool pc__write_trylock(struct pc_rwlock *l);
void pc__read_unlock(struct pc_rwlock *l);
void pc__write_unlock(struct pc_rwlock *l);
bool pc__rwlock_held(const struct pc_rwlock *l);	/* as pc__lock_held */
/*
 * Held exclusive: say whether what the holder does from now on would be
 * left half-done by its death (a truncation between the disk and the
 * cache).  The unlock clears it.
 */
void pc__rwlock_fragile(struct pc_rwlock *l, bool fragile);
/*
 * A shared rwlock: let go whatever process @pid (dead) held of it and
 * wake the waiters.  Returns PC_RW_REAPED if it held something, with
 * PC_RW_FRAGILE if it died exclusive and fragile: then *@broken (if not
 * NULL) is set before the next holder can take it.
 */
#define PC_RW_REAPED 1
#define PC_RW_FRAGILE 2
int pc__rwlock_reap(struct pc_rwlock *l, pid_t pid, _Atomic int *broken);

/*
 * Debug builds: about to sleep for a lock of @rank that has no pc_lock
 * (the page lock, @what names the instance): abort if this thread holds
 * any lock at or after @rank.  Release builds: nothing.
 */
#ifdef PC_DEBUG
void pc__lock_check_sleep(int rank, const void *what);
#else
static inline void pc__lock_check_sleep(int rank, const void *what)
{
	(void)rank;
	(void)what;
}
#endif

#endif /* PC_LOCK_H */
