/*
 * migrate.c - NUMA balancing: sampled hint faults, page migration, and a
 * scan that slows down when migrations fail (numa.balancing, seed 003).
 *
 * What it owns: one struct pc_numab per cache (c->numab, NULL when the
 * policy is off) with its scanner thread, its queue of migration
 * candidates and its scan period.  Pages carry the per-page state
 * (page.h): PG_hint, last_node, hint_count.
 *
 *   scanner thread, every scan period            reader (pc_pread,
 *   ┌───────────────────────────────┐            pc_get_page), holding a ref
 *   │ frames of node k, 1/16 a scan │  PG_hint   ┌──────────────────────────┐
 *   │ cursor ──► [p][p][p][p]...    │ ─────────► │ pc__numa_hint_fault:     │
 *   │ resident (PG_lru) pages get   │            │  numa_hint_faults(+local)│
 *   │ PG_hint: numa_pte_updates     │            │  last_node, hint_count   │
 *   └───────────────────────────────┘            │  2 remote hints in a row │
 *                 ▲                              │  from one node: queue it │
 *                 │ adapt period                 └────────────┬─────────────┘
 *   ┌─────────────┴─────────────────┐   queue (ref held)      │
 *   │ migrate, numa.migrate_rate/s: │ ◄───────────────────────┘
 *   │ new frame on the target node  │
 *   │ (only above its low mark),    │   >= 1/4 of a window's attempts (4 or
 *   │ copy, swap the index entry,   │   more) failed: period x2, up to 64 x
 *   │ free the old frame            │   numa.scan_period_ms; else period / 2,
 *   └───────────────────────────────┘   down to numa.scan_period_ms
 *
 * The hint fault is the kernel's NUMA hinting fault without page tables:
 * the scanner marks a sample of resident pages, and the next reader of a
 * marked page (the caller holds a reference, no lock) reports where it
 * runs.  A local fault resets the page's count; remote faults from one
 * node in a row count up (the kernel's two-stage filter: last_node is the
 * node of the previous fault, hint_count how many in a row came from it),
 * and at HINT_THRESHOLD the page is queued for migration to that node.
 * The reader only queues (taking a reference for the queue); the scanner
 * thread migrates it at least MIGRATE_DELAY_NS later, when the reader that
 * queued it has long let go of the page.
 *
 * Migration of one page (migrate_one), the way vmscan.c removes a page:
 *   1. a frame on the target node (pc__alloc_page_on: only above its low
 *      watermark, no reclaim); none: failure, target short of memory;
 *   2. page lock by trylock; still in its mapping at its index; clean, not
 *      under writeback, uptodate, no error; else a failure (busy);
 *   3. copy the data (the page lock keeps writers out; readers may copy
 *      out at the same time, which is fine);
 *   4. under the tree lock: the slot still holds the page, and its count
 *      freezes at exactly 2 (mapping + the queue's reference; a reader, a
 *      pinner, a per-thread batch or a reclaim isolation holds one more:
 *      busy); dirty after the freeze: unfreeze, busy.  Frozen, it comes
 *      off its node's LRU under the lru lock (PG_lru cleared): no one can
 *      reach it meanwhile, so a failure never has to put it back.
 *   5. still under the tree lock, the new frame takes the old one's
 *      mapping, index and flags (uptodate, referenced, active, workingset,
 *      readahead, rapage, dropbehind), locked, goes on the target node's
 *      LRU (lock order tree → lru) before it is visible, then the slot is
 *      swapped (pc__tree_store, page over page: tags kept) and the old
 *      frame's mapping cleared;
 *   6. unlock both, drop our reference to the new frame, free the old.
 * A speculative reader that finds the old frame meanwhile fails
 * page_get_unless_zero (frozen) and looks again: it finds the new frame,
 * whose mapping and index were set before the slot was.  Truncation needs
 * the page lock of the old frame, or finds the new one, locked until the
 * swap is done: the mapping outlives a migration that holds its page lock.
 * A failed page stays where it was and stays a candidate (one more remote
 * hint from the same node queues it again).
 *
 * Rate: a token bucket of numa.migrate_rate pages per second (burst a
 * tenth of a second's worth), spent per attempt.  Candidates wait in the
 * queue for tokens; when the queue is full, new candidates are dropped.
 *
 * Locks and protection:
 *   nb->lock (a leaf: taken by readers with no ranked lock held, and by
 *   the scanner with none) protects the queue, stop.  Queue entries hold a
 *   page reference; bit 31 of hint_count says a page is queued.
 *   Scanner thread only: cursors, period, tokens, the window's counts.
 *   c->numab: written at create and destroy, when no reader runs.
 *   Page lock → tree lock → lru lock → free lock, as everywhere.
 *
 * Counters: numa_pte_updates (pages marked, page's node), numa_hint_faults
 * and numa_hint_faults_local (accessing node), numa_pages_migrated and
 * pgmigrate_success / pgmigrate_fail (target node), numa_scan_period_ms
 * (a gauge on node 0, kept as deltas).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "migrate.h"
#include "node.h"
#include "pagewait.h"
#include "policy.h"
#include "tctx.h"
#include "tracepoint.h"
#include "tree.h"

#define SCAN_SHARE 16		/* a scan marks 1/16 of each node's frames */
#define SCAN_MIN_FRAMES 64
#define PERIOD_MAX_MULT 64	/* slowest scan: 64 x numa.scan_period_ms */
#define WINDOW_MIN 4		/* attempts before the period adapts */
#define HINT_THRESHOLD 2	/* remote hints in a row from one node */
#define HINT_QUEUED 0x80000000u	/* hint_count: on the migration queue */
#define QUEUE_SIZE 1024
#define MIGRATE_BATCH 64	/* candidates taken per queue-lock hold */
#define MIGRATE_DELAY_NS 2000000ull	/* let the queuing reader finish */
#define NS_PER_MS 1000000ull

