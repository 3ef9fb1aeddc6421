/*
 * lru.c - the LRU lists of each node, per-thread batches, mark_accessed.
 *
 *   node->lru[INACTIVE]:  head (new) ... tail (reclaimed first)
 *   node->lru[ACTIVE]:    head (new) ... tail (deactivated first)
 *
 * Lists are doubly linked through pc_page.lru_prev/lru_next (frame
 * numbers), under node->lru_lock.  PG_lru says the page is on a list, and
 * only changes under that lock; PG_active says which, so while PG_lru is
 * set PG_active too changes only under the lock (off the lists - in a
 * batch, or isolated by reclaim - it may change at any time, and the page
 * goes back to the list it names).  A page on a list
 * holds no reference of its own: whoever takes it off (reclaim isolation)
 * first takes a reference with page_get_unless_zero, and the reference that
 * frees a page takes it off its list first (pc__put_page).
 *
 * New pages and activations do not take the lru lock one at a time: they
 * wait in the thread's batch (struct pc_tctx, PC_LRU_BATCH pages, each
 * holding a reference) and go on the lists under one lock hold - the
 * kernel's per-CPU pagevecs.  A page still in a batch is not PG_lru, so
 * mark_accessed cannot move it; with lru.deferred_activation (seed 004)
 * mark_accessed sets PG_active on it instead (by compare-and-swap, only
 * while PG_lru is still clear) and the drain puts it straight on the
 * active list, where the kernel before that fix lost the activation.  The
 * same holds for a queued activation that finds its page isolated by
 * reclaim: the putback puts it on the active list.  Batches are drained
 * when full, by direct reclaim (the reclaimer's own at once, everyone's at
 * priority 10), and at thread exit.
 *
 * Two-step activation (mark_page_accessed): a first access sets
 * PG_referenced; a second access to a referenced inactive page activates
 * it.  Written pages are not marked on their first write (seed 000: write
 * pages wrongly marked hot cost aim7 13.6%).
 *
 * Shared caches: a drain's copies of a batch are its references from
 * the moment the batch is emptied, so it records them in its own
 * context (tctx.h: held[], PC_HELD_ISO until each page is on a list,
 * plain after, cleared before each put): a drainer's death puts each
 * page on its list and gives its reference back (tctx.c).  A remote
 * drain records them in the drainer's context, not the batch owner's.
 *
 * reclaim.policy (policy.h): what is said here of the two lists and of
 * mark_accessed is classic's, the default.  Under sieve and s3fifo the
 * batches, the list operations and the putbacks are the same code, but
 * mark_accessed is the policy's access hook (nothing moves on a hit, no
 * activation: PG_active is set by the policy's refault and isolation
 * only), and a page leaving a list tells the policy first (del_locked:
 * sieve's hand); mglru keeps its own lists, the generations (place_locked
 * and list choose them).  Each is one branch on the policy here, classic
 * inline.
 *
 * Locks: t->lock (the batch; its owner and remote drains) → lru_lock.
 */
#include <stdlib.h>

#include "internal.h"
#include "node.h"
#include "pagewait.h"
#include "policy.h"
#include "tctx.h"
#include "tracepoint.h"
#include "vmscan.h"

static struct pc_lru *page_list(struct pc_node *n, struct pc_page *p)
{
	if (!pc__policy_classic(n->cache) && pc__policy_ops(n->cache)->list)
		return pc__policy_ops(n->cache)->list(n, p);
	return &n->lru[page_test(p, PG_active) ? PC_LRU_ACTIVE : PC_LRU_INACTIVE];
}

void pc__lru_add_locked(struct pc_node *n, struct pc_page *p, bool tail)
{
	struct pc_cache *c = n->cache;
	struct pc_lru *l;
	uint32_t pfn = page_pfn(c, p);

	PC_ASSERT_HELD(&n->lru_lock);
	if (!pc__policy_classic(c) && pc__policy_ops(c)->place_locked)
		pc__policy_ops(c)->place_locked(n, p, tail);
	l = page_list(n, p);
	if (tail) {
		p->lru_next = PC_NO_PFN;
		p->lru_prev = l->tail;
		if (l->tail != PC_NO_PFN)
			pfn_page(c, l->tail)->lru_next = pfn;
		else
			l->head = pfn;
		l->tail = pfn;
	} else {
		p->lru_prev = PC_NO_PFN;
		p->lru_next = l->head;
		if (l->head != PC_NO_PFN)
			pfn_page(c, l->head)->lru_prev = pfn;
		else
			l->tail = pfn;
		l->head = pfn;
	}
	atomic_store_explicit(&l->nr, atomic_load(&l->nr) + 1,
			      memory_order_relaxed);
	pc__page_sanity(c, p, false);
}

