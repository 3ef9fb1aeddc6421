/*
 * tools/bench/wl_write.c - the streaming writers of seeds 000 and 001.
 *
 * seq-write (seed 000: xfs_io -c "pwrite 0 47g" on a 16 GB machine): one
 *   writer makes a new file in 4 KiB pwrites: its first B is the warm-up
 *   (the cache full of dirty pages, writeback under way: the writer's
 *   steady state), the next 3 x B and the fsync the measured part.  The
 *   budget fills with dirty pages three times over, so writeback and
 *   reclaim race the writer; on pagecache it also runs with nodes=4
 *   (fake NUMA, as fake_numa=4 in the seed).  Headline MB/s.
 * dd-async (seed 001): a file of B/10 in 4 KiB writes, fsync, delete; ten
 *   times, after one more as the warm-up (the pages it frees are the
 *   ones the next file takes).  Headline: the slowest iteration's
 *   seconds.  Also the page wait-queue lookups and wake-ups per page
 *   (pagecache's counters).
 *
 * One thread each; the buffer is the workload's own, touched beforehand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK 4096

/* Write [@from, @to) of @f in BLOCK pwrites; the bytes written (fewer
 * when the time ran out), or -errno. */
static int64_t write_range(struct pcb_run *r, struct pcb_file *f, uint64_t from,
			   uint64_t to, const void *buf)
{
	uint64_t off = from;

	for (unsigned i = 0; off < to; i++, off += BLOCK) {
		ssize_t n = r->ops->pwrite(f, buf, BLOCK, (off_t)off);

		if (n < 0)
			return pcb_fail(r, (int)n, "pwrite at %llu: %s",
					(unsigned long long)off, strerror((int)-n));
		if ((i & 255) == 255 && pcb_time_up(r)) {
			r->capped = !pcb_stop;
			off += BLOCK;
			break;
		}
	}
	return (int64_t)(off - from);
}

/* Write @size bytes to a new file in BLOCK pwrites, then fsync; the first
 * @warm bytes of them (0: none) are the warm-up, pcb_steady() after them.
 * Returns the bytes written after the warm-up (fewer when the time ran
 * out), or -errno. */
static int64_t write_file(struct pcb_run *r, const char *path, uint64_t warm,
			  uint64_t size, const void *buf, double *fsync_s)
{
	struct pcb_file *f;
	int64_t off = 0;
	uint64_t t;
	int err;

	err = pcb_open(r, path, O_CREAT | O_TRUNC | O_WRONLY, &f);
	if (err < 0)
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	if (warm && (off = write_range(r, f, 0, warm, buf)) >= 0)
		pcb_steady(r);
	if (off >= 0)
		off = write_range(r, f, warm, size, buf);
	if (off < 0) {
		r->ops->close(f);
		return off;
	}
	t = pcb_now_ns();
	err = r->ops->fsync(f);
	*fsync_s = pcb_secs(pcb_now_ns() - t);
	r->ops->close(f);
	if (err < 0)
		return pcb_fail(r, err, "fsync: %s", strerror(-err));
	return (int64_t)off;
}

/* ------------------------------------------------------------------ */

static void seq_write_params(struct pcb_params *p, const struct pcb_opts *o)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "warmup_size", (int64_t)(o->budget / BLOCK * BLOCK));
	pcb_param_set(p, "file_size", (int64_t)(3 * o->budget));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "threads", 1);
}

static uint64_t seq_write_disk(const struct pcb_params *p)
{
	return (uint64_t)(pcb_param(p, "warmup_size") + pcb_param(p, "file_size"));
}

static uint64_t file_size_disk(const struct pcb_params *p)
{
	return (uint64_t)pcb_param(p, "file_size");
}

static int seq_write_run(struct pcb_run *r)
{
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	double fsync_s = 0, secs;
	uint64_t warm;
	int64_t done;

	if (!buf)
		return -ENOMEM;
	warm = pcb_warming(r) ? (uint64_t)pcb_param(r->par, "warmup_size") : 0;
	done = write_file(r, pcb_path(r, path, sizeof(path), "seq-write"), warm,
			  warm + (uint64_t)pcb_param(r->par, "file_size"), buf,
			  &fsync_s);
	free(buf);
	if (done < 0)
		return (int)done;
	secs = pcb_secs(pcb_now_ns() - r->t0_ns);
	pcb_metric(r, "MB/s", (double)done / secs / 1e6);
	pcb_metric(r, "seconds", secs);
	pcb_metric(r, "fsync-seconds", fsync_s);
	pcb_metric(r, "written-MB", (double)done / 1e6);
	pcb_direction(r, "written-MB", true);
	return 0;
}

