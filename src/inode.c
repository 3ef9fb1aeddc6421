/*
 * inode.c - mappings (one per file, like the kernel's inode), open files,
 * close, unlink, fsync, and pc_lock_prepare (backing.c says why);
 * truncation is truncate.c's.
 *
 * c->hash maps (st_dev, st_ino) to the mapping of a file; every pc_open of
 * one file shares it.  A mapping stays in the table after its last close,
 * with its pages, as the kernel keeps an inode's pages; closed mappings sit
 * on c->closed (oldest first).  Their descriptors are backing.c's: kept
 * within a budget, let go under pressure, attached again at the next open.
 * Past MAX_CLOSED the oldest closed mapping leaves the table if it is
 * clean; a dirty one is written back first and, if pages stay dirty (a
 * failing device), stays in the table with them and its errors, for the
 * next opener's fsync (evict_closed).  A mapping with dirty pages is freed
 * only at destroy (which reports it, counted as writeback_lost) or when
 * its file was unlinked: an unlinked file leaves the table at its last
 * close and its pages, dirty or not, are dropped without I/O (aim7
 * disk_wrt depends on it).
 *
 *   m->refs: 1 for the table + 1 per open file + transient ones (the
 *   flusher, a pruner).  The put that reaches zero tears the mapping down:
 *   every page removed (each under its page lock, which is what keeps
 *   reclaim, holding a page lock, from seeing a dead mapping), shadows
 *   dropped, off the bdi list, fd closed, freed.
 *
 * Locks: c->mappings_lock guards the table, the closed list, the open-file
 * list, nr_open, unlinked, dead.  i_rwsem (exclusive) serializes truncation
 * against writers; disk_size_lock serializes ftruncate(2) of the backing
 * file with m->seen; m->pos_lock is fpos.c's (made and destroyed here with
 * the mapping, never taken by the cache).
 *
 * An O_TRUNC open truncates the file (truncate.c, pc__truncate_locked);
 * one of a file the opener's fstat shows empty, of which the cache holds
 * nothing, cuts nothing and calls no ftruncate(2) (holds_nothing).
 *
 * Each open of a mapping already in the table revalidates it against the
 * disk (coherence.c: close-to-open coherence between processes).
 *
 * pc_open_fd opens the file of a descriptor the caller opened itself (the
 * preload shim does: the program's fd stays a real kernel fd), and
 * pc_open_fd_stat for a caller that knows its flags and fstat; the
 * pc_cache_* functions below it find a mapping by st_dev and st_ino, for
 * callers that know a file by a stat(2) result rather than by an open.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "bdi.h"
#include "dirty.h"
#include "inode.h"
#include "mem.h"
#include "node.h"
#include "pagewait.h"
#include "readahead.h"
#include "share.h"
#include "tracepoint.h"
#include "tree.h"

#define MAX_CLOSED 512
#define OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | \
		    O_SYNC | O_DSYNC | O_CLOEXEC | O_NOATIME)
/* pc_open_fd: flags open(2) took that say nothing to the cache. */
#define OPEN_FD_IGNORED (O_NOCTTY | O_NONBLOCK | O_LARGEFILE)

static unsigned hash_of(struct pc_cache *c, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)dev * 0x9E3779B97F4A7C15ull) ^
		     ((uint64_t)ino * 0xC2B2AE3D27D4EB4Full);

	return (unsigned)(h >> 32) % c->hash_size;
}

bool pc__mapping_tryget(struct pc_mapping *m)
{
	int r = atomic_load(&m->refs);

	while (r > 0)
		if (atomic_compare_exchange_weak(&m->refs, &r, r + 1))
			return true;
	return false;
}

