/*
 * writeback.c - dirty accounting, writing pages out, fsync, errors, and
 * the dirty throttle.
 *
 * A page is dirtied under its page lock (pc__set_page_dirty): PG_dirty,
 * then the DIRTY tag under the tree lock, then the counters (cache, node,
 * mapping), and the mapping goes on its bdi's dirty list if it was clean.
 *
 * Writing out (pc__writeback_range), one gang of up to 64 pages at a time:
 *   - find pages tagged DIRTY (background) or TOWRITE (data integrity:
 *     the DIRTY tags of the range are first copied to TOWRITE, so pages
 *     dirtied later do not make an fsync run forever - the kernel's
 *     tag_pages_for_writeback);
 *   - lock them (trylock in the background; sleeping for fsync), skip
 *     those under writeback (fsync waits for them first);
 *   - one tree-lock hold for the gang: DIRTY, TOWRITE off, WRITEBACK on;
 *   - PG_dirty off, PG_writeback on, counters moved, pages unlocked;
 *   - contiguous runs go out as vectored requests of up to 1 MiB.
 * Completion (wb_end_io) keeps failed pages dirty (PG_error, errseq set:
 * nothing written and lost is ever treated as clean), clears WRITEBACK,
 * and only then ends PG_writeback (which may let a truncation, and the
 * mapping's teardown, proceed): the mapping is not touched after that.
 * Pages marked PG_reclaim while under writeback go to the inactive tail;
 * use-once stream pages (PG_dropbehind) are dropped at once.
 *
 * Errors (errseq, as lib/errseq.c): m->wb_err = counter | SEEN | errno.
 * Each open file samples it at open and reports each new error once, at
 * fsync or close, whoever else saw it.
 *
 * The throttle (pc__balance_dirty_pages): dirty = nr_dirty + nr_writeback
 * against the limit and the background threshold (a share of the budget,
 * bytes, or with writeback.dirty_time_ms the bytes the device writes in
 * that time at its measured bandwidth).  Below the freerun point (halfway
 * between) writers run free; above it the flusher is woken and the writer
 * pauses for the time the device needs for its pages, scaled by the
 * kernel's position ratio 1 + ((setpoint - dirty) / (limit - setpoint))^3,
 * at most 200 ms a pause, repeated only while dirty stays over the limit.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "internal.h"

#define GANG 64
#define ERRSEQ_MAX_ERRNO 4095u
#define ERRSEQ_SEEN (1u << 12)
#define ERRSEQ_CTR_INC (1u << 13)
#define MAX_PAUSE_MS 200
#define RATELIMIT_PAGES 32

/* ------------------------------------------------------------------ */
/* errseq                                                              */

void pc__errseq_set(struct pc_mapping *m, int err)
{
	uint32_t old = atomic_load(&m->wb_err), new;

	if (err >= 0 || (unsigned)-err > ERRSEQ_MAX_ERRNO)
		err = -EIO;
	do {
		new = (old & ~(ERRSEQ_MAX_ERRNO | ERRSEQ_SEEN)) | (uint32_t)-err;
		if (old & ERRSEQ_SEEN)
			new += ERRSEQ_CTR_INC;
		if (new == old)
			return;
	} while (!atomic_compare_exchange_weak(&m->wb_err, &old, new));
}

uint32_t pc__errseq_sample(struct pc_mapping *m)
{
	uint32_t old = atomic_load(&m->wb_err);

	/* An error no one has seen yet is reported to new openers too. */
	return (old & ERRSEQ_SEEN) ? old : 0;
}

int pc__errseq_check_advance(struct pc_mapping *m, uint32_t *cursor)
{
	uint32_t old = atomic_load(&m->wb_err), new;

	if (old == *cursor)
		return 0;
	new = old | ERRSEQ_SEEN;
	if (new != old)
		atomic_compare_exchange_strong(&m->wb_err, &old, new);
	*cursor = new;
	return new & ERRSEQ_MAX_ERRNO ? -(int)(new & ERRSEQ_MAX_ERRNO) : 0;
}

/* ------------------------------------------------------------------ */
/* Dirty accounting                                                    */

