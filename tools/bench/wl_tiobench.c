/*
 * tools/bench/wl_tiobench.c - tiobench (seed 004: the page allocator's and
 * reclaim's overhead under threaded sequential and random I/O).
 *
 * For T in 1, 2, 4 (tiobench-T1, -T2, -T4): T threads, each with its own
 * file of 2 x B / T, 4 KiB blocks, through four phases in order, each
 * started together and ended with fsync (writes) by every thread:
 *   seq-write    the whole file
 *   rand-write   4000 / T writes at random blocks
 *   seq-read     the whole file
 *   rand-read    4000 / T reads at random blocks
 * The warm-up before them writes a file of B (4 KiB writes, fsync) that
 * stays: the phases start with the cache full, and take their pages from
 * it.
 * Per phase: MB/s over the phase's wall time, mean and max latency of one
 * 4 KiB call.  Headline: seq-read MB/s (the seed's "sequential read
 * throughput").
 *
 * The counters are split by phase too (the result's "phases"), and from
 * them, per phase <ph>:
 *   <ph>-cached-MB        the engine's cached file data when it starts
 *                         (pagecache nr_file_pages, kernel memcg cache)
 *   <ph>-dev-read-MB      what the process read from the device
 *                         (/proc/self/io, any engine), -dev-write-MB too
 *   <ph>-from-cache%      reads: the share of the bytes read that did
 *                         not come from the device (100 - dev/read)
 *   <ph>-reclaimed-MB     pages taken from the cache (pagecache: reclaim
 *                         and drop-behind; kernel: memcg uncharges)
 *   <ph>-direct-reclaim%  of the pages reclaimed, those taken by the
 *                         program's own threads (kernel: the machine's)
 *   <ph>-hit%, -ra-unused-MB  pagecache only: page lookups that found
 *                         the page (pgfault_hit), and pages read ahead
 *                         in the phase that no reader used in it
 *
 * Each thread owns its file, buffer and slot of the figures; the main
 * thread sums the slots after each phase's join.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK 4096

enum phase { SEQ_WRITE, RAND_WRITE, SEQ_READ, RAND_READ, NR_PHASES };

static const char *const phase_name[NR_PHASES] = {
	"seq-write", "rand-write", "seq-read", "rand-read"
};

struct tio_thread {
	uint64_t size;			/* bytes written in seq-write */
	uint64_t ops, lat_sum_ns, lat_max_ns;
};

struct tio {
	enum phase phase;
	struct tio_thread *t;
};

static int tio_thread(struct pcb_run *r, int i, void *arg)
{
	struct tio *tio = arg;
	struct tio_thread *me = &tio->t[i];
	enum phase ph = tio->phase;
	bool write = ph == SEQ_WRITE || ph == RAND_WRITE;
	bool seq = ph == SEQ_WRITE || ph == SEQ_READ;
	uint64_t blocks = (ph == SEQ_WRITE ? (uint64_t)pcb_param(r->par, "file_size")
					    : me->size) / BLOCK;
	uint64_t n = seq ? blocks : (uint64_t)pcb_param(r->par, "rand_ops");
	uint64_t seed = 0x71ull + (uint64_t)i * 4 + ph;
	struct pcb_file *f;
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	int err;

	me->ops = me->lat_sum_ns = me->lat_max_ns = 0;
	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "tio.%d", i),
		       write ? O_CREAT | O_RDWR : O_RDONLY, &f);
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	for (uint64_t k = 0; k < n && blocks; k++) {
		off_t off = (off_t)((seq ? k : pcb_rand(&seed) % blocks) * BLOCK);
		uint64_t t = pcb_now_ns(), lat;
		ssize_t got = write ? r->ops->pwrite(f, buf, BLOCK, off)
				    : r->ops->pread(f, buf, BLOCK, off);

		lat = pcb_now_ns() - t;
		if (got < 0) {
			err = pcb_fail(r, (int)got, "%s: %s", phase_name[ph],
				       strerror((int)-got));
			break;
		}
		me->ops++;
		me->lat_sum_ns += lat;
		me->lat_max_ns = lat > me->lat_max_ns ? lat : me->lat_max_ns;
		if ((k & 255) == 255 && pcb_time_up(r)) {
			r->capped = !pcb_stop;
			break;
		}
	}
	if (ph == SEQ_WRITE)
		me->size = me->ops * BLOCK;
	if (!err && write && (err = r->ops->fsync(f)) < 0)
		pcb_fail(r, err, "fsync: %s", strerror(-err));
	r->ops->close(f);
	free(buf);
	return err;
}

