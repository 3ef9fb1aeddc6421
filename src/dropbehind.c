/*
 * dropbehind.c - use-once pages: what a read does to the pages it reads,
 * and dropping the pages a stream has consumed (cache.stickiness,
 * POSIX_FADV_NOREUSE).
 *
 * Readahead (readahead.c) marks PG_dropbehind on the windows of an
 * established stream when its device is fast - read bandwidth measured
 * from large reads (pc__ra_account_read), else the bdi's write bandwidth;
 * 64 MB/s and more is "fast", nothing measured counts as fast (holes) -
 * or always with cache.stickiness=always, never with =off; and on every
 * page read through a NOREUSE file.  Reads through a NOREUSE file never
 * mark a page accessed, and drop what they consume when memory is tight
 * unless someone else touched it (PG_referenced, PG_active).  What
 * happens when a reader consumes a PG_dropbehind page (reads through its
 * last byte, pc__mark_read with PC_READ_CONSUMED):
 *
 *   a random reader, or a read that stops inside it (1 KiB reads): it is
 *       not consumed yet; a random reader that touches it clears the flag
 *       and marks it accessed: the page is wanted, it stays;
 *   another stream of the file has not read it yet (readtwice; the
 *       streams' positions are in m->stream_pos[], see readahead.c): it
 *       is marked PG_referenced and left to the last stream to consume it
 *       - unless memory is tight and the nodes near their low marks
 *       (room_to_keep): then the pages just ahead of the stream behind are
 *       the ones to keep and this one goes (it will be read again: most-
 *       recently-used is the right victim when one stream follows another,
 *       and readers stay out of direct reclaim however far they drift);
 *   touched by someone else since it was read (PG_referenced, no other
 *       stream): it stays, as a normal page;
 *   else the page is use-once: the flag is cleared and, when memory is
 *       tight (free frames of the page's node, or of all, under the
 *       node's low mark plus two readahead windows: use_once_floor; or
 *       cache.stickiness=always: drop_now) it goes in the file's
 *       drop batch; with
 *       memory to spare it stays cached as an ordinary page read once
 *       (marked accessed: two passes over a file make it hot, as the
 *       cached-read and hotcold warm-ups expect) - except a page the last
 *       of several streams consumed (readtwice), which goes at once: the
 *       streams' pages then never fill the cache, and all of it is room
 *       for one stream to drift behind another.
 *
 * The drop batch (f->drop[], f->drop_index[], under f->ra_lock) holds no
 * reference, so one page may be in it twice (its frame freed and taken
 * again for the same index; the flush takes it once): when a page finds it
 * full (PC_DROP_BATCH) or the file is
 * closed, each page still at its place, clean, unlocked and not touched
 * since (PG_referenced, PG_active) is removed from its mapping - one
 * tree-lock hold and one lru-lock hold for the batch - and its frame is
 * freed (dropbehind counts them).  A stream thus recycles its own frames,
 * never pushes a working set out, and reclaim hardly runs.
 *
 * Stale pages go first.  Dropping the stream's pages is right when what
 * else is cached is wanted; it is wrong when the inactive list ends in
 * pages nobody wanted - clean, idle, never referenced since they came
 * in, never active (PG_workingset): a file written and fsynced and never
 * read, pages read ahead and never used (stale_tail).  The kernel's
 * inactive list evicts those before a stream's pages; drop-behind alone
 * kept them for ever (tiobench: the warm-up's file stayed through
 * seq-read, and rand-read found 16-27% of the file cached against the
 * kernel's 51%).  So under cache.stickiness=auto (not with NOREUSE
 * advice, not with =always, which drops at once), when memory is tight
 * (drop_now; not the readtwice pages that go at once with memory to
 * spare), a full batch is traded first: as many stale pages as the batch
 * has - those at the tail of the first page's node, up to the first that
 * is not stale or is in the batch - are reclaimed by the reader
 * (pc__reclaim_tail, vmscan.c: pgsteal_direct, shadow entries left, no
 * allocstall), and as many pages of the batch stay, marked accessed (read
 * once, as pages read with memory to spare are).  One for one, so free
 * frames stay where drop-behind holds them and kswapd is not woken.  Once
 * the tail is the stream's own pages (accessed) or anyone's wanted ones,
 * batches are dropped as before, and the tail is looked at again only
 * every STALE_LOOK_EVERY batches (f->drop_skip, under f->ra_lock).  The
 * stream keeps what it read while stale pages went: the first part of a
 * stream longer than the cache, where the kernel keeps the last - the
 * same share of the file for a random reader after it.  The hot set
 * (referenced, active or workingset) is never traded (hotcold).
 *
 * Locks: f->ra_lock (no other held when it is taken; no page lock holder
 * takes it) → page locks (trylock; at close, sleeping) → tree lock → lru
 * lock; the trade's reclaim runs under f->ra_lock alone, before the
 * batch's pages are locked (as an allocation under ra_lock may reclaim).
 * The hit path of a read writes no shared line unless a flag must change.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "tctx.h"
#include "vmscan.h"
#include "node.h"
#include "bdi.h"
#include "pagewait.h"
#include "readahead.h"
#include "tracepoint.h"

#define STREAM_BW_MIN (64ull << 20)	/* bytes/s: "a fast device" */
#define READ_BW_MIN_BYTES (64u << 10)	/* requests that sample read_bw */

