/*
 * test_trace.c - trace events (src/trace.c) and the age model (tools/trace).
 *
 * The tests drive pc__trace_emit (through the pc_trace macro) on a minimal
 * struct pc_cache: zeroed, with the fields emit reads (pages, nodes,
 * frames_per_node, nr_frames, stat) filled in, and real struct pc_page
 * entries whose flags, mapping and index the test sets before each event.
 *
 *   known_sequence   a hand-made history under a fake clock: every count,
 *                    age, percentile and share is checked against the
 *                    values worked out by hand in the comments
 *   record_fields    what one record holds (pfn, node, folded inode ...)
 *   off_and_open     no trace: nothing happens; a bad path is refused
 *   random_burst     threads emit random page lives while the drain thread
 *                    runs; every event is in the file, every eviction
 *                    matches an insertion, nothing is lost (the producers
 *                    wait when their ring is half full: "drained in time")
 *   two_caches       threads trace two caches at once, one of them closed
 *                    and reopened in between (ring lookup by trace id)
 *   overflow         a 64-slot ring with the drainer paused: the losses are
 *                    counted in vmstat, the footer and the report, loudly
 *   truncated_cli    a file cut before its footer is reported incomplete;
 *                    bad files are refused; the subcommand's exit codes
 *
 * Standalone (only trace.c and tools/trace linked), build with
 * -DPC_TRACE_STANDALONE_TEST: the vmstat functions are stubbed below.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "internal.h"
#include "node.h"
#include "tracepoint.h"
#include "trace_fmt.h"
#include "../tools/trace/trace.h"

#ifdef PC_TRACE_STANDALONE_TEST
/* One shard per node: enough for the counts these tests check. */
int pc__vmstat_init(struct pc_cache *c)
{
	c->stat.nr_nodes = c->nr_nodes;
	c->stat.shards = calloc((size_t)c->nr_nodes, sizeof(*c->stat.shards));
	return c->stat.shards ? 0 : -ENOMEM;
}

void pc__vmstat_fini(struct pc_cache *c)
{
	free(c->stat.shards);
	c->stat.shards = NULL;
}

void pc__count(struct pc_cache *c, int node, enum pc_vmstat_item i, int64_t d)
{
	atomic_fetch_add(&c->stat.shards[node].v[i], (uint64_t)d);
}

uint64_t pc__vmstat_sum(struct pc_cache *c, enum pc_vmstat_item i)
{
	uint64_t s = 0;

	for (int n = 0; n < c->stat.nr_nodes; n++)
		s += atomic_load(&c->stat.shards[n].v[i]);
	return s;
}
#endif

#define F(bit) (1u << (bit))
#define LRU F(PG_lru)
#define MS 1000000ull

/* A cache with just what pc__trace_emit touches. */
struct fx {
	struct pc_cache c;
	struct pc_node nodes[4];
	struct pc_mapping maps[4];
};

static struct fx *fx_new(int nr_nodes, uint32_t fpn)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	assert_true(nr_nodes <= 4);
	x->c.nr_nodes = nr_nodes;
	x->c.frames_per_node = fpn;
	x->c.nr_frames = (uint64_t)nr_nodes * fpn;
	x->c.nodes = x->nodes;
	x->c.pages = calloc(x->c.nr_frames, sizeof(struct pc_page));
	assert_non_null(x->c.pages);
	for (int i = 0; i < nr_nodes; i++) {
		x->nodes[i].id = i;
		x->nodes[i].cache = &x->c;
		x->nodes[i].first_pfn = (uint32_t)i * fpn;
		x->nodes[i].nr_frames = fpn;
	}
	x->maps[0].ino = 100;
	x->maps[1].ino = 0x100000002ull;	/* folds to 3 */
	x->maps[2].ino = 7;
	x->maps[3].ino = 0xfffffff0ull;
	assert_int_equal(pc__vmstat_init(&x->c), 0);
	return x;
}