static void account_dirtied(struct pc_mapping *m, struct pc_page *p)
{
	struct pc_cache *c = m->cache;
	struct pc_node *n = page_node(c, p);

	pc__inc(c, n->id, nr_dirty);
	pc__inc(c, n->id, nr_dirtied);
	atomic_fetch_add_explicit(&n->dirty_pages, 1, memory_order_relaxed);
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
	atomic_fetch_sub(&m->nr_dirty, 1);
}

void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p)
{
	PC_ASSERT(page_test(p, PG_locked));
	if (page_test_set(p, PG_dirty))
		return;
	pc__lock(&m->tree_lock);
	pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
	pc__unlock(&m->tree_lock);
	account_dirtied(m, p);
}

/* ------------------------------------------------------------------ */
/* Writing out                                                         */

struct wb_io {
	struct pc_io_req req;
	struct pc_mapping *m;
	unsigned nr;
	struct pc_page *pages[PC_MAX_IO_PAGES];
	struct iovec iov[PC_MAX_IO_PAGES];
};

void pc__end_page_writeback(struct pc_cache *c, struct pc_page *p)
{
	bool reclaim = page_test_clear(p, PG_reclaim);

	pc_trace(c, PC_TR_WB_END, p, 0);
	pc__end_page_writeback_bit(&c->wait, p);
	if (reclaim && !page_test(p, PG_dirty))
		pc__lru_rotate_reclaimable(c, p);
}

static void wb_finish(struct wb_io *io, ssize_t res)
{
	struct pc_mapping *m = io->m;
	struct pc_cache *c = m->cache;
	struct pc_bdi *b = m->bdi;
	size_t want = (size_t)io->nr << PC_PAGE_SHIFT;
	int err = res < 0 ? (int)res : (size_t)res < want ? -EIO : 0;
	int node = page_node(c, io->pages[0])->id;

	if (err) {
		pc__errseq_set(m, err);
		pc__inc(c, node, writeback_errors);
	}
	pc__lock(&m->tree_lock);
	for (unsigned i = 0; i < io->nr; i++) {
		struct pc_page *p = io->pages[i];

		pc__tree_tag_clear(&m->tree, page_index(p), PC_TAG_WRITEBACK);
		if (err) {
			page_set(p, PG_error);
			if (!page_test_set(p, PG_dirty)) {
				pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
				pc__unlock(&m->tree_lock);
				account_dirtied(m, p);
				pc__lock(&m->tree_lock);
			}
		}
	}
	pc__unlock(&m->tree_lock);
	atomic_fetch_sub(&m->nr_writeback, io->nr);
	for (unsigned i = 0; i < io->nr; i++)
		pc__add(c, page_node(c, io->pages[i])->id, nr_writeback, -1);
	if (!err) {
		pc__add(c, node, pgpgout, (int64_t)(want >> 10));
		pc__add(c, node, nr_written, io->nr);
		pc__bdi_account_written(b, want);
	}
	atomic_fetch_sub(&b->in_flight, 1);
	/* From here on the mapping may go away: only pages and the bdi. */
	for (unsigned i = 0; i < io->nr; i++) {
		struct pc_page *p = io->pages[i];
		bool drop = !err && page_test(p, PG_dropbehind) &&
			    pc__memory_tight(c);

		pc__end_page_writeback(c, p);
		if (!drop || !pc__try_drop_page(c, p, 2, false))
			pc__put_page(c, p);
	}
}

static void wb_end_io(struct pc_io_req *req)
{
	struct wb_io *io = (struct wb_io *)req;

	wb_finish(io, req->res);
	free(io);
}

static void submit_wb(struct pc_mapping *m, struct pc_page **pages, unsigned nr)
{
	struct pc_cache *c = m->cache;
	struct pc_io_req *reqs[GANG];
	unsigned nreq = 0;

	for (unsigned i = 0; i < nr;) {
		struct wb_io *io = malloc(sizeof(*io));
		unsigned n = 1;

		while (i + n < nr && n < PC_MAX_IO_PAGES &&
		       page_index(pages[i + n]) == page_index(pages[i]) + n)
			n++;
		if (!io) {	/* no memory: they fail and stay dirty */
			struct wb_io tmp = { .m = m, .nr = n };

			memcpy(tmp.pages, pages + i, n * sizeof(*pages));
			atomic_fetch_add(&m->bdi->in_flight, 1);
			wb_finish(&tmp, -ENOMEM);
			i += n;
			continue;
		}
		io->m = m;
		io->nr = n;
		for (unsigned k = 0; k < n; k++) {
			io->pages[k] = pages[i + k];
			io->iov[k].iov_base = page_data(c, pages[i + k]);
			io->iov[k].iov_len = PC_PAGE_SIZE;
		}
		io->req = (struct pc_io_req){
			.fd = m->fd,
			.op = PC_IO_WRITE,
			.iov = io->iov,
			.iovcnt = (int)n,
			.off = (off_t)(page_index(pages[i]) << PC_PAGE_SHIFT),
			.dontneed = !m->direct,
			.end_io = wb_end_io,
		};
		atomic_fetch_add(&m->bdi->in_flight, 1);
		reqs[nreq++] = &io->req;
		i += n;
	}
	if (nreq)
		c->io_ops->submit(c->io, reqs, nreq);
}

