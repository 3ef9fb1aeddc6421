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
 *                           pages past the end go, dirty or not)
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
/* Sync.                                                               */

static int fsync_common(int fd, bool data)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return data ? REAL(fdatasync)(fd) : REAL(fsync)(fd);
	r = LIB(data ? pc_fdatasync(o->file) : pc_fsync(o->file));
	shim_ofd_put(o);
	return r ? (int)shim_fail(r) : 0;
}

SHIM_EXPORT int fsync(int fd)
{
	return fsync_common(fd, false);
}

SHIM_EXPORT int fdatasync(int fd)
{
	return fsync_common(fd, true);
}

SHIM_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags)
{
	const unsigned known = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			       SYNC_FILE_RANGE_WAIT_AFTER;
	struct shim_ofd *o = shim_ofd_get(fd);
	int r = 0;

	if (!o)
		return REAL(sync_file_range)(fd, off, n, flags);
	if ((flags & ~known) || off < 0 || n < 0 || off > INT64_MAX - n)
		r = -EINVAL;
	else if (flags & (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER))
		r = LIB(pc_fdatasync(o->file));
	shim_ofd_put(o);
	return r ? (int)shim_fail(r) : 0;
}

SHIM_EXPORT int syncfs(int fd)
{
	pc_cache *c = cache_now();

	if (c)
		LIB(pc_cache_sync(c));
	return REAL(syncfs)(fd);
}

SHIM_EXPORT void sync(void)
{
	pc_cache *c = cache_now();

	if (c)
		LIB(pc_cache_sync(c));
	REAL(sync)();
}

/* ------------------------------------------------------------------ */
/* Size and allocation.                                                */

static int ftruncate_common(int fd, off_t len, bool is64)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return is64 ? REAL(ftruncate64)(fd, len) : REAL(ftruncate)(fd, len);
	if (len < 0 || !shim_can_write(atomic_load(&o->flags)))
		r = -EINVAL;
	else
		r = LIB(pc_ftruncate(o->file, len));
	shim_ofd_put(o);
	return r ? (int)shim_fail(r) : 0;
}

SHIM_EXPORT int ftruncate(int fd, off_t len)
{
	return ftruncate_common(fd, len, false);
}

SHIM_EXPORT int ftruncate64(int fd, off64_t len)
{
	return ftruncate_common(fd, len, true);
}

/* truncate(2) of a file the cache holds: through a descriptor of ours. */
static int truncate_common(const char *path, off_t len, bool is64)
{
	pc_cache *c = cache_now();
	struct stat st;
	pc_file *f;
	int fd, r, saved = errno;

	if (!c || len < 0 || !path || REAL(stat)(path, &st) != 0 ||
	    LIB(pc_cache_stat(c, &st)) != 0) {
		errno = saved;
		return is64 ? REAL(truncate64)(path, len) : REAL(truncate)(path, len);
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

SHIM_EXPORT int truncate(const char *path, off_t len)
{
	return truncate_common(path, len, false);
}

SHIM_EXPORT int truncate64(const char *path, off64_t len)
{
	return truncate_common(path, len, true);
}

static int fallocate_managed(struct shim_ofd *o, int mode, off_t off, off_t len)
{
	if (!shim_can_write(atomic_load(&o->flags)))
		return -EBADF;
	return LIB(pc_fallocate(o->file, mode, off, len));
}

SHIM_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(fallocate)(fd, mode, off, len);
	r = fallocate_managed(o, mode, off, len);
	shim_ofd_put(o);
	return r ? (int)shim_fail(r) : 0;
}

SHIM_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(fallocate64)(fd, mode, off, len);
	r = fallocate_managed(o, mode, off, len);
	shim_ofd_put(o);
	return r ? (int)shim_fail(r) : 0;
}

/* posix_fallocate returns the error, not -1. */
static int posix_fallocate_managed(struct shim_ofd *o, off_t off, off_t len)
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

SHIM_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(posix_fallocate)(fd, off, len);
	r = posix_fallocate_managed(o, off, len);
	shim_ofd_put(o);
	return r;
}

SHIM_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(posix_fallocate64)(fd, off, len);
	r = posix_fallocate_managed(o, off, len);
	shim_ofd_put(o);
	return r;
}

SHIM_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(posix_fadvise)(fd, off, len, advice);
	r = LIB(pc_fadvise(o->file, off, len, advice));
	shim_ofd_put(o);
	return -r;
}

SHIM_EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int advice)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(posix_fadvise64)(fd, off, len, advice);
	r = LIB(pc_fadvise(o->file, off, len, advice));
	shim_ofd_put(o);
	return -r;
}

SHIM_EXPORT ssize_t readahead(int fd, off64_t off, size_t count)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int r;

	if (!o)
		return REAL(readahead)(fd, off, count);
	r = LIB(pc_fadvise(o->file, off, (off_t)(count > INT64_MAX ? 0 : count),
			   POSIX_FADV_WILLNEED));
	shim_ofd_put(o);
	return r ? shim_fail(r) : 0;
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

#define STAT_PATH(name, ...) \
	SHIM_EXPORT int name(__VA_ARGS__) \
	{ \
		int r = REAL(name)(STAT_ARGS); \
		if (r == 0) \
			shim_patch_stat((struct stat *)st); \
		return r; \
	}

