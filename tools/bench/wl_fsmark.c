/*
 * tools/bench/wl_fsmark.c - fs_mark as LKP runs it (seed 000).
 *
 * T threads (2 x CPUs), each in its own folder, each makes F files of
 * size S: create, write in 16 KiB chunks, fsync, close.  Three shapes:
 *   fsmark-4M       S = 4 MiB, F x T x S = 2 x B
 *   fsmark-4M-cold  the same files from an empty cache, start-up measured
 *                   (no warm-up: the cache's first frames, a new
 *                   process's first writebacks)
 *   fsmark-8K       S = 8 KiB, 256 files per subfolder, F x T x 64 KiB = B
 *                   (so B = 256M makes 4096 files: fsync-bound, a few
 *                   seconds)
 * The warm-up, in folders of its own (w<thread>/), makes files the same
 * way first: for 4M, B of them (the cache full of the files' pages), for
 * 8K a quarter of the measured count; they stay, so the measured files
 * take their place in a full cache.
 * Headline: files per second.  Also fs_mark's "App overhead": the time the
 * threads spent outside create/write/fsync/close, in microseconds.
 *
 * Each thread owns its folder, buffer and figures slot; the main thread
 * sums the slots after the join.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CHUNK		(16 * 1024)
#define PER_DIR		256

struct fsmark_thread {
	int64_t files;
	uint64_t fs_ns, total_ns;
};

struct fsmark_pass {
	struct fsmark_thread *th;
	const char *prefix;		/* the threads' folders: "t", "w" */
	int64_t files;			/* a thread's, in this pass */
};

static void params(struct pcb_params *p, const struct pcb_opts *o,
		   uint64_t size, uint64_t per_thread_bytes, uint64_t warm)
{
	int threads = 2 * o->cpus;
	uint64_t files = per_thread_bytes / (uint64_t)threads / size;

	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "file_size", (int64_t)size);
	pcb_param_set(p, "files_per_thread", (int64_t)(files ? files : 1));
	pcb_param_set(p, "warmup_files_per_thread", (int64_t)warm);
	pcb_param_set(p, "files_per_dir", PER_DIR);
	pcb_param_set(p, "chunk", CHUNK);
}

/* A warm-up of @files a thread: at least one. */
static uint64_t warm_files(uint64_t files)
{
	return files ? files : 1;
}

static void params_4m(struct pcb_params *p, const struct pcb_opts *o)
{
	/* warm-up: B of files */
	params(p, o, 4u << 20, 2 * o->budget,
	       warm_files(o->budget / (uint64_t)(2 * o->cpus) / (4u << 20)));
}

static void params_4m_cold(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 4u << 20, 2 * o->budget, 0);	/* no warm-up */
}

static void params_8k(struct pcb_params *p, const struct pcb_opts *o)
{
	/* F x T x 64 KiB = B: the count of files, each of 8 KiB */
	params(p, o, 8u << 10, o->budget / 8,
	       warm_files(o->budget / 8 / (uint64_t)(2 * o->cpus) / (8u << 10) / 4));
}

static uint64_t disk(const struct pcb_params *p)
{
	uint64_t size = (uint64_t)pcb_param(p, "file_size");

	/* and a block of metadata per file */
	return (uint64_t)(pcb_param(p, "threads") * (pcb_param(p, "files_per_thread") +
			  pcb_param(p, "warmup_files_per_thread"))) * (size + 4096);
}

