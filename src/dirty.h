/*
 * dirty.h - dirty pages and their writeback as the rest of the core calls
 * them: a page dirtied, its accounting, the dirty limits and the writers'
 * throttle (throttle.c); a range or a whole mapping written back
 * (writeback.c) and a write's end (writeback_io.c, with the test hook in
 * its window); waiting for writeback and fsync (sync.c); writeback errors
 * (errseq.c); a dead process's write and page lock put right (writeback.c,
 * for procs.c).  A writeback pass's own requests are writeback.h's.
 */
#ifndef PC_DIRTY_H
#define PC_DIRTY_H

#include "internal.h"

/* writeback.c */
/* Write dirty pages of [start, end]; @sync waits for locks, tags TOWRITE. */
int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget);
/*
 * Write all of @m back and wait; pages whose write failed are tried again,
 * at most a bounded number of times (a device that keeps failing must not
 * hold up destroy forever).  Returns the pages left dirty.
 */
uint64_t pc__writeback_mapping_retry(struct pc_mapping *m);
/* writeback_io.c: writeback's requests and their completion */
void pc__end_page_writeback(struct pc_cache *c, struct pc_page *p);
/* sync.c: waiting for writeback, fsync */
int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end);
int pc__fsync_range(struct pc_file *f, uint64_t start, uint64_t end,
		    bool datasync);
/* throttle.c: dirty accounting, the dirty limits, the writers' throttle */
void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p);
void pc__account_page_dirtied(struct pc_mapping *m, struct pc_page *p);
void pc__account_page_cleaned(struct pc_mapping *m, struct pc_page *p);
void pc__balance_dirty_pages(struct pc_mapping *m, unsigned nr_dirtied);
void pc__update_dirty_limits(struct pc_cache *c);
/* errseq.c: writeback errors, reported once to each open file */
uint32_t pc__errseq_sample(struct pc_mapping *m);
int pc__errseq_check_advance(struct pc_mapping *m, _Atomic uint32_t *cursor);
void pc__errseq_set(struct pc_mapping *m, int err);

/* A dead process's write in flight on @p redirtied and ended. */
void pc__writeback_abandon(struct pc_cache *c, struct pc_page *p);
/* A dead process's page lock on @p, and its write completion's @mark left
 * on @p (PC_IO_ENDED, PC_IO_MOVING), put right (writeback.c; procs.c). */
void pc__lock_abandon(struct pc_cache *c, struct pc_page *p);
void pc__write_end_abandon(struct pc_cache *c, struct pc_page *p,
			   int32_t mark);

/*
 * Tests (debug builds): called by pc__wb_finish (writeback_io.c) for each
 * write that ended, with its first page, where PC_PARK_WB_ENDING parks:
 * the tag and the counters moved, PG_writeback still on.  NULL: none.
 */
typedef void pc__test_wb_ending_fn(struct pc_page *p);
extern pc__test_wb_ending_fn *_Atomic pc__test_wb_ending_hook;
#ifdef PC_DEBUG
static inline void pc__test_wb_ending(struct pc_page *p)
{
	pc__test_wb_ending_fn *fn = atomic_load_explicit(&pc__test_wb_ending_hook,
							 memory_order_acquire);

	if (fn)
		fn(p);
}
#else
static inline void pc__test_wb_ending(struct pc_page *p)
{
	(void)p;
}
#endif

#endif /* PC_DIRTY_H */