static void fx_free(struct fx *x)
{
	pc__vmstat_fini(&x->c);
	free(x->c.pages);
	free(x);
}

static void page_as(struct fx *x, uint32_t pfn, int map, uint64_t index)
{
	struct pc_page *p = &x->c.pages[pfn];

	atomic_store(&p->mapping, map < 0 ? NULL : &x->maps[map]);
	atomic_store(&p->index, index);
}

static void ev(struct fx *x, int event, uint32_t pfn, uint32_t flags,
	       uint32_t arg)
{
	struct pc_page *p = &x->c.pages[pfn];

	atomic_store(&p->flags, flags);
	pc_trace(&x->c, event, p, arg);
}

static _Atomic uint64_t fake_ns;
static uint64_t fake_clock(void)
{
	return atomic_load(&fake_ns);
}
static void at(uint64_t ms)
{
	atomic_store(&fake_ns, ms * MS);
}

static void near(double got, double want)
{
	if (got < want - 1e-6 || got > want + 1e-6) {
		print_error("got %.9f, want %.9f\n", got, want);
		fail();
	}
}

static void age_is(const struct pct_report *r, int t, int s,
		   uint64_t count, double avg, double p50, double p95)
{
	const struct pct_stat *st = &r->age[t][s];

	if (st->count != count)
		print_error("type %d span %d: count %llu, want %llu\n", t, s,
			    (unsigned long long)st->count,
			    (unsigned long long)count);
	assert_int_equal(st->count, count);
	near(st->avg, avg);
	near(st->p50, p50);
	near(st->p95, p95);
}

/* The history of known_sequence, times in ms (see the test). */
static void known_history(struct fx *x)
{
	page_as(x, 0, 0, 0);
	page_as(x, 1, 0, 1);
	page_as(x, 3, 0, 7);
	page_as(x, 4, 0, 20);
	for (uint32_t i = 0; i < 4; i++)
		page_as(x, 9 + i, 1, 10 + i);

	at(0);  ev(x, PC_TR_LRU_INSERT, 0, LRU, 0);
	at(1);  ev(x, PC_TR_DIRTY, 1, F(PG_dirty), 0);	/* still batched */
	at(2);  ev(x, PC_TR_LRU_INSERT, 1, LRU | F(PG_dirty), 1);
	at(3);  ev(x, PC_TR_REFAULT, 3, F(PG_workingset) | F(PG_active), 1000);
	at(4);  ev(x, PC_TR_LRU_INSERT, 3,
		   LRU | F(PG_active) | F(PG_workingset), 3);
	at(5);
	for (uint32_t i = 0; i < 4; i++)
		ev(x, PC_TR_LRU_INSERT, 9 + i, LRU, 2);
	ev(x, PC_TR_REFAULT, 4, 0, 500);
	at(6);  ev(x, PC_TR_LRU_INSERT, 4, LRU, 3);
	at(10); ev(x, PC_TR_ACTIVATE, 0, LRU | F(PG_active), 0);
	at(15); ev(x, PC_TR_ACTIVATE, 12, LRU | F(PG_active), 0);
	at(16); page_as(x, 4, -1, 20);	/* as vmscan does: after removal */
		ev(x, PC_TR_EVICT, 4, 0, 0);
	at(20); ev(x, PC_TR_WB_START, 1, LRU | F(PG_writeback), 0);
	at(22); ev(x, PC_TR_WB_END, 1, LRU, 0);
	at(25); ev(x, PC_TR_EVICT, 10, 0, 0);
	at(30); ev(x, PC_TR_ROTATE, 9, LRU | F(PG_referenced), 0);
	at(35); ev(x, PC_TR_EVICT, 11, 0, 0);
	at(40); ev(x, PC_TR_DEACTIVATE, 0, LRU, 0);
	at(45); ev(x, PC_TR_EVICT, 0, 0, 0);
	at(52); ev(x, PC_TR_EVICT, 1, 0, 0);
	at(60); ev(x, PC_TR_EVICT, 9, 0, 0);
	at(70); ev(x, PC_TR_EVICT, 3, F(PG_active), PC_TRACE_EV_REMOVE);
	at(100);
}

