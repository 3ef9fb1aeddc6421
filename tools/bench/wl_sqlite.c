/*
 * tools/bench/wl_sqlite.c - sqlite-oltp: the sqlite3 shell, unmodified,
 * running a TPC-B-like script (pgbench's "tpcb-like" transaction) on a
 * database of about 4 x B (docs/workloads.md, "Real programs"; program.c runs
 * it under each engine).
 *
 * The database, made once per run (program.c) by sqlite3 itself:
 *
 *   branches(bid, bbalance, filler)        accounts / 100000 of them
 *   tellers(tid, bid, tbalance, filler)    10 a branch
 *   accounts(aid, bid, abalance, filler)   4 x B / 100 (~100 bytes a row)
 *   history(tid, bid, aid, delta, mtime, filler)   empty
 *
 * Each repetition then runs a fixed number of transactions (the script is
 * written before the measured part, from a fixed seed: every engine runs
 * the same one), in the default rollback journal (journal_mode=DELETE,
 * synchronous=FULL: each commit is durable), each
 *
 *   BEGIN; UPDATE accounts ... WHERE aid=A; SELECT abalance ... aid=A;
 *   UPDATE tellers ... tid=T; UPDATE branches ... bid=B;
 *   INSERT INTO history ...; COMMIT;
 *
 * with A, T, B uniformly random.  On an engine with a cache the script
 * starts with the warm-up: a scan of B of the accounts table (the first
 * B / 100 rows: the cache full of the database, for accounts drawn
 * uniformly any B serves as well as another), then WARMUP_TRANSACTIONS
 * of the same transactions (the journal's life, SQLite's own cache);
 * then `.output steady` makes the file that ends the lab's warm-up
 * (pcb_steady, program.c).  Every MARK_EVERY transactions (10: a
 * run cut to a second by --max-time still has marks) the script
 * prints "pcb-mark <done> <unix seconds>" (julianday('now'): milliseconds);
 * transactions/s is the marks' count over their time, so the shell's
 * start-up and the database's open are not in it, and a run stopped at the
 * cap (SIGINT: the shell stops after the current statement) still has a
 * rate.  The repetitions share the database: each adds its history rows
 * and moves balances, which leaves its size as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define ROW_BYTES	100
#define PER_BRANCH	100000
#define TELLERS		10
#define TRANSACTIONS	1000
#define WARMUP_TRANSACTIONS	100
#define STEADY_FILE	"steady"
#define MARK_EVERY	10
#define SEED		0x7bcbull

static void params(struct pcb_params *p, const struct pcb_opts *o)
{
	int64_t accounts = (int64_t)(4 * o->budget / ROW_BYTES);
	int64_t branches = (accounts + PER_BRANCH - 1) / PER_BRANCH;

	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "accounts", accounts);
	pcb_param_set(p, "branches", branches);
	pcb_param_set(p, "tellers", branches * TELLERS);
	pcb_param_set(p, "transactions", TRANSACTIONS);
	pcb_param_set(p, "warmup_rows", (int64_t)(o->budget / ROW_BYTES));
	pcb_param_set(p, "warmup_transactions", WARMUP_TRANSACTIONS);
	pcb_param_set(p, "seed", (int64_t)SEED);
}

static uint64_t disk(const struct pcb_params *p)
{
	/* the database, and its journal's worst case */
	return (uint64_t)pcb_param(p, "accounts") * ROW_BYTES * 11 / 10;
}

static const char *const schema =
	"PRAGMA page_size=4096;\n"
	"PRAGMA journal_mode=OFF;\n"
	"PRAGMA synchronous=OFF;\n"
	"CREATE TABLE branches(bid INTEGER PRIMARY KEY, bbalance INTEGER, filler TEXT);\n"
	"CREATE TABLE tellers(tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER, filler TEXT);\n"
	"CREATE TABLE accounts(aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER, filler TEXT);\n"
	"CREATE TABLE history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT, filler TEXT);\n"
	"BEGIN;\n";

/* INSERT INTO @table SELECT x, <cols> FROM 1..@n */
static void fill(FILE *f, const char *table, int64_t n, const char *cols)
{
	fprintf(f, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
		"FROM c WHERE x < %lld)\n INSERT INTO %s SELECT x, %s FROM c;\n",
		(long long)n, table, cols);
}

static int run_script(struct pcb_run *r, struct pcb_prog *p, const char *db,
		      const char *script)
{
	char *argv[] = { "sqlite3", "-bail", (char *)db, NULL };

	p->argv = argv;
	p->stdin_path = script;
	return pcb_prog_run(r, p);
}

static int make_db(struct pcb_run *r, const char *dir)
{
	struct pcb_prog p = { .name = "sqlite3-prepare", .plain = true };
	char script[1200], db[1200], cols[64];
	FILE *f;

	pcb_fmt(script, sizeof(script), "%s/schema.sql", dir);
	pcb_fmt(db, sizeof(db), "%s/oltp.db", dir);
	f = fopen(script, "we");
	if (!f)
		return pcb_fail(r, -errno, "cannot write %s", script);
	fputs(schema, f);
	fill(f, "branches", pcb_param(r->par, "branches"), "0, printf('%88s', '')");
	pcb_fmt(cols, sizeof(cols), "(x - 1) / %d + 1, 0, printf('%%84s', '')",
		TELLERS);
	fill(f, "tellers", pcb_param(r->par, "tellers"), cols);
	pcb_fmt(cols, sizeof(cols), "(x - 1) / %d + 1, 0, printf('%%84s', '')",
		PER_BRANCH);
	fill(f, "accounts", pcb_param(r->par, "accounts"), cols);
	fputs("COMMIT;\n", f);
	if (fclose(f) != 0)
		return pcb_fail(r, -EIO, "cannot write %s", script);
	return run_script(r, &p, db, script);
}

