/*
 * readpage.c - reading pages from the device: the pages of a readahead
 * window, or the one page a reader or writer waits for, filled from the
 * mapping's backing file.
 *
 *   pc__read_pages(m, pages[nr], now)       locked, not uptodate, indices
 *     │                                     consecutive; one reference each
 *     ├─ find_data: where the data is (SEEK_DATA / SEEK_HOLE; the last
 *     │   data extent found is remembered in m->data_extent)
 *     ├─ a hole, or past the disk's end of file: zero-filled here, no I/O
 *     │   (pgpgin_holes, KiB like pgpgin)
 *     └─ data: vectored requests of up to 1 MiB (PC_MAX_IO_PAGES) to the
 *         backend; with @now the request holding pages[0] is cut at
 *         READ_NOW_PAGES (64 KiB) and done by this thread (pc_io_req.now:
 *         no completion thread between the device and the reader, and no
 *         queueing behind its own readahead); the rest go to the queue.
 *
 *   read_end_io (completion)   per page: data (a short read zero-filled),
 *                              PG_uptodate or PG_error, then the I/O's
 *                              reference, then the page lock; pgpgin, and
 *                              the device's read bandwidth
 *                              (pc__ra_account_read)
 *
 * pc__read_page_sync reads one page the same way and waits: the page
 * stays locked and keeps its reference (its caller holds both), and a
 * read_wait on the caller's stack is signalled instead.
 *
 * Shared caches: a page is marked as its reader's read in flight (io_pid)
 * from when readahead makes it (readahead.c; a sync reader's caller marks
 * it too) until its reference goes back - by read_end_io, or here when a
 * page is zero-filled or its request could not be made - so a reader that
 * dies before its request went out is reaped like one whose request was
 * in flight (procs.c: the page unlocked, the reference given back).
 *
 * Locks: the pages come locked (the page lock is what makes a new page
 * "I/O in flight" to readers, filemap.c); read_wait.lock only pairs the
 * completion with the sync reader.  No other lock is taken here.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "filemap.h"
#include "node.h"
#include "io.h"
#include "pagewait.h"
#include "readahead.h"

struct read_wait {
	struct pc_lock lock;
	pthread_cond_t cond;
	bool done;
};

/*
 * The request holding a page that a reader needs now: at most this many
 * pages (64 KiB), done by the reader itself (pc_io_req.now); the rest of
 * its window is read behind it.
 */
#define READ_NOW_PAGES 16

struct page_io {
	struct pc_io_req req;
	struct pc_cache *c;
	struct pc_mapping *m;
	struct read_wait *wait;	/* sync read: signal, leave the page locked */
	uint64_t t0;		/* submitted (ns): read bandwidth */
	unsigned nr;
	struct iovec *iov;	/* [nr], after pages[] */
	struct pc_page *pages[];	/* [nr] */
};

static void read_wait_done(struct read_wait *w)
{
	pc__lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->cond);
	pc__unlock(&w->lock);
}

static void read_end_io(struct pc_io_req *req)
{
	struct page_io *io = (struct page_io *)req;
	struct pc_cache *c = io->c;
	ssize_t res = req->res;
	int node = page_node(c, io->pages[0])->id;

	if (res > 0) {
		pc__add(c, node, pgpgin, (res + 1023) / 1024);
		pc__ra_account_read(io->m, (uint64_t)res, pc__now_ns() - io->t0);
	}
	/*
	 * Page by page: data, flag, then - unless a sync reader waits - the
	 * I/O's reference before the lock (which keeps the page in its
	 * mapping, so this is never the last): a reader that sees the page
	 * uptodate finds it unlocked, or about to be, with the count it
	 * expects.
	 */
	for (unsigned i = 0; i < io->nr; i++) {
		struct pc_page *p = io->pages[i];

		atomic_store_explicit(&p->io_pid, 0, memory_order_relaxed);
		if (res < 0) {
			page_set(p, PG_error);
		} else {
			ssize_t got = res - (ssize_t)i * PC_PAGE_SIZE;

			got = got < 0 ? 0 : got > PC_PAGE_SIZE ? PC_PAGE_SIZE : got;
			if (got < PC_PAGE_SIZE)
				memset((char *)page_data(c, p) + got, 0,
				       (size_t)(PC_PAGE_SIZE - got));
			page_clear(p, PG_error);
			page_set(p, PG_uptodate);
		}
		if (!io->wait) {
			pc__put_page(c, p);
			pc__unlock_page(&c->wait, p);
		}
	}
	if (io->wait)
		read_wait_done(io->wait);
	free(io);
}

