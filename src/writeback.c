/*
 * writeback.c - dirty accounting, writing pages out, fsync, and what a
 * failed write leaves.
 *
 * Dirty accounting.  A page is dirtied under its page lock
 * (pc__set_page_dirty): PG_dirty, then the DIRTY tag under the tree lock,
 * then the counters, and the mapping goes on its bdi's dirty list if it
 * was clean.  Dirty and writeback pages are counted at four levels, all
 * atomic and read without a lock:
 *
 *   cache    vmstat nr_dirty, nr_writeback (sharded, summed on read)
 *   node     vmstat per node + n->dirty_pages (numa.dirty_spread)
 *   bdi      b->nr_dirty, b->nr_writeback (the throttle and the flusher
 *            of that device; writeback.dirty_time_ms)
 *   mapping  m->nr_dirty (the flusher's "clean?"), m->nr_writeback
 *
 * Writing out (pc__writeback_range), one gang of up to 64 pages at a time:
 *   - find pages tagged DIRTY (background) or TOWRITE (data integrity:
 *     the DIRTY tags of the range are first copied to TOWRITE, so pages
 *     dirtied later do not make an fsync run forever - the kernel's
 *     tag_pages_for_writeback);
 *   - lock them (trylock in the background; sleeping for fsync), skip
 *     those under writeback (fsync waits for them first);
 *   - one tree-lock hold for the gang: DIRTY, TOWRITE off, WRITEBACK on;
 *   - PG_dirty off, PG_writeback on, counters moved, the page marked as
 *     this process's write in flight (io_pid: a dead writer's reaper
 *     makes it dirty again, share.c), pages unlocked;
 *   - each page joins the open run (struct wb_ctl) if it follows the run's
 *     last page; a run is closed into one vectored request when it reaches
 *     1 MiB (PC_MAX_IO_PAGES) or a page does not follow, so runs span
 *     gangs and a contiguous file goes out in 1 MiB requests; the requests
 *     a gang closed are submitted together at its end, without waiting for
 *     them, so several are in flight (as many as the backend takes).
 *     Frames side by side share one iovec; writeback_segments counts the
 *     runs of frames each request has, a huge page's end ending one: what
 *     the device sees as segments (a virtio disk without indirect
 *     descriptors takes 254 a request and as many a ring, so a request of
 *     scattered pages is split and runs alone; reclaim hands frames out in
 *     order for this, vmscan.c);
 *   - before the first gang, a pass of O_DIRECT requests in flight
 *     together (not marked now) whose pages reach past the file's end on
 *     the disk (m->seen.size) allocates that part once (wb_extend:
 *     fallocate(2) per run of pages, up to the file's size; ftruncate(2)
 *     where there is no fallocate), so that no request extends the file:
 *     ext4 serialises writes that extend i_size (i_rwsem exclusive, and a
 *     wait for the write in the call) and runs those within it, into
 *     allocated or unwritten blocks, under i_rwsem shared;
 *   - the file's size is read under each page's lock: the last page, when
 *     the size ends inside it, goes alone and only its bytes up to the
 *     size are written, with a buffered pwrite on the mapping's buffered
 *     descriptor (backing.c; the kernel keeps it coherent with the O_DIRECT
 *     one): the disk is never longer than a size the file had, even if
 *     the process dies before the next fsync.  A dirty page wholly past
 *     the size is being truncated: it is left to the truncation.
 *   - a data-integrity pass that finds fewer than WB_NOW_PAGES dirty
 *     pages to write (an O_SYNC or O_DSYNC write's, a database's commit
 *     of a few pages whatever the range asked) marks its requests now:
 *     its caller does them itself, since it waits for them right after.
 *     They are staged (struct wb_ctl.staged): written with pwritev to
 *     the mapping's buffered descriptor (backing.c), which only copies
 *     them into the kernel's page cache, then made durable together by
 *     one sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER) over the span
 *     they cover, which puts them all on the device at once, as the
 *     kernel's own fsync does, and the kernel's copy dropped
 *     (POSIX_FADV_DONTNEED); only then do they complete (wb_finish), a
 *     failure of the sync failing every one of them (they stay dirty).
 *     Under fsync and fdatasync (pc__fsync_range) the commit is the
 *     file's fsync or fdatasync itself, through the buffered descriptor
 *     (the same inode): the kernel writes the pages and the file's
 *     metadata and flushes the device in one call, as its own fsync of
 *     a buffered file does, and the fsync after the pass is skipped when
 *     that commit covers it - nothing under writeback when the fsync
 *     began or after the pass, which could have completed after the
 *     commit's flush (writeback_commit_syncs counts such commits,
 *     writeback_file_syncs the fsyncs after a pass);
 *     O_DIRECT writes done one after the other in the caller cost a
 *     device round trip each (a commit of four scattered database pages:
 *     four), and on a new file an unwritten-extent conversion each, where
 *     the kernel allocates once at writeback.  Counters:
 *     writeback_requests_staged (requests), writeback_commits (syncs);
 *   - a writer of pages must never sleep while it holds pages under
 *     writeback that it has not submitted (whoever waits for them would
 *     wait for it): before every sleeping lock or writeback wait the run
 *     is closed and everything is submitted and staged requests are
 *     committed (wb_flush, the kernel's plug flush at schedule);
 *   - a background pass stops at once when no one but its caller holds
 *     the mapping any more (an unlinked file closed for the last time: its
 *     pages are about to be dropped unwritten).
 * Shared caches: the requests in flight are counted per process in each
 * bdi (b->in_flight[its page-lock owner id], summed on read), so a death
 * anywhere in wb_queue is undone exactly: the reaper zeroes the dead
 * process's count (bdi.c).  A completion keeps each page's io_pid mark,
 * PC_IO_MOVING while the counters move (a death there: the reaper
 * breaks the cache, and still ends PG_writeback), then PC_IO_ENDED until
 * that page's PG_writeback has ended (the reaper ends it and gives the
 * reference back), then 0; a gang sets PG_writeback only on a page with
 * no mark (it waits out a completion between its end and its clear), so
 * the reaper never takes another's writeback for the dead one's.  A
 * gang's references are recorded in its thread's context (tctx.c) from
 * the get until the page's mark, sleeps for the lock included.
 *
 * Completion (wb_finish) keeps failed pages dirty (PG_error, errseq set:
 * nothing written and lost is ever treated as clean), clears WRITEBACK,
 * updates the bdi (bandwidth, last success or failure), records the
 * file's stat when it was the mapping's last write in flight (m->seen:
 * close-to-open coherence, coherence.c), and only then ends
 * PG_writeback (which may let a truncation, and the mapping's teardown,
 * proceed): neither the mapping nor the bdi is touched after that.  Pages
 * marked PG_reclaim while under writeback go to the inactive tail;
 * use-once stream pages (PG_dropbehind) are dropped at once when memory is
 * tight or with cache.stickiness=always (readahead.c has the policy).
 *
 * Errors: a failed write sets the mapping's errseq (errseq.c), which
 * reports it once to every open file, at its fsync or close.  Failed pages
 * stay dirty and are written again by the next fsync, or by the flusher
 * after its back-off (bdi.c); pc__writeback_mapping_retry bounds the tries of a caller that
 * waits for all of a mapping (destroy, pc_cache_sync), so a dead device
 * cannot hang destroy.  Pages still dirty after it stay (destroy alone
 * drops them, counted as writeback_lost and reported).
 *
 * Writers are throttled, and the dirty limits set, in throttle.c; a write
 * completion wakes the writers it paused when dirty is back under freerun
 * (pc__balance_dirty_wake).
 *
 * Locks: the page lock (sleeping, taken in index order within a gang) →
 * tree lock (tags) → bdi lock (dirty list, in bdi.c).  Counters are atomic.
 * Nothing is held across I/O submission except the page locks of the gang
 * being gathered, which hold no page under writeback.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "readahead.h"
#include "tracepoint.h"
#include "tree.h"

#define GANG 64
/* The data of a huge page (node.h: a frame step), physically contiguous. */
#define WB_HUGE_BYTES ((uintptr_t)PC_FRAME_STEP << PC_PAGE_SHIFT)
#define NS_PER_MS 1000000ll
#define FINAL_TRIES 3			/* pc__writeback_mapping_retry */

