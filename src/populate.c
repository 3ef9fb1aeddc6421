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
 * What: a node's frames [0, hw) are initialized (page_alloc.c grow_locked hands
 * them out a 2 MiB step at a time); [hw, ready) are faulted in, data and
 * descriptors, but not yet initialized; above that nothing was touched.
 *
 *   node k:  | initialized (hw) | ready ahead | never touched ... | share
 *                      ^ the allocator's step    ^ kswapd's next step
 *
 *   1. the allocator initializes a step (page_alloc.c rmqueue) and calls
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
 * Huge pages in a shared cache.  A private cache's memory is anonymous:
 * MADV_HUGEPAGE (node.c) has it faulted in 2 MiB at a time.  A shared
 * cache's is a memfd's (shm.c), and shmem is faulted in 4 KiB at a time
 * unless transparent_hugepage/shmem_enabled says otherwise (its default,
 * Debian's too, is never): every hit on a random page then pays a TLB
 * miss, a two-dimensional walk in a virtual machine (random 4 KiB copies
 * out of 256 MiB of a memfd ran 2.1-2.3 M/s on 4 KiB pages, 2.6-3.0 M/s
 * on 2 MiB ones, here).  MADV_COLLAPSE (6.1) makes a range huge whatever
 * that setting says (but deny), safe against any access meanwhile, as
 * khugepaged's collapses are; it refuses a range with nothing in it, so
 * the step's first page is faulted in first.  So in a shared cache:
 *
 *   - a step populated ahead is made huge instead: its first page
 *     faulted in, then collapsed (the kernel clears the rest: 0.1 ms a
 *     step against MADV_POPULATE_WRITE's 512 faults); a step it cannot
 *     collapse (no huge page free, an old kernel) is populated as before;
 *   - a step the allocator took cold (never populated) is collapsed
 *     behind it when kswapd has nothing ahead to do: n->huge, under
 *     populate_mtx, is the frame below which every step was tried; the
 *     kernel copies what the step holds (a page pinned by I/O in flight
 *     makes it refuse; the step stays small);
 *   - the descriptors too, by 2 MiB blocks that lie wholly within the
 *     node's share (a block of a small budget's would cost more memory
 *     than its descriptors), each by the step whose descriptors start it,
 *     ahead or behind.
 *
 * thp_collapse_alloc counts the 2 MiB ranges made huge,
 * thp_collapse_alloc_failed those the kernel refused, as /proc/vmstat
 * counts khugepaged's.
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
#include "mem.h"
#include "node.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define HUGE_BYTES ((size_t)PC_FRAME_STEP << PC_PAGE_SHIFT)	/* 2 MiB */

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

/*
 * Make the 2 MiB at @addr (aligned) huge: its first page faulted in, so
 * that the range is not empty, then collapsed.  0, or the error.
 */
static int collapse(struct pc_cache *c, struct pc_node *n, void *addr)
{
	int r = madvise(addr, PC_PAGE_SIZE, MADV_POPULATE_WRITE);

	if (!r)
		r = madvise(addr, HUGE_BYTES, MADV_COLLAPSE);
	if (r)
		pc__inc(c, n->id, thp_collapse_alloc_failed);
	else
		pc__inc(c, n->id, thp_collapse_alloc);
	return r;
}

/* A shared cache's data step of frames [from, to) of @n made huge:
 * whether it is (a step cut short by the share's end is not). */
static bool collapse_data(struct pc_cache *c, struct pc_node *n,
			  uint32_t from, uint32_t to)
{
	void *data = pfn_data(c, n->first_pfn + from);

	return pc__mem(c)->collapse && to - from == PC_FRAME_STEP &&
	       !((uintptr_t)data & (HUGE_BYTES - 1)) &&
	       !collapse(c, n, data);
}

/* A shared cache's descriptor blocks that start among the descriptors of
 * frames [from, to) of @n (so each is tried once, by the step that
 * starts it), each made huge when it lies wholly within the share's. */
static void collapse_descs(struct pc_cache *c, struct pc_node *n,
			   uint32_t from, uint32_t to)
{
	uintptr_t lo = (uintptr_t)pfn_page(c, n->first_pfn);
	uintptr_t hi = (uintptr_t)pfn_page(c, n->first_pfn +
					     atomic_load(&n->nr_frames));
	uintptr_t b = ((uintptr_t)pfn_page(c, n->first_pfn + from) +
		       HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
	uintptr_t end = (uintptr_t)pfn_page(c, n->first_pfn + to);

	if (!pc__mem(c)->collapse)
		return;
	for (; b < end; b += HUGE_BYTES)
		if (b >= lo && b + HUGE_BYTES <= hi)
			collapse(c, n, (void *)b);
}

/* The next step below hw not yet tried, collapsed (populate_mtx held). */
static unsigned collapse_behind(struct pc_cache *c, struct pc_node *n)
{
	uint32_t from = atomic_load(&n->huge);
	uint32_t to = pc_min(from + PC_FRAME_STEP, atomic_load(&n->hw));

	PC_ASSERT_HELD(&n->populate_mtx);
	if (!pc__mem(c)->collapse || from >= to)
		return 0;
	collapse_data(c, n, from, to);
	collapse_descs(c, n, from, to);
	atomic_store(&n->huge, to);
	return to - from;
}

unsigned pc__populate_step(struct pc_cache *c, struct pc_node *n)
{
	uint32_t from, to;
	size_t first;
	unsigned done;
	int r = 0;

	pc__lock(&n->populate_mtx);
	pc__lock_counted(&n->free_lock);
	from = pc_max(atomic_load(&n->hw), atomic_load(&n->ready));
	to = pc_min(from + PC_FRAME_STEP,
		    ready_target(n, atomic_load(&n->hw)));
	pc__unlock(&n->free_lock);
	if (from >= to) {	/* nothing ahead: a cold step behind */
		done = collapse_behind(c, n);
		pc__unlock(&n->populate_mtx);
		return done;
	}
	first = (size_t)n->first_pfn + from;
	if (!collapse_data(c, n, from, to))
		r = madvise(pfn_data(c, (uint32_t)first),
			    (size_t)(to - from) << PC_PAGE_SHIFT,
			    MADV_POPULATE_WRITE);
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
	collapse_descs(c, n, from, to);
	if (atomic_load(&n->huge) == from)	/* no cold step behind */
		atomic_store(&n->huge, to);
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
	PC_ASSERT_HELD(&n->populate_mtx);
	if (atomic_load(&n->ready) > share)
		atomic_store(&n->ready, share);
	if (atomic_load(&n->huge) > share)
		atomic_store(&n->huge, share);
}
