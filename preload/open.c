/*
 * open.c - opening and closing: the open family, close, close_range,
 * closefrom, dup, dup2, dup3 and fcntl.
 *
 * Open.  The kernel opens the file first, with the program's flags as
 * given (O_TRUNC included: pc_open_fd is told, and drops the cache's pages
 * of it unwritten), so the fd and every error are the kernel's.  Then
 * shim_opened decides, under files_lock:
 *   - not a regular file, O_PATH, O_DIRECTORY (and O_TMPFILE), a pseudo
 *     filesystem (proc, sys, cgroup ...), or caching stopped: not ours;
 *   - O_DIRECT: the file goes to the kernel for good (its managed
 *     descriptions handed off, written back and dropped first);
 *   - a file the kernel serves for now (a kfile: mapped, stdio, handed
 *     off at a private cache's fork or a spawn): this fd too;
 *   - otherwise pc_open_fd on the process's cache (made now if this is the
 *     first), and a new open-file description.
 * An exec'd image joining a shared cache adopts the fds it inherited the
 * same way (shim_adopt, from shared_pos.c), as descriptions whose offset
 * is the kernel's (shared-position: the image that exec'd, or the parent
 * that spawned it, may use them too).
 * Any failure along the way leaves the fd to the kernel: an open never
 * fails because of the cache.  Neither is fd 0, 1 or 2 ever managed (a
 * managed file dup'ed there is handed off): glibc's stdin, stdout and
 * stderr use those numbers with their own internal calls.  O_RDONLY|O_TRUNC (truncating without the
 * right to write through the cache) writes the file back first, before
 * the kernel cuts it, and is not managed.
 *
 * Close.  The entry is cleared before the kernel closes the fd (a new
 * open may get the number as soon as it is free), then its reference is
 * dropped.  The library's own fds refuse the program's close with EBADF,
 * as if not open; close_range and closefrom close around them; dup2 and
 * dup3 onto one of them fail with EBUSY.
 *
 * Dup.  dup, dup2, dup3 and F_DUPFD[_CLOEXEC] give the new fd the old
 * one's entry: the same open-file description, offset and status flags,
 * as the kernel shares its own.  F_SETFL keeps O_APPEND in step; setting
 * O_DIRECT turns the file over to the kernel first.  F_SETLK and F_SETLKW
 * on a managed fd call pc_lock_prepare first, so that the library opens
 * no descriptor of the file while the program holds record locks on it.
 *
 * Calls made on the shim's behalf (shim_internal) go straight to libc;
 * the fds they make are marked as the library's, and their closes unmark.
 */
#include <linux/magic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "shim.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/*
 * Filesystems whose regular files are not data on a device.  Each of them
 * is mounted without one (an anonymous device, major 0), so a file of a
 * block device's filesystem is none of them without an fstatfs(2).
 */
static bool pseudo_fs(int fd, const struct stat *st)
{
	static const long magic[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC,
		SECURITYFS_MAGIC, 0x62656570 /* configfs */, BPF_FS_MAGIC,
		EFIVARFS_MAGIC, PSTOREFS_MAGIC, HUGETLBFS_MAGIC, DEVPTS_SUPER_MAGIC, SELINUX_MAGIC,
		BINFMTFS_MAGIC, NSFS_MAGIC, 0x65735543 /* fusectl */,
	};
	struct statfs sf;

	if (major(st->st_dev) != 0)
		return false;
	if (fstatfs(fd, &sf) != 0)
		return true;
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((long)sf.f_type == magic[i])
			return true;
	return false;
}

/* What pc_open_fd is told of the program's flags. */
static int cache_flags(int flags)
{
	return (flags & (O_ACCMODE | O_SYNC | O_DSYNC)) |
	       (shim_can_write(flags) ? flags & O_TRUNC : 0);
}

/* files_lock held: the entry the new @fd of @st gets; @opened is counted
 * when it is a new description (managed_opens, or exec_adopted). */
