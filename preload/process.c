/*
 * process.c - the process's cache, the files the kernel serves, and the
 * hand-off of descriptions from the cache to the kernel.
 *
 * The cache.  With PAGECACHE_CACHE=NAME (pagecache exec sets it: the
 * user's shared cache), the process joins that cache at its first managed
 * open (pc_cache_attach), as every other process of the program does, and
 * a forked child goes on in it.  If the cache cannot be mapped at its
 * address here, the process must not run beside it: a message, and it
 * exits (status 125) before it touches a file.  Joined in the
 * constructor (shim_init), it adopts the regular files it inherited from
 * the image before an exec or the parent of a spawn (shared_pos.c).  If
 * the cache is gone, a message says so once and the process runs on the
 * kernel alone; so too
 * when the cache breaks (a process died inside it) or is stopped
 * (pagecache stop: pc_cache_stop sets the same flag, and the message
 * says which): every call on a managed description looks
 * (shim_cache_broke), and the first to see it hands every file to the
 * kernel.  Without PAGECACHE_CACHE, a private
 * cache per process, made at the first managed open from PAGECACHE_CONFIG
 * (pc_cache_create's syntax); if it cannot be made, a message says so
 * once and the process runs on the kernel alone.  Made, it registers the
 * exit flush (atexit, and the .so's
 * destructor in case exit() skipped it) and, once per process tree, the
 * fork handlers - after the library registered its own in
 * pc_cache_create, so ours run first in the parent (prepare handlers run
 * in reverse order): our prepare writes back through a library that must
 * still take its locks.  Under PAGECACHE_LIVE it also starts publishing
 * the counters (stats.c).
 *
 * Kernel files.  A struct shim_kfile stands for a file the kernel serves:
 * while it has references (handed-off fds, stdio streams) or is permanent
 * (mapped, or opened O_DIRECT), new opens of it are passed through, so the
 * process never has the file both in the cache and in the kernel's hands.
 * kfiles hash by (dev, ino); one whose count fell to zero is unlinked by
 * the next walk of its bucket (under files_lock), not by the put, which
 * may run under it.
 *
 * Hand-off (handoff), for a set of descriptions (one file's, or all):
 *   0. their data is written back (the bulk, before anything stops);
 *   1. a reference to each chosen ofd is taken;
 *   2. one description at a time, its pos_lock is taken: calls using its
 *      offset have finished (never two pos_locks at once);
 *   3. under fdt_lock, every entry pointing to it becomes an entry of its
 *      file's kfile, and the kernel's offset of the description is set to
 *      ours (lseek on one of its fds, which cannot be closed meanwhile:
 *      close takes fdt_lock to clear the entry first);
 *   4. the calls still in flight through the cache (they hold references)
 *      are waited for, a bounded number of turns;
 *   5. written back again (what those calls wrote), pages dropped if asked.
 * The entries' references on the ofds go last, closing the pc_files.
 *
 * Fork: the prepare handler takes files_lock and, in a shared cache, makes
 * every description shared-position (shared_pos.c: the child shares it,
 * in the same cache), in a private one hands every description off; then
 * it takes fdt_lock; the parent's handler releases both; the child's
 * starts afresh: zeroed counters, locks as new, every description's count
 * its own entries (fdtable.c shim_fdt_reinit), and a private cache's
 * child no cache (a new one at its first managed open; a shared cache it
 * keeps).  A private cache's inherited fds are all kfile entries by then,
 * passed through in both processes; a shared cache's stay managed, the
 * child opening its own pc_file of each at its first call on it.  The
 * hand-off below takes descriptions by shim_ofd_ref (no reopen: it uses
 * no pc_file but one of the process's own, for the drop), and leaves a
 * shared-position description's offset alone (the kernel's already).
 * Is the cache shared?  The library is asked once, when it is made
 * (pc_cache_shared: cache_shared).
 * A child made by a bare clone(2) runs no handler: its exit flushes
 * nothing (cache_pid is not its pid), since its copy of a private cache
 * has no threads to finish the I/O it would start and the dirty pages are
 * the parent's to write back.
 *
 * Credentials (setuid and friends, setgroups, capset): a process on a
 * shared cache leaves it before the change (shim_leave_cache): caching
 * stops, every description is handed off and written back, the region is
 * unmapped; the process runs on the kernel from then on, as a setuid
 * program does, outside every cache.
 *
 * Exit (atexit, the destructor, _exit, _Exit): caching stops (new opens
 * pass through), every description is handed off, the cache is written
 * back, the stats flushed.  What a later atexit handler writes goes to the
 * kernel.  A process killed by a signal writes nothing back.
 *
 * Locks: files_lock, then one ofd's pos_lock, then fdt_lock.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

_Atomic(pc_cache *) shim_cache;
pthread_mutex_t shim_files_lock = PTHREAD_MUTEX_INITIALIZER;

#define KFILE_BUCKETS 256
static struct shim_kfile *kfiles[KFILE_BUCKETS];	/* files_lock */

