/*
 * sync.c - data integrity: what an fsync adds to a writeback pass (the
 * kernel's fs/sync.c and filemap_fdatawait_range): the start of a
 * data-integrity pass, its staged commit, the wait for the writeback of a
 * range, and fsync itself.  writeback.c does the writing; writeback.h
 * holds the pass's control block the two share.
 *
 * A data-integrity pass (pc__writeback_range with @sync) first copies the
 * DIRTY tags of its range to TOWRITE and writes those, so pages dirtied
 * later do not make an fsync run forever (the kernel's
 * tag_pages_for_writeback).  One that finds fewer than WB_NOW_PAGES dirty
 * pages to write (an O_SYNC or O_DSYNC write's, a database's commit of a
 * few pages whatever the range asked) marks its requests now: its caller
 * does them itself, since it waits for them right after
 * (pc__wb_sync_start).  They are staged (struct wb_ctl.staged): written
 * with pwritev to the mapping's buffered descriptor (backing.c), which
 * only copies them into the kernel's page cache (pc__wb_stage_end_io
 * holds them), then made durable together by one
 * sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER) over the span they cover,
 * which puts them all on the device at once, as the kernel's own fsync
 * does, and the kernel's copy dropped: they are written with
 * RWF_DONTCACHE (the kernel starts their writeback at once and drops each
 * page when it is done: no call of ours), or, where the kernel or the
 * file system refuses it (io.c writes without it; the bdi remembers,
 * no_dontcache), by POSIX_FADV_DONTNEED after the sync (a page the kernel
 * held already, not one of dontcache's, stays there); only then do
 * they complete (pc__wb_finish), a failure of the sync failing every one
 * of them (they stay dirty).  The commit (pc__wb_commit) runs at the
 * pass's end and whenever the pass is about to sleep (writeback.c,
 * wb_flush).  Under fsync and fdatasync (pc__fsync_range) the commit is
 * the file's fsync or fdatasync itself, through the buffered descriptor
 * (the same inode): the kernel writes the pages and the file's metadata
 * and flushes the device in one call, as its own fsync of a buffered
 * file does, and the fsync after the pass is skipped when that commit
 * covers it - nothing under writeback when the fsync began or after the
 * pass, which could have completed after the commit's flush
 * (writeback_commit_syncs counts such commits, writeback_file_syncs the
 * fsyncs after a pass).  O_DIRECT writes done one after the other in the
 * caller cost a device round trip each (a commit of four scattered
 * database pages: four), and on a new file an unwritten-extent conversion
 * each, where the kernel allocates once at writeback.  Counters:
 * writeback_requests_staged (requests), writeback_commits (syncs).
 *
 * Waiting for a range (pc__wait_writeback_range): each page tagged
 * WRITEBACK in it, with a reference, its PG_writeback waited for; waited
 * pages lose the tag, so the look starts again from the first one left.
 * fsync: the pass, the wait, the file's own fsync (unless a commit
 * covered it), then the file's errseq cursor: a failed write is reported
 * once to every open file (errseq.c).
 *
 * Locks: the tree lock for the tags (TOWRITE); nothing is held across a
 * commit's system call or a wait (the pass submitted and committed
 * everything first, wb_flush).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "bdi.h"
#include "dirty.h"
#include "inode.h"
#include "pagewait.h"
#include "tree.h"
#include "writeback.h"

/*
 * A data-integrity writeback of fewer than this many dirty pages (an
 * O_SYNC or O_DSYNC write's, a commit's) is done by its caller, who waits
 * for it at once (pc_io_req.now): no completion thread between the device
 * and it.
 */
#define WB_NOW_PAGES 16

/* A data-integrity pass over [@start, @end] of w->m begins. */
void pc__wb_sync_start(struct wb_ctl *w, uint64_t start, uint64_t end)
{
	struct pc_mapping *m = w->m;
	unsigned tagged;

	pc__lock_counted(&m->tree_lock);
	tagged = pc__tree_tag_range(&m->tree, start, end, PC_TAG_DIRTY,
				    PC_TAG_TOWRITE, UINT32_MAX);
	pc__unlock(&m->tree_lock);
	/* Few pages to write (whatever the range: an fsync of a whole
	 * file with three dirty pages): the caller does them, staged
	 * where the mapping has a buffered descriptor. */
	w->now = tagged < WB_NOW_PAGES;
	if (w->now && tagged) {
		w->sfd = pc__backing_tail_fd(m, true);
		w->staged = w->sfd >= 0;
	}
}

/*
 * A staged request's transfer ended (in the submitting thread: it is
 * marked now): held until pc__wb_commit makes it durable.
 */
