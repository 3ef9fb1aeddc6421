/*
 * pcp.c - each thread's own list of free frames (the kernel's per-CPU
 * page lists, rmqueue_bulk and drain_all_pages).
 *
 * Why: frames come off a node's free list, a stack, one at a time.  A
 * reclaim's batch goes back on it highest first, so the list hands out
 * runs of frames side by side (vmscan.c pc__free_batch) - but to
 * whichever thread asks next.  Four writers making files at once took
 * them in turns, and each file's 1 MiB writeback requests were 100-130
 * runs of memory (writeback_segments) where the kernel's are a few: a
 * virtio disk of 254 segments a request and ring splits and serialises
 * them.  So a thread takes a run off the free list at once and hands it
 * to its own allocations, lowest frame first: what one thread writes in
 * order lies in order in memory, however many write beside it.
 *
 *   node free list   [f][f+1][f+2]...[f+31][g]...       (free_lock)
 *                       | pc__rmqueue_bulk: up to batch frames at once
 *                       v
 *   t->pcp           [f+31]...[f+2][f+1][f]             (t->lock)
 *                                          ^ popped first: ascending
 *
 * The batch is memory.thread_frames (32; 0 or 1: off), at most 1/1024 of
 * the node's share (so a small cache keeps every frame on its lists: a
 * 4 MiB cache takes one at a time).  A list holds frames of one node
 * (t->pcp_node); a thread that allocates on another node gives its list
 * back first.  Refills are the fast path's: only while the node is above
 * its low mark, never taking it below min; below low a thread uses what
 * its list holds, then single frames from the free list as before.
 *
 * Accounting: a listed frame has count 0 and is out of the node's nr_free
 * (as the kernel's NR_FREE_PAGES leaves out the per-CPU lists) and in its
 * nr_pcp, so nr_file_pages (in use) counts pages, not lists; pgalloc
 * counts a frame when it is handed out, as before; a frame given back is
 * not pgfree (it was never a page).  pcp_refills counts the runs taken,
 * pcp_returned the frames given back.
 *
 * Given back (pc__pcp_drain): when the thread exits or its context is
 * reaped, detached or unregistered (tctx.c), and from every context by
 * pc__tctx_drain_all - direct reclaim, an allocation's slow path that
 * found nothing (page_alloc.c: at most PC_PCP_MAX frames a thread were out of
 * reach), a shrink (resize.c: frames above the new share retire when
 * given back; one popped above the share meanwhile is retired instead of
 * used), invalidation and destroy.
 *
 * Locks: t->lock (TCTX) then the node's free_lock; kswapd's wake after.
 * Callers of pc__pcp_alloc hold no lock at or after TCTX.  Shared caches:
 * a pop takes the frame off the list before it becomes a page, so a death
 * between leaks the frame, never hands it out twice.
 */
#include "internal.h"
#include "node.h"
#include "tctx.h"

/* Frames a refill of @n takes: memory.thread_frames, at most 1/1024 of
 * the node's share. */
static unsigned pcp_batch(struct pc_cache *c, struct pc_node *n)
{
	uint32_t share = atomic_load_explicit(&n->nr_frames,
					      memory_order_relaxed);

	return (unsigned)pc_min((uint64_t)c->cfg.thread_frames,
				(uint64_t)(share >> 10));
}

/* @t's frames back on their node's list; t->lock held. */
static unsigned drain_locked(struct pc_cache *c, struct pc_tctx *t)
{
	unsigned nr = atomic_load_explicit(&t->nr_pcp, memory_order_relaxed);

	PC_ASSERT_HELD(&t->lock);
	if (!nr)
		return 0;
	pc__free_frames(c, &c->nodes[t->pcp_node], t->pcp, nr);
	atomic_store_explicit(&t->nr_pcp, 0, memory_order_relaxed);
	pc__add(c, t->pcp_node, pcp_returned, nr);
	return nr;
}

/* Descending, so that the list's end (popped first) is the lowest. */
static void sort_desc(uint32_t *v, unsigned nr)
{
	for (unsigned i = 1; i < nr; i++) {
		uint32_t x = v[i];
		unsigned j = i;

		for (; j && v[j - 1] < x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

struct pc_page *pc__pcp_alloc(struct pc_cache *c, struct pc_tctx *t, int nid)
{
	struct pc_node *n = &c->nodes[nid];
	unsigned batch = pcp_batch(c, n), nr;
	struct pc_page *p = NULL;

	if (batch < 2 && !atomic_load_explicit(&t->nr_pcp, memory_order_relaxed))
		return NULL;
	pc__lock(&t->lock);
	nr = atomic_load_explicit(&t->nr_pcp, memory_order_relaxed);
	if (nr && (t->pcp_node != nid || batch < 2)) {
		drain_locked(c, t);	/* another node's, or off now */
		nr = 0;
	}
	if (!nr && batch >= 2) {
		nr = pc__rmqueue_bulk(c, n, t->pcp, batch);
		if (nr) {
			sort_desc(t->pcp, nr);
			t->pcp_node = nid;
			pc__inc(c, nid, pcp_refills);
		}
	}
	while (nr && !p) {
		uint32_t pfn = t->pcp[--nr];

		atomic_fetch_sub_explicit(&n->nr_pcp, 1, memory_order_relaxed);
		p = pfn_page(c, pfn);
		if (pfn - n->first_pfn >= atomic_load(&n->nr_frames)) {
			/* above a share a shrink lowered meanwhile: retired */
			atomic_fetch_add_explicit(&n->nr_pcp, 1,
						  memory_order_relaxed);
			pc__free_frames(c, n, &pfn, 1);
			p = NULL;
		}
	}
	atomic_store_explicit(&t->nr_pcp, nr, memory_order_relaxed);
	pc__unlock(&t->lock);
	if (p)
		pc__prep_new_page(p);
	return p;
}

unsigned pc__pcp_drain(struct pc_cache *c, struct pc_tctx *t)
{
	unsigned nr;

	/* A look without the lock first: most contexts hold none. */
	if (!atomic_load_explicit(&t->nr_pcp, memory_order_relaxed))
		return 0;
	pc__lock(&t->lock);
	nr = drain_locked(c, t);
	pc__unlock(&t->lock);
	return nr;
}