enum { STATE_ACTIVE, STATE_EXITING, STATE_OFF };
static _Atomic int state;
static _Atomic int exit_done;
static bool atexit_registered;	/* files_lock */
static bool atfork_registered;	/* files_lock; inherited by children */
static _Atomic pid_t cache_pid;	/* the process whose cache shim_cache is */
static _Atomic bool cache_shared;	/* shim_cache is a shared cache */
static _Atomic int live_owed;		/* a fork child's live record: shim_live_child */

#define DRAIN_TURNS 100000	/* sched_yield turns waiting for calls */

bool shim_active(void)
{
	return atomic_load_explicit(&state, memory_order_relaxed) == STATE_ACTIVE;
}

/* ------------------------------------------------------------------ */
/* Fork and exit hooks.                                                */

static void fork_prepare(void)
{
	pthread_mutex_lock(&shim_files_lock);
	if (atomic_load(&shim_cache) && shim_cache_shared()) {
		shim_kpos_all_locked(true);	/* the child's too, in the cache */
	} else if (atomic_load(&shim_cache)) {
		shim_handoff_all_locked(true);
		SHIM_INC(fork_handoffs);
	}
	shim_fdt_lock();
}

static void fork_parent(void)
{
	shim_fdt_unlock();
	pthread_mutex_unlock(&shim_files_lock);
}

static void fork_child(void)
{
	shim_fdt_reinit();
	pthread_mutex_init(&shim_files_lock, NULL);
	/* A private cache lives on only in the parent: its threads stayed
	 * there.  Ours comes at our first managed open.  A shared one is
	 * the child's too (the library entered it at the fork). */
	if (!atomic_load(&cache_shared))
		atomic_store(&shim_cache, NULL);
	else if (atomic_load(&shim_cache))
		atomic_store(&live_owed, 1);	/* no thread here: see below */
	atexit_registered = false;
	atomic_store(&exit_done, 0);
	atomic_store(&cache_pid, getpid());
	shim_stats_reset();
}

static void exit_hook(void)
{
	shim_exit_flush();
}

__attribute__((destructor)) static void shim_fini(void)
{
	shim_exit_flush();	/* exit() ran no atexit handler of ours */
}

void shim_init(void)
{
	/* A shared cache is joined now, before main: the process counts as
	 * one of the cache's while it lives (the cache process keeps the
	 * cache as long as one does), and one that cannot join it at its
	 * address exits before it touches a file.  Everything else is lazy,
	 * so that calls before main need no initialisation.  (No cache
	 * yet to ask: the environment says whether there is one to join.) */
	if (getenv("PAGECACHE_CACHE")) {
		pthread_mutex_lock(&shim_files_lock);
		(void)shim_cache_get();
		pthread_mutex_unlock(&shim_files_lock);
		if (shim_cache_shared())	/* what an exec left us */
			shim_adopt_inherited();
	}
}

__attribute__((constructor)) static void shim_ctor(void)
{
	shim_init();
}

/* ------------------------------------------------------------------ */
/* The cache.                                                          */