void pc__wb_stage_end_io(struct pc_io_req *req)
{
	struct wb_io *io = (struct wb_io *)req;
	struct wb_ctl *w = req->priv;
	off_t end = req->off + (off_t)io->bytes;

	if (!w->held || req->off < w->lo)
		w->lo = req->off;
	if (!w->held || end > w->hi)
		w->hi = end;
	req->next = (struct pc_io_req *)w->held;
	w->held = io;
	w->pending--;
}

/*
 * The staged requests transferred so far onto the device, together, then
 * completed: one sync_file_range over their span (the kernel writes its
 * dirty pages of it at once and waits for them), the kernel's copy
 * dropped.  A failed sync fails every one of them.
 */
void pc__wb_commit(struct wb_ctl *w)
{
	struct pc_cache *c = w->m->cache;
	struct wb_io *io = w->held, *next;
	bool drop = false;
	int err = 0;

	if (!io)
		return;
	w->held = NULL;
	w->commits++;
	pc__inc(c, 0, writeback_commits);
	if (w->commit != WB_COMMIT_RANGE) {
		pc__inc(c, 0, writeback_commit_syncs);
		if ((w->commit == WB_COMMIT_FSYNC ? fsync(w->sfd)
						  : fdatasync(w->sfd)) != 0)
			err = -errno;
	} else {
		while (sync_file_range(w->sfd, w->lo, w->hi - w->lo,
				       SYNC_FILE_RANGE_WAIT_BEFORE |
				       SYNC_FILE_RANGE_WRITE |
				       SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
			if (errno == EINTR)
				continue;
			err = pc__io_sync_range_err(-errno);
			break;
		}
	}
	if (err)
		w->commit_errors++;
	/* Written without RWF_DONTCACHE: ours to drop, and the device's
	 * staged writes go without it from now - its file system refused
	 * it (or, rarely, the ring wrote them: io_uring.c; the same then,
	 * an fadvise a commit). */
	for (struct wb_io *h = io; h && !drop; h = (struct wb_io *)h->req.next)
		drop = !(h->req.rwf & RWF_DONTCACHE);
	if (drop)
		atomic_store_explicit(&w->m->bdi->no_dontcache, true,
				      memory_order_relaxed);
	if (!err && drop)
		(void)posix_fadvise(w->sfd, w->lo, w->hi - w->lo,
				    POSIX_FADV_DONTNEED);
	for (; io; io = next) {
		ssize_t res = io->req.res;

		next = (struct wb_io *)io->req.next;
		if (res >= 0 && err)
			res = err;
		/* fsync's commit: its file open, its close records the disk */
		pc__wb_finish(io->m, io->pages, io->nr, io->bytes, res,
			      w->commit != WB_COMMIT_RANGE);
		free(io);
	}
}

int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end)
{
	struct pc_cache *c = m->cache;
	void *items[WB_GANG];
	uint64_t idx[WB_GANG];
	uint64_t index = start;
	int waited = 0;

	while (index <= end) {
		unsigned n;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, PC_TAG_WRITEBACK,
				      items, idx, WB_GANG);
		pc__tree_read_unlock(&m->tree);
		if (!n)
			break;
		for (unsigned k = 0; k < n; k++) {
			struct pc_page *p = items[k];

			if (!page_get_unless_zero(p))
				continue;
			if (page_mapping(p) == m && page_index(p) == idx[k]) {
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
				waited++;
			}
			pc__put_page(c, p);
		}
		/* Waited pages lose the tag: look again from the first. */
		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, PC_TAG_WRITEBACK,
				      items, idx, 1);
		pc__tree_read_unlock(&m->tree);
		if (n && idx[0] == index)
			continue;
		index = n ? idx[0] : end + 1;
		if (!n)
			break;
	}
	return waited;
}

int pc__fsync_range(struct pc_file *f, uint64_t start, uint64_t end,
		    bool datasync)
{
	struct pc_mapping *m = f->mapping;
	/* A write in flight now may end after a commit's flush (the top). */
	bool busy = atomic_load(&m->nr_writeback) != 0, synced;

	pc__writeback_pass(m, start, end, true, NULL,
			   datasync ? WB_COMMIT_DATASYNC : WB_COMMIT_FSYNC,
			   &synced);
	if (pc__wait_writeback_range(m, start, end))
		busy = true;
	/* (pc__bk(m)->fd, not tail_fd: fsync is of the file, both descriptors') */
	if (busy || !synced) {
		pc__inc(m->cache, 0, writeback_file_syncs);
		if ((datasync ? fdatasync(pc__bk(m)->fd)
			      : fsync(pc__bk(m)->fd)) != 0)
			pc__errseq_set(m, -errno);
	}
	return pc__errseq_check_advance(m, &f->err_cursor);
}
