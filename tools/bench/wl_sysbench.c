/*
 * tools/bench/wl_sysbench.c - sysbench fileio (Debian's sysbench), the file
 * I/O benchmark people run first, unmodified, as two workloads
 * (docs/workloads.md, "Real programs"; program.c runs it under each
 * engine).
 *
 *   sysbench-rndrw  16 files of 4 x B in all, made once per run (sysbench's
 *                   own `prepare`); random 16 KiB reads and writes over
 *                   them, 1.5 reads a write, an fsync of each file every
 *                   100 requests (sysbench's defaults), 2 threads, for
 *                   --duration.  Headline: requests/s (reads and writes);
 *                   read and written MiB/s, fsyncs/s, latency mean and p95.
 *   sysbench-seqwr  the same files written from their start in 16 KiB
 *                   writes, 1 thread, fsync every 100 requests and at the
 *                   end, for --duration.  Headline: written MiB/s.
 *
 * Both serve the direct engine too (--file-extra-flags=direct: sysbench's
 * own O_DIRECT), the device's rate for the same requests: the limit of
 * a workload whose data is 4x the budget.
 *
 * Steady state: sysbench has no warm-up that says when it ends, so on an
 * engine with a cache the run is a shell (sh -c, in the files' folder)
 * that runs sysbench twice: `seqrd` of the first B of the data (--events:
 * B in 16 KiB reads; for reads uniform over 4 x B any B serves as well as
 * another), then makes STEADY_FILE in the repetition's folder (which ends
 * the lab's warm-up, pcb_steady) and execs the measured sysbench.
 * seqwr is measured from its start, as fio-seqwrite is: what it writes
 * is new to the cache either way.  Both engines' shells are their
 * program's processes: pagecache's under `pagecache exec` (one shared
 * cache for the two sysbench runs), the kernel's in its cgroup.
 *
 * The report is text; the measured run is the last in the output, and
 * each figure is the number after its label ("reads/s:", "written,
 * MiB/s:", "avg:", "95th percentile:").  The repetitions share the files:
 * rndrw rewrites blocks in place and seqwr overwrites them, so their
 * size and layout stay as prepared.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FILES		16
#define BLOCK		16384
#define STEADY_FILE	"steady"

static void params(struct pcb_params *p, const struct pcb_opts *o, int threads)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "total_size", (int64_t)(4 * o->budget));
	pcb_param_set(p, "files", FILES);
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "fsync_freq", 100);
	pcb_param_set(p, "warmup_size", (int64_t)o->budget);
}

static void params_rndrw(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 2);
}

static void params_seqwr(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 1);
}

static uint64_t disk(const struct pcb_params *p)
{
	return (uint64_t)pcb_param(p, "total_size");
}

/* "sysbench fileio" and what every run here shares, as one shell word
 * list into @buf; @mode its --file-test-mode. */
static void fileio(const struct pcb_run *r, char *buf, size_t len,
		   const char *mode)
{
	pcb_fmt(buf, len, "sysbench fileio --file-num=%d --file-total-size=%lld "
		"--file-block-size=%d --file-fsync-freq=%d --file-test-mode=%s%s",
		FILES, (long long)pcb_param(r->par, "total_size"), BLOCK,
		(int)pcb_param(r->par, "fsync_freq"), mode,
		pcb_prog_mode(r) == PCB_PROG_DIRECT ?
		" --file-extra-flags=direct" : "");
}

/* The files, by sysbench itself, in @dir (a shell: sysbench makes them
 * in its working directory). */
static int make_files(struct pcb_run *r, const char *dir)
{
	struct pcb_args a = { .n = 0 };
	struct pcb_prog p = { .name = "sysbench-prepare", .plain = true };
	char cmd[PATH_MAX + 400], io[300];

	fileio(r, io, sizeof(io), "rndrw");
	pcb_fmt(cmd, sizeof(cmd), "cd '%s' && exec %s prepare", dir, io);
	pcb_arg(&a, "sh");
	pcb_arg(&a, "-c");
	pcb_arg(&a, "%s", cmd);
	p.argv = a.v;
	return pcb_prog_run(r, &p);
}

/* The number after @label in the last of its lines in @text; NaN if none. */
static double field(const char *text, const char *label)
{
	const char *at = NULL;

	for (const char *s = strstr(text, label); s; s = strstr(s + 1, label))
		at = s;
	return at ? strtod(at + strlen(label), NULL) : __builtin_nan("");
}