/* ------------------------------------------------------------------ */
/* Dirty accounting                                                    */

static void account_dirtied(struct pc_mapping *m, struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	struct pc_node *n = page_node(c, p);
	struct pc_bdi *b = m->bdi;

	pc__inc(c, n->id, nr_dirty);
	pc__inc(c, n->id, nr_dirtied);
	atomic_fetch_add_explicit(&n->dirty_pages, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->nr_dirty, 1, memory_order_relaxed);
	/* Sequentially consistent: pairs with bdi.c's retire_if_clean. */
	atomic_fetch_add(&m->nr_dirty, 1);
	pc_trace(c, PC_TR_DIRTY, p, 0);
	if (!atomic_load(&m->on_dirty_list))
		pc__bdi_mark_dirty(m);
}

void pc__account_page_cleaned(struct pc_mapping *m, struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	struct pc_node *n = page_node(c, p);

	if (!page_test_clear(p, PG_dirty))
		return;
	pc__add(c, n->id, nr_dirty, -1);
	atomic_fetch_sub_explicit(&n->dirty_pages, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&m->bdi->nr_dirty, 1, memory_order_relaxed);
	atomic_fetch_sub(&m->nr_dirty, 1);
}

void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p)
{
	PC_ASSERT(page_test(p, PG_locked));
	if (!page_test_set(p, PG_dirty)) {
		pc__lock_counted(&m->tree_lock);
		pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
		pc__unlock(&m->tree_lock);
		account_dirtied(m, p);
	}
	pc__page_sanity(m->cache, p, true);
}

/* ------------------------------------------------------------------ */
/* Writing out                                                         */