static void mark(FILE *f, int done)
{
	fprintf(f, "SELECT printf('pcb-mark %d %%.3f', "
		"(julianday('now') - 2440587.5) * 86400.0);\n", done);
}

/* One transaction from the stream @seed. */
static void transaction(struct pcb_run *r, FILE *f, uint64_t *seed)
{
	int64_t accounts = pcb_param(r->par, "accounts");
	int64_t tellers = pcb_param(r->par, "tellers");
	int64_t branches = pcb_param(r->par, "branches");
	long long aid = (long long)(pcb_rand(seed) % (uint64_t)accounts) + 1;
	long long tid = (long long)(pcb_rand(seed) % (uint64_t)tellers) + 1;
	long long bid = (long long)(pcb_rand(seed) % (uint64_t)branches) + 1;
	int delta = (int)(pcb_rand(seed) % 10001) - 5000;

	fprintf(f, "BEGIN;\n"
			"UPDATE accounts SET abalance = abalance + %d WHERE aid = %lld;\n"
			"SELECT abalance FROM accounts WHERE aid = %lld;\n"
			"UPDATE tellers SET tbalance = tbalance + %d WHERE tid = %lld;\n"
			"UPDATE branches SET bbalance = bbalance + %d WHERE bid = %lld;\n"
			"INSERT INTO history VALUES (%lld, %lld, %lld, %d, "
			"CURRENT_TIMESTAMP, NULL);\n"
			"COMMIT;\n", delta, aid, aid, delta, tid, delta, bid,
			tid, bid, aid, delta);
}

/* The script, into the repetition's folder (after the database): the
 * warm-up when there is one, then the measured transactions. */
static int write_script(struct pcb_run *r)
{
	int n = (int)pcb_param(r->par, "transactions");
	uint64_t seed = (uint64_t)pcb_param(r->par, "seed");
	char path[1100];
	FILE *f = fopen(pcb_path(r, path, sizeof(path), "oltp.sql"), "we");

	if (!f)
		return pcb_fail(r, -errno, "cannot write %s", path);
	fputs("PRAGMA journal_mode=DELETE;\n", f);
	if (pcb_warming(r)) {
		fprintf(f, "SELECT sum(abalance) FROM accounts WHERE aid <= %lld;\n",
			(long long)pcb_param(r->par, "warmup_rows"));
		for (int i = 0; i < pcb_param(r->par, "warmup_transactions"); i++)
			transaction(r, f, &seed);
		fputs(".output " STEADY_FILE "\n.print steady\n.output\n", f);
	}
	mark(f, 0);
	for (int i = 1; i <= n; i++) {
		transaction(r, f, &seed);
		if (i % MARK_EVERY == 0 || i == n)
			mark(f, i);
	}
	if (fclose(f) != 0)
		return pcb_fail(r, -EIO, "cannot write %s", path);
	return 0;
}

static int run(struct pcb_run *r)
{
	struct pcb_prog p = { .name = "sqlite3", .stop_at_deadline = true };
	bool warm = pcb_warming(r);
	char db[1200], script[1100], *text, *l;
	double t0 = 0, t1 = 0;
	int first = -1, last = -1, err;

	pcb_fmt(db, sizeof(db), "%s/oltp.db", r->prep);
	pcb_path(r, script, sizeof(script), "oltp.sql");
	if (warm)
		p.steady_file = STEADY_FILE;
	if ((err = run_script(r, &p, db, script)))
		return err;
	if (pcb_warming(r))
		return pcb_fail(r, -EIO, "sqlite3's warm-up did not end (no %s)",
				STEADY_FILE);
	text = pcb_prog_slurp(p.out);
	for (l = text; l && (l = strstr(l, "pcb-mark ")); l++) {
		int done;
		double t;

		if (sscanf(l, "pcb-mark %d %lf", &done, &t) != 2)
			continue;
		if (first < 0) {
			first = done;
			t0 = t;
		}
		last = done;
		t1 = t;
	}
	free(text);
	if (last > first && t1 > t0) {
		pcb_metric(r, "transactions/s", (last - first) / (t1 - t0));
		pcb_metric(r, "transactions", last - first);
		pcb_metric(r, "seconds", t1 - t0);
		pcb_direction(r, "seconds", false);
	}
	if (p.stopped && !pcb_stop && last <= first)
		return pcb_fail(r, -EIO, "sqlite3 was stopped at the cap of %.1f s "
				"before it ran %d transactions", r->limit_s,
				MARK_EVERY);
	if (p.stopped && !pcb_stop)
		r->capped = true;
	else if (!p.stopped && last != (int)pcb_param(r->par, "transactions"))
		return pcb_fail(r, -EIO, "sqlite3 ran %d of %d transactions",
				last, (int)pcb_param(r->par, "transactions"));
	return 0;
}

PCB_WORKLOAD(sqlite_oltp) = {
	.name = "sqlite-oltp",
	.group = "sqlite",
	.what = "sqlite3: TPC-B-like transactions, rollback journal, a 4xB database",
	.metric = "transactions/s",
	.in_suite = true,
	.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL),
	.na_reason = "sqlite3 chooses its own I/O: it runs under pagecache or "
		     "the kernel's page cache only",
	.warmup = "a scan of B of the accounts, then 100 transactions",
	.params = params,
	.disk = disk,
	.prepare = write_script,
	.run = run,
	.program = { "sqlite3", "sqlite3", make_db },
};
