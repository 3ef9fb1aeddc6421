/*
 * readahead.c - per-file readahead windows, stream detection, fadvise.
 *
 * READAHEAD.  The state of one open file (struct pc_ra, f->ra_lock):
 *
 *     |<------------------- size ------------------->|
 *     |                      |<----- async_size ---->|
 *   start                  marker               start + size
 *
 * The kernel's ondemand readahead (mm/readahead.c before folios), decided
 * on a miss (sync) or when a reader finds the marked page (async):
 *
 *   start of file, sequential miss (the page of the previous read or the
 *   next one), oversized read:
 *       initial window at the miss: the request rounded up to a power of
 *       two, x4 while at most max/32, x2 while at most max/4, else max
 *       (init_ra_size); async_size = size - request.  If the reader would
 *       hit its own marker at once, the next window is merged in.
 *   the marker of our window (or its end):
 *       next window right after it: x4 below max/16, x2 up to max/2, then
 *       max (next_ra_size); all of it async.
 *   someone else's marker (interleaved streams, another open file):
 *       read on from the first missing page, sized from the distance.
 *   a miss after cached history (page_cache_prev_miss: the pages just
 *   before it are cached, more of them than the request):
 *       context readahead: a stream we lost track of, e.g. the second of
 *       two interleaved streams through one handle; its window no larger
 *       than an initial one (a random reader next to a cached run is no
 *       stream), its last page marked, so a real stream ramps up again.
 *   anything else:
 *       random: read what was asked for, no more (ra_miss_random).
 *
 * A request larger than readahead.max may read up to the largest I/O
 * (PC_MAX_IO_PAGES), as the kernel allows up to the device's io_pages.
 * After a window that was all holes (zero-filled, no I/O: f->ra.holes)
 * windows stay within RA_HOLE_MAX_PAGES: there is no latency to hide, and
 * pages zero-filled far ahead of the reader are cold when it gets there.
 * With readahead.single_marker (default) exactly one page of a window
 * carries PG_readahead, at start + size - async_size; off, the last page
 * is marked too, so a stream reads one window further ahead than it needs
 * (seed 002: where the marker sits decides how much memory a stream holds
 * in flight, and readers ended in direct reclaim when it moved earlier).
 * readahead.max=0 turns readahead off.  POSIX_FADV_SEQUENTIAL doubles the
 * maximum, POSIX_FADV_RANDOM reads only what is asked.
 *
 * A window is allocated, inserted locked and handed to pc__read_pages in
 * runs of up to 4 MiB, which submits them at once in requests of up to
 * 1 MiB and returns: nobody waits but a reader that needs one of the pages
 * now (it sleeps on that page's lock) - except the reader of a miss,
 * whose own page (the window's first) is read by the reader itself, in a
 * small request of its own, before the rest of the window is queued.  In a
 * shared cache each new page is marked as this process's read in flight
 * (io_pid) before it is inserted, so a death before its request is made
 * leaves it to the reaper of a dead reader (unlocked, its reference
 * given back: procs.c).  A new page whose insertion fails (another reader
 * inserted that index first) is unlocked by pc__unlock_page and freed:
 * a shrink may be queued on its lock (filemap.c, issue 36).  Only the
 * page the reader needs now
 * may enter direct reclaim; the rest of a window is allocated with
 * PC_GFP_NORETRY (down to the min mark, no reclaim), and an async window
 * only while a node it may come from (with numa.node_reclaim, the
 * thread's) has free frames above its low mark (ra_room): it
 * is cut short below, leaving the reserve between min and low to pages
 * readers need now, so readahead does not push readers into direct
 * reclaim (seed 002).  A sequential miss inside a window that was cut
 * short goes on with a window of the same size, not from scratch.
 *
 * USE-ONCE PAGES: windows of an established stream (not a file's first
 * window) on a fast device, and every page read through a NOREUSE file,
 * carry PG_dropbehind; what reads do with them is dropbehind.c's.
 *
 * Streams of one file: an open file whose reads were last found sequential
 * owns a slot of m->stream_pos[] (PC_RA_STREAMS of them; f->ra_stream,
 * changed under f->ra_lock) holding 1 + the last page it read, updated at
 * the end of each read.  A random miss gives the slot back, and so does
 * pc_close (through pc__dropbehind_flush).  A stream that stops reading
 * but stays open holds its slot: the pages the others consume after its
 * position are kept for it while there is room (dropbehind.c).
 *
 * FADVISE.  NORMAL, SEQUENTIAL, RANDOM and NOREUSE set f->advice (one of
 * them at a time: NOREUSE replaces SEQUENTIAL).  WILLNEED reads the range
 * (at most half the budget) as readahead and returns without waiting for
 * the I/O.  DONTNEED starts writeback of the range's dirty pages and drops
 * its clean ones (draining the per-thread LRU batches that may hold them);
 * those it cannot drop go to the tail of the inactive list.
 *
 * Locks: f->ra_lock (the window state, f->ra_stream) is taken with no
 * other lock held and is held across page allocation (which may reclaim)
 * and I/O submission, never across a wait for I/O; under it: the tree
 * lock (insertion), lru locks (batches).  f->ra.prev_index and the
 * stream positions are written without it (relaxed atomics).
 */