void pc__lru_del_locked(struct pc_node *n, struct pc_page *p)
{
	struct pc_cache *c = n->cache;
	struct pc_lru *l = page_list(n, p);	/* before del_locked */

	PC_ASSERT_HELD(&n->lru_lock);
	pc__page_sanity(c, p, false);
	if (!pc__policy_classic(c))
		pc__policy_ops(c)->del_locked(n, p);
	if (p->lru_prev != PC_NO_PFN)
		pfn_page(c, p->lru_prev)->lru_next = p->lru_next;
	else
		l->head = p->lru_next;
	if (p->lru_next != PC_NO_PFN)
		pfn_page(c, p->lru_next)->lru_prev = p->lru_prev;
	else
		l->tail = p->lru_prev;
	p->lru_prev = p->lru_next = PC_NO_PFN;
	atomic_store_explicit(&l->nr, atomic_load(&l->nr) - 1,
			      memory_order_relaxed);
}

/*
 * Put a batch of pages on their lists, one lock hold per node run.  @d
 * (shared caches): the drainer's context, whose held[@at + i] records
 * pages[i] (PC_HELD_ISO: off every list), made plain once it is on one.
 */
static void drain_adds(struct pc_cache *c, struct pc_page **pages, unsigned nr,
		       struct pc_tctx *d, int at)
{
	struct pc_node *locked = NULL;

	for (unsigned i = 0; i < nr; i++) {
		struct pc_page *p = pages[i];
		struct pc_node *n = page_node(c, p);

		if (n != locked) {
			if (locked)
				pc__unlock(&locked->lru_lock);
			pc__lock_counted(&n->lru_lock);
			locked = n;
		}
		if (!page_mapping(p) || page_test(p, PG_lru)) {
			pc__held_set(d, at + (int)i, c, p, 0);
			continue;	/* truncated while batched */
		}
		page_set(p, PG_lru);
		pc__lru_add_locked(n, p, false);
		pc__held_set(d, at + (int)i, c, p, 0);	/* on its list */
		pc_trace(c, PC_TR_LRU_INSERT, p, pc_trace_insert_reason(p));
		if (page_test(p, PG_active))
			pc__inc(c, n->id, pgactivate);
	}
	if (locked)
		pc__unlock(&locked->lru_lock);
	for (unsigned i = 0; i < nr; i++) {
		pc__held_clear(d, at + (int)i);
		pc__put_page(c, pages[i]);
	}
}

static void activate_locked(struct pc_cache *c, struct pc_node *n,
			    struct pc_page *p)
{
	PC_ASSERT_HELD(&n->lru_lock);
	if (page_test(p, PG_active))
		return;
	if (!page_test(p, PG_lru)) {
		/*
		 * Isolated by reclaim or in another thread's add batch: it
		 * goes back on a list under this lock, so with deferred
		 * activation PG_active can be set now and is honoured then.
		 */
		if (c->cfg.deferred_activation && page_mapping(p) &&
		    !page_test_set(p, PG_active))
			pc__workingset_activation(c, p);
		return;
	}
	pc__lru_del_locked(n, p);
	page_set(p, PG_active);
	pc__lru_add_locked(n, p, false);
	pc__inc(c, n->id, pgactivate);
	pc_trace(c, PC_TR_ACTIVATE, p, 0);
	pc__workingset_activation(c, p);
}

static void drain_activations(struct pc_cache *c, struct pc_page **pages,
			      unsigned nr, struct pc_tctx *d, int at)
{
	struct pc_node *locked = NULL;

	for (unsigned i = 0; i < nr; i++) {
		struct pc_node *n = page_node(c, pages[i]);

		if (n != locked) {
			if (locked)
				pc__unlock(&locked->lru_lock);
			pc__lock_counted(&n->lru_lock);
			locked = n;
		}
		activate_locked(c, n, pages[i]);
	}
	if (locked)
		pc__unlock(&locked->lru_lock);
	for (unsigned i = 0; i < nr; i++) {
		pc__held_clear(d, at + (int)i);
		pc__put_page(c, pages[i]);
	}
}

void pc__lru_drain(struct pc_cache *c, struct pc_tctx *t)
{
	struct pc_page *add[PC_LRU_BATCH], *act[PC_LRU_BATCH];
	/* Shared: the copies are ours, recorded (a remote drain's: in the
	 * drainer's context, not the batch's), from under t->lock (a death
	 * holding it breaks the cache) on. */
	struct pc_tctx *d = pc__held_ctx(c);
	const int at_add = PC_HELD_DRAIN_AT, at_act = at_add + PC_LRU_BATCH;
	unsigned na, nc;

	pc__lock(&t->lock);
	na = t->nr_add;
	nc = t->nr_act;
	for (unsigned i = 0; i < na; i++) {
		add[i] = t->add[i];
		pc__held_set(d, at_add + (int)i, c, add[i], PC_HELD_ISO);
	}
	for (unsigned i = 0; i < nc; i++) {
		act[i] = t->act[i];
		pc__held_set(d, at_act + (int)i, c, act[i], 0);
	}
	t->nr_add = t->nr_act = 0;
	pc__unlock(&t->lock);
	if (na || nc)
		PC_PARK(PC_PARK_DRAIN);
	if (na)
		drain_adds(c, add, na, d, at_add);
	if (nc)
		drain_activations(c, act, nc, d, at_act);
}

