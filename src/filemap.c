/*
 * filemap.c - the read and write paths: finding and creating pages,
 * copying to and from them.
 *
 * Lookup (pc__find_get_page) takes no lock: inside an RCU read section it
 * walks the mapping's tree, takes a speculative reference on the page it
 * found (page_get_unless_zero fails on a free, frozen or retired frame),
 * and checks that the page still belongs to this mapping at this index
 * and still sits in the slot (re-read in place, not walked again);
 * otherwise it drops the reference and looks again.  Descriptors are never
 * unmapped, so touching a page that has since been reused is safe.
 *
 * A new page is inserted locked and not uptodate (pc__add_to_page_cache,
 * under the tree lock), which makes it the "I/O in flight" marker: readers
 * that find it wait for PG_locked to clear, then look at PG_uptodate.
 * Its mapping is set before the insertion (a lookup that finds it checks
 * it), so a page that loses the insertion race (-EEXIST, or -ENOMEM) has
 * been in sight meanwhile of whoever walks frames by number (resize.c's
 * evict takes a reference, sees the mapping and sleeps on the lock): its
 * lock goes with pc__unlock_page, which wakes such a waiter, never with
 * a plain clear of PG_locked (issue 36: a shrink asleep for ever on a
 * readahead page that had lost the race and kept only its reference).
 * The pages are read from the device by readpage.c (pc__read_pages for a
 * window, pc__read_page_sync for the one page a reader or a partial write
 * waits for): holes and the part past the disk's end of file zero-filled
 * without I/O, the page a reader waits for read by the reader itself;
 * completion marks them uptodate (or PG_error) and unlocks them.
 * pc_pread tells readahead how it touched each page (pc__mark_read: first
 * touch, sequential, consumed): a page is marked accessed once however
 * many reads it takes, and use-once pages are dropped behind
 * (dropbehind.c).
 *
 *   refcount of a cached page: 1 for the mapping, +1 per reader, pinner,
 *   LRU batch or in-flight read.  Creation's reference goes to the I/O.
 *   In a shared cache the page a read or write holds is recorded in the
 *   thread's context while it holds it (tctx.c: held[PC_HELD_ONE_AT], two
 *   stores to a line the thread owns), from its get on (get_read_page:
 *   a sleep for another process's read of it too), so a killed process's
 *   reference is given back by its reaper; a pc_get_page pin is recorded
 *   as the process's (tctx.c: pins[], a net count per thread, one store
 *   each for the get and the put).  Across a sync read the reference is
 *   the read's (io_pid, read_locked), not recorded.
 *
 * Write (write_iter, behind pc_pwrite and pc_writev, which gathers from
 * an iovec): i_rwsem shared (exclusive for an append, O_APPEND or
 * PC_RW_APPEND, so that appends never interleave), then per page: find or
 * create it locked, wait for its writeback if the device wants stable
 * pages (bdi->stable_writes; the page lock keeps a new writeback from
 * starting meanwhile - elsewhere a page changed under writeback is left
 * dirty and written again), read it first if the write covers it partly
 * and it is not uptodate (zero it instead when it lies past end of file), copy,
 * mark it dirty, unlock; then balance_dirty_pages.  A page created by a
 * write is not marked accessed, nor is one that a sequential writer fills
 * in several small writes (seed 000: write pages wrongly marked hot cost
 * aim7 13.6%); a rewrite of a cached page is an access.
 *
 * Locks: i_rwsem → page lock → tree lock (insert/delete) → lru (batches).
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/uio.h>

#include "internal.h"
#include "dirty.h"
#include "filemap.h"
#include "inode.h"
#include "migrate.h"
#include "tctx.h"
#include "vmscan.h"
#include "bdi.h"
#include "node.h"
#include "io.h"
#include "pagewait.h"
#include "readahead.h"
#include "tree.h"

struct pc_page *pc__find_get_page(struct pc_mapping *m, uint64_t index)
{
	_Atomic(void *) *slot;
	struct pc_page *p;

	pc__tree_read_lock(&m->tree);
	for (;;) {
		p = pc__tree_lookup_slot(&m->tree, index, &slot);
		if (!p || pc_tree_is_value(p)) {
			p = NULL;
			break;
		}
		/* The data's first line, fetched while the descriptor is:
		 * two misses in parallel, not one after the other. */
		__builtin_prefetch(pfn_data(m->cache, page_pfn(m->cache, p)));
		if (!page_get_unless_zero(p))
			continue;
		/* Still this page, still in its slot: one line re-read. */
		if (page_mapping(p) == m && page_index(p) == index &&
		    pc__tree_slot_reload(slot) == p)
			break;
		pc__put_page(m->cache, p);
	}
	pc__tree_read_unlock(&m->tree);
	return p;
}

