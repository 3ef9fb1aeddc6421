/*
 * local.c - the process's one table of the caches it uses: what this
 * process keeps of each cache for itself (its handle), private and shared
 * caches alike, and the memory and locks every cache's objects are made
 * of.
 *
 * A shared cache (share.c) lives in a region every process maps at the
 * same address; nothing in it may point into one process's memory.  So
 * what is this process's own is kept here, one entry a cache - the one
 * table of the process's caches: the leaves shm.c, ebr.c and pagewait.c
 * keep none of their own - found by the cache's address (pc__local: a
 * private cache keeps a pointer to its entry's part in c->local, a shared
 * one is looked up), by the cache's id (tctx.c's thread contexts are
 * keyed by it), by a page's address (pc__page_cache, and pagewait.c's
 * owner bits through its hook), or by the cache's epoch domain (ebr.c's
 * hook):
 *
 *   table[i] ─┬─ c ─────────── the cache (malloc's, or in its region)
 *             ├─ id ────────── c->id, never reused; 0: not registered
 *             ├─ lo, hi ────── its page descriptors, once it is whole
 *             ├─ owner ─────── shared: this process's page-lock owner
 *             │                bits (pagewait.h), 0: none
 *             ├─ ebr, ebr_local  the cache's epoch domain and its part
 *             │                here (ebr.h: may threads still touch it)
 *             ├─ shm_fd ────── shared: the region's descriptor here
 *             └─ l ─────────── io (io_local.c); shared: shm, home,
 *                                sock, service, bk_dir ──┐
 *                                                        ▼
 *   bk_dir[slot / BK_CHUNK] ── chunk[slot % BK_CHUNK]: struct pc_backing
 *                              (fd, tail_fd, ro_fd; serial of the mapping
 *                              the entry is of)
 *
 * An entry is made by pc__local_add (a shared cache, at create or attach,
 * with its region, the entry's from then on) or pc__local_register (a
 * private one, at create; a shared one gets its id and its domain there),
 * made whole (its pages findable) once the cache is, and ends at
 * pc__local_unregister_locked (a private one) or pc__local_remove (a
 * shared one: its descriptors closed, its region unmapped).  At most
 * MAX_CACHES caches, MAX_SHARED of them shared.
 *
 * A mapping's slot (share.c) indexes the descriptors; its serial (never
 * reused) tells a stale entry - of a mapping freed since - whose
 * descriptors are closed when the slot is next used (pc__bk_shared).  A
 * chunk is made at the first use of one of its slots in this process;
 * with no memory for it (pc__bk_ready: -ENOMEM, which the open that needed
 * it returns) the mapping reads as holding no descriptor here (bk_none).
 *
 * The memory and locks (mem.h): one provider a kind of cache, chosen by
 * what the cache is - a private cache's malloc memory, anonymous
 * mappings and this process's locks; a shared one's region (shm.c) and
 * process-shared, robust locks (lock.h) - with the reservations of frames
 * and descriptors, the tree arenas and how memory goes back to the
 * system.  pc__cache_zalloc and the lock constructors call through it.
 *
 * Fork: the child keeps the parent's region and descriptors (same
 * numbers, same files); what it cannot keep is threads, so
 * pc__share_fork_child forgets the parent's I/O backend and service
 * thread, and enters the child in each shared cache's table of processes
 * (procs.c).  Its private caches are dead (their threads stayed in the
 * parent): their entries stay, unused.
 *
 * Locks: table_lock (rank TABLE, near the top: tctx.c holds it while it
 * drains a thread's context, so that the cache stays; its fork handlers
 * hold it across fork) guards making and ending entries; entries are
 * read without it (published by release stores; ids are never reused),
 * by the page lock's and ebr's hooks too: lock-free lookups.
 * bk_lock (rank BK, a leaf but for the allocators) guards making chunks
 * and resetting stale entries of descriptors.  Both are held across
 * fork(2) (pc__local_fork_*, tctx.c's handlers): a child forked while
 * another thread (the flusher, an opener) held bk_lock would otherwise
 * inherit it locked, with no thread to let it go, and hang at its first
 * open of a file in a new chunk.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "arena.h"
#include "ebr.h"
#include "mem.h"
#include "node.h"
#include "share.h"
#include "shm.h"
#include "tree.h"

#define BK_CHUNK 256u			/* descriptors' entries a chunk */
#define BK_DIR (PC_SHARE_SLOTS / BK_CHUNK)
#define MAX_CACHES 64			/* caches one process uses */
#define MAX_SHARED 16			/* ... of them shared */