static void mapping_free(struct pc_mapping *m)
{
	struct pc_cache *c = m->cache;
	uint64_t shadows;

	/* Dirty pages die only with an unlinked file or at destroy. */
	PC_ASSERT(m->unlinked || atomic_load(&c->stopping) ||
		  (!atomic_load(&m->nr_dirty) && !atomic_load(&m->nr_writeback)));
	pc__truncate_pages(m, 0);
	pc__bdi_remove(m);
	shadows = m->tree.nr_values;
	if (shadows)
		atomic_fetch_sub(&c->nr_shadows, shadows);
	pc__tree_destroy(&m->tree);
	pc__backing_close(m);
	pc__lock_destroy(&m->tree_lock);
	pc__rwlock_destroy(&m->i_rwsem);
	pc__lock_destroy(&m->pos_lock);
	pc__lock_destroy(&m->disk_size_lock);
	pc__share_slot_put(c, m);
	pc__cache_free(c, m, sizeof(*m));
}

void pc__mapping_put(struct pc_mapping *m)
{
	if (atomic_fetch_sub(&m->refs, 1) == 1)
		mapping_free(m);
}

/* Onto the list of closed mappings, newest last; c->mappings_lock held. */
static void closed_add_locked(struct pc_cache *c, struct pc_mapping *m)
{
	PC_ASSERT_HELD(&c->mappings_lock);
	pc_list_add_tail(&c->closed, &m->closed_link);
	m->on_closed_list = true;
	c->nr_closed++;
	if (atomic_load(&pc__bk(m)->fd) >= 0)
		c->nr_closed_fds++;
}

/* Off the list of closed mappings, if on it; c->mappings_lock held. */
static void closed_del_locked(struct pc_cache *c, struct pc_mapping *m)
{
	PC_ASSERT_HELD(&c->mappings_lock);
	if (!m->on_closed_list)
		return;
	if (atomic_load(&pc__bk(m)->fd) >= 0)
		c->nr_closed_fds--;
	pc_list_del(&c->closed, &m->closed_link);
	m->on_closed_list = false;
	c->nr_closed--;
}

/* c->mappings_lock held. */
static void table_remove_locked(struct pc_cache *c, struct pc_mapping *m)
{
	struct pc_mapping **pp = &c->hash[hash_of(c, m->dev, m->ino)];
	PC_ASSERT_HELD(&c->mappings_lock);

	for (; *pp; pp = &(*pp)->hash_next)
		if (*pp == m) {
			*pp = m->hash_next;
			break;
		}
	closed_del_locked(c, m);
	m->dead = true;
	c->nr_mappings--;
}

/* One writeback pass of all of @m, waited for. */
void pc__mapping_writeback_once(struct pc_mapping *m)
{
	pc__writeback_range(m, 0, UINT64_MAX, true, NULL);
	pc__wait_writeback_range(m, 0, UINT64_MAX);
}

/*
 * Write a mapping back and wait: shutdown, pc_cache_sync.  Returns the new
 * errors, or -EIO when pages stay dirty with none new (all reported).
 */
int pc__mapping_sync(struct pc_mapping *m)
{
	_Atomic uint32_t seen = pc__errseq_sample(m);	/* only new errors */
	bool wrote = atomic_load(&m->nr_dirty) || atomic_load(&m->nr_writeback);
	uint64_t left;
	int r;

	/* Failed pages are tried again, a bounded number of times. */
	left = pc__writeback_mapping_retry(m);
	/* The disk as we left it - only if we wrote: a change made by the
	 * kernel's hands (a handed-off descriptor, another process) must
	 * stay visible to the next open's revalidation (coherence.c). */
	if (wrote)
		pc__seen_refresh(m);
	r = pc__errseq_check_advance(m, &seen);
	return r ? r : left ? -EIO : 0;
}

