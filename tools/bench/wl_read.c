/*
 * tools/bench/wl_read.c - readtwice and readonce (seed 002, as
 * vm-scalability's lru-file-readtwice and lru-file-readonce).
 *
 * One sparse file per CPU (ftruncate: all holes), together 8 x B, so the
 * readers stream through eight budgets of pages: this measures the cache
 * and reclaim machinery, not the device (holes read as zeros without
 * I/O).  readtwice: two readers per file start together and read it from
 * start to end in 4 KiB reads; readonce: one; readonce-1: one reader of
 * one file of 8 x B, a single stream (the shape of seed 002's check of
 * direct reclaim by one reader).  The warm-up is the files' first B
 * together (each reader its file's first B / files): the cache is full
 * when the measured part starts, and the readers go on from there for
 * --duration or until the files are read.  Headline: the sum of every
 * reader's KB/s (KB = 1024 bytes).  Also the share of reclaim done directly,
 * pgsteal_direct / (pgsteal_direct + pgsteal_kswapd) (rep.c derives it
 * for every workload): seed 002 saw 1% turn into 10% and -21% throughput.
 *
 * Each reader thread owns its pcb_file and its slot of the figures; the
 * main thread sums the slots after the threads are joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK 4096

struct reader {
	uint64_t off;			/* where it goes on from */
	uint64_t bytes;
	double secs;
};

struct pass {
	struct reader *rd;
	uint64_t to;			/* each reader reads to here */
};

static void params_files(struct pcb_params *p, const struct pcb_opts *o,
			 int files, int readers)
{
	uint64_t size = 8 * o->budget / (uint64_t)files / BLOCK * BLOCK;

	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "files", files);
	pcb_param_set(p, "file_size", (int64_t)size);
	pcb_param_set(p, "warmup_size", (int64_t)(o->budget / (uint64_t)files /
						  BLOCK * BLOCK));
	pcb_param_set(p, "readers_per_file", readers);
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "duration_ms", (int64_t)(o->duration * 1000));
}

static void readtwice_params(struct pcb_params *p, const struct pcb_opts *o)
{
	params_files(p, o, o->cpus, 2);
}

static void readonce_params(struct pcb_params *p, const struct pcb_opts *o)
{
	params_files(p, o, o->cpus, 1);
}

static void readonce1_params(struct pcb_params *p, const struct pcb_opts *o)
{
	params_files(p, o, 1, 1);
}

static uint64_t sparse_disk(const struct pcb_params *p)
{
	(void)p;
	return 1u << 20;		/* holes take no room: metadata only */
}

static int prepare(struct pcb_run *r)
{
	char path[1100];

	for (int i = 0; i < pcb_param(r->par, "files"); i++) {
		int err = pcb_make_file(pcb_path(r, path, sizeof(path), "lru-file.%d", i),
					(uint64_t)pcb_param(r->par, "file_size"), true);

		if (err < 0)
			return pcb_fail(r, err, "making %s: %s", path, strerror(-err));
	}
	return 0;
}

static int reader(struct pcb_run *r, int i, void *arg)
{
	struct pass *pass = arg;
	struct reader *me = pass->rd + i;
	uint64_t size = pass->to, t0 = pcb_now_ns();
	int file = i / (int)pcb_param(r->par, "readers_per_file");
	struct pcb_file *f;
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	int err;

	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "lru-file.%d", file),
		       O_RDONLY, &f);
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	me->bytes = 0;
	for (; me->off < size; me->off += BLOCK) {
		ssize_t n = r->ops->pread(f, buf, BLOCK, (off_t)me->off);

		if (n < 0) {
			err = pcb_fail(r, (int)n, "pread: %s", strerror((int)-n));
			break;
		}
		me->bytes += (uint64_t)n;
		if (((me->off / BLOCK) & 255) == 255 && pcb_time_up(r)) {
			me->off += BLOCK;
			break;
		}
	}
	me->secs = pcb_secs(pcb_now_ns() - t0);
	r->ops->close(f);
	free(buf);
	return err;
}

static int run(struct pcb_run *r)
{
	int n = (int)(pcb_param(r->par, "files") * pcb_param(r->par, "readers_per_file"));
	struct reader *rd = calloc((size_t)n, sizeof(*rd));
	struct pass pass = { rd, (uint64_t)pcb_param(r->par, "warmup_size") };
	double kbs = 0, bytes = 0;
	int err = 0;

	if (!rd)
		return -ENOMEM;
	if (pcb_warming(r))
		err = pcb_threads(r, n, reader, &pass);
	if (!err) {
		pcb_steady(r);
		pass.to = (uint64_t)pcb_param(r->par, "file_size");
		err = pcb_threads(r, n, reader, &pass);
	}
	for (int i = 0; i < n; i++) {
		if (rd[i].secs > 0)
			kbs += (double)rd[i].bytes / 1024 / rd[i].secs;
		bytes += (double)rd[i].bytes;
	}
	free(rd);
	if (err < 0)
		return err;
	pcb_metric(r, "KB/s", kbs);
	pcb_metric(r, "seconds", pcb_secs(pcb_now_ns() - r->t0_ns));
	pcb_metric(r, "read-MB", bytes / 1e6);
	pcb_direction(r, "read-MB", true);
	return 0;
}

/* What the three share. */
#define READ_COMMON \
	.metric = "KB/s", \
	.timed = true, \
	.engines = PCB_ENG_ALL, \
	.warmup = "the files' first B read", \
	.disk = sparse_disk, \
	.prepare = prepare, \
	.run = run

PCB_WORKLOAD(readtwice) = {
	READ_COMMON,
	.name = "readtwice",
	.group = "readtwice",
	.what = "two readers per sparse file, one file per CPU, 8xB in all (seed 002)",
	.in_suite = true,
	.params = readtwice_params,
};

PCB_WORKLOAD(readonce) = {
	READ_COMMON,
	.name = "readonce",
	.group = "readonce",
	.what = "one reader per sparse file, one file per CPU, 8xB in all (seed 002)",
	.params = readonce_params,
};

PCB_WORKLOAD(readonce_1) = {
	READ_COMMON,
	.name = "readonce-1",
	.group = "readonce",
	.what = "one reader of one sparse file of 8xB: a single stream (seed 002)",
	.params = readonce1_params,
};
