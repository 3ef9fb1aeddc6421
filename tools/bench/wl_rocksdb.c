/*
 * tools/bench/wl_rocksdb.c - RocksDB's db_bench (Debian's rocksdb-tools),
 * unmodified, as two workloads (docs/workloads.md, "Real programs"; program.c
 * runs it under each engine).
 *
 *   rocksdb-readrandom  a DB of about 4 x B (16-byte keys, 400-byte values,
 *                       no compression: the DB's size on disk is its data)
 *                       made once per run, then readrandom with an 8 MiB
 *                       block cache, 2 threads, for --duration (db_bench
 *                       counts whole seconds: at least 1).  Headline ops/s;
 *                       latency mean and p99 from db_bench's histogram.
 *   rocksdb-fillseq     fillseq of a new DB, WAL on (not synced per
 *                       write: db_bench's default), for --duration (whole
 *                       seconds; --num, 4 x B of data, is then only its
 *                       key space's bound).  Headline ops/s.
 *
 * Steady state: readrandom's run is `readseq,readrandom` on an engine with
 * a cache, readseq (--reads: B of the DB's first keys, each thread) the
 * warm-up: the cache full of the DB, for reads that are uniform over it
 * any B serves as well as another.  db_bench prints (and flushes) each
 * benchmark's report line as it ends: "readseq :" in its stdout ends the
 * lab's warm-up (pcb_steady, program.c); readrandom, time-bounded, is not
 * held to --reads.  fillseq makes a new DB (db_bench destroys it first):
 * no warm-up could stay in its cache, so it is measured from its start.
 *
 * The DB is made by `filluniquerandom,compact`: fillrandom's unique-key
 * form, so that the DB holds 4 x B of data (fillrandom draws keys with
 * repeats and keeps about 63% of what it writes), then one full
 * compaction, bulk-load settings (no WAL, vector memtable, no automatic
 * compactions) since only the result matters.  readrandom opens it with
 * automatic compactions off, so no engine's run rewrites what the next
 * one reads.  The random seed is fixed: every engine reads the same keys.
 *
 * db_bench's report is text: "<bench> : X micros/op Y ops/sec ...", then
 * with --histogram "Count: N Average: A ..." and "Percentiles: P50: ...
 * P99: ...".  Both run for a set time, so neither is stopped at a cap:
 * db_bench killed has no report (its stdout, a file, is block-buffered).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define KEY_SIZE	16
#define VALUE_SIZE	400
#define BLOCK_CACHE	(8 << 20)
#define SEED		1

static void params(struct pcb_params *p, const struct pcb_opts *o, int times,
		   int threads)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "keys", (int64_t)(times * o->budget /
					   (KEY_SIZE + VALUE_SIZE)));
	pcb_param_set(p, "key_size", KEY_SIZE);
	pcb_param_set(p, "value_size", VALUE_SIZE);
	pcb_param_set(p, "block_cache", BLOCK_CACHE);
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "seed", SEED);
	pcb_param_set(p, "warmup_keys", (int64_t)(o->budget / (KEY_SIZE + VALUE_SIZE)));
}

static void params_readrandom(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 4, 2);
}

static void params_fillseq(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 4, 1);
}

static uint64_t disk(const struct pcb_params *p)
{
	/* the data, and room for what a compaction writes beside it */
	return (uint64_t)pcb_param(p, "keys") * (KEY_SIZE + VALUE_SIZE) * 2;
}

/* What every db_bench run here shares. */
static void db_args(struct pcb_run *r, struct pcb_args *a, const char *bench,
		    const char *db)
{
	pcb_arg(a, "db_bench");
	pcb_arg(a, "--benchmarks=%s", bench);
	pcb_arg(a, "--db=%s", db);
	pcb_arg(a, "--num=%lld", (long long)pcb_param(r->par, "keys"));
	pcb_arg(a, "--key_size=%d", KEY_SIZE);
	pcb_arg(a, "--value_size=%d", VALUE_SIZE);
	pcb_arg(a, "--compression_type=none");
	pcb_arg(a, "--seed=%d", SEED);
}

static int make_db(struct pcb_run *r, const char *dir)
{
	struct pcb_args a = { .n = 0 };
	struct pcb_prog p = { .name = "db_bench-prepare", .plain = true };
	char db[1200];

	pcb_fmt(db, sizeof(db), "%s/db", dir);
	db_args(r, &a, "filluniquerandom,compact", db);
	pcb_arg(&a, "--disable_wal=1");
	pcb_arg(&a, "--memtablerep=vector");
	pcb_arg(&a, "--allow_concurrent_memtable_write=false");
	pcb_arg(&a, "--disable_auto_compactions=1");
	p.argv = a.v;
	return pcb_prog_run(r, &p);
}