/* files_lock held. */
static pc_cache *cache_make_locked(void)
{
	const char *cfg = getenv("PAGECACHE_CONFIG");
	const char *name = getenv("PAGECACHE_CACHE");
	pc_cache *c = NULL;
	int r;

	if (name && *name) {
		r = LIB(pc_cache_attach(&c, name));
		if (r == -EAGAIN) {	/* being made: it will be soon */
			for (int i = 0; i < 1000 && r == -EAGAIN; i++) {
				struct timespec ts = { 0, 1000000 };

				nanosleep(&ts, NULL);
				r = LIB(pc_cache_attach(&c, name));
			}
		}
		if (r == -EEXIST)	/* said by the library: never beside it */
			_exit(125);
	} else {
		r = LIB(pc_cache_create(&c, cfg && *cfg ? cfg : NULL));
	}
	if (r) {
		char msg[160];
		int n = snprintf(msg, sizeof(msg), "pagecache preload: no cache "
				 "(%s): the program runs without it\n", strerror(-r));

		if (n > 0)
			REAL(write)(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		atomic_store(&state, STATE_OFF);
		return NULL;
	}
	atomic_store(&cache_pid, getpid());
	atomic_store(&cache_shared, LIB(pc_cache_shared(c)));
	atomic_store_explicit(&shim_cache, c, memory_order_release);
	shim_live_start(c);
	if (!atexit_registered) {
		atexit(exit_hook);
		atexit_registered = true;
	}
	if (!atfork_registered) {
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atfork_registered = true;
	}
	return c;
}

bool shim_cache_shared(void)
{
	return atomic_load_explicit(&cache_shared, memory_order_relaxed) &&
	       atomic_load_explicit(&shim_cache, memory_order_relaxed);
}

pc_cache *shim_cache_get(void)
{
	pc_cache *c = atomic_load_explicit(&shim_cache, memory_order_acquire);

	if (c) {
		if (__builtin_expect(atomic_load_explicit(&live_owed,
					memory_order_relaxed), 0) &&
		    atomic_exchange(&live_owed, 0))
			shim_live_start(c);
		return c;
	}
	if (!shim_active())
		return c;
	return cache_make_locked();	/* callers hold files_lock */
}

void shim_live_child(void)
{
	if (__builtin_expect(!atomic_load_explicit(&live_owed,
						   memory_order_relaxed), 1))
		return;
	pthread_mutex_lock(&shim_files_lock);
	(void)shim_cache_get();
	pthread_mutex_unlock(&shim_files_lock);
}

/* ------------------------------------------------------------------ */
/* Kernel files.                                                       */

static struct shim_kfile **bucket(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)dev * 0x9E3779B97F4A7C15ull) ^ (uint64_t)ino;

	return &kfiles[(h ^ (h >> 29)) % KFILE_BUCKETS];
}

struct shim_kfile *shim_kfile_find_locked(dev_t dev, ino_t ino)
{
	struct shim_kfile **pp = bucket(dev, ino), *k;

	while ((k = *pp)) {
		if (!k->permanent && atomic_load(&k->refs) == 0) {
			*pp = k->next;	/* nothing refers to it any more */
			free(k);
			continue;
		}
		if (k->dev == dev && k->ino == ino)
			return k;
		pp = &k->next;
	}
	return NULL;
}

struct shim_kfile *shim_kfile_get_locked(dev_t dev, ino_t ino)
{
	struct shim_kfile *k = shim_kfile_find_locked(dev, ino);

	if (!k) {
		struct shim_kfile **b = bucket(dev, ino);

		k = calloc(1, sizeof(*k));
		if (!k)
			return NULL;
		k->dev = dev;
		k->ino = ino;
		k->next = *b;
		*b = k;
	}
	atomic_fetch_add(&k->refs, 1);
	return k;
}

void shim_kfile_put(struct shim_kfile *k)
{
	atomic_fetch_sub(&k->refs, 1);	/* the next walk unlinks it at 0 */
}

/* ------------------------------------------------------------------ */
/* Hand-off.                                                           */

struct chosen {
	struct shim_ofd *o;
	struct shim_kfile *k;	/* its file's, once leaving */
	bool leaving;		/* to be handed off */
};

struct handoff {
	struct chosen *v;
	unsigned n, cap;
};

static bool chosen_has(const struct handoff *h, const struct shim_ofd *o)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->v[i].o == o)
			return true;
	return false;
}

