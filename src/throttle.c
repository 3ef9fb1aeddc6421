/*
 * throttle.c - dirty accounting, the dirty limits and the writers'
 * throttle (the kernel's mm/page-writeback.c: account_page_dirtied,
 * balance_dirty_pages and its limits): how many pages are dirty, how much
 * of the budget may be, and how long a writer that dirtied pages pauses.
 * writeback.c does the writing; bdi.c keeps each device's bandwidth
 * estimate, its dirtier count and the throttle queue writers sleep on.
 *
 * Dirty accounting.  A page is dirtied under its page lock
 * (pc__set_page_dirty): PG_dirty, then the DIRTY tag under the tree lock,
 * then the counters, and the mapping goes on its bdi's dirty list if it
 * was clean.  Dirty and writeback pages are counted at four levels, all
 * atomic and read without a lock (writeback.c and writeback_io.c move
 * the writeback ones):
 *
 *   cache    vmstat nr_dirty, nr_writeback (sharded, summed on read)
 *   node     vmstat per node + n->dirty_pages (numa.dirty_spread)
 *   bdi      b->nr_dirty, b->nr_writeback (the throttle and the flusher
 *            of that device; writeback.dirty_time_ms)
 *   mapping  m->nr_dirty (the flusher's "clean?"), m->nr_writeback
 *
 * Limits (pc__update_dirty_limits, refreshed when bandwidth changes): the
 * hard limit and the background threshold are dirty_ratio and
 * dirty_background_ratio (20% and 10%) of the dirtyable budget, or
 * dirty_bytes and dirty_background_bytes.  With writeback.dirty_time_ms
 * (seed 000: Mel's dirty_time, Linus's "fewer dirty pages") each bdi gets
 * its own limit, the pages its measured bandwidth writes in that time (at
 * least two requests, at most half the budget; background at half of
 * it), and the cache's limit is their sum, at most half the budget.
 *
 * The throttle (pc__balance_dirty_pages), called by writers after they
 * dirtied pages, checks once per nr_dirtied_pause pages of a thread:
 *
 *   dirty  ^  pos 0: wait (steps <= 200 ms) while dirty >= limit and the
 *   limit -+         flusher makes progress; 2 idle steps: give up and
 *          |         let the thread run 1024 pages (no stall while the
 *          |         flusher is idle: nothing in flight, nothing written,
 *          |         no pass asked of it that it has yet to start)
 *   setpt -+  pos 1: paced at the device's rate (per dirtier)
 *          |  pos = 1 + ((setpoint - dirty) / (limit - setpoint))^3
 * freerun -+  pos 2
 *      bg -+  (the flusher is woken above it)   run free below freerun
 *
 * where dirty = dirty + writeback pages, freerun = (bg + limit) / 2 and
 * setpoint = (freerun + limit) / 2 (the kernel's position-ratio curve).
 * Each domain - the cache, and the bdi when it has a dirty_time limit -
 * has its own curve; the lower ratio applies.  A paced thread owes
 * pages / (bw / dirtiers * pos) seconds: bw is the bdi's write bandwidth,
 * dirtiers the threads throttled on it in the last bandwidth period.  The
 * debt is slept off in pauses of 4 to 200 ms (shorter ones accumulate, a
 * token bucket, so the rate holds however coarse the sleeps are).  Pauses
 * are taken on the bdi's throttle queue, and a write completion that
 * finds dirty back under freerun ends them early: a pause computed from a
 * bandwidth estimate that is still too low (it starts at 100 MiB/s) does
 * not leave the device idle while the writer sleeps.  A writer whose
 * device holds only a small part of the dirt (another device is the slow
 * one) is not held back.  Pauses are counted (balance_dirty_pages_pauses;
 * _pause_asked_ms, what the policy asked; _pause_ms, what was slept),
 * refusals to stall too (balance_dirty_pages_idle).
 *
 * Locks: dirtying holds the page lock and takes the tree lock (the tag),
 * then the bdi lock (the dirty list, bdi.c).  None held by the throttle
 * while it sleeps; it reads atomics of the cache and the bdi, takes
 * c->bdi_lock to walk the bdis (pc__update_dirty_limits), and sleeps on
 * the bdi's throttle queue (bdi.c, a leaf lock, taken with nothing else
 * held).  The thread's own
 * context (pc__tctx) holds its pacing state: only that thread touches it.
 */
