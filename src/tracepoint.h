/*
 * tracepoint.h - the library's trace events and how the core emits them
 * (trace.c writes them to the file trace_fmt.h describes).
 */
#ifndef PC_TRACEPOINT_H
#define PC_TRACEPOINT_H

#include "internal.h"

enum pc_trace_event {
	PC_TR_LRU_INSERT, PC_TR_ACTIVATE, PC_TR_DEACTIVATE, PC_TR_ROTATE,
	PC_TR_EVICT, PC_TR_REFAULT, PC_TR_WB_START, PC_TR_WB_END, PC_TR_DIRTY,
	PC_TR_NR_EVENTS
};
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

#endif /* PC_TRACEPOINT_H */