#include <fcntl.h>
#include <stdlib.h>

#include "internal.h"
#include "dirty.h"
#include "filemap.h"
#include "inode.h"
#include "node.h"
#include "readahead.h"
#include "tctx.h"
#include "tree.h"
#include "vmscan.h"

#define RA_RUN_PAGES (4 * PC_MAX_IO_PAGES)	/* pages per pc__read_pages */
/*
 * Windows over holes: no I/O latency to hide, so no need to zero-fill far
 * ahead, where the frames go cold before they are read (a sparse 1 GiB
 * read: ~520 ns of CPU per page at 16 to 64 pages, ~670 at 512).
 */
#define RA_HOLE_MAX_PAGES 32u

/* read_window() flags */
#define RA_NEED_FIRST 0x1	/* the first page is needed now: may reclaim */
#define RA_STREAM 0x2		/* an established stream's window: use-once */
#define RA_RECLAIM 0x4		/* every page may reclaim (WILLNEED) */
#define RA_ASYNC 0x8		/* nobody needs it yet: only above low */

/*
 * The default readahead.max: 2 MiB, measured on the development machine
 * (a sequential 4 KiB reader of a 2 GiB file through O_DIRECT, 256M
 * budget: 128K 460 MB/s, 512K 720, 1M 910, 2M 1080; 4M and 8M no better
 * within the noise, for twice the memory in flight) - but at most a 64th
 * of the budget, so a small cache is not all readahead.
 */
#define RA_MAX_DEFAULT_PAGES 512u
#define RA_MAX_MIN_PAGES 16u

static unsigned default_ra_max(struct pc_cache *c)
{
	unsigned max = RA_MAX_DEFAULT_PAGES;

	while (max > RA_MAX_MIN_PAGES && max > c->nr_frames / 64)
		max >>= 1;
	return max;
}

unsigned pc__ra_default_max(struct pc_cache *c)
{
	uint64_t max = c->cfg.ra_max_pages;

	return max == PC_RA_MAX_AUTO ? default_ra_max(c) : (unsigned)max;
}

void pc__ra_init(struct pc_file *f)
{
	f->ra.start = 0;
	f->ra.size = 0;
	f->ra.async_size = 0;
	f->ra.prev_index = UINT64_MAX;
	f->ra.max = pc__ra_default_max(f->cache);
}

static unsigned roundup_pow2(unsigned x)
{
	unsigned r = 1;

	while (r < x)
		r <<= 1;
	return r;
}

/* The kernel's get_init_ra_size. */
static unsigned init_ra_size(unsigned req, unsigned max)
{
	unsigned size = roundup_pow2(req);

	if (size <= max / 32)
		size *= 4;
	else if (size <= max / 4)
		size *= 2;
	else
		size = max;
	return pc_min(size, max);
}

/* The kernel's get_next_ra_size. */
static unsigned next_ra_size(unsigned cur, unsigned max)
{
	if (cur < max / 16)
		return 4 * cur;
	if (cur <= max / 2)
		return 2 * cur;
	return max;
}

static int advice(struct pc_file *f)
{
	return atomic_load_explicit(&f->advice, memory_order_relaxed);
}

/* The largest window for a request of @req pages; 0: readahead is off. */
static unsigned ra_max(struct pc_file *f, unsigned req)
{
	unsigned max = f->ra.max;

	if (!max)
		return 0;
	if (advice(f) == POSIX_FADV_SEQUENTIAL)
		max *= 2;
	if (req > max && max < PC_MAX_IO_PAGES)
		max = pc_min(req, (unsigned)PC_MAX_IO_PAGES);
	return max;
}

