/*
 * shim.h - what the files of libpagecache-preload.so share.
 *
 * The shim gives an unmodified program one pc_cache of its own and routes
 * the program's regular-file I/O through it.  A program's descriptor stays
 * a real kernel fd (the shim opens the file itself), so fstat, locks,
 * select and fchmod keep working; a table indexed by fd says what the shim
 * knows of each:
 *
 *   fd table (fdtable.c)          entries, one word each
 *   ┌──────────┐
 *   │ top[fd>>12] ──► chunk[4096] ──► 0           not ours: straight to libc
 *   └──────────┘                  ├─► ofd*        managed: an open-file
 *                                 │               description (pc_file,
 *                                 │               offset, status flags),
 *                                 │               shared by dup, dup2, F_DUPFD;
 *                                 │               its offset the kernel's once
 *                                 │               a fork, exec or spawn shares
 *                                 │               it (shared_pos.c)
 *                                 ├─► kfile* | 1  handed off: the kernel serves
 *                                 │               this fd (mmap'd, stdio, after
 *                                 │               private fork...); the kfile
 *                                 │               keeps the file out of the cache
 *                                 │               while any such fd or hold is
 *                                 └─► 2           the library's own fd (ring,
 *                                                 backing file): the program's
 *                                                 close never reaches it
 *
 * Reading an entry takes no lock and allocates nothing (the table is
 * reserved address space, chunks appear at the first managed fd of their
 * range), so an fd the shim does not manage costs one lookup.  Entries
 * change under fdt_lock (a leaf); an ofd is type-stable (never freed, only
 * recycled), so a reader takes a reference without a lock and checks that
 * the entry still points at it.
 *
 * Who calls whom:
 *   open.c     open family, close family, dup family, fcntl
 *   rw.c       read/write paths, lseek
 *   copy.c     copy_file_range, sendfile, splice (syscall(2) with theirs)
 *   meta.c     sync, truncate, fallocate, fadvise, stat family, names, times
 *   handoff.c  the cases the cache cannot serve: mmap, stdio, ioctl,
 *              fork/spawn/exec/exit, dlopen
 *   shared_pos.c  descriptions other processes share (fork, exec, spawn
 *              in a shared cache): the kernel's offset, adoption at exec
 *   process.c  the process's cache, its configuration, exit and fork flows
 *   stats.c    counters, the --stats file, the live record (live.h)
 *   real.c     the functions behind ours, found lazily with dlsym(RTLD_NEXT)
 *   syms.h     every interposed function: name, signature, kind of wrapper
 *
 * Internal calls.  The library (linked into the shim) and the libraries it
 * uses call open(2), close(2), fcntl(2) ... through the same symbols the
 * program does.  A thread-local depth, shim_internal, marks the calls made
 * on the shim's behalf: every call into the library goes through LIB(),
 * and the library's own threads carry the mark from birth (the shim is
 * linked with --wrap=pthread_create for the library's objects).  Marked
 * calls go straight to libc, and the descriptors they create are marked
 * in the table as the library's.
 *
 * Locks: files_lock (process.c: managed opens and hand-offs decide and
 * install under it; it may call into the library) → fdt_lock (fdtable.c,
 * a leaf: nothing is called under it).  An ofd's pos_lock is taken with
 * neither held, around one cache call; a shared-position one's file's
 * pc_file_pos_lock (the library's) under pos_lock, around the same call.
 */
#ifndef PC_SHIM_H
#define PC_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "pagecache.h"

/*
 * libc entry points the headers declare only under _FORTIFY_SOURCE, or
 * no longer (the pre-2.33 stat ABI that old binaries still call).
 */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags);

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_TLS __thread __attribute__((tls_model("initial-exec")))

/* The largest count one read(2) or write(2) moves (the kernel's). */
#define SHIM_MAX_RW 0x7ffff000L

/* ------------------------------------------------------------------ */
/* real.c: the functions behind ours.                                  */

struct shim_sym {
	const char *name;
	_Atomic(void *) fn;	/* dlsym(RTLD_NEXT, name), once found */
	void *raw;		/* a raw-syscall stand-in, or NULL */
};

