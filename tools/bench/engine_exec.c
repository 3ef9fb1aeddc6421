/*
 * tools/bench/engine_exec.c - the pagecache engine as a program workload's
 * repetition has it (program.c): the program runs under `pagecache exec`
 * in a shared cache of its own, so there is no cache in the repetition,
 * only what the program's processes leave and publish.
 *
 *   counters   those of the --stats files of the processes that have
 *              exited (pcb_exec_add_stats, when program.c has reaped the
 *              program), plus the live records of those still running
 *              (every counter at most PC_LIVE_ALL_TICKS ticks old)
 *   samples    the live records (preload/live.h) the program's processes
 *              publish in the repetition's folder "pagecache-live/"
 *              (PAGECACHE_LIVE in the program's environment, made by
 *              program.c from pcb_exec_live_dir), read by the sampler
 *              thread, so the page counts lie on the same time axis as
 *              the kernel's cgroup's
 *
 * Summing the records: a process's own counters add up over the
 * processes; the shared cache's counters are the same in each record and
 * in each stats file, so the largest is taken, not the sum (live_total).
 * A record is read whole or not at all (its seq, even, the same before
 * and after the values), and a killed process's stale record is skipped
 * (its pid gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "../../preload/live.h"

struct exec_eng {
	json_t *stats;		/* every counter of the programs run so far */
	char live[1100];	/* PAGECACHE_LIVE: the programs' records */
};

static int exec_start(struct pcb_run *r)
{
	struct exec_eng *e = calloc(1, sizeof(*e));
	char abs[PATH_MAX];
	int err;

	if (!e)
		return -ENOMEM;
	/* absolute: the program's processes may change directory */
	pcb_path(r, e->live, sizeof(e->live), "pagecache-live");
	if ((err = pcb_mkdir(e->live)) < 0 || !realpath(e->live, abs)) {
		err = pcb_fail(r, err < 0 ? err : -errno, "cannot make %s",
			       e->live);
		free(e);
		return err;
	}
	pcb_fmt(e->live, sizeof(e->live), "%s", abs);
	e->stats = json_object();
	r->eng = e;
	return 0;
}

static int exec_stop(struct pcb_run *r)
{
	struct exec_eng *e = r->eng;

	if (e) {
		pcb_rmtree(e->live);	/* records of processes killed */
		json_decref(e->stats);
		free(e);
	}
	r->eng = NULL;
	return 0;
}

#define LIVE_MAX	(64 << 10)	/* a record's most bytes we read */

static bool live_read(int fd, const char *name, struct pc_live *rec);

/*
 * Call @fn on the live record of every process of the program now (the
 * sampler thread, and the main thread at the steady state); the number
 * of records.
 */