/* Record known_history into a trace at @path, on the fake clock. */
static void record_known(struct fx *x, const char *path)
{
	pc__trace_clock = fake_clock;
	at(0);
	assert_int_equal(pc__trace_open(&x->c, path), 0);
	/* No drain pass in the middle: the file is one block, whatever the
	 * scheduler does (the close drains it). */
	pc__trace_pause(&x->c, true);
	known_history(x);
	pc__trace_close(&x->c);
	pc__trace_clock = NULL;
}

static void test_known_sequence(void **state)
{
	const char *path = tu_path("known.trace");
	struct pct_report r;
	char err[256];
	struct fx *x = fx_new(2, 8);

	(void)state;
	record_known(x, path);
	assert_null(x->c.trace);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_events), 24);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_lost), 0);

	assert_int_equal(pct_report_file(path, &r, err, sizeof(err)), 0);
	pct_report_print(stdout, path, &r);
	assert_true(r.has_footer);
	assert_false(r.truncated);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.missing, 0);
	assert_int_equal(r.nr_threads, 1);
	near(r.duration_ms, 100);

	/* counts */
	assert_int_equal(r.nr_events, 24);
	assert_int_equal(r.events[PC_TR_LRU_INSERT], 8);
	assert_int_equal(r.events[PC_TR_ACTIVATE], 2);
	assert_int_equal(r.events[PC_TR_DEACTIVATE], 1);
	assert_int_equal(r.events[PC_TR_ROTATE], 1);
	assert_int_equal(r.events[PC_TR_EVICT], 7);
	assert_int_equal(r.events[PC_TR_REFAULT], 2);
	assert_int_equal(r.events[PC_TR_WB_START], 1);
	assert_int_equal(r.events[PC_TR_WB_END], 1);
	assert_int_equal(r.events[PC_TR_DIRTY], 1);
	assert_int_equal(r.insert_reason[PC_TRACE_INS_READ], 1);
	assert_int_equal(r.insert_reason[PC_TRACE_INS_WRITE], 1);
	assert_int_equal(r.insert_reason[PC_TRACE_INS_READAHEAD], 4);
	assert_int_equal(r.insert_reason[PC_TRACE_INS_REFAULT], 2);
	assert_int_equal(r.insert_active, 1);
	assert_int_equal(r.evict_kind[PC_TRACE_EV_RECLAIM], 6);
	assert_int_equal(r.evict_kind[PC_TRACE_EV_REMOVE], 1);

	/*
	 * Spans by hand:
	 *   pfn0 read:      inactive 0..10 activated, active 10..40
	 *                   deactivated, inactive 40..45 evicted; life 45
	 *   pfn1 written:   inactive 2..52 evicted; life 50
	 *   pfn3 refault:   active from 4, truncated at 70: no sample
	 *   pfn4 refault:   inactive 6..16 evicted; life 10
	 *   pfn9 readahead: used (PG_referenced at the rotation), inactive
	 *                   5..60 evicted as clean; life 55
	 *   pfn10, pfn11:   readahead unused, evicted at 25 and 35: 20, 30
	 *   pfn12:          activated at 15 (used: clean), 10; resident
	 */
	age_is(&r, PCT_PT_CLEAN, PCT_SP_INACTIVE_ACTIVATED, 2, 10, 10, 10);
	age_is(&r, PCT_PT_CLEAN, PCT_SP_INACTIVE_EVICTED, 2, 30, 30, 52.5);
	age_is(&r, PCT_PT_CLEAN, PCT_SP_ACTIVE_DEACTIVATED, 1, 30, 30, 30);
	age_is(&r, PCT_PT_CLEAN, PCT_SP_ACTIVE_EVICTED, 0, 0, 0, 0);
	age_is(&r, PCT_PT_CLEAN, PCT_SP_LIFE, 2, 50, 50, 54.5);
	age_is(&r, PCT_PT_DIRTY, PCT_SP_INACTIVE_EVICTED, 1, 50, 50, 50);
	age_is(&r, PCT_PT_DIRTY, PCT_SP_LIFE, 1, 50, 50, 50);
	age_is(&r, PCT_PT_RA_UNUSED, PCT_SP_INACTIVE_EVICTED, 2, 25, 25, 29.5);
	age_is(&r, PCT_PT_RA_UNUSED, PCT_SP_INACTIVE_ACTIVATED, 0, 0, 0, 0);
	age_is(&r, PCT_PT_REFAULT, PCT_SP_INACTIVE_EVICTED, 1, 10, 10, 10);
	age_is(&r, PCT_PT_REFAULT, PCT_SP_ACTIVE_EVICTED, 0, 0, 0, 0);
	/* all: 5 10 20 30 50 55 -> mean 170/6, median 25, p95 50+.75*5 */
	age_is(&r, PCT_PT_ALL, PCT_SP_INACTIVE_EVICTED, 6, 170.0 / 6, 25, 53.75);
	age_is(&r, PCT_PT_ALL, PCT_SP_INACTIVE_ACTIVATED, 2, 10, 10, 10);
	/* lives: 10 20 30 45 50 55 */
	age_is(&r, PCT_PT_ALL, PCT_SP_LIFE, 6, 35, 37.5, 53.75);
	assert_int_equal(r.resident[PCT_PT_CLEAN], 1);
	assert_int_equal(r.resident[PCT_PT_ALL], 1);

	assert_int_equal(r.ra_inserted, 4);
	assert_int_equal(r.ra_evicted, 3);
	assert_int_equal(r.ra_evicted_unused, 2);
	near(r.ra_unused_share, 0.5);

	assert_int_equal(r.refault_distance.count, 2);
	near(r.refault_distance.avg, 750);
	near(r.refault_distance.p95, 975);
	assert_int_equal(r.refault_workingset, 1);
	assert_int_equal(r.dirty_ms.count, 1);
	near(r.dirty_ms.avg, 19);
	assert_int_equal(r.writeback_ms.count, 1);
	near(r.writeback_ms.avg, 2);

	assert_int_equal(r.evict_without_insert, 0);
	assert_int_equal(r.event_without_insert, 0);
	assert_int_equal(r.life_without_evict, 0);
	fx_free(x);
}