#include <string.h>

#include "internal.h"
#include "bdi.h"
#include "dirty.h"
#include "node.h"
#include "tctx.h"
#include "tracepoint.h"
#include "tree.h"

#define NS_PER_MS 1000000ll
#define MAX_PAUSE_NS (200 * NS_PER_MS)	/* longest single pause */
#define MIN_PAUSE_NS (4 * NS_PER_MS)	/* shorter debts accumulate */
#define STEP_MIN_NS (1 * NS_PER_MS)	/* over the limit: shortest step */
#define RATELIMIT_PAGES 32		/* free run: pages between checks, */
#define RATELIMIT_MAX 1024		/* ... from 32 to 1024 */
#define PACED_MIN 8			/* paced: from 8 to 256 */
#define PACED_MAX 256
#define IDLE_STEPS 2			/* over the limit, flusher idle */
#define TIME_LIMIT_MIN (2 * PC_MAX_IO_PAGES)	/* dirty_time_ms floor */

void pc__update_dirty_limits(struct pc_cache *c)
{
	const struct pc_config *cfg = &c->cfg;
	uint64_t dirtyable = c->nr_frames;
	uint64_t limit, bg;

	limit = cfg->dirty_bytes ? cfg->dirty_bytes >> PC_PAGE_SHIFT
				 : dirtyable * cfg->dirty_ratio / 100;
	bg = cfg->dirty_background_bytes
		     ? cfg->dirty_background_bytes >> PC_PAGE_SHIFT
		     : dirtyable * cfg->dirty_background_ratio / 100;
	if (cfg->dirty_time_ms) {
		uint64_t sum = 0;
		bool any = false;

		pc__lock(&c->bdi_lock);
		for (struct pc_bdi *b = c->bdis; b; b = b->next) {
			uint64_t bw = atomic_load(&b->write_bw);
			uint64_t bl = (bw / 1000 * cfg->dirty_time_ms) >> PC_PAGE_SHIFT;

			bl = pc_min(pc_max(bl, (uint64_t)TIME_LIMIT_MIN),
				    pc_max(dirtyable / 2, 8));
			atomic_store(&b->dirty_bg_limit, bl / 2);
			atomic_store(&b->dirty_limit, bl);
			sum += bl;
			any = true;
		}
		pc__unlock(&c->bdi_lock);
		if (any) {
			limit = pc_min(sum, dirtyable / 2);
			bg = limit / 2;
		}
	}
	limit = pc_max(limit, 8);
	bg = pc_min(pc_max(bg, 4), limit - 1);
	atomic_store(&c->dirty_limit, limit);
	atomic_store(&c->dirty_bg_limit, bg);
}

/* One dirty domain: the cache, or one bdi with a dirty_time limit. */
struct dom {
	uint64_t dirty;		/* dirty + writeback pages */
	uint64_t bg, limit;
};

static uint64_t dom_freerun(const struct dom *d)
{
	return (d->bg + d->limit) / 2;
}

/* The kernel's position ratio: 2 at freerun, 1 at the setpoint, 0 at limit. */
static double dom_pos_ratio(const struct dom *d)
{
	uint64_t freerun = dom_freerun(d);
	uint64_t setpoint = (freerun + d->limit) / 2;
	double x, pos;

	if (d->dirty >= d->limit)
		return 0.0;
	if (d->dirty <= freerun)
		return 2.0;
	x = ((double)setpoint - (double)d->dirty) /
	    (double)pc_max(d->limit - setpoint, 1);
	pos = 1.0 + x * x * x;
	return pos < 0.0 ? 0.0 : pos > 2.0 ? 2.0 : pos;
}

