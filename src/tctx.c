/*
 * tctx.c - each thread's context in each cache of the process.
 *
 * The process keeps its caches in its one table (local.c), each with an
 * id unique in the process (never reused): pc_cache_create registers a
 * cache (pc__cache_register, here: the fork handlers too), destroy
 * unregisters it.
 *
 * Per-thread contexts (struct pc_tctx, tctx.h) carry a thread's node,
 * its vmstat shard, its LRU batches and its dirty-throttle state.  A
 * thread finds its context for a cache in a small thread-local table
 * (slots[]) keyed by the cache's id; the cache keeps all contexts on
 * c->tctxs so reclaim can drain them (pc__tctx_drain_all) and destroy can
 * free them (pc__cache_unregister).  A thread that exits hands its
 * contexts back through a pthread key destructor (tctx_exit), which checks
 * under the table's lock that the cache still exists (a cache may be
 * destroyed before its users' threads).  A context is made on first use, which may
 * come under any lock (a counter bumped under an lru lock), so making one
 * takes no lock: it is pushed on c->tctxs by compare-and-swap, and a dead
 * cache's slot is found by its id gone from the table (pc__local_id_live:
 * atomic, read without a lock).  Unlinking and walking the list (drains) take c->tctx_lock.
 *
 * A forked child can create caches of its own (not use inherited ones):
 * pthread_atfork handlers hold the table's lock across fork.  A shared cache
 * (share.c) it goes on using: the child's thread forgets the parent's
 * contexts (they stay the parent thread's), and its contexts, like every
 * other process's, are in the cache's memory on c->tctxs, each marked
 * with its process; a process that detaches takes its own off.
 *
 * A context also records the pages its thread holds a reference on
 * across code where its process may die (held[]: the read and write
 * paths' page, reclaim's isolated batch, a writeback gang's pages, the
 * copies lru.c's drain takes of a batch), so that the reaper of a dead
 * process gives them back (pc__tctx_reap: a page off its list back on
 * it first).  A record is set after the get and cleared before the put
 * or before the reference goes to another holder, by its thread alone: a
 * death between can leak a reference, never give one back twice.  So no
 * record covers a page while its reference is its I/O's (io_pid: the
 * I/O's reaper gives that one back, procs.c): a reader or writer lets go
 * of its record across a sync read of the page (filemap.c).
 *
 * Pins (pc_get_page) are the process's: pc_put_page may come from any of
 * its threads.  Each thread keeps a net count per pinned page in pins[]
 * (a get +1 in the getter's table, a put -1 in the putter's: plain
 * stores, no read-modify-write on the zero-copy hit path); a full table,
 * and the entries of a thread that exits, go to a spare context of the
 * process (no thread's, under c->tctx_lock).  The reaper sums the dead
 * process's tables per page and gives back what is left
 * (shared_pins_reaped; shared_pins_unrecorded counts pins no spare could
 * be made for).  Not recorded (a death there still pins the frame): the
 * instructions between a get and its record, fadvise's invalidation, and
 * what dropbehind, truncation and migration hold under a mutex (a death
 * there breaks the cache anyway).
 *
 * Locks (lock.h): the table's (local.c, process-wide) → c->tctx_lock →
 * t->lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "mem.h"
#include "node.h"
#include "share.h"
#include "tctx.h"
#include "vmscan.h"

#define TCTX_SLOTS 8

struct tctx_slot {
	uint64_t id;
	struct pc_tctx *t;
};

static pthread_key_t tctx_key;
static pthread_once_t tctx_once = PTHREAD_ONCE_INIT;
static __thread struct tctx_slot slots[TCTX_SLOTS];

/*
 * Off c->tctxs.  New contexts are pushed at the head without the lock
 * (tctx_get), so the head is changed by compare-and-swap; the links behind
 * it change only under c->tctx_lock.
 */
static void tctx_unlink(struct pc_cache *c, struct pc_tctx *t)
{
	struct pc_tctx *head = t;

	pc__lock(&c->tctx_lock);
	if (!atomic_compare_exchange_strong(&c->tctxs, &head, t->next)) {
		for (struct pc_tctx *p = head; p; p = p->next)
			if (p->next == t) {
				p->next = t->next;
				break;
			}
	}
	pc__unlock(&c->tctx_lock);
}

static void pins_hand_over(struct pc_cache *c, struct pc_tctx *t);