void pc__lru_add(struct pc_cache *c, struct pc_page *p)
{
	struct pc_tctx *t = pc__tctx(c);
	bool full;

	page_get(p);
	if (!t) {
		drain_adds(c, &p, 1, NULL, 0);
		return;
	}
	pc__lock(&t->lock);
	t->add[t->nr_add++] = p;
	full = t->nr_add == PC_LRU_BATCH;
	pc__unlock(&t->lock);
	if (full)
		pc__lru_drain(c, t);
}

static void activate_page(struct pc_cache *c, struct pc_page *p)
{
	struct pc_tctx *t = pc__tctx(c);
	bool full;

	if (!t) {
		struct pc_node *n = page_node(c, p);

		pc__lock_counted(&n->lru_lock);
		activate_locked(c, n, p);
		pc__unlock(&n->lru_lock);
		return;
	}
	page_get(p);
	pc__lock(&t->lock);
	t->act[t->nr_act++] = p;
	full = t->nr_act == PC_LRU_BATCH;
	pc__unlock(&t->lock);
	if (full)
		pc__lru_drain(c, t);
}

void pc__mark_accessed(struct pc_cache *c, struct pc_page *p)
{
	uint32_t f;

	if (!pc__policy_classic(c)) {
		pc__policy_ops(c)->access(c, p);
		return;
	}
	f = atomic_load_explicit(&p->flags, memory_order_relaxed);
	if (f & (1u << PG_active)) {
		/* Hot already: only note the reference, and only once. */
		if (!(f & (1u << PG_referenced)))
			page_set(p, PG_referenced);
		return;
	}
	if (!(f & (1u << PG_referenced))) {
		page_set(p, PG_referenced);
		return;
	}
	/* Second access to an inactive page: activate. */
	if (f & (1u << PG_lru)) {
		activate_page(c, p);
	} else if (c->cfg.deferred_activation) {
		/*
		 * In a batch (or isolated by reclaim): the drain (or the
		 * putback) puts it on the active list.  PG_active may only
		 * change off the lists or under the lru lock, since it says
		 * which list a page is on: set it only while PG_lru is still
		 * clear, else the drain won the race and the page is on the
		 * inactive list now - activate it the ordinary way.
		 */
		while (!(f & (1u << PG_lru))) {
			if (atomic_compare_exchange_weak_explicit(&p->flags, &f,
					f | (1u << PG_active),
					memory_order_acq_rel, memory_order_relaxed)) {
				if (!(f & (1u << PG_active)))
					pc__workingset_activation(c, p);
				page_clear(p, PG_referenced);
				return;
			}
		}
		activate_page(c, p);
	} else {
		return;	/* the activation is lost, as before seed 004 */
	}
	page_clear(p, PG_referenced);
}

void pc__lru_rotate_reclaimable(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);

	if (!page_test(p, PG_lru) || page_test(p, PG_active))
		return;
	pc__lock_counted(&n->lru_lock);
	if (page_test(p, PG_lru) && !page_test(p, PG_active)) {
		pc__lru_del_locked(n, p);
		pc__lru_add_locked(n, p, true);
		pc__inc(c, n->id, pgrotated);
		pc_trace(c, PC_TR_ROTATE, p, 0);
	}
	pc__unlock(&n->lru_lock);
	pc__alloc_wake(n);	/* reclaim met it busy: reclaimable now */
}

/* fadvise DONTNEED/NOREUSE of a page in use: to the inactive tail. */
void pc__deactivate_page(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);

	pc__lock_counted(&n->lru_lock);
	if (page_test(p, PG_lru)) {
		pc__lru_del_locked(n, p);
		if (page_test_clear(p, PG_active)) {
			pc__inc(c, n->id, pgdeactivate);
			pc_trace(c, PC_TR_DEACTIVATE, p, 0);
		}
		page_clear(p, PG_referenced);
		if (!pc__policy_classic(c))	/* its hits forgotten */
			atomic_fetch_and_explicit(&p->pol,
					~(PC_POL_FREQ | PC_POL_VISITED),
					memory_order_relaxed);
		pc__lru_add_locked(n, p, true);
	}
	pc__unlock(&n->lru_lock);
}