static int advice(struct pc_file *f)
{
	return atomic_load_explicit(&f->advice, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* The device's speed.                                                 */

void pc__ra_account_read(struct pc_mapping *m, uint64_t bytes, uint64_t ns)
{
	struct pc_bdi *b = m->bdi;
	uint64_t bw, old;

	if (!b || !ns || bytes < READ_BW_MIN_BYTES)
		return;
	bw = bytes * 1000000000ull / ns;
	old = atomic_load_explicit(&b->read_bw, memory_order_relaxed);
	atomic_store_explicit(&b->read_bw, old ? pc_bw_decay(old, bw) : bw,
			      memory_order_relaxed);
}

/* Is @m's device fast enough that streams should not be cached? */
static bool device_fast(struct pc_mapping *m, bool read)
{
	uint64_t rbw = 0, wbw = 0, bw;

	if (m->bdi) {
		rbw = atomic_load_explicit(&m->bdi->read_bw, memory_order_relaxed);
		wbw = atomic_load_explicit(&m->bdi->write_bw, memory_order_relaxed);
	}
	bw = read ? (rbw ? rbw : wbw) : (wbw ? wbw : rbw);
	return bw == 0 || bw >= STREAM_BW_MIN;
}

bool pc__stream_use_once(struct pc_mapping *m, bool read)
{
	enum pc_stickiness s = m->cache->cfg.stickiness;

	return s == PC_STICKY_ALWAYS || (s == PC_STICKY_AUTO && device_fast(m, read));
}

bool pc__stream_dropbehind(struct pc_mapping *m)
{
	return pc__stream_use_once(m, false);
}

/* ------------------------------------------------------------------ */
/* Streams, consumption.                                               */

/*
 * Other streams of @f's file.  *behind: the first page the furthest
 * behind of those that have not read page @index yet has not read either
 * (UINT64_MAX: none is behind).
 */
static bool other_streams(struct pc_file *f, uint64_t index, uint64_t *behind)
{
	int self = atomic_load_explicit(&f->ra_stream, memory_order_relaxed);
	bool any = false;

	*behind = UINT64_MAX;
	for (int k = 0; k < PC_RA_STREAMS; k++) {
		uint64_t pos;

		if (k == self - 1)
			continue;
		pos = atomic_load_explicit(&f->mapping->stream_pos[k],
					   memory_order_relaxed);
		if (!pos)
			continue;
		any = true;
		if (pos <= index)
			*behind = pc_min(*behind, pos - 1);
	}
	return any;
}

/* ------------------------------------------------------------------ */
/* Dropping pages.                                                     */

bool pc__drop_page(struct pc_cache *c, struct pc_page *p, int expected,
		   bool force, bool wait)
{
	struct pc_mapping *m;
	bool dropped = false;

	if (wait)
		pc__lock_page(&c->wait, p);
	else if (!pc__trylock_page(p))
		return false;
	m = page_mapping(p);
	if (m && !page_test(p, PG_dirty) && !page_test(p, PG_writeback) &&
	    (force || (!page_test(p, PG_referenced) &&
		       !page_test(p, PG_active)))) {
		pc__lock_counted(&m->tree_lock);
		if (page_ref_freeze(p, expected)) {
			if (page_test(p, PG_dirty)) {
				page_ref_unfreeze(p, expected);
			} else {
				pc_trace(c, PC_TR_EVICT, p, PC_TRACE_EV_DROPBEHIND);
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

/*
 * Drop @nr clean pages of @m, each locked by the caller, who also holds one
 * reference besides the mapping's: one tree-lock hold for all, one
 * lru-lock and one free-lock hold per node run.  A page someone else holds, or that was
 * dirtied, stays.  Every page is unlocked and the caller's reference
 * consumed.  Returns how many were dropped.
 */
unsigned pc__drop_pages_locked(struct pc_cache *c, struct pc_mapping *m,
			       struct pc_page **pages, unsigned nr)
{
	bool gone[PC_MAX_IO_PAGES];
	struct pc_page *freed[PC_MAX_IO_PAGES];
	struct pc_node *locked = NULL;
	unsigned dropped = 0, total = 0;

	PC_ASSERT(nr <= PC_MAX_IO_PAGES);
	pc__lock_counted(&m->tree_lock);
	for (unsigned i = 0; i < nr; i++) {
		struct pc_page *p = pages[i];

		PC_ASSERT(page_test(p, PG_locked));
		gone[i] = false;
		/* Ours and the mapping's: nobody else holds it. */
		if (!page_ref_freeze(p, 2))
			continue;
		if (page_test(p, PG_dirty)) {
			page_ref_unfreeze(p, 2);
			continue;
		}
		pc_trace(c, PC_TR_EVICT, p, PC_TRACE_EV_DROPBEHIND);
		pc__delete_from_page_cache_locked(m, p, NULL);
		gone[i] = true;
	}
	pc__unlock(&m->tree_lock);
	for (unsigned i = 0; i < nr; i++) {
		struct pc_page *p = pages[i];
		struct pc_node *n = page_node(c, p);

		pc__unlock_page(&c->wait, p);
		if (!gone[i] || !page_test(p, PG_lru))
			continue;
		if (n != locked) {
			if (locked)
				pc__unlock(&locked->lru_lock);
			pc__lock_counted(&n->lru_lock);
			locked = n;
		}
		if (page_test_clear(p, PG_lru))
			pc__lru_del_locked(n, p);
	}
	if (locked)
		pc__unlock(&locked->lru_lock);
	locked = NULL;
	for (unsigned i = 0; i < nr; i++) {
		struct pc_node *n = page_node(c, pages[i]);

		if (!gone[i]) {
			pc__put_page(c, pages[i]);
			continue;
		}
		if (n != locked && dropped) {	/* counted per node */
			pc__add(c, locked->id, dropbehind, dropped);
			dropped = 0;
		}
		locked = n;
		dropped++;
		freed[total++] = pages[i];	/* count frozen at 0 */
	}
	if (dropped)
		pc__add(c, locked->id, dropbehind, dropped);
	pc__free_batch(c, freed, total);	/* one free-lock hold a node */
	return total;
}

static bool drop_now(struct pc_file *f, struct pc_page *p);

/*
 * A look at the tail finds no stale page: the next is STALE_LOOK_EVERY
 * batches (a MiB of stream) later, so a stream that drops behind takes
 * the lru lock for it once in eight batches, not once a batch (readonce's
 * streams share that lock with their own drops).
 */
#define STALE_LOOK_EVERY 8

/* Is @q one of the pages in f's drop batch? */
static bool in_batch(struct pc_file *f, struct pc_page *q)
{
	for (unsigned i = 0; i < f->nr_drop; i++)
		if (f->drop[i] == q)
			return true;
	return false;
}

/*
 * How many pages at the tail of @n's inactive list (at most f's batch)
 * nobody wanted: clean, idle (not locked, not under writeback), not
 * referenced since they came in (PG_referenced) and never part of a
 * working set (PG_active, and PG_workingset, which a page the active list
 * let go keeps), and not f's own batch.  Those are pages written and
 * never read (a file written and fsynced, a write stream's), read ahead
 * and never used: what reclaim would take first and what no one misses.
 * A page a stream keeps is marked accessed, so a stream's own pages are
 * never stale to it or to the next stream.  Counts from the tail up to
 * the first page that is not stale.
 */
static unsigned stale_tail(struct pc_file *f, struct pc_node *n)
{
	const uint32_t wanted = 1u << PG_referenced | 1u << PG_active |
				1u << PG_workingset | 1u << PG_dirty |
				1u << PG_writeback | 1u << PG_locked |
				1u << PG_unevictable;
	struct pc_cache *c = f->cache;
	unsigned k = 0;
	uint32_t pfn;

	pc__lock_counted(&n->lru_lock);
	for (pfn = n->lru[PC_LRU_INACTIVE].tail;
	     pfn != PC_NO_PFN && k < f->nr_drop; k++) {
		struct pc_page *q = pfn_page(c, pfn);

		if ((atomic_load_explicit(&q->flags, memory_order_relaxed) &
		     wanted) || in_batch(f, q))
			break;
		pfn = q->lru_prev;
	}
	pc__unlock(&n->lru_lock);
	return k;
}

/*
 * Drop the pages of f's batch that are still at their place, clean and
 * untouched: one tree-lock hold for all, one lru-lock hold per node run.
 * Under cache.stickiness=auto (not NOREUSE), when memory is tight
 * (drop_now), the batch is traded first: the stale pages at the inactive
 * tail of its node are reclaimed (pc__reclaim_tail, at most one per page
 * of the batch), and as many pages of the batch stay, marked accessed,
 * instead of being dropped.
 * @wait (at close): sleep for page locks - a page just read may still be
 * locked by the completion that made it uptodate.  f->ra_lock held (no
 * page lock holder takes it).
 */
/*
 * Is @p among the @nc candidates already locked?  A page can be in the
 * batch twice: its frame freed while its entry waited (truncated, punched
 * out, reclaimed) and taken again for the same index of the same file,
 * read and consumed again - its second entry then names the same page at
 * the same place, and a sleeping lock of it would wait on ourselves.
 */
static bool in_cand(struct pc_page *const *cand, unsigned nc,
		     const struct pc_page *p)
{
	for (unsigned i = 0; i < nc; i++)
		if (cand[i] == p)
			return true;
	return false;
}

static void dropbehind_flush_locked(struct pc_file *f, bool wait)
{
	struct pc_cache *c = f->cache;
	struct pc_mapping *m = f->mapping;
	struct pc_page *cand[PC_DROP_BATCH];
	unsigned nc = 0, keep = 0;

	PC_ASSERT_HELD(&f->ra_lock);
	if (f->nr_drop && c->cfg.stickiness == PC_STICKY_AUTO &&
	    advice(f) != POSIX_FADV_NOREUSE && drop_now(f, f->drop[0]) &&
	    (f->drop_skip == 0 || --f->drop_skip == 0)) {
		struct pc_node *n = page_node(c, f->drop[0]);
		unsigned stale = stale_tail(f, n);

		if (stale)
			keep = (unsigned)pc__reclaim_tail(c, n, stale);
		else	/* none: look again in STALE_LOOK_EVERY batches */
			f->drop_skip = STALE_LOOK_EVERY;
	}
	for (unsigned i = 0; i < f->nr_drop; i++) {
		struct pc_page *p = f->drop[i];

		/* Unpinned: the frame may have been reclaimed, even reused. */
		if (!page_get_unless_zero(p))
			continue;
		if (page_mapping(p) != m || page_index(p) != f->drop_index[i] ||
		    in_cand(cand, nc, p)) {
			pc__put_page(c, p);
			continue;
		}
		if (wait) {
			pc__lock_page(&c->wait, p);
		} else if (!pc__trylock_page(p)) {
			pc__put_page(c, p);
			continue;
		}
		if (page_mapping(p) != m || page_index(p) != f->drop_index[i] ||
		    (atomic_load(&p->flags) & (1u << PG_dirty | 1u << PG_writeback |
					       1u << PG_referenced | 1u << PG_active))) {
			pc__unlock_page(&c->wait, p);
			pc__put_page(c, p);
			continue;
		}
		if (keep) {
			/* Traded for a stale page: read once, it stays. */
			keep--;
			page_set(p, PG_referenced);
			pc__unlock_page(&c->wait, p);
			pc__put_page(c, p);
			continue;
		}
		cand[nc++] = p;
	}
	f->nr_drop = 0;
	if (nc)
		pc__drop_pages_locked(c, m, cand, nc);
}

void pc__dropbehind_flush(struct pc_file *f)
{
	struct pc_tctx *t = pc__tctx(f->cache);

	/* The last pages read in may wait in our LRU batch, referenced. */
	if (t && f->nr_drop)
		pc__lru_drain(f->cache, t);
	pc__lock(&f->ra_lock);
	dropbehind_flush_locked(f, true);
	pc__ra_stream_end_locked(f);	/* at close: it reads no more */
	pc__unlock(&f->ra_lock);
}

/*
 * Put a consumed page in f's drop batch; a full batch is dropped first
 * (not after: the caller still holds this page).
 */
static void drop_later(struct pc_file *f, struct pc_page *p)
{
	pc__lock(&f->ra_lock);
	if (f->nr_drop == PC_DROP_BATCH)
		dropbehind_flush_locked(f, false);
	f->drop_index[f->nr_drop] = page_index(p);
	f->drop[f->nr_drop++] = p;
	pc__unlock(&f->ra_lock);
}

static uint64_t node_free(struct pc_node *n)
{
	return atomic_load_explicit(&n->nr_free, memory_order_relaxed);
}

/*
 * The free frames of @n under which use-once pages go as they are
 * consumed: its low mark in force (boost included), and above it room for
 * two readahead windows of @ra_max pages (one being read, one read ahead)
 * or the band between min and high, whichever is more - never more than
 * an eighth of the node.  A stream thus recycles its own frames before it
 * would wake kswapd, everything else it found cached stays (hotcold), and
 * the cache holds all but that floor (tiobench's random reads hit what is
 * cached: every frame kept free is a hit lost; the first wave's floor of
 * an eighth cost 6 points of hit ratio there).
 */
static uint64_t use_once_floor(struct pc_node *n, unsigned ra_max)
{
	uint64_t room = pc_max(n->wmark_high - n->wmark_min, 2ull * ra_max);

	return pc_min(node_wmark_low(n) + room, (uint64_t)n->nr_frames / 8);
}

bool pc__memory_tight(struct pc_cache *c)
{
	uint64_t free_pages = 0, floor = 0;

	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		free_pages += node_free(n);
		floor += use_once_floor(n, pc__ra_default_max(c));
	}
	return free_pages < floor;
}

/*
 * Drop a consumed use-once page now?  When memory is tight - in all (as
 * pc__memory_tight says) or on @p's node, where the stream's next pages
 * come from (with numa.node_reclaim a node fills up and reclaims while
 * the others are still free) - or always with cache.stickiness=always.
 */
static bool drop_now(struct pc_file *f, struct pc_page *p)
{
	struct pc_cache *c = f->cache;
	struct pc_node *n = page_node(c, p);

	return c->cfg.stickiness == PC_STICKY_ALWAYS ||
	       node_free(n) < use_once_floor(n, f->ra.max) ||
	       pc__memory_tight(c);
}

/*
 * May a stream keep a page it consumed for a stream behind it?  While its
 * node has a 64th of its frames free above its low mark - room for the
 * async windows, which stop at the low mark (ra_room).  Then pages kept
 * for a stream that drifted behind wake kswapd now and then (it reclaims
 * the oldest inactive pages first: those kept while memory was
 * plentiful), and readers do not end up in direct reclaim.
 */
static bool room_to_keep(struct pc_cache *c, struct pc_page *p)
{
	struct pc_node *n = page_node(c, p);

	return node_free(n) > node_wmark_low(n) + n->nr_frames / 64;
}

/* A use-once page (PG_dropbehind) read through @f; see the top comment. */
static void use_once(struct pc_file *f, struct pc_page *p, unsigned how)
{
	struct pc_cache *c = f->cache;
	uint64_t index = page_index(p), behind;
	bool others;

	if (!(how & PC_READ_SEQ)) {
		/* A random reader wants it: a normal page from now on. */
		page_clear(p, PG_dropbehind);
		if (how & PC_READ_FIRST)
			pc__mark_accessed(c, p);
		return;
	}
	if (!(how & PC_READ_CONSUMED))
		return;
	others = other_streams(f, index, &behind);
	if (behind != UINT64_MAX && (!drop_now(f, p) || room_to_keep(c, p))) {
		/* Another stream will read it: leave it to the last one. */
		if (!page_test(p, PG_referenced))
			page_set(p, PG_referenced);
		return;
	}
	if (!others && page_test(p, PG_referenced)) {
		/* Touched by someone else meanwhile: keep it. */
		page_clear(p, PG_dropbehind);
		return;
	}
	if (!page_test_clear(p, PG_dropbehind))
		return;		/* another reader consumed it */
	if (!others && !drop_now(f, p)) {
		/* Room to spare: an ordinary page read once. */
		pc__mark_accessed(c, p);
		return;
	}
	page_clear(p, PG_referenced);
	drop_later(f, p);
}

/*
 * A page read through a NOREUSE file: never marked accessed; consumed and
 * untouched by others, it is dropped when memory is tight, else it stays
 * on the inactive list, unreferenced.
 */
static void noreuse_read(struct pc_file *f, struct pc_page *p, unsigned how)
{
	if (!(how & PC_READ_CONSUMED) ||
	    (atomic_load_explicit(&p->flags, memory_order_relaxed) &
	     (1u << PG_referenced | 1u << PG_active)))
		return;
	if (page_test(p, PG_dropbehind))
		page_clear(p, PG_dropbehind);
	if (drop_now(f, p))
		drop_later(f, p);
}

bool pc__mark_read(struct pc_file *f, struct pc_page *p, unsigned how)
{
	uint32_t fl = atomic_load_explicit(&p->flags, memory_order_relaxed);
	bool ra_hit = false;

	/* The hit path writes nothing shared unless a flag must change. */
	if ((fl & (1u << PG_rapage)) && (how & PC_READ_FIRST))
		ra_hit = page_test_clear(p, PG_rapage);
	if (advice(f) == POSIX_FADV_NOREUSE)
		noreuse_read(f, p, how);
	else if (fl & (1u << PG_dropbehind))
		use_once(f, p, how);
	else if (how & PC_READ_FIRST)
		pc__mark_accessed(f->cache, p);
	return ra_hit;
}