/*
 * f->ra.prev_index is written by every read, without f->ra_lock (as the
 * kernel's prev_pos): relaxed atomic accesses, a stale value only makes a
 * read look random or sequential when it raced with another.
 */
uint64_t pc__ra_last_read(struct pc_file *f)
{
	return __atomic_load_n(&f->ra.prev_index, __ATOMIC_RELAXED);
}

void pc__ra_note_read(struct pc_file *f, uint64_t index)
{
	int slot = atomic_load_explicit(&f->ra_stream, memory_order_relaxed);

	if (pc__ra_last_read(f) == index)
		return;
	__atomic_store_n(&f->ra.prev_index, index, __ATOMIC_RELAXED);
	if (slot > 0) {
		/*
		 * Only while the slot is taken: another thread of this file
		 * may have given it back meanwhile, and a free slot must stay
		 * free (a stale position in a slot that was taken again is
		 * put right by its owner's next read).
		 */
		_Atomic uint64_t *pos = &f->mapping->stream_pos[slot - 1];
		uint64_t cur = atomic_load_explicit(pos, memory_order_relaxed);

		if (cur)
			atomic_compare_exchange_strong(pos, &cur, index + 1);
	}
}

/* ------------------------------------------------------------------ */
/* Streams.                                                            */

/* @f reads sequentially; @next: the first page it has not read. */
static void stream_begin_locked(struct pc_file *f, uint64_t next)
{
	int slot = -1;

	PC_ASSERT_HELD(&f->ra_lock);
	if (atomic_load_explicit(&f->ra_stream, memory_order_relaxed))
		return;
	for (int k = 0; k < PC_RA_STREAMS; k++) {
		uint64_t free_slot = 0;

		if (atomic_compare_exchange_strong(&f->mapping->stream_pos[k],
						   &free_slot, pc_max(next, 1))) {
			slot = k + 1;
			break;
		}
	}
	atomic_store_explicit(&f->ra_stream, slot, memory_order_relaxed);
}

void pc__ra_stream_end_locked(struct pc_file *f)
{
	int slot = atomic_load_explicit(&f->ra_stream, memory_order_relaxed);

	PC_ASSERT_HELD(&f->ra_lock);
	if (slot > 0)
		atomic_store(&f->mapping->stream_pos[slot - 1], 0);
	atomic_store_explicit(&f->ra_stream, 0, memory_order_relaxed);
}

void pc__ra_stream_note(struct pc_file *f, uint64_t last)
{
	if (atomic_load_explicit(&f->ra_stream, memory_order_relaxed))
		return;
	pc__lock(&f->ra_lock);
	stream_begin_locked(f, last + 1);
	pc__unlock(&f->ra_lock);
}

/* ------------------------------------------------------------------ */
/* Reading a window.                                                   */

/*
 * Returns the pages zero-filled without I/O.  *now: run[0] is the page a
 * reader waits for (its request is read first, by this thread); cleared.
 */
static unsigned submit_run(struct pc_mapping *m, struct pc_page **run,
			   unsigned *n, bool *now)
{
	unsigned zeroed = *n ? pc__read_pages(m, run, *n, *now) : 0;

	*n = 0;
	*now = false;
	return zeroed;
}

/*
 * Is there room for pages nobody needs yet (an async window)?  Free
 * frames above some node's low mark; else the kswapds are woken and the
 * window stops short: the frames between min and low are for pages
 * readers need now, so readahead does not push them into direct reclaim
 * (seed 002).
 */
static bool ra_room(struct pc_cache *c)
{
	struct pc_tctx *t = pc__tctx(c);
	/* With numa.node_reclaim pages come from the thread's node only. */
	int first = c->cfg.node_reclaim && t ? t->node : 0;
	int count = c->cfg.node_reclaim && t ? 1 : c->nr_nodes;

	for (int i = first; i < first + count; i++) {
		struct pc_node *n = &c->nodes[i];

		if (atomic_load_explicit(&n->nr_free, memory_order_relaxed) >
		    node_wmark_low(n))
			return true;
	}
	for (int i = first; i < first + count; i++)
		pc__wakeup_kswapd(c, &c->nodes[i]);
	return false;
}

/*
 * Read the missing pages of [index, index + nr) - no further than end of
 * file - and mark the page at index + nr - lookahead (lookahead 0: none).
 * Returns the pages added, *zeroed (if not NULL) those of them that were
 * holes; the I/O is not waited for.
 */
