/*
 * writeback_io.c - a writeback pass's requests: its pages gathered into
 * runs, the runs made vectored requests and submitted, and their
 * completion (the kernel's iomap ioends and folio_end_writeback).
 * writeback.c decides which pages go out and puts them under writeback;
 * sync.c commits the staged requests of a data-integrity pass; writeback.h
 * holds the pass's control block (struct wb_ctl) the three share.
 *
 * Runs: each page joins the open run (struct wb_ctl) if it follows the
 * run's last page; a run is closed into one vectored request when it
 * reaches 1 MiB (PC_MAX_IO_PAGES) or a page does not follow, so runs
 * span gangs and a contiguous file goes out in 1 MiB requests; the
 * requests a gang closed are submitted together at its end, without
 * waiting for them, so several are in flight (as many as the backend
 * takes).  Frames side by side share one iovec; writeback_segments counts
 * the runs of frames each request has, a huge page's end ending one: what
 * the device sees as segments (a virtio disk without indirect descriptors
 * takes 254 a request and as many a ring, so a request of scattered pages
 * is split and runs alone; reclaim hands frames out in order for this,
 * vmscan.c).  The file's last page, when the size ends inside it, goes
 * alone, its bytes up to the size through the buffered descriptor
 * (backing.c).  Before a writer sleeps, the open run is closed and
 * everything is submitted and committed (pc__wb_flush): nothing under
 * writeback may wait on it.
 *
 * Completion (pc__wb_finish) keeps failed pages dirty (PG_error, errseq
 * set: nothing written and lost is ever treated as clean), clears
 * WRITEBACK, updates the bdi (bandwidth, last success or failure), records
 * the file's stat when it was the mapping's last write in flight
 * (m->seen: close-to-open coherence, coherence.c), wakes the writers the
 * throttle paused when dirty is back under freerun
 * (pc__balance_dirty_wake, throttle.c), and only then ends PG_writeback
 * (which may let a truncation, and the mapping's teardown, proceed):
 * neither the mapping nor the bdi is touched after that.  Pages marked
 * PG_reclaim while under writeback go to the inactive tail; use-once
 * stream pages (PG_dropbehind) are dropped at once when memory is tight
 * or with cache.stickiness=always (readahead.c has the policy).
 *
 * Shared caches: the requests in flight are counted per process in each
 * bdi (b->in_flight[its page-lock owner id], summed on read), so a death
 * anywhere in wb_queue is undone exactly: the reaper zeroes the dead
 * process's count (bdi.c).  A completion keeps each page's io_pid mark,
 * PC_IO_MOVING while the counters move (a death there: the reaper
 * breaks the cache, and still ends PG_writeback), then PC_IO_ENDED until
 * that page's PG_writeback has ended (the reaper ends it and gives the
 * reference back), then 0 (writeback.c: a gang waits for that 0).
 *
 * Locks: the tree lock (tags) at completion, and the page lock of a
 * use-once page dropped (trylock).  Nothing is held across submission;
 * the counters are atomic.
 */
#include <stdlib.h>

#include "internal.h"
#include "dirty.h"
#include "vmscan.h"
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "readahead.h"
#include "tracepoint.h"
#include "tree.h"
#include "writeback.h"

/* The data of a huge page (node.h: a frame step), physically contiguous. */
#define WB_HUGE_BYTES ((uintptr_t)PC_FRAME_STEP << PC_PAGE_SHIFT)

pc__test_wb_ending_fn *_Atomic pc__test_wb_ending_hook;	/* tests: dirty.h */

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
void pc__wb_finish(struct pc_mapping *m, struct pc_page **pages,
		   unsigned nr, size_t want, ssize_t res, bool owe)
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
				pc__account_page_dirtied(m, p);
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
	/* The last write in flight: what the disk shows now is ours - an
	 * fsync's, recorded at the file's close (coherence.c). */
	if (atomic_fetch_sub(&m->nr_writeback, nr) == nr && !err) {
		if (owe)
			pc__seen_owe(m);
		else
			pc__seen_refresh(m);
	}
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
		 * this store (writeback.c). */
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

	pc__wb_finish(io->m, io->pages, io->nr, io->bytes, req->res, false);
	free(io);
}

/* Send the requests built so far. */
void pc__wb_submit(struct wb_ctl *w)
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
		pc__wb_finish(m, pages, n, bytes, fd < 0 ? fd : -ENOMEM, false);
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
		/* A buffered descriptor: its copy dropped (staged: by the
		 * kernel once written back, or at commit; sync.c). */
		.dontneed = !w->staged && (tail || !m->direct),
		.rwf = w->staged && !atomic_load_explicit(&m->bdi->no_dontcache,
							   memory_order_relaxed)
		       ? RWF_DONTCACHE : 0,
		.now = w->now,
		.end_io = w->staged ? pc__wb_stage_end_io : wb_end_io,
		.priv = w,
	};
	w->reqs[w->nreq++] = &io->req;
	if (w->nreq == sizeof(w->reqs) / sizeof(w->reqs[0]))
		pc__wb_submit(w);
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
void pc__wb_flush(struct wb_ctl *w)
{
	wb_close_run(w);
	pc__wb_submit(w);
	pc__wb_commit(w);
}

/*
 * A page just put under writeback, @size the file's size read under its
 * lock, joins the run (or starts the next) - unless it is the last page
 * and the size ends inside it: that one goes alone, its bytes exactly.
 */
void pc__wb_add(struct wb_ctl *w, struct pc_page *p, int64_t size)
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