/* 1. The descriptions, one reference each: of (dev, ino), or all. */
static void choose(struct handoff *h, bool all, dev_t dev, ino_t ino)
{
	unsigned span = shim_fdt_span();

	for (unsigned fd = 0; fd < span; fd++) {
		struct shim_ofd *o;

		if (!shim_e_ofd(shim_fdt_get((int)fd)))
			continue;
		o = shim_ofd_ref((int)fd);	/* a fork child's: not reopened */
		if (!o)
			continue;
		if ((!all && (o->dev != dev || o->ino != ino)) || chosen_has(h, o)) {
			shim_ofd_put(o);
			continue;
		}
		if (h->n == h->cap) {
			unsigned cap = h->cap ? 2 * h->cap : 16;
			struct chosen *v = realloc(h->v, cap * sizeof(*v));

			if (!v) {
				shim_ofd_put(o);
				break;
			}
			h->v = v;
			h->cap = cap;
		}
		h->v[h->n++] = (struct chosen){ o, NULL, true };
	}
}

/* Does every fd of @o have FD_CLOEXEC (exec closes them all)? */
static bool all_cloexec(struct shim_ofd *o)
{
	unsigned span = shim_fdt_span();

	for (unsigned fd = 0; fd < span; fd++)
		if (shim_fdt_get((int)fd) == (uintptr_t)o &&
		    !(REAL(fcntl)((int)fd, F_GETFD) & FD_CLOEXEC))
			return false;
	return true;
}

/*
 * 2, 3 for one description: its pos_lock (calls using the offset have
 * finished), then under fdt_lock every entry of it becomes an entry of
 * its file's kfile and the kernel's offset is set on its first fd.  The
 * entries' references are returned in @dropped[*moved...].
 */
static void hand_off_one(struct chosen *ch, unsigned span, uintptr_t *dropped,
			 unsigned *moved)
{
	bool offset_set = false;

	pthread_mutex_lock(&ch->o->pos_lock);
	shim_fdt_lock();
	for (unsigned fd = 0; fd < span; fd++) {
		if (shim_fdt_get_locked((int)fd) != (uintptr_t)ch->o)
			continue;
		if (!offset_set && !atomic_load(&ch->o->kpos))
			REAL(lseek)((int)fd, ch->o->pos, SEEK_SET);
		offset_set = true;	/* a kpos one's is the kernel's already */
		atomic_fetch_add(&ch->k->refs, 1);
		shim_fdt_set_locked((int)fd, (uintptr_t)ch->k | SHIM_E_KFILE);
		dropped[(*moved)++] = (uintptr_t)ch->o;
	}
	shim_fdt_unlock();
	pthread_mutex_unlock(&ch->o->pos_lock);
}

/* 2-4.  files_lock held. */
static void hand_off(struct handoff *h)
{
	unsigned span = shim_fdt_span(), moved = 0;
	uintptr_t *dropped = calloc(span ? span : 1, sizeof(*dropped));

	for (unsigned i = 0; dropped && i < h->n; i++) {
		struct chosen *ch = &h->v[i];

		if (!ch->leaving)
			continue;
		ch->k = shim_kfile_get_locked(ch->o->dev, ch->o->ino);
		if (ch->k)
			hand_off_one(ch, span, dropped, &moved);
	}
	for (unsigned i = 0; i < moved; i++)
		shim_ofd_put((struct shim_ofd *)dropped[i]);
	free(dropped);
	/* 4. Calls still in flight through the cache hold references. */
	for (unsigned i = 0; i < h->n; i++)
		for (int t = 0; h->v[i].leaving && t < DRAIN_TURNS &&
				atomic_load(&h->v[i].o->refs) > 1; t++)
			sched_yield();
}

static void release(struct handoff *h)
{
	for (unsigned i = 0; i < h->n; i++) {
		if (h->v[i].k)
			shim_kfile_put(h->v[i].k);
		shim_ofd_put(h->v[i].o);
	}
	free(h->v);
}

/* Write back (and drop) what the cache holds of the file. */
static void file_writeback(pc_cache *c, pc_file *f, dev_t dev, ino_t ino,
			   bool drop)
{
	struct stat st;

	if (f && drop) {
		LIB(pc_invalidate(f));
		return;
	}
	memset(&st, 0, sizeof(st));	/* closed, or only written back */
	st.st_dev = dev;
	st.st_ino = ino;
	st.st_mode = S_IFREG;
	LIB(pc_cache_sync_file(c, &st));
}

struct shim_kfile *shim_handoff_file_locked(dev_t dev, ino_t ino, bool drop)
{
	pc_cache *c = atomic_load(&shim_cache);
	struct handoff h = { NULL, 0, 0 };
	pc_file *f;