/* The seed's other figures, from pagecache's own counters. */
static void seq_write_derive(struct pcb_run *r)
{
	double wait_ns, wakeups, secs;

	secs = json_number_value(json_object_get(r->metrics, "seconds"));
	if (pcb_vm(r, "tree_lock_wait_ns", &wait_ns) && secs > 0) {
		/* the share of the machine's CPU time spent waiting */
		pcb_metric(r, "tree-lock-wait%",
			   100 * wait_ns / (secs * 1e9 * r->opt->cpus));
		pcb_direction(r, "tree-lock-wait%", false);
	}
	if (pcb_vm(r, "kswapd_wakeup", &wakeups)) {
		pcb_metric(r, "kswapd-wakeups", wakeups);
		pcb_direction(r, "kswapd-wakeups", false);
	}
}

PCB_WORKLOAD(seq_write) = {
	.name = "seq-write",
	.group = "seq-write",
	.what = "one writer makes a 3xB file in 4 KiB writes, then fsyncs (seed 000)",
	.metric = "MB/s",
	.in_suite = true,
	.engines = PCB_ENG_ALL,
	.warmup = "the file's first B written",
	.pc_variants = { "nodes=4" },
	.params = seq_write_params,
	.disk = seq_write_disk,
	.run = seq_write_run,
	.derive = seq_write_derive,
};

/* ------------------------------------------------------------------ */

static void dd_async_params(struct pcb_params *p, const struct pcb_opts *o)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "file_size", (int64_t)(o->budget / 10 / BLOCK * BLOCK));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "iterations", 10);
}

static int dd_async_run(struct pcb_run *r)
{
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	uint64_t size = (uint64_t)pcb_param(r->par, "file_size"), total = 0;
	double slowest = 0, sum = 0;
	int iters = 0, err = 0;

	if (!buf)
		return -ENOMEM;
	pcb_path(r, path, sizeof(path), "dd-async");
	/* the warm-up: one iteration more, its figures not counted */
	for (int i = pcb_warming(r) ? -1 : 0;
	     i < pcb_param(r->par, "iterations") && !pcb_time_up(r); i++) {
		uint64_t t = pcb_now_ns();
		double fsync_s, s;
		int64_t done = write_file(r, path, 0, size, buf, &fsync_s);

		if (done < 0) {
			err = (int)done;
			break;
		}
		err = r->ops->unlink(r, path);
		if (err < 0) {
			pcb_fail(r, err, "unlink: %s", strerror(-err));
			break;
		}
		s = pcb_secs(pcb_now_ns() - t);
		if (i < 0) {
			pcb_steady(r);
			continue;
		}
		if ((uint64_t)done < size)	/* cut short: not an iteration */
			break;
		slowest = s > slowest ? s : slowest;
		sum += s;
		total += (uint64_t)done;
		iters++;
	}
	free(buf);
	if (err < 0)
		return err;
	if (iters == 0)
		return pcb_stop ? 0 : pcb_fail(r, -ETIME, "no iteration finished in time");
	if (iters < pcb_param(r->par, "iterations"))
		r->capped = !pcb_stop;
	pcb_metric(r, "slowest-seconds", slowest);
	pcb_metric(r, "mean-seconds", sum / iters);
	pcb_metric(r, "MB/s", (double)total / sum / 1e6);
	pcb_metric(r, "iterations", iters);
	pcb_direction(r, "iterations", true);
	return 0;
}

static void dd_async_derive(struct pcb_run *r)
{
	double pages, lookups, wakeups;

	pages = json_number_value(json_object_get(r->metrics, "iterations")) *
		(double)pcb_param(r->par, "file_size") / BLOCK;
	if (pages <= 0)
		return;
	if (pcb_vm(r, "waitqueue_lookups", &lookups)) {
		pcb_metric(r, "waitqueue-lookups/page", lookups / pages);
		pcb_direction(r, "waitqueue-lookups/page", false);
	}
	if (pcb_vm(r, "waitqueue_wakeups", &wakeups)) {
		pcb_metric(r, "waitqueue-wakeups/page", wakeups / pages);
		pcb_direction(r, "waitqueue-wakeups/page", false);
	}
}

PCB_WORKLOAD(dd_async) = {
	.name = "dd-async",
	.group = "dd-async",
	.what = "ten times: a B/10 file in 4 KiB writes, fsync, delete (seed 001)",
	.metric = "slowest-seconds",
	.lower = true,
	.engines = PCB_ENG_ALL,
	.warmup = "one iteration",
	.params = dd_async_params,
	.disk = file_size_disk,
	.run = dd_async_run,
	.derive = dd_async_derive,
};