static void test_record_fields(void **state)
{
	const char *path = tu_path("fields.trace");
	struct pct_file f;
	char err[256];
	struct fx *x = fx_new(2, 8);
	const struct pc_trace_rec *e;

	(void)state;
	record_known(x, path);

	assert_int_equal(pct_file_read(path, &f, err, sizeof(err)), 0);
	assert_int_equal(f.hdr.nr_nodes, 2);
	assert_int_equal(f.hdr.frames_per_node, 8);
	assert_int_equal(f.hdr.nr_frames, 16);
	assert_int_equal(f.hdr.page_size, 4096);
	assert_int_equal(f.hdr.pid, getpid());
	assert_non_null(strstr(f.hdr.note, "lru.deferred_activation=0"));
	assert_int_equal(f.nr_ev, 24);
	e = f.ev[0];
	assert_int_equal(e->event, PC_TR_LRU_INSERT);
	assert_int_equal(e->pfn, 0);
	assert_int_equal(e->node, 0);
	assert_int_equal(e->mapping, 100);
	assert_int_equal(e->index, 0);
	assert_int_equal(e->flags, LRU);
	e = f.ev[5];		/* the first readahead insertion, at 5 ms */
	assert_int_equal(e->ts, 5 * MS);
	assert_int_equal(e->pfn, 9);
	assert_int_equal(e->node, 1);
	assert_int_equal(e->mapping, 3);
	assert_int_equal(e->index, 10);
	assert_int_equal(e->arg, 2);
	e = f.ev[3];
	assert_int_equal(e->event, PC_TR_REFAULT);
	assert_int_equal(e->arg, 1000);
	assert_int_equal(e->flags, F(PG_workingset) | F(PG_active));
	for (size_t i = 1; i < f.nr_ev; i++)
		assert_true(f.ev[i - 1]->ts <= f.ev[i]->ts);
	assert_true(f.has_footer);
	assert_int_equal(f.footer.events, 24);
	assert_int_equal(f.footer.lost, 0);
	assert_int_equal(f.footer.end_ns, 100 * MS);
	pct_file_free(&f);
	fx_free(x);
}

