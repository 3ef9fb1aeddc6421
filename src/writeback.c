/*
 * writeback.c - writing pages out: which pages a pass takes, putting them
 * under writeback, and what a dead writer leaves.  Pages are dirtied and
 * counted in throttle.c; writeback_io.c makes the pass's pages requests
 * and completes them; a data-integrity pass's commit and fsync are
 * sync.c's.
 *
 * Writing out (pc__writeback_range), one gang of up to 64 pages at a time:
 *   - find pages tagged DIRTY (background) or TOWRITE (data integrity:
 *     the DIRTY tags of the range are first copied to TOWRITE, so pages
 *     dirtied later do not make an fsync run forever, sync.c);
 *   - lock them (trylock in the background; sleeping for fsync), skip
 *     those under writeback (fsync waits for them first);
 *   - one tree-lock hold for the gang: DIRTY, TOWRITE off, WRITEBACK on;
 *   - PG_dirty off, PG_writeback on, counters moved, the page marked as
 *     this process's write in flight (io_pid: a dead writer's reaper
 *     makes it dirty again, procs.c), pages unlocked;
 *   - each page joins the open run, closed into one vectored request at
 *     1 MiB or where the next page does not follow; the requests a gang
 *     closed are submitted together at its end, without waiting for them
 *     (writeback_io.c);
 *   - before the first gang, a pass of O_DIRECT requests in flight
 *     together (not marked now) whose pages reach past the file's end on
 *     the disk (m->seen.size) has that part allocated once, so that no
 *     request extends the file (backing.c, pc__backing_extend);
 *   - the file's size is read under each page's lock: the last page, when
 *     the size ends inside it, goes alone and only its bytes up to the
 *     size are written, with a buffered pwrite on the mapping's buffered
 *     descriptor (backing.c; the kernel keeps it coherent with the O_DIRECT
 *     one): the disk is never longer than a size the file had, even if
 *     the process dies before the next fsync.  A dirty page wholly past
 *     the size is being truncated: it is left to the truncation.
 *   - a data-integrity pass that finds fewer than WB_NOW_PAGES dirty
 *     pages to write (an O_SYNC or O_DSYNC write's, a database's commit
 *     of a few pages) marks its requests now: its caller does them
 *     itself, staged through the buffered descriptor and made durable
 *     together by one commit, before they complete (sync.c);
 *   - a writer of pages must never sleep while it holds pages under
 *     writeback that it has not submitted (whoever waits for them would
 *     wait for it): before every sleeping lock or writeback wait the run
 *     is closed and everything is submitted and staged requests are
 *     committed (pc__wb_flush, the kernel's plug flush at schedule);
 *   - a background pass stops at once when no one but its caller holds
 *     the mapping any more (an unlinked file closed for the last time: its
 *     pages are about to be dropped unwritten).
 * Shared caches: a page's io_pid mark says whose write in flight it is
 * from its gang's tagging on; its completion keeps the mark until the
 * page's PG_writeback has ended (writeback_io.c), and a gang sets
 * PG_writeback only on a page with no mark (it waits out a completion
 * between its end and its clear), so the reaper never takes another's
 * writeback for the dead one's.  A gang's references are recorded in its
 * thread's context (tctx.c) from the get until the page's mark, sleeps
 * for the lock included.  A reaper that finds a dead process's write in
 * flight makes its page dirty again (pc__writeback_abandon).
 *
 * Errors: a failed write sets the mapping's errseq (errseq.c), which
 * reports it once to every open file, at its fsync or close.  Failed pages
 * stay dirty and are written again by the next fsync, or by the flusher
 * after its back-off (bdi.c); pc__writeback_mapping_retry bounds the
 * tries of a caller that waits for all of a mapping (destroy,
 * pc_cache_sync), so a dead device cannot hang destroy.  Pages still
 * dirty after it stay (destroy alone drops them, counted as
 * writeback_lost and reported).
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
#include "dirty.h"
#include "tctx.h"
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "readahead.h"
#include "tracepoint.h"
#include "tree.h"
#include "writeback.h"

#define NS_PER_MS 1000000ll
#define FINAL_TRIES 3			/* pc__writeback_mapping_retry */

