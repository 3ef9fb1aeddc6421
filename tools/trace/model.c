/*
 * model.c - the LRU age model of seed 004, computed from a trace.
 *
 * Mel Gorman's model (seed 004) replays the LRU insertion and activation
 * events offline to find how long pages of each type stay on the LRU.
 * This one replays every event of a trace, in time order, on a table of
 * page lives indexed by frame:
 *
 *              insert            activate             evict
 *   (none) ─────────────▶ inactive ─────────▶ active ───────▶ (none)
 *     │  dirty/refault/      ▲  │   deactivate  │
 *     └─▶ pending ──insert───┘  └──◀────────────┘
 *                                 evict ──────────────────────▶ (none)
 *
 * A life is keyed by (pfn, mapping, index) from its insertion to its
 * eviction.  Events that come before the insertion (a write dirties a
 * page while it still sits in a per-thread LRU batch; a refault is seen
 * before the page is added) make a pending life that the insertion takes
 * over.  An event whose mapping field is 0 (emitted after the page left
 * its mapping) matches the live page of that frame by index alone.
 *
 * A span is the time from the page's arrival on a list (insertion or
 * move) to its leaving it; each span is counted once, under the page's
 * type when it ends:
 *   dirty written     inserted by a write, or dirtied at any time since
 *   refaulted         inserted on a refault (and not dirty)
 *   readahead unused  inserted by readahead, not used yet: no activation,
 *                     no event so far saw PG_referenced or PG_active, and
 *                     PG_rapage (cleared at first use) still set
 *   clean read        the rest (read pages, and readahead pages once used)
 * Rotations keep a page on its list.  Only reclaim and drop-behind
 * evictions end an "evicted" span; truncation and migration end the life
 * without a sample.  Pages still on the LRU at the end are counted as
 * resident and not sampled (their spans are not over).
 *
 * Statistics: mean, and the 50th and 95th percentiles by linear
 * interpolation between closest ranks (numpy's default).
 * Single-threaded; all memory is freed before returning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum { L_NONE, L_PENDING, L_INACTIVE, L_ACTIVE };

#define B_DIRTY 0x01
#define B_USED 0x02
#define B_REFAULTED 0x04
#define B_DIRTY_TS 0x08		/* dirty_ts valid */
#define B_WB_TS 0x10		/* wb_ts valid */
#define B_RAPAGE 0x20		/* inserted with PG_rapage: its clearing is a use */

#define FLAG(name) (1u << PC_TRACE_PG_##name)	/* a bit of e->flags */
#define USED_FLAGS (FLAG(referenced) | FLAG(active))

struct life {
	uint64_t index;
	uint64_t since;		/* arrival on the current list */
	uint64_t born;		/* insertion */
	uint64_t dirty_ts;	/* first dirtying not yet written back */
	uint64_t wb_ts;		/* writeback start */
	uint32_t mapping;
	uint8_t state;
	uint8_t reason;
	uint8_t bits;
};

struct vec {
	uint64_t *v;
	size_t n, cap;
};

struct model {
	struct pct_report *r;
	struct life *lives;
	size_t nr_lives;
	struct vec age[PCT_NR_PT][PCT_NR_SP];
	struct vec distance, dirty, wb;
	bool nomem;
};

static const char *const ptype_names[PCT_NR_PT] = {
	[PCT_PT_CLEAN] = "clean read", [PCT_PT_DIRTY] = "dirty written",
	[PCT_PT_RA_UNUSED] = "readahead unused", [PCT_PT_REFAULT] = "refaulted",
	[PCT_PT_ALL] = "all pages",
};

const char *pct_ptype_name(unsigned t)
{
	return t < PCT_NR_PT ? ptype_names[t] : "?";
}

static void push(struct model *m, struct vec *v, uint64_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		uint64_t *n = realloc(v->v, cap * sizeof(*n));

		if (!n) {
			m->nomem = true;
			return;
		}
		v->v = n;
		v->cap = cap;
	}
	v->v[v->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
	double pos = p * (double)(n - 1);
	size_t lo = (size_t)pos;

	if (lo + 1 >= n)
		return (double)v[n - 1];
	return (double)v[lo] + (pos - (double)lo) * (double)(v[lo + 1] - v[lo]);
}

/* Summarise @v, dividing each value by @unit (1e6: ns to ms). */
static struct pct_stat summarise(struct vec *v, double unit)
{
	struct pct_stat s = { .count = v->n };
	double sum = 0;

	if (!v->n)
		return s;
	qsort(v->v, v->n, sizeof(*v->v), cmp_u64);
	for (size_t i = 0; i < v->n; i++)
		sum += (double)v->v[i];
	s.avg = sum / (double)v->n / unit;
	s.p50 = pct(v->v, v->n, 0.50) / unit;
	s.p95 = pct(v->v, v->n, 0.95) / unit;
	return s;
}