struct local_ent {
	_Atomic(struct pc_cache *) c;	/* table_lock; NULL: a free entry */
	_Atomic uint64_t id;		/* table_lock: c->id once registered */
	_Atomic uintptr_t lo, hi;	/* its page descriptors, once whole
					   (pc__page_cache); 0: not */
	_Atomic uint32_t owner;		/* table_lock: page-lock owner bits */
	_Atomic(struct pc_ebr *) ebr;	/* table_lock: c->ebr once registered */
	struct pc_ebr_local ebr_local;	/* ebr.c's, atomic */
	bool shared;			/* table_lock */
	int shm_fd;			/* table_lock: shared, the region's
					   descriptor here (l.shm, mapped) */
	struct pc_local l;
};

static struct pc_lock table_lock = PC_LOCK_INITIALIZER(PC_RANK_TABLE);
static struct local_ent table[MAX_CACHES];
static _Atomic unsigned table_hw;	/* entries ever used */
static uint64_t next_cache_id = 1;	/* table_lock: private caches' */
static struct pc_lock bk_lock = PC_LOCK_INITIALIZER(PC_RANK_BK);

_Atomic bool pc__test_no_bk_chunk;

/* A mapping's descriptors where no chunk could be made: none, and never
 * given any (pc__bk_ready fails the opens that would). */
static struct pc_backing bk_none = { .fd = -1, .tail_fd = -1, .ro_fd = -1 };

/* ------------------------------------------------------------------ */
/* The table.                                                           */

static struct local_ent *local_ent(struct pc_cache *c)
{
	unsigned hw = atomic_load_explicit(&table_hw, memory_order_acquire);

	for (unsigned i = 0; i < hw; i++)
		if (atomic_load_explicit(&table[i].c, memory_order_acquire) == c)
			return &table[i];
	return NULL;
}

/* The entry whose pages @p is one of, or NULL.  No lock. */
static struct local_ent *page_ent(const struct pc_page *p)
{
	unsigned hw = atomic_load_explicit(&table_hw, memory_order_acquire);

	for (unsigned i = 0; i < hw; i++) {
		uintptr_t lo = atomic_load_explicit(&table[i].lo,
						    memory_order_acquire);

		if (lo && (uintptr_t)p >= lo &&
		    (uintptr_t)p < atomic_load_explicit(&table[i].hi,
							memory_order_relaxed))
			return &table[i];
	}
	return NULL;
}

struct pc_cache *pc__page_cache(const struct pc_page *p)
{
	struct local_ent *e = page_ent(p);

	return e ? atomic_load_explicit(&e->c, memory_order_relaxed) : NULL;
}

/* pagewait.c's hook: this process's owner bits for @p's lock. */
static uint32_t page_owner(const struct pc_page *p)
{
	struct local_ent *e = page_ent(p);

	return e ? atomic_load_explicit(&e->owner, memory_order_relaxed) : 0;
}

/* ebr.c's hook: @d's part in this process, or NULL (not a cache's). */
static struct pc_ebr_local *domain_local(const struct pc_ebr *d)
{
	unsigned hw = atomic_load_explicit(&table_hw, memory_order_acquire);

	for (unsigned i = 0; d && i < hw; i++)
		if (atomic_load_explicit(&table[i].ebr,
					 memory_order_acquire) == d)
			return &table[i].ebr_local;
	return NULL;
}

/*
 * The owner bits of this process's page locks in @c (1 + its slot in the
 * table of processes, procs.c - the slot names the entry there that holds
 * the process's pid and start time; 0: none): in its entry, found by the
 * page's address.  Pages of a cache not yet whole (attach, before
 * pc__local_whole) are taken without an owner: none is locked before.
 */
