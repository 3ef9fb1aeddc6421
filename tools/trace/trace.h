/*
 * tools/trace/trace.h - the `pagecache trace` subcommand, the trace file
 * reader and the LRU age model.
 *
 * The binary file format is documented at the top of tools/trace/reader.c;
 * src/trace_fmt.h holds what the writer and reader share (structs, event
 * numbers, flag bits).  It is the one library header a tool includes
 * besides include/pagecache.h, by its path: tools are built without -Isrc.
 *
 * Names: pct_ (PCT_) for this tool's own; pc_trace_ and PC_TRACE_ / PC_TR_
 * are the format's (trace_fmt.h); pc_trace_main is the command's entry.
 */
#ifndef PC_TOOLS_TRACE_H
#define PC_TOOLS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../src/trace_fmt.h"

/* `pagecache trace report FILE`; argv[0] = "trace".  Returns an exit code. */
int pc_trace_main(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* reader.c: a trace file in memory, its events in time order.         */

struct pct_tid_count {
	uint32_t tid;
	uint64_t read;			/* records of this thread in the file */
	uint64_t declared;		/* what the footer says it wrote */
	uint64_t lost;			/* what the footer says it dropped */
};

struct pct_file {
	struct pc_trace_file_header hdr;
	const struct pc_trace_rec **ev;	/* every record, by time (stable) */
	uint32_t *tid;			/* tid[i]: the thread of ev[i] */
	size_t nr_ev;
	bool has_footer;
	struct pc_trace_footer footer;	/* valid when has_footer */
	struct pct_tid_count *threads;	/* by tid, ascending */
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
int pct_file_read(const char *path, struct pct_file *f,
		       char *err, size_t errlen);
void pct_file_free(struct pct_file *f);
const char *pct_event_name(unsigned event);

/* ------------------------------------------------------------------ */
/* model.c: the LRU age model of seed 004.                             */

/* Page types, decided when a span ends (see model.c). */
enum pct_ptype {
	PCT_PT_CLEAN,		/* read, or read ahead and then used */
	PCT_PT_DIRTY,		/* written: inserted by a write, or dirtied */
	PCT_PT_RA_UNUSED,	/* read ahead, not used yet */
	PCT_PT_REFAULT,		/* inserted on a refault, clean */
	PCT_PT_ALL,
	PCT_NR_PT
};

/* Spans of time a page spends on a list, by how they end. */
enum pct_span {
	PCT_SP_INACTIVE_ACTIVATED,	/* inactive, until activated */
	PCT_SP_INACTIVE_EVICTED,		/* inactive, until evicted */
	PCT_SP_ACTIVE_DEACTIVATED,	/* active, until deactivated */
	PCT_SP_ACTIVE_EVICTED,		/* active, until evicted */
	PCT_SP_LIFE,			/* insertion to eviction */
	PCT_NR_SP
};

struct pct_stat {
	uint64_t count;
	double avg, p50, p95;	/* ms for times, pages for distances */
};

struct pct_report {
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
	struct pct_stat age[PCT_NR_PT][PCT_NR_SP];
	uint64_t resident[PCT_NR_PT];	/* still on the LRU at the end */
	uint64_t ra_inserted, ra_evicted, ra_evicted_unused;
	double ra_unused_share;		/* evicted unused / inserted, 0..1 */

	/* other timings */
	struct pct_stat refault_distance;	/* pages */
	uint64_t refault_workingset;		/* PG_workingset at refault */
	struct pct_stat dirty_ms;		/* dirtied -> writeback */
	struct pct_stat writeback_ms;	/* writeback start -> end */

	/* what did not add up */
	uint64_t evict_without_insert;
	uint64_t event_without_insert;	/* activate etc. of no live page */
	uint64_t life_without_evict;	/* a frame reused, no eviction seen */
};

/* Run the model over a file read by pct_file_read.  Returns 0 or
 * -ENOMEM. */
int pct_model(const struct pct_file *f, struct pct_report *r);
/* Read @path and run the model; as pct_file_read. */
int pct_report_file(const char *path, struct pct_report *r,
			 char *err, size_t errlen);
/* The report, as `pagecache trace report` prints it. */
void pct_report_print(FILE *out, const char *path,
			   const struct pct_report *r);
const char *pct_ptype_name(unsigned t);

#endif