struct wb_io {
	struct pc_io_req req;
	struct pc_mapping *m;
	unsigned nr;
	size_t bytes;		/* asked for: whole pages, or a tail's */
	struct pc_page *pages[PC_MAX_IO_PAGES];
	struct iovec iov[PC_MAX_IO_PAGES];
};

/*
 * A data-integrity writeback of fewer than this many dirty pages (an
 * O_SYNC or O_DSYNC write's, a commit's) is done by its caller, who waits
 * for it at once (pc_io_req.now): no completion thread between the device
 * and it.
 */
#define WB_NOW_PAGES 16

/* One pc__writeback_range call: the open run and the unsent requests. */
/* How a staged commit makes its requests durable (wb_ctl.commit). */
enum wb_commit_how {
	WB_COMMIT_RANGE,	/* sync_file_range over their span */
	WB_COMMIT_DATASYNC,	/* fdatasync(2) of the file (fsync's pass) */
	WB_COMMIT_FSYNC,	/* fsync(2) of the file */
};

struct wb_ctl {
	struct pc_mapping *m;
	bool now;				/* requests marked now */
	bool staged;				/* now, through sfd (above) */
	enum wb_commit_how commit;		/* staged: how */
	unsigned commits, commit_errors;	/* staged: done, failed */
	int sfd;				/* staged: the buffered descriptor */
	struct wb_io *held;			/* staged: transferred, not durable */
	unsigned pending;			/* staged: submitted, not transferred */
	off_t lo, hi;				/* staged: the span of held */
	unsigned nr;				/* pages in run[] */
	unsigned nreq;				/* requests in reqs[] */
	struct pc_page *run[PC_MAX_IO_PAGES];	/* under writeback, unsent */
	struct pc_io_req *reqs[GANG + 1];	/* built, not submitted */
};

void pc__end_page_writeback(struct pc_cache *c, struct pc_page *p)
{
	bool reclaim;

	pc__page_sanity(c, p, false);
	reclaim = page_test_clear(p, PG_reclaim);
	pc_trace(c, PC_TR_WB_END, p, 0);
	pc__end_page_writeback_bit(&c->wait, p);
	/* Reclaim met it at the tail under writeback: back to the tail. */
	if (reclaim && !page_test(p, PG_dirty))
		pc__lru_rotate_reclaimable(c, p);
}

/* This process's count of requests in flight on @b (@p: a page of ours). */
static _Atomic int *wb_in_flight(struct pc_bdi *b, const struct pc_page *p)
{
	return &b->in_flight[(pc__page_lock_flags(p) & PG_OWNER_MASK) >>
			     PG_OWNER_SHIFT];
}

/*
 * The write of @nr pages, @want bytes of them (a request, or a run that
 * could not be one), ended with @res.
 */
