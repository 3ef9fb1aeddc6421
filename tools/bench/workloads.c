/*
 * tools/bench/workloads.c - the tables: engines, workloads, parameters.
 *
 * Each workload is defined next to its code (wl_*.c) as one struct
 * pcb_workload: name, parameters scaled from the budget, the run
 * function, the headline metric and its direction, and the engines that
 * can serve it.  PCB_WORKLOAD (bench.h) puts an entry for it in the
 * linker section pcb_workloads; this file makes the table from the
 * section at its first use: ordered by file name, then line (the linker
 * keeps the files' order, not necessarily a file's own), the order they
 * run in and --list shows.  The default suite is the workloads with
 * .in_suite.
 *
 * Everything here is read-only once made (by the parent, before any
 * child); the parameter sets are filled by the parent before a run and
 * read by its child.
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

extern const struct pcb_workload_entry __start_pcb_workloads[];
extern const struct pcb_workload_entry __stop_pcb_workloads[];

#define MAX_WORKLOADS 64
static const struct pcb_workload *table[MAX_WORKLOADS];
static int nr_table = -1;

static int entry_cmp(const void *a, const void *b)
{
	const struct pcb_workload_entry *x = a, *y = b;
	int c = strcmp(x->file, y->file);

	return c ? c : x->line - y->line;
}

static void make_table(void)
{
	size_t n = (size_t)(__stop_pcb_workloads - __start_pcb_workloads);
	struct pcb_workload_entry e[MAX_WORKLOADS];

	if (n > MAX_WORKLOADS) {
		fprintf(stderr, "pagecache bench: more than %d workloads\n",
			MAX_WORKLOADS);
		abort();
	}
	memcpy(e, __start_pcb_workloads, n * sizeof(e[0]));
	qsort(e, n, sizeof(e[0]), entry_cmp);
	for (size_t i = 0; i < n; i++)
		table[i] = e[i].wl;
	nr_table = (int)n;
}

int pcb_nr_workloads(void)
{
	if (nr_table < 0)
		make_table();
	return nr_table;
}

const struct pcb_workload *pcb_workload(int i)
{
	return i >= 0 && i < pcb_nr_workloads() ? table[i] : NULL;
}

int pcb_workload_find(const char *name)
{
	for (int i = 0; i < pcb_nr_workloads(); i++)
		if (strcmp(table[i]->name, name) == 0)
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
