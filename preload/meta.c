/*
 * meta.c - everything about a file but its bytes: sync, size, allocation,
 * advice, stat, names and times.
 *
 *   fsync, fdatasync        pc_fsync/pc_fdatasync: the cache's dirty pages,
 *                           then the device; each writeback error once per
 *                           description, as the kernel's errseq gives it
 *   sync_file_range         a wait flag: as fdatasync; WRITE alone only
 *                           starts writeback, which the cache's flusher does
 *   syncfs, sync            the whole cache, then the kernel's
 *   ftruncate, truncate     through the cache when it holds the file (its
 *                           pages past the end go, dirty or not); truncate
 *                           through a writable description of ours when
 *                           there is one, so that no open/close drops the
 *                           program's record locks
 *   fallocate,              pc_fallocate (posix_fallocate falls back to
 *   posix_fallocate         growing the size where fallocate is refused)
 *   posix_fadvise,          pc_fadvise
 *   readahead
 *   stat family, statx      the kernel's answer, with st_size the cache's
 *                           while the cache holds the file open or dirty
 *   unlink, rename ...      the kernel's, then pc_cache_unlinked for a file
 *                           that lost its last name (its pages die
 *                           unwritten; a new file may reuse the inode)
 *   utimensat, utimes ...   the file written back first, or its later
 *                           writeback would move the times just set
 *
 * errno is the kernel's wherever the kernel answers; where the cache
 * answers, the errno the kernel would give (ftruncate on a read-only
 * description: EINVAL; fallocate: EBADF).  Calls on the shim's behalf
 * (shim_internal) see the kernel's sizes, unpatched.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "shim.h"

_Static_assert(sizeof(struct stat) == sizeof(struct stat64) &&
	       offsetof(struct stat, st_size) == offsetof(struct stat64, st_size),
	       "struct stat64 is struct stat on this ABI");

static pc_cache *cache_now(void)
{
	return shim_internal ? NULL : atomic_load(&shim_cache);
}

/* ------------------------------------------------------------------ */
/* Sync, size and allocation: what a managed fd gets.                 */

/* 0, or -1 with errno from a negative errno. */
static int status(int r)
{
	return r ? (int)shim_fail(r) : 0;
}

static int sync_fd(struct shim_ofd *o, bool data)
{
	return status(LIB(data ? pc_fdatasync(o->file) : pc_fsync(o->file)));
}

static int sync_range(struct shim_ofd *o, off64_t off, off64_t n, unsigned flags)
{
	const unsigned known = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			       SYNC_FILE_RANGE_WAIT_AFTER;

	if ((flags & ~known) || off < 0 || n < 0 || off > INT64_MAX - n)
		return status(-EINVAL);
	if (flags & (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER))
		return status(LIB(pc_fdatasync(o->file)));
	return 0;
}

/* syncfs, sync: the whole cache first. */
static void sync_cache(void)
{
	pc_cache *c = cache_now();

	if (c)
		LIB(pc_cache_sync(c));
}

SHIM_EXPORT void sync(void)
{
	sync_cache();
	REAL(sync)();
}

static int truncate_fd(struct shim_ofd *o, off_t len)
{
	if (len < 0 || !shim_can_write(atomic_load(&o->flags)))
		return status(-EINVAL);
	return status(LIB(pc_ftruncate(o->file, len)));
}

/*
 * truncate(2) of a file the cache holds: through a descriptor of ours.
 * SHIM_PASS for any other file (errno as it was): the kernel's.
 */
/*
 * A description of ours of the file @st names, open for writing, with a
 * reference; NULL if none.  A scan of the fd table: truncate(2) by path
 * is rare.
 */
static struct shim_ofd *writable_ofd_of(const struct stat *st)
{
	unsigned span = shim_fdt_span();

	for (unsigned fd = 0; fd < span; fd++) {
		struct shim_ofd *o = shim_ofd_get((int)fd);

		if (!o)
			continue;
		if (o->dev == st->st_dev && o->ino == st->st_ino &&
		    shim_can_write(atomic_load(&o->flags)))
			return o;
		shim_ofd_put(o);
	}
	return NULL;
}

/*
 * truncate(2) of a file the cache holds.  Through a writable description
 * of ours when there is one, opening nothing: a close(2) of any descriptor
 * of a file drops every record lock the process holds on it, so the open
 * and close below would drop the program's fcntl locks, which the kernel's
 * truncate keeps (the exerciser's workers lost their write lock so).  The
 * kernel's permission check then is faccessat's (EACCES, EROFS; a running
 * executable's ETXTBSY is not seen).  A process with no writable
 * description of the file holds no write lock on it; one holding read
 * locks through read-only ones still loses them.
 */