void pc__read_abandon(struct pc_cache *c, struct pc_page *p)
{
	/* Not uptodate: a waiter that finds it unlocked reads it itself
	 * (filemap.c).  The reference is the request's, or the dead sync
	 * reader's own. */
	atomic_store(&p->io_pid, 0);
	pc__put_page(c, p);
	pc__unlock_page(&c->wait, p);
}

static void zero_pages(struct pc_cache *c, struct pc_page **pages, unsigned nr,
		       bool unlock)
{
	for (unsigned i = 0; i < nr; i++) {
		memset(page_data(c, pages[i]), 0, PC_PAGE_SIZE);
		page_set(pages[i], PG_uptodate);
		if (unlock) {	/* as read_end_io: the reference first */
			atomic_store_explicit(&pages[i]->io_pid, 0,
					      memory_order_relaxed);
			pc__put_page(c, pages[i]);
			pc__unlock_page(&c->wait, pages[i]);
		}
	}
	if (nr)	/* KiB, as pgpgin */
		pc__add(c, page_node(c, pages[0])->id, pgpgin_holes,
			(int64_t)nr * (PC_PAGE_SIZE / 1024));
}

static struct page_io *read_io(struct pc_mapping *m, struct pc_page **pages,
			       unsigned nr, struct read_wait *wait)
{
	struct page_io *io = malloc(sizeof(*io) + nr * (sizeof(io->pages[0]) +
							sizeof(io->iov[0])));

	if (!io)
		return NULL;
	io->iov = (struct iovec *)(void *)&io->pages[nr];
	io->c = m->cache;
	io->m = m;
	io->wait = wait;
	io->t0 = pc__now_ns();
	io->nr = nr;
	for (unsigned i = 0; i < nr; i++) {
		atomic_store_explicit(&pages[i]->io_pid,
				      pc__io_owner(m->cache, i == 0),
				      memory_order_relaxed);
		io->pages[i] = pages[i];
		io->iov[i].iov_base = page_data(m->cache, pages[i]);
		io->iov[i].iov_len = PC_PAGE_SIZE;
	}
	io->req = (struct pc_io_req){
		.fd = pc__bk(m)->fd,
		.op = PC_IO_READ,
		.iov = io->iov,
		.iovcnt = (int)nr,
		.off = (off_t)(page_index(pages[0]) << PC_PAGE_SHIFT),
		.dontneed = !m->direct,
		.end_io = read_end_io,
	};
	return io;
}

/*
 * Where the data is: pages [first + cur, ...) of @m's backing file, as
 * page offsets from @first: *dpage the first page of data at or after cur
 * (nr: none before @nr), *hpage the first hole after it.  The last extent
 * found is remembered (m->data_extent) and asked again only outside it: a
 * file of data costs one SEEK_DATA and one SEEK_HOLE, not two per read.
 * A remembered extent may go stale (a truncation, a hole punched by
 * another program): reading a hole or past the end of file as data costs
 * I/O but never gives wrong data (zeros, or a short read zero-filled).
 */