/* A new mapping of the file of @st, @mfd its backing fd (backing.c). */
static struct pc_mapping *mapping_new(struct pc_cache *c, int mfd, bool direct,
				      bool rdonly, const struct stat *st)
{
	struct pc_mapping *m = pc__cache_zalloc(c, sizeof(*m));
	struct pc_backing *b;

	if (!m)
		return NULL;
	m->direct = direct;
	m->cache = c;
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	if (pc__share_slot_get(c, m)) {
		pc__cache_free(c, m, sizeof(*m));
		return NULL;
	}
	b = pc__bk(m);		/* a shared cache's: this process's entry */
	atomic_init(&b->fd, mfd);
	b->fd_rdonly = rdonly;
	b->ro_fd = -1;
	atomic_init(&b->tail_fd, -1);
	m->bdi = pc__bdi_get(c, st->st_dev);
	if (!m->bdi) {
		pc__share_slot_put(c, m);
		pc__cache_free(c, m, sizeof(*m));
		return NULL;
	}
	pc__cache_rwlock_init(c, &m->i_rwsem, PC_RANK_I_RWSEM);
	pc__fpos_init(c, m);
	pc__cache_lock_init(c, &m->disk_size_lock, PC_RANK_DISK_SIZE, -1);
	pc__cache_lock_init(c, &m->tree_lock, PC_RANK_TREE,
			    PC_VM_tree_lock_acquired);
	pc__tree_init_arena(&m->tree, pc__node_arena(c), c->ebr);
	atomic_init(&m->size, st->st_size);
	pc__seen_init(m, st);	/* nobody else sees it yet */
	atomic_init(&m->first_node, -1);
	atomic_init(&m->refs, 1);	/* the table's */
	return m;
}

/*
 * Nothing of @m in the cache, nothing on its way to the disk: with the
 * opener's fstat showing the file empty, O_TRUNC has nothing to cut and
 * costs no ftruncate(2) - aim7's creat-clo reopens one empty file a
 * thousand times.  (The kernel's O_TRUNC would touch the file's times
 * even then; ours leaves an empty file as it is.)  i_rwsem held.
 */
static bool holds_nothing(struct pc_mapping *m)
{
	return !atomic_load(&m->size) && !atomic_load(&m->nr_pages) &&
	       !atomic_load(&m->nr_dirty) && !atomic_load(&m->nr_writeback);
}

static void seen_set(struct pc_mapping *m, const struct stat *st)
{
	pc__lock(&m->disk_size_lock);
	pc__seen_set_locked(m, st);
	pc__unlock(&m->disk_size_lock);
}

/* The live mapping of the file of @st, or NULL; mappings_lock held. */
static struct pc_mapping *lookup_locked(struct pc_cache *c,
					const struct stat *st)
{
	struct pc_mapping *m = c->hash[hash_of(c, st->st_dev, st->st_ino)];
	PC_ASSERT_HELD(&c->mappings_lock);

	while (m && (!pc__mapping_matches(m, st) || m->dead))
		m = m->hash_next;
	return m;
}

/*
 * Open the file @fd refers to (@st: its fstat) through @c.  @fd stays the
 * caller's: a mapping made or found without descriptors gets its own,
 * opened from @fd with mappings_lock dropped (an EMFILE there releases
 * descriptors, backing.c), and the table is looked at again after.
 */