static uintptr_t decide_locked(int fd, int flags, const struct stat *st,
			       enum shim_counter opened)
{
	struct shim_kfile *k = shim_kfile_find_locked(st->st_dev, st->st_ino);
	struct shim_ofd *o;
	pc_file *f;
	pc_cache *c;
	int r;

	if (flags & O_DIRECT) {
		bool first = !k || !k->permanent;

		k = shim_handoff_file_locked(st->st_dev, st->st_ino, true);
		if (!k)
			return SHIM_E_NONE;
		k->permanent = true;
		if (first)
			SHIM_INC(direct_handoffs);
		return (uintptr_t)k | SHIM_E_KFILE;
	}
	if (k) {
		atomic_fetch_add(&k->refs, 1);
		SHIM_INC(kernel_opens);
		return (uintptr_t)k | SHIM_E_KFILE;
	}
	c = shim_cache_get();
	if (c && LIB(pc_cache_broken(c)))
		c = shim_cache_broken_locked();	/* NULL: the kernel's now */
	if (!c) {
		SHIM_INC(passthrough_opens);
		return SHIM_E_NONE;
	}
	r = LIB(pc_open_fd_stat(c, fd, cache_flags(flags), st, &f));
	if (r) {
		SHIM_INC(passthrough_opens);
		if (r != -EACCES && r != -EPERM)
			SHIM_INC(cache_errors);
		return SHIM_E_NONE;
	}
	o = shim_ofd_new(f, st, flags);
	if (!o) {
		LIB(pc_close(f));
		SHIM_INC(cache_errors);
		return SHIM_E_NONE;
	}
	shim_count(opened, 1);
	return (uintptr_t)o;
}

/* Is @fd, opened with @flags, one the shim may manage?  *@st its fstat. */
static bool manageable(int fd, int flags, struct stat *st)
{
	return fd > STDERR_FILENO && !(flags & (O_PATH | O_DIRECTORY)) &&
	       shim_active() && REAL(fstat)(fd, st) == 0 && S_ISREG(st->st_mode) &&
	       !pseudo_fs(fd, st) && !((flags & O_TRUNC) && !shim_can_write(flags));
}

void shim_opened(int fd, int flags)
{
	int saved = errno;
	struct stat st;

	if (!manageable(fd, flags, &st)) {
		shim_fdt_set(fd, SHIM_E_NONE);	/* a stale entry goes */
		errno = saved;
		return;
	}
	pthread_mutex_lock(&shim_files_lock);
	shim_fdt_set(fd, decide_locked(fd, flags, &st, SHIM_C_managed_opens));
	pthread_mutex_unlock(&shim_files_lock);
	errno = saved;
}

bool shim_adopt(int fd, int flags)
{
	int saved = errno;
	struct stat st;
	uintptr_t e;

	flags &= ~(O_CREAT | O_EXCL | O_TRUNC);	/* opened long ago */
	if (!manageable(fd, flags, &st))
		return false;
	pthread_mutex_lock(&shim_files_lock);
	e = decide_locked(fd, flags, &st, SHIM_C_exec_adopted);
	if (shim_e_ofd(e))	/* its offset the kernel's, shared already */
		atomic_store(&((struct shim_ofd *)e)->kpos, true);
	shim_fdt_set(fd, e);
	pthread_mutex_unlock(&shim_files_lock);
	errno = saved;
	return shim_e_ofd(e);
}

/* O_RDONLY|O_TRUNC: the kernel will cut a file the cache may hold dirty. */
static void before_trunc(int dirfd, const char *path, int flags)
{
	pc_cache *c = atomic_load(&shim_cache);
	int saved = errno;
	struct stat st;

	if (c && (flags & O_TRUNC) && !shim_can_write(flags) &&
	    REAL(fstatat)(dirfd, path, &st, 0) == 0)
		LIB(pc_cache_sync_file(c, &st));
	errno = saved;
}

static void mark_lib(int fd)
{
	int saved = errno;

	shim_fdt_set(fd, SHIM_E_LIB);
	errno = saved;
}

static int opened(int fd, int flags)
{
	if (fd >= 0) {
		if (shim_internal)
			mark_lib(fd);
		else
			shim_opened(fd, flags);
	}
	return fd;
}