static void wb_finish(struct pc_mapping *m, struct pc_page **pages,
		      unsigned nr, size_t want, ssize_t res)
{
	struct pc_cache *c = m->cache;
	struct pc_bdi *b = m->bdi;
	int err = res < 0 ? (int)res : (size_t)res < want ? -EIO : 0;
	int node = page_node(c, pages[0])->id;
	struct pc_page *drop_pages[PC_MAX_IO_PAGES];
	unsigned ndrop = 0;

	int32_t own = pc__io_owner(c, false);	/* 0: a private cache */
	_Atomic int *in_flight = wb_in_flight(b, pages[0]);

	PC_ASSERT(nr <= PC_MAX_IO_PAGES);
	if (err) {
		pc__errseq_set(m, err);
		pc__inc(c, node, writeback_errors);
	}
	/* Tags, and a failed page dirty again: what a reaper of a write
	 * in flight does too (pc__writeback_abandon), so io_pid stays. */
	pc__lock_counted(&m->tree_lock);
	for (unsigned i = 0; i < nr; i++) {
		struct pc_page *p = pages[i];

		pc__tree_tag_clear(&m->tree, page_index(p), PC_TAG_WRITEBACK);
		if (err) {
			page_set(p, PG_error);
			if (!page_test_set(p, PG_dirty)) {
				pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
				pc__unlock(&m->tree_lock);
				account_dirtied(m, p);
				pc__lock_counted(&m->tree_lock);
			}
		}
	}
	pc__unlock(&m->tree_lock);
	/* The counters move: a death until the ENDED marks cannot tell
	 * how far they got (the reaper breaks the cache). */
	for (unsigned i = 0; own && i < nr; i++)
		atomic_store_explicit(&pages[i]->io_pid, own | PC_IO_MOVING,
				      memory_order_release);
	/* The last write in flight: what the disk shows now is ours. */
	if (atomic_fetch_sub(&m->nr_writeback, nr) == nr && !err)
		pc__seen_refresh(m);
	atomic_fetch_sub_explicit(&b->nr_writeback, nr, memory_order_relaxed);
	for (unsigned i = 0; i < nr; i++)
		pc__add(c, page_node(c, pages[i])->id, nr_writeback, -1);
	if (!err) {
		pc__add(c, node, pgpgout, (int64_t)((want + 1023) >> 10));
		pc__add(c, node, nr_written, nr);
		atomic_store(&b->last_ok_ns, pc__now_ns());
		pc__bdi_account_written(b, want);
	} else {
		atomic_store(&b->last_err_ns, pc__now_ns());
	}
	pc__balance_dirty_wake(c, b);
	atomic_fetch_sub(in_flight, 1);
	/* Moved: what is left is each page's PG_writeback and reference
	 * (a reaper ends and gives back those still ENDED). */
	for (unsigned i = 0; own && i < nr; i++)
		atomic_store_explicit(&pages[i]->io_pid, own | PC_IO_ENDED,
				      memory_order_release);
	PC_PARK(PC_PARK_WB_ENDING);
	pc__test_wb_ending(pages[0]);
	/*
	 * From here on the mapping and the bdi may go: only the pages.  A
	 * page we hold locked that still belongs to @m keeps @m alive (its
	 * truncation would need the lock), so the use-once pages gathered
	 * locked below are dropped together, one tree-lock hold for all.
	 */
	for (unsigned i = 0; i < nr; i++) {
		struct pc_page *p = pages[i];
		/* Use-once stream pages go at once only when memory is
		 * tight; with room to spare they stay cached (inactive). */
		bool drop = !err && page_test(p, PG_dropbehind) &&
			    (c->cfg.stickiness == PC_STICKY_ALWAYS ||
			     pc__memory_tight(c));

		pc__end_page_writeback(c, p);
		/* Ended; the reference is ours alone again (a death before
		 * its put leaks it).  A new writeback of the page waits for
		 * this store (writeback_range). */
		if (own)
			atomic_store_explicit(&p->io_pid, 0,
					      memory_order_release);
		if (drop && pc__trylock_page(p)) {
			if (page_mapping(p) == m &&
			    !(atomic_load(&p->flags) &
			      (1u << PG_dirty | 1u << PG_writeback |
			       1u << PG_referenced | 1u << PG_active))) {
				drop_pages[ndrop++] = p;	/* our ref goes too */
				continue;
			}
			pc__unlock_page(&c->wait, p);
		}
		pc__put_page(c, p);
	}
	if (ndrop)
		pc__drop_pages_locked(c, m, drop_pages, ndrop);
}

static void wb_end_io(struct pc_io_req *req)
{
	struct wb_io *io = (struct wb_io *)req;

	wb_finish(io->m, io->pages, io->nr, io->bytes, req->res);
	free(io);
}

/*
 * A staged request's transfer ended (in the submitting thread: it is
 * marked now): held until wb_commit makes it durable.
 */
static void wb_stage_end_io(struct pc_io_req *req)
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
static void wb_commit(struct wb_ctl *w)
{
	struct pc_cache *c = w->m->cache;
	struct wb_io *io = w->held, *next;
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
	if (!err)
		(void)posix_fadvise(w->sfd, w->lo, w->hi - w->lo,
				    POSIX_FADV_DONTNEED);
	for (; io; io = next) {
		ssize_t res = io->req.res;

		next = (struct wb_io *)io->req.next;
		if (res >= 0 && err)
			res = err;
		wb_finish(io->m, io->pages, io->nr, io->bytes, res);
		free(io);
	}
}

void pc__writeback_abandon(struct pc_cache *c, struct pc_page *p)
{
	struct pc_mapping *m = page_mapping(p);
	struct pc_bdi *b = m->bdi;

	atomic_store(&p->io_pid, 0);

	/* The write may have reached the disk or not: dirty again. */
	pc__lock_counted(&m->tree_lock);
	pc__tree_tag_clear(&m->tree, page_index(p), PC_TAG_WRITEBACK);
	if (!page_test_set(p, PG_dirty)) {
		pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
		pc__unlock(&m->tree_lock);
		account_dirtied(m, p);
	} else {
		pc__unlock(&m->tree_lock);
	}
	atomic_fetch_sub(&m->nr_writeback, 1);
	atomic_fetch_sub_explicit(&b->nr_writeback, 1, memory_order_relaxed);
	pc__add(c, page_node(c, p)->id, nr_writeback, -1);
	/* Its requests in flight: the reaper zeroes its count (bdi.c). */
	pc__end_page_writeback(c, p);
	pc__put_page(c, p);	/* the request's reference */
}

/* Send the requests built so far. */
static void wb_submit(struct wb_ctl *w)
{
	struct pc_cache *c = w->m->cache;
	unsigned n = w->nreq;

	if (!n)
		return;
	w->nreq = 0;
	pc__add(c, 0, writeback_requests, n);
	if (w->now)	/* the caller's own: no completion thread */
		pc__add(c, 0, writeback_requests_now, n);
	if (w->staged) {
		pc__add(c, 0, writeback_requests_staged, n);
		w->pending += n;
	}
	pc__io_submit(c, w->reqs, n);
	/* Marked now: done in this thread, end_io included (io.h). */
	PC_ASSERT(w->pending == 0);
}

