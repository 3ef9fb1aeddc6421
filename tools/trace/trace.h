/*
 * tools/trace/trace.h - the `pagecache trace` subcommand, the trace file
 * reader and the LRU age model.
 *
 * The binary file format is documented at the top of tools/trace/reader.c;
 * src/trace_fmt.h holds the on-disk structs the writer and reader share.
 */
#ifndef PC_TOOLS_TRACE_H
#define PC_TOOLS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_fmt.h"

/* `pagecache trace report FILE`; argv[0] = "trace".  Returns an exit code. */
int pc_trace_main(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* reader.c: a trace file in memory, its events in time order.         */

struct pc_trace_tid_count {
	uint32_t tid;
	uint64_t read;			/* records of this thread in the file */
	uint64_t declared;		/* what the footer says it wrote */
	uint64_t lost;			/* what the footer says it dropped */
};

struct pc_trace_file {
	struct pc_trace_file_header hdr;
	const struct pc_trace_rec **ev;	/* every record, by time (stable) */
	uint32_t *tid;			/* tid[i]: the thread of ev[i] */
	size_t nr_ev;
	bool has_footer;
	struct pc_trace_footer footer;	/* valid when has_footer */
	struct pc_trace_tid_count *threads;	/* by tid, ascending */
	size_t nr_threads;
	bool truncated;			/* ends inside a block / no footer */
	uint64_t bad_blocks;		/* a block that made no sense: stop */
	uint64_t missing;		/* declared by the footer, not read */
	uint64_t unsorted;		/* a thread's events out of time order */
	void *map;			/* the file, mapped */
	size_t map_len;
};

/*
 * Read and check @path.  Returns 0, or -errno (the file), or -EINVAL (not
 * a trace, or a version this reader does not know) with a message in @err.
 */
int pc_trace_file_read(const char *path, struct pc_trace_file *f,
		       char *err, size_t errlen);
void pc_trace_file_free(struct pc_trace_file *f);
const char *pc_trace_event_name(unsigned event);

/* ------------------------------------------------------------------ */
/* model.c: the LRU age model of seed 004.                             */

/* Page types, decided when a span ends (see model.c). */
enum pc_trace_ptype {
	PC_PT_CLEAN,		/* read, or read ahead and then used */
	PC_PT_DIRTY,		/* written: inserted by a write, or dirtied */
	PC_PT_RA_UNUSED,	/* read ahead, not used yet */
	PC_PT_REFAULT,		/* inserted on a refault, clean */
	PC_PT_ALL,
	PC_NR_PT
};

/* Spans of time a page spends on a list, by how they end. */
enum pc_trace_span {
	PC_SP_INACTIVE_ACTIVATED,	/* inactive, until activated */
	PC_SP_INACTIVE_EVICTED,		/* inactive, until evicted */
	PC_SP_ACTIVE_DEACTIVATED,	/* active, until deactivated */
	PC_SP_ACTIVE_EVICTED,		/* active, until evicted */
	PC_SP_LIFE,			/* insertion to eviction */
	PC_NR_SP
};

struct pc_trace_stat {
	uint64_t count;
	double avg, p50, p95;	/* ms for times, pages for distances */
};

struct pc_trace_report {
	/* the file */
	struct pc_trace_file_header hdr;
	double duration_ms;
	uint64_t nr_events;		/* records read */
	size_t nr_threads;
	bool has_footer, truncated;
	uint64_t lost;			/* the footer's, all threads */
	size_t lost_threads;		/* threads that lost events */
	uint64_t missing;		/* declared by the footer, not read */
	uint64_t bad_blocks;
	uint64_t unsorted;

	/* counts */
	uint64_t events[PC_TRACE_NR_EVENTS];
	uint64_t unknown_events;
	uint64_t insert_reason[PC_TRACE_NR_INS + 1];	/* last: other */
	uint64_t insert_active;		/* inserted straight onto active */
	uint64_t evict_kind[PC_TRACE_NR_EV + 1];	/* last: other */

	/* the age model */
	struct pc_trace_stat age[PC_NR_PT][PC_NR_SP];
	uint64_t resident[PC_NR_PT];	/* still on the LRU at the end */
	uint64_t ra_inserted, ra_evicted, ra_evicted_unused;
	double ra_unused_share;		/* evicted unused / inserted, 0..1 */

	/* other timings */
	struct pc_trace_stat refault_distance;	/* pages */
	uint64_t refault_workingset;		/* PG_workingset at refault */
	struct pc_trace_stat dirty_ms;		/* dirtied -> writeback */
	struct pc_trace_stat writeback_ms;	/* writeback start -> end */

	/* what did not add up */
	uint64_t evict_without_insert;
	uint64_t event_without_insert;	/* activate etc. of no live page */
	uint64_t life_without_evict;	/* a frame reused, no eviction seen */
};

/* Run the model over a file read by pc_trace_file_read.  Returns 0 or
 * -ENOMEM. */
int pc_trace_model(const struct pc_trace_file *f, struct pc_trace_report *r);
/* Read @path and run the model; as pc_trace_file_read. */
int pc_trace_report_file(const char *path, struct pc_trace_report *r,
			 char *err, size_t errlen);
/* The report, as `pagecache trace report` prints it. */
void pc_trace_report_print(FILE *out, const char *path,
			   const struct pc_trace_report *r);
const char *pc_trace_ptype_name(unsigned t);

#endif