static int file_open(pc_cache *c, int fd, const struct stat *st, int flags,
		     pc_file **out)
{
	bool writable = (flags & O_ACCMODE) != O_RDONLY;
	bool found = false, direct = false, rdonly = false;
	struct pc_mapping *m;
	struct pc_file *f;
	int mfd = -1;

	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	f = pc__cache_zalloc(c, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pc__lock(&c->mappings_lock);
	for (;;) {
		m = lookup_locked(c, st);
		if (m && pc__bk_ready(m)) {	/* no room for its descriptors */
			pc__unlock(&c->mappings_lock);
			if (mfd >= 0)
				close(mfd);
			pc__cache_free(c, f, sizeof(*f));
			return -ENOMEM;
		}
		if (m && !pc__backing_needs_locked(m, writable))
			break;
		if (mfd >= 0) {	/* made below, the table looked at again */
			if (m && pc__backing_attach_locked(m, mfd, rdonly))
				mfd = -1;
			break;
		}
		pc__unlock(&c->mappings_lock);
		mfd = pc__backing_open(c, fd, writable, &direct, &rdonly);
		if (mfd < 0) {
			pc__cache_free(c, f, sizeof(*f));
			return mfd;
		}
		pc__lock(&c->mappings_lock);
	}
	if (!m) {
		m = mapping_new(c, mfd, direct, rdonly, st);
		if (!m) {
			pc__unlock(&c->mappings_lock);
			close(mfd);
			pc__cache_free(c, f, sizeof(*f));
			return -ENOMEM;
		}
		mfd = -1;
		m->hash_next = c->hash[hash_of(c, st->st_dev, st->st_ino)];
		c->hash[hash_of(c, st->st_dev, st->st_ino)] = m;
		c->nr_mappings++;
	} else {
		closed_del_locked(c, m);
		found = true;
	}
	atomic_fetch_add(&m->refs, 1);
	m->nr_open++;
	f->cache = c;
	f->mapping = m;
	f->flags = flags;
	/* The reaper knows a shared cache's files by it: the pid local.c
	 * keeps (set at attach and at fork), no getpid(2) per open. */
	f->pid = pc__pid;
	pc__cache_lock_init(c, &f->ra_lock, PC_RANK_RA, -1);
	pc__ra_init(f);
	pc_list_add_head(&c->files, &f->link);
	pc__unlock(&c->mappings_lock);
	if (mfd >= 0)
		close(mfd);	/* another opener gave it one first */
	if (writable)
		pc__share_send_fd(m);	/* the home can write it back */
	if ((flags & O_TRUNC) && writable) {
		int e = 0;

		pc__write_lock(&m->i_rwsem);
		if (st->st_size || !holds_nothing(m))
			e = pc__truncate_locked(m, 0);
		else	/* empty on the disk and here: nothing to cut */
			seen_set(m, st);
		pc__write_unlock(&m->i_rwsem);
		if (e) {	/* open(2) would have failed: so do we */
			pc_close(f);
			return e;
		}
	} else if (found) {
		pc__revalidate(m, st);
	}
	/* Sampled last: an error of writeback done by revalidate is not new. */
	atomic_init(&f->err_cursor, pc__errseq_sample(m));
	*out = f;
	return 0;
}

PC_EXPORT int pc_open(pc_cache *c, const char *path, int flags, mode_t mode,
		      pc_file **out)
{
	struct stat st;
	int fd, r;

	if (!c || !path || !out || (flags & ~OPEN_FLAGS) ||
	    (flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	*out = NULL;
	fd = pc__open_retry(c, path, (flags & (O_ACCMODE | O_CREAT | O_EXCL)) |
			    O_CLOEXEC, mode);
	if (fd < 0)
		return fd;
	r = fstat(fd, &st) != 0 ? -errno : file_open(c, fd, &st, flags, out);
	close(fd);
	return r;
}

/* pc_open_fd's and pc_open_fd_stat's arguments: 0 or -EINVAL. */
static int open_fd_args(pc_cache *c, int fd, int flags, pc_file **out)
{
	if (!c || !out || fd < 0 || (flags & ~(OPEN_FLAGS | OPEN_FD_IGNORED)) ||
	    (flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	*out = NULL;
	return 0;
}

PC_EXPORT int pc_open_fd(pc_cache *c, int fd, int flags, pc_file **out)
{
	int acc = flags & O_ACCMODE, fl, r = open_fd_args(c, fd, flags, out);
	struct stat st;

	if (r)
		return r;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	/* The cache may not do more with the file than the descriptor may. */
	if ((fl & O_PATH) || ((fl & O_ACCMODE) != O_RDWR && acc != (fl & O_ACCMODE)))
		return -EBADF;
	if (fstat(fd, &st) != 0)
		return -errno;
	return file_open(c, fd, &st, flags & OPEN_FLAGS, out);
}

/*
 * The shim's open: it opened @fd with @flags itself and took @st after,
 * so the fcntl(F_GETFL) and the fstat of pc_open_fd would only ask the
 * kernel what the caller knows (two system calls of every open).
 */
PC_EXPORT int pc_open_fd_stat(pc_cache *c, int fd, int flags,
			      const struct stat *st, pc_file **out)
{
	int r = open_fd_args(c, fd, flags, out);

	if (r)
		return r;
	if (!st)
		return -EINVAL;
	return file_open(c, fd, st, flags & OPEN_FLAGS, out);
}

/*
 * Past MAX_CLOSED closed mappings, the oldest leaves the table - if it is
 * clean.  A dirty one is written back once first (no lock held); if pages
 * stay dirty (the device fails) it stays, its errors kept for the next
 * opener's fsync as the kernel keeps them on the inode, and goes to the
 * end of the list.  No lock held.
 */
static void evict_closed(struct pc_cache *c)
{
	struct pc_mapping *m;
	int puts = 0;

	pc__lock(&c->mappings_lock);
	m = c->nr_closed > MAX_CLOSED ? closed_first(c) : NULL;
	if (m && (atomic_load(&m->nr_dirty) || atomic_load(&m->nr_writeback)) &&
	    pc__mapping_tryget(m)) {
		closed_del_locked(c, m);	/* to the end: others first */
		closed_add_locked(c, m);
		pc__unlock(&c->mappings_lock);
		pc__mapping_writeback_once(m);
		pc__lock(&c->mappings_lock);
		puts = 1;	/* ours */
	}
	if (m && m->on_closed_list && m->nr_open == 0 && !m->dead &&
	    !atomic_load(&m->nr_dirty) && !atomic_load(&m->nr_writeback)) {
		table_remove_locked(c, m);
		puts++;		/* the table's: the last, unless it is in use */
	}
	pc__unlock(&c->mappings_lock);
	while (puts--)
		pc__mapping_put(m);
}

PC_EXPORT int pc_close(pc_file *f)
{
	struct pc_cache *c;
	struct pc_mapping *m;
	bool drop = false, last;
	int r;

	if (!f)
		return -EINVAL;
	c = f->cache;
	m = f->mapping;
	pc__dropbehind_flush(f);
	r = pc__errseq_check_advance(m, &f->err_cursor);
	pc__seen_pay(m);	/* an fsync's commits' record (coherence.c) */
	pc__lock(&c->mappings_lock);
	pc_list_del(&c->files, &f->link);
	last = --m->nr_open == 0;
	if (last && m->unlinked && !m->dead) {
		table_remove_locked(c, m);
		drop = true;
	} else if (last && !m->dead) {
		closed_add_locked(c, m);
	}
	pc__unlock(&c->mappings_lock);
	/*
	 * m->seen needs no other fstat here: the disk changes under us only
	 * by our writes, truncations and fallocate, and each records the
	 * file when it is done (the last write in flight at its completion)
	 * or, an fsync's commit, owes it to this close (paid above).
	 */
	if (drop)
		pc__mapping_put(m);	/* the table's: pages die unwritten */
	pc__mapping_put(m);		/* the file's */
	pc__lock_destroy(&f->ra_lock);
	pc__cache_free(c, f, sizeof(*f));
	if (last && !drop) {
		evict_closed(c);
		pc__backing_trim(c);
	}
	return r;
}

void pc__files_reap(struct pc_cache *c, pid_t pid)
{
	for (;;) {
		struct pc_file *f;

		pc__lock(&c->mappings_lock);
		for (f = pc_list_first_entry(&c->files, struct pc_file, link);
		     f && f->pid != pid;
		     f = pc_list_next_entry(f, struct pc_file, link))
			;
		if (f)
			f->pid = 0;	/* ours to close */
		pc__unlock(&c->mappings_lock);
		if (!f)
			return;
		pc__inc(c, 0, shared_files_reaped);
		pc_close(f);
	}
}

/* The mapping of (dev, ino) with a reference, or NULL. */
struct pc_mapping *pc__mapping_lookup(struct pc_cache *c, dev_t dev, ino_t ino)
{
	struct pc_mapping *m;

	pc__lock(&c->mappings_lock);
	for (m = c->hash[hash_of(c, dev, ino)]; m; m = m->hash_next)
		if (m->dev == dev && m->ino == ino && !m->dead)
			break;
	if (m && !pc__mapping_tryget(m))
		m = NULL;
	pc__unlock(&c->mappings_lock);
	return m;
}

PC_EXPORT int pc_unlink(pc_cache *c, const char *path)
{
	struct stat st;

	if (!c || !path)
		return -EINVAL;
	if (lstat(path, &st) != 0)
		return -errno;
	if (unlink(path) != 0)
		return -errno;
	pc_cache_unlinked(c, &st);
	return 0;
}

PC_EXPORT int pc_cache_unlinked(pc_cache *c, const struct stat *st)
{
	struct pc_mapping *m;
	bool drop = false;

	if (!c || !st)
		return -EINVAL;
	if (!S_ISREG(st->st_mode) || st->st_nlink > 1)
		return 0;	/* another name keeps it */
	pc__lock(&c->mappings_lock);
	for (m = c->hash[hash_of(c, st->st_dev, st->st_ino)]; m; m = m->hash_next)
		if (m->dev == st->st_dev && m->ino == st->st_ino && !m->dead)
			break;
	if (m) {
		m->unlinked = true;
		if (m->nr_open == 0) {
			table_remove_locked(c, m);
			drop = true;
		}
	}
	pc__unlock(&c->mappings_lock);
	if (drop)
		pc__mapping_put(m);
	return 0;
}

PC_EXPORT int pc_cache_sync(pc_cache *c)
{
	struct pc_mapping **all;
	unsigned n = 0;
	int first = 0;

	if (!c)
		return -EINVAL;
	pc__share_take_fds(c);	/* the home: every file sent so far */
	pc__lock(&c->mappings_lock);
	all = malloc((c->nr_mappings + 1) * sizeof(*all));
	for (unsigned h = 0; all && h < c->hash_size; h++)
		for (struct pc_mapping *m = c->hash[h]; m; m = m->hash_next)
			if (!m->dead && (!m->unlinked || m->nr_open) &&
			    pc__mapping_tryget(m))
				all[n++] = m;
	pc__unlock(&c->mappings_lock);
	if (!all)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int r = pc__mapping_sync(all[i]);

		if (r && !first)
			first = r;
		pc__mapping_put(all[i]);
	}
	free(all);
	pc__backing_release_writers(c);	/* clean now: exec may follow */
	return first;
}

PC_EXPORT off_t pc_size(pc_file *f)
{
	if (!f)
		return -EINVAL;
	return (off_t)atomic_load(&f->mapping->size);
}

PC_EXPORT int pc_fsync(pc_file *f)
{
	if (!f)
		return -EINVAL;
	return pc__fsync_range(f, 0, UINT64_MAX, false);
}

PC_EXPORT int pc_lock_prepare(pc_file *f)
{
	struct pc_mapping *m;
	int fd;

	if (!f)
		return -EINVAL;
	m = f->mapping;
	/* An open file: the mapping holds its descriptors (backing.c). */
	if (!m->direct || pc__bk(m)->fd < 0 || pc__bk(m)->fd_rdonly)
		return 0;	/* none to open: buffered, or not writable */
	fd = pc__backing_tail_fd(m, true);
	return fd < 0 ? fd : 0;
}

PC_EXPORT int pc_fdatasync(pc_file *f)
{
	if (!f)
		return -EINVAL;
	return pc__fsync_range(f, 0, UINT64_MAX, true);
}

int pc__mappings_shutdown(struct pc_cache *c)
{
	int first_err = 0;

	for (;;) {	/* files left open */
		struct pc_file *f;

		pc__lock(&c->mappings_lock);
		f = pc_list_first_entry(&c->files, struct pc_file, link);
		pc__unlock(&c->mappings_lock);
		if (!f)
			break;
		pc_close(f);
	}
	for (;;) {
		struct pc_mapping *m = NULL;
		int r;

		pc__lock(&c->mappings_lock);
		for (unsigned h = 0; h < c->hash_size && !m; h++)
			m = c->hash[h];
		if (m)
			table_remove_locked(c, m);
		pc__unlock(&c->mappings_lock);
		if (!m)
			break;
		r = m->unlinked ? 0 : pc__mapping_sync(m);
		/* What is still dirty now dies with the cache: destroy says so. */
		if (!m->unlinked && atomic_load(&m->nr_dirty))
			pc__add(c, 0, writeback_lost,
				(int64_t)atomic_load(&m->nr_dirty));
		if (r && !first_err)
			first_err = r;
		pc__mapping_put(m);
	}
	return first_err;
}
