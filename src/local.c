/*
 * local.c - what this process keeps of each shared cache it uses (its
 * per-process handle), and the memory and locks every cache's objects are
 * made of.
 *
 * A shared cache (share.c) lives in a region every process maps at the
 * same address; nothing in it may point into one process's memory.  So
 * what is this process's own - its handle of the region, its I/O backend
 * (io_local.c), its descriptors of the mappings, its socket to the home
 * (home.c), the home's service thread - is kept here, in local[], one
 * entry a cache, found by the cache's address (a private cache embeds its
 * struct pc_local in c->local: internal.h, pc__local):
 *
 *   local[i] ── c ─────────── the cache (in its region)
 *            ├─ lo, hi ────── its page descriptors (pc__share_page_cache)
 *            └─ l: shm, io, home, sock, service, bk_dir ──┐
 *                                                         ▼
 *   bk_dir[slot / BK_CHUNK] ── chunk[slot % BK_CHUNK]: struct pc_backing
 *                              (fd, tail_fd, ro_fd; serial of the mapping
 *                              the entry is of)
 *
 * A mapping's slot (share.c) indexes the descriptors; its serial (never
 * reused) tells a stale entry - of a mapping freed since - whose
 * descriptors are closed when the slot is next used (pc__bk_shared).  A
 * chunk is made at the first use of one of its slots in this process;
 * with no memory for it (pc__bk_ready: -ENOMEM, which the open that needed
 * it returns) the mapping reads as holding no descriptor here (bk_none).
 *
 * The memory and locks: pc__cache_zalloc and the lock and condition
 * variable constructors give a private cache malloc's memory and this
 * process's locks, a shared one the region's (shm.c) and process-shared,
 * robust locks (lock.h).
 *
 * Fork: the child keeps the parent's region and descriptors (same
 * numbers, same files); what it cannot keep is threads, so
 * pc__share_fork_child forgets the parent's I/O backend and service
 * thread, and enters the child in each cache's table of processes
 * (procs.c).
 *
 * Locks: local_lock (rank LOCAL, a leaf but for the allocators) guards
 * making and resetting entries and chunks; they are read without it
 * (published by release stores).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "share.h"
#include "shm.h"

#define BK_CHUNK 256u			/* descriptors' entries a chunk */
#define BK_DIR (PC_SHARE_SLOTS / BK_CHUNK)
#define MAX_LOCAL 16			/* shared caches one process uses */

struct local_ent {
	_Atomic(struct pc_cache *) c;	/* written under local_lock */
	struct pc_local l;
	_Atomic uintptr_t lo, hi;	/* its page descriptors, once whole
					   (pc__share_page_cache); 0: not */
};

static struct pc_lock local_lock = PC_LOCK_INITIALIZER(PC_RANK_LOCAL);
static struct local_ent local[MAX_LOCAL];
static _Atomic bool local_any;	/* a shared cache was ever attached */

_Atomic bool pc__test_no_bk_chunk;

/* A mapping's descriptors where no chunk could be made: none, and never
 * given any (pc__bk_ready fails the opens that would). */
static struct pc_backing bk_none = { .fd = -1, .tail_fd = -1, .ro_fd = -1 };

static struct local_ent *local_ent(struct pc_cache *c)
{
	for (unsigned i = 0; i < MAX_LOCAL; i++)
		if (atomic_load_explicit(&local[i].c, memory_order_acquire) == c)
			return &local[i];
	return NULL;
}

struct pc_cache *pc__share_page_cache(const struct pc_page *p)
{
	if (!atomic_load_explicit(&local_any, memory_order_relaxed))
		return NULL;
	for (unsigned i = 0; i < MAX_LOCAL; i++) {
		uintptr_t lo = atomic_load_explicit(&local[i].lo,
						    memory_order_acquire);

		if (lo && (uintptr_t)p >= lo &&
		    (uintptr_t)p < atomic_load_explicit(&local[i].hi,
							memory_order_relaxed))
			return atomic_load_explicit(&local[i].c,
						    memory_order_relaxed);
	}
	return NULL;
}

struct pc_local *pc__local_find(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	return e ? &e->l : NULL;
}

struct pc_local *pc__local_shared(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	PC_ASSERT(e);	/* a process uses only caches it attached */
	return &e->l;
}

void pc__local_whole(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	atomic_store_explicit(&e->hi, (uintptr_t)(c->pages + c->span_frames),
			      memory_order_relaxed);
	atomic_store_explicit(&e->lo, (uintptr_t)c->pages,
			      memory_order_release);
	atomic_store(&local_any, true);
}

struct pc_local *pc__local_add(struct pc_cache *c, struct pc_shm *shm)
{
	struct local_ent *e = NULL;

	pc__lock(&local_lock);
	if (pc__pid != getpid())	/* read by other caches' threads */
		pc__pid = getpid();
	for (unsigned i = 0; i < MAX_LOCAL && !e; i++)
		if (!atomic_load(&local[i].c))
			e = &local[i];
	if (e) {
		memset(&e->l, 0, sizeof(e->l));
		atomic_init(&e->l.sock, -1);
		e->l.shm = shm;
		e->l.bk_dir = calloc(BK_DIR, sizeof(*e->l.bk_dir));
		if (e->l.bk_dir)
			atomic_store_explicit(&e->c, c, memory_order_release);
		else
			e = NULL;
	}
	pc__unlock(&local_lock);
	return e ? &e->l : NULL;
}