static int ptype(const struct life *l)
{
	if (l->bits & B_DIRTY)
		return PCT_PT_DIRTY;
	if (l->bits & B_REFAULTED)
		return PCT_PT_REFAULT;
	if (l->reason == PC_TRACE_INS_READAHEAD && !(l->bits & B_USED))
		return PCT_PT_RA_UNUSED;
	return PCT_PT_CLEAN;
}

static void sample(struct model *m, const struct life *l, int span,
		   uint64_t ns)
{
	push(m, &m->age[ptype(l)][span], ns);
	push(m, &m->age[PCT_PT_ALL][span], ns);
}

static bool on_lru(const struct life *l)
{
	return l->state == L_INACTIVE || l->state == L_ACTIVE;
}

/* A pending life for @e's page, replacing whatever the frame held. */
static void pend(struct model *m, struct life *l, const struct pc_trace_rec *e)
{
	if (on_lru(l))
		m->r->life_without_evict++;	/* its eviction was not seen */
	memset(l, 0, sizeof(*l));
	l->state = L_PENDING;
	l->mapping = e->mapping;
	l->index = e->index;
}

static void insert(struct model *m, struct life *l, bool same,
		   const struct pc_trace_rec *e)
{
	struct pct_report *r = m->r;
	unsigned reason = e->arg < PC_TRACE_NR_INS ? e->arg : PC_TRACE_NR_INS;
	uint8_t keep = 0;

	r->insert_reason[reason]++;
	if (on_lru(l))
		r->life_without_evict++;
	else if (same && l->state == L_PENDING)
		keep = l->bits;
	if (!same || on_lru(l)) {
		memset(l, 0, sizeof(*l));
		l->mapping = e->mapping;
		l->index = e->index;
	}
	l->bits = keep;
	l->reason = (uint8_t)reason;
	l->state = (e->flags & FLAG(active)) ? L_ACTIVE : L_INACTIVE;
	if (l->state == L_ACTIVE)
		r->insert_active++;
	if (reason == PC_TRACE_INS_WRITE || (e->flags & FLAG(dirty)))
		l->bits |= B_DIRTY;
	if (reason == PC_TRACE_INS_REFAULT)
		l->bits |= B_REFAULTED;
	if (e->flags & USED_FLAGS)
		l->bits |= B_USED;
	if (e->flags & FLAG(rapage))
		l->bits |= B_RAPAGE;
	if (reason == PC_TRACE_INS_READAHEAD)
		r->ra_inserted++;
	l->since = l->born = e->ts;
}

static void evict(struct model *m, struct life *l, bool same,
		  const struct pc_trace_rec *e)
{
	struct pct_report *r = m->r;
	unsigned kind = e->arg < PC_TRACE_NR_EV ? e->arg : PC_TRACE_NR_EV;

	r->evict_kind[kind]++;
	if (!same || !on_lru(l)) {
		r->evict_without_insert++;
		l->state = L_NONE;
		return;
	}
	if (e->flags & USED_FLAGS)
		l->bits |= B_USED;
	/* The library clears PG_rapage when a reader first uses the page
	 * (a use-once stream page is consumed without PG_referenced). */
	if ((l->bits & B_RAPAGE) && !(e->flags & FLAG(rapage)))
		l->bits |= B_USED;
	if (kind == PC_TRACE_EV_RECLAIM || kind == PC_TRACE_EV_DROPBEHIND) {
		sample(m, l, l->state == L_INACTIVE ? PCT_SP_INACTIVE_EVICTED
						    : PCT_SP_ACTIVE_EVICTED,
		       e->ts - l->since);
		sample(m, l, PCT_SP_LIFE, e->ts - l->born);
		if (l->reason == PC_TRACE_INS_READAHEAD) {
			r->ra_evicted++;
			if (!(l->bits & B_USED))
				r->ra_evicted_unused++;
		}
	}
	l->state = L_NONE;
}