/*
 * Queue one request for @n pages under writeback, in w->reqs: whole pages
 * through pc__bk(m)->fd, or (@tail) the first @tail bytes of one page, the file's
 * last, through the buffered descriptor (backing.c), so that the disk
 * never holds more of the file than its size.
 */
static void wb_queue(struct wb_ctl *w, struct pc_page **pages, unsigned n,
		     size_t tail)
{
	struct pc_mapping *m = w->m;
	struct pc_cache *c = m->cache;
	int fd = w->staged ? w->sfd :
		 tail ? pc__backing_tail_fd(m, false) : pc__bk(m)->fd;
	size_t bytes = tail ? tail : (size_t)n << PC_PAGE_SHIFT;
	unsigned niov = 0, segs = 0;
	struct wb_io *io;

	/* Counted in this process's share: a death before the request is
	 * marked is undone exactly by the reaper (pc__bdi_reap). */
	atomic_fetch_add(wb_in_flight(m->bdi, pages[0]), 1);
	PC_PARK(PC_PARK_WB_QUEUED);
	io = fd >= 0 ? malloc(sizeof(*io)) : NULL;
	if (!io) {	/* no memory, no descriptor: they fail, stay dirty */
		wb_finish(m, pages, n, bytes, fd < 0 ? fd : -ENOMEM);
		return;
	}
	io->m = m;
	io->nr = n;
	io->bytes = bytes;
	for (unsigned k = 0; k < n; k++) {
		char *d = page_data(c, pages[k]);
		struct iovec *last = niov ? &io->iov[niov - 1] : NULL;

		atomic_store_explicit(&pages[k]->io_pid, pc__io_owner(c, k == 0),
				      memory_order_relaxed);
		io->pages[k] = pages[k];
		/* Frames side by side share an iovec; a segment of the
		 * device's ends with them or with a huge page. */
		if (last && (char *)last->iov_base + last->iov_len == d) {
			last->iov_len += PC_PAGE_SIZE;
			if (!((uintptr_t)d & (WB_HUGE_BYTES - 1)))
				segs++;
		} else {
			io->iov[niov++] = (struct iovec){
				d, tail ? tail : PC_PAGE_SIZE };
			segs++;
		}
	}
	pc__add(c, 0, writeback_segments, segs);
	io->req = (struct pc_io_req){
		.fd = fd,
		.op = PC_IO_WRITE,
		.iov = io->iov,
		.iovcnt = (int)niov,
		.off = (off_t)(page_index(pages[0]) << PC_PAGE_SHIFT),
		/* A buffered descriptor: its copy dropped (staged: at commit). */
		.dontneed = !w->staged && (tail || !m->direct),
		.now = w->now,
		.end_io = w->staged ? wb_stage_end_io : wb_end_io,
		.priv = w,
	};
	w->reqs[w->nreq++] = &io->req;
	if (w->nreq == sizeof(w->reqs) / sizeof(w->reqs[0]))
		wb_submit(w);
}

/* Close the open run into one request, queued in w->reqs. */
static void wb_close_run(struct wb_ctl *w)
{
	unsigned n = w->nr;

	if (!n)
		return;
	w->nr = 0;
	wb_queue(w, w->run, n, 0);
}

/* Before sleeping: nothing under writeback may wait on us. */
static void wb_flush(struct wb_ctl *w)
{
	wb_close_run(w);
	wb_submit(w);
	wb_commit(w);
}

/*
 * A page just put under writeback, @size the file's size read under its
 * lock, joins the run (or starts the next) - unless it is the last page
 * and the size ends inside it: that one goes alone, its bytes exactly.
 */
static void wb_add(struct wb_ctl *w, struct pc_page *p, int64_t size)
{
	uint64_t start = page_index(p) << PC_PAGE_SHIFT;

	if (w->nr && (w->nr == PC_MAX_IO_PAGES ||
		      page_index(p) != page_index(w->run[w->nr - 1]) + 1))
		wb_close_run(w);
	if ((uint64_t)size < start + PC_PAGE_SIZE) {
		wb_close_run(w);
		wb_queue(w, &p, 1, (size_t)((uint64_t)size - start));
		return;
	}
	w->run[w->nr++] = p;
}