void pc__local_set_owner(struct pc_cache *c, uint32_t id)
{
	struct local_ent *e;

	PC_ASSERT(id <= PG_OWNER_MASK >> PG_OWNER_SHIFT);
	pc__lock(&table_lock);
	e = local_ent(c);
	if (e) {
		atomic_store(&e->owner, id << PG_OWNER_SHIFT);
		if (id)
			atomic_store_explicit(&pc__pagewait_owner_hook,
					      page_owner, memory_order_release);
	}
	pc__unlock(&table_lock);
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

void pc__local_lock_table(void)
{
	pc__lock(&table_lock);
}

void pc__local_unlock_table(void)
{
	pc__unlock(&table_lock);
}

void pc__local_fork_prepare(void)
{
	pc__lock(&table_lock);
	pc__lock(&bk_lock);
}

void pc__local_fork_done(void)
{
	pc__unlock(&bk_lock);
	pc__unlock(&table_lock);
}

void pc__test_bk_lock(bool take)
{
	if (take)
		pc__lock(&bk_lock);
	else
		pc__unlock(&bk_lock);
}

bool pc__test_bk_waited(void)
{
	/* glibc's normal mutex: 2 while held with a waiter queued. */
	return atomic_load((_Atomic int *)&bk_lock.m.__data.__lock) == 2;
}

bool pc__test_bk_free(void)
{
	if (pthread_mutex_trylock(&bk_lock.m))
		return false;
	pthread_mutex_unlock(&bk_lock.m);
	return true;
}

struct pc_cache *pc__local_by_id_locked(uint64_t id)
{
	PC_ASSERT_HELD(&table_lock);
	for (unsigned i = 0; id && i < MAX_CACHES; i++)
		if (atomic_load(&table[i].id) == id)
			return atomic_load(&table[i].c);
	return NULL;
}

bool pc__local_id_live(uint64_t id)
{
	unsigned hw = atomic_load_explicit(&table_hw, memory_order_acquire);

	for (unsigned i = 0; id && i < hw; i++)
		if (atomic_load_explicit(&table[i].id, memory_order_acquire) == id)
			return true;
	return false;
}

/* A free entry made @c's (table_lock held), or NULL: none free. */
static struct local_ent *ent_new_locked(struct pc_cache *c, bool shared)
{
	unsigned nr_shared = 0, at;
	struct local_ent *e = NULL;

	for (unsigned i = 0; i < MAX_CACHES; i++) {
		bool used = atomic_load(&table[i].c) != NULL;

		if (!used && !e)
			e = &table[i];
		nr_shared += used && table[i].shared;
	}
	if (!e || (shared && nr_shared >= MAX_SHARED))
		return NULL;
	memset(&e->l, 0, sizeof(e->l));
	atomic_init(&e->l.sock, -1);
	e->shm_fd = -1;
	e->shared = shared;
	atomic_store_explicit(&e->c, c, memory_order_release);
	at = (unsigned)(e - table);
	if (atomic_load(&table_hw) <= at)
		atomic_store_explicit(&table_hw, at + 1, memory_order_release);
	return e;
}

/* @e free again (table_lock held): out of every lookup first. */
static void ent_free_locked(struct local_ent *e)
{
	atomic_store(&e->lo, 0);
	atomic_store(&e->id, 0);
	atomic_store(&e->owner, 0);
	atomic_store(&e->ebr_local.id, 0);	/* threads leave it alone */
	atomic_store(&e->ebr, NULL);
	e->shm_fd = -1;
	atomic_store(&e->c, NULL);
	memset(&e->l, 0, sizeof(e->l));
	atomic_init(&e->l.sock, -1);
}

int pc__local_register(struct pc_cache *c)
{
	struct local_ent *e;

	pc__lock(&table_lock);
	e = c->shared ? local_ent(c) : ent_new_locked(c, false);
	if (e) {
		if (!c->shared) {	/* a shared one has its own */
			c->id = next_cache_id++;
			c->local = &e->l;
		}
		atomic_store_explicit(&e->id, c->id, memory_order_release);
		atomic_store_explicit(&e->ebr, c->ebr, memory_order_release);
		atomic_store(&pc__ebr_local_hook, domain_local);
	}
	pc__unlock(&table_lock);
	return e ? 0 : -ENOMEM;
}

void pc__local_unregister_locked(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	PC_ASSERT_HELD(&table_lock);
	if (!e)
		return;
	if (c->shared) {	/* the rest at pc__local_remove */
		atomic_store_explicit(&e->id, 0, memory_order_release);
		return;
	}
	ent_free_locked(e);
	c->local = NULL;
}

void pc__local_whole(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	atomic_store_explicit(&e->hi, (uintptr_t)(c->pages + c->span_frames),
			      memory_order_relaxed);
	atomic_store_explicit(&e->lo, (uintptr_t)c->pages,
			      memory_order_release);
}

struct pc_local *pc__local_add(struct pc_cache *c, struct pc_shm *shm,
			       int shm_fd)
{
	struct local_ent *e;

	pc__lock(&table_lock);
	if (pc__pid != getpid())	/* read by other caches' threads */
		pc__pid = getpid();
	e = ent_new_locked(c, true);
	if (e) {
		e->l.shm = shm;
		e->shm_fd = shm_fd;
		/* An attach's reap may read the trees before it registers. */
		atomic_store_explicit(&e->ebr, c->ebr, memory_order_release);
		atomic_store(&pc__ebr_local_hook, domain_local);
		e->l.bk_dir = calloc(BK_DIR, sizeof(*e->l.bk_dir));
		if (!e->l.bk_dir) {
			ent_free_locked(e);
			e = NULL;
		}
	}
	pc__unlock(&table_lock);
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
	struct pc_shm *shm;
	int shm_fd;

	if (!e)
		return;
	pc__lock(&table_lock);
	shm = e->l.shm;
	shm_fd = e->shm_fd;
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
	ent_free_locked(e);
	pc__unlock(&table_lock);
	pc__shm_detach(shm, shm_fd);	/* out of every lookup first */
}

void pc__share_fork_child(void)
{
	pc__pid = getpid();
	for (unsigned i = 0; i < MAX_CACHES; i++) {
		struct local_ent *e = &table[i];
		struct pc_cache *c = atomic_load(&e->c);

		if (!c || !e->shared)
			continue;
		/* The parent's ring and threads are not ours. */
		e->l.io = NULL;
		e->l.io_ops = NULL;
		e->l.home = false;
		e->l.service_started = false;
		/* The parent's owner id is not ours: none until we enter. */
		atomic_store(&e->owner, 0);
		(void)pc__procs_enter(c);	/* full: it runs unseen by the
						   home */
	}
}

/* ------------------------------------------------------------------ */
/* Descriptors of a shared cache's mappings, by slot.                   */

/* @m's chunk of descriptors in this process (made if need be), or NULL. */
static struct pc_backing *bk_chunk(const struct pc_mapping *m)
{
	struct pc_local *l = pc__local_shared(m->cache);
	struct pc_backing *_Atomic *dir = &l->bk_dir[m->slot / BK_CHUNK];
	struct pc_backing *chunk = atomic_load_explicit(dir, memory_order_acquire);

	if (__builtin_expect(!chunk, 0)) {
		pc__lock(&bk_lock);
		chunk = atomic_load(dir);
		if (!chunk && !atomic_load(&pc__test_no_bk_chunk))
			chunk = calloc(BK_CHUNK, sizeof(*chunk));
		if (chunk && !atomic_load(dir)) {
			for (unsigned j = 0; j < BK_CHUNK; j++)
				bk_clear(&chunk[j]);
			atomic_store_explicit(dir, chunk, memory_order_release);
		}
		pc__unlock(&bk_lock);
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
		pc__lock(&bk_lock);
		if (atomic_load(&b->serial) != m->serial) {
			bk_close(b);
			atomic_store_explicit(&b->serial, m->serial,
					      memory_order_release);
		}
		pc__unlock(&bk_lock);
	}
	return b;
}

/* ------------------------------------------------------------------ */
/* Memory and locks: the provider (mem.h).                              */

#define HUGE_BYTES (2ull << 20)

static void *private_zalloc(struct pc_cache *c, size_t size)
{
	void *p = aligned_alloc(64, (size + 63) / 64 * 64);

	(void)c;
	if (p)
		memset(p, 0, size);
	return p;
}

static void private_free(struct pc_cache *c, void *p, size_t size)
{
	(void)c;
	(void)size;
	free(p);
}

static void private_lock_init(struct pc_cache *c, struct pc_lock *l,
			      int rank, int stat)
{
	pc__lock_init(l, stat >= 0 ? c : NULL, rank, stat);
}

/* Address space only: mapped on first touch, never counted as memory. */
static void *private_reserve(struct pc_cache *c, size_t len, void **map,
			     size_t *map_len)
{
	char *p;

	(void)c;
	*map_len = len + HUGE_BYTES;
	p = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*map = p;
	return (void *)(((uintptr_t)p + HUGE_BYTES - 1) &
			~(uintptr_t)(HUGE_BYTES - 1));
}

static int private_arena(struct pc_cache *c, struct pc_node *n, size_t bytes,
			 int numa)
{
	(void)c;
	return pc__arena_create(&n->tree_arena, pc__tree_node_size(), bytes,
				numa);
}

static void private_arena_fini(struct pc_node *n)
{
	pc__arena_destroy(n->tree_arena);
}

static void *shared_zalloc(struct pc_cache *c, size_t size)
{
	return pc__shm_alloc(pc__local_shared(c)->shm, size);
}

static void shared_free(struct pc_cache *c, void *p, size_t size)
{
	pc__shm_free(pc__local_shared(c)->shm, p, size);
}

static void shared_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			     int stat)
{
	pc__lock_init_shared(l, rank,
			     pc__shm_broken_flag(pc__local_shared(c)->shm));
	if (stat >= 0) {
		l->cache = c;
		l->stat = stat;
	}
}