static void test_off_and_open(void **state)
{
	struct fx *x = fx_new(1, 4);
	int on = atomic_load(&pc__trace_on);

	(void)state;
	ev(x, PC_TR_LRU_INSERT, 0, LRU, 0);	/* off: nothing */
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_events), 0);
	assert_int_equal(pc__trace_open(&x->c, tu_path("no/such/dir")),
			 -ENOENT);
	assert_int_equal(pc__trace_open(&x->c, ""), -EINVAL);
	assert_null(x->c.trace);
	assert_int_equal(atomic_load(&pc__trace_on), on);
	assert_int_equal(pc__trace_open(&x->c, tu_path("on.trace")), 0);
	assert_non_null(x->c.trace);
	assert_int_equal(atomic_load(&pc__trace_on), on + 1);
	pc__trace_close(&x->c);
	pc__trace_close(&x->c);			/* twice: harmless */
	assert_int_equal(atomic_load(&pc__trace_on), on);
	fx_free(x);
}

/* ------------------------------------------------------------------ */
/* Random multi-threaded bursts.                                       */

#define BURST_THREADS 8

struct burst {
	struct fx *x[2];	/* caches traced; x[1] may be NULL */
	int nr_x;
	unsigned id;
	uint64_t seed;
	unsigned events;	/* to emit in all */
	pthread_barrier_t *bar;	/* two_caches: middle of the run */
	uint64_t count[2][PC_TRACE_NR_EVENTS];
	uint64_t reclaimed[2];	/* evictions with kind reclaim/dropbehind */
};

/* Keep this thread's ring of @x at most half full: "drained in time". */
static void pace(struct fx *x)
{
	unsigned half = atomic_load(&pc__trace_ring_records) / 2;

	while (pc__trace_ring_fill(&x->c) > half) {
		struct timespec ts = { 0, 50000 };

		nanosleep(&ts, NULL);
	}
}

/* One random step on a random page this thread owns (pfn % N == id). */
static void step(struct burst *b, int k, uint64_t *rs)
{
	struct fx *x = b->x[k];
	uint32_t nown = (uint32_t)(x->c.nr_frames / BURST_THREADS);
	uint32_t pfn = (uint32_t)(tu_rand(rs) % nown) * BURST_THREADS + b->id;
	struct pc_page *p = &x->c.pages[pfn];
	uint32_t fl = atomic_load(&p->flags);
	unsigned r = (unsigned)(tu_rand(rs) % 16);
	int e;
	uint32_t arg = 0;

	if (!(fl & LRU)) {
		page_as(x, pfn, (int)(tu_rand(rs) % 4), tu_rand(rs) % 100000);
		if (r < 4) {
			ev(x, PC_TR_DIRTY, pfn, F(PG_dirty), 0);
			b->count[k][PC_TR_DIRTY]++;
		}
		fl = LRU | (r % 5 == 0 ? F(PG_active) : 0);
		e = PC_TR_LRU_INSERT;
		arg = (uint32_t)(tu_rand(rs) % 4);
	} else if (r < 4) {
		e = (fl & F(PG_active)) ? PC_TR_DEACTIVATE : PC_TR_ACTIVATE;
		fl ^= F(PG_active);
	} else if (r < 6) {
		e = PC_TR_ROTATE;
	} else if (r < 8) {
		e = PC_TR_DIRTY;
	} else if (r < 10) {
		ev(x, PC_TR_WB_START, pfn, fl | F(PG_writeback), 0);
		b->count[k][PC_TR_WB_START]++;
		e = PC_TR_WB_END;
	} else {
		e = PC_TR_EVICT;
		arg = (uint32_t)(tu_rand(rs) % 3);
		if (arg != PC_TRACE_EV_REMOVE)
			b->reclaimed[k]++;
		fl = 0;
	}
	ev(x, e, pfn, fl, arg);
	b->count[k][e]++;
}