static void params(struct pcb_params *p, const struct pcb_opts *o, int threads)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "file_size",
		      (int64_t)(2 * o->budget / (uint64_t)threads / BLOCK * BLOCK));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "rand_ops", 4000 / threads);
	pcb_param_set(p, "warmup_size", (int64_t)(o->budget / BLOCK * BLOCK));
}

static void params_t1(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 1); }
static void params_t2(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 2); }
static void params_t4(struct pcb_params *p, const struct pcb_opts *o) { params(p, o, 4); }

static uint64_t disk(const struct pcb_params *p)
{
	return (uint64_t)(pcb_param(p, "threads") * pcb_param(p, "file_size") +
			  pcb_param(p, "warmup_size"));
}

/* The warm-up: a file of B in BLOCK writes, fsync; 0 or -errno. */
static int warm_up(struct pcb_run *r)
{
	uint64_t size = (uint64_t)pcb_param(r->par, "warmup_size");
	struct pcb_file *f;
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	int err;

	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "warm"),
		       O_CREAT | O_TRUNC | O_WRONLY, &f);
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	for (uint64_t off = 0; off < size && !err; off += BLOCK) {
		ssize_t n = r->ops->pwrite(f, buf, BLOCK, (off_t)off);

		if (n < 0)
			err = pcb_fail(r, (int)n, "warm-up: %s", strerror((int)-n));
		else if (((off / BLOCK) & 255) == 255 && pcb_time_up(r))
			r->capped = !pcb_stop;
		if (r->capped || pcb_stop)
			break;
	}
	if (!err && (err = r->ops->fsync(f)) < 0)
		pcb_fail(r, err, "warm-up fsync: %s", strerror(-err));
	r->ops->close(f);
	free(buf);
	return err;
}

static double pc_max0(double v)
{
	return v > 0 ? v : 0;
}

static double mb(double bytes)
{
	return bytes / (1 << 20);
}

/* The engine's cached file bytes in a snapshot (the kernel's: the cgroup's). */
static double cached_bytes(json_t *snap, bool pc)
{
	if (pc)
		return pcb_count(snap, "nr_file_pages") * BLOCK;
	return pcb_count(snap, "memcg.cache") + pcb_count(snap, "memcg.file");
}

/* Per-phase figures from @d, its counter deltas; @start: its first snapshot. */
static void phase_figures(struct pcb_run *r, enum phase ph, json_t *start,
			  json_t *d, uint64_t ops)
{
	const char *n = phase_name[ph];
	double rd = pcb_count(d, "io.read_bytes");
	double ksw = pcb_count(d, "pgsteal_kswapd");
	double dir = pcb_count(d, "pgsteal_direct");
	double hit = pcb_count(d, "pgfault_hit");
	double miss = pcb_count(d, "pgfault_miss");
	double freed;
	char name[64];
	bool pc = json_object_get(d, "pgfault_hit") != NULL;

	pcb_fmt(name, sizeof(name), "%s-cached-MB", n);
	pcb_metric(r, name, mb(cached_bytes(start, pc)));
	pcb_fmt(name, sizeof(name), "%s-dev-read-MB", n);
	pcb_metric(r, name, mb(rd));
	pcb_direction(r, name, false);
	pcb_fmt(name, sizeof(name), "%s-dev-write-MB", n);
	pcb_metric(r, name, mb(pcb_count(d, "io.write_bytes")));
	pcb_direction(r, name, false);
	if ((ph == SEQ_READ || ph == RAND_READ) && ops) {
		double asked = (double)ops * BLOCK;

		pcb_fmt(name, sizeof(name), "%s-from-cache%%", n);
		pcb_metric(r, name, rd >= asked ? 0 : 100 * (1 - rd / asked));
	}
	freed = pc ? ksw + dir + pcb_count(d, "dropbehind")
		   : pcb_count(d, "memcg.pgpgout");
	pcb_fmt(name, sizeof(name), "%s-reclaimed-MB", n);
	pcb_metric(r, name, mb(freed * BLOCK));
	if (ksw + dir > 0) {
		pcb_fmt(name, sizeof(name), "%s-direct-reclaim%%", n);
		pcb_metric(r, name, 100 * dir / (ksw + dir));
		pcb_direction(r, name, false);
	}
	if (!pc)
		return;
	if (hit + miss > 0) {
		pcb_fmt(name, sizeof(name), "%s-hit%%", n);
		pcb_metric(r, name, 100 * hit / (hit + miss));
	}
	pcb_fmt(name, sizeof(name), "%s-ra-unused-MB", n);
	/* ra_pages counts each miss's own page too */
	pcb_metric(r, name, mb(pc_max0(pcb_count(d, "ra_pages") - miss -
				      pcb_count(d, "ra_hit")) * BLOCK));
	pcb_direction(r, name, false);
}