#define CARRY_FLAGS ((1u << PG_uptodate) | (1u << PG_referenced) | \
		     (1u << PG_active) | (1u << PG_workingset) | \
		     (1u << PG_readahead) | (1u << PG_rapage) | \
		     (1u << PG_dropbehind) | (1u << PG_unevictable))

struct mig_req {
	struct pc_page *page;		/* a reference held */
	struct pc_mapping *m;		/* compared, never dereferenced here */
	uint64_t index;
	uint64_t queued_ns;
	int target;
};

struct pc_numab {
	struct pc_cache *cache;		/* read-only */
	pthread_t thread;		/* read-only after start */

	struct pc_lock lock;		/* leaf */
	pthread_cond_t cond;		/* CLOCK_MONOTONIC; scanner waits */
	bool stop;			/* lock */
	unsigned head, nr;		/* lock: ring of candidates */
	struct mig_req q[QUEUE_SIZE];	/* lock */

	/* the scanner thread only */
	unsigned period_ms, period_min, period_max;
	uint32_t cursor[PC_MAX_NODES];	/* next frame offset in each node */
	double tokens, burst, rate;
	uint64_t refill_ns;
	uint64_t win_ok, win_fail;	/* attempts in the open window */
};

enum { MIG_SKIP, MIG_OK, MIG_FAIL };

/* ------------------------------------------------------------------ */
/* Hint faults (readers).                                              */

static void enqueue(struct pc_numab *nb, struct pc_page *p, int target)
{
	struct mig_req *rq;

	pc__lock(&nb->lock);
	if (nb->nr == QUEUE_SIZE || nb->stop) {
		pc__unlock(&nb->lock);
		atomic_store_explicit(&p->hint_count, 0, memory_order_relaxed);
		return;
	}
	page_get(p);	/* the caller holds one: this is not the first */
	rq = &nb->q[(nb->head + nb->nr) % QUEUE_SIZE];
	rq->page = p;
	rq->m = page_mapping(p);
	rq->index = page_index(p);
	rq->target = target;
	rq->queued_ns = pc__now_ns();
	if (nb->nr++ == 0)
		pthread_cond_signal(&nb->cond);
	pc__unlock(&nb->lock);
}

void pc__numa_hint_fault(struct pc_cache *c, struct pc_page *p)
{
	struct pc_numab *nb = c->numab;
	struct pc_tctx *t;
	uint32_t n;
	int me, last;

	if (!page_test_clear(p, PG_hint) || !nb)
		return;
	t = pc__tctx(c);
	me = t ? t->node : 0;
	pc__inc(c, me, numa_hint_faults);
	last = atomic_exchange_explicit(&p->last_node, me, memory_order_relaxed);
	if (page_node(c, p)->id == me) {
		pc__inc(c, me, numa_hint_faults_local);
		atomic_fetch_and_explicit(&p->hint_count, HINT_QUEUED,
					  memory_order_relaxed);
		return;
	}
	if (last != me)		/* a new node: start counting again */
		atomic_fetch_and_explicit(&p->hint_count, HINT_QUEUED,
					  memory_order_relaxed);
	n = atomic_fetch_add_explicit(&p->hint_count, 1,
				      memory_order_relaxed) + 1;
	if ((n & ~HINT_QUEUED) < HINT_THRESHOLD || (n & HINT_QUEUED) ||
	    page_test(p, PG_dropbehind) || !page_mapping(p))
		return;
	if (atomic_fetch_or_explicit(&p->hint_count, HINT_QUEUED,
				     memory_order_relaxed) & HINT_QUEUED)
		return;		/* another reader queued it just now */
	enqueue(nb, p, me);
}

