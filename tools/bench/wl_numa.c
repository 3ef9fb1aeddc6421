/*
 * tools/bench/wl_numa.c - numa-shuffle (seed 003: NUMA balancing, and the
 * scan that slows down when migrations fail).
 *
 * Four threads, thread k on node k (pc_thread_set_node; fewer nodes in
 * the engine: k mod nodes).  Each has a region, a file of B/16 (a quarter
 * of a node at nodes=4).
 *   fill     thread k reads region k twice (64 KiB reads): its pages come
 *            from node k and are active.  Shape "full" then leaves no
 *            free frame for a migration: thread k pins region k
 *            (page_get), then, one thread at a time, pins pages of a
 *            sparse ballast file (B/4) in a shuffled order (no readahead
 *            around them) until an allocation has to reclaim directly,
 *            again after kswapd took what it could, until it takes
 *            nothing: the node is at its min watermark with nothing left
 *            to reclaim, no room for a migration and none to be made.
 *            The region pins go before the shuffle, the ballast pins
 *            after it.  (In a rotation every node is a source as well as
 *            a target: any room left, or made by kswapd, would let
 *            migrations free the room the next ones need, and all of them
 *            would succeed in the end.)
 *   shuffle  thread k reads region k+1 (mod 4) from start to end in 4 KiB
 *            reads, over and over, for --duration: every read is remote
 *            until NUMA balancing moves the page to node k.
 * Headline: the readers' MB/s.  Also local%: the share of reads that found
 * their page on the reader's node.  A page here has one reader and starts
 * on its filler's node, so it is local exactly once it was migrated (or
 * from the start, with one node): local pages = initially local pages +
 * numa_pages_migrated, read by a monitor thread every 20 ms; each pass
 * counts as local the share at its middle.  That holds while nothing is
 * evicted: nothing allocates during the shuffle.
 * And, counted over the shuffle phase only: numa_hint_faults, hint-local%
 * (numa_hint_faults_local / numa_hint_faults, the seed's "NUMA hint local
 * percent"), numa_pages_migrated, pgmigrate_fail, numa_pte_updates, and
 * the scan period at the end.
 *
 * Only the pagecache engine has nodes to put a thread on (thread_set_node):
 * the others are n/a.  It runs three configs: the base (usually one node:
 * all local, the ceiling), nodes=4 with balancing off, and with it on.
 *
 * Each thread owns its pcb_files and its slot of the figures; the monitor
 * publishes the migrated count in `migrated` (atomic) and stops when the
 * readers are done (`running`, atomic).  Fill threads take turns at the
 * ballast through `turn` (atomic); the pins and ballast files they leave
 * in their slots are released by the main thread once they are joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define BLOCK		4096
#define FILL_BLOCK	(64 * 1024)
#define THREADS		4
#define SEED		0x5eed0003ull

struct slot {
	uint64_t bytes, reads;
	double local_reads;
	void **pins;			/* full: region pins, then ballast's */
	uint64_t region_pins, nr_pins;	/* pins[region_pins..nr_pins): ballast */
	struct pcb_file *ballast;
};

struct shuffle {
	int nodes;			/* the engine's, up to THREADS */
	uint64_t region_pages;
	uint64_t local0;		/* pages local before any migration */
	uint64_t base_migrated;		/* numa_pages_migrated at the start */
	_Atomic uint64_t migrated;	/* since the start, by the monitor */
	_Atomic int running;		/* readers not done */
	_Atomic int turn;		/* full: the fill thread at the ballast */
	struct slot slot[THREADS];
};

static void params(struct pcb_params *p, const struct pcb_opts *o, int full)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "threads", THREADS);
	pcb_param_set(p, "region_size", (int64_t)(o->budget / 16 / BLOCK * BLOCK));
	pcb_param_set(p, "ballast_size", full ? (int64_t)(o->budget / 4 / BLOCK * BLOCK) : 0);
	pcb_param_set(p, "full", full);
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "seed", (int64_t)SEED);
}

static void room_params(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 0);
}

static void full_params(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 1);
}

static uint64_t disk(const struct pcb_params *p)
{
	return (uint64_t)(THREADS * pcb_param(p, "region_size"));	/* ballast: holes */
}