pc__test_insert_fn *_Atomic pc__test_insert_hook;	/* tests: filemap.h */

int pc__add_to_page_cache(struct pc_mapping *m, struct pc_page *p,
			  uint64_t index)
{
	struct pc_cache *c = m->cache;
	void *old = NULL;
	int r;

	PC_ASSERT(page_test(p, PG_locked));
	atomic_store_explicit(&p->index, index, memory_order_relaxed);
	atomic_store_explicit(&p->mapping, m, memory_order_release);
	page_get(p);	/* the mapping's reference */
	pc__test_before_insert(m, p, index);
	pc__lock_counted(&m->tree_lock);
	r = pc__tree_insert(&m->tree, index, p, &old);
	pc__unlock(&m->tree_lock);
	if (r) {
		atomic_store_explicit(&p->mapping, NULL, memory_order_relaxed);
		atomic_fetch_sub(&p->refcount, 1);
		return r;
	}
	atomic_fetch_add_explicit(&m->nr_pages, 1, memory_order_relaxed);
	if (old) {
		atomic_fetch_sub_explicit(&c->nr_shadows, 1, memory_order_relaxed);
		pc__workingset_refault(c, p, old);
	}
	pc__lru_add(c, p);
	return 0;
}

void pc__delete_from_page_cache_locked(struct pc_mapping *m,
				       struct pc_page *p, void *shadow)
{
	void *old;

	PC_ASSERT_HELD(&m->tree_lock);
	old = pc__tree_store(&m->tree, page_index(p), shadow);
	PC_ASSERT(old == p);
	(void)old;
	if (shadow)
		atomic_fetch_add_explicit(&m->cache->nr_shadows, 1,
					  memory_order_relaxed);
	atomic_fetch_sub_explicit(&m->nr_pages, 1, memory_order_relaxed);
	atomic_store_explicit(&p->mapping, NULL, memory_order_release);
}

/* ------------------------------------------------------------------ */

/* Allocate a page and insert it locked at @index: 0, -EEXIST, -ENOMEM. */
static int new_locked_page(struct pc_mapping *m, uint64_t index, bool write,
			   struct pc_page **out)
{
	struct pc_page *p = pc__alloc_page(m->cache, m, write ? PC_GFP_WRITE : 0);
	int r;

	if (!p)
		return -ENOMEM;
	pc__page_lock_new(p);
	r = pc__add_to_page_cache(m, p, index);
	if (r) {	/* an unlock that wakes: see pc__add_to_page_cache */
		pc__unlock_page(&m->cache->wait, p);
		pc__put_page(m->cache, p);
		return r;
	}
	*out = p;
	return 0;
}

/*
 * Shared caches: the reference get_read_page holds, recorded from the
 * get on (a sleep for a page another process reads is a place to die
 * in): in the thread's held[PC_HELD_ONE_AT] for a read (@pin false), as a
 * pin of the process for pc_get_page (its put may come from any thread).
 * Not recorded while it is the sync read's (io_pid: the read's reaper
 * gives it back), so never twice.  A private cache records nothing.
 */
struct read_rec {
	struct pc_tctx *t;
	bool pin;
};

static void rec_set(struct pc_cache *c, const struct read_rec *rec,
		    struct pc_page *p)
{
	if (rec->pin)	/* a context or not (its spare), as pc_put_page */
		pc__pin_note(c, rec->t, p, 1);
	else
		pc__held_set(rec->t, PC_HELD_ONE_AT, c, p, 0);
}

static void rec_clear(struct pc_cache *c, const struct read_rec *rec,
		      struct pc_page *p)
{
	if (rec->pin)
		pc__pin_note(c, rec->t, p, -1);
	else
		pc__held_clear(rec->t, PC_HELD_ONE_AT);
}

