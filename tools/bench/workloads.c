/*
 * tools/bench/workloads.c - the tables: engines, workloads, parameters.
 *
 * Each workload is defined next to its code (wl_*.c) as one struct
 * pcb_workload: name, parameters scaled from the budget, the run
 * function, the headline metric and its direction, and the engines that
 * can serve it.  This file only lists them, in the order they run and
 * are listed by --list.  Adding a workload is: a wl_<name>.c defining
 * `const struct pcb_workload pcb_wl_<name>`, and one line in each of the
 * two lists below.
 *
 * Everything here is read-only after start; the parameter sets are filled
 * by the parent before a run and read by its child.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const struct pcb_engine_ops *const pcb_engines[PCB_NR_ENGINES] = {
	[PCB_PAGECACHE] = &pcb_engine_pagecache,
	[PCB_KERNEL] = &pcb_engine_kernel,
	[PCB_DONTCACHE] = &pcb_engine_dontcache,
	[PCB_DIRECT] = &pcb_engine_direct,
	[PCB_LIMIT] = &pcb_engine_limit,
};

const char *const pcb_sample_names[PCB_NR_SAMPLES] = {
	"free", "inactive", "active", "dirty", "writeback"
};

int pcb_engine_find(const char *name)
{
	for (int i = 0; i < PCB_NR_ENGINES; i++)
		if (strcmp(pcb_engines[i]->name, name) == 0)
			return i;
	return -ENOENT;
}

extern const struct pcb_workload pcb_wl_seq_write, pcb_wl_dd_async,
	pcb_wl_readtwice, pcb_wl_readonce, pcb_wl_readonce_1,
	pcb_wl_aim7_disk_wrt, pcb_wl_aim7_disk_rr, pcb_wl_aim7_disk_rw,
	pcb_wl_aim7_disk_rd, pcb_wl_aim7_disk_cp, pcb_wl_aim7_sync_disk_rw,
	pcb_wl_aim7_creat_clo,
	pcb_wl_fsmark_4m, pcb_wl_fsmark_8k,
	pcb_wl_tiobench_t1, pcb_wl_tiobench_t2, pcb_wl_tiobench_t4,
	pcb_wl_hotcold, pcb_wl_cached_read_t1, pcb_wl_cached_read_t2,
	pcb_wl_randread_cold_t1, pcb_wl_randread_cold_t2,
	pcb_wl_randread_cold_t8;
extern const struct pcb_workload pcb_wl_numa_shuffle, pcb_wl_numa_shuffle_full;
extern const struct pcb_workload pcb_wl_fio_randread, pcb_wl_fio_seqwrite,
	pcb_wl_fio_zipf, pcb_wl_rocksdb_readrandom, pcb_wl_rocksdb_fillseq,
	pcb_wl_sqlite_oltp;

const struct pcb_workload *const pcb_workloads[] = {
	&pcb_wl_seq_write,		/* wl_write.c */
	&pcb_wl_dd_async,
	&pcb_wl_readtwice,		/* wl_read.c */
	&pcb_wl_readonce,
	&pcb_wl_readonce_1,
	&pcb_wl_aim7_disk_wrt,		/* wl_aim7.c */
	&pcb_wl_aim7_disk_rr,
	&pcb_wl_aim7_disk_rw,
	&pcb_wl_aim7_disk_rd,
	&pcb_wl_aim7_disk_cp,
	&pcb_wl_aim7_sync_disk_rw,
	&pcb_wl_aim7_creat_clo,
	&pcb_wl_fsmark_4m,		/* wl_fsmark.c */
	&pcb_wl_fsmark_8k,
	&pcb_wl_tiobench_t1,		/* wl_tiobench.c */
	&pcb_wl_tiobench_t2,
	&pcb_wl_tiobench_t4,
	&pcb_wl_hotcold,		/* wl_cache.c */
	&pcb_wl_cached_read_t1,
	&pcb_wl_cached_read_t2,
	&pcb_wl_randread_cold_t1,	/* wl_randread.c */
	&pcb_wl_randread_cold_t2,
	&pcb_wl_randread_cold_t8,
	&pcb_wl_numa_shuffle, &pcb_wl_numa_shuffle_full,	/* wl_numa.c */
	&pcb_wl_fio_randread, &pcb_wl_fio_seqwrite, &pcb_wl_fio_zipf, /* wl_fio.c */
	&pcb_wl_rocksdb_readrandom, &pcb_wl_rocksdb_fillseq,	/* wl_rocksdb.c */
	&pcb_wl_sqlite_oltp,		/* wl_sqlite.c */
};

const int pcb_nr_workloads = (int)(sizeof(pcb_workloads) /
				   sizeof(pcb_workloads[0]));

int pcb_workload_find(const char *name)
{
	for (int i = 0; i < pcb_nr_workloads; i++)
		if (strcmp(pcb_workloads[i]->name, name) == 0)
			return i;
	return -ENOENT;
}

void pcb_param_set(struct pcb_params *p, const char *name, int64_t v)
{
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->p[i].name, name) == 0) {
			p->p[i].v = v;
			return;
		}
	if (p->n == PCB_MAX_PARAMS) {
		fprintf(stderr, "pagecache bench: too many parameters (%s)\n",
			name);
		abort();
	}
	p->p[p->n].name = name;
	p->p[p->n].v = v;
	p->n++;
}

int64_t pcb_param(const struct pcb_params *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->p[i].name, name) == 0)
			return p->p[i].v;
	/* a workload asking for what its params() did not set: a bug */
	fprintf(stderr, "pagecache bench: no parameter %s\n", name);
	abort();
}

json_t *pcb_params_json(const struct pcb_params *p)
{
	json_t *o = json_object();

	for (int i = 0; i < p->n; i++)
		json_object_set_new(o, p->p[i].name, json_integer(p->p[i].v));
	return o;
}