void *shim_real_slow(struct shim_sym *s);

static inline void *shim_real(struct shim_sym *s)
{
	void *p = atomic_load_explicit(&s->fn, memory_order_acquire);

	return p ? p : shim_real_slow(s);
}

/* REAL(read)(fd, buf, n): libc's read, typed as ours. */
#define REAL(fn) ((__typeof__(&fn))shim_real(&shim_sym_##fn))
#define SHIM_DECLARE_SYM(ret, fn, ...) extern struct shim_sym shim_sym_##fn;
#include "syms.h"
SHIM_SYMS(SHIM_DECLARE_SYM)

/*
 * The wrappers of a group of syms.h, in the file that owns the group:
 * SHIM_SYMS_RW(SHIM_WRAP) writes each entry by its kind,
 * SHIM_WRAP_<kind>(ret, name, params, args, how).  The generic kinds are
 * here; a file defines its own before it expands its group.
 */
#define SHIM_WRAP(ret, name, params, args, kind, ...) \
	SHIM_WRAP_##kind(ret, name, params, args, __VA_ARGS__)

/* Written by hand: declared here, so the list and the code agree. */
#define SHIM_WRAP_own(ret, name, params, args, ...) \
	SHIM_EXPORT ret name params;

/* On a managed fd: how, with o the description (referenced); else libc's. */
#define SHIM_WRAP_fd(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		struct shim_ofd *o = shim_ofd_get(fd); \
		ret r; \
		if (!o) \
			return REAL(name) args; \
		r = how; \
		shim_ofd_put(o); \
		return r; \
	}

/* how (which keeps errno), then libc's. */
#define SHIM_WRAP_before(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		how; \
		return REAL(name) args; \
	}

/* libc's; then, if it succeeded, how. */
#define SHIM_WRAP_after(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		ret r = REAL(name) args; \
		if (r == 0) \
			how; \
		return r; \
	}

/* how, which returns SHIM_PASS for "libc's, as if we were not here". */
#define SHIM_PASS (-2)
#define SHIM_WRAP_or_real(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		ret r = how; \
		return r == SHIM_PASS ? REAL(name) args : r; \
	}

/* Calls on the shim's behalf (see the top): depth, thread-local. */
extern SHIM_TLS int shim_internal;
/*
 * A call into the library: marked internal, and errno as it was (the
 * library answers with -errno; what its system calls left in errno is not
 * the program's to see).
 */
#define LIB(expr) \
	({ \
		int lib_errno_ = errno; \
		shim_internal++; \
		__typeof__(expr) lib_r_ = (expr); \
		shim_internal--; \
		errno = lib_errno_; \
		lib_r_; \
	})

/* ------------------------------------------------------------------ */
/* fdtable.c: the fd table.                                            */

typedef _Atomic uintptr_t shim_slot;

#define SHIM_FD_LIMIT (1u << 31)	/* every int fd has a slot */
#define SHIM_CHUNK_SHIFT 12
#define SHIM_CHUNK (1u << SHIM_CHUNK_SHIFT)
#define SHIM_TOP (SHIM_FD_LIMIT >> SHIM_CHUNK_SHIFT)

#define SHIM_E_NONE 0
#define SHIM_E_LIB 2
#define SHIM_E_KFILE 1		/* tag on a struct shim_kfile pointer */

/* An open-file description of a managed file. */
struct shim_ofd {
	_Atomic int refs;	/* entries pointing here + calls in flight;
				   0: free, in the pool */
	pc_file *file;		/* read-only while referenced */
	dev_t dev;		/* read-only while referenced */
	ino_t ino;
	_Atomic int flags;	/* access mode | O_APPEND (F_SETFL changes it) */
	pthread_mutex_t pos_lock;	/* read, write, lseek ... */
	off_t pos;		/* pos_lock; unused once kpos */
	/*
	 * Shared position (shared_pos.c): another process has this
	 * description too (a fork, an exec, a spawn shared it), so the
	 * offset is the kernel's f_pos of the fd, moved under the file's
	 * pc_file_pos_lock, and O_APPEND is the kernel's status flag.  Set
	 * under pos_lock, never cleared while the description lives.
	 */
	_Atomic bool kpos;
	/*
	 * The process whose pc_file @file is: a forked child's copy of a
	 * description names its parent's (which the parent may close at any
	 * time): shim_ofd_get opens the child's own first, and the last put
	 * closes @file only if it is ours.  Set with @file (under pos_lock
	 * in the child's reopen).
	 */
	_Atomic pid_t file_pid;
	struct shim_ofd *next;	/* fdt_lock: the pool's free list */
};