int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget)
{
	struct pc_cache *c = m->cache;
	int tag = sync ? PC_TAG_TOWRITE : PC_TAG_DIRTY;
	void *items[GANG];
	uint64_t idx[GANG];
	uint64_t index = start;
	int written = 0;

	if (sync) {
		pc__lock(&m->tree_lock);
		pc__tree_tag_range(&m->tree, start, end, PC_TAG_DIRTY,
				   PC_TAG_TOWRITE, UINT32_MAX);
		pc__unlock(&m->tree_lock);
	}
	while (index <= end) {
		struct pc_page *pages[GANG];
		unsigned n, np = 0;

		urcu_bp_read_lock();
		n = pc__tree_gang_tag(&m->tree, index, end, tag, items, idx, GANG);
		urcu_bp_read_unlock();
		if (!n)
			break;
		index = idx[n - 1] + 1;
		for (unsigned k = 0; k < n; k++) {
			struct pc_page *p = items[k];

			if (!page_get_unless_zero(p))
				continue;
			if (page_mapping(p) != m || page_index(p) != idx[k]) {
				pc__put_page(c, p);
				continue;
			}
			if (sync) {
				pc__lock_page(&c->wait, p);
			} else if (!pc__trylock_page(p)) {
				pc__put_page(c, p);
				continue;
			}
			if (page_mapping(p) != m)
				goto skip;
			if (page_test(p, PG_writeback)) {
				if (!sync)
					goto skip;
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
			}
			if (!page_test(p, PG_dirty)) {
				if (sync) {
					pc__lock(&m->tree_lock);
					pc__tree_tag_clear(&m->tree, idx[k], PC_TAG_TOWRITE);
					pc__unlock(&m->tree_lock);
				}
				goto skip;
			}
			pages[np++] = p;
			continue;
skip:
			pc__unlock_page(&c->wait, p);
			pc__put_page(c, p);
		}
		if (!np)
			continue;
		pc__lock(&m->tree_lock);
		for (unsigned k = 0; k < np; k++) {
			uint64_t i = page_index(pages[k]);

			pc__tree_tag_clear(&m->tree, i, PC_TAG_DIRTY);
			pc__tree_tag_clear(&m->tree, i, PC_TAG_TOWRITE);
			pc__tree_tag_set(&m->tree, i, PC_TAG_WRITEBACK);
		}
		pc__unlock(&m->tree_lock);
		for (unsigned k = 0; k < np; k++) {
			struct pc_page *p = pages[k];
			int node = page_node(c, p)->id;

			page_set(p, PG_writeback);
			pc__account_page_cleaned(m, p);
			atomic_fetch_add(&m->nr_writeback, 1);
			pc__inc(c, node, nr_writeback);
			pc_trace(c, PC_TR_WB_START, p, 0);
			pc__unlock_page(&c->wait, p);
		}
		submit_wb(m, pages, np);	/* our references go to the I/O */
		written += (int)np;
		if (budget && (*budget -= np) <= 0)
			break;
	}
	return written;
}

int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end)
{
	struct pc_cache *c = m->cache;
	void *items[GANG];
	uint64_t idx[GANG];
	uint64_t index = start;

	while (index <= end) {
		unsigned n;

		urcu_bp_read_lock();
		n = pc__tree_gang_tag(&m->tree, index, end, PC_TAG_WRITEBACK,
				      items, idx, GANG);
		urcu_bp_read_unlock();
		if (!n)
			break;
		for (unsigned k = 0; k < n; k++) {
			struct pc_page *p = items[k];

			if (!page_get_unless_zero(p))
				continue;
			if (page_mapping(p) == m && page_index(p) == idx[k])
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
			pc__put_page(c, p);
		}
		/* Waited pages lose the tag: look again from the first. */
		urcu_bp_read_lock();
		n = pc__tree_gang_tag(&m->tree, index, end, PC_TAG_WRITEBACK,
				      items, idx, 1);
		urcu_bp_read_unlock();
		if (n && idx[0] == index)
			continue;
		index = n ? idx[0] : end + 1;
		if (!n)
			break;
	}
	return 0;
}

