/*
 * lock.h - the ranked lock (struct pc_lock: a mutex that keeps acquisition
 * statistics and, in debug builds, checks the lock order), and the lock
 * order itself.
 *
 * LOCK ORDER (outermost first), checked in debug builds by pc__lock():
 *
 *   mapping i_rwsem (pthread rwlock: writers shared, truncate exclusive)
 *     → page lock (PG_locked; several only by trylock)
 *       → mapping tree lock      PC_RANK_TREE
 *         → bdi lock             PC_RANK_BDI
 *           → node lru lock      PC_RANK_LRU
 *             → node free lock   PC_RANK_FREE
 *
 *   page wait-queue locks (pagewait.c) are leaves: taken under any of the
 *   above, nothing under them.  pc__lock_page and pc__wait_on_page_bit
 *   sleep: call them with none of the ranked locks held.
 *
 *   c->mappings_lock (the open/close table) is taken with none of the above
 *   held, except i_rwsem is never taken under it.  No lock is held across
 *   I/O submission and wait, except the page lock of pages being read (the
 *   lock is the "I/O in flight" signal, as in the kernel).
 *
 * The lock functions live in cache.c.
 */
#ifndef PC_LOCK_H
#define PC_LOCK_H

#include "base.h"

struct pc_cache;

enum pc_lock_rank {
	PC_RANK_NONE = 0,
	PC_RANK_TREE = 1,
	PC_RANK_BDI = 2,
	PC_RANK_LRU = 3,
	PC_RANK_FREE = 4,
};

struct pc_lock {
	pthread_mutex_t m;
	struct pc_cache *cache;
	int rank;
	int stat;		/* vmstat item of acquisitions; +1 contended, +2 ns */
};

void pc__lock_init(struct pc_lock *l, struct pc_cache *c, int rank, int stat);
void pc__lock_destroy(struct pc_lock *l);
void pc__lock(struct pc_lock *l);
bool pc__trylock(struct pc_lock *l);
void pc__unlock(struct pc_lock *l);
bool pc__lock_held(const struct pc_lock *l);	/* debug builds: by this thread */
#define PC_ASSERT_HELD(l) PC_ASSERT(pc__lock_held(l))

#endif /* PC_LOCK_H */