/* A file the kernel serves for now (or for good): no cache for it. */
struct shim_kfile {
	dev_t dev;
	ino_t ino;
	_Atomic int refs;	/* handed-off entries + stdio holds */
	bool permanent;		/* files_lock: mmap'd or O_DIRECT: for good */
	struct shim_kfile *next;	/* files_lock: its hash bucket */
};

extern _Atomic(shim_slot *) *_Atomic shim_fdt;

static inline uintptr_t shim_fdt_get(int fd)
{
	_Atomic(shim_slot *) *top;
	shim_slot *chunk;

	if ((unsigned)fd >= SHIM_FD_LIMIT)
		return SHIM_E_NONE;
	top = atomic_load_explicit(&shim_fdt, memory_order_acquire);
	if (!top)
		return SHIM_E_NONE;
	chunk = atomic_load_explicit(&top[(unsigned)fd >> SHIM_CHUNK_SHIFT],
				     memory_order_acquire);
	if (!chunk)
		return SHIM_E_NONE;
	return atomic_load_explicit(&chunk[fd & (SHIM_CHUNK - 1)],
				    memory_order_acquire);
}

static inline bool shim_e_ofd(uintptr_t e)
{
	return e && (e & 3) == 0;
}

static inline struct shim_kfile *shim_e_kfile(uintptr_t e)
{
	return (e & 3) == SHIM_E_KFILE ? (struct shim_kfile *)(e & ~(uintptr_t)3)
				       : NULL;
}

/* This process's pid, as the fork handler set it (shim_ofd.file_pid). */
extern _Atomic pid_t shim_self;
/* The ofd of @fd with a reference, or NULL if @fd is not managed; its
 * file this process's own (a fork child's copy reopened first). */
struct shim_ofd *shim_ofd_get(int fd);
/* The same without the reopen: for hand-off, which uses no file. */
struct shim_ofd *shim_ofd_ref(int fd);
/* Is @o's pc_file this process's own? */
static inline bool shim_ofd_own(struct shim_ofd *o)
{
	return atomic_load_explicit(&o->file_pid, memory_order_acquire) ==
	       atomic_load_explicit(&shim_self, memory_order_relaxed);
}
void shim_ofd_put(struct shim_ofd *o);
/* A new ofd for @file (refs 1, for the entry it will go in). */
struct shim_ofd *shim_ofd_new(pc_file *file, const struct stat *st, int flags);

/*
 * Set @fd's entry to @e (which brings its own reference) and drop what was
 * there.  -ENOMEM if the table could not be made; @e is dropped then.
 */
int shim_fdt_set(int fd, uintptr_t e);
/* @newfd is now a dup of @oldfd: the same entry, another reference. */
int shim_fdt_dup(int oldfd, int newfd);
/* Clear @fd's entry; returns what was there (the caller drops it). */
uintptr_t shim_fdt_take(int fd);
/* A new reference to what entry @e stands for (for a dup). */
uintptr_t shim_e_get(uintptr_t e);
void shim_e_put(uintptr_t e);
/* The highest fd with a table chunk, +1 (for scans). */
unsigned shim_fdt_span(void);
/* fdt_lock, for scans that rewrite entries (process.c, handoff.c). */
void shim_fdt_lock(void);
void shim_fdt_unlock(void);
uintptr_t shim_fdt_get_locked(int fd);
void shim_fdt_set_locked(int fd, uintptr_t e);	/* chunk must exist */
/* fork: the child's fdt_lock, as after init; every description's count
 * made the child's (its entries), its pos_lock new. */
