/*
 * tools/bench/wl_fio.c - fio, unmodified, as three workloads (docs/workloads.md,
 * "Real programs"; program.c runs it under each engine).
 *
 *   fio-randread   4 KiB random reads (uniform, no random map), psync, 2 jobs
 *                  (threads) over one file of 2 x B, for --duration.
 *                  Headline IOPS; clat mean and p99.
 *   fio-seqwrite   1 MiB writes of a new 3 x B file, end_fsync=1, psync;
 *                  to the end (SIGINT at the cap: fio reports what it did).
 *                  Headline MB/s (fio's: its runtime includes the fsync).
 *   fio-zipf       4 KiB random reads, random_distribution=zipf:1.1, one
 *                  job, over one file of 4 x B, for --duration: the hot set
 *                  fits the budget.  Headline IOPS; hit% (reads served
 *                  without the device: 100 x (1 - device reads / reads),
 *                  the program's device reads from its I/O accounting, any
 *                  engine), and pagecache's own lookups (pc-hit%).
 *
 *   fio-randread-cold  fio-randread without the warm-up: from an empty
 *                  cache, the cache's start-up measured.
 *
 * Steady state: on an engine with a cache, fio first runs a warm-up job
 * (fio-randread: the file's first B in 1 MiB reads; fio-zipf: B of the
 * same zipf reads; fio-seqwrite: a file of B of its own, written), then
 * the measured job, stonewalled, whose exec_prerun touches STEADY_FILE:
 * the lab's warm-up ends there (pcb_steady, program.c), and the figures
 * are the measured job's group (its "jobname" is the workload's).  fio
 * runs with invalidate=0: by default a job starts by dropping its file's
 * cache, the warm-up's work with it.
 *
 * The read workloads' file is made once per run (program.c), with real
 * data written by O_DIRECT (util.c's pcb_make_file), and fio is told the
 * file's size, so it never lays it out again.  Under `direct` fio gets
 * direct=1; under `kernel` and `pagecache` buffered I/O (direct=0).
 * fio's JSON report (--output-format=json, stdout) is parsed with jansson:
 * one entry per group of jobs (group_reporting), the warm-up's first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK		4096
#define WRITE_BLOCK	(1 << 20)
#define ZIPF_THETA	"1.1"

static void params_common(struct pcb_params *p, const struct pcb_opts *o,
			  uint64_t times, int jobs, int block)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "file_size", (int64_t)(times * o->budget / WRITE_BLOCK *
						WRITE_BLOCK));
	pcb_param_set(p, "block", block);
	pcb_param_set(p, "jobs", jobs);
	pcb_param_set(p, "warmup_size", (int64_t)(o->budget / WRITE_BLOCK * WRITE_BLOCK));
}

static void params_randread(struct pcb_params *p, const struct pcb_opts *o)
{
	params_common(p, o, 2, 2, BLOCK);
}

static void params_seqwrite(struct pcb_params *p, const struct pcb_opts *o)
{
	params_common(p, o, 3, 1, WRITE_BLOCK);
}

static void params_zipf(struct pcb_params *p, const struct pcb_opts *o)
{
	params_common(p, o, 4, 1, BLOCK);
}

static uint64_t disk(const struct pcb_params *p)
{
	/* and fio-seqwrite's warm-up file */
	return (uint64_t)(pcb_param(p, "file_size") + pcb_param(p, "warmup_size"));
}

