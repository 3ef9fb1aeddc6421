/*
 * inode.h - the files as the core sees them: an open file (struct
 * pc_file, with its readahead state), the table of mappings and their
 * life (inode.c; a mapping's reference count is internal.h's, as struct
 * pc_mapping is), the closed mappings oldest first, a file position's
 * lock (fpos.c), truncation and invalidation (truncate.c).
 */
#ifndef PC_INODE_H
#define PC_INODE_H

#include "internal.h"

#define PC_DROP_BATCH 32	/* use-once pages dropped per tree-lock hold */

/* Readahead state of one open file (the kernel's file_ra_state). */
struct pc_ra {
	uint64_t start;		/* first page of the current window */
	unsigned size;		/* pages in it */
	unsigned async_size;	/* marker at start + size - async_size */
	uint64_t prev_index;	/* last page read, for sequential detection */
	unsigned max;		/* largest window, pages */
	bool holes;		/* the last window was all holes (no I/O) */
};

struct pc_file {
	struct pc_cache *cache;
	struct pc_mapping *mapping;
	int flags;			/* open flags */
	_Atomic uint32_t err_cursor;	/* errseq seen; moved by CAS */
	struct pc_lock ra_lock;	/* ra, drop; uncontended in practice */
	struct pc_ra ra;
	struct pc_page *drop[PC_DROP_BATCH];	/* use-once pages to drop */
	uint64_t drop_index[PC_DROP_BATCH];	/* their indices (unpinned) */
	unsigned nr_drop;
	unsigned drop_skip;		/* batches before the next look for
					   stale pages (dropbehind.c) */
	_Atomic int ra_stream;		/* 0: not reading sequentially; k > 0:
					   owns mapping->stream_pos[k - 1];
					   -1: no slot was free.  ra_lock */
	_Atomic int advice;		/* POSIX_FADV_* of the whole file */
	_Atomic uint64_t wnext;		/* write stream detection */
	_Atomic uint64_t wrun;		/* pages written sequentially */
	struct pc_link link;		/* on c->files, c->mappings_lock */
	int32_t pid;			/* the opener: a shared cache closes
					   the files of a process that died
					   (pc__files_reap); mappings_lock */
};

/* c->closed, oldest first: the first closed mapping, the next one. */
static inline struct pc_mapping *closed_first(struct pc_cache *c)
{
	return pc_list_first_entry(&c->closed, struct pc_mapping, closed_link);
}
static inline struct pc_mapping *closed_next(struct pc_mapping *m)
{
	return pc_list_next_entry(m, struct pc_mapping, closed_link);
}

/* inode.c: mappings, open files */
int pc__mappings_shutdown(struct pc_cache *c);
/* Close the files process @pid opened and left open (it died). */
void pc__files_reap(struct pc_cache *c, pid_t pid);
/* The mapping of (@dev, @ino), with a reference; NULL if none. */
struct pc_mapping *pc__mapping_lookup(struct pc_cache *c, dev_t dev, ino_t ino);
/* One writeback pass of all of @m, waited for. */
void pc__mapping_writeback_once(struct pc_mapping *m);
/* Write all of @m back (bounded retries); its new errors. */
int pc__mapping_sync(struct pc_mapping *m);

/* fpos.c: m->pos_lock, made with the mapping and destroyed with it. */
void pc__fpos_init(struct pc_cache *c, struct pc_mapping *m);

/* truncate.c */
void pc__truncate_pages(struct pc_mapping *m, uint64_t from_index);
/* Drop every clean page, waiting for those under writeback (dirty pages,
 * and those whose write failed, stay); i_rwsem held. */
void pc__invalidate_pages(struct pc_mapping *m);
/* Truncate to @len: ftruncate(2), then the cache; 0 or -errno (the cache
 * as it was).  i_rwsem held exclusively. */
int pc__truncate_locked(struct pc_mapping *m, off_t len);

#endif /* PC_INODE_H */
