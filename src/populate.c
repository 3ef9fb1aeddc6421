/*
 * populate.c - never-used memory faulted in ahead of the allocator, by
 * kswapd, so that the hot path takes frames whose memory is already there.
 *
 * Why: the first touch of never-used memory is the dearest thing a frame
 * ever costs.  The kernel clears each page it faults in (a 2 MiB huge page
 * at a time here), and in a virtual machine the host may have to find and
 * fault the guest's memory too: on a Firecracker guest whose balloon
 * reports free pages to the host, the first write of 256 MiB of huge pages
 * took 1.3-2.5 s against 40-200 ms for memory the guest still held.  A
 * writer that fills the budget for the first time (seq-write: 3 x B
 * written, so the whole budget is taken from never-used memory once) paid
 * that in its own memcpy.
 *
 * What: a node's frames [0, hw) are initialized (node.c grow_locked hands
 * them out a 2 MiB step at a time); [hw, ready) are faulted in, data and
 * descriptors, but not yet initialized; above that nothing was touched.
 *
 *   node k:  | initialized (hw) | ready ahead | never touched ... | share
 *                      ^ the allocator's step    ^ kswapd's next step
 *
 *   1. the allocator initializes a step (node.c rmqueue) and calls
 *      pc__populate_after_grow: when ready is less than ahead_frames()
 *      beyond hw and the share has more, it wakes kswapd to populate
 *      (pc__wakeup_populate); a step it took that was not ready counts in
 *      pggrow_cold - the hot path touched never-used memory;
 *   2. kswapd, when it has nothing to reclaim (a reclaim wake always goes
 *      first, checked between steps), populates one step at a time
 *      (pc__populate_step: MADV_POPULATE_WRITE of the step's data and
 *      descriptors, pgpopulate_kswapd counts the frames) until ready is
 *      ahead_frames() beyond hw or reaches the share;
 *   3. a shrink (resize.c give_back) holds populate_mtx while it gives
 *      memory back above the share, so no step it gives back is being
 *      populated, and brings ready down with hw (pc__populate_forget_locked).
 *
 * MADV_POPULATE_WRITE faults the memory in as a write would, without
 * writing it: a step the allocator already took and filled while kswapd
 * populated it keeps its data.  Where the kernel lacks it (before 5.14)
 * populate does nothing and the allocator touches memory itself.
 *
 * How far ahead (ahead_frames): a 32nd of the node's share in whole
 * steps, 1 to 4 of them (2-8 MiB; a 64 MiB node has one): RSS stays
 * within 3% of the budget above what is cached, and a burst of growth
 * finds memory ready while kswapd catches up.  When the allocator
 * outruns kswapd (never-used memory faulted in at the host's pace, far
 * below a writer's), both fault steps in, kswapd the ones ahead.
 *
 * Locks: populate_mtx (kswapd takes it holding nothing, a shrink holding
 * resize_lock) → free_lock, which guards hw and ready's writes.
 */
#include <sys/mman.h>

#include "internal.h"
#include "node.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Frames kept ready beyond hw: a 32nd of the share, 1..4 steps. */
static uint32_t ahead_frames(struct pc_node *n)
{
	uint32_t steps = atomic_load(&n->nr_frames) / 32 / PC_FRAME_STEP;

	return pc_max(1u, pc_min(steps, PC_POPULATE_AHEAD_MAX / PC_FRAME_STEP)) *
	       PC_FRAME_STEP;
}

/* The frame up to which @n wants memory ready: free_lock or not. */
static uint32_t ready_target(struct pc_node *n, uint32_t hw)
{
	return pc_min(hw + ahead_frames(n), atomic_load(&n->nr_frames));
}

void pc__populate_after_grow(struct pc_cache *c, struct pc_node *n)
{
	uint32_t hw = atomic_load_explicit(&n->hw, memory_order_acquire);
	uint32_t ready = atomic_load_explicit(&n->ready, memory_order_relaxed);

	if (ready < ready_target(n, hw))
		pc__wakeup_populate(c, n);
}

unsigned pc__populate_step(struct pc_cache *c, struct pc_node *n)
{
	uint32_t from, to;
	size_t first;
	int r;

	pc__lock(&n->populate_mtx);
	pc__lock_counted(&n->free_lock);
	from = pc_max(atomic_load(&n->hw), atomic_load(&n->ready));
	to = pc_min(from + PC_FRAME_STEP,
		    ready_target(n, atomic_load(&n->hw)));
	pc__unlock(&n->free_lock);
	if (from >= to) {
		pc__unlock(&n->populate_mtx);
		return 0;
	}
	first = (size_t)n->first_pfn + from;
	r = madvise(pfn_data(c, (uint32_t)first),
		    (size_t)(to - from) << PC_PAGE_SHIFT, MADV_POPULATE_WRITE);
	if (!r) {	/* the descriptors, out to whole pages around them */
		uintptr_t lo = (uintptr_t)pfn_page(c, (uint32_t)first);
		uintptr_t hi = lo + (to - from) * sizeof(struct pc_page);

		lo &= ~(uintptr_t)(PC_PAGE_SIZE - 1);
		r = madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	}
	if (r) {	/* no MADV_POPULATE_WRITE, or no memory: the
			   allocator touches it, as without kswapd */
		pc__unlock(&n->populate_mtx);
		return 0;
	}
	pc__lock_counted(&n->free_lock);
	if (atomic_load(&n->ready) < to)
		atomic_store(&n->ready, to);
	pc__unlock(&n->free_lock);
	pc__unlock(&n->populate_mtx);
	pc__add(c, n->id, pgpopulate_kswapd, to - from);
	return to - from;
}

void pc__populate_forget_locked(struct pc_node *n, uint32_t share)
{
	PC_ASSERT_HELD(&n->free_lock);
	if (atomic_load(&n->ready) > share)
		atomic_store(&n->ready, share);
}
