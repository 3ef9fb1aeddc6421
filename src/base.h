/*
 * base.h - what every file of the library uses: the standard headers,
 * PC_ASSERT (debug builds only), pc_min/pc_max, PC_EXPORT (the symbols the
 * version map exports), the clocks (CLOCK_MONOTONIC, and the cache's
 * own that tests can stop), and pc__fd_high.  Includes nothing of ours
 * but the public header, so the leaf modules (mapping.c, pagewait.c,
 * io*.c) can include it without seeing the core.
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

/* cache.c: CLOCK_MONOTONIC in ns. */
uint64_t pc__now_ns(void);
struct timespec;
/* An absolute CLOCK_REALTIME time @ns from now, for pthread_cond_timedwait. */
void pc__deadline(struct timespec *ts, uint64_t ns);

struct pc_cache;
/*
 * The cache's clock (cache.c), for decisions that turn on time passing:
 * reclaim's contention back-off (how long a sleepy reclaimer waits, when
 * contention is stale, the blunt stall's cap).  Release builds read
 * CLOCK_MONOTONIC and nothing else.  Debug builds (PC_DEBUG: the tests')
 * let a test freeze it and move it by hand, so that the test decides when
 * time passes: pc__test_clock_set(c, ns), 0 for the real clock again.
 * Waits that end on this clock look at it at least once a millisecond.
 */
#ifdef PC_DEBUG
uint64_t pc__clock(struct pc_cache *c);
void pc__test_clock_set(struct pc_cache *c, uint64_t ns);
#else
static inline uint64_t pc__clock(struct pc_cache *c)
{
	(void)c;
	return pc__now_ns();
}
#endif

/*
 * fd.c: move a descriptor the library keeps to a high number, close-on-exec
 * (the original is closed); returns the new one, or @fd if none is free.
 */
int pc__fd_high(int fd);

#endif /* PC_BASE_H */