static int run(struct pcb_run *r)
{
	int t = (int)pcb_param(r->par, "threads");
	struct tio tio = { .t = calloc((size_t)t, sizeof(struct tio_thread)) };
	char name[64];
	int err = 0;

	if (!tio.t)
		return -ENOMEM;
	if (pcb_warming(r) && (err = warm_up(r)) < 0) {
		free(tio.t);
		return err;
	}
	pcb_steady(r);
	uint64_t deadline = r->deadline_ns;

	for (int ph = 0; ph < NR_PHASES && !err && !pcb_stop; ph++) {
		json_t *start = pcb_counters(r), *d;
		uint64_t t0 = pcb_now_ns(), ops = 0, sum = 0, max = 0;
		uint64_t left = deadline > t0 ? deadline - t0 : 0;
		double secs;

		/* a capped run still runs every phase: each gets an equal
		 * share of the time left (the quick ones pass theirs on), and
		 * one that finds none left (a loaded machine: the phases
		 * before ran over) still does its first 256 blocks a thread */
		if (deadline)
			r->deadline_ns = t0 + left / (uint64_t)(NR_PHASES - ph);
		tio.phase = (enum phase)ph;
		err = pcb_threads(r, t, tio_thread, &tio);
		secs = pcb_secs(pcb_now_ns() - t0);
		if (err < 0 || pcb_stop) {
			json_decref(start);
			break;
		}
		json_incref(start);
		d = pcb_phase_end(r, phase_name[ph], start);
		for (int i = 0; i < t; i++) {
			ops += tio.t[i].ops;
			sum += tio.t[i].lat_sum_ns;
			max = tio.t[i].lat_max_ns > max ? tio.t[i].lat_max_ns : max;
		}
		phase_figures(r, (enum phase)ph, start, d, ops);
		json_decref(start);
		pcb_fmt(name, sizeof(name), "%s-MB/s", phase_name[ph]);
		pcb_metric(r, name, (double)ops * BLOCK / secs / 1e6);
		pcb_direction(r, name, true);
		if (ops) {
			pcb_fmt(name, sizeof(name), "%s-latency-mean-ms", phase_name[ph]);
			pcb_metric(r, name, (double)sum / (double)ops / 1e6);
			pcb_direction(r, name, false);
			pcb_fmt(name, sizeof(name), "%s-latency-max-ms", phase_name[ph]);
			pcb_metric(r, name, (double)max / 1e6);
			pcb_direction(r, name, false);
		}
	}
	r->deadline_ns = deadline;
	free(tio.t);
	return err;
}

#define TIOBENCH(T, suite)						\
	PCB_WORKLOAD(tiobench_t##T) = {				\
		.name = "tiobench-T" #T,				\
		.group = "tiobench",					\
		.what = #T " thread(s), own 2xB/" #T " files: seq/rand write, seq/rand read", \
		.metric = "seq-read-MB/s",				\
		.in_suite = suite,					\
		.engines = PCB_ENG_ALL,					\
		.warmup = "a file of B written",			\
		.params = params_t##T,					\
		.disk = disk,						\
		.run = run,						\
	};

TIOBENCH(1, false)
TIOBENCH(2, true)
TIOBENCH(4, false)