static void *burst_main(void *arg)
{
	struct burst *b = arg;
	uint64_t rs = b->seed * 0x9E3779B97F4A7C15ULL + b->id + 1;

	for (unsigned i = 0; i < b->events; i++) {
		int k = (int)(i % (unsigned)b->nr_x);

		if (b->bar && i == b->events / 2) {
			pthread_barrier_wait(b->bar);	/* main reopens x */
			pthread_barrier_wait(b->bar);
		}
		step(b, k, &rs);
		if (i % 32 == 0)
			pace(b->x[k]);
	}
	return NULL;
}

/* The trace of cache @k must hold exactly what the threads emitted. */
static void check_complete(const char *path, struct burst *bs, int nb, int k,
			   int from, int to)
{
	struct pct_report r;
	char err[256];
	uint64_t total = 0, reclaimed = 0, want[PC_TRACE_NR_EVENTS] = { 0 };

	(void)from;
	(void)to;
	for (int i = 0; i < nb; i++) {
		for (int e = 0; e < PC_TRACE_NR_EVENTS; e++)
			want[e] += bs[i].count[k][e];
		reclaimed += bs[i].reclaimed[k];
	}
	for (int e = 0; e < PC_TRACE_NR_EVENTS; e++)
		total += want[e];
	assert_int_equal(pct_report_file(path, &r, err, sizeof(err)), 0);
	if (r.lost || r.missing || r.evict_without_insert ||
	    r.event_without_insert || r.life_without_evict)
		pct_report_print(stdout, path, &r);
	assert_true(r.has_footer);
	assert_false(r.truncated);
	assert_int_equal(r.bad_blocks, 0);
	assert_int_equal(r.unsorted, 0);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.missing, 0);
	assert_int_equal(r.nr_events, total);
	for (int e = 0; e < PC_TRACE_NR_EVENTS; e++)
		assert_int_equal(r.events[e], want[e]);
	assert_int_equal(r.evict_without_insert, 0);
	assert_int_equal(r.event_without_insert, 0);
	assert_int_equal(r.life_without_evict, 0);
	assert_int_equal(r.age[PCT_PT_ALL][PCT_SP_LIFE].count, reclaimed);
}

static void test_random_burst(void **state)
{
	uint64_t seed = tu_seed("trace_random_burst");
	const char *path = tu_path("burst.trace");
	struct burst b[BURST_THREADS];
	pthread_t th[BURST_THREADS];
	struct fx *x = fx_new(4, 256);

	(void)state;
	assert_int_equal(pc__trace_open(&x->c, path), 0);
	for (unsigned i = 0; i < BURST_THREADS; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].x[0] = x;
		b[i].nr_x = 1;
		b[i].id = i;
		b[i].seed = seed;
		/* some threads exit early: their rings are reaped live */
		b[i].events = 20000 + (i % 2) * 40000;
		assert_int_equal(pthread_create(&th[i], NULL, burst_main,
						&b[i]), 0);
	}
	for (unsigned i = 0; i < BURST_THREADS; i++)
		pthread_join(th[i], NULL);
	tu_check_threads();
	pc__trace_close(&x->c);
	check_complete(path, b, BURST_THREADS, 0, 0, 0);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_lost), 0);
	fx_free(x);
}