#define STAT_ARGS path, st
STAT_PATH(stat, const char *path, struct stat *st)
STAT_PATH(stat64, const char *path, struct stat64 *st)
STAT_PATH(lstat, const char *path, struct stat *st)
STAT_PATH(lstat64, const char *path, struct stat64 *st)
#undef STAT_ARGS
#define STAT_ARGS dirfd, path, st, flags
STAT_PATH(fstatat, int dirfd, const char *path, struct stat *st,
	  int flags)
STAT_PATH(fstatat64, int dirfd, const char *path,
	  struct stat64 *st, int flags)
#undef STAT_ARGS
#define STAT_ARGS ver, path, st
STAT_PATH(__xstat, int ver, const char *path, struct stat *st)
STAT_PATH(__xstat64, int ver, const char *path, struct stat64 *st)
STAT_PATH(__lxstat, int ver, const char *path, struct stat *st)
STAT_PATH(__lxstat64, int ver, const char *path,
	  struct stat64 *st)
#undef STAT_ARGS
#define STAT_ARGS ver, dirfd, path, st, flags
STAT_PATH(__fxstatat, int ver, int dirfd, const char *path,
	  struct stat *st, int flags)
STAT_PATH(__fxstatat64, int ver, int dirfd, const char *path,
	  struct stat64 *st, int flags)
#undef STAT_ARGS

SHIM_EXPORT int fstat(int fd, struct stat *st)
{
	int r = REAL(fstat)(fd, st);

	if (r == 0)
		patch_fd(fd, st);
	return r;
}

SHIM_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int r = REAL(fstat64)(fd, st);

	if (r == 0)
		patch_fd(fd, (struct stat *)st);
	return r;
}

SHIM_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	int r = REAL(__fxstat)(ver, fd, st);

	if (r == 0)
		patch_fd(fd, st);
	return r;
}

SHIM_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int r = REAL(__fxstat64)(ver, fd, st);

	if (r == 0)
		patch_fd(fd, (struct stat *)st);
	return r;
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

SHIM_EXPORT int unlink(const char *path)
{
	struct stat st;
	bool known = before_unlink(AT_FDCWD, path, &st);
	int r = REAL(unlink)(path);

	if (r == 0 && known)
		after_unlink(&st);
	return r;
}

SHIM_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	struct stat st;
	bool known = !(flags & AT_REMOVEDIR) && before_unlink(dirfd, path, &st);
	int r = REAL(unlinkat)(dirfd, path, flags);

	if (r == 0 && known)
		after_unlink(&st);
	return r;
}

SHIM_EXPORT int remove(const char *path)
{
	struct stat st;
	bool known = before_unlink(AT_FDCWD, path, &st);
	int r = REAL(remove)(path);

	if (r == 0 && known)
		after_unlink(&st);
	return r;
}

/* A rename over a regular file: that file lost a name. */
static int rename_common(int olddir, const char *old, int newdir,
			 const char *new, unsigned flags, int r_kind)
{
	struct stat sn, so;
	bool known = !(flags & RENAME_EXCHANGE) && before_unlink(newdir, new, &sn);
	int r, saved;

	if (known) {
		saved = errno;
		if (REAL(fstatat)(olddir, old, &so, AT_SYMLINK_NOFOLLOW) == 0 &&
		    so.st_dev == sn.st_dev && so.st_ino == sn.st_ino)
			known = false;	/* two names of one file: nothing goes */
		errno = saved;
	}
	r = r_kind == 0 ? REAL(rename)(old, new)
	    : r_kind == 1 ? REAL(renameat)(olddir, old, newdir, new)
			  : REAL(renameat2)(olddir, old, newdir, new, flags);
	if (r == 0 && known)
		after_unlink(&sn);
	return r;
}

SHIM_EXPORT int rename(const char *old, const char *new)
{
	return rename_common(AT_FDCWD, old, AT_FDCWD, new, 0, 0);
}

SHIM_EXPORT int renameat(int olddir, const char *old, int newdir, const char *new)
{
	return rename_common(olddir, old, newdir, new, 0, 1);
}

SHIM_EXPORT int renameat2(int olddir, const char *old, int newdir,
			  const char *new, unsigned flags)
{
	return rename_common(olddir, old, newdir, new, flags, 2);
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

SHIM_EXPORT int utimensat(int dirfd, const char *path,
			  const struct timespec times[2], int flags)
{
	before_times(dirfd, path, flags);
	return REAL(utimensat)(dirfd, path, times, flags);
}

SHIM_EXPORT int futimens(int fd, const struct timespec times[2])
{
	before_times(fd, NULL, 0);
	return REAL(futimens)(fd, times);
}

SHIM_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
	before_times(AT_FDCWD, path, 0);
	return REAL(utimes)(path, tv);
}

SHIM_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	before_times(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW);
	return REAL(lutimes)(path, tv);
}

SHIM_EXPORT int futimes(int fd, const struct timeval tv[2])
{
	before_times(fd, NULL, 0);
	return REAL(futimes)(fd, tv);
}

SHIM_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	before_times(dirfd, path, 0);
	return REAL(futimesat)(dirfd, path, tv);
}

SHIM_EXPORT int utime(const char *path, const struct utimbuf *times)
{
	before_times(AT_FDCWD, path, 0);
	return REAL(utime)(path, times);
}
