/*
 * handoff.c - what the cache cannot serve, handed to the kernel correctly.
 *
 *   mmap of a file        the kernel maps it: the file's managed
 *                         descriptions are handed off (dirty pages written
 *                         back, pages dropped, offsets on the kernel's fds)
 *                         and the file is the kernel's for the rest of the
 *                         process (a permanent kfile; counted)
 *   fopen, freopen,       glibc's stdio reads and writes with its own
 *   fdopen                internal calls: the file is handed off first and
 *                         stays the kernel's while a FILE* has it (the
 *                         stream's fd holds its kfile; fclose lets go)
 *   dprintf, vdprintf     formatted, then written through our write
 *   ioctl                 whatever the kernel does with the data: written
 *                         back and dropped before (and the size read again
 *                         after); FIONREAD is answered from the cache, and
 *                         the ioctls that touch no data pass straight on
 *   dlopen of a path      that file written back first
 *   fork, vfork           vfork is fork (the child must not share our
 *                         tables); the fork handlers (process.c) make
 *                         every description shared-position in a shared
 *                         cache, or hand it off in a private one
 *   posix_spawn[p],       no fork handler runs for them: in a shared
 *   system, popen         cache, a program under this shim inherits the
 *                         descriptions (not close-on-exec) cached, as
 *                         shared-position ones (shared_pos.c); else the
 *                         cache is written back and they are handed off;
 *                         system and pclose, which wait for the command,
 *                         then revalidate those files (shared_pos.c)
 *   the exec family       the same, and the counters flushed: the new
 *                         image is a new process for the stats
 *   _exit, _Exit          the exit flush (process.c) first
 *
 * Each hand-off takes files_lock; none holds fdt_lock across a library
 * call.  Programs calling clone(2) or the system calls directly are not
 * seen; io_uring submitted by the program itself is not supported.
 */
#include <dlfcn.h>
#include <linux/fs.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "shim.h"

/* Before mmap of a regular file: the file to the kernel for good. */
static void map_before(int flags, int fd)
{
	int saved = errno;
	struct stat st;

	if ((flags & MAP_ANONYMOUS) || fd < 0 || shim_internal ||
	    shim_fdt_get(fd) == SHIM_E_LIB)
		return;
	if (REAL(fstat)(fd, &st) == 0 && S_ISREG(st.st_mode))
		shim_handoff_for_good(st.st_dev, st.st_ino, SHIM_C_mmap_handoffs);
	errno = saved;
}

/* ------------------------------------------------------------------ */
/* stdio.                                                              */

/* Before a stream opens @path: the file to the kernel, held (returned). */
static struct shim_kfile *stdio_before(int dirfd, const char *path)
{
	struct shim_kfile *k = NULL;
	int saved = errno;
	struct stat st;

	if (path && REAL(fstatat)(dirfd, path, &st, 0) == 0 && S_ISREG(st.st_mode)) {
		pthread_mutex_lock(&shim_files_lock);
		k = shim_handoff_file_locked(st.st_dev, st.st_ino, true);
		pthread_mutex_unlock(&shim_files_lock);
	}
	errno = saved;
	return k;
}

/* After: the stream's fd holds its file's kfile; the early hold goes. */
static FILE *stdio_after(FILE *fp, struct shim_kfile *held)
{
	int saved = errno, fd = fp ? fileno(fp) : -1;
	struct shim_kfile *k = NULL;
	struct stat st;

	if (fd >= 0 && REAL(fstat)(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		pthread_mutex_lock(&shim_files_lock);
		k = shim_kfile_get_locked(st.st_dev, st.st_ino);
		pthread_mutex_unlock(&shim_files_lock);
		SHIM_INC(stdio_handoffs);
	}
	if (fd >= 0)
		shim_fdt_set(fd, k ? (uintptr_t)k | SHIM_E_KFILE : SHIM_E_NONE);
	if (held)
		shim_kfile_put(held);
	errno = saved;
	return fp;
}

/* freopen closes the stream's old fd itself: its entry goes first. */
static void stdio_drop(FILE *fp)
{
	int fd = fp ? fileno(fp) : -1;

	if (fd >= 0)
		shim_e_put(shim_fdt_take(fd));
}

SHIM_EXPORT FILE *fdopen(int fd, const char *mode)
{
	struct shim_kfile *held = NULL;
	int saved = errno;
	struct stat st;

	if (!shim_internal && shim_fdt_get(fd) != SHIM_E_LIB &&
	    REAL(fstat)(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		pthread_mutex_lock(&shim_files_lock);
		held = shim_handoff_file_locked(st.st_dev, st.st_ino, true);
		pthread_mutex_unlock(&shim_files_lock);
	}
	errno = saved;
	if (shim_internal)
		return REAL(fdopen)(fd, mode);
	return stdio_after(REAL(fdopen)(fd, mode), held);
}

SHIM_EXPORT int fclose(FILE *fp)
{
	int fd = fp && !shim_internal ? fileno(fp) : -1;
	uintptr_t e = fd >= 0 ? shim_fdt_take(fd) : SHIM_E_NONE;
	int r = REAL(fclose)(fp), saved = errno;

	shim_e_put(e);
	errno = saved;
	return r;
}

/* dprintf writes with glibc's own calls: on a managed fd, ours instead. */
SHIM_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	char *s = NULL;
	int n;

	if (!shim_e_ofd(shim_fdt_get(fd)))
		return REAL(vdprintf)(fd, fmt, ap);
	n = vasprintf(&s, fmt, ap);
	if (n >= 0 && write(fd, s, (size_t)n) != n)
		n = -1;
	free(s);
	return n;
}

SHIM_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vdprintf(fd, fmt, ap);
	va_end(ap);
	return n;
}