	if (c) {
		choose(&h, false, dev, ino);
		f = NULL;	/* one of ours (h holds it): not a fork's copy */
		for (unsigned i = 0; i < h.n && !f; i++)
			if (shim_ofd_own(h.v[i].o))
				f = h.v[i].o->file;
		file_writeback(c, f, dev, ino, drop);	/* 0 */
		hand_off(&h);
		file_writeback(c, f, dev, ino, drop);	/* 5 */
		release(&h);
	}
	return shim_kfile_get_locked(dev, ino);
}

void shim_handoff_for_good(dev_t dev, ino_t ino, enum shim_counter first)
{
	struct shim_kfile *k;

	pthread_mutex_lock(&shim_files_lock);
	k = shim_handoff_file_locked(dev, ino, true);
	if (k) {
		if (!k->permanent)
			shim_count(first, 1);
		k->permanent = true;
		shim_kfile_put(k);
	}
	pthread_mutex_unlock(&shim_files_lock);
}

void shim_handoff_all_locked(bool cloexec_too)
{
	pc_cache *c = atomic_load(&shim_cache);
	struct handoff h = { NULL, 0, 0 };

	if (!c)
		return;
	LIB(pc_cache_sync(c));	/* 0 */
	choose(&h, true, 0, 0);
	if (!cloexec_too)
		for (unsigned i = 0; i < h.n; i++)
			h.v[i].leaving = !all_cloexec(h.v[i].o);
	hand_off(&h);
	LIB(pc_cache_sync(c));	/* 5 */
	release(&h);
}

pc_cache *shim_cache_broken_locked(void)
{
	static const char msg[] = "pagecache preload: the shared cache is "
		"broken (a process died inside it): this process goes on "
		"without it\n";
	static const char stopped[] = "pagecache preload: the shared cache "
		"was stopped (pagecache stop): this process goes on without "
		"it\n";
	pc_cache *c = atomic_load(&shim_cache);

	if (atomic_load(&state) == STATE_ACTIVE) {
		bool stop = c && LIB(pc_cache_stopped(c));

		atomic_store(&state, STATE_OFF);
		if (stop)
			REAL(write)(2, stopped, sizeof(stopped) - 1);
		else
			REAL(write)(2, msg, sizeof(msg) - 1);
		shim_handoff_all_locked(true);
	}
	atomic_store(&shim_broken_done, true);
	return NULL;
}

_Atomic bool shim_broken_done;

void shim_cache_broken_now(void)
{
	int saved = errno;

	if (shim_internal || pthread_mutex_trylock(&shim_files_lock))
		return;
	(void)shim_cache_broken_locked();
	pthread_mutex_unlock(&shim_files_lock);
	errno = saved;
}

void shim_leave_cache(void)
{
	int saved = errno;
	pc_cache *c;

	if (shim_internal || !atomic_load(&cache_shared))
		return;
	pthread_mutex_lock(&shim_files_lock);
	c = atomic_load(&shim_cache);
	if (atomic_load(&state) == STATE_ACTIVE)
		atomic_store(&state, STATE_OFF);	/* new opens: the kernel's */
	if (c) {
		shim_handoff_all_locked(true);	/* written back, handed off */
		shim_live_stop();
		atomic_store(&shim_cache, NULL);
		LIB(pc_cache_destroy(c));	/* detaches: unmapped */
		SHIM_INC(cred_leaves);
	}
	pthread_mutex_unlock(&shim_files_lock);
	errno = saved;
}

void shim_exit_flush(void)
{
	pid_t owner = atomic_load(&cache_pid);

	/* A child made by a bare clone(2) ran no fork handler: its copy of
	 * the cache is the parent's, mid-flight and without the threads that
	 * finish its I/O (waiting on its writeback would never end), and the
	 * pages are the parent's (or the shared cache's) to write back. */
	if (owner && getpid() != owner)
		return;
	if (atomic_exchange(&exit_done, 1))
		return;
	if (atomic_load(&state) == STATE_ACTIVE)
		atomic_store(&state, STATE_EXITING);
	pthread_mutex_lock(&shim_files_lock);
	shim_handoff_all_locked(true);
	pthread_mutex_unlock(&shim_files_lock);
	shim_stats_flush(true);
}