static int one_thread(struct pcb_run *r, int i, void *arg)
{
	struct fsmark_pass *pass = arg;
	struct fsmark_thread *me = pass->th + i;
	const char *pre = pass->prefix;
	uint64_t size = (uint64_t)pcb_param(r->par, "file_size");
	int64_t nfiles = pass->files;
	uint64_t t0 = pcb_now_ns();
	char path[1100];
	void *buf = pcb_buf(CHUNK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (int64_t j = 0; j < nfiles && !err; j++) {
		struct pcb_file *f;
		uint64_t t;

		if (pcb_time_up(r)) {
			r->capped = !pcb_stop;
			break;
		}
		if (j % PER_DIR == 0) {
			pcb_mkdir(pcb_path(r, path, sizeof(path), "%s%d", pre, i));
			err = pcb_mkdir(pcb_path(r, path, sizeof(path), "%s%d/d%d", pre,
						 i, (int)(j / PER_DIR)));
			if (err < 0) {
				pcb_fail(r, err, "mkdir %s: %s", path, strerror(-err));
				break;
			}
		}
		pcb_path(r, path, sizeof(path), "%s%d/d%d/f%d", pre, i,
			 (int)(j / PER_DIR), (int)(j % PER_DIR));
		t = pcb_now_ns();
		err = pcb_open(r, path, O_CREAT | O_EXCL | O_WRONLY, &f);
		if (err < 0) {
			pcb_fail(r, err, "create %s: %s", path, strerror(-err));
			break;
		}
		for (uint64_t off = 0; off < size && !err; off += CHUNK) {
			size_t len = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
			ssize_t n = r->ops->pwrite(f, buf, len, (off_t)off);

			if (n < 0)
				err = pcb_fail(r, (int)n, "pwrite: %s", strerror((int)-n));
		}
		if (!err && (err = r->ops->fsync(f)) < 0)
			pcb_fail(r, err, "fsync: %s", strerror(-err));
		r->ops->close(f);
		me->fs_ns += pcb_now_ns() - t;
		if (!err)
			me->files++;
	}
	me->total_ns = pcb_now_ns() - t0;
	free(buf);
	return err;
}

static int run(struct pcb_run *r)
{
	int t = (int)pcb_param(r->par, "threads");
	struct fsmark_thread *th = calloc((size_t)t, sizeof(*th));
	struct fsmark_pass pass = { th, "w", pcb_param(r->par, "warmup_files_per_thread") };
	double files = 0, overhead_ns = 0, secs;
	int err = 0;

	if (!th)
		return -ENOMEM;
	if (pcb_warming(r)) {
		err = pcb_threads(r, t, one_thread, &pass);
		memset(th, 0, (size_t)t * sizeof(*th));
	}
	if (!err) {
		pcb_steady(r);
		pass.prefix = "t";
		pass.files = pcb_param(r->par, "files_per_thread");
		err = pcb_threads(r, t, one_thread, &pass);
	}
	secs = pcb_secs(pcb_now_ns() - r->t0_ns);
	for (int i = 0; i < t; i++) {
		files += (double)th[i].files;
		overhead_ns += (double)(th[i].total_ns - th[i].fs_ns);
	}
	free(th);
	if (err < 0)
		return err;
	pcb_metric(r, "files/s", files / secs);
	pcb_metric(r, "seconds", secs);
	pcb_metric(r, "MB/s", files * (double)pcb_param(r->par, "file_size") / secs / 1e6);
	pcb_metric(r, "app-overhead-us", overhead_ns / 1e3);
	pcb_direction(r, "app-overhead-us", false);
	return 0;
}

#define FSMARK(id, size, desc, warm, suite) \
	PCB_WORKLOAD(fsmark_##id) = { \
		.name = "fsmark-" size, \
		.group = "fsmark", \
		.what = desc, \
		.metric = "files/s", \
		.in_suite = suite, \
		.engines = PCB_ENG_ALL, \
		.warmup = warm, \
		.params = params_##id, \
		.disk = disk, \
		.run = run, \
	};

FSMARK(4m, "4M", "2xCPUs threads make 4 MiB files (16 KiB writes, fsync), 2xB in all",
       "B of files made the same way", true)
FSMARK(4m_cold, "4M-cold", "fsmark-4M from an empty cache: start-up measured",
       NULL, false)
FSMARK(8k, "8K", "2xCPUs threads make 8 KiB files, 256 a folder, fsync each",
       "a quarter as many files made the same way", true)