static void find_data(struct pc_mapping *m, uint64_t first, unsigned cur,
		      unsigned nr, unsigned *dpage, unsigned *hpage)
{
	uint64_t ext = atomic_load_explicit(&m->data_extent, memory_order_relaxed);
	uint64_t lo = ext >> 32, hi = ext & UINT32_MAX, at = first + cur;
	off_t data, hole;

	if (at >= lo && at < hi) {
		*dpage = cur;
		*hpage = (unsigned)pc_min((uint64_t)nr, hi - first);
		return;
	}
	data = lseek(pc__bk(m)->fd, (off_t)(at << PC_PAGE_SHIFT), SEEK_DATA);
	if (data < 0 || (uint64_t)data >= ((first + nr) << PC_PAGE_SHIFT)) {
		*dpage = *hpage = nr;
		return;
	}
	lo = (uint64_t)data >> PC_PAGE_SHIFT;
	*dpage = (unsigned)(lo - first);
	hole = lseek(pc__bk(m)->fd, data, SEEK_HOLE);
	if (hole < 0) {
		*hpage = nr;
		return;
	}
	hi = ((uint64_t)hole + PC_PAGE_SIZE - 1) >> PC_PAGE_SHIFT;
	*hpage = (unsigned)pc_min((uint64_t)nr, hi - first);
	if (*hpage <= *dpage)
		*hpage = *dpage + 1;
	else if (hi <= UINT32_MAX)
		atomic_store_explicit(&m->data_extent, lo << 32 | hi,
				      memory_order_relaxed);
}

/*
 * Read @nr locked, not uptodate pages of consecutive indices.  Each page
 * gives one reference to the I/O, returned (with the page lock) at
 * completion - unless @wait is set (one page: it stays locked, the caller
 * keeps its reference and waits).  Holes and the part past the disk's end
 * of file are zero-filled without I/O.  @now (implied by @wait): pages[0]
 * is needed at once; the request that holds it is cut at READ_NOW_PAGES
 * and done by this thread (pc_io_req.now).  Returns the pages zero-filled.
 */
static unsigned read_pages(struct pc_mapping *m, struct pc_page **pages,
			   unsigned nr, struct read_wait *wait, bool now)
{
	struct pc_cache *c = m->cache;
	struct pc_io_req *reqs[PC_MAX_IO_PAGES];
	unsigned nreq = 0, cur = 0, zeroed = 0;
	uint64_t first = page_index(pages[0]);

	now = now || wait;
	while (cur < nr) {
		unsigned dpage, hpage;

		find_data(m, first, cur, nr, &dpage, &hpage);
		if (dpage >= nr) {
			zero_pages(c, pages + cur, nr - cur, !wait);
			zeroed += nr - cur;
			if (wait)
				read_wait_done(wait);
			break;
		}
		zero_pages(c, pages + cur, dpage - cur, !wait);
		zeroed += dpage - cur;
		for (unsigned i = dpage; i < hpage;) {
			unsigned n = pc_min(hpage - i, PC_MAX_IO_PAGES);
			struct page_io *io;

			if (now && i == 0)
				n = pc_min(n, READ_NOW_PAGES);
			io = read_io(m, pages + i, n, wait);
			if (io)
				io->req.now = now && i == 0;

			if (!io) {	/* no memory for the request: fail them */
				for (unsigned k = i; k < i + n; k++) {
					page_set(pages[k], PG_error);
					if (!wait) {
						atomic_store_explicit(
							&pages[k]->io_pid, 0,
							memory_order_relaxed);
						pc__unlock_page(&c->wait, pages[k]);
						pc__put_page(c, pages[k]);
					}
				}
				if (wait)
					read_wait_done(wait);
			} else {
				reqs[nreq++] = &io->req;
			}
			i += n;
			if (nreq == PC_MAX_IO_PAGES) {
				pc__io_submit(c, reqs, nreq);
				nreq = 0;
			}
		}
		cur = hpage;
	}
	if (nreq)
		pc__io_submit(c, reqs, nreq);
	return zeroed;
}

unsigned pc__read_pages(struct pc_mapping *m, struct pc_page **pages,
			unsigned nr, bool now)
{
	return read_pages(m, pages, nr, NULL, now);
}

int pc__read_page_sync(struct pc_mapping *m, struct pc_page *p)
{
	struct read_wait w = { .done = false };

	PC_ASSERT(page_test(p, PG_locked));
	pc__lock_init(&w.lock, NULL, PC_RANK_READ_WAIT, -1);
	pthread_cond_init(&w.cond, NULL);
	page_clear(p, PG_error);
	read_pages(m, &p, 1, &w, true);
	pc__lock(&w.lock);
	while (!w.done)
		pc__cond_wait(&w.cond, &w.lock);
	pc__unlock(&w.lock);
	pc__lock_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return page_test(p, PG_uptodate) ? 0 : -EIO;
}
