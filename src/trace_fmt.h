/*
 * trace_fmt.h - the trace file's format, shared by the writer
 * (src/trace.c) and the reader (tools/trace/reader.c, whose header comment
 * documents the format in full): the on-disk structures, the event
 * numbers, the page flag bits of a record, the insert reasons and the
 * eviction kinds.
 *
 * Self-contained: it includes only standard headers, so the tools read a
 * trace without seeing the library's internals.  A record stores the
 * page's in-memory flag word as it was; trace.c asserts that every
 * PC_TRACE_PG_* below is the PG_* bit of page.h it names.
 *
 * Native byte order, fixed-size fields, no padding holes (the asserts
 * below).  A file is: one header, then blocks, the last one the footer.
 */
#ifndef PC_TRACE_FMT_H
#define PC_TRACE_FMT_H

#include <stdint.h>

#define PC_TRACE_MAGIC "PCTRACE"	/* 8 bytes with its NUL */
#define PC_TRACE_VERSION 1
#define PC_TRACE_BLOCK_MAGIC 0x42544350u	/* "PCTB" little-endian */

enum pc_trace_block_type {
	PC_TRACE_BLK_EVENTS = 1,	/* count records of one thread */
	PC_TRACE_BLK_FOOTER = 2,	/* summary + count thread entries */
};

/* Events (a record's event field). */
enum pc_trace_event {
	PC_TR_LRU_INSERT,	/* a page went on an LRU list: arg, the reason */
	PC_TR_ACTIVATE,		/* inactive -> active */
	PC_TR_DEACTIVATE,	/* active -> inactive */
	PC_TR_ROTATE,		/* back to the inactive list's tail */
	PC_TR_EVICT,		/* left the cache: arg, the kind */
	PC_TR_REFAULT,		/* a shadow was found: arg, the distance */
	PC_TR_WB_START,		/* writeback started */
	PC_TR_WB_END,		/* writeback ended */
	PC_TR_DIRTY,		/* a clean page was dirtied */
	PC_TRACE_NR_EVENTS
};

/*
 * Page flag bits of a record's flags field: the library's PG_* bits
 * (src/page.h), which trace.c checks one by one.  X(name) for each, in
 * bit order.
 */
#define PC_TRACE_PAGE_FLAGS(X) \
	X(locked) X(waiters) X(referenced) X(uptodate) X(dirty) \
	X(writeback) X(reclaim) X(readahead) X(active) X(lru) \
	X(workingset) X(error) X(unevictable) X(dropbehind) X(hint) \
	X(rapage)

enum pc_trace_page_flag {
#define PC_TRACE_PG_ENUM(name) PC_TRACE_PG_##name,
	PC_TRACE_PAGE_FLAGS(PC_TRACE_PG_ENUM)
#undef PC_TRACE_PG_ENUM
	PC_TRACE_NR_PAGE_FLAGS
};

/* Insert reasons (arg of PC_TR_LRU_INSERT). */
enum pc_trace_insert_reason {
	PC_TRACE_INS_READ = 0,		/* new page, read by the program */
	PC_TRACE_INS_WRITE = 1,		/* new page, written by the program */
	PC_TRACE_INS_READAHEAD = 2,	/* new page, read ahead */
	PC_TRACE_INS_REFAULT = 3,	/* new page whose shadow was found */
	PC_TRACE_NR_INS
};

/* Eviction kinds (arg of PC_TR_EVICT). */
enum pc_trace_evict_kind {
	PC_TRACE_EV_RECLAIM = 0,	/* vmscan freed it (kswapd, direct) */
	PC_TRACE_EV_DROPBEHIND = 1,	/* cache.stickiness dropped it */
	PC_TRACE_EV_REMOVE = 2,		/* truncate, invalidate, DONTNEED */
	PC_TRACE_EV_MIGRATE = 3,	/* NUMA balancing moved it away */
	PC_TRACE_NR_EV
};

struct pc_trace_file_header {
	char magic[8];			/* PC_TRACE_MAGIC */
	uint32_t version;		/* PC_TRACE_VERSION */
	uint32_t header_size;		/* sizeof this struct: 256 */
	uint32_t record_size;		/* sizeof(struct pc_trace_rec): 32 */
	uint32_t page_size;		/* 4096 */
	uint32_t nr_nodes;
	uint32_t frames_per_node;
	uint64_t nr_frames;
	uint64_t start_ns;		/* CLOCK_MONOTONIC at open */
	uint64_t start_realtime_ns;	/* CLOCK_REALTIME at open */
	uint32_t pid;
	uint32_t nr_page_flags;		/* PC_TRACE_NR_PAGE_FLAGS */
	char note[192];			/* the cache's policies, text */
};

struct pc_trace_block {
	uint32_t magic;			/* PC_TRACE_BLOCK_MAGIC */
	uint16_t type;			/* enum pc_trace_block_type */
	uint16_t reserved;
	uint32_t tid;			/* events: the writing thread */
	uint32_t count;			/* records, or footer thread entries */
};

struct pc_trace_rec {
	uint64_t ts;			/* ns, CLOCK_MONOTONIC */
	uint64_t index;			/* page index in its file */
	uint32_t pfn;			/* frame number in the cache */
	uint32_t mapping;		/* inode number folded to 32 bits; 0 none */
	uint32_t arg;			/* per event: reason, distance, kind */
	uint16_t flags;			/* page flags at the event
					   (1 << PC_TRACE_PG_*) */
	uint8_t event;			/* enum pc_trace_event */
	uint8_t node;			/* node of the frame */
};

struct pc_trace_footer {
	uint64_t events;		/* records written, all threads */
	uint64_t lost;			/* events dropped, all threads */
	uint64_t end_ns;		/* CLOCK_MONOTONIC at close */
	uint64_t lost_unattributed;	/* dropped before a ring existed */
};

struct pc_trace_thread_stat {
	uint32_t tid;
	uint32_t reserved;
	uint64_t events;		/* records of this thread in the file */
	uint64_t lost;			/* dropped: its ring was full */
};

_Static_assert(sizeof(struct pc_trace_file_header) == 256, "header size");
_Static_assert(sizeof(struct pc_trace_block) == 16, "block size");
_Static_assert(sizeof(struct pc_trace_rec) == 32, "record size");
_Static_assert(sizeof(struct pc_trace_footer) == 32, "footer size");
_Static_assert(sizeof(struct pc_trace_thread_stat) == 24, "thread stat size");
_Static_assert(PC_TRACE_NR_PAGE_FLAGS <= 16, "page flags fit the record's u16");

/* Fold an inode number into the record's 32-bit mapping field. */
static inline uint32_t pc_trace_fold_ino(uint64_t ino)
{
	return (uint32_t)(ino ^ (ino >> 32));
}

#endif /* PC_TRACE_FMT_H */
