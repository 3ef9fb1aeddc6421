/*
 * writeback.h - one writeback pass's requests and control block, shared
 * by writeback.c (the pass: which pages, put under writeback),
 * writeback_io.c (their runs, requests and completion) and sync.c (what
 * a data-integrity pass adds: the staged commit, and the fsync around the
 * pass).  Nothing else sees them.
 */
#ifndef PC_WRITEBACK_H
#define PC_WRITEBACK_H

#include "internal.h"
#include "io.h"

#define WB_GANG 64	/* pages looked up, locked and tagged at a time */

struct wb_io {
	struct pc_io_req req;
	struct pc_mapping *m;
	unsigned nr;
	size_t bytes;		/* asked for: whole pages, or a tail's */
	struct pc_page *pages[PC_MAX_IO_PAGES];
	struct iovec iov[PC_MAX_IO_PAGES];
};

/* How a staged commit makes its requests durable (wb_ctl.commit). */
enum wb_commit_how {
	WB_COMMIT_RANGE,	/* sync_file_range over their span */
	WB_COMMIT_DATASYNC,	/* fdatasync(2) of the file (fsync's pass) */
	WB_COMMIT_FSYNC,	/* fsync(2) of the file */
};

/* One writeback pass: the open run and the unsent requests. */
struct wb_ctl {
	struct pc_mapping *m;
	bool now;				/* requests marked now */
	bool staged;				/* now, through sfd (sync.c) */
	enum wb_commit_how commit;		/* staged: how */
	unsigned commits, commit_errors;	/* staged: done, failed */
	int sfd;				/* staged: the buffered descriptor */
	struct wb_io *held;			/* staged: transferred, not durable */
	unsigned pending;			/* staged: submitted, not transferred */
	off_t lo, hi;				/* staged: the span of held */
	unsigned nr;				/* pages in run[] */
	unsigned nreq;				/* requests in reqs[] */
	struct pc_page *run[PC_MAX_IO_PAGES];	/* under writeback, unsent */
	struct pc_io_req *reqs[WB_GANG + 1];	/* built, not submitted */
};

/* writeback.c */
/*
 * pc__writeback_range, its staged commits made @how; *@synced (if not
 * NULL): the pass was staged and its last commit synced the file (no
 * commit failed), so everything the pass wrote is durable.
 */
int pc__writeback_pass(struct pc_mapping *m, uint64_t start, uint64_t end,
		       bool sync, long *budget, enum wb_commit_how how,
		       bool *synced);

/* writeback_io.c */
/* @p, just put under writeback, joins the open run (@size: the file's). */
void pc__wb_add(struct wb_ctl *w, struct pc_page *p, int64_t size);
void pc__wb_submit(struct wb_ctl *w);	/* the requests built so far */
/* Before sleeping: runs closed, all submitted, staged ones committed. */
void pc__wb_flush(struct wb_ctl *w);
/*
 * The write of @nr pages, @want bytes of them, ended with @res.  @owe: the
 * caller fsyncs a file it holds open, whose close records the disk
 * (pc__seen_owe); otherwise the last write in flight records it now.
 */
void pc__wb_finish(struct pc_mapping *m, struct pc_page **pages,
		   unsigned nr, size_t want, ssize_t res, bool owe);

/* sync.c */
/* A data-integrity pass begins: TOWRITE tags, and now or staged. */
void pc__wb_sync_start(struct wb_ctl *w, uint64_t start, uint64_t end);
void pc__wb_stage_end_io(struct pc_io_req *req);	/* held for the commit */
void pc__wb_commit(struct wb_ctl *w);	/* the held requests made durable */

#endif /* PC_WRITEBACK_H */