static int live_each(struct exec_eng *e, void (*fn)(const struct pc_live *,
						    void *), void *arg)
{
	struct pc_live *rec = malloc(LIVE_MAX);
	DIR *d = rec ? opendir(e->live) : NULL;
	struct dirent *de;
	int found = 0;

	while (d && (de = readdir(d))) {
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    (fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (live_read(fd, de->d_name, rec)) {
			fn(rec, arg);
			found++;
		}
		close(fd);
	}
	if (d)
		closedir(d);
	free(rec);
	return found;
}

/* Counter @i of @rec is a shared cache's: the same in every record, and
 * in the stats file (live.h): the largest is taken, not the sum. */
static bool live_total(const struct pc_live *rec, uint32_t i)
{
	return rec->shared && i < rec->nr_cache;
}

static void live_add(const struct pc_live *rec, void *arg)
{
	json_t *o = arg;

	for (uint32_t i = 0; i < rec->nr; i++) {
		char name[sizeof(rec->c[i].name) + 1];
		json_int_t v = (json_int_t)rec->c[i].value, had;
		json_t *old;

		memcpy(name, rec->c[i].name, sizeof(rec->c[i].name));
		name[sizeof(rec->c[i].name)] = 0;
		old = json_object_get(o, name);
		had = json_is_integer(old) ? json_integer_value(old) : 0;
		json_object_set_new(o, name, json_integer(
			live_total(rec, i) ? (v > had ? v : had) : v + had));
	}
}

/* The counters of the programs that have exited (their --stats files),
 * and of those running (their live records: every counter is at most
 * PC_LIVE_ALL_TICKS ticks old), summed. */
static json_t *exec_vmstat(struct pcb_run *r)
{
	struct exec_eng *e = r->eng;
	json_t *o = json_deep_copy(e->stats);

	if (o)
		live_each(e, live_add, o);
	return o;
}

/* One process's record @fd into @rec (LIVE_MAX bytes): whole, its magic
 * and pid right, the pid alive (a killed process leaves its file). */
static bool live_read(int fd, const char *name, struct pc_live *rec)
{
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = pread(fd, rec, LIVE_MAX, 0);
		uint64_t seq;
		size_t need;

		if (n < (ssize_t)sizeof(*rec) ||
		    memcmp(rec->magic, PC_LIVE_MAGIC, sizeof(rec->magic)))
			return false;
		need = sizeof(*rec) + (size_t)rec->nr * sizeof(rec->c[0]);
		if ((size_t)n < need || rec->pid != strtoul(name, NULL, 10) ||
		    (kill((pid_t)rec->pid, 0) < 0 && errno == ESRCH))
			return false;
		/* the values were copied after rec->seq: the same seq, even,
		 * read again after them, and none was written in between */
		if (pread(fd, &seq, sizeof(seq), offsetof(struct pc_live, seq)) ==
		    (ssize_t)sizeof(seq) && seq == rec->seq && !(seq & 1))
			return true;
	}
	return false;
}

/*
 * The program's page counts now: the live records summed.  -EAGAIN when
 * there is none (the program has not made its cache yet, or has exited):
 * the sampler skips the moment rather than draw an empty cache.  Runs in
 * the sampler thread.
 */
static void sample_add(const struct pc_live *rec, void *arg)
{
	uint64_t *v = arg;

	for (uint32_t i = 0; i < rec->nr; i++)
		for (int k = 0; k < PCB_NR_SAMPLES; k++)
			if (!strncmp(rec->c[i].name, pcb_pc_sample_counters[k],
				     sizeof(rec->c[i].name)))
				v[k] = live_total(rec, i)
					? (v[k] > rec->c[i].value ? v[k]
								 : rec->c[i].value)
					: v[k] + rec->c[i].value;
}

static int exec_sample(struct pcb_run *r, uint64_t v[PCB_NR_SAMPLES])
{
	return live_each(r->eng, sample_add, v) ? 0 : -EAGAIN;
}

const struct pcb_engine_ops pcb_engine_exec = {
	.name = "pagecache",
	.what = "the program under `pagecache exec` (program workloads)",
	.start = exec_start,
	.stop = exec_stop,
	.vmstat = exec_vmstat,
	.sample = exec_sample,
};

const struct pcb_engine_ops *pcb_program_engine(const struct pcb_engine_ops *e)
{
	return e == &pcb_engine_pagecache ? &pcb_engine_exec : e;
}

enum pcb_prog_mode pcb_prog_mode(const struct pcb_run *r)
{
	if (r->ops == &pcb_engine_exec)
		return PCB_PROG_PAGECACHE;
	return r->ops == &pcb_engine_direct ? PCB_PROG_DIRECT : PCB_PROG_KERNEL;
}

void pcb_exec_add_stats(struct pcb_run *r, const char *path)
{
	struct exec_eng *e = r->eng;
	char name[128];
	unsigned long long v;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fscanf(f, "%127s %llu", name, &v) == 2) {
		json_t *old = json_object_get(e->stats, name);
		json_int_t sum = (json_int_t)v +
				 (json_is_integer(old) ? json_integer_value(old) : 0);

		json_object_set_new(e->stats, name, json_integer(sum));
	}
	fclose(f);
}

const char *pcb_exec_live_dir(const struct pcb_run *r)
{
	return ((const struct exec_eng *)r->eng)->live;
}
