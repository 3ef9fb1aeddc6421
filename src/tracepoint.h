/*
 * tracepoint.h - how the core emits trace events (trace.c writes them to
 * the file trace_fmt.h describes), and trace.c's knobs for tests.
 *
 * Emitters pass the enums of trace_fmt.h, never bare numbers: the event
 * (PC_TR_*), and as arg the insert reason (pc_trace_insert_reason), the
 * eviction kind (PC_TRACE_EV_*), a refault distance, or 0.
 */
#ifndef PC_TRACEPOINT_H
#define PC_TRACEPOINT_H

#include "internal.h"
#include "trace_fmt.h"

extern _Atomic int pc__trace_on;	/* caches with tracing on */
int pc__trace_open(struct pc_cache *c, const char *path);
void pc__trace_close(struct pc_cache *c);
void pc__trace_emit(struct pc_cache *c, int event, struct pc_page *p,
		    uint32_t arg);
#define pc_trace(c, ev, p, arg) \
	do { \
		if (__builtin_expect((c)->trace != NULL, 0)) \
			pc__trace_emit((c), (ev), (p), (arg)); \
	} while (0)

/*
 * Why a page going on the LRU is new there (PC_TR_LRU_INSERT's arg), read
 * from its flags: a refault (PG_workingset), readahead (PG_rapage), a
 * write (PG_dirty), else a read.
 */
static inline uint32_t pc_trace_insert_reason(const struct pc_page *p)
{
	if (page_test(p, PG_workingset))
		return PC_TRACE_INS_REFAULT;
	if (page_test(p, PG_rapage))
		return PC_TRACE_INS_READAHEAD;
	if (page_test(p, PG_dirty))
		return PC_TRACE_INS_WRITE;
	return PC_TRACE_INS_READ;
}

/* ------------------------------------------------------------------ */
/* trace.c's knobs, for tests.                                         */

/* Records per ring for rings made from now on; a power of two >= 2. */
extern _Atomic unsigned pc__trace_ring_records;
#define PC_TRACE_RING_DEFAULT 16384u
/* The event clock; tests set it before pc__trace_open and reset it after
 * pc__trace_close (NULL: CLOCK_MONOTONIC). */
extern uint64_t (*pc__trace_clock)(void);
/* Stop (or restart) the drain thread's passes: when it returns, none runs
 * until restarted; pc__trace_flush and close still work. */
void pc__trace_pause(struct pc_cache *c, bool paused);
/* Drain every ring to the file now; returns records written. */
uint64_t pc__trace_flush(struct pc_cache *c);
/* Records waiting in the calling thread's ring of @c (0 if it has none). */
unsigned pc__trace_ring_fill(struct pc_cache *c);

#endif /* PC_TRACEPOINT_H */