/* Thread exit: give back the contexts of the caches still alive. */
static void tctx_exit(void *arg)
{
	(void)arg;
	pc__local_lock_table();
	for (int i = 0; i < TCTX_SLOTS; i++) {
		struct pc_cache *c;
		struct pc_tctx *t = slots[i].t;

		if (!t)
			continue;
		c = pc__local_by_id_locked(slots[i].id);
		if (c && c == t->cache) {
			pc__lru_drain(c, t);
			pc__pcp_drain(c, t);
			if (c->shared)
				pins_hand_over(c, t);
			tctx_unlink(c, t);
			pc__lock_destroy(&t->lock);
			pc__cache_free(c, t, sizeof(*t));
		}
		slots[i].t = NULL;
		slots[i].id = 0;
	}
	pc__local_unlock_table();
}

static void tctx_key_init(void)
{
	pthread_key_create(&tctx_key, tctx_exit);
}

/*
 * This thread's context for @c, made on first use.  Making one may happen
 * under any lock (a counter bumped under an lru lock is a first use), so
 * it takes none: dead caches' slots are found by id (pc__local_id_live),
 * and the new context is pushed on c->tctxs by compare-and-swap.
 */
struct pc_tctx *pc__tctx(struct pc_cache *c)
{
	struct pc_tctx *t;
	int free_slot = -1;

	for (int i = 0; i < TCTX_SLOTS; i++) {
		if (slots[i].id == c->id)
			return slots[i].t;
		if (free_slot < 0 && !slots[i].t)
			free_slot = i;
	}
	if (free_slot < 0) {
		/* Slots taken by caches since destroyed can be reused. */
		for (int i = 0; i < TCTX_SLOTS && free_slot < 0; i++)
			if (!pc__local_id_live(slots[i].id))
				free_slot = i;
		if (free_slot < 0)
			return NULL;	/* 9th cache in one thread: no batching */
	}
	t = pc__cache_zalloc(c, sizeof(*t));
	if (!t)
		return NULL;
	t->cache = c;
	t->cache_id = c->id;
	t->pid = getpid();
	t->node = (int)(atomic_fetch_add(&c->next_node, 1) % (unsigned)c->nr_nodes);
	t->shard = atomic_fetch_add(&c->next_shard, 1) % PC_VMSTAT_SHARDS;
	pc__cache_lock_init(c, &t->lock, PC_RANK_TCTX, -1);
	t->next = atomic_load_explicit(&c->tctxs, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&c->tctxs, &t->next, t,
						      memory_order_release,
						      memory_order_relaxed))
		;
	pthread_once(&tctx_once, tctx_key_init);
	pthread_setspecific(tctx_key, (void *)1);
	slots[free_slot].id = c->id;
	slots[free_slot].t = t;
	return t;
}

unsigned pc__tctx_drain_all(struct pc_cache *c)
{
	unsigned frames = 0;

	pc__lock(&c->tctx_lock);
	for (struct pc_tctx *t = atomic_load_explicit(&c->tctxs,
						      memory_order_acquire);
	     t; t = t->next) {
		pc__lru_drain(c, t);
		frames += pc__pcp_drain(c, t);
	}
	pc__unlock(&c->tctx_lock);
	return frames;
}

int pc__held_find(struct pc_tctx *t, unsigned from, unsigned n,
		  struct pc_cache *c, const struct pc_page *p)
{
	uint32_t want = page_pfn(c, p) + 1;