static int prepare(struct pcb_run *r)
{
	char path[1100];
	int err = 0;

	for (int i = 0; i < THREADS && !err; i++) {
		err = pcb_make_file(pcb_path(r, path, sizeof(path), "region.%d", i),
				    (uint64_t)pcb_param(r->par, "region_size"), false);
		if (!err && pcb_param(r->par, "full"))
			err = pcb_make_file(pcb_path(r, path, sizeof(path), "ballast.%d", i),
					    (uint64_t)pcb_param(r->par, "ballast_size"),
					    true);
	}
	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

static int open_file(struct pcb_run *r, const char *name, int i,
		     struct pcb_file **f)
{
	char path[1100];
	int err = pcb_open(r, pcb_path(r, path, sizeof(path), "%s.%d", name, i),
			   O_RDONLY, f);

	return err < 0 ? pcb_fail(r, err, "open %s: %s", path, strerror(-err)) : 0;
}

static int read_at(struct pcb_run *r, struct pcb_file *f, void *buf, size_t len,
		   uint64_t off)
{
	ssize_t n = r->ops->pread(f, buf, len, (off_t)off);

	return n < 0 ? pcb_fail(r, (int)n, "pread: %s", strerror((int)-n)) : 0;
}

static double counter(json_t *vm, const char *name)
{
	json_t *v = json_object_get(vm, name);

	return json_is_integer(v) ? (double)json_integer_value(v) : 0;
}

static int pin(struct pcb_run *r, struct pcb_file *f, uint64_t index,
	       struct slot *me)
{
	const void *data;
	int err = r->ops->page_get(f, index, &data, &me->pins[me->nr_pins]);

	if (err == 0)
		me->nr_pins++;
	return err;
}

/* Direct reclaims so far, and pages reclaimed by anyone. */
static void reclaim_counts(struct pcb_run *r, double *stalls, double *stolen)
{
	json_t *vm = r->ops->vmstat(r);

	*stalls = counter(vm, "allocstall");
	*stolen = counter(vm, "pgsteal_kswapd") + counter(vm, "pgsteal_direct");
	json_decref(vm);
}

/*
 * Full: pin ballast pages from node i, in a shuffled order, until an
 * allocation has to reclaim directly: the node is at its min watermark,
 * below the low one migrations need.  Then let kswapd take what it can
 * (pages read around ours) and pin again, until it takes nothing: no
 * room is left, and none can be made.  Stopping there, not at the last
 * frame, spares later allocations a fruitless scan of pinned pages.
 */
static int pin_ballast(struct pcb_run *r, struct shuffle *s, int i)
{
	uint64_t pages = (uint64_t)pcb_param(r->par, "ballast_size") / BLOCK;
	uint64_t seed = SEED + (uint64_t)i, *order = malloc(pages * sizeof(*order));
	struct timespec settle = { 0, 50 * 1000 * 1000 };
	struct slot *me = &s->slot[i];
	double stall0, stolen0, stall, stolen;
	uint64_t k = 0;
	int err;

	if (!order)
		return -ENOMEM;
	for (k = 0; k < pages; k++)
		order[k] = k;
	for (k = pages; k > 1; k--) {
		uint64_t j = pcb_rand(&seed) % k, t = order[k - 1];

		order[k - 1] = order[j];
		order[j] = t;
	}
	err = open_file(r, "ballast", i, &me->ballast);
	for (int round = 0; !err && k < pages && round < 50 && !pcb_stop; round++) {
		reclaim_counts(r, &stall0, &stolen0);
		while (k < pages && !pcb_stop) {
			if (pin(r, me->ballast, order[k++], me) < 0) {
				k = pages;	/* -ENOMEM: full, the point */
				break;
			}
			reclaim_counts(r, &stall, &stolen);
			if (stall != stall0)
				break;
		}
		nanosleep(&settle, NULL);
		reclaim_counts(r, &stall, &stolen);
		if (stolen == stolen0)
			break;		/* nothing reclaimable: full */
	}
	free(order);
	return err;
}

/* Thread k on node k: its region twice; with "full", its node pinned. */
static int fill_thread(struct pcb_run *r, int i, void *arg)
{
	struct shuffle *s = arg;
	struct slot *me = &s->slot[i];
	uint64_t size = (uint64_t)pcb_param(r->par, "region_size");
	bool full = pcb_param(r->par, "full");
	struct timespec ms = { 0, 1000 * 1000 };
	struct pcb_file *f;
	void *buf = pcb_buf(FILL_BLOCK);
	int err;

	if (!buf)
		return -ENOMEM;
	err = r->ops->thread_set_node(r, i % s->nodes);
	if (err < 0)
		err = pcb_fail(r, err, "thread_set_node(%d): %s", i % s->nodes,
			       strerror(-err));
	if (!err && !(err = open_file(r, "region", i, &f))) {
		for (int pass = 0; pass < 2 && !err && !pcb_stop; pass++)
			for (uint64_t off = 0; off < size && !err; off += FILL_BLOCK)
				err = read_at(r, f, buf, FILL_BLOCK, off);
		for (uint64_t k = 0; full && !err && k < s->region_pages; k++)
			if ((err = pin(r, f, k, me)) < 0)
				pcb_fail(r, err, "page_get: %s", strerror(-err));
		me->region_pins = me->nr_pins;
		r->ops->close(f);
	}
	if (full) {	/* one at a time: allocstall is counted globally */
		while (atomic_load(&s->turn) != i && !pcb_stop)
			nanosleep(&ms, NULL);
		if (!err)
			err = pin_ballast(r, s, i);
		atomic_fetch_add(&s->turn, 1);
	}
	free(buf);
	return err;
}

static double migrated_now(struct pcb_run *r)
{
	json_t *vm = r->ops->vmstat(r);
	double v = vm ? counter(vm, "numa_pages_migrated") : 0;

	json_decref(vm);
	return v;
}

static void monitor(struct pcb_run *r, struct shuffle *s)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (atomic_load(&s->running) > 0 && !pcb_stop) {
		double m = migrated_now(r) - (double)s->base_migrated;

		atomic_store(&s->migrated, m > 0 ? (uint64_t)m : 0);
		nanosleep(&ts, NULL);
	}
}