/* ------------------------------------------------------------------ */
/* Scanning (the scanner thread).                                      */

/*
 * Mark the next share of each node's frames: resident, uptodate pages on
 * an LRU list.  No lock and no reference: the flags are atomic, and a bit
 * set on a frame that is being freed is cleared when it is allocated.
 */
static void scan_once(struct pc_numab *nb)
{
	struct pc_cache *c = nb->cache;
	const uint32_t want = (1u << PG_lru) | (1u << PG_uptodate);
	const uint32_t skip = (1u << PG_hint) | (1u << PG_dropbehind);

	for (int k = 0; k < c->nr_nodes; k++) {
		struct pc_node *n = &c->nodes[k];
		/* Only frames ever handed out: the rest were never touched. */
		uint32_t per = atomic_load_explicit(&n->hw, memory_order_acquire);
		uint32_t chunk = pc_min(per, pc_max(SCAN_MIN_FRAMES, per / SCAN_SHARE));
		uint32_t off = per ? nb->cursor[k] % per : 0;
		int64_t marked = 0;

		for (uint32_t i = 0; i < chunk; i++) {
			struct pc_page *p = pfn_page(c, n->first_pfn + off);
			uint32_t f = atomic_load_explicit(&p->flags,
							  memory_order_relaxed);

			if (++off == per)
				off = 0;
			if ((f & want) != want || (f & skip) || page_count(p) <= 0)
				continue;
			page_set(p, PG_hint);
			marked++;
		}
		nb->cursor[k] = off;
		if (marked)
			pc__add(c, k, numa_pte_updates, marked);
	}
}

/*
 * Seed 003: failures slow the scan, successes let it speed up again.  The
 * window is the scans since the last change, closed once it holds
 * WINDOW_MIN attempts: a quarter of them failed doubles the period, fewer
 * halve it.
 */
static void adapt_period(struct pc_numab *nb)
{
	unsigned old = nb->period_ms, p = old;
	uint64_t tried = nb->win_ok + nb->win_fail;

	if (tried < WINDOW_MIN)
		return;		/* too few to judge: the window goes on */
	if (nb->win_fail * 4 >= tried)
		p = pc_min(old * 2, nb->period_max);
	else
		p = pc_max(old / 2, nb->period_min);
	nb->win_ok = nb->win_fail = 0;
	if (p != old) {
		nb->period_ms = p;
		pc__add(nb->cache, 0, numa_scan_period_ms,
			(int64_t)p - (int64_t)old);
	}
}

/* ------------------------------------------------------------------ */
/* Migration (the scanner thread).                                     */

/*
 * Under the tree lock, @old frozen: give @new its identity, put it on the
 * target's LRU, and swap the slot.  @new is locked and holds our
 * reference and the mapping's.
 */
static void replace_locked(struct pc_cache *c, struct pc_mapping *m,
			   struct pc_page *old, struct pc_page *new, int target)
{
	struct pc_node *tn = &c->nodes[target];
	uint32_t f = atomic_load_explicit(&old->flags, memory_order_acquire);
	uint64_t index = page_index(old);

	PC_ASSERT_HELD(&m->tree_lock);
	atomic_fetch_or_explicit(&new->flags,
				 (f & CARRY_FLAGS) | pc__page_lock_flags(new),
				 memory_order_relaxed);
	atomic_store_explicit(&new->index, index, memory_order_relaxed);
	atomic_store_explicit(&new->mapping, m, memory_order_release);
	atomic_store_explicit(&new->last_node, target, memory_order_relaxed);
	/* policy.h: its hits go with it, its place in a generation not */
	atomic_store_explicit(&new->pol,
			      atomic_load(&old->pol) & ~PC_POL_PLACED,
			      memory_order_relaxed);
	page_get(new);		/* the mapping's reference */

	pc__lock_counted(&tn->lru_lock);
	page_set(new, PG_lru);
	pc__lru_add_locked(tn, new, false);
	pc_trace(c, PC_TR_LRU_INSERT, new, pc_trace_insert_reason(new));
	pc__unlock(&tn->lru_lock);

	pc_trace(c, PC_TR_EVICT, old, PC_TRACE_EV_MIGRATE);
	old = pc__tree_store(&m->tree, index, new);
	atomic_store_explicit(&old->mapping, NULL, memory_order_release);
}