#define MODE_ARG(flags, mode) \
	do { \
		if ((flags) & O_CREAT || ((flags) & __O_TMPFILE) == __O_TMPFILE) { \
			va_list ap; \
			va_start(ap, flags); \
			mode = (mode_t)va_arg(ap, int); \
			va_end(ap); \
		} \
	} while (0)

/* ------------------------------------------------------------------ */
/* Close.                                                              */

SHIM_EXPORT int close(int fd)
{
	uintptr_t e = shim_fdt_get(fd);
	int r, saved;

	if (e == SHIM_E_NONE)
		return REAL(close)(fd);
	if (e == SHIM_E_LIB && !shim_internal) {
		errno = EBADF;	/* not the program's to close */
		return -1;
	}
	e = shim_fdt_take(fd);
	r = REAL(close)(fd);
	saved = errno;
	shim_e_put(e);
	errno = saved;
	return r;
}

/* close_range(2) on [lo, hi], none of the library's fds in it. */
static int close_span(unsigned lo, unsigned hi, int flags, int *first_err)
{
	int r;

	if (lo > hi)
		return 0;
	r = REAL(close_range)(lo, hi, flags);
	if (r && !*first_err)
		*first_err = errno;
	return r;
}

SHIM_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
	unsigned span = shim_fdt_span(), start = lo, end;
	bool cloexec = flags & CLOSE_RANGE_CLOEXEC;
	int err = 0, saved = errno;

	if (lo > hi || (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) ||
	    shim_internal || lo >= span)
		return REAL(close_range)(lo, hi, flags);
	end = hi < span ? hi : span - 1;
	for (unsigned fd = lo; fd <= end; fd++) {
		uintptr_t e = shim_fdt_get((int)fd);

		if (e == SHIM_E_NONE || (cloexec && e != SHIM_E_LIB))
			continue;
		if (fd > start)
			close_span(start, fd - 1, flags, &err);
		start = fd + 1;
		if (e == SHIM_E_LIB)
			continue;	/* the library's: left open */
		e = shim_fdt_take((int)fd);
		close_span(fd, fd, flags, &err);
		shim_e_put(e);
	}
	if (start <= hi)
		close_span(start, hi, flags, &err);
	if (err) {
		errno = err;
		return -1;
	}
	errno = saved;
	return 0;
}

SHIM_EXPORT void closefrom(int lo)
{
	if (lo < 0)
		lo = 0;
	if (close_range((unsigned)lo, ~0u, 0) != 0)
		REAL(closefrom)(lo);	/* its own fallback, as without us */
}

/* ------------------------------------------------------------------ */
/* Dup.                                                                */

/*
 * A managed description now also on fd 0, 1 or 2: glibc's stdin, stdout
 * and stderr write to those numbers with their own calls, behind us, so
 * the file goes to the kernel (as for any stdio stream).
 */
/* The file of @fd if it is managed (false if not). */
static bool managed_file(int fd, dev_t *dev, ino_t *ino)
{
	struct shim_ofd *o = shim_ofd_get(fd);

	if (!o)
		return false;
	*dev = o->dev;
	*ino = o->ino;
	shim_ofd_put(o);
	return true;
}

static void std_handoff(int fd)
{
	struct shim_kfile *k;
	dev_t dev;
	ino_t ino;

	if (!managed_file(fd, &dev, &ino))
		return;
	/* In a shared cache its pages go too: other processes may cache it,
	 * and the kernel's writes on it must not lie behind their pages. */
	pthread_mutex_lock(&shim_files_lock);
	k = shim_handoff_file_locked(dev, ino, shim_cache_shared());
	if (k)
		shim_kfile_put(k);
	pthread_mutex_unlock(&shim_files_lock);
	SHIM_INC(stdio_handoffs);
}

static int dupped(int oldfd, int newfd)
{
	int saved = errno;

	if (newfd >= 0 && newfd != oldfd) {
		if (shim_internal) {
			shim_fdt_set(newfd, SHIM_E_LIB);
		} else {
			shim_fdt_dup(oldfd, newfd);
			if (newfd <= STDERR_FILENO)
				std_handoff(newfd);
		}
	}
	errno = saved;
	return newfd;
}