/*
 * The file's end on the disk moved out once, before a pass's O_DIRECT
 * writes reach past it (the top of the file).  The pages tagged
 * @tag in [@start, @end] past the disk's end, at most @limit of them (a
 * background pass's budget; 0: all), in runs of consecutive indices
 * (WB_EXTENTS at most): each run is allocated with fallocate(2), mode 0,
 * from the disk's end (m->seen.size) to the run's end or the file's size,
 * whichever is less - so the disk is never longer than a size the file
 * has, and the gaps between runs stay holes.  A file system without
 * fallocate (EOPNOTSUPP) is extended by ftruncate(2) to the file's size
 * instead, only when that grows it.  The pass's writes then land within
 * the file's size (into unwritten extents on ext4), so none of them
 * extends it: ext4 takes i_rwsem shared for them and runs them at once,
 * where each extending write held it exclusive and waited for its own
 * completion, so a new file's requests went to the device one by one.
 *
 * Nothing is done for a pass of at most one request past the disk's end
 * (nothing to run beside it), nor when every run lies within it.  Under
 * disk_size_lock, with the size read under it: a truncation that cut
 * the disk before we read its old size checks the disk again under that
 * lock once the cut is done (inode.c, truncate_locked) and cuts it once
 * more.  ext4's fallocate waits for the file's O_DIRECT writes in
 * flight: ours of this pass are not submitted yet.  Counters:
 * writeback_extends (fallocate calls), writeback_extend_truncates.
 */
#define WB_EXTENTS 8

_Atomic bool pc__test_no_fallocate;
pc__test_wb_ending_fn *_Atomic pc__test_wb_ending_hook;	/* tests: internal.h */

static void wb_extend(struct pc_mapping *m, uint64_t start, uint64_t end,
		      int tag, uint64_t limit)
{
	struct pc_cache *c = m->cache;
	struct { uint64_t lo, hi; } ext[WB_EXTENTS];	/* pages [lo, hi) */
	unsigned next = 0;
	uint64_t index, pages = 0;
	void *items[GANG];
	uint64_t idx[GANG];
	int64_t disk, size;
	int fd = pc__bk(m)->fd;

	pc__lock(&m->disk_size_lock);
	disk = m->seen.size;
	pc__unlock(&m->disk_size_lock);
	if (atomic_load(&m->size) <= disk)
		return;
	index = pc_max(start, (uint64_t)disk >> PC_PAGE_SHIFT);
	while (index <= end && (!limit || pages < limit)) {
		unsigned n;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, tag, items, idx, GANG);
		pc__tree_read_unlock(&m->tree);
		for (unsigned k = 0; k < n; k++) {
			if (next && ext[next - 1].hi == idx[k]) {
				ext[next - 1].hi++;
			} else if (next == WB_EXTENTS) {
				break;
			} else {
				ext[next].lo = idx[k];
				ext[next++].hi = idx[k] + 1;
			}
			pages++;
		}
		if (n < GANG || (next == WB_EXTENTS &&
				 ext[next - 1].hi != idx[n - 1] + 1))
			break;
		index = idx[n - 1] + 1;
		if (index == 0)
			break;	/* wrapped past the last index */
	}
	if (pages <= PC_MAX_IO_PAGES && next <= 1)
		return;
	pc__lock(&m->disk_size_lock);
	disk = m->seen.size;
	size = atomic_load(&m->size);
	for (unsigned i = 0; i < next; i++) {
		int64_t lo = pc_max((int64_t)(ext[i].lo << PC_PAGE_SHIFT), disk);
		int64_t hi = pc_min((int64_t)(ext[i].hi << PC_PAGE_SHIFT), size);
		struct stat st;

		if (hi <= lo)
			continue;
		if (atomic_load_explicit(&pc__test_no_fallocate,
					 memory_order_relaxed)) {
			errno = EOPNOTSUPP;
		} else if (fallocate(fd, 0, lo, hi - lo) == 0) {
			pc__inc(c, 0, writeback_extends);
			continue;
		}
		/* Not supported: the size alone, only ever up; other errors
		 * (ENOSPC) are the writes' to meet and report. */
		if (errno == EOPNOTSUPP && fstat(fd, &st) == 0 &&
		    st.st_size < size && ftruncate(fd, size) == 0)
			pc__inc(c, 0, writeback_extend_truncates);
		break;
	}
	pc__seen_refresh_locked(m);	/* our change: not another's */
	pc__unlock(&m->disk_size_lock);
}

/*
 * pc__writeback_range, its staged commits made @how; *@synced (if not
 * NULL): the pass was staged and its last commit synced the file (no
 * commit failed), so everything the pass wrote is durable.
 */