	if (!t)
		return -1;
	for (unsigned i = from; i < from + n; i++)
		if ((atomic_load_explicit(&t->held[i], memory_order_relaxed) &
		     ~PC_HELD_ISO) == want)
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Pins (pc_get_page): per thread, net, summed by the reaper.          */

#define PIN_KEY(v) ((uint32_t)((v) >> 32))
#define PIN_NET(v) ((int32_t)(uint32_t)(v))

/* Add @delta to @key's entry of @pins (or a free one): false if full. */
static bool pins_add(_Atomic uint64_t *pins, uint32_t key, int delta)
{
	int free_at = -1;

	for (int i = 0; i < PC_PINS; i++) {
		uint64_t v = atomic_load_explicit(&pins[i],
						  memory_order_relaxed);

		if (PIN_KEY(v) == key) {
			int32_t n = PIN_NET(v) + delta;

			atomic_store_explicit(&pins[i], n ? (uint64_t)key << 32 |
						       (uint32_t)n : 0,
					      memory_order_release);
			return true;
		}
		if (!v && free_at < 0)
			free_at = i;
	}
	if (free_at < 0)
		return false;
	atomic_store_explicit(&pins[free_at],
			      (uint64_t)key << 32 | (uint32_t)delta,
			      memory_order_release);
	return true;
}

/*
 * Into a spare context of this process (under c->tctx_lock): a thread's
 * table was full, or the thread exits with entries.  A new spare is made
 * when every one is full; a spare without entries is not freed (at most
 * as many as the process ever needed at once, freed by its reap or
 * detach).
 */
static void pins_add_spare(struct pc_cache *c, uint32_t key, int delta)
{
	pid_t pid = getpid();
	struct pc_tctx *t;

	pc__lock(&c->tctx_lock);
	for (t = atomic_load(&c->tctxs); t; t = t->next)
		if (t->spare && t->pid == pid && pins_add(t->pins, key, delta))
			break;
	pc__unlock(&c->tctx_lock);
	if (t)
		return;
	t = pc__cache_zalloc(c, sizeof(*t));
	if (!t) {	/* unrecorded: a death now pins the frame */
		pc__inc(c, 0, shared_pins_unrecorded);
		return;
	}
	t->cache = c;
	t->cache_id = c->id;
	t->pid = pid;
	t->spare = true;
	pc__cache_lock_init(c, &t->lock, PC_RANK_TCTX, -1);
	(void)pins_add(t->pins, key, delta);
	t->next = atomic_load_explicit(&c->tctxs, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&c->tctxs, &t->next, t,
						      memory_order_release,
						      memory_order_relaxed))
		;
}

void pc__pin_note(struct pc_cache *c, struct pc_tctx *t,
		  const struct pc_page *p, int delta)
{
	uint32_t key = page_pfn(c, p) + 1;

	if (!c->shared)
		return;
	if (!t || !pins_add(t->pins, key, delta))
		pins_add_spare(c, key, delta);
}

/* A thread's context goes (it exits): its pins to a spare. */
static void pins_hand_over(struct pc_cache *c, struct pc_tctx *t)
{
	for (int i = 0; i < PC_PINS; i++) {
		uint64_t v = atomic_exchange(&t->pins[i], 0);

		if (v)
			pins_add_spare(c, PIN_KEY(v), PIN_NET(v));
	}
}

static int pin_cmp(const void *a, const void *b)
{
	uint32_t x = PIN_KEY(*(const uint64_t *)a);
	uint32_t y = PIN_KEY(*(const uint64_t *)b);

	return x < y ? -1 : x > y;
}

/*
 * The pins dead process @pid's contexts record (but @own's), summed by
 * page: each page's net count given back.  Returns the references given.
 */
static unsigned pins_give_back(struct pc_cache *c, pid_t pid,
			       struct pc_tctx *own)
{
	uint64_t *all = NULL;
	size_t n = 0, cap = 0;
	unsigned given = 0;

	pc__lock(&c->tctx_lock);
	for (struct pc_tctx *t = atomic_load(&c->tctxs); t; t = t->next) {
		if (t->pid != pid || t == own)
			continue;
		for (int i = 0; i < PC_PINS; i++) {
			uint64_t v = atomic_exchange(&t->pins[i], 0);

			if (!v)
				continue;
			if (n == cap) {
				uint64_t *bigger;

				cap = cap ? 2 * cap : 64;
				bigger = realloc(all, cap * sizeof(*all));
				if (!bigger)
					break;	/* no memory: those pinned */
				all = bigger;
			}
			all[n++] = v;
		}
	}
	pc__unlock(&c->tctx_lock);
	if (n)
		qsort(all, n, sizeof(*all), pin_cmp);
	for (size_t i = 0; i < n;) {
		uint32_t key = PIN_KEY(all[i]);
		int64_t net = 0;

		for (; i < n && PIN_KEY(all[i]) == key; i++)
			net += PIN_NET(all[i]);
		for (struct pc_page *p = pfn_page(c, key - 1);
		     net > 0 && page_count(p) > 0; net--) {
			pc__put_page(c, p);
			given++;
		}
	}
	free(all);
	return given;
}

/*
 * What a dead thread's record says it held: one reference each, and an
 * isolated page (PC_HELD_ISO) back on its LRU list first - unless it has
 * left its mapping (the put frees it) or its count is 0 (frozen by the
 * dead thread itself, under a tree lock it died holding: the cache is
 * broken, and the frame is left alone).  Returns the references given.
 */