static void test_two_caches(void **state)
{
	uint64_t seed = tu_seed("trace_two_caches");
	struct burst b[4];
	pthread_t th[4];
	pthread_barrier_t bar;
	struct fx *x = fx_new(2, 64), *y = fx_new(1, 64);
	const char *pa = tu_path("a1.trace"), *pb = tu_path("b.trace");
	const char *pa2 = tu_path("a2.trace");

	(void)state;
	pthread_barrier_init(&bar, NULL, 5);
	assert_int_equal(pc__trace_open(&x->c, pa), 0);
	assert_int_equal(pc__trace_open(&y->c, pb), 0);
	for (unsigned i = 0; i < 4; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].x[0] = x;
		b[i].x[1] = y;
		b[i].nr_x = 2;
		b[i].id = i * 2;	/* pfn owner ids: 0, 2, 4, 6 */
		b[i].seed = seed;
		b[i].events = 8000;
		b[i].bar = &bar;
		assert_int_equal(pthread_create(&th[i], NULL, burst_main,
						&b[i]), 0);
	}
	/* Halfway: close x's trace and open a new one on the same cache. */
	pthread_barrier_wait(&bar);
	pc__trace_close(&x->c);
	check_complete(pa, b, 4, 0, 0, 0);
	for (unsigned i = 0; i < 4; i++) {
		memset(b[i].count[0], 0, sizeof(b[i].count[0]));
		b[i].reclaimed[0] = 0;
	}
	for (uint64_t i = 0; i < x->c.nr_frames; i++)	/* fresh lives */
		atomic_store(&x->c.pages[i].flags, 0);
	assert_int_equal(pc__trace_open(&x->c, pa2), 0);
	pthread_barrier_wait(&bar);
	for (unsigned i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	tu_check_threads();
	pc__trace_close(&x->c);
	pc__trace_close(&y->c);
	check_complete(pa2, b, 4, 0, 0, 0);
	check_complete(pb, b, 4, 1, 0, 0);
	pthread_barrier_destroy(&bar);
	fx_free(x);
	fx_free(y);
}

/* ------------------------------------------------------------------ */
/* Losses.                                                             */

static void test_overflow(void **state)
{
	const char *path = tu_path("lossy.trace");
	struct pct_report r;
	struct pct_file f;
	char err[256], *out = NULL;
	size_t outlen = 0;
	FILE *mem;
	struct fx *x = fx_new(1, 512);

	(void)state;
	atomic_store(&pc__trace_ring_records, 64);
	assert_int_equal(pc__trace_open(&x->c, path), 0);
	pc__trace_pause(&x->c, true);
	for (uint32_t i = 0; i < 500; i++) {
		page_as(x, i, 0, i);
		ev(x, PC_TR_LRU_INSERT, i, LRU, 0);
	}
	for (uint32_t i = 0; i < 500; i++)
		ev(x, PC_TR_EVICT, i, 0, 0);
	assert_int_equal(pc__trace_ring_fill(&x->c), 64);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_events), 64);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_lost), 936);
	assert_int_equal(pc__trace_flush(&x->c), 64);
	assert_int_equal(pc__trace_ring_fill(&x->c), 0);
	for (uint32_t i = 0; i < 10; i++) {	/* room again */
		page_as(x, 600 % 512 + i, 1, i);
		ev(x, PC_TR_LRU_INSERT, 600 % 512 + i, LRU, 2);
	}
	pc__trace_close(&x->c);
	atomic_store(&pc__trace_ring_records, PC_TRACE_RING_DEFAULT);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_events), 74);
	assert_int_equal(pc__vmstat_sum(&x->c, PC_VM_trace_lost), 936);

	assert_int_equal(pct_file_read(path, &f, err, sizeof(err)), 0);
	assert_true(f.has_footer);
	assert_int_equal(f.footer.events, 74);
	assert_int_equal(f.footer.lost, 936);
	assert_int_equal(f.nr_threads, 1);
	assert_int_equal(f.threads[0].lost, 936);
	assert_int_equal(f.threads[0].declared, 74);
	assert_int_equal(f.threads[0].read, 74);
	pct_file_free(&f);

	assert_int_equal(pct_report_file(path, &r, err, sizeof(err)), 0);
	assert_int_equal(r.lost, 936);
	assert_int_equal(r.lost_threads, 1);
	assert_int_equal(r.nr_events, 74);
	assert_int_equal(r.events[PC_TR_LRU_INSERT], 74);
	mem = open_memstream(&out, &outlen);
	assert_non_null(mem);
	pct_report_print(mem, path, &r);
	fclose(mem);
	fputs(out, stdout);
	assert_non_null(strstr(out, "936 EVENTS LOST"));
	free(out);
	fx_free(x);
}