/* Share of pages local to their reader, now. */
static double local_share(struct shuffle *s)
{
	double total = (double)(s->region_pages * THREADS);
	double local = (double)(s->local0 + atomic_load(&s->migrated));

	return local >= total ? 1.0 : local / total;
}

/* Thread k reads region k+1 until the time is up; thread 4 monitors. */
static int shuffle_thread(struct pcb_run *r, int i, void *arg)
{
	struct shuffle *s = arg;
	uint64_t size = s->region_pages * BLOCK;
	struct slot *me = &s->slot[i < THREADS ? i : 0];
	struct pcb_file *f = NULL;
	void *buf;
	int err;

	if (i == THREADS) {
		monitor(r, s);
		return 0;
	}
	if (!(buf = pcb_buf(BLOCK))) {
		atomic_fetch_sub(&s->running, 1);
		return -ENOMEM;
	}
	err = r->ops->thread_set_node(r, i % s->nodes);
	if (!err)
		err = open_file(r, "region", (i + 1) % THREADS, &f);
	while (!err && !pcb_time_up(r)) {
		double before = local_share(s);
		uint64_t n = 0;

		for (uint64_t off = 0; off < size && !err; off += BLOCK, n++) {
			err = read_at(r, f, buf, BLOCK, off);
			if ((n & 255) == 255 && pcb_time_up(r))
				break;
		}
		me->reads += n;
		me->bytes += n * BLOCK;
		me->local_reads += (double)n * (before + local_share(s)) / 2;
	}
	if (f)
		r->ops->close(f);
	atomic_fetch_sub(&s->running, 1);
	free(buf);
	return err;
}

static void numa_metrics(struct pcb_run *r, json_t *before, json_t *after)
{
	static const char *const names[] = {
		"numa_hint_faults", "numa_pages_migrated", "pgmigrate_fail",
		"numa_pte_updates", NULL
	};
	double faults = counter(after, "numa_hint_faults") -
			counter(before, "numa_hint_faults");
	double local = counter(after, "numa_hint_faults_local") -
		       counter(before, "numa_hint_faults_local");

	for (int i = 0; names[i]; i++)
		pcb_metric(r, names[i], counter(after, names[i]) -
			   counter(before, names[i]));
	pcb_direction(r, "numa_hint_faults", false);
	pcb_direction(r, "pgmigrate_fail", false);
	pcb_direction(r, "numa_pte_updates", false);
	if (faults > 0) {
		pcb_metric(r, "hint-local%", 100 * local / faults);
		pcb_direction(r, "hint-local%", true);
	}
	pcb_metric(r, "scan-period-ms", counter(after, "numa_scan_period_ms"));
	pcb_direction(r, "scan-period-ms", false);
}