static void report(struct pcb_run *r, const char *text, bool seq)
{
	double rd = field(text, "reads/s:"), wr = field(text, "writes/s:");

	if (seq)
		pcb_metric(r, "MiB/s", field(text, "written, MiB/s:"));
	else
		pcb_metric(r, "requests/s", rd + wr);
	pcb_metric(r, "reads/s", rd);
	pcb_metric(r, "writes/s", wr);
	pcb_metric(r, "fsyncs/s", field(text, "fsyncs/s:"));
	pcb_metric(r, "read-MiB/s", field(text, "read, MiB/s:"));
	pcb_metric(r, "written-MiB/s", field(text, "written, MiB/s:"));
	pcb_metric(r, "latency-mean-ms", field(text, "avg:"));
	pcb_direction(r, "latency-mean-ms", false);
	pcb_metric(r, "latency-p95-ms", field(text, "95th percentile:"));
	pcb_direction(r, "latency-p95-ms", false);
}

/* sysbench @mode for --duration in the files' folder, after the warm-up
 * when the engine has a cache and @warm_ok; its report. */
static int run_sysbench(struct pcb_run *r, const char *mode, bool warm_ok)
{
	struct pcb_args a = { .n = 0 };
	struct pcb_prog p = { .name = "sysbench" };
	bool warm = warm_ok && pcb_warming(r);
	char cmd[2 * PATH_MAX + 1200], io[300], wio[300], steady[PATH_MAX];
	char warmup[PATH_MAX + 400] = "";
	int secs = (int)(r->opt->duration + 0.5), err;
	char *text;

	fileio(r, io, sizeof(io), mode);
	if (warm) {
		if (!realpath(r->dir, steady))
			return pcb_fail(r, -errno, "%s: %s", r->dir, strerror(errno));
		fileio(r, wio, sizeof(wio), "seqrd");
		pcb_fmt(warmup, sizeof(warmup), "%s --threads=1 --time=0 "
			"--events=%lld run >/dev/null && : > '%s/%s' && ", wio,
			(long long)(pcb_param(r->par, "warmup_size") / BLOCK),
			steady, STEADY_FILE);
		p.steady_file = STEADY_FILE;
	}
	pcb_fmt(cmd, sizeof(cmd), "cd '%s' && %sexec %s --threads=%d --time=%d "
		"--percentile=95 run", r->prep, warmup, io,
		(int)pcb_param(r->par, "threads"), secs < 1 ? 1 : secs);
	pcb_arg(&a, "sh");
	pcb_arg(&a, "-c");
	pcb_arg(&a, "%s", cmd);
	p.argv = a.v;
	if ((err = pcb_prog_run(r, &p)))
		return err;
	if (pcb_warming(r) && warm)
		return pcb_fail(r, -EIO, "sysbench's warm-up did not end (no %s)",
				STEADY_FILE);
	text = pcb_prog_slurp(p.out);
	if (!text || !strstr(text, "Throughput:")) {
		free(text);
		return pcb_fail(r, -EIO, "no report from sysbench in %s", p.out);
	}
	report(r, text, !strcmp(mode, "seqwr"));
	free(text);
	return 0;
}

static int run_rndrw(struct pcb_run *r)
{
	return run_sysbench(r, "rndrw", true);
}

static int run_seqwr(struct pcb_run *r)
{
	return run_sysbench(r, "seqwr", false);
}

/* What the two share. */
#define SB_COMMON \
	.group = "sysbench", \
	.timed = true, \
	.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL) | \
		   PCB_ENG(PCB_DIRECT), \
	.na_reason = "sysbench runs buffered or with O_DIRECT: it has no " \
		     "uncached buffered mode", \
	.direct_is_limit = true, \
	.disk = disk

PCB_WORKLOAD(sysbench_rndrw) = {
	SB_COMMON,
	.name = "sysbench-rndrw",
	.what = "sysbench fileio rndrw: 16 KiB, 2 threads, fsync/100, 4xB in 16 files",
	.metric = "requests/s",
	.warmup = "sysbench seqrd of the files' first B, in the same shell",
	.params = params_rndrw,
	.run = run_rndrw,
	.program = { "sysbench", "sysbench", make_files },
};

PCB_WORKLOAD(sysbench_seqwr) = {
	SB_COMMON,
	.name = "sysbench-seqwr",
	.what = "sysbench fileio seqwr: 16 KiB writes, fsync/100, 4xB in 16 files",
	.metric = "MiB/s",
	.params = params_seqwr,
	.run = run_seqwr,
	.program = { "sysbench", "sysbench", make_files },
};