/* ------------------------------------------------------------------ */
/* ioctl.                                                              */

/* Requests that neither read nor change a regular file's data. */
static bool data_free(unsigned long req)
{
	switch (req) {
	case FS_IOC_GETVERSION: case FS_IOC_GETFLAGS: case FS_IOC_SETFLAGS:
	case FS_IOC_FSGETXATTR: case FS_IOC_FSSETXATTR: case FIGETBSZ:
	case FIONBIO: case FIOASYNC: case FIOCLEX: case FIONCLEX:
	case TCGETS: case TIOCGWINSZ: case FS_IOC_GETFSLABEL:
		return true;
	default:
		return false;
	}
}

SHIM_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct shim_ofd *o;
	va_list ap;
	void *arg;
	int r, saved;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	o = shim_internal ? NULL : shim_ofd_get(fd);
	if (!o || data_free(req))
		goto pass;
	if (req == FIONREAD) {	/* the bytes from the offset to the end */
		off_t size = LIB(pc_size(o->file)), pos;

		pthread_mutex_lock(&o->pos_lock);
		pos = atomic_load(&o->kpos) ? REAL(lseek)(fd, 0, SEEK_CUR) : o->pos;
		pthread_mutex_unlock(&o->pos_lock);
		*(int *)arg = size > pos ? (int)(size - pos > INT32_MAX ? INT32_MAX
								     : size - pos) : 0;
		shim_ofd_put(o);
		return 0;
	}
	if (req == FICLONE || req == FICLONERANGE) {	/* the source's data */
		int src = req == FICLONE ? (int)(long)arg
					 : (int)((struct file_clone_range *)arg)->src_fd;
		pc_cache *c = atomic_load(&shim_cache);
		struct stat st;

		saved = errno;
		if (c && REAL(fstat)(src, &st) == 0)
			LIB(pc_cache_sync_file(c, &st));
		errno = saved;
	}
	SHIM_INC(ioctl_invalidations);
	LIB(pc_invalidate(o->file));
	r = REAL(ioctl)(fd, req, arg);
	LIB(pc_invalidate(o->file));	/* what it changed, and the size */
	shim_ofd_put(o);
	return r;
pass:
	if (o)
		shim_ofd_put(o);
	return REAL(ioctl)(fd, req, arg);
}

/* ------------------------------------------------------------------ */
/* dlopen.                                                             */

SHIM_EXPORT void *dlopen(const char *file, int mode)
{
	pc_cache *c = shim_internal ? NULL : atomic_load(&shim_cache);
	int saved = errno;
	struct stat st;

	if (c && file && strchr(file, '/') && REAL(stat)(file, &st) == 0)
		LIB(pc_cache_sync_file(c, &st));
	errno = saved;
	return REAL(dlopen)(file, mode);
}

/* ------------------------------------------------------------------ */
/* Processes.                                                          */

SHIM_EXPORT pid_t fork(void)
{
	return REAL(fork)();	/* the fork handlers do the work */
}

SHIM_EXPORT pid_t vfork(void)
{
	return fork();
}

