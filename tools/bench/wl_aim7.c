/*
 * tools/bench/wl_aim7.c - AIM Suite VII's disk tasks, as LKP runs them
 * (seed 000: disk_wrt lost 13.6% once written pages were marked accessed;
 * disk_rr lost 17-20%).
 *
 * N users (8 x CPUs), each a thread running 20 jobs of one task, in 1 KiB
 * blocks, on files of K = 1024 + 10240/N KiB:
 *   disk_wrt      create, unlink at once, write K blocks, close: the dirty
 *                 pages die with the file, nothing should reach the disk
 *   disk_rr       create, write K blocks, reopen read-only, unlink, K reads
 *                 at random blocks
 *   disk_rw       as disk_rr with K random overwrites
 *   disk_rd       read a shared file of K blocks sequentially
 *   disk_cp       read the shared file, write a copy to a new unlinked file
 *   sync_disk_rw  write K/2 blocks, reopen O_SYNC, K/2 random sync writes
 *   creat-clo     1000 x (create + close) of one name, then unlink
 * Each user first runs one job of its task as the warm-up (its files'
 * pages made once, the ones its next files take).
 * Headline: jobs per minute, jobs done / wall seconds x 60.  1 KiB blocks
 * are not O_DIRECT's to serve: the direct engine is n/a but for creat-clo.
 *
 * Each user thread owns its files, buffer and random stream; the jobs it
 * finished go in its own slot, summed by the main thread after the join.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLOCK 1024

enum task { DISK_WRT, DISK_RR, DISK_RW, DISK_RD, DISK_CP, SYNC_DISK_RW, CREAT_CLO };

struct aim7 {
	enum task task;
	int njobs;			/* each user's, in this pass */
	int64_t *jobs;			/* per user: done */
};

static void params(struct pcb_params *p, const struct pcb_opts *o)
{
	int users = 8 * o->cpus;

	pcb_param_set(p, "users", users);
	pcb_param_set(p, "jobs", 20);
	pcb_param_set(p, "warmup_jobs", 1);
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "file_blocks", 1024 + 10240 / users);
	pcb_param_set(p, "creates", 1000);
}

static uint64_t disk(const struct pcb_params *p)
{
	/* every user's file at once, and the shared one */
	return (uint64_t)((pcb_param(p, "users") + 1) * pcb_param(p, "file_blocks") *
			  BLOCK);
}

