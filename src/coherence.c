/*
 * coherence.c - the cache and the kernel on one file: close-to-open
 * coherence between processes, and the hand-offs (a caller about to let
 * the kernel read or change a file behind the cache).
 *
 * What the cache last wrote or saw.  m->seen (disk_size_lock) is the
 * file's size and mtime on the disk as the cache last left it or
 * found it: set when the mapping is made, and refreshed whenever the cache
 * changed the file itself: when its last write in flight completes
 * (writeback_io.c), at pc__mapping_sync, after truncation, fallocate and
 * invalidation.  An fsync's own commit (sync.c), made for a caller that
 * holds the file open, owes the fstat instead (m->seen.owed), paid where
 * the record is next needed: the next close of the file in this cache
 * (pc_close), an open of it while it is still open, a pass that extends
 * the disk (backing.c) - so that a database's commits cost no fstat each
 * (SQLite: three a transaction).  A change by another between our
 * write's end and that payment is taken for ours: the window NFS has
 * between a write and the attributes its reply brings, here as long as
 * the file stays open (one closed in between was recorded at its close).
 *
 * Close-to-open (NFS's model).  Every open of a mapping already in the
 * table compares the opener's fstat with m->seen (pc__revalidate): its
 * size and mtime (not ctime: metadata alone moves it).  A difference means
 * someone else changed the file:
 *   1. our dirty pages go to the disk first, the size taken as the larger
 *      of ours and the disk's, so that the other writer's appended bytes
 *      stay the file's (the disk is never longer than our size because of
 *      our own writes: writeback writes the last block's bytes exactly);
 *   2. with i_rwsem exclusive, every clean page is dropped (pages whose
 *      writeback failed stay dirty, and keep the size they need);
 *   3. the size is the disk's, and m->seen is refreshed.
 * So two processes writing one file at the same time see each other only
 * at open and fsync boundaries.  A change another process makes between
 * our last write's completion and the fstat that records it goes unseen
 * (NFS has the same window); a record taken while our writes are still in
 * flight only makes the next open drop pages it did not need to.
 *
 * Hand-offs.  pc_invalidate writes a file back and drops its clean pages
 * (for mmap, stdio, ioctl: the kernel is about to read or change the data
 * itself); pc_fallocate changes allocation through the backing fd, writing
 * back and dropping first when the data in the range changes (punch hole,
 * zero, collapse, insert range); pc_cache_stat gives a stat(2) result the
 * size the cache holds; pc_cache_sync_file writes one file back.
 *
 * Locks: i_rwsem (exclusive) → disk_size_lock, as in inode.c; writeback
 * runs with i_rwsem held only after a first pass made without it (the
 * pages dirtied in between), and never with disk_size_lock held.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "dirty.h"
#include "inode.h"

/* ------------------------------------------------------------------ */
/* What the cache last wrote or saw.                                   */

