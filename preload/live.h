/*
 * live.h - the format of a process's live counters (PAGECACHE_LIVE=DIR):
 * what the shim (stats.c) publishes and `pagecache bench` (tools/bench/
 * program.c) reads.  No code: the two sides share this layout only.
 *
 * Each process of the program that made a cache has one file, DIR/<pid>,
 * mapped shared by that process: a struct pc_live, then @nr counters
 * (every pc_vmstat counter, then the shim's, by name).  Its publisher
 * thread rewrites the page gauges (PC_LIVE_GAUGES) every PC_LIVE_TICK_MS
 * and every counter every PC_LIVE_ALL_TICKS ticks, in place.  @magic is
 * written last (a file still being set up reads as zeros); @seq is odd
 * while the values are being written, so a reader copies the record,
 * then reads @seq again and retries if it was odd or has moved.
 *
 * The file goes at the process's exit and before its exec (the new image
 * publishes its own cache under the same pid).  A process killed by a
 * signal leaves its file: a reader skips a record whose pid is gone.
 * Values are the process's own: a reader sums them over the files, but
 * for the first @nr_cache of a record whose @shared is set: those are a
 * shared cache's, the same cache in every process of the program, and a
 * reader takes the largest of them (the newest), not the sum.
 */
#ifndef PAGECACHE_LIVE_H
#define PAGECACHE_LIVE_H

#include <stdint.h>

#define PC_LIVE_MAGIC		"pclive2"	/* 8 bytes with its NUL */
#define PC_LIVE_TICK_MS		10
#define PC_LIVE_ALL_TICKS	10		/* every counter: each 100 ms */
/* refreshed every tick: what a sampler of page counts wants */
#define PC_LIVE_GAUGES		"nr_free_pages", "nr_inactive_file", \
				"nr_active_file", "nr_dirty", "nr_writeback", \
				"nr_file_pages"

struct pc_live_counter {
	char name[40];			/* NUL-terminated */
	uint64_t value;
};

struct pc_live {
	char magic[8];			/* PC_LIVE_MAGIC, written last */
	uint32_t nr;			/* counters that follow */
	uint32_t pid;			/* the publisher: DIR/<pid> */
	uint64_t seq;			/* odd: being written */
	uint64_t ticks;			/* updates so far */
	uint32_t nr_cache;		/* c[0 .. nr_cache): the cache's */
	uint32_t shared;		/* 1: a shared cache's (see above) */
	struct pc_live_counter c[];
};

#endif