static int make_file(struct pcb_run *r, const char *dir)
{
	char path[1200];
	int err;

	pcb_fmt(path, sizeof(path), "%s/file", dir);
	err = pcb_make_file(path, (uint64_t)pcb_param(r->par, "file_size"), false);
	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

/* The options every fio run here shares (before its first job: global). */
static void fio_args(struct pcb_run *r, struct pcb_args *a)
{
	pcb_arg(a, "fio");
	pcb_arg(a, "--ioengine=psync");
	pcb_arg(a, "--thread");
	pcb_arg(a, "--group_reporting");
	pcb_arg(a, "--direct=%d", pcb_prog_mode(r) == PCB_PROG_DIRECT);
	pcb_arg(a, "--output-format=json");
	/* not fio's default: each job dropping its file's cache first would
	 * drop what the warm-up filled (the lab dropped the kernel's already) */
	pcb_arg(a, "--invalidate=0");
}

/*
 * The measured job, @rw on @file: after the warm-up's job when there is
 * one, stonewalled (it starts when the warm-up has ended) and saying so:
 * its exec_prerun makes STEADY_FILE, which ends the lab's warm-up
 * (program.c) before the job's first I/O.
 */
#define STEADY_FILE	"steady"

static void measured_job(struct pcb_run *r, struct pcb_args *a, const char *rw,
			 const char *file, bool warmed)
{
	pcb_arg(a, "--name=%s", r->wl->name);
	if (warmed) {
		pcb_arg(a, "--stonewall");
		pcb_arg(a, "--exec_prerun=touch " STEADY_FILE);
	}
	pcb_arg(a, "--filename=%s", file);
	pcb_arg(a, "--size=%lld", (long long)pcb_param(r->par, "file_size"));
	pcb_arg(a, "--rw=%s", rw);
	pcb_arg(a, "--bs=%d", (int)pcb_param(r->par, "block"));
	pcb_arg(a, "--numjobs=%d", (int)pcb_param(r->par, "jobs"));
}

/* fio's report of the measured job's group (NULL and a message if none). */
static json_t *report(struct pcb_run *r, const struct pcb_prog *p, json_t **root)
{
	char *text = pcb_prog_slurp(p->out), *brace = text ? strchr(text, '{') : NULL;
	json_t *job = NULL, *j;
	size_t i;

	*root = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	free(text);
	json_array_foreach(json_object_get(*root, "jobs"), i, j) {
		const char *name = json_string_value(json_object_get(j, "jobname"));

		if (name && !strcmp(name, r->wl->name))
			job = j;
	}
	if (!job)
		pcb_fail(r, -EIO, "no JSON report from fio in %s", p->out);
	return job;
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void latency(struct pcb_run *r, json_t *dir)
{
	json_t *clat = json_object_get(dir, "clat_ns");
	json_t *p99 = json_object_get(json_object_get(clat, "percentile"),
				      "99.000000");

	pcb_metric(r, "clat-mean-us", num(clat, "mean") / 1e3);
	pcb_direction(r, "clat-mean-us", false);
	if (p99) {
		pcb_metric(r, "clat-p99-us", json_number_value(p99) / 1e3);
		pcb_direction(r, "clat-p99-us", false);
	}
}

static int run_read(struct pcb_run *r, const char *extra)
{
	struct pcb_args a = { .n = 0 };
	struct pcb_prog p = { .name = "fio" };
	json_t *root = NULL, *job, *rd;
	bool warm = pcb_warming(r);
	char file[1200];
	int err;

	pcb_fmt(file, sizeof(file), "%s/file", r->prep);
	fio_args(r, &a);
	if (warm) {
		/* uniform reads: any B of the file serves them as well as
		 * another, so the cache is filled at streaming speed; zipf's
		 * hot set by B of its own reads */
		pcb_arg(&a, "--name=warmup");
		pcb_arg(&a, "--filename=%s", file);
		pcb_arg(&a, "--size=%lld", (long long)pcb_param(r->par, "file_size"));
		pcb_arg(&a, "--io_size=%lld", (long long)pcb_param(r->par, "warmup_size"));
		pcb_arg(&a, "--numjobs=1");
		if (extra) {
			pcb_arg(&a, "--rw=randread");
			pcb_arg(&a, "--bs=%d", BLOCK);
			pcb_arg(&a, "--norandommap");
			pcb_arg(&a, "%s", extra);
		} else {
			pcb_arg(&a, "--rw=read");
			pcb_arg(&a, "--bs=%d", WRITE_BLOCK);
		}
		p.steady_file = STEADY_FILE;
	}
	measured_job(r, &a, "randread", file, warm);
	pcb_arg(&a, "--norandommap");
	pcb_arg(&a, "--time_based=1");
	pcb_arg(&a, "--runtime=%dms", (int)(r->opt->duration * 1000));
	if (extra)
		pcb_arg(&a, "%s", extra);
	p.argv = a.v;
	err = pcb_prog_run(r, &p);
	if (err)
		return err;
	if (pcb_warming(r))
		return pcb_fail(r, -EIO, "fio's warm-up did not end (no %s)", STEADY_FILE);
	job = report(r, &p, &root);
	if (job) {
		rd = json_object_get(job, "read");
		pcb_metric(r, "IOPS", num(rd, "iops"));
		pcb_metric(r, "read-MB", num(rd, "io_bytes") / 1e6);
		latency(r, rd);
	}
	json_decref(root);
	return job ? 0 : -EIO;
}

static int run_randread(struct pcb_run *r)
{
	return run_read(r, NULL);
}

static int run_zipf(struct pcb_run *r)
{
	return run_read(r, "--random_distribution=zipf:" ZIPF_THETA);
}

static void derive_zipf(struct pcb_run *r)
{
	double dev, hit, miss;
	json_t *read = json_object_get(r->metrics, "read-MB");

	if (json_is_number(read) && json_number_value(read) > 0 &&
	    pcb_vm(r, "io.read_bytes", &dev)) {
		double h = 100 * (1 - dev / 1e6 / json_number_value(read));

		pcb_metric(r, "hit%", h < 0 ? 0 : h);
	}
	if (pcb_vm(r, "pgfault_hit", &hit) && pcb_vm(r, "pgfault_miss", &miss) &&
	    hit + miss > 0)
		pcb_metric(r, "pc-hit%", 100 * hit / (hit + miss));
}

static int run_seqwrite(struct pcb_run *r)
{
	struct pcb_args a = { .n = 0 };
	struct pcb_prog p = { .name = "fio", .stop_at_deadline = true };
	json_t *root = NULL, *job, *wr;
	bool warm = pcb_warming(r);
	int err;

	fio_args(r, &a);
	if (warm) {
		/* a file of B of its own, left in the cache */
		pcb_arg(&a, "--name=warmup");
		pcb_arg(&a, "--filename=warm");
		pcb_arg(&a, "--size=%lld", (long long)pcb_param(r->par, "warmup_size"));
		pcb_arg(&a, "--rw=write");
		pcb_arg(&a, "--bs=%d", WRITE_BLOCK);
		pcb_arg(&a, "--numjobs=1");
		p.steady_file = STEADY_FILE;
	}
	measured_job(r, &a, "write", "seqwrite", warm);
	pcb_arg(&a, "--end_fsync=1");
	p.argv = a.v;
	err = pcb_prog_run(r, &p);
	if (err)
		return err;
	if (pcb_warming(r))
		return pcb_fail(r, -EIO, "fio's warm-up did not end (no %s)", STEADY_FILE);
	job = report(r, &p, &root);
	if (job) {
		wr = json_object_get(job, "write");
		pcb_metric(r, "MB/s", num(wr, "bw_bytes") / 1e6);
		pcb_metric(r, "written-MB", num(wr, "io_bytes") / 1e6);
		latency(r, wr);
		if (p.stopped && !pcb_stop)
			r->capped = true;
	}
	json_decref(root);
	return job ? 0 : -EIO;
}

/* What the three share. */
#define FIO_COMMON \
	.group = "fio", \
	.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL) | \
		   PCB_ENG(PCB_DIRECT), \
	.na_reason = "fio runs buffered or with direct=1: it has no uncached " \
		     "buffered mode", \
	.disk = disk

PCB_WORKLOAD(fio_randread) = {
	FIO_COMMON,
	.name = "fio-randread",
	.what = "fio: 4 KiB random reads, psync, 2 threads, a 2xB file",
	.metric = "IOPS",
	.timed = true,
	.in_suite = true,
	.direct_is_limit = true,
	.warmup = "a job reading the file's first B (1 MiB reads)",
	.params = params_randread,
	.run = run_randread,
	.program = { "fio", "fio", make_file },
};

PCB_WORKLOAD(fio_randread_cold) = {
	FIO_COMMON,
	.name = "fio-randread-cold",
	.what = "fio-randread from an empty cache: start-up measured",
	.metric = "IOPS",
	.timed = true,
	.direct_is_limit = true,
	.params = params_randread,
	.run = run_randread,
	.program = { "fio", "fio", make_file },
};

PCB_WORKLOAD(fio_seqwrite) = {
	FIO_COMMON,
	.name = "fio-seqwrite",
	.what = "fio: 1 MiB writes of a new 3xB file, end_fsync=1",
	.metric = "MB/s",
	.warmup = "a job writing a file of B of its own",
	.params = params_seqwrite,
	.run = run_seqwrite,
	.program = { "fio", "fio", NULL },
};

PCB_WORKLOAD(fio_zipf) = {
	FIO_COMMON,
	.name = "fio-zipf",
	.what = "fio: 4 KiB random reads, zipf:" ZIPF_THETA ", a 4xB file",
	.metric = "IOPS",
	.timed = true,
	.warmup = "a job of B of the same zipf reads",
	.params = params_zipf,
	.run = run_zipf,
	.derive = derive_zipf,
	.program = { "fio", "fio", make_file },
};