static unsigned read_window_z(struct pc_file *f, uint64_t index, unsigned nr,
			      unsigned lookahead, unsigned flags,
			      unsigned *zeroed)
{
	struct pc_mapping *m = f->mapping;
	struct pc_cache *c = f->cache;
	struct pc_page *run[RA_RUN_PAGES];
	uint64_t size = (uint64_t)atomic_load(&m->size);
	uint64_t end = pc_min(index + nr, (size + PC_PAGE_SIZE - 1) >> PC_PAGE_SHIFT);
	uint64_t mark = lookahead ? index + nr - lookahead : UINT64_MAX;
	uint64_t last_mark = lookahead && !c->cfg.single_marker ? index + nr - 1
								  : UINT64_MAX;
	bool use_once = advice(f) == POSIX_FADV_NOREUSE ||
			((flags & RA_STREAM) && pc__stream_use_once(m, true));
	unsigned n = 0, added = 0, z = 0;
	bool now = false;

	for (uint64_t i = index; i < end; i++) {
		bool need = i == index && (flags & RA_NEED_FIRST);
		struct pc_page *p;
		void *item;

		pc__tree_read_lock(&m->tree);
		item = pc__tree_lookup(&m->tree, i);
		pc__tree_read_unlock(&m->tree);
		if (item && !pc_tree_is_value(item)) {
			z += submit_run(m, run, &n, &now);
			continue;
		}
		if (need || (flags & RA_RECLAIM)) {
			/* Never wait in the allocator holding pages of the run
			 * locked and unsent: reclaim takes locked pages for
			 * progress to come (page_alloc.c), and their readers
			 * wait. */
			p = n ? pc__alloc_page(c, m, PC_GFP_NORETRY) : NULL;
			if (!p) {
				z += submit_run(m, run, &n, &now);
				p = pc__alloc_page(c, m, 0);
			}
		}
		else if (!(flags & RA_ASYNC) || ra_room(c))
			p = pc__alloc_page(c, m, PC_GFP_NORETRY);
		else
			p = NULL;
		if (!p)
			break;	/* out of free frames: cut the window short */
		pc__page_lock_new(p);
		/* A read in flight from now on, before anyone sees it: a
		 * death before its submission is the read's reaper's
		 * (procs.c: unlocked, the reference given back). */
		atomic_store_explicit(&p->io_pid, pc__io_owner(c, false),
				      memory_order_relaxed);
		if (!need)
			page_set(p, PG_rapage);
		if (use_once)
			page_set(p, PG_dropbehind);
		if (i == mark || i == last_mark)
			page_set(p, PG_readahead);
		if (pc__add_to_page_cache(m, p, i)) {
			/* Lost the race (or no tree node): a thread that
			 * found the frame by its number may be queued on
			 * its lock meanwhile - an unlock that wakes it. */
			atomic_store_explicit(&p->io_pid, 0,
					      memory_order_relaxed);
			pc__unlock_page(&c->wait, p);
			pc__put_page(c, p);
			z += submit_run(m, run, &n, &now);
			continue;
		}
		now = now || need;
		run[n++] = p;
		added++;
		if (n == RA_RUN_PAGES)
			z += submit_run(m, run, &n, &now);
	}
	if (n)
		PC_PARK(PC_PARK_RA_NEW);
	z += submit_run(m, run, &n, &now);
	if (added)
		pc__add(c, 0, ra_pages, added);
	if (zeroed)
		*zeroed = z;
	return added;
}

static unsigned read_window(struct pc_file *f, uint64_t index, unsigned nr,
			    unsigned lookahead, unsigned flags)
{
	return read_window_z(f, index, nr, lookahead, flags, NULL);
}

/* Cached pages right before @index, at most @max (page_cache_prev_miss). */
static unsigned count_history(struct pc_mapping *m, uint64_t index,
			      unsigned max, bool *from_start)
{
	unsigned n = 0;

	*from_start = false;
	pc__tree_read_lock(&m->tree);
	while (n < max && n < index) {
		void *item = pc__tree_lookup(&m->tree, index - n - 1);

		if (!item || pc_tree_is_value(item))
			break;
		n++;
	}
	pc__tree_read_unlock(&m->tree);
	*from_start = n == index;
	return n;
}