/* ------------------------------------------------------------------ */
/* Damaged files and the command line.                                 */

static void copy_prefix(const char *from, const char *to, long len)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	char buf[4096];
	long done = 0;

	assert_non_null(a);
	assert_non_null(b);
	while (done < len) {
		size_t n = fread(buf, 1, (size_t)pc_min(len - done,
						       (long)sizeof(buf)), a);
		if (!n)
			break;
		assert_int_equal(fwrite(buf, 1, n, b), n);
		done += (long)n;
	}
	fclose(a);
	fclose(b);
}

static void test_truncated_cli(void **state)
{
	const char *path = tu_path("whole.trace"), *cut = tu_path("cut.trace");
	const char *bad = tu_path("bad.trace");
	struct pct_report r;
	char err[256];
	struct fx *x = fx_new(2, 8);
	long whole;
	FILE *fp;

	(void)state;
	record_known(x, path);

	fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	whole = ftell(fp);
	fclose(fp);
	/* header + one block of 24 records + footer with one thread */
	assert_int_equal(whole, 256 + 16 + 24 * 32 + 16 + 32 + 24);

	/* Without the footer, and cut in the middle of the last record. */
	copy_prefix(path, cut, 256 + 16 + 10 * 32 + 7);
	assert_int_equal(pct_report_file(cut, &r, err, sizeof(err)), 0);
	assert_true(r.truncated);
	assert_false(r.has_footer);
	assert_int_equal(r.nr_events, 10);

	fp = fopen(bad, "wb");
	assert_non_null(fp);
	fputs("this is not a trace file, though it is long enough to hold "
	      "a header if it were one: 256 bytes are needed and there are "
	      "not quite that many in this sentence, so some more words: "
	      "page cache, inactive list, active list, refault, shadow, "
	      "readahead, writeback, flusher, kswapd.", fp);
	fclose(fp);
	assert_int_equal(pct_report_file(bad, &r, err, sizeof(err)),
			 -EINVAL);

	{
		char *ok[] = { "trace", "report", (char *)path, NULL };
		char *trunc[] = { "trace", "report", (char *)cut, NULL };
		char *none[] = { "trace", "report", (char *)tu_path("none"),
				 NULL };
		char *use[] = { "trace", NULL };
		char *dmp[] = { "trace", "dump", (char *)path, "5", NULL };
		char *help[] = { "trace", "--help", NULL };

		assert_int_equal(pc_trace_main(3, ok), 0);
		assert_int_equal(pc_trace_main(3, trunc), 0);
		assert_int_equal(pc_trace_main(3, none), 1);
		assert_int_equal(pc_trace_main(1, use), 2);
		assert_int_equal(pc_trace_main(4, dmp), 0);
		assert_int_equal(pc_trace_main(2, help), 0);
	}
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_sequence),
		cmocka_unit_test(test_record_fields),
		cmocka_unit_test(test_off_and_open),
		cmocka_unit_test(test_random_burst),
		cmocka_unit_test(test_two_caches),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_truncated_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
