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
 * The read workloads' file is made once per run (program.c), with real
 * data written by O_DIRECT (util.c's pcb_make_file), and fio is told the
 * file's size, so it never lays it out again.  Under `direct` fio gets
 * direct=1; under `kernel` and `pagecache` buffered I/O (direct=0).
 * fio's JSON report (--output-format=json, stdout) is parsed with jansson:
 * jobs[0] is the group's sum (group_reporting).
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
	return (uint64_t)pcb_param(p, "file_size");
}

static int make_file(struct pcb_run *r, const char *dir)
{
	char path[1200];
	int err;

	pcb_fmt(path, sizeof(path), "%s/file", dir);
	err = pcb_make_file(path, (uint64_t)pcb_param(r->par, "file_size"), false);
	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

/* The options every fio run here shares. */
static void fio_args(struct pcb_run *r, struct pcb_args *a, const char *rw)
{
	pcb_arg(a, "fio");
	pcb_arg(a, "--name=%s", r->wl->name);
	pcb_arg(a, "--rw=%s", rw);
	pcb_arg(a, "--bs=%d", (int)pcb_param(r->par, "block"));
	pcb_arg(a, "--size=%lld", (long long)pcb_param(r->par, "file_size"));
	pcb_arg(a, "--ioengine=psync");
	pcb_arg(a, "--numjobs=%d", (int)pcb_param(r->par, "jobs"));
	pcb_arg(a, "--thread");
	pcb_arg(a, "--group_reporting");
	pcb_arg(a, "--direct=%d", pcb_prog_mode(r) == PCB_PROG_DIRECT);
	pcb_arg(a, "--output-format=json");
}

/* fio's report: jobs[0], the group (NULL and a message if none). */
static json_t *report(struct pcb_run *r, const struct pcb_prog *p, json_t **root)
{
	char *text = pcb_prog_slurp(p->out), *brace = text ? strchr(text, '{') : NULL;
	json_t *job;

	*root = brace ? json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	free(text);
	job = json_array_get(json_object_get(*root, "jobs"), 0);
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
	int err;

	fio_args(r, &a, "randread");
	pcb_arg(&a, "--filename=%s/file", r->prep);
	pcb_arg(&a, "--norandommap");
	pcb_arg(&a, "--time_based=1");
	pcb_arg(&a, "--runtime=%dms", (int)(r->opt->duration * 1000));
	if (extra)
		pcb_arg(&a, "%s", extra);
	p.argv = a.v;
	err = pcb_prog_run(r, &p);
	if (err)
		return err;
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
	int err;

	fio_args(r, &a, "write");
	pcb_arg(&a, "--filename=seqwrite");
	pcb_arg(&a, "--end_fsync=1");
	p.argv = a.v;
	err = pcb_prog_run(r, &p);
	if (err)
		return err;
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
	.params = params_randread,
	.run = run_randread,
	.program = { "fio", "fio", make_file },
};

PCB_WORKLOAD(fio_seqwrite) = {
	FIO_COMMON,
	.name = "fio-seqwrite",
	.what = "fio: 1 MiB writes of a new 3xB file, end_fsync=1",
	.metric = "MB/s",
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
	.params = params_zipf,
	.run = run_zipf,
	.derive = derive_zipf,
	.program = { "fio", "fio", make_file },
};