/*
 * The kernel's ondemand_readahead; f->ra_lock held.  @hit_marker: called
 * for a page carrying PG_readahead (async), else for a miss at @index.
 */
static void ondemand(struct pc_file *f, uint64_t index, unsigned req,
		     bool hit_marker)
{
	struct pc_ra *ra = &f->ra;
	unsigned max = ra_max(f, req);
	uint64_t prev = pc__ra_last_read(f);
	unsigned flags = RA_STREAM, added, zeroed;
	bool from_start;
	unsigned history;

	/* Over holes there is no I/O to hide: small windows stay cache-hot. */
	if (ra->holes)
		max = pc_min(max, pc_max(RA_HOLE_MAX_PAGES, req));

	if (index == 0) {
		flags = 0;
		goto initial;
	}
	/* The expected marker (or the window's end): push the window on. */
	if (ra->size && (index == ra->start + ra->size - ra->async_size ||
			 index == ra->start + ra->size)) {
		ra->start += ra->size;
		ra->size = next_ra_size(ra->size, max);
		ra->async_size = ra->size;
		goto readit;
	}
	if (hit_marker) {
		/* Another stream's marker: read on from the next hole. */
		uint64_t start = index + 1;
		void *item;

		pc__tree_read_lock(&f->mapping->tree);
		while (start - index <= max &&
		       (item = pc__tree_lookup(&f->mapping->tree, start)) &&
		       !pc_tree_is_value(item))
			start++;
		pc__tree_read_unlock(&f->mapping->tree);
		if (start - index > max)
			return;
		ra->start = start;
		ra->size = (unsigned)(start - index) + req;
		ra->size = next_ra_size(ra->size, max);
		ra->async_size = ra->size;
		goto readit;
	}
	/*
	 * A sequential miss inside the window: it was cut short for want of
	 * free frames.  Go on from here with a window of its size, rather
	 * than ramping up from the request again.
	 */
	if (!hit_marker && ra->size && index - prev <= 1 &&
	    index > ra->start && index < ra->start + ra->size) {
		ra->start = index;
		ra->async_size = ra->size > req ? ra->size - req : ra->size;
		goto readit;
	}
	/* Oversized read, or a sequential miss (same or next page). */
	if (req > max || index - prev <= 1)
		goto initial;
	/*
	 * The traces a stream leaves behind: context readahead - but no more
	 * than a new stream's first window.  Cached runs are also what an
	 * earlier pass leaves for a random reader to miss next to (tiobench's
	 * random reads after a sequential pass), and a window the size of
	 * the run read megabytes for one page.  A stream it was gets its
	 * windows back in a few markers (async_size 1: the window's last).
	 */
	history = count_history(f->mapping, index, max, &from_start);
	if (history > req) {
		if (from_start)		/* cached from the start: a long run */
			history *= 2;
		ra->start = index;
		ra->size = pc_min(history + req, init_ra_size(req, max));
		ra->async_size = 1;
		goto readit;
	}
	/* Random: read what was asked for, leave the state alone. */
	pc__inc(f->cache, 0, ra_miss_random);
	pc__ra_stream_end_locked(f);
	read_window(f, index, req, 0, RA_NEED_FIRST);
	return;
initial:
	ra->start = index;
	ra->size = init_ra_size(req, max);
	ra->async_size = ra->size > req ? ra->size - req : ra->size;
readit:
	/* Would the reader hit its own marker at once?  Merge the next. */
	if (index == ra->start && ra->size == ra->async_size) {
		unsigned add = next_ra_size(ra->size, max);

		if (ra->size + add <= max) {
			ra->async_size = add;
			ra->size += add;
		} else {
			ra->size = max;
			ra->async_size = max >> 1;
		}
	}
	stream_begin_locked(f, index);
	added = read_window_z(f, ra->start, ra->size, ra->async_size,
			      flags | (hit_marker ? RA_ASYNC : RA_NEED_FIRST),
			      &zeroed);
	if (added)
		ra->holes = zeroed == added;
}

void pc__sync_readahead(struct pc_file *f, uint64_t index, unsigned req)
{
	req = pc_min(pc_max(1u, req), (unsigned)RA_RUN_PAGES);
	if (!f->ra.max) {	/* readahead off */
		read_window(f, index, 1, 0, RA_NEED_FIRST);
		return;
	}
	if (advice(f) == POSIX_FADV_RANDOM) {
		read_window(f, index, pc_min(req, ra_max(f, req)), 0,
			    RA_NEED_FIRST);
		return;
	}
	pc__lock(&f->ra_lock);
	pc__inc(f->cache, 0, ra_sync);
	ondemand(f, index, req, false);
	pc__unlock(&f->ra_lock);
}

