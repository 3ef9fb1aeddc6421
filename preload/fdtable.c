/*
 * fdtable.c - the fd table and the open-file descriptions it points to.
 *
 * The table (shim.h has the picture) is two levels: a top array with a
 * slot for every 4096 fds of the int range, reserved as address space at
 * the first managed open (MAP_NORESERVE: 4 MiB of it, touched only where
 * chunks exist), and chunks of 4096 entries made when an fd of their range
 * first gets an entry.  RLIMIT_NOFILE may be 2^30 and may be raised later:
 * every fd number has a slot, and an fd with no chunk reads as "not ours".
 *
 * Lookups (shim_fdt_get, inline in shim.h) are three acquire loads.
 * Changes hold fdt_lock, which is a leaf: nothing that takes a lock runs
 * under it (mmap for a chunk, and hand-off's lseek, are system calls).
 *
 * Open-file descriptions (struct shim_ofd) are type-stable: never freed,
 * recycled through a pool.  The reference count is the entries that point
 * to the ofd plus the calls using it; shim_ofd_get takes a reference only
 * if the count is not zero, then checks that the entry still points at it
 * - a description closed and reused for another fd meanwhile is let go and
 * the lookup retried.  The last reference closes the pc_file and returns
 * the ofd to the pool: that may be a reader finishing after a close.
 *
 * A fork child's ofds are copies of the parent's (a shared cache's: a
 * private one's were handed off): the child's fork handler makes each
 * count the child's entries (shim_fdt_reinit: no lock taken), and its
 * pc_file stays the parent's (file_pid) until shim_ofd_get, at the
 * child's first call on it, opens the child's own (reopen, under the
 * ofd's pos_lock); the last put closes only the process's own.
 *
 * kfiles (struct shim_kfile, process.c owns the list) are counted the same
 * way, by entries and stdio holds; dropping the last reference of one
 * that is not permanent takes files_lock to unlink it.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

_Atomic(shim_slot *) *_Atomic shim_fdt;
static pthread_mutex_t fdt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_ofd *ofd_pool;	/* fdt_lock */
static _Atomic unsigned fdt_span;	/* fds below have had a chunk */

void shim_fdt_lock(void)
{
	pthread_mutex_lock(&fdt_lock);
}

void shim_fdt_unlock(void)
{
	pthread_mutex_unlock(&fdt_lock);
}

/*
 * The fork child, alone in it: no lock may be taken.  Each description's
 * count becomes the child's entries pointing to it (the parent's calls in
 * flight, copied in the count, are not the child's) and its pos_lock a
 * new one (a parent's thread may have held it).  Its pc_file stays the
 * parent's (file_pid) until shim_ofd_get opens the child's own.
 */
void shim_fdt_reinit(void)
{
	unsigned span = atomic_load(&fdt_span);

	pthread_mutex_init(&fdt_lock, NULL);
	atomic_store(&shim_self, getpid());
	for (int pass = 0; pass < 2; pass++)
		for (unsigned fd = 0; fd < span; fd++) {
			uintptr_t e = shim_fdt_get((int)fd);
			struct shim_ofd *o = (struct shim_ofd *)e;

			if (!shim_e_ofd(e))
				continue;
			if (pass == 0) {
				atomic_store(&o->refs, 0);
				pthread_mutex_init(&o->pos_lock, NULL);
			} else {
				atomic_fetch_add(&o->refs, 1);
			}
		}
}

unsigned shim_fdt_span(void)
{
	return atomic_load(&fdt_span);
}