void shim_fdt_reinit(void);

/* ------------------------------------------------------------------ */
/* process.c: the process's cache and the file states.                 */

extern _Atomic(pc_cache *) shim_cache;	/* NULL until the first managed open */
extern pthread_mutex_t shim_files_lock;

void shim_init(void);
/* The cache, made on first use; NULL when there is none (passthrough). */
pc_cache *shim_cache_get(void);
/* Is the shim still caching (not after exit began, or when disabled)? */
bool shim_active(void);

/* The kfile of (dev, ino), or NULL; files_lock held. */
struct shim_kfile *shim_kfile_find_locked(dev_t dev, ino_t ino);
/* Find or make it, with a reference; files_lock held.  NULL: no memory. */
struct shim_kfile *shim_kfile_get_locked(dev_t dev, ino_t ino);
void shim_kfile_put(struct shim_kfile *k);

/*
 * Hand every managed description of (dev, ino) to the kernel: its dirty
 * pages written back and its pages dropped (@drop) or only written back,
 * each description's offset set on the kernel's, every fd of it an entry
 * of the file's kfile.  files_lock held; returns the kfile (with a
 * reference for the caller) or NULL without memory.
 */
struct shim_kfile *shim_handoff_file_locked(dev_t dev, ino_t ino, bool drop);
/*
 * Hand every managed description to the kernel, after writing the whole
 * cache back: for fork, exec, exit.  @cloexec_too: also descriptions whose
 * every fd is close-on-exec (not for exec and spawn, which close those).
 * files_lock held.
 */
void shim_handoff_all_locked(bool cloexec_too);
/* Is the process's cache a shared one (PAGECACHE_CACHE, joined)? */
bool shim_cache_shared(void);
/* Exit: everything to the kernel, the cache written back, the stats. */
void shim_exit_flush(void);
/*
 * The process is about to change its credentials (setuid and friends,
 * setgroups, capset): a shared cache holds files it may not read with
 * the new ones, so it leaves the cache first - every description handed
 * to the kernel and written back, the region unmapped - and runs on the
 * kernel from then on.  Nothing for a private cache.
 */
void shim_leave_cache(void);
/*
 * The shared cache is broken (a process died inside one of its locks):
 * said once, every description handed to the kernel (written back as far
 * as it can be), caching stopped.  files_lock held; returns NULL.
 */
pc_cache *shim_cache_broken_locked(void);
/*
 * At every call on a managed description (shim_ofd_get): has the shared
 * cache broken since?  Then the process hands its files to the kernel
 * now, not at its next open (shim_cache_broken_now: skipped when another
 * thread, or this one, holds files_lock - the next call sees it again).
 */
extern _Atomic bool shim_broken_done;
void shim_cache_broken_now(void);
static inline bool shim_cache_broke(void)
{
	pc_cache *c;

	if (atomic_load_explicit(&shim_broken_done, memory_order_relaxed))
		return false;
	c = atomic_load_explicit(&shim_cache, memory_order_relaxed);
	return c && pc_cache_broken(c);
}

/* ------------------------------------------------------------------ */
/* open.c */

/*
 * After open(2) returned @fd for @flags: decide whether the shim manages
 * it, and set its entry.  Never fails the open; errno is kept.
 */
void shim_opened(int fd, int flags);
/*
 * An exec'd image's inherited @fd (status flags @flags, from F_GETFL):
 * managed as a shared-position description if shim_opened would manage
 * it (shared_pos.c calls it); true if it is.
 */
bool shim_adopt(int fd, int flags);

/* ------------------------------------------------------------------ */
/* shared_pos.c: descriptions other processes share. */

/*
 * A call at kpos @o's offset, @o's pos_lock held: begin takes the file's
 * pc_file_pos_lock and reads the kernel's offset of @fd into *@pos (0, or
 * -errno with the lock let go); end sets it to @pos if @move, and lets the
 * lock go.
 */