void pc__async_readahead(struct pc_file *f, struct pc_page *p,
			 uint64_t index, unsigned req)
{
	if (!page_test_clear(p, PG_readahead))
		return;
	if (!f->ra.max || advice(f) == POSIX_FADV_RANDOM ||
	    page_test(p, PG_writeback))
		return;
	pc__lock(&f->ra_lock);
	pc__inc(f->cache, 0, ra_async);
	ondemand(f, index, pc_min(pc_max(1u, req), (unsigned)RA_RUN_PAGES), true);
	pc__unlock(&f->ra_lock);
}

/* ------------------------------------------------------------------ */
/* fadvise                                                             */

/* WILLNEED: read [first, last] as readahead, at most half the budget. */
static void willneed(struct pc_file *f, uint64_t first, uint64_t last)
{
	uint64_t budget = f->cache->nr_frames / 2;

	for (uint64_t i = first; i <= last && budget;) {
		unsigned n = (unsigned)pc_min(pc_min(last - i + 1, budget),
					      (uint64_t)RA_RUN_PAGES);

		read_window(f, i, n, 0, RA_RECLAIM);
		budget -= n;
		i += n;
	}
}

/*
 * DONTNEED: drop the clean pages of [first, last]; the others go to the
 * inactive tail.  Returns how many could not be dropped.
 */
static unsigned invalidate_range(struct pc_file *f, uint64_t first,
				 uint64_t last)
{
	struct pc_mapping *m = f->mapping;
	struct pc_cache *c = f->cache;
	unsigned kept = 0;

	for (uint64_t next = first; next <= last;) {
		void *items[64];
		uint64_t idx[64];
		unsigned got;

		pc__tree_read_lock(&m->tree);
		got = pc__tree_gang(&m->tree, next, last, items, idx, 64);
		pc__tree_read_unlock(&m->tree);
		if (!got)
			break;
		for (unsigned k = 0; k < got; k++) {
			struct pc_page *p;

			if (pc_tree_is_value(items[k]))
				continue;
			p = pc__find_get_page(m, idx[k]);
			if (!p)
				continue;
			if (pc__drop_page(c, p, 2, true, true))
				continue;
			kept++;
			if (page_test(p, PG_writeback))
				page_set(p, PG_reclaim);	/* tail when done */
			pc__deactivate_page(c, p);
			pc__put_page(c, p);
		}
		if (idx[got - 1] >= last)
			break;
		next = idx[got - 1] + 1;
	}
	return kept;
}

PC_EXPORT int pc_fadvise(pc_file *f, off_t off, off_t len, int adv)
{
	struct pc_tctx *t;
	uint64_t first, last, size;

	if (!f || off < 0 || len < 0)
		return -EINVAL;
	switch (adv) {
	case POSIX_FADV_NORMAL:
	case POSIX_FADV_SEQUENTIAL:
	case POSIX_FADV_RANDOM:
	case POSIX_FADV_NOREUSE:
		atomic_store(&f->advice, adv);
		return 0;
	case POSIX_FADV_WILLNEED:
	case POSIX_FADV_DONTNEED:
		break;
	default:
		return -EINVAL;
	}
	size = (uint64_t)atomic_load(&f->mapping->size);
	if (!size || (uint64_t)off >= size)
		return 0;
	first = (uint64_t)off >> PC_PAGE_SHIFT;
	last = len && (uint64_t)len < size - (uint64_t)off
		       ? ((uint64_t)off + (uint64_t)len - 1) >> PC_PAGE_SHIFT
		       : (size - 1) >> PC_PAGE_SHIFT;
	if (adv == POSIX_FADV_WILLNEED) {
		if ((f->flags & O_ACCMODE) != O_WRONLY)
			willneed(f, first, last);
		return 0;
	}
	pc__writeback_range(f->mapping, first, last, false, NULL);
	/* Pages waiting in LRU batches hold references: put them on lists. */
	if ((t = pc__tctx(f->cache)))
		pc__lru_drain(f->cache, t);
	if (invalidate_range(f, first, last)) {
		pc__tctx_drain_all(f->cache);
		invalidate_range(f, first, last);
	}
	return 0;
}