/*
 * A child will run @path (searched in $PATH if @search; NULL: unknown)
 * with the environment @envp (NULL: ours) and our inheritable fds; @exec:
 * this process becomes it; @actions: posix_spawn's file actions.  In a
 * shared cache, with a program that runs under this shim in it, the
 * descriptions it inherits become shared-position and stay cached
 * (shared_pos.c); else they are handed to the kernel, written back.
 */
static void before_spawn(bool exec, const char *path, bool search,
			 char *const envp[], bool actions)
{
	int saved = errno;
	bool cached;

	if (shim_internal)
		return;
	if (atomic_load(&shim_cache)) {
		cached = shim_cache_shared() && !actions &&
			 shim_spawn_cached(path, search, envp);
		pthread_mutex_lock(&shim_files_lock);
		if (cached) {
			shim_kpos_all_locked(false);
		} else {
			shim_handoff_all_locked(false);
			SHIM_INC(exec_handoffs);
		}
		pthread_mutex_unlock(&shim_files_lock);
	}
	if (exec)	/* after the hand-off: it is counted */
		shim_stats_flush(false);
	errno = saved;
}

/* fexecve, execveat: the program's path, where one can be told. */
static const char *exec_path(int fd, const char *path, char *buf, size_t size)
{
	if (path && path[0] == '/')
		return path;
	if (fd >= 0 && (!path || !*path)) {
		snprintf(buf, size, "/proc/self/fd/%d", fd);
		return buf;
	}
	return NULL;	/* relative to a directory fd: not looked at */
}

static void before_fexec(int fd, const char *path, char *const envp[])
{
	char buf[64];

	before_spawn(true, exec_path(fd, path, buf, sizeof(buf)), false, envp,
		     false);
}

SHIM_EXPORT int system(const char *cmd)
{
	int r, saved;

	if (!cmd)
		return REAL(system)(cmd);
	before_spawn(false, "/bin/sh", false, NULL, false);
	r = REAL(system)(cmd);
	saved = errno;
	if (!shim_internal)
		shim_kpos_revalidate();	/* what it wrote through the kernel */
	errno = saved;
	return r;
}

/* pclose waits for popen's command: as after system. */
SHIM_EXPORT int pclose(FILE *fp)
{
	int r = REAL(pclose)(fp), saved = errno;

	if (!shim_internal)
		shim_kpos_revalidate();
	errno = saved;
	return r;
}

/*
 * execl, execlp, execle: their arguments as an array (malloc'd: exec
 * replaces the process, or fails and the caller frees), and execle's envp.
 */
static char **list_args(const char *arg0, va_list ap, char ***envp)
{
	size_t n = 1;
	char **argv;
	va_list c;

	va_copy(c, ap);
	while (va_arg(c, char *))
		n++;
	va_end(c);
	argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)	/* the last is the NULL */
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

/* execl, execlp, execle: their list as an array, then ours of @how. */
enum exec_list { EXEC_V, EXEC_VP, EXEC_VE };

static int exec_list(enum exec_list how, const char *path, const char *arg,
		     va_list ap)
{
	char **argv, **envp = NULL;
	int r;

	argv = list_args(arg, ap, how == EXEC_VE ? &envp : NULL);
	if (!argv)
		return (int)shim_fail(-ENOMEM);
	r = how == EXEC_V ? execv(path, argv)
	  : how == EXEC_VP ? execvp(path, argv) : execve(path, argv, envp);
	free(argv);
	return r;
}

/* ------------------------------------------------------------------ */
/* The wrappers: syms.h's handoff.c group (mmap ... _Exit).            */

/* fopen, fopen64, freopen, freopen64: how is the stream being replaced. */
#define SHIM_WRAP_stdio(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		struct shim_kfile *held; \
		if (shim_internal) \
			return REAL(name) args; \
		held = stdio_before(AT_FDCWD, path); \
		stdio_drop(how); \
		return stdio_after(REAL(name) args, held); \
	}

#define SHIM_WRAP_execl(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		va_list ap; \
		int r; \
		va_start(ap, arg); \
		r = exec_list(how, path, arg, ap); \
		va_end(ap); \
		return r; \
	}

/* _exit, _Exit: the exit flush (process.c) first. */
#define SHIM_WRAP_exit(ret, name, params, args, ...) \
	SHIM_EXPORT ret name params \
	{ \
		if (!shim_internal) \
			shim_exit_flush(); \
		REAL(name) args; \
		__builtin_unreachable(); \
	}

SHIM_SYMS_HANDOFF(SHIM_WRAP)