static int prepare_shared(struct pcb_run *r)
{
	char path[1100];
	int err = pcb_make_file(pcb_path(r, path, sizeof(path), "shared"),
				(uint64_t)(pcb_param(r->par, "file_blocks") * BLOCK),
				false);

	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

/* Helpers that record what failed.  Each returns 0 or -errno. */
static int xopen(struct pcb_run *r, const char *path, int flags,
		 struct pcb_file **f)
{
	int err = pcb_open(r, path, flags, f);

	return err < 0 ? pcb_fail(r, err, "open %s: %s", path, strerror(-err)) : 0;
}

static int xwrite(struct pcb_run *r, struct pcb_file *f, const void *buf,
		  int64_t block)
{
	ssize_t n = r->ops->pwrite(f, buf, BLOCK, (off_t)(block * BLOCK));

	return n < 0 ? pcb_fail(r, (int)n, "pwrite: %s", strerror((int)-n)) : 0;
}

static int xread(struct pcb_run *r, struct pcb_file *f, void *buf, int64_t block)
{
	ssize_t n = r->ops->pread(f, buf, BLOCK, (off_t)(block * BLOCK));

	return n < 0 ? pcb_fail(r, (int)n, "pread: %s", strerror((int)-n)) : 0;
}

static int xunlink(struct pcb_run *r, const char *path)
{
	int err = r->ops->unlink(r, path);

	return err < 0 ? pcb_fail(r, err, "unlink %s: %s", path, strerror(-err)) : 0;
}

static int one_job(struct pcb_run *r, enum task task, const char *path,
		   void *buf, uint64_t *seed)
{
	int64_t k = pcb_param(r->par, "file_blocks");
	struct pcb_file *f = NULL, *g = NULL;
	char shared[1100];
	int err = 0;

	pcb_path(r, shared, sizeof(shared), "shared");
	switch (task) {
	case DISK_WRT:
		err = xopen(r, path, O_CREAT | O_TRUNC | O_RDWR, &f);
		if (!err)
			err = xunlink(r, path);
		for (int64_t b = 0; b < k && !err; b++)
			err = xwrite(r, f, buf, b);
		break;
	case DISK_RR:
	case DISK_RW:
		err = xopen(r, path, O_CREAT | O_TRUNC | O_RDWR, &f);
		for (int64_t b = 0; b < k && !err; b++)
			err = xwrite(r, f, buf, b);
		if (f)
			r->ops->close(f);
		f = NULL;
		if (!err)
			err = xopen(r, path, task == DISK_RR ? O_RDONLY : O_RDWR, &f);
		if (!err)
			err = xunlink(r, path);
		for (int64_t b = 0; b < k && !err; b++) {
			int64_t at = (int64_t)(pcb_rand(seed) % (uint64_t)k);

			err = task == DISK_RR ? xread(r, f, buf, at) : xwrite(r, f, buf, at);
		}
		break;
	case DISK_RD:
		err = xopen(r, shared, O_RDONLY, &f);
		for (int64_t b = 0; b < k && !err; b++)
			err = xread(r, f, buf, b);
		break;
	case DISK_CP:
		err = xopen(r, shared, O_RDONLY, &g);
		if (!err)
			err = xopen(r, path, O_CREAT | O_TRUNC | O_WRONLY, &f);
		if (!err)
			err = xunlink(r, path);
		for (int64_t b = 0; b < k && !err; b++) {
			err = xread(r, g, buf, b);
			if (!err)
				err = xwrite(r, f, buf, b);
		}
		break;
	case SYNC_DISK_RW:
		err = xopen(r, path, O_CREAT | O_TRUNC | O_WRONLY, &f);
		for (int64_t b = 0; b < k / 2 && !err; b++)
			err = xwrite(r, f, buf, b);
		if (f)
			r->ops->close(f);
		f = NULL;
		if (!err)
			err = xopen(r, path, O_WRONLY | O_SYNC, &f);
		for (int64_t b = 0; b < k / 2 && !err; b++) {
			err = xwrite(r, f, buf, (int64_t)(pcb_rand(seed) % (uint64_t)(k / 2)));
			if (pcb_stop)
				err = -EINTR;
		}
		if (!err)
			err = xunlink(r, path);
		break;
	case CREAT_CLO:
		for (int64_t i = 0; i < pcb_param(r->par, "creates") && !err; i++) {
			err = xopen(r, path, O_CREAT | O_TRUNC | O_WRONLY, &f);
			if (!err)
				err = r->ops->close(f);
			f = NULL;
		}
		if (!err)
			err = xunlink(r, path);
		break;
	}
	if (f)
		r->ops->close(f);
	if (g)
		r->ops->close(g);
	return err;
}

static int user(struct pcb_run *r, int i, void *arg)
{
	struct aim7 *a = arg;
	uint64_t seed = 0xa173ull + (uint64_t)i;
	char path[1100];
	void *buf = pcb_buf(BLOCK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	pcb_path(r, path, sizeof(path), "user%d", i);
	for (int j = 0; j < a->njobs && !err; j++) {
		if (pcb_time_up(r)) {
			r->capped = !pcb_stop;
			break;
		}
		err = one_job(r, a->task, path, buf, &seed);
		if (!err)
			a->jobs[i]++;
	}
	free(buf);
	return err == -EINTR && pcb_stop ? 0 : err;
}

static int run(struct pcb_run *r, enum task task)
{
	int users = (int)pcb_param(r->par, "users");
	struct aim7 a = { .task = task, .jobs = calloc((size_t)users, sizeof(int64_t)) };
	double jobs = 0, secs;
	int err;

	if (!a.jobs)
		return -ENOMEM;
	err = 0;
	if (pcb_warming(r)) {
		a.njobs = (int)pcb_param(r->par, "warmup_jobs");
		err = pcb_threads(r, users, user, &a);
		memset(a.jobs, 0, (size_t)users * sizeof(int64_t));
	}
	if (!err) {
		pcb_steady(r);
		a.njobs = (int)pcb_param(r->par, "jobs");
		err = pcb_threads(r, users, user, &a);
	}
	secs = pcb_secs(pcb_now_ns() - r->t0_ns);
	for (int i = 0; i < users; i++)
		jobs += (double)a.jobs[i];
	free(a.jobs);
	if (err < 0)
		return err;
	pcb_metric(r, "jobs-per-min", jobs / secs * 60);
	pcb_metric(r, "seconds", secs);
	pcb_metric(r, "jobs", jobs);
	pcb_direction(r, "jobs", true);
	return 0;
}

/* disk_wrt: what reached the disk, which should be nothing. */
static void derive_written(struct pcb_run *r)
{
	double pages;

	if (pcb_vm(r, "nr_written", &pages)) {
		pcb_metric(r, "written-MB", pages * 4096 / 1e6);
		pcb_direction(r, "written-MB", false);
	}
}

#define TASK(id, tname, fn_task, desc, eng, prep, suite, drv)		\
	static int run_##id(struct pcb_run *r) { return run(r, fn_task); } \
	PCB_WORKLOAD(aim7_##id) = {					\
		.name = "aim7-" tname,					\
		.group = "aim7",					\
		.what = desc,						\
		.metric = "jobs-per-min",				\
		.in_suite = suite,					\
		.engines = eng,						\
		.warmup = "one job a user",				\
		.na_reason = "1 KiB blocks: O_DIRECT cannot serve them", \
		.params = params,					\
		.disk = disk,						\
		.prepare = prep,					\
		.run = run_##id,					\
		.derive = drv,						\
	};

TASK(disk_wrt, "disk_wrt", DISK_WRT,
     "create, unlink, write K 1 KiB blocks, close (seed 000)",
     PCB_ENG_CACHED, NULL, true, derive_written)
TASK(disk_rr, "disk_rr", DISK_RR,
     "write K blocks, reopen, unlink, K random 1 KiB reads (seed 000)",
     PCB_ENG_CACHED, NULL, true, NULL)
TASK(disk_rw, "disk_rw", DISK_RW,
     "write K blocks, reopen, unlink, K random 1 KiB overwrites",
     PCB_ENG_CACHED, NULL, false, NULL)
TASK(disk_rd, "disk_rd", DISK_RD,
     "read a shared file of K 1 KiB blocks sequentially",
     PCB_ENG_CACHED, prepare_shared, false, NULL)
TASK(disk_cp, "disk_cp", DISK_CP,
     "copy the shared file to a new unlinked file, 1 KiB blocks",
     PCB_ENG_CACHED, prepare_shared, false, NULL)
TASK(sync_disk_rw, "sync_disk_rw", SYNC_DISK_RW,
     "write K/2 blocks, reopen O_SYNC, K/2 random 1 KiB sync writes",
     PCB_ENG_CACHED, NULL, false, NULL)
TASK(creat_clo, "creat-clo", CREAT_CLO,
     "1000 x (create + close) of one name, then unlink",
     PCB_ENG_ALL, NULL, false, NULL)