static int truncate_path(const char *path, off_t len)
{
	pc_cache *c = cache_now();
	struct shim_ofd *o;
	struct stat st;
	pc_file *f;
	int fd, r, saved = errno;

	if (!c || len < 0 || !path || REAL(stat)(path, &st) != 0 ||
	    LIB(pc_cache_stat(c, &st)) != 0) {
		errno = saved;
		return SHIM_PASS;
	}
	o = writable_ofd_of(&st);
	if (o) {
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
			r = -errno;
		else
			r = LIB(pc_ftruncate(o->file, len));
		shim_ofd_put(o);
		if (r)
			return (int)shim_fail(r);
		errno = saved;
		return 0;
	}
	fd = REAL(open)(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;	/* the kernel's EACCES, EISDIR, ETXTBSY ... */
	r = LIB(pc_open_fd(c, fd, O_WRONLY, &f));
	if (!r) {
		r = LIB(pc_ftruncate(f, len));
		LIB(pc_close(f));
	} else {
		r = REAL(ftruncate)(fd, len) ? -errno : 0;
	}
	REAL(close)(fd);
	if (r)
		return (int)shim_fail(r);
	errno = saved;
	return 0;
}

/* fallocate's negative errno. */
static int fallocate_managed(struct shim_ofd *o, int mode, off_t off, off_t len)
{
	if (!shim_can_write(atomic_load(&o->flags)))
		return -EBADF;
	return LIB(pc_fallocate(o->file, mode, off, len));
}

static int fallocate_fd(struct shim_ofd *o, int mode, off_t off, off_t len)
{
	return status(fallocate_managed(o, mode, off, len));
}

/* posix_fallocate returns the error, not -1. */
static int posix_fallocate_fd(struct shim_ofd *o, off_t off, off_t len)
{
	int r;

	if (off < 0 || len <= 0)
		return EINVAL;
	r = fallocate_managed(o, 0, off, len);
	if (r == -EOPNOTSUPP && off + len > LIB(pc_size(o->file)))
		r = LIB(pc_ftruncate(o->file, off + len));	/* at least the size */
	else if (r == -EOPNOTSUPP)
		r = 0;
	return -r;
}

/* posix_fadvise returns the error, not -1. */
static int fadvise_fd(struct shim_ofd *o, off_t off, off_t len, int advice)
{
	return -LIB(pc_fadvise(o->file, off, len, advice));
}

static ssize_t readahead_fd(struct shim_ofd *o, off64_t off, size_t count)
{
	return status(LIB(pc_fadvise(o->file, off,
				     (off_t)(count > INT64_MAX ? 0 : count),
				     POSIX_FADV_WILLNEED)));
}

/* ------------------------------------------------------------------ */
/* stat.                                                               */

void shim_patch_stat(struct stat *st)
{
	pc_cache *c = cache_now();

	if (c && S_ISREG(st->st_mode))
		LIB(pc_cache_stat(c, st));
}

/* fstat of a managed fd: the description's file; of others, by identity. */
static void patch_fd(int fd, struct stat *st)
{
	struct shim_ofd *o;

	if (shim_internal || !S_ISREG(st->st_mode))
		return;
	o = shim_ofd_get(fd);
	if (o) {
		st->st_size = LIB(pc_size(o->file));
		shim_ofd_put(o);
		return;
	}
	shim_patch_stat(st);
}

SHIM_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask,
		      struct statx *stx)
{
	int r = REAL(statx)(dirfd, path, flags, mask, stx);
	struct stat st;

	if (r || !cache_now() || !S_ISREG(stx->stx_mode) ||
	    !(stx->stx_mask & STATX_SIZE) || !(stx->stx_mask & STATX_INO))
		return r;
	memset(&st, 0, sizeof(st));
	st.st_dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
	st.st_ino = stx->stx_ino;
	st.st_mode = stx->stx_mode;
	st.st_size = (off_t)stx->stx_size;
	shim_patch_stat(&st);
	stx->stx_size = (uint64_t)st.st_size;
	return r;
}

/* ------------------------------------------------------------------ */
/* Names.                                                              */

/* Before a call that may remove a name: what the name is now. */
static bool before_unlink(int dirfd, const char *path, struct stat *st)
{
	int saved = errno;
	bool ok = cache_now() && path &&
		  REAL(fstatat)(dirfd, path, st, AT_SYMLINK_NOFOLLOW) == 0 &&
		  S_ISREG(st->st_mode);

	errno = saved;
	return ok;
}

static void after_unlink(const struct stat *st)
{
	pc_cache *c = cache_now();

	if (c)
		LIB(pc_cache_unlinked(c, st));
}

/*
 * Before a rename: the regular file at @new, which loses its name (not
 * when the rename exchanges, or @old is the same file under another name).
 */
static bool before_rename(int olddir, const char *old, int newdir,
			  const char *new, unsigned flags, struct stat *sn)
{
	bool known = !(flags & RENAME_EXCHANGE) && before_unlink(newdir, new, sn);
	int saved = errno;
	struct stat so;

	if (known && REAL(fstatat)(olddir, old, &so, AT_SYMLINK_NOFOLLOW) == 0 &&
	    so.st_dev == sn->st_dev && so.st_ino == sn->st_ino)
		known = false;	/* two names of one file: nothing goes */
	errno = saved;
	return known;
}

/* ------------------------------------------------------------------ */
/* Times: the file written back first.                                 */

static void before_times(int dirfd, const char *path, int flags)
{
	pc_cache *c = cache_now();
	int saved = errno, r;
	struct stat st;

	if (!c)
		return;
	r = path ? REAL(fstatat)(dirfd, path, &st, flags & AT_SYMLINK_NOFOLLOW)
		 : REAL(fstat)(dirfd, &st);
	if (r == 0 && S_ISREG(st.st_mode))
		LIB(pc_cache_sync_file(c, &st));
	errno = saved;
}

/* ------------------------------------------------------------------ */
/* The wrappers: syms.h's meta.c group (fsync ... futimesat).          */

/* unlink, unlinkat, remove, rename*: how says whether a regular file may
 * lose its last name (and what it is, in st). */
#define SHIM_WRAP_unlink(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		struct stat st; \
		bool known = how; \
		ret r = REAL(name) args; \
		if (r == 0 && known) \
			after_unlink(&st); \
		return r; \
	}

SHIM_SYMS_META(SHIM_WRAP)
