/*
 * util_inside.h - helpers for the tests that look inside the cache
 * (internal.h), shared so that each is written once.  util.h's helpers
 * use the public API only; these read the cache's own structures.
 */
#ifndef TESTS_UTIL_INSIDE_H
#define TESTS_UTIL_INSIDE_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"

/* Is page @index of @f's file in the cache?  Changes no page's state. */
static inline bool tu_resident(pc_file *f, uint64_t index)
{
	struct pc_page *p = pc__find_get_page(f->mapping, index);

	if (p)
		pc__put_page(f->cache, p);
	return p != NULL;
}

/*
 * The insertion race of issue 36, played by hand (pc__test_insert_hook):
 * the first new page being inserted whose flags have every bit of @want
 * and none of @avoid (the "loser") is stopped in the window between its
 * mapping being set and its insertion, and there
 *   1. a waiter thread does what resize.c's evict does with a frame it
 *      found by number: takes a reference, sees a mapping, sleeps on the
 *      page lock (the hook goes on once PG_waiters says it is queued);
 *   2. another page is inserted at the loser's index first (the race's
 *      winner, unlocked and not uptodate: whoever finds it reads it), so
 *      the loser's insertion fails with -EEXIST.
 * Then the operation goes on as after a real lost race.  tu_race_check,
 * once it has returned: the loser's lock must have been let go with its
 * waiter woken - handed the lock and off the queue, so PG_waiters is
 * clear.  A plain clear of PG_locked leaves the waiter queued with the
 * lock free (the gdb state of the issue: PG_waiters set, PG_locked clear,
 * mapping NULL); the check then does the missed wake itself, so the
 * waiter ends and the test fails instead of hanging.  One race at a time.
 */
struct tu_race {
	pc_cache *c;
	uint32_t want, avoid;		/* PG_* masks */
	struct pc_page *loser;		/* NULL: the hook has not fired */
	uint64_t index;
	uint32_t flags;			/* the loser's, as the waiter queued */
	pthread_t waiter;
	_Atomic bool locked;		/* the waiter's lock_page returned */
	struct pc_mapping *seen;	/* the mapping it then saw */
};

static inline struct tu_race **tu__race(void)
{
	static struct tu_race *r;	/* one race at a time */

	return &r;
}

static inline void *tu__race_waiter(void *arg)
{
	struct tu_race *r = arg;

	pc__lock_page(&r->c->wait, r->loser);
	atomic_store(&r->locked, true);
	r->seen = page_mapping(r->loser);
	pc__unlock_page(&r->c->wait, r->loser);
	pc__put_page(r->c, r->loser);
	return NULL;
}

static inline void tu__race_hook(struct pc_mapping *m, struct pc_page *p,
				 uint64_t index)
{
	struct tu_race *r = *tu__race();
	uint32_t f = atomic_load(&p->flags);
	struct pc_page *winner;

	if ((f & r->want) != r->want || (f & r->avoid))
		return;
	atomic_store(&pc__test_insert_hook, NULL);	/* once; not the winner */
	r->loser = p;
	r->index = index;
	page_get(p);		/* the waiter's, as evict's get_unless_zero */
	if (pthread_create(&r->waiter, NULL, tu__race_waiter, r))
		abort();
	while (!page_test(p, PG_waiters))	/* queued on the lock */
		sched_yield();
	r->flags = atomic_load(&p->flags);
	winner = pc__alloc_page(r->c, m, 0);
	if (!winner)
		abort();
	pc__page_lock_new(winner);
	if (pc__add_to_page_cache(m, winner, index))
		abort();
	pc__unlock_page(&r->c->wait, winner);
	pc__put_page(r->c, winner);	/* the mapping's is left */
}

static inline void tu_race_arm(struct tu_race *r, pc_cache *c, uint32_t want,
			       uint32_t avoid)
{
	*r = (struct tu_race){ .c = c, .want = want, .avoid = avoid };
	*tu__race() = r;
	atomic_store(&pc__test_insert_hook, tu__race_hook);
}

/* After the operation: true if the loser's waiter was woken (see above). */
static inline bool tu_race_check(struct tu_race *r)
{
	bool lost;

	atomic_store(&pc__test_insert_hook, NULL);
	if (!r->loser)
		return false;
	/* The waiter's reference keeps the loser until it ends. */
	lost = page_test(r->loser, PG_waiters) &&
	       !page_test(r->loser, PG_locked);
	if (lost) {	/* the wake the loser owed it */
		pc__lock_page(&r->c->wait, r->loser);
		pc__unlock_page(&r->c->wait, r->loser);
	}
	pthread_join(r->waiter, NULL);
	return !lost && atomic_load(&r->locked) && !r->seen;
}

#endif /* TESTS_UTIL_INSIDE_H */