int pc__fsync_range(struct pc_file *f, uint64_t start, uint64_t end,
		    bool datasync)
{
	struct pc_mapping *m = f->mapping;
	int r;

	pc__writeback_range(m, start, end, true, NULL);
	pc__wait_writeback_range(m, start, end);
	r = pc__fix_disk_size(m);
	if (r)
		pc__errseq_set(m, r);
	if ((datasync ? fdatasync(m->fd) : fsync(m->fd)) != 0)
		pc__errseq_set(m, -errno);
	return pc__errseq_check_advance(m, &f->err_cursor);
}

/* ------------------------------------------------------------------ */
/* The throttle                                                        */

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
		uint64_t bw = 0;

		pthread_mutex_lock(&c->bdi_lock);
		for (struct pc_bdi *b = c->bdis; b; b = b->next)
			bw = pc_max(bw, atomic_load(&b->write_bw));
		pthread_mutex_unlock(&c->bdi_lock);
		if (bw) {
			limit = bw / 1000 * cfg->dirty_time_ms >> PC_PAGE_SHIFT;
			limit = pc_min(limit, dirtyable / 2);
			bg = limit / 2;
		}
	}
	limit = pc_max(limit, 8);
	bg = pc_min(pc_max(bg, 4), limit - 1);
	atomic_store(&c->dirty_limit, limit);
	atomic_store(&c->dirty_bg_limit, bg);
}

static uint64_t global_dirty(struct pc_cache *c)
{
	return pc__vmstat_sum(c, PC_VM_nr_dirty) +
	       pc__vmstat_sum(c, PC_VM_nr_writeback);
}

static void pause_ms(struct pc_cache *c, int node, double ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	pc__inc(c, node, balance_dirty_pages_pauses);
	pc__add(c, node, balance_dirty_pages_pause_ms, (int64_t)(ms + 0.5));
	nanosleep(&ts, NULL);
}

void pc__balance_dirty_pages(struct pc_mapping *m, unsigned nr_dirtied)
{
	struct pc_cache *c = m->cache;
	struct pc_tctx *t = pc__tctx(c);
	unsigned pending = nr_dirtied;
	int node = t ? t->node : 0;
	double waited = 0;

	if (t) {
		t->dirty_ratelimit += nr_dirtied;
		if (t->dirty_ratelimit < RATELIMIT_PAGES)
			return;
		pending = t->dirty_ratelimit;
		t->dirty_ratelimit = 0;
	}
	while (waited < MAX_PAUSE_MS) {
		uint64_t limit = atomic_load(&c->dirty_limit);
		uint64_t bg = atomic_load(&c->dirty_bg_limit);
		uint64_t freerun = (limit + bg) / 2;
		uint64_t setpoint = (freerun + limit) / 2;
		uint64_t dirty = global_dirty(c);
		uint64_t bw = atomic_load(&m->bdi->write_bw) >> PC_PAGE_SHIFT;
		double x, pos, ms;

		if (dirty > bg)
			pc__bdi_wakeup(m->bdi, PC_WB_BACKGROUND);
		if (dirty <= freerun)
			return;
		if (dirty >= limit) {
			/* Over the limit: wait for the flusher, a step at a time. */
			pause_ms(c, node, 5);
			waited += 5;
			continue;
		}
		/* Between freerun and limit: pace to the device's rate. */
		x = ((double)setpoint - (double)dirty) /
		    (double)pc_max(limit - setpoint, 1);
		pos = 1.0 + x * x * x;
		pos = pos < 0.1 ? 0.1 : pos > 2.0 ? 2.0 : pos;
		ms = 1000.0 * pending / ((double)pc_max(bw, 256) * pos);
		if (ms >= 1.0)
			pause_ms(c, node, pc_min(ms, MAX_PAUSE_MS - waited));
		return;
	}
}