static unsigned ilog2_u64(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

/* Each thread counts once per bandwidth period as a dirtier of @b. */
static void count_dirtier(struct pc_bdi *b, struct pc_tctx *t)
{
	uint64_t period = atomic_load_explicit(&b->period, memory_order_relaxed);

	if (t->bdp_bdi == b && t->bdp_period == period)
		return;
	t->bdp_bdi = b;
	t->bdp_period = period;
	atomic_fetch_add_explicit(&b->dirtiers_cur, 1, memory_order_relaxed);
}

/*
 * A pause on @b's throttle queue (bdi.c), counted: the time asked (the
 * policy's, rounded up) and the time slept (less when dirty drops back
 * under freerun, more when the scheduler is late); returns the slept.
 */
static int64_t pause_ns(struct pc_cache *c, struct pc_bdi *b, int node,
			int64_t ns)
{
	int64_t slept = pc__bdi_throttle_pause(b, ns);

	pc__inc(c, node, balance_dirty_pages_pauses);
	pc__add(c, node, balance_dirty_pages_pause_asked_ms,
		(ns + NS_PER_MS - 1) / NS_PER_MS);
	pc__add(c, node, balance_dirty_pages_pause_ms,
		(slept + NS_PER_MS / 2) / NS_PER_MS);
	return slept;
}

/*
 * Writers asleep in the throttle on @b go back to work once dirty is under
 * the freerun point again (in both domains): a pause computed from a
 * bandwidth estimate that is too low must not leave the device idle.
 */
void pc__balance_dirty_wake(struct pc_cache *c, struct pc_bdi *b)
{
	uint64_t dirty, freerun, bl;

	if (atomic_load(&b->throttled) == 0)
		return;
	dirty = pc__vmstat_sum(c, PC_VM_nr_dirty) +
		pc__vmstat_sum(c, PC_VM_nr_writeback);
	freerun = (atomic_load(&c->dirty_bg_limit) + atomic_load(&c->dirty_limit)) / 2;
	if (dirty >= freerun)
		return;
	bl = atomic_load(&b->dirty_limit);
	if (bl && (uint64_t)pc_max(atomic_load(&b->nr_dirty) +
				   atomic_load(&b->nr_writeback), 0) >=
		  (atomic_load(&b->dirty_bg_limit) + bl) / 2)
		return;
	pc__bdi_throttle_wake(b);
}

void pc__balance_dirty_pages(struct pc_mapping *m, unsigned nr_dirtied)
{
	struct pc_cache *c = m->cache;
	struct pc_bdi *b = m->bdi;
	struct pc_tctx *t = pc__tctx(c), local;
	unsigned pending, idle = 0;
	int node;

	if (!t) {	/* no context (9th cache of a thread): check each time */
		memset(&local, 0, sizeof(local));
		t = &local;
	}
	node = t->node;
	t->dirty_ratelimit += nr_dirtied;
	if (t->dirty_ratelimit < (t->nr_dirtied_pause ? t->nr_dirtied_pause
						       : RATELIMIT_PAGES))
		return;
	pending = t->dirty_ratelimit;
	t->dirty_ratelimit = 0;

	for (;;) {
		uint64_t nr_dirty = pc__vmstat_sum(c, PC_VM_nr_dirty);
		uint64_t nr_wb = pc__vmstat_sum(c, PC_VM_nr_writeback);
		int64_t b_dirty = atomic_load(&b->nr_dirty);
		int64_t b_wb = atomic_load(&b->nr_writeback);
		struct dom g = {
			.dirty = nr_dirty + nr_wb,
			.bg = atomic_load(&c->dirty_bg_limit),
			.limit = atomic_load(&c->dirty_limit),
		};
		struct dom d = {
			.dirty = (uint64_t)pc_max(b_dirty + b_wb, 0),
			.bg = atomic_load(&b->dirty_bg_limit),
			.limit = atomic_load(&b->dirty_limit),
		};
		bool bdi_dom = d.limit != 0;
		double pos, bw, rate;
		uint64_t over, room, written0;
		int64_t step;

		if (nr_dirty > g.bg || (bdi_dom && (uint64_t)pc_max(b_dirty, 0) > d.bg))
			pc__bdi_wakeup(b, PC_WB_BACKGROUND);
		if (g.dirty <= dom_freerun(&g) &&
		    (!bdi_dom || d.dirty <= dom_freerun(&d))) {
			/* Free run: check again before dirty can pass freerun. */
			uint64_t gap = dom_freerun(&g) - g.dirty;

			if (bdi_dom)
				gap = pc_min(gap, dom_freerun(&d) - d.dirty);
			t->nr_dirtied_pause = pc_min(pc_max(1u << (ilog2_u64(gap) / 2),
							    RATELIMIT_PAGES), RATELIMIT_MAX);
			t->bdp_owed_ns = 0;
			return;
		}
		t->nr_dirtied_pause = RATELIMIT_PAGES;
		/* Most of the dirt is another device's: not this writer's to pay. */
		if (!bdi_dom && d.dirty * 4 < g.dirty &&
		    d.dirty <= 2 * PC_MAX_IO_PAGES)
			return;
		count_dirtier(b, t);
		pos = dom_pos_ratio(&g);
		if (bdi_dom)
			pos = pc_min(pos, dom_pos_ratio(&d));
		bw = (double)(atomic_load(&b->write_bw) >> PC_PAGE_SHIFT);
		bw = pc_max(bw, 64.0);	/* pages per second */
		if (pos > 0.0) {
			/* Paced: this thread's share of the device's rate. */
			rate = bw * pos / pc_max(atomic_load(&b->dirtiers), 1u);
			t->bdp_owed_ns += (int64_t)((double)pending * 1e9 / rate);
			t->bdp_owed_ns = pc_min(t->bdp_owed_ns, MAX_PAUSE_NS);
			/* Next check: after 10 ms of pages, well before the limit. */
			room = g.limit - g.dirty;
			if (bdi_dom)
				room = pc_min(room, d.limit - d.dirty);
			t->nr_dirtied_pause = (unsigned)pc_max(pc_min(rate / 100,
					pc_min((double)room / 4, (double)PACED_MAX)),
					(double)PACED_MIN);
			if (t->bdp_owed_ns >= MIN_PAUSE_NS) {
				t->bdp_owed_ns -= pause_ns(c, b, node, t->bdp_owed_ns);
				t->bdp_owed_ns = pc_max(t->bdp_owed_ns, -MIN_PAUSE_NS);
			}
			return;
		}
		/* At the limit: wait for writeback, while it makes progress. */
		t->bdp_owed_ns = 0;
		t->nr_dirtied_pause = PACED_MIN;
		if (atomic_load(&c->stopping))
			return;
		over = g.dirty >= g.limit ? g.dirty - g.limit : d.dirty - d.limit;
		step = (int64_t)((double)(over + pending) * 1e9 / bw);
		step = pc_min(pc_max(step, STEP_MIN_NS), MAX_PAUSE_NS);
		written0 = atomic_load(&b->written);
		pause_ns(c, b, node, step);
		if (atomic_load(&b->written) == written0 &&
		    pc__bdi_flusher_idle(b)) {
			/* The flusher is idle and nothing is in flight. */
			pc__inc(c, node, balance_dirty_pages_idle);
			if (++idle >= IDLE_STEPS) {
				t->nr_dirtied_pause = RATELIMIT_MAX;
				return;
			}
		} else {
			idle = 0;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Dirty accounting                                                    */

void pc__account_page_dirtied(struct pc_mapping *m, struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	struct pc_node *n = page_node(c, p);
	struct pc_bdi *b = m->bdi;

	pc__inc(c, n->id, nr_dirty);
	pc__inc(c, n->id, nr_dirtied);
	atomic_fetch_add_explicit(&n->dirty_pages, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->nr_dirty, 1, memory_order_relaxed);
	/* Sequentially consistent: pairs with bdi.c's retire_if_clean. */
	atomic_fetch_add(&m->nr_dirty, 1);
	pc_trace(c, PC_TR_DIRTY, p, 0);
	if (!atomic_load(&m->on_dirty_list))
		pc__bdi_mark_dirty(m);
}

void pc__account_page_cleaned(struct pc_mapping *m, struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	struct pc_node *n = page_node(c, p);

	if (!page_test_clear(p, PG_dirty))
		return;
	pc__add(c, n->id, nr_dirty, -1);
	atomic_fetch_sub_explicit(&n->dirty_pages, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&m->bdi->nr_dirty, 1, memory_order_relaxed);
	atomic_fetch_sub(&m->nr_dirty, 1);
}

void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p)
{
	PC_ASSERT(page_test(p, PG_locked));
	if (!page_test_set(p, PG_dirty)) {
		pc__lock_counted(&m->tree_lock);
		pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
		pc__unlock(&m->tree_lock);
		pc__account_page_dirtied(m, p);
	}
	pc__page_sanity(m->cache, p, true);
}
