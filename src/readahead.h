/*
 * readahead.h - the read path's policies: readahead windows and streams
 * (readahead.c) and use-once pages dropped behind a stream (dropbehind.c).
 */
#ifndef PC_READAHEAD_H
#define PC_READAHEAD_H

#include "internal.h"

/* readahead.c */
void pc__ra_init(struct pc_file *f);
/* The largest window of a file with no advice: readahead.max, or auto's. */
unsigned pc__ra_default_max(struct pc_cache *c);
void pc__sync_readahead(struct pc_file *f, uint64_t index, unsigned req);
void pc__async_readahead(struct pc_file *f, struct pc_page *p,
			 uint64_t index, unsigned req);
/* The last page a read through @f touched (sequential detection). */
void pc__ra_note_read(struct pc_file *f, uint64_t index);
uint64_t pc__ra_last_read(struct pc_file *f);	/* UINT64_MAX: none yet */
/* A read continued the previous one, to page @last: @f is a stream. */
void pc__ra_stream_note(struct pc_file *f, uint64_t last);
/* @f reads sequentially no more: its m->stream_pos slot is freed. */
void pc__ra_stream_end_locked(struct pc_file *f);

/* dropbehind.c: use-once pages */
/* How a read touched a page, for pc__mark_read. */
#define PC_READ_FIRST 0x1	/* not the page the previous read ended in */
#define PC_READ_SEQ 0x2		/* the previous read's page or the next one */
#define PC_READ_CONSUMED 0x4	/* read through its last byte (or EOF) */
/* A page was read through @f (PC_READ_*); true: a readahead hit. */
bool pc__mark_read(struct pc_file *f, struct pc_page *p, unsigned how);
/* A read of @bytes took @ns from submission to completion (read_bw). */
void pc__ra_account_read(struct pc_mapping *m, uint64_t bytes, uint64_t ns);
/* At close: drop the use-once pages @f gathered, end its stream. */
void pc__dropbehind_flush(struct pc_file *f);
/*
 * Drop a clean page if only @expected refs remain (@force: even if it was
 * referenced or is active); the page is not locked by the caller, @wait:
 * sleep for its lock rather than give up.
 */
bool pc__drop_page(struct pc_cache *c, struct pc_page *p, int expected,
		   bool force, bool wait);
/* Drop locked clean pages of @m (caller's ref + the mapping's) in one batch. */
unsigned pc__drop_pages_locked(struct pc_cache *c, struct pc_mapping *m,
			       struct pc_page **pages, unsigned nr);
/* Are stream pages on @m's device use-once (cache.stickiness), @read or write? */
bool pc__stream_use_once(struct pc_mapping *m, bool read);
/* Does cache.stickiness drop use-once stream pages on @m's device now? */
bool pc__stream_dropbehind(struct pc_mapping *m);
/*
 * Memory is tight: free frames near the nodes' low marks (dropbehind.c's
 * use_once_floor), so new pages would soon come from reclaim.  Use-once
 * stream pages are dropped behind the stream only then; with memory to
 * spare they stay cached.
 */
bool pc__memory_tight(struct pc_cache *c);

#endif /* PC_READAHEAD_H */