static void event(struct model *m, const struct pc_trace_rec *e)
{
	struct pct_report *r = m->r;
	struct life *l = &m->lives[e->pfn];
	bool same = l->state != L_NONE && l->index == e->index &&
		    (l->mapping == e->mapping || e->mapping == 0);

	if (e->event >= PC_TRACE_NR_EVENTS) {
		r->unknown_events++;
		return;
	}
	r->events[e->event]++;
	switch (e->event) {
	case PC_TR_LRU_INSERT:
		insert(m, l, same, e);
		return;
	case PC_TR_EVICT:
		evict(m, l, same, e);
		return;
	case PC_TR_ACTIVATE:
	case PC_TR_DEACTIVATE:
	case PC_TR_ROTATE:
		if (!same || !on_lru(l)) {
			r->event_without_insert++;
			return;
		}
		if (e->flags & USED_FLAGS)
			l->bits |= B_USED;
		if (e->event == PC_TR_ACTIVATE && l->state == L_INACTIVE) {
			l->bits |= B_USED;
			sample(m, l, PCT_SP_INACTIVE_ACTIVATED, e->ts - l->since);
			l->state = L_ACTIVE;
			l->since = e->ts;
		} else if (e->event == PC_TR_DEACTIVATE &&
			   l->state == L_ACTIVE) {
			sample(m, l, PCT_SP_ACTIVE_DEACTIVATED, e->ts - l->since);
			l->state = L_INACTIVE;
			l->since = e->ts;
		}
		return;
	case PC_TR_REFAULT:
		push(m, &m->distance, e->arg);
		if (e->flags & FLAG(workingset))
			r->refault_workingset++;
		if (!same)
			pend(m, l, e);
		l->bits |= B_REFAULTED;
		return;
	case PC_TR_DIRTY:
		if (!same)
			pend(m, l, e);
		l->bits |= B_DIRTY;
		if (!(l->bits & B_DIRTY_TS)) {
			l->bits |= B_DIRTY_TS;
			l->dirty_ts = e->ts;
		}
		return;
	case PC_TR_WB_START:
		if (!same)
			pend(m, l, e);
		if (l->bits & B_DIRTY_TS)
			push(m, &m->dirty, e->ts - l->dirty_ts);
		l->bits = (uint8_t)((l->bits & ~B_DIRTY_TS) | B_WB_TS);
		l->wb_ts = e->ts;
		return;
	case PC_TR_WB_END:
		if (!same) {
			r->event_without_insert++;
			return;
		}
		if (l->bits & B_WB_TS)
			push(m, &m->wb, e->ts - l->wb_ts);
		l->bits &= (uint8_t)~B_WB_TS;
		return;
	}
}

static void fill_file(const struct pct_file *f, struct pct_report *r)
{
	uint64_t end;

	r->hdr = f->hdr;
	r->nr_events = f->nr_ev;
	r->nr_threads = f->nr_threads;
	r->has_footer = f->has_footer;
	r->truncated = f->truncated;
	r->missing = f->missing;
	r->bad_blocks = f->bad_blocks;
	r->unsorted = f->unsorted;
	for (size_t i = 0; i < f->nr_threads; i++) {
		r->lost += f->threads[i].lost;
		if (f->threads[i].lost)
			r->lost_threads++;
	}
	if (f->has_footer) {
		r->lost = f->footer.lost;	/* with the unattributed ones */
		end = f->footer.end_ns;
	} else {
		end = f->nr_ev ? f->ev[f->nr_ev - 1]->ts : f->hdr.start_ns;
	}
	r->duration_ms = end > f->hdr.start_ns ?
			 (double)(end - f->hdr.start_ns) / 1e6 : 0;
}

int pct_model(const struct pct_file *f, struct pct_report *r)
{
	struct model m = { .r = r };
	size_t max_pfn = f->hdr.nr_frames;

	memset(r, 0, sizeof(*r));
	fill_file(f, r);
	for (size_t i = 0; i < f->nr_ev; i++)
		if (f->ev[i]->pfn >= max_pfn)
			max_pfn = (size_t)f->ev[i]->pfn + 1;
	m.nr_lives = max_pfn;
	m.lives = calloc(max_pfn ? max_pfn : 1, sizeof(*m.lives));
	if (!m.lives)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr_ev && !m.nomem; i++)
		event(&m, f->ev[i]);
	for (size_t i = 0; i < m.nr_lives; i++)
		if (on_lru(&m.lives[i])) {
			r->resident[ptype(&m.lives[i])]++;
			r->resident[PCT_PT_ALL]++;
		}
	for (int t = 0; t < PCT_NR_PT; t++)
		for (int s = 0; s < PCT_NR_SP; s++) {
			r->age[t][s] = summarise(&m.age[t][s], 1e6);
			free(m.age[t][s].v);
		}
	r->refault_distance = summarise(&m.distance, 1);
	r->dirty_ms = summarise(&m.dirty, 1e6);
	r->writeback_ms = summarise(&m.wb, 1e6);
	r->ra_unused_share = r->ra_inserted ?
		(double)r->ra_evicted_unused / (double)r->ra_inserted : 0;
	free(m.distance.v);
	free(m.dirty.v);
	free(m.wb.v);
	free(m.lives);
	return m.nomem ? -ENOMEM : 0;
}

int pct_report_file(const char *path, struct pct_report *r,
			 char *err, size_t errlen)
{
	struct pct_file f;
	int ret = pct_file_read(path, &f, err, errlen);

	if (ret)
		return ret;
	ret = pct_model(&f, r);
	if (ret && err && errlen)
		snprintf(err, errlen, "%s: out of memory", path);
	pct_file_free(&f);
	return ret;
}
