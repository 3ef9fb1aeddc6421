/*
 * readahead.c - per-file readahead windows, fadvise, use-once pages.
 *
 * The state of one open file (struct pc_ra, under f->ra_lock):
 *
 *     |<------------------- size ------------------->|
 *     |                      |<----- async_size ---->|
 *   start                  marker               start + size
 *
 * A sequential miss reads a synchronous window: the request rounded up to
 * a power of two, x4 while it is at most max/32, x2 while at most max/4,
 * else max (get_init_ra_size).  The page at start + size - async_size
 * carries PG_readahead; a reader that reaches it starts the next window
 * (async readahead) of the next size: x4 below max/16, x2 up to max/2,
 * then max (get_next_ra_size).  With readahead.single_marker (default)
 * exactly that one page is marked; off, the last page of the window is
 * marked too, so a window starts twice the I/O it needs (seed 002 measured
 * the difference in direct reclaim).  A miss that is neither sequential
 * (within one page of the previous read) nor at the marker is random: it
 * reads what was asked, no more.
 *
 * Readahead's extra pages are allocated PC_GFP_NORETRY: they take free
 * frames or nothing, and never push the reader into direct reclaim (seed
 * 002); the page the reader needs now is allocated normally.
 *
 * Use-once pages (cache.stickiness, POSIX_FADV_NOREUSE): pages that an
 * established sequential stream brings in carry PG_dropbehind.  The first
 * reader to consume one takes the flag and puts the page in its file's
 * drop batch instead of marking it accessed; the batch is dropped (one
 * tree-lock hold per batch) when full or when the read ends.  A page that
 * anyone touched meanwhile (PG_referenced) stays.  So a stream does not
 * push the working set out: it recycles its own frames.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <urcu-bp.h>

#include "internal.h"

#define STREAM_BW_MIN (64ull << 20)	/* bytes/s: "a fast device" */

void pc__ra_init(struct pc_file *f)
{
	f->ra.start = 0;
	f->ra.size = 0;
	f->ra.async_size = 0;
	f->ra.prev_index = UINT64_MAX;
	f->ra.max = (unsigned)f->cache->cfg.ra_max_pages;
}

static unsigned roundup_pow2(unsigned x)
{
	unsigned r = 1;

	while (r < x)
		r <<= 1;
	return r;
}

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

static unsigned next_ra_size(unsigned cur, unsigned max)
{
	if (cur < max / 16)
		return 4 * cur;
	if (cur <= max / 2)
		return 2 * cur;
	return max;
}

static unsigned ra_max(struct pc_file *f)
{
	unsigned max = f->ra.max ? f->ra.max : 1;

	if (atomic_load_explicit(&f->advice, memory_order_relaxed) ==
	    POSIX_FADV_SEQUENTIAL)
		max *= 2;
	return max;
}

bool pc__stream_dropbehind(struct pc_mapping *m)
{
	struct pc_cache *c = m->cache;
	uint64_t bw;

	if (c->cfg.stickiness == 2)
		return true;
	if (c->cfg.stickiness == 0)
		return false;
	bw = m->bdi ? atomic_load_explicit(&m->bdi->write_bw, memory_order_relaxed) : 0;
	return bw == 0 || bw >= STREAM_BW_MIN;
}

static void submit_run(struct pc_mapping *m, struct pc_page **run, unsigned *n)
{
	if (*n)
		pc__read_pages(m, run, *n, NULL);
	*n = 0;
}