static bool migratable(struct pc_page *p)
{
	const uint32_t bad = (1u << PG_dirty) | (1u << PG_writeback) |
			     (1u << PG_error);
	uint32_t f = atomic_load_explicit(&p->flags, memory_order_acquire);

	return (f & (1u << PG_uptodate)) && !(f & bad);
}

/*
 * Under the tree lock: freeze @old at exactly the mapping's reference and
 * the queue's, then take it off its node's LRU.  Frozen, it can be reached
 * by no one (no mark_accessed, no reclaim isolation) while it is unlinked;
 * a failed freeze leaves it where it was, so nothing is ever put back.
 */
static bool freeze_isolate_locked(struct pc_cache *c, struct pc_mapping *m,
				  struct pc_page *old, uint64_t index)
{
	struct pc_node *on = page_node(c, old);
	bool on_lru;

	PC_ASSERT_HELD(&m->tree_lock);
	if (pc__tree_lookup(&m->tree, index) != old || !page_ref_freeze(old, 2))
		return false;	/* a reader, pinner, batch or isolation */
	if (!migratable(old)) {	/* dirtied before the freeze */
		page_ref_unfreeze(old, 2);
		return false;
	}
	pc__lock_counted(&on->lru_lock);
	on_lru = page_test_clear(old, PG_lru);
	if (on_lru)
		pc__lru_del_locked(on, old);
	pc__unlock(&on->lru_lock);
	if (!on_lru)
		page_ref_unfreeze(old, 2);
	return on_lru;
}

static int migrate_one(struct pc_numab *nb, const struct mig_req *rq)
{
	struct pc_cache *c = nb->cache;
	struct pc_page *old = rq->page, *new = NULL;
	struct pc_mapping *m = page_mapping(old);
	int ret = MIG_FAIL;
	bool moved;

	if (!m || m != rq->m || page_index(old) != rq->index ||
	    page_node(c, old)->id == rq->target) {
		atomic_store_explicit(&old->hint_count, 0, memory_order_relaxed);
		pc__put_page(c, old);	/* truncated (maybe the last ref) */
		return MIG_SKIP;
	}
	new = pc__alloc_page_on(c, rq->target);
	if (!new)
		goto out;		/* target short of memory */
	if (!pc__trylock_page(old))
		goto out;
	if (page_mapping(old) != m || page_index(old) != rq->index) {
		ret = MIG_SKIP;		/* truncated meanwhile */
		goto unlock;
	}
	if (!migratable(old))
		goto unlock;
	/* The page lock keeps writers out: the copy is the page's data. */
	memcpy(page_data(c, new), page_data(c, old), PC_PAGE_SIZE);
	pc__lock_counted(&m->tree_lock);
	moved = freeze_isolate_locked(c, m, old, rq->index);
	if (moved)
		replace_locked(c, m, old, new, rq->target);
	pc__unlock(&m->tree_lock);
	if (moved) {
		pc__unlock_page(&c->wait, new);
		pc__put_page(c, new);	/* ours; the mapping keeps its own */
		pc__unlock_page(&c->wait, old);
		atomic_store_explicit(&old->hint_count, 0, memory_order_relaxed);
		pc__free_page(c, old);	/* frozen at 0, off its LRU */
		pc__inc(c, rq->target, pgmigrate_success);
		pc__inc(c, rq->target, numa_pages_migrated);
		return MIG_OK;
	}
unlock:
	pc__unlock_page(&c->wait, old);
out:
	if (new)
		pc__put_page(c, new);
	if (ret == MIG_FAIL) {
		/* Still a candidate: the next remote hint from there retries. */
		atomic_store_explicit(&old->last_node, rq->target,
				      memory_order_relaxed);
		atomic_store_explicit(&old->hint_count, HINT_THRESHOLD - 1,
				      memory_order_relaxed);
		pc__inc(c, rq->target, pgmigrate_fail);
	} else {
		atomic_store_explicit(&old->hint_count, 0, memory_order_relaxed);
	}
	pc__put_page(c, old);		/* the queue's reference */
	return ret;
}

/* ------------------------------------------------------------------ */
/* The scanner thread.                                                 */

static void refill(struct pc_numab *nb, uint64_t now)
{
	double dt = (double)(now - nb->refill_ns) / 1e9;

	nb->refill_ns = now;
	nb->tokens = pc_min(nb->burst, nb->tokens + dt * nb->rate);
}

static void wait_until(struct pc_numab *nb, uint64_t when_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(when_ns / 1000000000ull),
		.tv_nsec = (long)(when_ns % 1000000000ull),
	};

	pc__cond_timedwait(&nb->cond, &nb->lock, &ts);
}