int shim_kpos_begin(struct shim_ofd *o, int fd, off_t *pos);
void shim_kpos_end(struct shim_ofd *o, int fd, off_t pos, bool move);
/* pcflags for a write on kpos @o through @fd: O_APPEND the kernel's. */
int shim_kpos_pcflags(struct shim_ofd *o, int fd, int pcflags);
/*
 * Every description (@cloexec_too, else those a spawned program inherits)
 * made shared-position, the kernel's offset set to ours first: before a
 * fork, an exec, a spawn, in a shared cache.  files_lock held.
 */
void shim_kpos_all_locked(bool cloexec_too);
/* A spawn or exec's program: will it run under this shim, in our cache? */
bool shim_spawn_cached(const char *path, bool search, char *const envp[]);
/*
 * A program we started has ended (system, pclose): every shared-position
 * description's file revalidated (an open of it through the cache, as
 * close-to-open does), since the program may have written it through the
 * kernel (on its fd 0-2, which no shim manages).
 */
void shim_kpos_revalidate(void);
/* The exec'd image joined a shared cache: adopt its inherited fds. */
void shim_adopt_inherited(void);

/* ------------------------------------------------------------------ */
/* stats.c: the shim's counters (the cache's come from pc_vmstat). */

#define SHIM_COUNTERS(X) \
	X(managed_opens) X(passthrough_opens) X(kernel_opens) \
	X(mmap_handoffs) X(stdio_handoffs) X(direct_handoffs) \
	X(fork_handoffs) X(exec_handoffs) X(ioctl_invalidations) \
	X(cred_leaves) X(shared_pos) X(exec_adopted) \
	X(managed_reads) X(managed_read_bytes) \
	X(managed_writes) X(managed_write_bytes) X(cache_errors)

enum shim_counter {
#define SHIM_COUNTER_ENUM(n) SHIM_C_##n,
	SHIM_COUNTERS(SHIM_COUNTER_ENUM)
#undef SHIM_COUNTER_ENUM
	SHIM_NR_COUNTERS
};

void shim_count(enum shim_counter c, uint64_t d);
#define SHIM_INC(n) shim_count(SHIM_C_##n, 1)
#define SHIM_ADD(n, d) shim_count(SHIM_C_##n, (d))
/* Add this process's counters since the last flush to the stats file. */
void shim_stats_flush(bool exiting);
void shim_stats_reset(void);	/* fork: the child starts from zero */
/* The cache @c is made: publish its counters live under PAGECACHE_LIVE
 * (live.h); files_lock held.  Unpublished by shim_stats_flush. */
void shim_live_start(pc_cache *c);
/* The publisher stops reading the cache (before it is unmapped here). */
void shim_live_stop(void);
/*
 * A fork's child in a shared cache goes on in its parent's cache, so no
 * cache is made for it and its fork handler may start no thread: its
 * record is owed, and published at its first managed open (shim_cache_get)
 * or its first call on a description it inherited (shim_ofd_get, after
 * the child's own pc_file is open).  Takes files_lock: call it holding no
 * lock of the shim's.  One load when nothing is owed.
 */
void shim_live_child(void);

/* ------------------------------------------------------------------ */
/* Helpers shared by the interposers. */

/* errno from a negative errno, and -1. */
static inline long shim_fail(long neg)
{
	errno = (int)-neg;
	return -1;
}

/* Can an access mode read / write? */
static inline bool shim_can_read(int flags)
{
	return (flags & O_ACCMODE) != O_WRONLY;
}
static inline bool shim_can_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/*
 * process.c: shim_handoff_file_locked with @drop, under files_lock (taken
 * here), and for good (the kfile made permanent: mmap, O_DIRECT); @first
 * is counted when the file was not the kernel's for good yet.
 */
void shim_handoff_for_good(dev_t dev, ino_t ino, enum shim_counter first);

/* meta.c: stat results patched with the cached size. */
void shim_patch_stat(struct stat *st);
/* rw.c: the read and write paths on a managed description. */
ssize_t shim_ofd_readv(struct shim_ofd *o, const struct iovec *iov, int cnt,
		       off_t *pos);
ssize_t shim_ofd_writev(struct shim_ofd *o, const struct iovec *iov, int cnt,
			off_t *pos, int pcflags);

#endif /* PC_SHIM_H */