static int run(struct pcb_run *r)
{
	struct shuffle *s;
	json_t *before = NULL, *after = NULL;
	uint64_t t0, bytes = 0, reads = 0;
	double local = 0, secs;
	int err = 0;

	if (!r->ops->thread_set_node)
		return -EOPNOTSUPP;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	while (s->nodes < THREADS && r->ops->thread_set_node(r, s->nodes) == 0)
		s->nodes++;
	if (!s->nodes) {
		free(s);
		return pcb_fail(r, -EINVAL, "the engine has no node 0");
	}
	s->region_pages = (uint64_t)pcb_param(r->par, "region_size") / BLOCK;
	for (int i = 0; i < THREADS; i++)
		if (i % s->nodes == (i + 1) % THREADS % s->nodes)
			s->local0 += s->region_pages;
	if (pcb_param(r->par, "full")) {
		if (!r->ops->page_get) {
			free(s);
			return -EOPNOTSUPP;
		}
		for (int i = 0; i < THREADS; i++)
			if (!(s->slot[i].pins = calloc(s->region_pages +
					(uint64_t)pcb_param(r->par, "ballast_size") / BLOCK,
					sizeof(void *))))
				err = -ENOMEM;
	}
	if (!err)
		err = pcb_threads(r, THREADS, fill_thread, s);
	if (pcb_param(r->par, "full")) {	/* let the kswapds give up */
		struct timespec t = { 0, 200 * 1000 * 1000 };

		nanosleep(&t, NULL);
	}
	for (int i = 0; i < THREADS; i++)	/* the regions may move now */
		for (uint64_t k = 0; k < s->slot[i].region_pins; k++)
			r->ops->page_put(s->slot[i].pins[k]);
	/* the measured part starts now: --duration of shuffled reads */
	if (!err)
		pcb_steady(r);
	if (!err && !pcb_stop) {
		before = r->ops->vmstat(r);
		s->base_migrated = (uint64_t)counter(before, "numa_pages_migrated");
		atomic_store(&s->running, THREADS);
		t0 = pcb_now_ns();
		err = pcb_threads(r, THREADS + 1, shuffle_thread, s);
		secs = pcb_secs(pcb_now_ns() - t0);
		after = r->ops->vmstat(r);
		for (int i = 0; i < THREADS; i++) {
			bytes += s->slot[i].bytes;
			reads += s->slot[i].reads;
			local += s->slot[i].local_reads;
		}
		if (!err && secs > 0 && reads) {
			pcb_metric(r, "MB/s", (double)bytes / secs / 1e6);
			pcb_metric(r, "local%", 100 * local / (double)reads);
			pcb_direction(r, "local%", true);
			pcb_metric(r, "nodes", s->nodes);
			numa_metrics(r, before, after);
		}
	}
	for (int i = 0; i < THREADS; i++) {
		struct slot *me = &s->slot[i];

		while (me->nr_pins > me->region_pins)
			r->ops->page_put(me->pins[--me->nr_pins]);
		if (me->ballast)
			r->ops->close(me->ballast);
		free(me->pins);
	}
	json_decref(before);
	json_decref(after);
	free(s);
	return err;
}

/* What the two share. */
#define NUMA_COMMON \
	.group = "numa-shuffle", \
	.metric = "MB/s", \
	.timed = true, \
	.engines = PCB_ENG(PCB_PAGECACHE), \
	.na_reason = "needs an engine with NUMA nodes to put threads on " \
		     "(pagecache: pc_thread_set_node)", \
	.pc_variants = { "nodes=4", "numa.balancing=1 nodes=4" }, \
	.warmup = "the fill: each region read twice (-full: every node " \
		  "filled too)", \
	.disk = disk, \
	.prepare = prepare, \
	.run = run

PCB_WORKLOAD(numa_shuffle) = {
	NUMA_COMMON,
	.name = "numa-shuffle",
	.what = "4 threads on 4 nodes fill a B/16 region each, then read a neighbour's (seed 003)",
	.params = room_params,
};

PCB_WORKLOAD(numa_shuffle_full) = {
	NUMA_COMMON,
	.name = "numa-shuffle-full",
	.what = "as numa-shuffle, but every node is filled first: migrations fail (seed 003)",
	.params = full_params,
};