/* The reference and lock of new or locked @p go to its sync read. */
static int read_locked(struct pc_mapping *m, const struct read_rec *rec,
		       struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	int r;

	PC_ASSERT(page_test(p, PG_locked));
	rec_clear(c, rec, p);
	/* A read in flight from here on (read_io marks it again). */
	atomic_store_explicit(&p->io_pid, pc__io_owner(c, false),
			      memory_order_release);
	r = pc__read_page_sync(m, p);
	/* Ended (a hole zero-filled leaves the mark): ours again. */
	atomic_store_explicit(&p->io_pid, 0, memory_order_relaxed);
	rec_set(c, rec, p);
	return r;
}

/*
 * A referenced, uptodate page of @index for reading, reading ahead per the
 * file's state when it is missing.  @req: pages the caller will read.
 * The reference is recorded as @rec says from its get on.
 */
static int get_read_page(struct pc_file *f, uint64_t index, unsigned req,
			 bool nowait, const struct read_rec *rec,
			 struct pc_page **out)
{
	struct pc_mapping *m = f->mapping;
	struct pc_cache *c = m->cache;
	struct pc_page *p;
	int r;

	for (;;) {
		p = pc__find_get_page(m, index);
		if (!p) {
			if (nowait)
				return -EAGAIN;
			pc__inc(c, 0, pgfault_miss);
			pc__sync_readahead(f, index, req);
			p = pc__find_get_page(m, index);
			if (p)
				rec_set(c, rec, p);
		} else {
			rec_set(c, rec, p);
			if (page_test(p, PG_readahead))
				pc__async_readahead(f, p, index, req);
			pc__inc(c, 0, pgfault_hit);
		}
		if (!p) {
			r = new_locked_page(m, index, false, &p);
			if (r == -EEXIST)
				continue;
			if (r)
				return r;
			rec_set(c, rec, p);
			r = read_locked(m, rec, p);
			pc__unlock_page(&c->wait, p);
			if (r) {
				rec_clear(c, rec, p);
				pc__put_page(c, p);
				return r;
			}
		}
		if (page_test(p, PG_uptodate))
			break;
		if (nowait) {
			rec_clear(c, rec, p);
			pc__put_page(c, p);
			return -EAGAIN;
		}
		PC_PARK(PC_PARK_READ_WAIT);
		pc__wait_on_page_bit(&c->wait, p, PG_locked);
		if (page_test(p, PG_uptodate))
			break;
		/* The read failed, or the page was truncated: try ourselves. */
		pc__lock_page(&c->wait, p);
		if (page_mapping(p) != m) {
			pc__unlock_page(&c->wait, p);
			rec_clear(c, rec, p);
			pc__put_page(c, p);
			continue;
		}
		r = page_test(p, PG_uptodate) ? 0 : read_locked(m, rec, p);
		pc__unlock_page(&c->wait, p);
		if (r) {
			rec_clear(c, rec, p);
			pc__put_page(c, p);
			return r;
		}
		break;
	}
	*out = p;
	return 0;
}

static int check_rw_args(struct pc_file *f, const void *buf, size_t len,
			 off_t off)
{
	if (!f || !buf || off < 0 || len > SSIZE_MAX)
		return -EINVAL;
	return 0;
}