/* ------------------------------------------------------------------ */
/* A dead writer's write in flight                                     */

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
		pc__account_page_dirtied(m, p);
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

/* ------------------------------------------------------------------ */
/* Writing out                                                         */

/*
 * pc__writeback_range, its staged commits made @how; *@synced (if not
 * NULL): the pass was staged and its last commit synced the file (no
 * commit failed), so everything the pass wrote is durable.
 */
int pc__writeback_pass(struct pc_mapping *m, uint64_t start, uint64_t end,
		       bool sync, long *budget, enum wb_commit_how how,
		       bool *synced)
{
	struct pc_cache *c = m->cache;
	struct pc_bdi *b = m->bdi;
	int tag = sync ? PC_TAG_TOWRITE : PC_TAG_DIRTY;
	struct pc_tctx *t = pc__held_ctx(c);	/* shared: the gang's refs */
	struct wb_ctl w;
	void *items[WB_GANG];
	uint64_t idx[WB_GANG];
	uint64_t index = start;
	int written = 0;

	_Static_assert(WB_GANG <= PC_HELD_N(WB), "a gang's records");
	/* A shared cache's mapping this process cannot write: the home
	 * holds a descriptor of every file written (home.c) and does it. */
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
	if (sync)
		pc__wb_sync_start(&w, start, end);
	/* Requests in flight together, O_DIRECT: none may extend the file. */
	if (m->direct && !w.now && atomic_load(&m->nr_dirty))
		pc__backing_extend(m, start, end, tag,
				   budget ? (uint64_t)pc_max(*budget, 1l) : 0);
	while (index <= end) {
		struct pc_page *pages[WB_GANG];
		int64_t size[WB_GANG];	/* each page's, read under its lock */
		int held[WB_GANG];	/* each page's slot in t->held[] */
		unsigned n, np = 0;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, tag, items, idx,
				      WB_GANG);
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
				pc__wb_flush(&w);
				pc__lock_page(&c->wait, p);
			}
			if (page_mapping(p) != m)
				goto skip;
			if (page_test(p, PG_writeback)) {
				if (!sync)
					goto skip;
				pc__wb_flush(&w);
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
			}
			/* A completion (or its reaper) between ending the last
			 * writeback and clearing its mark: PG_writeback is not
			 * set again before it is done (procs.c's reaper tells
			 * that writeback's end by the mark). */
			if (atomic_load_explicit(&p->io_pid,
						 memory_order_acquire)) {
				if (!sync)
					goto skip;
				pc__wb_flush(&w);
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
				 * process's reaper (procs.c); wb_queue marks
				 * the request's first page.  Our reference is
				 * the write's: the record goes first. */
				pc__held_clear(t, held[k]);
				atomic_store_explicit(&p->io_pid,
						      pc__io_owner(c, false),
						      memory_order_release);
				if (k == 0)
					PC_PARK(PC_PARK_WB_MARKED);
				pc__unlock_page(&c->wait, p);
				pc__wb_add(&w, p, size[k]);	/* our ref goes to the I/O */
			}
			pc__wb_submit(&w);	/* the runs this gang closed */
			written += (int)np;
			if (budget && (*budget -= np) <= 0)
				break;
		}
		if (index == 0)
			break;	/* wrapped past the last index */
	}
	pc__wb_flush(&w);
	if (synced)
		*synced = w.staged && how != WB_COMMIT_RANGE && w.commits &&
			  !w.commit_errors;
	return written;
}

int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget)
{
	return pc__writeback_pass(m, start, end, sync, budget, WB_COMMIT_RANGE,
				  NULL);
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