static int writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			   bool sync, long *budget, enum wb_commit_how how,
			   bool *synced)
{
	struct pc_cache *c = m->cache;
	struct pc_bdi *b = m->bdi;
	int tag = sync ? PC_TAG_TOWRITE : PC_TAG_DIRTY;
	struct pc_tctx *t = pc__held_ctx(c);	/* shared: the gang's refs */
	struct wb_ctl w;
	void *items[GANG];
	uint64_t idx[GANG];
	uint64_t index = start;
	int written = 0;

	_Static_assert(GANG <= PC_HELD_WB, "a gang's records");
	/* A shared cache's mapping this process cannot write: the home
	 * holds a descriptor of every file written (share.c) and does it. */
	if (m->cache->shared && (atomic_load(&pc__bk(m)->fd) < 0 ||
				 pc__bk(m)->fd_rdonly))
		return 0;
	if (synced)
		*synced = false;
	w.m = m;
	w.now = w.staged = false;
	w.commit = how;
	w.commits = w.commit_errors = 0;
	w.sfd = -1;
	w.held = NULL;
	w.pending = 0;
	w.lo = w.hi = 0;
	w.nr = w.nreq = 0;
	/*
	 * The tail's descriptor now, while a failure to get one may free
	 * some; only with pages to write (it is open for writing).
	 */
	if (m->direct && (atomic_load(&m->size) & (PC_PAGE_SIZE - 1)) &&
	    atomic_load(&m->nr_dirty))
		(void)pc__backing_tail_fd(m, true);
	if (sync) {
		unsigned tagged;

		pc__lock_counted(&m->tree_lock);
		tagged = pc__tree_tag_range(&m->tree, start, end, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, UINT32_MAX);
		pc__unlock(&m->tree_lock);
		/* Few pages to write (whatever the range: an fsync of a whole
		 * file with three dirty pages): the caller does them, staged
		 * where the mapping has a buffered descriptor. */
		w.now = tagged < WB_NOW_PAGES;
		if (w.now && tagged) {
			w.sfd = pc__backing_tail_fd(m, true);
			w.staged = w.sfd >= 0;
		}
	}
	/* Requests in flight together, O_DIRECT: none may extend the file. */
	if (m->direct && !w.now && atomic_load(&m->nr_dirty))
		wb_extend(m, start, end, tag,
			  budget ? (uint64_t)pc_max(*budget, 1l) : 0);
	while (index <= end) {
		struct pc_page *pages[GANG];
		int64_t size[GANG];	/* each page's, read under its lock */
		int held[GANG];		/* each page's slot in t->held[] */
		unsigned n, np = 0;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, tag, items, idx, GANG);
		pc__tree_read_unlock(&m->tree);
		if (!n)
			break;
		/* Background: a mapping no one holds but us is being dropped. */
		if (!sync && atomic_load(&m->refs) <= 1)
			break;
		index = idx[n - 1] + 1;
		for (unsigned k = 0; k < n; k++) {
			struct pc_page *p = items[k];

			if (!page_get_unless_zero(p))
				continue;
			/* Shared: ours recorded until the io_pid mark. */
			pc__held_set(t, PC_HELD_WB_AT + (int)k, c, p, 0);
			if (page_mapping(p) != m || page_index(p) != idx[k]) {
				pc__held_clear(t, PC_HELD_WB_AT + (int)k);
				pc__put_page(c, p);
				continue;
			}
			if (!pc__trylock_page(p)) {
				if (!sync) {
					pc__held_clear(t, PC_HELD_WB_AT + (int)k);
					pc__put_page(c, p);
					continue;
				}
				wb_flush(&w);
				pc__lock_page(&c->wait, p);
			}
			if (page_mapping(p) != m)
				goto skip;
			if (page_test(p, PG_writeback)) {
				if (!sync)
					goto skip;
				wb_flush(&w);
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
			}
			/* A completion (or its reaper) between ending the last
			 * writeback and clearing its mark: PG_writeback is not
			 * set again before it is done (share.c's reaper tells
			 * that writeback's end by the mark). */
			if (atomic_load_explicit(&p->io_pid,
						 memory_order_acquire)) {
				if (!sync)
					goto skip;
				wb_flush(&w);
				while (atomic_load_explicit(&p->io_pid,
							    memory_order_acquire))
					sched_yield();
			}
			if (!page_test(p, PG_dirty)) {
				if (sync) {
					pc__lock_counted(&m->tree_lock);
					pc__tree_tag_clear(&m->tree, idx[k], PC_TAG_TOWRITE);
					pc__unlock(&m->tree_lock);
				}
				goto skip;
			}
			/* Wholly past the size: a truncation is removing it. */
			size[np] = atomic_load(&m->size);
			if ((int64_t)(idx[k] << PC_PAGE_SHIFT) >= size[np])
				goto skip;
			held[np] = PC_HELD_WB_AT + (int)k;
			pages[np++] = p;
			continue;
skip:
			pc__unlock_page(&c->wait, p);
			pc__held_clear(t, PC_HELD_WB_AT + (int)k);
			pc__put_page(c, p);
		}
		if (np) {
			pc__lock_counted(&m->tree_lock);
			for (unsigned k = 0; k < np; k++) {
				uint64_t i = page_index(pages[k]);

				pc__tree_tag_clear(&m->tree, i, PC_TAG_DIRTY);
				pc__tree_tag_clear(&m->tree, i, PC_TAG_TOWRITE);
				pc__tree_tag_set(&m->tree, i, PC_TAG_WRITEBACK);
			}
			pc__unlock(&m->tree_lock);
			PC_PARK(PC_PARK_WB_TAGGED);
			for (unsigned k = 0; k < np; k++) {
				struct pc_page *p = pages[k];

				page_set(p, PG_writeback);
				pc__account_page_cleaned(m, p);
				atomic_fetch_add(&m->nr_writeback, 1);
				atomic_fetch_add_explicit(&b->nr_writeback, 1,
							  memory_order_relaxed);
				pc__inc(c, page_node(c, p)->id, nr_writeback);
				pc_trace(c, PC_TR_WB_START, p, 0);
				pc__page_sanity(c, p, true);
				/* A write in flight from here on, for a dead
				 * process's reaper (share.c); wb_queue marks
				 * the request's first page.  Our reference is
				 * the write's: the record goes first. */
				pc__held_clear(t, held[k]);
				atomic_store_explicit(&p->io_pid,
						      pc__io_owner(c, false),
						      memory_order_release);
				if (k == 0)
					PC_PARK(PC_PARK_WB_MARKED);
				pc__unlock_page(&c->wait, p);
				wb_add(&w, p, size[k]);	/* our ref goes to the I/O */
			}
			wb_submit(&w);	/* the runs this gang closed */
			written += (int)np;
			if (budget && (*budget -= np) <= 0)
				break;
		}
		if (index == 0)
			break;	/* wrapped past the last index */
	}
	wb_flush(&w);
	if (synced)
		*synced = w.staged && how != WB_COMMIT_RANGE && w.commits &&
			  !w.commit_errors;
	return written;
}