/*
 * nb->lock held; dropped while migrating.  Takes the candidates queued at
 * least MIGRATE_DELAY_NS ago, as many as there are tokens.  Returns how
 * many it tried, or 0 and in *wake when to look again.
 */
static unsigned migrate_queued(struct pc_numab *nb, uint64_t now,
			       uint64_t *wake)
{
	struct mig_req batch[MIGRATE_BATCH];
	unsigned n = 0;

	refill(nb, now);
	while (n < nb->nr && n < MIGRATE_BATCH && n + 1 <= nb->tokens) {
		const struct mig_req *rq = &nb->q[(nb->head + n) % QUEUE_SIZE];

		if (rq->queued_ns + MIGRATE_DELAY_NS > now)
			break;
		batch[n++] = *rq;
	}
	if (!n) {
		if (nb->tokens < 1)	/* the rate: wait for a token */
			*wake = now + pc_max(NS_PER_MS, (uint64_t)((1.0 - nb->tokens) /
								   nb->rate * 1e9));
		else			/* the oldest is too young */
			*wake = nb->q[nb->head].queued_ns + MIGRATE_DELAY_NS;
		return 0;
	}
	nb->head = (nb->head + n) % QUEUE_SIZE;
	nb->nr -= n;
	nb->tokens -= n;
	pc__unlock(&nb->lock);
	for (unsigned i = 0; i < n; i++) {
		int r = migrate_one(nb, &batch[i]);

		nb->win_ok += r == MIG_OK;
		nb->win_fail += r == MIG_FAIL;
	}
	pc__lock(&nb->lock);
	return n;
}

static void *scanner(void *arg)
{
	struct pc_numab *nb = arg;
	uint64_t next_scan = pc__now_ns() + nb->period_ms * NS_PER_MS;

	pc__lock(&nb->lock);
	while (!nb->stop) {
		uint64_t now = pc__now_ns(), wake = next_scan;

		if (now >= next_scan) {
			pc__unlock(&nb->lock);
			scan_once(nb);
			adapt_period(nb);
			next_scan = pc__now_ns() + nb->period_ms * NS_PER_MS;
			pc__lock(&nb->lock);
			continue;
		}
		if (nb->nr) {
			uint64_t when = next_scan;

			if (migrate_queued(nb, now, &when))
				continue;
			wake = pc_min(wake, when);
		}
		wait_until(nb, wake);
	}
	pc__unlock(&nb->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */

int pc__numa_balancing_start(struct pc_cache *c)
{
	struct pc_numab *nb;
	pthread_condattr_t attr;

	if (!c->cfg.numa_balancing)
		return 0;
	nb = calloc(1, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	nb->cache = c;
	pc__lock_init(&nb->lock, NULL, PC_RANK_NUMAB, -1);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&nb->cond, &attr);
	pthread_condattr_destroy(&attr);
	nb->period_min = c->cfg.numa_scan_ms;
	nb->period_max = c->cfg.numa_scan_ms * PERIOD_MAX_MULT;
	nb->period_ms = nb->period_min;
	nb->rate = c->cfg.numa_migrate_rate;
	nb->burst = pc_max(1.0, nb->rate / 10);
	nb->tokens = nb->burst;
	nb->refill_ns = pc__now_ns();
	c->numab = nb;
	pc__add(c, 0, numa_scan_period_ms, nb->period_ms);
	if (pthread_create(&nb->thread, NULL, scanner, nb) != 0) {
		c->numab = NULL;
		pc__add(c, 0, numa_scan_period_ms, -(int64_t)nb->period_ms);
		pthread_cond_destroy(&nb->cond);
		pc__lock_destroy(&nb->lock);
		free(nb);
		return -EAGAIN;
	}
	return 0;
}

void pc__numa_balancing_stop(struct pc_cache *c)
{
	struct pc_numab *nb = c->numab;

	if (!nb)
		return;
	pc__lock(&nb->lock);
	nb->stop = true;
	pthread_cond_signal(&nb->cond);
	pc__unlock(&nb->lock);
	pthread_join(nb->thread, NULL);
	for (; nb->nr; nb->nr--) {	/* the queue's references */
		struct pc_page *p = nb->q[nb->head].page;

		nb->head = (nb->head + 1) % QUEUE_SIZE;
		atomic_store_explicit(&p->hint_count, 0, memory_order_relaxed);
		pc__put_page(c, p);
	}
	c->numab = NULL;
	pthread_cond_destroy(&nb->cond);
	pc__lock_destroy(&nb->lock);
	free(nb);
}