unsigned pc__do_page_cache_ra(struct pc_file *f, uint64_t index, unsigned nr,
			      unsigned lookahead)
{
	struct pc_mapping *m = f->mapping;
	struct pc_cache *c = f->cache;
	struct pc_page *run[PC_MAX_IO_PAGES];
	uint64_t end_index = ((uint64_t)atomic_load(&m->size) + PC_PAGE_SIZE - 1)
			     >> PC_PAGE_SHIFT;
	uint64_t mark = index + nr - lookahead;
	bool stream = lookahead && index > 0 &&
		      (atomic_load(&f->advice) == POSIX_FADV_NOREUSE ||
		       pc__stream_dropbehind(m));
	unsigned n = 0, added = 0;

	if (atomic_load(&f->advice) == POSIX_FADV_NOREUSE)
		stream = true;
	for (uint64_t i = index; i < index + nr && i < end_index; i++) {
		struct pc_page *p;
		void *item;

		urcu_bp_read_lock();
		item = pc__tree_lookup(&m->tree, i);
		urcu_bp_read_unlock();
		if (item && !pc_tree_is_value(item)) {
			submit_run(m, run, &n);
			continue;
		}
		p = pc__alloc_page(c, m, added ? PC_GFP_NORETRY : 0);
		if (!p)
			break;
		page_set(p, PG_locked);
		if (i != index)
			page_set(p, PG_rapage);
		if (stream)
			page_set(p, PG_dropbehind);
		if (lookahead && (i == mark ||
		    (!c->cfg.single_marker && i == index + nr - 1)))
			page_set(p, PG_readahead);
		if (pc__add_to_page_cache(m, p, i)) {
			page_clear(p, PG_locked);
			pc__put_page(c, p);
			submit_run(m, run, &n);
			continue;
		}
		run[n++] = p;
		added++;
		if (n == PC_MAX_IO_PAGES)
			submit_run(m, run, &n);
	}
	submit_run(m, run, &n);
	if (added) {
		pc__add(c, 0, ra_pages, added);
	}
	return added;
}

/* The kernel's ondemand_readahead; f->ra_lock held. */
static void ondemand(struct pc_file *f, uint64_t index, unsigned req,
		     bool hit_marker)
{
	struct pc_ra *ra = &f->ra;
	unsigned max = ra_max(f);

	if (index == 0)
		goto initial;
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

		urcu_bp_read_lock();
		while (start - index <= max &&
		       (item = pc__tree_lookup(&f->mapping->tree, start)) &&
		       !pc_tree_is_value(item))
			start++;
		urcu_bp_read_unlock();
		if (start - index > max)
			return;
		ra->start = start;
		ra->size = (unsigned)(start - index) + req;
		ra->size = next_ra_size(ra->size, max);
		ra->async_size = ra->size;
		goto readit;
	}
	if (req > max)
		goto initial;
	if (ra->prev_index != UINT64_MAX &&
	    (index == ra->prev_index || index == ra->prev_index + 1))
		goto initial;
	/* Random: read what was asked for. */
	pc__inc(f->cache, 0, ra_miss_random);
	pc__do_page_cache_ra(f, index, req, 0);
	return;
initial:
	ra->start = index;
	ra->size = init_ra_size(req, max);
	ra->async_size = ra->size > req ? ra->size - req : ra->size;
readit:
	if (!hit_marker && index == ra->start && ra->size == ra->async_size) {
		unsigned add = next_ra_size(ra->size, max);

		if (ra->size + add <= max) {
			ra->async_size = add;
			ra->size += add;
		} else {
			ra->size = max;
			ra->async_size = max >> 1;
		}
	}
	pc__do_page_cache_ra(f, ra->start, ra->size, ra->async_size);
}

void pc__sync_readahead(struct pc_file *f, uint64_t index, unsigned req)
{
	req = pc_max(1u, req);
	if (atomic_load_explicit(&f->advice, memory_order_relaxed) ==
	    POSIX_FADV_RANDOM) {
		pc__do_page_cache_ra(f, index, pc_min(req, ra_max(f)), 0);
		return;
	}
	pthread_mutex_lock(&f->ra_lock);
	pc__inc(f->cache, 0, ra_sync);
	ondemand(f, index, pc_min(req, PC_MAX_IO_PAGES * 4u), false);
	pthread_mutex_unlock(&f->ra_lock);
}

void pc__async_readahead(struct pc_file *f, struct pc_page *p,
			 uint64_t index, unsigned req)
{
	if (!page_test_clear(p, PG_readahead))
		return;
	if (atomic_load_explicit(&f->advice, memory_order_relaxed) ==
	    POSIX_FADV_RANDOM)
		return;
	pthread_mutex_lock(&f->ra_lock);
	pc__inc(f->cache, 0, ra_async);
	ondemand(f, index, pc_min(pc_max(1u, req), PC_MAX_IO_PAGES * 4u), true);
	pthread_mutex_unlock(&f->ra_lock);
}

/* ------------------------------------------------------------------ */
/* Use-once pages.                                                     */