PC_EXPORT ssize_t pc_pread(pc_file *f, void *buf, size_t len, off_t off)
{
	struct pc_mapping *m;
	struct pc_cache *c;
	struct pc_tctx *t;
	struct read_rec rec = { NULL, false };	/* held[PC_HELD_ONE_AT] */
	size_t done = 0;
	int64_t size;
	uint64_t prev;
	unsigned ra_hits = 0;
	bool stream;
	int r;

	if ((r = check_rw_args(f, buf, len, off)))
		return r;
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	m = f->mapping;
	c = f->cache;
	t = pc__held_ctx(c);	/* shared: the page held is recorded */
	rec.t = t;
	size = atomic_load(&m->size);
	if (off >= size || !len)
		return 0;
	len = pc_min(len, (size_t)(size - off));
	/* Sequential: starts in the page the last read ended in, or the next. */
	prev = pc__ra_last_read(f);
	stream = ((uint64_t)off >> PC_PAGE_SHIFT) - prev <= 1;
	while (done < len) {
		uint64_t pos = (uint64_t)off + done;
		uint64_t index = pos >> PC_PAGE_SHIFT;
		uint64_t last = ((uint64_t)off + len - 1) >> PC_PAGE_SHIFT;
		size_t in = pos & (PC_PAGE_SIZE - 1);
		size_t n = pc_min(PC_PAGE_SIZE - in, len - done);
		struct pc_page *p;
		unsigned how = 0;

		r = get_read_page(f, index, (unsigned)pc_min(last - index + 1, 1u << 20),
				  false, &rec, &p);
		if (r)
			break;
		PC_PARK(PC_PARK_REF);
		size = atomic_load(&m->size);	/* truncated meanwhile? */
		if ((int64_t)pos >= size) {
			pc__held_clear(t, PC_HELD_ONE_AT);
			pc__put_page(c, p);
			break;
		}
		n = pc_min(n, (size_t)(size - (int64_t)pos));
		memcpy((char *)buf + done, (char *)page_data(c, p) + in, n);
		if (page_test(p, PG_hint))
			pc__numa_hint_fault(c, p);
		/* Marked accessed once per page, not once per read in it. */
		if (index != prev)
			how |= PC_READ_FIRST;
		if (index - prev <= 1)
			how |= PC_READ_SEQ;
		if (in + n == PC_PAGE_SIZE || pos + n >= (uint64_t)size)
			how |= PC_READ_CONSUMED;
		ra_hits += pc__mark_read(f, p, how);
		pc__held_clear(t, PC_HELD_ONE_AT);
		pc__put_page(c, p);
		prev = index;
		done += n;
	}
	if (!done)
		return r;
	pc__ra_note_read(f, prev);
	if (ra_hits)
		pc__add(c, 0, ra_hit, ra_hits);
	if (stream && !atomic_load_explicit(&f->ra_stream, memory_order_relaxed))
		pc__ra_stream_note(f, prev);
	return (ssize_t)done;
}

/* Find or create page @index locked, for writing. */
static int grab_write_page(struct pc_mapping *m, uint64_t index,
			   struct pc_page **out, bool *created)
{
	struct pc_page *p;
	int r;

	for (;;) {
		p = pc__find_get_page(m, index);
		if (p) {
			pc__lock_page(&m->cache->wait, p);
			if (page_mapping(p) == m && page_index(p) == index) {
				*created = false;
				*out = p;
				return 0;
			}
			pc__unlock_page(&m->cache->wait, p);
			pc__put_page(m->cache, p);
			continue;
		}
		r = new_locked_page(m, index, true, &p);
		if (r == -EEXIST)
			continue;
		if (r)
			return r;
		*created = true;
		*out = p;
		return 0;
	}
}

static void size_extend(struct pc_mapping *m, int64_t end)
{
	int64_t cur = atomic_load(&m->size);

	while (end > cur && !atomic_compare_exchange_weak(&m->size, &cur, end))
		;
}

/*
 * A write that continues the previous one of this open file extends its
 * sequential run; past one readahead maximum of run, and on a device fast
 * enough for cache.stickiness (or with NOREUSE advice), the pages this
 * stream creates are use-once: dropped when their writeback ends.
 */
static bool write_stream(struct pc_file *f, uint64_t off, size_t len)
{
	uint64_t run = atomic_load_explicit(&f->wrun, memory_order_relaxed);
	uint64_t pages = ((uint64_t)len + PC_PAGE_SIZE - 1) >> PC_PAGE_SHIFT;

	run = off == atomic_load_explicit(&f->wnext, memory_order_relaxed)
		      ? run + pages : 0;
	atomic_store_explicit(&f->wrun, run, memory_order_relaxed);
	atomic_store_explicit(&f->wnext, off + len, memory_order_relaxed);
	if (atomic_load_explicit(&f->advice, memory_order_relaxed) ==
	    POSIX_FADV_NOREUSE)
		return true;
	return run >= pc_max(f->ra.max, 64u) && pc__stream_dropbehind(f->mapping);
}

/* A position in an iovec array, for copies that cross segments. */
struct iov_cursor {
	const struct iovec *iov;
	size_t in;		/* bytes of *iov already copied */
};