/* dup2/dup3 onto a library fd: the program thinks the number is free. */
static bool onto_library(int oldfd, int newfd)
{
	if (oldfd == newfd || shim_internal ||
	    shim_fdt_get(newfd) != SHIM_E_LIB)
		return false;
	errno = EBUSY;
	return true;
}

SHIM_EXPORT int dup(int oldfd)
{
	return dupped(oldfd, REAL(dup)(oldfd));
}

SHIM_EXPORT int dup2(int oldfd, int newfd)
{
	if (onto_library(oldfd, newfd))
		return -1;
	return dupped(oldfd, REAL(dup2)(oldfd, newfd));
}

SHIM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (onto_library(oldfd, newfd))
		return -1;
	return dupped(oldfd, REAL(dup3)(oldfd, newfd, flags));
}

/* F_SETFL on a managed fd: O_DIRECT hands the file over first. */
static void setfl_before(int fd, long arg)
{
	dev_t dev;
	ino_t ino;

	if (managed_file(fd, &dev, &ino) && (arg & O_DIRECT))
		shim_handoff_for_good(dev, ino, SHIM_C_direct_handoffs);
}

static void setfl_after(int fd, long arg)
{
	struct shim_ofd *o = shim_ofd_get(fd);
	int fl;

	if (!o)
		return;
	fl = atomic_load(&o->flags);
	while (!atomic_compare_exchange_weak(&o->flags, &fl,
					     (fl & ~O_APPEND) | (int)(arg & O_APPEND)))
		;
	shim_ofd_put(o);
}

/*
 * A record lock on a managed fd: the library opens now what it would
 * open later (a descriptor's open closes one of the file, and any close
 * drops the process's record locks on it: pc_lock_prepare).
 */
static void lock_before(int fd)
{
	struct shim_ofd *o = shim_ofd_get(fd);

	if (!o)
		return;
	(void)LIB(pc_lock_prepare(o->file));
	shim_ofd_put(o);
}

/* fcntl, fcntl64 (@real: which of them is libc's). */
static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, long arg)
{
	int r, saved = errno;

	if (cmd == F_SETFL && !shim_internal)
		setfl_before(fd, arg);
	if ((cmd == F_SETLK || cmd == F_SETLKW) && !shim_internal)
		lock_before(fd);
	errno = saved;
	r = real(fd, cmd, arg);
	if (r < 0)
		return r;
	saved = errno;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		dupped(fd, r);
	else if (cmd == F_SETFL && !shim_internal)
		setfl_after(fd, arg);
	errno = saved;
	return r;
}

/* ------------------------------------------------------------------ */
/* The wrappers: syms.h's open.c group (open ... fcntl64).             */

/* open, open64, openat, openat64: how is the directory. */
#define SHIM_WRAP_open(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		mode_t mode = 0; \
		MODE_ARG(flags, mode); \
		if (!shim_internal) \
			before_trunc(how, path, flags); \
		return opened(REAL(name) args, flags); \
	}

/* The fortified opens (no mode: they refuse O_CREAT themselves). */
#define SHIM_WRAP_open_2(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		if (!shim_internal) \
			before_trunc(how, path, flags); \
		return opened(REAL(name) args, flags); \
	}

#define SHIM_WRAP_creat(ret, name, params, args, ...) \
	SHIM_EXPORT ret name params \
	{ \
		return opened(REAL(name) args, O_CREAT | O_WRONLY | O_TRUNC); \
	}

/* The argument: int or pointer, read as a long as libc reads it. */
#define SHIM_WRAP_fcntl(ret, name, params, args, ...) \
	SHIM_EXPORT ret name params \
	{ \
		va_list ap; \
		long arg; \
		va_start(ap, cmd); \
		arg = va_arg(ap, long); \
		va_end(ap); \
		return do_fcntl(REAL(name), fd, cmd, arg); \
	}

SHIM_SYMS_OPEN(SHIM_WRAP)