int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget)
{
	return writeback_range(m, start, end, sync, budget, WB_COMMIT_RANGE,
			       NULL);
}

int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end)
{
	struct pc_cache *c = m->cache;
	void *items[GANG];
	uint64_t idx[GANG];
	uint64_t index = start;
	int waited = 0;

	while (index <= end) {
		unsigned n;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, PC_TAG_WRITEBACK,
				      items, idx, GANG);
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

	writeback_range(m, start, end, true, NULL,
			datasync ? WB_COMMIT_DATASYNC : WB_COMMIT_FSYNC, &synced);
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

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ll),
			       (long)(ns % 1000000000ll) };

	nanosleep(&ts, NULL);
}

uint64_t pc__writeback_mapping_retry(struct pc_mapping *m)
{
	uint64_t left = 0;

	for (int try = 0; try < FINAL_TRIES; try++) {
		if (try)	/* a moment for a device that hiccupped */
			sleep_ns((10 * NS_PER_MS) << try);
		pc__writeback_range(m, 0, UINT64_MAX, true, NULL);
		pc__wait_writeback_range(m, 0, UINT64_MAX);
		left = atomic_load(&m->nr_dirty);
		if (!left)
			break;
	}
	return left;	/* kept dirty: lost only if the caller drops them */
}

/* ------------------------------------------------------------------ */
/* A dead process's page lock and write completion (procs.c's reap: the
 * tags and PG_writeback it left are writeback's to put right).         */

/*
 * A page lock a dead process held outside I/O (page.h: its owner bits): it may
 * have been copying a write into the page, so an uptodate page is dirty
 * from now on (what readers may have seen of it reaches the disk); one not
 * uptodate is read by the next reader (filemap.c).  The dead process's
 * reference, if it had one, stays: the page is only never freed.
 *
 * It may also have been gathering the page for writeback (writeback.c):
 * its tags moved (DIRTY off, WRITEBACK on) before PG_writeback was set -
 * put back, so the page is written again and nothing waits for it - or
 * PG_writeback set and the counters moving, not yet marked as its write
 * in flight (io_pid): how far the counters got cannot be known, so the
 * cache is broken (each process writes back what it can and goes on
 * through the kernel).  Once marked, the page is a write in flight
 * (procs.c, reap_pages).
 */
void pc__lock_abandon(struct pc_cache *c, struct pc_page *p)
{
	struct pc_mapping *m = page_mapping(p);

	if (m && page_test(p, PG_writeback) && !atomic_load(&p->io_pid)) {
		atomic_store(c->broken, 1);
	} else if (m) {
		/* Locked, so still in its mapping's tree at its index. */
		pc__lock_counted(&m->tree_lock);
		if (page_test(p, PG_dirty))
			pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
		if (!page_test(p, PG_writeback))
			pc__tree_tag_clear(&m->tree, page_index(p),
					   PC_TAG_WRITEBACK);
		pc__unlock(&m->tree_lock);
		if (page_test(p, PG_uptodate))
			pc__set_page_dirty(m, p);
	}
	pc__unlock_page(&c->wait, p);
}

/*
 * A dead process's write completion (writeback.c: wb_finish) left @p
 * marked: PC_IO_ENDED, its counters moved, so only its PG_writeback (if
 * still set: no new writeback sets it while the mark stands) and the
 * request's reference are left; PC_IO_MOVING, the counters half moved:
 * the cache is broken, and the page's writeback ended all the same, so
 * no one waits for it.
 */
void pc__write_end_abandon(struct pc_cache *c, struct pc_page *p,
			   int32_t mark)
{
	if (mark & PC_IO_MOVING)
		atomic_store(c->broken, 1);
	if (page_test(p, PG_writeback))
		pc__end_page_writeback(c, p);
	atomic_store(&p->io_pid, 0);
	pc__put_page(c, p);
}