static void iov_copy_from(struct iov_cursor *cur, char *dst, size_t n)
{
	while (n) {
		size_t k = pc_min(n, cur->iov->iov_len - cur->in);

		memcpy(dst, (const char *)cur->iov->iov_base + cur->in, k);
		dst += k;
		n -= k;
		cur->in += k;
		if (cur->in == cur->iov->iov_len) {
			cur->iov++;
			cur->in = 0;
		}
	}
}

/* Check @iov (NULL with @cnt 0 is fine) and sum its lengths into *total. */
static int check_iov(const struct iovec *iov, int cnt, size_t *total)
{
	size_t sum = 0;

	if (cnt < 0 || cnt > IOV_MAX || (cnt && !iov))
		return -EINVAL;
	for (int i = 0; i < cnt; i++) {
		if ((!iov[i].iov_base && iov[i].iov_len) ||
		    iov[i].iov_len > SSIZE_MAX - sum)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	*total = sum;
	return 0;
}

/*
 * The write path: @len bytes from @iov at *pos, or at end of file for an
 * append (i_rwsem exclusive, so appends never interleave); *pos ends past
 * the data written.  @flags: PC_RW_*, checked by the caller.
 */
static ssize_t write_iter(struct pc_file *f, const struct iovec *iov,
			  size_t len, off_t *pos, int flags)
{
	struct pc_mapping *m = f->mapping;
	struct pc_cache *c = f->cache;
	struct iov_cursor cur = { iov, 0 };
	struct pc_tctx *t = pc__held_ctx(c);	/* shared: the page held */
	unsigned dirtied = 0;
	size_t done = 0;
	bool excl, stream, cont;
	off_t off = *pos;
	int r = 0;

	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	excl = (flags & PC_RW_APPEND) ||
	       ((f->flags & O_APPEND) && !(flags & PC_RW_NOAPPEND));
	if (!len)
		return 0;
	while (cur.iov->iov_len == 0)	/* empty leading segments */
		cur.iov++;
	if (excl)
		pc__write_lock(&m->i_rwsem);
	else
		pc__read_lock(&m->i_rwsem);
	if (excl)
		off = (off_t)atomic_load(&m->size);
	if ((uint64_t)off + len > (uint64_t)INT64_MAX - PC_PAGE_SIZE) {
		r = -EFBIG;
		goto out;
	}
	/* A write that picks up inside the page where this file's previous
	 * write ended is the same use of that page, not a second one. */
	cont = (uint64_t)off == atomic_load_explicit(&f->wnext, memory_order_relaxed) &&
	       (off & (PC_PAGE_SIZE - 1)) != 0;
	stream = write_stream(f, (uint64_t)off, len);
	while (done < len) {
		uint64_t at = (uint64_t)off + done;
		uint64_t index = at >> PC_PAGE_SHIFT;
		size_t in = at & (PC_PAGE_SIZE - 1);
		size_t n = pc_min(PC_PAGE_SIZE - in, len - done);
		struct pc_page *p;
		bool created;

		r = grab_write_page(m, index, &p, &created);
		if (r)
			break;
		pc__held_set(t, PC_HELD_ONE_AT, c, p, 0);
		/* Stable pages: what is being written stays as it is. */
		if (atomic_load_explicit(&m->bdi->stable_writes,
					 memory_order_relaxed))
			pc__wait_on_page_bit(&c->wait, p, PG_writeback);
		if (created && stream)
			page_set(p, PG_dropbehind);
		if (!page_test(p, PG_uptodate) && n < PC_PAGE_SIZE) {
			int64_t size = atomic_load(&m->size);

			if ((int64_t)(index << PC_PAGE_SHIFT) >= size) {
				memset(page_data(c, p), 0, PC_PAGE_SIZE);
			} else {
				/* Ours is the read's while it runs (io_pid:
				 * its reaper's to give back), not recorded. */
				struct read_rec rec = { t, false };

				r = read_locked(m, &rec, p);
				if (r) {
					pc__unlock_page(&c->wait, p);
					pc__held_clear(t, PC_HELD_ONE_AT);
					pc__put_page(c, p);
					break;
				}
			}
		}
		iov_copy_from(&cur, (char *)page_data(c, p) + in, n);
		page_set(p, PG_uptodate);
		page_clear(p, PG_error);
		size_extend(m, (int64_t)(at + n));
		pc__set_page_dirty(m, p);
		dirtied++;
		pc__unlock_page(&c->wait, p);
		if (!created && !(cont && done == 0))
			pc__mark_accessed(c, p);
		pc__held_clear(t, PC_HELD_ONE_AT);
		pc__put_page(c, p);
		done += n;
	}
out:
	if (excl)
		pc__write_unlock(&m->i_rwsem);
	else
		pc__read_unlock(&m->i_rwsem);
	if (dirtied)
		pc__balance_dirty_pages(m, dirtied);
	*pos = off + (off_t)done;
	if (done && ((f->flags & (O_SYNC | O_DSYNC)) ||
		     (flags & (PC_RW_SYNC | PC_RW_DSYNC)))) {
		bool data_only = (f->flags & O_SYNC) != O_SYNC &&
				 !(flags & PC_RW_SYNC);
		int e = pc__fsync_range(f, (uint64_t)off >> PC_PAGE_SHIFT,
					((uint64_t)off + done - 1) >> PC_PAGE_SHIFT,
					data_only);

		if (e)
			return e;
	}
	return done ? (ssize_t)done : r;
}

PC_EXPORT ssize_t pc_pwrite(pc_file *f, const void *buf, size_t len, off_t off)
{
	struct iovec iov = { (void *)buf, len };
	int r;

	if ((r = check_rw_args(f, buf, len, off)))
		return r;
	return write_iter(f, &iov, len, &off, 0);
}

PC_EXPORT ssize_t pc_writev(pc_file *f, const struct iovec *iov, int iovcnt,
			    off_t *pos, int flags)
{
	size_t len;
	int r;

	if (!f || !pos || *pos < 0 ||
	    (flags & ~(PC_RW_APPEND | PC_RW_NOAPPEND | PC_RW_DSYNC | PC_RW_SYNC)) ||
	    (flags & PC_RW_APPEND && flags & PC_RW_NOAPPEND))
		return -EINVAL;
	if ((r = check_iov(iov, iovcnt, &len)))
		return r;
	return write_iter(f, iov, len, pos, flags);
}

PC_EXPORT ssize_t pc_readv(pc_file *f, const struct iovec *iov, int iovcnt,
			   off_t *pos)
{
	size_t len, done = 0;
	int r;

	if (!f || !pos || *pos < 0)
		return -EINVAL;
	if ((r = check_iov(iov, iovcnt, &len)))
		return r;
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	for (int i = 0; i < iovcnt && done < len; i++) {
		ssize_t n;

		if (!iov[i].iov_len)
			continue;
		n = pc_pread(f, iov[i].iov_base, iov[i].iov_len, *pos + (off_t)done);
		if (n < 0) {
			if (done)
				break;
			return n;
		}
		done += (size_t)n;
		if ((size_t)n < iov[i].iov_len)
			break;	/* end of file */
	}
	*pos += (off_t)done;
	return (ssize_t)done;
}

/* ------------------------------------------------------------------ */
/* Zero copy.                                                          */

PC_EXPORT int pc_get_page(pc_file *f, uint64_t index, int flags,
			  pc_page **out)
{
	struct read_rec rec = { NULL, true };	/* shared: a pin */
	struct pc_page *p;
	int r;

	if (!f || !out || (flags & ~PC_GET_NOWAIT))
		return -EINVAL;
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (index >= (uint64_t)(atomic_load(&f->mapping->size) + PC_PAGE_SIZE - 1)
			>> PC_PAGE_SHIFT)
		return -ENXIO;
	rec.t = pc__held_ctx(f->cache);
	r = get_read_page(f, index, 1, flags & PC_GET_NOWAIT, &rec, &p);
	if (r)
		return r;
	PC_PARK(PC_PARK_PINNED);
	if (page_test(p, PG_hint))
		pc__numa_hint_fault(f->cache, p);
	pc__mark_accessed(f->cache, p);
	pc__ra_note_read(f, index);
	*out = p;
	return 0;
}

PC_EXPORT void *pc_page_data(pc_page *p)
{
	return p ? p->data : NULL;
}

PC_EXPORT void pc_put_page(pc_page *p)
{
	struct pc_cache *c;

	if (!p)
		return;
	c = pc__page_cache(p);
	if (c->shared)	/* a shared cache's pin: its record given back first */
		pc__pin_note(c, pc__tctx(c), p, -1);
	if (page_put_testzero(p))
		pc__page_release(c, p);
}