static bool ts_equal(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

void pc__seen_init(struct pc_mapping *m, const struct stat *st)
{
	m->seen.size = st->st_size;
	m->seen.mtime = st->st_mtim;
	m->seen.owed = false;
}

void pc__seen_set_locked(struct pc_mapping *m, const struct stat *st)
{
	PC_ASSERT_HELD(&m->disk_size_lock);
	pc__seen_init(m, st);
}

void pc__seen_refresh_locked(struct pc_mapping *m)
{
	struct stat st;

	PC_ASSERT_HELD(&m->disk_size_lock);
	if (fstat(pc__bk(m)->fd, &st) == 0)
		pc__seen_set_locked(m, &st);
}

void pc__seen_refresh(struct pc_mapping *m)
{
	pc__lock(&m->disk_size_lock);
	pc__seen_refresh_locked(m);
	pc__unlock(&m->disk_size_lock);
}

void pc__seen_owe(struct pc_mapping *m)
{
	pc__lock(&m->disk_size_lock);
	m->seen.owed = true;
	pc__unlock(&m->disk_size_lock);
}

void pc__seen_pay_locked(struct pc_mapping *m)
{
	PC_ASSERT_HELD(&m->disk_size_lock);
	if (m->seen.owed)
		pc__seen_refresh_locked(m);
}

void pc__seen_pay(struct pc_mapping *m)
{
	pc__lock(&m->disk_size_lock);
	pc__seen_pay_locked(m);
	pc__unlock(&m->disk_size_lock);
}

/*
 * disk_size_lock held.  Size and mtime: every change of the data moves
 * them.  Not ctime: it moves with metadata alone too (a chown, a chmod, a
 * link), and the program's own fchown of a file at each open - SQLite
 * does it to every journal when run as root - would make each open drop
 * the file's pages.  A data change that leaves both as they were (within
 * one tick of the clock) would leave ctime so too.
 */
static bool seen_matches_locked(const struct pc_mapping *m,
				const struct stat *st)
{
	PC_ASSERT_HELD(&m->disk_size_lock);
	return m->seen.size == st->st_size &&
	       ts_equal(&m->seen.mtime, &st->st_mtim);
}

static bool has_dirty(struct pc_mapping *m)
{
	return atomic_load(&m->nr_dirty) || atomic_load(&m->nr_writeback);
}

/*
 * i_rwsem held exclusively, so no writer dirties more: write what is
 * dirty and wait (the disk then holds exactly m->size bytes of ours).
 * Returns false if pages stay dirty (writeback failed).
 */
static bool writeback_locked(struct pc_mapping *m)
{
	PC_ASSERT(pc__rwlock_held(&m->i_rwsem));
	if (has_dirty(m)) {
		pc__writeback_range(m, 0, UINT64_MAX, true, NULL);
		pc__wait_writeback_range(m, 0, UINT64_MAX);
	}
	return !has_dirty(m);
}

/* i_rwsem held exclusively: with no dirty page left, the size is the disk's. */
static void size_from_disk_locked(struct pc_mapping *m)
{
	struct stat st;

	PC_ASSERT(pc__rwlock_held(&m->i_rwsem));
	pc__lock(&m->disk_size_lock);
	if (!has_dirty(m) && fstat(pc__bk(m)->fd, &st) == 0)
		atomic_store(&m->size, st.st_size);
	pc__seen_refresh_locked(m);
	pc__unlock(&m->disk_size_lock);
}

/* ------------------------------------------------------------------ */
/* Close-to-open.                                                      */

void pc__revalidate(struct pc_mapping *m, const struct stat *st)
{
	bool fresh;

	pc__lock(&m->disk_size_lock);
	pc__seen_pay_locked(m);
	fresh = seen_matches_locked(m, st);
	pc__unlock(&m->disk_size_lock);
	if (fresh)
		return;
	pc__inc(m->cache, 0, stale_opens);
	/* 1. Ours to the disk, not cutting what the other appended. */
	if (has_dirty(m)) {
		pc__write_lock(&m->i_rwsem);
		atomic_store(&m->size, pc_max(atomic_load(&m->size),
					      (int64_t)st->st_size));
		pc__write_unlock(&m->i_rwsem);
		pc__mapping_sync(m);	/* errors stay for fsync (errseq) */
	}
	/* 2, 3. Clean pages dropped, the disk's size. */
	pc__write_lock(&m->i_rwsem);
	if (has_dirty(m))
		writeback_locked(m);
	pc__invalidate_pages(m);
	size_from_disk_locked(m);
	pc__write_unlock(&m->i_rwsem);
}

/* ------------------------------------------------------------------ */
/* Hand-offs.                                                          */

PC_EXPORT int pc_invalidate(pc_file *f)
{
	struct pc_mapping *m;
	bool clean;
	int r;

	if (!f)
		return -EINVAL;
	m = f->mapping;
	pc__mapping_sync(m);	/* the bulk, writers still running */
	pc__write_lock(&m->i_rwsem);
	clean = writeback_locked(m);
	pc__invalidate_pages(m);
	size_from_disk_locked(m);
	pc__write_unlock(&m->i_rwsem);
	r = pc__errseq_check_advance(m, &f->err_cursor);
	return r ? r : clean ? 0 : -EIO;
}

PC_EXPORT int pc_fallocate(pc_file *f, int mode, off_t off, off_t len)
{
	/* Allocation alone leaves the data as it is; the rest changes it. */
	bool data = (mode & ~FALLOC_FL_KEEP_SIZE) != 0;
	struct pc_mapping *m;
	int r = 0;

	if (!f || off < 0 || len <= 0)
		return -EINVAL;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (off > INT64_MAX - len)
		return -EFBIG;
	m = f->mapping;
	if (data)
		pc__mapping_sync(m);
	pc__write_lock(&m->i_rwsem);
	if (data && !writeback_locked(m)) {
		pc__write_unlock(&m->i_rwsem);
		r = pc__errseq_check_advance(m, &f->err_cursor);
		return r ? r : -EIO;
	}
	pc__lock(&m->disk_size_lock);
	if (fallocate(pc__bk(m)->fd, mode, off, len) != 0)
		r = -errno;
	else if (!data && !(mode & FALLOC_FL_KEEP_SIZE) &&
		 off + len > atomic_load(&m->size))
		atomic_store(&m->size, off + len);
	pc__seen_refresh_locked(m);
	pc__unlock(&m->disk_size_lock);
	if (data) {	/* after the change: what readers cached before it */
		pc__invalidate_pages(m);
		size_from_disk_locked(m);
	}
	pc__write_unlock(&m->i_rwsem);
	return r;
}

PC_EXPORT int pc_cache_stat(pc_cache *c, struct stat *st)
{
	struct pc_mapping *m;
	int r = -ENOENT, open;

	if (!c || !st)
		return -EINVAL;
	if (!S_ISREG(st->st_mode))
		return -ENOENT;
	m = pc__mapping_lookup(c, st->st_dev, st->st_ino);
	if (!m)
		return -ENOENT;
	pc__lock(&c->mappings_lock);
	open = m->nr_open;
	pc__unlock(&c->mappings_lock);
	/* Closed and clean, the disk is the file: the next open revalidates. */
	if (open || has_dirty(m)) {
		st->st_size = (off_t)atomic_load(&m->size);
		r = 0;
	}
	pc__mapping_put(m);
	return r;
}

PC_EXPORT int pc_cache_sync_file(pc_cache *c, const struct stat *st)
{
	struct pc_mapping *m;
	bool unlinked;
	int r;

	if (!c || !st)
		return -EINVAL;
	if (!S_ISREG(st->st_mode))
		return -ENOENT;
	m = pc__mapping_lookup(c, st->st_dev, st->st_ino);
	if (!m)
		return -ENOENT;
	/* An unlinked file is still read through the descriptors open on it
	 * (a child's after fork or exec, a dup on fd 0): only one no one has
	 * open is dropped unwritten. */
	pc__lock(&c->mappings_lock);
	unlinked = m->unlinked && m->nr_open == 0;
	pc__unlock(&c->mappings_lock);
	r = unlinked ? 0 : pc__mapping_sync(m);
	pc__mapping_put(m);
	return r;
}