/* @b holds no descriptor (a new entry: none to close). */
static void bk_clear(struct pc_backing *b)
{
	atomic_init(&b->fd, -1);
	atomic_init(&b->tail_fd, -1);
	b->ro_fd = -1;
	b->fd_rdonly = false;
}

/* @b's descriptors closed; @b holds none. */
static void bk_close(struct pc_backing *b)
{
	int fds[3] = { atomic_load(&b->fd), atomic_load(&b->tail_fd),
		       b->ro_fd };

	for (int k = 0; k < 3; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	bk_clear(b);
}

void pc__local_remove(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	if (!e)
		return;
	pc__lock(&local_lock);
	for (unsigned i = 0; i < BK_DIR; i++) {
		struct pc_backing *chunk = atomic_load(&e->l.bk_dir[i]);

		if (!chunk)
			continue;
		for (unsigned j = 0; j < BK_CHUNK; j++)
			bk_close(&chunk[j]);
		free(chunk);
	}
	free(e->l.bk_dir);
	if (atomic_load(&e->l.sock) >= 0)
		close(atomic_load(&e->l.sock));
	atomic_store(&e->lo, 0);
	memset(&e->l, 0, sizeof(e->l));
	atomic_init(&e->l.sock, -1);
	atomic_store(&e->c, NULL);
	pc__unlock(&local_lock);
}

/* @m's chunk of descriptors in this process (made if need be), or NULL. */
static struct pc_backing *bk_chunk(const struct pc_mapping *m)
{
	struct pc_local *l = pc__local_shared(m->cache);
	struct pc_backing *_Atomic *dir = &l->bk_dir[m->slot / BK_CHUNK];
	struct pc_backing *chunk = atomic_load_explicit(dir, memory_order_acquire);

	if (__builtin_expect(!chunk, 0)) {
		pc__lock(&local_lock);
		chunk = atomic_load(dir);
		if (!chunk && !atomic_load(&pc__test_no_bk_chunk))
			chunk = calloc(BK_CHUNK, sizeof(*chunk));
		if (chunk && !atomic_load(dir)) {
			for (unsigned j = 0; j < BK_CHUNK; j++)
				bk_clear(&chunk[j]);
			atomic_store_explicit(dir, chunk, memory_order_release);
		}
		pc__unlock(&local_lock);
	}
	return chunk;
}

int pc__bk_ready(const struct pc_mapping *m)
{
	if (!m->cache->shared)
		return 0;
	return bk_chunk(m) ? 0 : -ENOMEM;
}

struct pc_backing *pc__bk_shared(const struct pc_mapping *m)
{
	struct pc_backing *chunk = bk_chunk(m), *b;

	if (__builtin_expect(!chunk, 0))
		return &bk_none;
	b = &chunk[m->slot % BK_CHUNK];
	if (__builtin_expect(atomic_load_explicit(&b->serial,
						  memory_order_acquire) !=
			     m->serial, 0)) {
		/* The slot's last mapping is gone: its descriptors go. */
		pc__lock(&local_lock);
		if (atomic_load(&b->serial) != m->serial) {
			bk_close(b);
			atomic_store_explicit(&b->serial, m->serial,
					      memory_order_release);
		}
		pc__unlock(&local_lock);
	}
	return b;
}

void pc__share_fork_child(void)
{
	pc__pid = getpid();
	for (unsigned i = 0; i < MAX_LOCAL; i++) {
		struct pc_cache *c = atomic_load(&local[i].c);

		if (!c)
			continue;
		/* The parent's ring and threads are not ours. */
		local[i].l.io = NULL;
		local[i].l.io_ops = NULL;
		local[i].l.home = false;
		local[i].l.service_started = false;
		/* The parent's owner id is not ours: none until we enter. */
		pc__pagewait_owner(c->pages, c->span_frames, 0);
		(void)pc__procs_enter(c);	/* full: it runs unseen by the
						   home */
	}
}

/* ------------------------------------------------------------------ */
/* Memory and locks.                                                    */

void *pc__cache_zalloc(struct pc_cache *c, size_t size)
{
	void *p;

	if (c->shared)
		return pc__shm_alloc(pc__local_shared(c)->shm, size);
	p = aligned_alloc(64, (size + 63) / 64 * 64);
	if (p)
		memset(p, 0, size);
	return p;
}

void pc__cache_free(struct pc_cache *c, void *p, size_t size)
{
	if (!p)
		return;
	if (c->shared)
		pc__shm_free(pc__local_shared(c)->shm, p, size);
	else
		free(p);
}

void pc__cache_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			 int stat)
{
	if (!c->shared) {
		pc__lock_init(l, stat >= 0 ? c : NULL, rank, stat);
		return;
	}
	pc__lock_init_shared(l, rank,
			     pc__shm_broken_flag(pc__local_shared(c)->shm));
	if (stat >= 0) {
		l->cache = c;
		l->stat = stat;
	}
}

void pc__cache_rwlock_init(struct pc_cache *c, struct pc_rwlock *l, int rank)
{
	if (c->shared)
		pc__rwlock_init_shared(l, rank);
	else
		pc__rwlock_init(l, rank);
}

void pc__cache_cond_init(struct pc_cache *c, pthread_cond_t *cv,
			 bool monotonic)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	if (monotonic)
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (c->shared)
		pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}
