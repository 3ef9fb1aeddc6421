/*
 * tools/bench/engine_pc.c - the pagecache engine: libpagecache through
 * its public API (include/pagecache.h) and nothing else.
 *
 * One pc_cache per repetition, made by start() in the repetition's child
 * with the run's config ("memory=<budget>" and the --set pairs, plus
 * "trace=PATH" with --trace), so every repetition starts from an empty
 * cache.  stop() destroys it, which writes back what is still dirty (not
 * timed).  Every result also records what the cache cost to have
 * (docs/design.md, "Memory at scale"), all lower-is-better:
 *   create-ms              pc_cache_create's wall time
 *   rss-after-create-MiB   the process's RSS just after it
 *   rss-before-create-MiB  ... just before it (the bench's own memory)
 *   rss-end-MiB            ... when the workload is done, before destroy
 *
 * Counters are the library's own (pc_vmstat over pc_vmstat_name(i));
 * samples read nr_free_pages, nr_inactive_file, nr_active_file, nr_dirty
 * and nr_writeback.  The library is thread-safe, so the sampler thread
 * reads counters while the workload runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagecache.h"
#include "bench.h"

static pc_file *F(struct pcb_file *f)
{
	return (pc_file *)f;
}

static void lower_metric(struct pcb_run *r, const char *name, double v)
{
	pcb_metric(r, name, v);
	pcb_direction(r, name, false);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

static int pcx_start(struct pcb_run *r)
{
	pc_cache *c = NULL;
	uint64_t rss0 = pcb_rss_bytes(), t0 = pcb_now_ns(), t1;
	int err = pc_cache_create(&c, r->config);

	t1 = pcb_now_ns();
	if (err < 0)
		return pcb_fail(r, err, "pc_cache_create(\"%s\"): %s", r->config,
				strerror(-err));
	lower_metric(r, "create-ms", (double)(t1 - t0) / 1e6);
	lower_metric(r, "rss-after-create-MiB", mib(pcb_rss_bytes()));
	lower_metric(r, "rss-before-create-MiB", mib(rss0));
	r->eng = c;
	return 0;
}

static int pcx_stop(struct pcb_run *r)
{
	int err = 0;

	if (r->eng) {
		lower_metric(r, "rss-end-MiB", mib(pcb_rss_bytes()));
		err = pc_cache_destroy(r->eng);
	}
	r->eng = NULL;
	return err;
}

static int pcx_open(struct pcb_run *r, const char *path, int flags,
		    struct pcb_file **out)
{
	pc_file *f = NULL;
	int err = pc_open(r->eng, path, flags, 0644, &f);

	if (err == 0)
		*out = (struct pcb_file *)f;
	return err;
}

static ssize_t pcx_pread(struct pcb_file *f, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pc_pread(F(f), (char *)buf + done, len - done,
				     off + (off_t)done);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* A 4 KiB-aligned page-sized read is a hit exactly when pc_get_page with
 * PC_GET_NOWAIT finds the page.  Of other reads the API cannot tell: they
 * get -EAGAIN, and the caller reads the ordinary way (never a false hit). */
static ssize_t pcx_pread_cached(struct pcb_file *f, void *buf, size_t len,
				off_t off)
{
	pc_page *p;
	int err;

	if (len != PC_PAGE_SIZE || (off & (PC_PAGE_SIZE - 1)))
		return -EAGAIN;
	err = pc_get_page(F(f), (uint64_t)off / PC_PAGE_SIZE, PC_GET_NOWAIT, &p);
	if (err == -ENXIO)
		return 0;
	if (err < 0)
		return err;
	memcpy(buf, pc_page_data(p), len);
	pc_put_page(p);
	return (ssize_t)len;
}

static ssize_t pcx_pwrite(struct pcb_file *f, const void *buf, size_t len,
			  off_t off)
{
	ssize_t n = pc_pwrite(F(f), buf, len, off);

	if (n >= 0 && (size_t)n != len)
		return -EIO;
	return n;
}

static int pcx_fsync(struct pcb_file *f)
{
	return pc_fsync(F(f));
}

static int pcx_ftruncate(struct pcb_file *f, off_t len)
{
	return pc_ftruncate(F(f), len);
}

static int pcx_fadvise(struct pcb_file *f, off_t off, off_t len, int advice)
{
	return pc_fadvise(F(f), off, len, advice);
}

static int pcx_close(struct pcb_file *f)
{
	return pc_close(F(f));
}

static int pcx_unlink(struct pcb_run *r, const char *path)
{
	return pc_unlink(r->eng, path);
}

static int pcx_page_get(struct pcb_file *f, uint64_t index, const void **data,
			void **pin)
{
	pc_page *p = NULL;
	int err = pc_get_page(F(f), index, 0, &p);

	if (err < 0)
		return err;
	*data = pc_page_data(p);
	*pin = p;
	return 0;
}

static void pcx_page_put(void *pin)
{
	pc_put_page(pin);
}

static int pcx_thread_set_node(struct pcb_run *r, int node)
{
	return pc_thread_set_node(r->eng, node);
}

static json_t *pcx_vmstat(struct pcb_run *r)
{
	json_t *o = json_object();
	const char *name;

	for (unsigned i = 0; (name = pc_vmstat_name(i)); i++) {
		uint64_t v;

		if (pc_vmstat(r->eng, name, &v) == 0)
			json_object_set_new(o, name, json_integer((json_int_t)v));
	}
	return o;
}

const char *const pcb_pc_sample_counters[PCB_NR_SAMPLES] = {
	"nr_free_pages", "nr_inactive_file", "nr_active_file",
	"nr_dirty", "nr_writeback"
};

static int pcx_sample(struct pcb_run *r, uint64_t v[PCB_NR_SAMPLES])
{
	for (int i = 0; i < PCB_NR_SAMPLES; i++)
		if (pc_vmstat(r->eng, pcb_pc_sample_counters[i], &v[i]) < 0)
			v[i] = 0;
	return 0;
}

const struct pcb_engine_ops pcb_engine_pagecache = {
	.name = "pagecache",
	.what = "this library, configured by --budget and --set",
	.start = pcx_start,
	.stop = pcx_stop,
	.open = pcx_open,
	.pread = pcx_pread,
	.pread_cached = pcx_pread_cached,
	.pwrite = pcx_pwrite,
	.fsync = pcx_fsync,
	.ftruncate = pcx_ftruncate,
	.fadvise = pcx_fadvise,
	.close = pcx_close,
	.unlink = pcx_unlink,
	.page_get = pcx_page_get,
	.page_put = pcx_page_put,
	.thread_set_node = pcx_thread_set_node,
	.vmstat = pcx_vmstat,
	.sample = pcx_sample,
};