static unsigned held_give_back(struct pc_cache *c, struct pc_tctx *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < PC_HELD_SLOTS; i++) {
		uint32_t v = atomic_exchange(&t->held[i], 0);
		struct pc_page *p;

		if (!v)
			continue;
		p = pfn_page(c, (v & ~PC_HELD_ISO) - 1);
		if (page_count(p) <= 0)
			continue;
		if ((v & PC_HELD_ISO) && page_mapping(p)) {
			struct pc_node *nd = page_node(c, p);

			pc__lock_counted(&nd->lru_lock);
			if (!page_test_set(p, PG_lru))
				pc__lru_add_locked(nd, p, false);
			pc__unlock(&nd->lru_lock);
		}
		pc__put_page(c, p);
		n++;
	}
	return n;
}

/*
 * The contexts of a dead process @pid, but the calling thread's own: a
 * process that reaps a dead one of its own pid (procs.c: a pid reused,
 * or its own image before an exec) may have made one during the reap.
 * The pages their batches and records held are given back first.
 */
void pc__tctx_reap(struct pc_cache *c, pid_t pid)
{
	struct pc_tctx *own = NULL;

	for (int i = 0; i < TCTX_SLOTS; i++)
		if (slots[i].t && slots[i].id == c->id)
			own = slots[i].t;
	pc__add(c, 0, shared_pins_reaped, pins_give_back(c, pid, own));
	for (;;) {
		struct pc_tctx *t;

		pc__lock(&c->tctx_lock);
		for (t = atomic_load(&c->tctxs);
		     t && (t->pid != pid || t == own); t = t->next)
			;
		pc__unlock(&c->tctx_lock);
		if (!t)
			return;
		pc__lru_drain(c, t);	/* the pages its batches held */
		pc__pcp_drain(c, t);	/* and the frames of its list */
		pc__add(c, 0, shared_refs_reaped, held_give_back(c, t));
		tctx_unlink(c, t);
		pc__lock_destroy(&t->lock);
		pc__cache_free(c, t, sizeof(*t));
	}
}

PC_EXPORT int pc_thread_set_node(pc_cache *c, int node)
{
	struct pc_tctx *t;

	if (!c || node < 0 || node >= c->nr_nodes)
		return -EINVAL;
	t = pc__tctx(c);
	if (!t)
		return -ENOMEM;
	t->node = node;
	return 0;
}

/*
 * fork(2): a child may make caches of its own (the ones it inherited are
 * dead: their threads stayed in the parent).  What a new cache needs that
 * another thread could hold at the fork - the table's lock, and bk_lock, the
 * descriptors' - is taken before and released on both sides (ebr.c looks
 * after its own state).  Registered
 * once, by the first cache registered.
 */
static void fork_prepare(void)
{
	pc__local_fork_prepare();
}

static void fork_parent(void)
{
	pc__local_fork_done();
}

static void fork_child(void)
{
	/* This thread's contexts are its parent's thread's. */
	for (int i = 0; i < TCTX_SLOTS; i++)
		slots[i].id = 0, slots[i].t = NULL;
	pc__local_fork_done();
	pc__share_fork_child();
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_handlers_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* @c into the table, with an id of its own: 0, or -ENOMEM (64 caches). */
int pc__cache_register(struct pc_cache *c)
{
	int r;

	pthread_once(&fork_once, fork_handlers_init);
	r = pc__local_register(c);
	if (r)
		fprintf(stderr, "pagecache: too many caches in one process\n");
	return r;
}

/*
 * @c out of the table; the contexts of this process's threads still running
 * freed (their batches drained first: a shared cache lives on), and in a
 * shared cache's home, the last to leave, everyone's.
 */
void pc__cache_unregister(struct pc_cache *c)
{
	bool all = pc__share_is_home(c);
	pid_t self = getpid();

	pc__local_lock_table();
	for (;;) {	/* other processes may push theirs meanwhile */
		struct pc_tctx *t;

		pc__lock(&c->tctx_lock);
		for (t = atomic_load(&c->tctxs); t && !all && t->pid != self;
		     t = t->next)
			;
		pc__unlock(&c->tctx_lock);
		if (!t)
			break;
		pc__lru_drain(c, t);
		pc__pcp_drain(c, t);
		tctx_unlink(c, t);
		pc__lock_destroy(&t->lock);
		pc__cache_free(c, t, sizeof(*t));
	}
	pc__local_unregister_locked(c);
	pc__local_unlock_table();
	for (int i = 0; i < TCTX_SLOTS; i++)
		if (slots[i].id == c->id)
			slots[i].id = 0, slots[i].t = NULL;
}

