/*
 * tools/bench/wl_randread.c - randread-cold: the miss path (what most
 * programs do on a miss: a synchronous read of data that is not cached).
 *
 * A file of 8 x B filled with real data beforehand (O_DIRECT writes: not
 * holes, not in any cache).  T threads (randread-cold-T1, -T2, -T8), each
 * with its own open file, read 4 KiB pages at uniformly random offsets of
 * it for --duration.  At most one read in eight can hit once the cache is
 * full, so this is the cost of a miss: lookup, allocation (and reclaim once
 * the budget is used), the device read, the wake-up of the reader.
 * The direct engine (O_DIRECT pread, one at a time per thread) is what a
 * synchronous reader can get from the device at all: its result file says
 * "limit": true, and the verdict's "of limit" column divides by it.
 *
 * Headline: reads per second per thread.  Also the latency of one read,
 * mean and p99 (from a log-linear histogram: 16 steps per power of two,
 * so a quantile is within 1/16 of its value), and the read rate in all.
 *
 * Each thread owns its pcb_file, buffer, histogram and slot of the
 * figures; the main thread merges the slots after the join.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK	4096
#define SEED	0xc01dull

/* Latency histogram: bucket (e, s) holds [2^e + s 2^e/16, + 2^e/16) ns. */
#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_EXP	40		/* up to 2^40 ns: 18 minutes */
#define HIST_BUCKETS	(HIST_EXP * HIST_SUB)

struct rr_thread {
	uint64_t ops, lat_sum_ns;
	double secs;
	uint32_t hist[HIST_BUCKETS];
};

static unsigned hist_bucket(uint64_t ns)
{
	unsigned e;

	if (ns < HIST_SUB)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);	/* 2^e <= ns */
	if (e >= HIST_EXP)
		return HIST_BUCKETS - 1;
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (unsigned)((ns >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* The middle of bucket @b, in ns. */
static double hist_value(unsigned b)
{
	unsigned e = b / HIST_SUB, s = b % HIST_SUB;
	double lo, step;

	if (e == 0)
		return b;
	lo = (double)(1ull << (e + HIST_SUB_BITS - 1));
	step = lo / HIST_SUB;
	return lo + step * s + step / 2;
}

static void params(struct pcb_params *p, const struct pcb_opts *o, int threads)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "file_size", (int64_t)(8 * o->budget / BLOCK * BLOCK));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "seed", (int64_t)SEED);
}

static void params_t1(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 1); }
static void params_t2(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 2); }
static void params_t8(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 8); }

static uint64_t disk(const struct pcb_params *p)
{
	return (uint64_t)pcb_param(p, "file_size");
}

static int prepare(struct pcb_run *r)
{
	char path[1100];
	int err = pcb_make_file(pcb_path(r, path, sizeof(path), "randread"),
				(uint64_t)pcb_param(r->par, "file_size"), false);

	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

static int reader(struct pcb_run *r, int i, void *arg)
{
	struct rr_thread *me = (struct rr_thread *)arg + i;
	uint64_t pages = (uint64_t)pcb_param(r->par, "file_size") / BLOCK;
	uint64_t seed = (uint64_t)pcb_param(r->par, "seed") + (uint64_t)i * 7919;
	uint64_t t0 = pcb_now_ns();
	struct pcb_file *f;
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	int err;

	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "randread"), O_RDONLY, &f);
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	for (;;) {
		off_t off = (off_t)(pcb_rand(&seed) % pages * BLOCK);
		uint64_t t = pcb_now_ns(), lat;
		ssize_t n = r->ops->pread(f, buf, BLOCK, off);

		lat = pcb_now_ns() - t;
		if (n < 0) {
			err = pcb_fail(r, (int)n, "pread: %s", strerror((int)-n));
			break;
		}
		me->ops++;
		me->lat_sum_ns += lat;
		me->hist[hist_bucket(lat)]++;
		if ((me->ops & 15) == 0 && pcb_time_up(r))
			break;
	}
	me->secs = pcb_secs(pcb_now_ns() - t0);
	r->ops->close(f);
	free(buf);
	return err;
}

static int run(struct pcb_run *r)
{
	int t = (int)pcb_param(r->par, "threads");
	struct rr_thread *th = calloc((size_t)t, sizeof(*th));
	uint64_t ops = 0, sum = 0, seen = 0;
	double rate = 0;
	int err;

	if (!th)
		return -ENOMEM;
	err = pcb_threads(r, t, reader, th);
	for (int i = 0; i < t; i++) {
		ops += th[i].ops;
		sum += th[i].lat_sum_ns;
		if (th[i].secs > 0)
			rate += (double)th[i].ops / th[i].secs;
		if (i > 0)
			for (unsigned b = 0; b < HIST_BUCKETS; b++)
				th[0].hist[b] += th[i].hist[b];
	}
	if (err == 0 && ops) {
		unsigned b = 0;

		/* the first bucket that reaches 99% of the reads */
		for (; b < HIST_BUCKETS - 1; b++) {
			seen += th[0].hist[b];
			if (seen * 100 >= ops * 99)
				break;
		}
		pcb_metric(r, "IOPS/thread", rate / t);
		pcb_metric(r, "IOPS", rate);
		pcb_metric(r, "latency-mean-us", (double)sum / (double)ops / 1e3);
		pcb_direction(r, "latency-mean-us", false);
		pcb_metric(r, "latency-p99-us", hist_value(b) / 1e3);
		pcb_direction(r, "latency-p99-us", false);
	}
	free(th);
	return err;
}

#define RANDREAD(T)							\
	PCB_WORKLOAD(randread_cold_t##T) = {				\
		.name = "randread-cold-T" #T,				\
		.group = "randread-cold",				\
		.what = #T " thread(s): random 4 KiB reads of an 8xB file of data", \
		.metric = "IOPS/thread",				\
		.timed = true,						\
		.engines = PCB_ENG_ALL,					\
		.direct_is_limit = true,				\
		.params = params_t##T,					\
		.disk = disk,						\
		.prepare = prepare,					\
		.run = run,						\
	};

RANDREAD(1)
RANDREAD(2)
RANDREAD(8)