/* The chunk of @fd, made if need be; fdt_lock held.  NULL: no memory. */
static shim_slot *chunk_of_locked(int fd)
{
	_Atomic(shim_slot *) *top = atomic_load(&shim_fdt);
	unsigned i = (unsigned)fd >> SHIM_CHUNK_SHIFT;
	shim_slot *chunk;

	if (!top) {
		void *p = REAL(mmap)(NULL, SHIM_TOP * sizeof(*top),
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				     -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		top = p;
		atomic_store_explicit(&shim_fdt, top, memory_order_release);
	}
	chunk = atomic_load(&top[i]);
	if (!chunk) {
		/* mmap, like the top: zeroed, and outside the heap (a leak
		 * checker does not look into the top for its pointers). */
		void *p = REAL(mmap)(NULL, SHIM_CHUNK * sizeof(*chunk),
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		chunk = p;
		atomic_store_explicit(&top[i], chunk, memory_order_release);
		if ((i + 1) * SHIM_CHUNK > atomic_load(&fdt_span))
			atomic_store(&fdt_span, (i + 1) * SHIM_CHUNK);
	}
	return chunk;
}

uintptr_t shim_fdt_get_locked(int fd)
{
	return shim_fdt_get(fd);
}

void shim_fdt_set_locked(int fd, uintptr_t e)
{
	shim_slot *chunk = chunk_of_locked(fd);

	if (chunk)
		atomic_store_explicit(&chunk[fd & (SHIM_CHUNK - 1)], e,
				      memory_order_release);
}

int shim_fdt_set(int fd, uintptr_t e)
{
	uintptr_t old = SHIM_E_NONE;
	shim_slot *chunk;

	if (fd < 0) {
		shim_e_put(e);
		return -EINVAL;
	}
	if (e == SHIM_E_NONE && !shim_fdt_get(fd))
		return 0;	/* nothing there, nothing to make */
	pthread_mutex_lock(&fdt_lock);
	chunk = chunk_of_locked(fd);
	if (chunk)
		old = atomic_exchange_explicit(&chunk[fd & (SHIM_CHUNK - 1)], e,
					       memory_order_acq_rel);
	pthread_mutex_unlock(&fdt_lock);
	if (!chunk) {
		shim_e_put(e);
		return -ENOMEM;
	}
	shim_e_put(old);
	return 0;
}

uintptr_t shim_fdt_take(int fd)
{
	uintptr_t old = SHIM_E_NONE;
	_Atomic(shim_slot *) *top;
	shim_slot *chunk;

	if ((unsigned)fd >= SHIM_FD_LIMIT || !shim_fdt_get(fd))
		return SHIM_E_NONE;
	pthread_mutex_lock(&fdt_lock);
	top = atomic_load(&shim_fdt);
	chunk = top ? atomic_load(&top[(unsigned)fd >> SHIM_CHUNK_SHIFT]) : NULL;
	if (chunk)
		old = atomic_exchange_explicit(&chunk[fd & (SHIM_CHUNK - 1)],
					       SHIM_E_NONE, memory_order_acq_rel);
	pthread_mutex_unlock(&fdt_lock);
	return old;
}

int shim_fdt_dup(int oldfd, int newfd)
{
	uintptr_t e, old = SHIM_E_NONE;
	shim_slot *chunk = NULL;

	if (newfd < 0)
		return -EINVAL;
	if (!shim_fdt_get(oldfd) && !shim_fdt_get(newfd))
		return 0;
	pthread_mutex_lock(&fdt_lock);
	/* The entry's own reference keeps it alive while we take ours. */
	e = shim_e_get(shim_fdt_get(oldfd));
	if (e || shim_fdt_get(newfd))
		chunk = chunk_of_locked(newfd);
	if (chunk)
		old = atomic_exchange_explicit(&chunk[newfd & (SHIM_CHUNK - 1)], e,
					       memory_order_acq_rel);
	pthread_mutex_unlock(&fdt_lock);
	if (e && !chunk) {
		shim_e_put(e);
		return -ENOMEM;
	}
	shim_e_put(old);
	return 0;
}

uintptr_t shim_e_get(uintptr_t e)
{
	struct shim_kfile *k = shim_e_kfile(e);

	if (shim_e_ofd(e)) {
		atomic_fetch_add(&((struct shim_ofd *)e)->refs, 1);
		return e;
	}
	if (k) {
		atomic_fetch_add(&k->refs, 1);
		return e;
	}
	return SHIM_E_NONE;	/* a dup of the library's fd is the program's */
}

void shim_e_put(uintptr_t e)
{
	struct shim_kfile *k = shim_e_kfile(e);

	if (shim_e_ofd(e))
		shim_ofd_put((struct shim_ofd *)e);
	else if (k)
		shim_kfile_put(k);
}

/* ------------------------------------------------------------------ */
/* Open-file descriptions.                                             */

_Atomic pid_t shim_self;

struct shim_ofd *shim_ofd_ref(int fd)
{
	if (__builtin_expect(shim_cache_broke(), 0))
		shim_cache_broken_now();	/* fd is the kernel's then */
	for (;;) {
		uintptr_t e = shim_fdt_get(fd);
		struct shim_ofd *o;
		int r;

		if (!shim_e_ofd(e))
			return NULL;
		o = (struct shim_ofd *)e;
		r = atomic_load(&o->refs);
		while (r > 0 && !atomic_compare_exchange_weak(&o->refs, &r, r + 1))
			;
		if (r == 0)
			continue;	/* being freed: the entry has changed */
		if (shim_fdt_get(fd) == e)
			return o;
		shim_ofd_put(o);	/* reused for another fd meanwhile */
	}
}

/*
 * A fork child's first call on a description it inherited: its own
 * pc_file of the same file (the child's close must not close the
 * parent's, nor the parent's the child's; a dead child's files are
 * reaped by its pid).  The description is shared-position already (the
 * fork made it so), so the new pc_file needs no offset.  Failing (no
 * memory, no descriptor), the file is written back and the kernel serves
 * this call: -errno.
 */
static int reopen(struct shim_ofd *o, int fd)
{
	pc_cache *c = atomic_load(&shim_cache);
	int r = 0, fl;
	pc_file *f;

	pthread_mutex_lock(&o->pos_lock);
	if (!shim_ofd_own(o)) {
		fl = REAL(fcntl)(fd, F_GETFL);
		r = !c ? -ENODEV : fl < 0 ? -errno
		    : LIB(pc_open_fd(c, fd, fl & (O_ACCMODE | O_SYNC | O_DSYNC), &f));
		if (r == 0) {
			o->file = f;
			atomic_store_explicit(&o->file_pid, atomic_load(&shim_self),
					      memory_order_release);
		}
	}
	pthread_mutex_unlock(&o->pos_lock);
	if (r && c) {
		struct stat st;

		SHIM_INC(cache_errors);
		if (REAL(fstat)(fd, &st) == 0)
			LIB(pc_cache_sync_file(c, &st));
	}
	return r;
}

struct shim_ofd *shim_ofd_get(int fd)
{
	struct shim_ofd *o = shim_ofd_ref(fd);
	int saved;

	if (!o || __builtin_expect(shim_ofd_own(o), 1))
		return o;
	saved = errno;
	if (reopen(o, fd)) {
		shim_ofd_put(o);
		o = NULL;
	} else {
		shim_live_child();	/* a fork child's first call here */
	}
	errno = saved;
	return o;
}

void shim_ofd_put(struct shim_ofd *o)
{
	if (atomic_fetch_sub(&o->refs, 1) != 1)
		return;
	if (shim_ofd_own(o))	/* else the parent's, never opened here */
		LIB(pc_close(o->file));	/* errors were for fsync to report */
	o->file = NULL;
	pthread_mutex_lock(&fdt_lock);
	o->next = ofd_pool;
	ofd_pool = o;
	pthread_mutex_unlock(&fdt_lock);
}

struct shim_ofd *shim_ofd_new(pc_file *file, const struct stat *st, int flags)
{
	struct shim_ofd *o;

	pthread_mutex_lock(&fdt_lock);
	o = ofd_pool;
	if (o)
		ofd_pool = o->next;
	pthread_mutex_unlock(&fdt_lock);
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return NULL;
		pthread_mutex_init(&o->pos_lock, NULL);
	}
	o->file = file;
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	o->pos = 0;
	o->next = NULL;
	atomic_store(&o->kpos, false);
	if (!atomic_load(&shim_self))
		atomic_store(&shim_self, getpid());
	atomic_store(&o->file_pid, atomic_load(&shim_self));
	atomic_store(&o->flags, flags & (O_ACCMODE | O_APPEND));
	atomic_store_explicit(&o->refs, 1, memory_order_release);
	return o;
}