bool pc__try_drop_page(struct pc_cache *c, struct pc_page *p, int expected,
		       bool force)
{
	struct pc_mapping *m;
	bool dropped = false;

	if (!pc__trylock_page(p))
		return false;
	m = page_mapping(p);
	if (m && !page_test(p, PG_dirty) && !page_test(p, PG_writeback) &&
	    (force || (!page_test(p, PG_referenced) &&
		       !page_test(p, PG_active)))) {
		pc__lock(&m->tree_lock);
		if (page_ref_freeze(p, expected)) {
			if (page_test(p, PG_dirty)) {
				page_ref_unfreeze(p, expected);
			} else {
				pc_trace(c, PC_TR_EVICT, p, 1);
				pc__delete_from_page_cache_locked(m, p, NULL);
				dropped = true;
			}
		}
		pc__unlock(&m->tree_lock);
	}
	pc__unlock_page(&c->wait, p);
	if (dropped) {
		pc__inc(c, page_node(c, p)->id, dropbehind);
		pc__page_release(c, p);
	}
	return dropped;
}

/* f->ra_lock held. */
static void dropbehind_flush_locked(struct pc_file *f)
{
	struct pc_cache *c = f->cache;

	for (unsigned i = 0; i < f->nr_drop; i++) {
		struct pc_page *p = f->drop[i];

		/* Ours and the mapping's: the frame is free if both go. */
		if (!pc__try_drop_page(c, p, 2, false))
			pc__put_page(c, p);
	}
	f->nr_drop = 0;
}

void pc__dropbehind_flush(struct pc_file *f)
{
	pthread_mutex_lock(&f->ra_lock);
	dropbehind_flush_locked(f);
	pthread_mutex_unlock(&f->ra_lock);
}

void pc__mark_read(struct pc_file *f, struct pc_page *p, bool consumed)
{
	struct pc_cache *c = f->cache;

	page_clear(p, PG_rapage);
	if (!consumed || !page_test(p, PG_dropbehind) ||
	    !page_test_clear(p, PG_dropbehind) || !pc__memory_tight(c)) {
		pc__mark_accessed(c, p);
		return;
	}
	if (page_test(p, PG_referenced))
		return;
	page_get(p);
	pthread_mutex_lock(&f->ra_lock);
	f->drop[f->nr_drop++] = p;
	if (f->nr_drop == PC_DROP_BATCH)
		dropbehind_flush_locked(f);
	pthread_mutex_unlock(&f->ra_lock);
}

/* ------------------------------------------------------------------ */

static void invalidate_range(struct pc_file *f, uint64_t first, uint64_t last)
{
	struct pc_mapping *m = f->mapping;

	for (uint64_t i = first; i <= last; i++) {
		struct pc_page *p;

		if (i > first && (i & 63) == 0 && atomic_load(&m->nr_pages) == 0)
			break;
		p = pc__find_get_page(m, i);
		if (!p)
			continue;
		if (!pc__try_drop_page(f->cache, p, 2, true)) {
			pc__deactivate_page(f->cache, p);
			pc__put_page(f->cache, p);
		}
	}
}

PC_EXPORT int pc_fadvise(pc_file *f, off_t off, off_t len, int advice)
{
	uint64_t first, last, size;

	if (!f || off < 0 || len < 0)
		return -EINVAL;
	size = (uint64_t)atomic_load(&f->mapping->size);
	first = (uint64_t)off >> PC_PAGE_SHIFT;
	last = len ? ((uint64_t)off + (uint64_t)len - 1) >> PC_PAGE_SHIFT
		   : UINT64_MAX;
	if (size)
		last = pc_min(last, (size - 1) >> PC_PAGE_SHIFT);
	else
		last = 0;
	switch (advice) {
	case POSIX_FADV_NORMAL:
	case POSIX_FADV_SEQUENTIAL:
	case POSIX_FADV_RANDOM:
	case POSIX_FADV_NOREUSE:
		atomic_store(&f->advice, advice);
		return 0;
	case POSIX_FADV_WILLNEED:
		if (!size || (uint64_t)off >= size)
			return 0;
		for (uint64_t i = first; i <= last; i += PC_MAX_IO_PAGES)
			if (!pc__do_page_cache_ra(f, i,
				(unsigned)pc_min(last - i + 1, PC_MAX_IO_PAGES), 0) &&
			    atomic_load(&f->cache->nodes[0].nr_free) == 0)
				break;
		return 0;
	case POSIX_FADV_DONTNEED:
		if (!size || (uint64_t)off >= size)
			return 0;
		pc__writeback_range(f->mapping, first, last, false, NULL);
		invalidate_range(f, first, last);
		return 0;
	default:
		return -EINVAL;
	}
}