/* The number after @key on the line that starts with @line; NaN if none. */
static double field(const char *text, const char *line, const char *key)
{
	size_t n = strlen(line);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l += l != NULL) {
		const char *k, *eol = strchr(l, '\n');

		if (strncmp(l, line, n) != 0)
			continue;
		k = strstr(l, key);
		if (k && (!eol || k < eol))
			return strtod(k + strlen(key), NULL);
	}
	return __builtin_nan("");
}

/* "readrandom   :      37.858 micros/op 52754 ops/sec ..." */
static double ops_per_sec(const char *text, const char *bench)
{
	char line[64];

	pcb_fmt(line, sizeof(line), "%s ", bench);
	return field(text, line, "micros/op ");
}

static void report(struct pcb_run *r, const char *text, const char *bench)
{
	pcb_metric(r, "ops/s", ops_per_sec(text, bench));
	pcb_metric(r, "latency-mean-us", field(text, "Count: ", "Average: "));
	pcb_direction(r, "latency-mean-us", false);
	pcb_metric(r, "latency-p99-us", field(text, "Percentiles: ", "P99: "));
	pcb_direction(r, "latency-p99-us", false);
}

/* db_bench as @a says, for --duration, and its report of @bench; @warm:
 * the benchmark before it is the warm-up, ending at its report line. */
static int run_db(struct pcb_run *r, struct pcb_args *a, const char *bench,
		  const char *warm)
{
	struct pcb_prog p = { .name = "db_bench", .steady_text = warm };
	int secs = (int)(r->opt->duration + 0.5), err;
	char *text;

	pcb_arg(a, "--duration=%d", secs < 1 ? 1 : secs);
	pcb_arg(a, "--histogram=1");
	p.argv = a->v;
	if ((err = pcb_prog_run(r, &p)))
		return err;
	if (pcb_warming(r))
		return pcb_fail(r, -EIO, "db_bench's warm-up did not end (no \"%s\" "
				"in %s)", warm, p.out);
	text = pcb_prog_slurp(p.out);
	if (text)
		report(r, text, bench);
	free(text);
	return 0;
}

static int run_readrandom(struct pcb_run *r)
{
	struct pcb_args a = { .n = 0 };
	char db[1200];

	bool warm = pcb_warming(r);

	pcb_fmt(db, sizeof(db), "%s/db", r->prep);
	db_args(r, &a, warm ? "readseq,readrandom" : "readrandom", db);
	if (warm)
		pcb_arg(&a, "--reads=%lld", (long long)pcb_param(r->par, "warmup_keys"));
	pcb_arg(&a, "--use_existing_db=1");
	pcb_arg(&a, "--disable_auto_compactions=1");
	pcb_arg(&a, "--threads=%d", (int)pcb_param(r->par, "threads"));
	pcb_arg(&a, "--cache_size=%d", BLOCK_CACHE);
	return run_db(r, &a, "readrandom", warm ? "readseq " : NULL);
}

static int run_fillseq(struct pcb_run *r)
{
	struct pcb_args a = { .n = 0 };

	db_args(r, &a, "fillseq", "db");
	pcb_arg(&a, "--threads=1");
	return run_db(r, &a, "fillseq", NULL);
}

/* What the two share. */
#define DB_COMMON \
	.group = "rocksdb", \
	.metric = "ops/s", \
	.timed = true, \
	.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL), \
	.na_reason = "db_bench chooses its own I/O: it runs under pagecache " \
		     "or the kernel's page cache only", \
	.disk = disk

PCB_WORKLOAD(rocksdb_readrandom) = {
	DB_COMMON,
	.name = "rocksdb-readrandom",
	.what = "db_bench readrandom, 2 threads, 8 MiB block cache, a 4xB DB",
	.in_suite = true,
	.warmup = "readseq of B of the DB (--reads), in the same db_bench",
	.params = params_readrandom,
	.run = run_readrandom,
	.program = { "db_bench", "rocksdb-tools", make_db },
};

PCB_WORKLOAD(rocksdb_fillseq) = {
	DB_COMMON,
	.name = "rocksdb-fillseq",
	.what = "db_bench fillseq, WAL on, for --duration",
	.params = params_fillseq,
	.run = run_fillseq,
	.program = { "db_bench", "rocksdb-tools", NULL },
};
