/*
 * base.h - what every file of the library uses: the standard headers,
 * PC_ASSERT (debug builds only), pc_min/pc_max, PC_EXPORT (the symbols the
 * version map exports), the clocks (CLOCK_MONOTONIC, and the cache's
 * own that tests can stop: all inline), and pc__fd_high (fd.c, a leaf).
 * Includes nothing of ours but the public header, so the leaf modules
 * (tree.c, pagewait.c, lock.c, arena.c, io*.c) can include it without
 * seeing the core.
 */
#ifndef PC_BASE_H
#define PC_BASE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "pagecache.h"

#define PC_EXPORT __attribute__((visibility("default")))

#ifdef PC_DEBUG
#include <assert.h>
#define PC_ASSERT(x) assert(x)
#else
#define PC_ASSERT(x) ((void)0)
#endif

#define pc_min(a, b) ((a) < (b) ? (a) : (b))
#define pc_max(a, b) ((a) > (b) ? (a) : (b))

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t pc__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An absolute CLOCK_REALTIME time @ns from now, for pthread_cond_timedwait. */
static inline void pc__deadline(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ns / 1000000000ull);
	ts->tv_nsec += (long)(ns % 1000000000ull);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * The cache's clock, pc__clock(c), for decisions that turn on time
 * passing: reclaim's contention back-off (how long a sleepy reclaimer
 * waits, when contention is stale, the blunt stall's cap).  Release builds
 * read CLOCK_MONOTONIC and nothing else.  Debug builds (PC_DEBUG: the
 * tests') let a test freeze it and move it by hand, so that the test
 * decides when time passes: pc__test_clock_set(c, ns), 0 for the real
 * clock again.  The test's time is c->test_clock (internal.h): macros, so
 * that this header needs no struct pc_cache.  Waits that end on this clock
 * look at it at least once a millisecond.
 */
#ifdef PC_DEBUG
static inline uint64_t pc__clock_read(_Atomic uint64_t *test_clock)
{
	uint64_t t = atomic_load_explicit(test_clock, memory_order_relaxed);

	return t ? t : pc__now_ns();
}
#define pc__clock(c) pc__clock_read(&(c)->test_clock)
#define pc__test_clock_set(c, ns) atomic_store(&(c)->test_clock, (ns))
#else
#define pc__clock(c) ((void)(c), pc__now_ns())
#endif

/*
 * fd.c: move a descriptor the library keeps to a high number, close-on-exec
 * (the original is closed); returns the new one, or @fd if none is free.
 */
int pc__fd_high(int fd);

#endif /* PC_BASE_H */