/* The region's, never unmapped alone. */
static void *shared_reserve(struct pc_cache *c, size_t len, void **map,
			    size_t *map_len)
{
	*map = NULL;
	*map_len = 0;
	return pc__shm_reserve(pc__local_shared(c)->shm, len);
}

/* @bytes of the region, its struct an object of it; it goes with it. */
static int shared_arena(struct pc_cache *c, struct pc_node *n, size_t bytes,
			int numa)
{
	struct pc_shm *s = pc__local_shared(c)->shm;
	void *a = pc__cache_zalloc(c, pc__arena_struct_size());
	void *base = pc__shm_reserve(s, bytes);

	(void)numa;
	if (!a || !base)
		return -ENOMEM;
	n->tree_arena = pc__arena_init_shared(a, base, bytes,
					      pc__tree_node_size(),
					      pc__shm_broken_flag(s));
	return 0;
}

static void shared_arena_fini(struct pc_node *n)
{
	(void)n;
}

const struct pc_mem_ops pc__mem_ops[2] = {
	{	/* private */
		.zalloc = private_zalloc,
		.free = private_free,
		.lock_init = private_lock_init,
		.rwlock_init = pc__rwlock_init,
		.pshared = false,
		.reserve = private_reserve,
		.fixed = false,
		.arena = private_arena,
		.arena_fini = private_arena_fini,
		.hugetlb = true,
		.discard = MADV_DONTNEED,
		.collapse = false,
	},
	{	/* shared */
		.zalloc = shared_zalloc,
		.free = shared_free,
		.lock_init = shared_lock_init,
		.rwlock_init = pc__rwlock_init_shared,
		.pshared = true,
		.reserve = shared_reserve,
		.fixed = true,
		.arena = shared_arena,
		.arena_fini = shared_arena_fini,
		.hugetlb = false,
		.discard = MADV_REMOVE,
		.collapse = true,
	},
};

void *pc__cache_zalloc(struct pc_cache *c, size_t size)
{
	return pc__mem(c)->zalloc(c, size);
}

void pc__cache_free(struct pc_cache *c, void *p, size_t size)
{
	if (p)
		pc__mem(c)->free(c, p, size);
}

void pc__cache_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			 int stat)
{
	pc__mem(c)->lock_init(c, l, rank, stat);
}

void pc__cache_rwlock_init(struct pc_cache *c, struct pc_rwlock *l, int rank)
{
	pc__mem(c)->rwlock_init(l, rank);
}

void pc__cache_cond_init(struct pc_cache *c, pthread_cond_t *cv,
			 bool monotonic)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	if (monotonic)
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (pc__mem(c)->pshared)
		pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}
