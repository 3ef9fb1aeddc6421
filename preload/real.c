/*
 * real.c - the functions behind ours, and the library's own threads.
 *
 * REAL(fn) finds libc's fn lazily, the first time it is needed, with
 * dlsym(RTLD_NEXT): an interposer may run before the shim's constructor
 * (a library constructor that reads a file, calls before main), so nothing
 * may wait for initialisation.  Each symbol is found once and published
 * with a release store; two threads racing find the same pointer.
 *
 * dlsym must not allocate through, or call, what it is resolving for.  It
 * calls none of our functions in glibc, but should it (a future libc, a
 * sanitizer's runtime), the depth in_dlsym catches the recursion: the
 * calls a loader could make get a raw system call instead (raw_for), and
 * any other is a fatal error with a message rather than a silent loop.
 * The stand-ins make their calls with syscall(2), which is ours too
 * (copy.c) and passes them to libc's: libc's syscall is therefore found
 * before any other name, so a stand-in never needs a lookup of its own.
 *
 * The library linked into the shim creates its threads (kswapd, the
 * flushers, the io_uring completion thread) through pthread_create, which
 * the link wraps (--wrap=pthread_create, for the library's objects only):
 * each such thread starts with shim_internal set, so whatever it calls
 * goes straight to libc.  __real_pthread_create is the ordinary symbol, so
 * a sanitizer's interceptor still sees every thread.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

SHIM_TLS int shim_internal;
static SHIM_TLS int in_dlsym;

#define SHIM_DEFINE_SYM(ret, fn, ...) \
	struct shim_sym shim_sym_##fn = { #fn, NULL, NULL };
SHIM_SYMS(SHIM_DEFINE_SYM)

/* ------------------------------------------------------------------ */
/* Raw stand-ins for the calls a dynamic loader could make.            */

static ssize_t raw_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

static ssize_t raw_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

static ssize_t raw_pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

static int raw_openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static int raw_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return raw_openat(AT_FDCWD, path, flags, mode);
}

static int raw_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static int raw_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

static off_t raw_lseek(int fd, off_t off, int whence)
{
	return (off_t)syscall(SYS_lseek, fd, off, whence);
}

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void *raw_for(const char *name)
{
	static const struct { const char *name; void *fn; } raw[] = {
		{ "read", (void *)raw_read }, { "write", (void *)raw_write },
		{ "pread", (void *)raw_pread }, { "pread64", (void *)raw_pread },
		{ "open", (void *)raw_open }, { "open64", (void *)raw_open },
		{ "openat", (void *)raw_openat }, { "openat64", (void *)raw_openat },
		{ "close", (void *)raw_close }, { "fstat", (void *)raw_fstat },
		{ "fstat64", (void *)raw_fstat }, { "lseek", (void *)raw_lseek },
		{ "lseek64", (void *)raw_lseek }, { "mmap", (void *)raw_mmap },
		{ "mmap64", (void *)raw_mmap },
	};

	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		if (!strcmp(raw[i].name, name))
			return raw[i].fn;
	return NULL;
}

static void die(const char *what, const char *name)
{
	static const char pre[] = "pagecache preload: ";

	raw_write(2, pre, sizeof(pre) - 1);
	raw_write(2, what, strlen(what));
	raw_write(2, name, strlen(name));
	raw_write(2, "\n", 1);
	abort();
}

void *shim_real_slow(struct shim_sym *s)
{
	void *p;

	if (in_dlsym) {		/* dlsym reached one of us */
		p = raw_for(s->name);
		if (!p)
			die("called while resolving symbols: ", s->name);
		return p;
	}
	if (s != &shim_sym_syscall &&
	    !atomic_load_explicit(&shim_sym_syscall.fn, memory_order_acquire))
		shim_real_slow(&shim_sym_syscall);	/* for the stand-ins */
	in_dlsym++;
	p = dlsym(RTLD_NEXT, s->name);
	in_dlsym--;
	if (!p)
		p = raw_for(s->name);
	if (!p)
		die("libc lacks ", s->name);
	atomic_store_explicit(&s->fn, p, memory_order_release);
	return p;
}

/* ------------------------------------------------------------------ */
/* The library's threads.                                              */

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

struct lib_thread {
	void *(*fn)(void *);
	void *arg;
};

static void *lib_thread_start(void *p)
{
	struct lib_thread t = *(struct lib_thread *)p;

	free(p);
	shim_internal = 1;	/* for the thread's whole life */
	return t.fn(t.arg);
}

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	struct lib_thread *t = malloc(sizeof(*t));
	int r;

	if (!t)
		return EAGAIN;
	t->fn = fn;
	t->arg = arg;
	r = __real_pthread_create(thread, attr, lib_thread_start, t);
	if (r)
		free(t);
	return r;
}
