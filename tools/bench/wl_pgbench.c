/*
 * tools/bench/wl_pgbench.c - PostgreSQL (Debian's server and pgbench,
 * unmodified), a server of many processes, under pgbench's loads
 * (docs/workloads.md, "Real programs"; program.c runs them under each
 * engine):
 *
 *   pgbench-tpcb      TPC-B-like (pgbench's default script), data 4 x B
 *   pgbench-ro        select-only (-S), data 4 x B: most reads miss
 *   pgbench-ro-fit    select-only, data B / 2: every read hits once warm,
 *                     so what a hit costs is what shows
 *
 * The three differ only in two parameters, "data_pct" (the cluster's size
 * in percent of B) and "select_only"; the rest is one code.  Not in the
 * suite: each takes minutes (a cluster made, then copied for each
 * repetition); tests/test_mp_coherence.sh runs PostgreSQL under
 * `pagecache exec` in make test.
 *
 * The programs are found in /usr/lib/postgresql/NN/bin (Debian's, the
 * newest NN), else beside the postgres on PATH.  PostgreSQL refuses to
 * run as root: run as root, the lab runs every program of the tree as the
 * postgres user (setpriv, before `pagecache exec`: program.c puts it
 * first, so the cache is that user's), and gives that user the
 * repetition's folder, the shim's stats
 * file (made beforehand: `pagecache exec`, still root, only empties it)
 * and the live records' folder.
 *
 * The cluster, made once per run, workload and budget (program.c) in
 * <prep>/data, outside any cache: initdb -k (data checksums), then
 * pgbench -i -s S, S = data_pct / 100 x B / ACCOUNT_BYTES rounded up (a
 * scale unit is 100000 accounts, 15 MiB with their index).  The server runs with small shared_buffers
 * (SHARED_BUFFERS), so that the file layer is the cache that matters, as
 * it is for a PostgreSQL that leaves the memory to the OS; no TCP, its
 * socket in the repetition's folder; its log there (postgres.log).
 *
 * Each repetition is one `sh -c SCRIPT` as the program (so the engine's
 * cgroup or cache holds the whole tree, and wait4's peak RSS is the
 * largest of its processes): start the server, wait until it accepts
 * connections, on an engine with a cache the warm-up (a scan of B of
 * pgbench_accounts, its first B / ACCOUNT_ROW_BYTES rows, then 25
 * transactions a client, their report to pgbench-warm.out; then `touch
 * steady`, the file that ends the lab's warm-up: program.c), `pgbench -n
 * -c 4 -j 2 -T D` (-n: no vacuum, which would also empty
 * pgbench_history; -S as well, warm-up included, for select_only), the
 * bank's sums, a fast shutdown.  It runs
 * on the repetition's own copy of the cluster (copy_cluster), so that
 * every engine starts from the same data and a run that broke its copy
 * (pagecache today) breaks no other.
 *
 * pgbench's report (stdout): "tps = X (without initial connection time)",
 * "latency average = X ms", "number of transactions actually processed:
 * N".  The sums, one line "pcb-sums N A T B H": N history rows, the sums
 * of the accounts', tellers' and branches' balances and of the history's
 * deltas.  A run whose sums differ is an error, not a figure (a
 * select-only run changes nothing: every sum stays 0, and must).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define ACCOUNT_BYTES	(15ull << 20)	/* a scale unit on disk */
#define ACCOUNT_ROW_BYTES	(ACCOUNT_BYTES / 100000)	/* with its index */
#define WARMUP_TX	25		/* a client's, in the warm-up */
#define STEADY_FILE	"steady"
#define SHARED_BUFFERS	"2MB"
#define MAX_WAL_SIZE	(128 << 20)
#define CLIENTS		4
#define THREADS		2
#define PG_USER		"postgres"
#define SOCKET_MAX	107		/* sun_path, with ".s.PGSQL.5432" */

/* The cluster of @data_pct percent of B; pgbench's default script, or
 * its select-only one. */
static void params(struct pcb_params *p, const struct pcb_opts *o,
		   unsigned data_pct, bool select_only)
{
	uint64_t data = o->budget * data_pct / 100;

	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "data_pct", data_pct);
	pcb_param_set(p, "select_only", select_only);
	pcb_param_set(p, "scale", (int64_t)((data + ACCOUNT_BYTES - 1) /
					    ACCOUNT_BYTES));
	pcb_param_set(p, "clients", CLIENTS);
	pcb_param_set(p, "threads", THREADS);
	pcb_param_set(p, "max_wal_size", MAX_WAL_SIZE);
	pcb_param_set(p, "warmup_rows", (int64_t)(o->budget / ACCOUNT_ROW_BYTES));
	pcb_param_set(p, "warmup_transactions", WARMUP_TX);
}

static void params_tpcb(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 400, false);
}

static void params_ro(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 400, true);
}

static void params_ro_fit(struct pcb_params *p, const struct pcb_opts *o)
{
	params(p, o, 50, true);
}

static uint64_t disk(const struct pcb_params *p)
{
	/* the cluster made once and the repetition's copy: the tables (and
	 * their growth in a run), and the WAL */
	return 2 * ((uint64_t)pcb_param(p, "scale") * ACCOUNT_BYTES * 3 / 2 +
		    2 * (uint64_t)pcb_param(p, "max_wal_size"));
}

/*
 * The shell's part, shared by both scripts: $1 the programs' folder, $2
 * the data folder, $3 the socket's folder, then the script's own values
 * as NAME=VALUE words, then "--" and the server's settings.  start: the
 * server in the background, waited for until pg_isready says it accepts
 * connections (or it has exited: then its log's last line); stop: a fast
 * shutdown (SIGINT), waited for.  SIGINT or SIGTERM (Ctrl-C: program.c
 * sends it to the shell alone) sets $stopping and stops pgbench.
 */
#define SCRIPT_START \
	"set -u\n" \
	"bin=$1 data=$2 sock=$3 stopping= bench=\n" \
	"export PATH=\"$bin:$PATH\" PGHOST=\"$sock\" PGPORT=5432 " \
	"PGDATABASE=postgres\n" \
	"shift 3; while [ \"$1\" != -- ]; do export \"$1\"; shift; done; shift\n" \
	"trap 'stopping=1; [ -z \"$bench\" ] || kill -INT $bench' INT TERM\n" \
	"start() {\n" \
	"  postgres -D \"$data\" -k \"$sock\" \"$@\" >>postgres.log 2>&1 &\n" \
	"  pid=$! n=0\n" \
	"  until pg_isready -q; do\n" \
	"    kill -0 $pid 2>/dev/null || { wait $pid; echo \"postgres exited " \
	"with $?: $(tail -n 1 postgres.log)\" >&2; exit 1; }\n" \
	"    n=$((n + 1)); [ $n -lt 1200 ] || { stop; echo 'postgres did not " \
	"accept connections in 120 s' >&2; exit 1; }\n" \
	"    sleep 0.1\n" \
	"  done\n" \
	"}\n" \
	"stop() { kill -INT $pid 2>/dev/null; wait $pid; }\n"

/* pgbench's messages (pgbench.log) to stderr, its first error again last:
 * the line program.c's message quotes ("... aborted in command 4 query 0:
 * ERROR: ..."), not pgbench's last ("Run was aborted; ..."). */
#define SCRIPT_ERRORS \
	"cat pgbench.log >&2\n" \
	"[ $rc -eq 0 ] || grep -m 1 error pgbench.log >&2\n"

/* The cluster: scale=S. */
static const char *const make_script =
	SCRIPT_START
	"initdb -k -A trust -D \"$data\" || exit 1\n"
	"start \"$@\"\n"
	"pgbench -i -q -s \"$scale\" 2>pgbench.log; rc=$?\n"
	"stop\n"
	SCRIPT_ERRORS
	"exit $rc\n";

/* A repetition: secs=, clients=, threads=, warm_rows= (0: no warm-up),
 * warm_tx=, script= (pgbench's option naming its script: "-S" or "-n",
 * which -n already is, for the default one). */
static const char *const run_script =
	SCRIPT_START
	"start \"$@\"\n"
	"if [ \"$warm_rows\" -gt 0 ]; then\n"
	"  psql -X -A -t -q -c \"SELECT sum(abalance) FROM pgbench_accounts "
	"WHERE aid <= $warm_rows\" >/dev/null 2>pgbench.log &&\n"
	"  pgbench -n \"$script\" -c \"$clients\" -j \"$threads\" -t \"$warm_tx\" "
	">pgbench-warm.out 2>>pgbench.log || { rc=$?; stop; cat pgbench.log >&2; "
	"exit $rc; }\n"
	"  touch " STEADY_FILE "\n"
	"fi\n"
	"[ -z \"$stopping\" ] || { stop; exit 130; }\n"
	"pgbench -n \"$script\" -c \"$clients\" -j \"$threads\" -T \"$secs\" "
	"2>pgbench.log &\n"
	"bench=$!\n"
	"wait $bench; rc=$?; bench=\n"
	"[ $rc -ne 0 ] || psql -X -A -t -q -F ' ' -c \"SELECT 'pcb-sums', "
	"(SELECT count(*) FROM pgbench_history), "
	"(SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), "
	"(SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), "
	"(SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), "
	"(SELECT coalesce(sum(delta), 0) FROM pgbench_history)\" || rc=$?\n"
	"stop\n"
	SCRIPT_ERRORS
	"exit $rc\n";

/* The newest /usr/lib/postgresql/NN/bin with a postgres in it, else the
 * folder of the postgres on PATH, into @buf; false if none. */
static bool find_bindir(char *buf, size_t len)
{
	const char *path = getenv("PATH");
	long best = -1;
	glob_t g;

	buf[0] = 0;
	if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			long v = strtol(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"),
					NULL, 10);

			if (v > best && access(g.gl_pathv[i], X_OK) == 0) {
				best = v;
				pcb_fmt(buf, len, "%.*s", (int)(strlen(g.gl_pathv[i]) -
						strlen("/postgres")), g.gl_pathv[i]);
			}
		}
		globfree(&g);
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; !buf[0] && *p;) {
		size_t n = strcspn(p, ":");
		char exe[PATH_MAX];

		pcb_fmt(exe, sizeof(exe), "%.*s/postgres", (int)n, p);
		if (n && access(exe, X_OK) == 0)
			pcb_fmt(buf, len, "%.*s", (int)n, p);
		p += n + (p[n] == ':');
	}
	return buf[0] != 0;
}

/* Run as root: @path to the postgres user (0 or -errno). */
static int give(const struct passwd *pw, const char *path)
{
	return pw && chown(path, pw->pw_uid, pw->pw_gid) < 0 ? -errno : 0;
}

/*
 * What both scripts need: the programs' folder, the socket's folder (the
 * repetition's, absolute) and, run as root, the postgres user, to whom
 * the repetition's folder is given.  The command line so far into @a:
 * [setpriv ... --] sh -c @script sh BIN DATA SOCK.
 */
static int begin(struct pcb_run *r, struct pcb_args *a, const char *script,
		 const char *data, const struct passwd **pw)
{
	char bin[PATH_MAX], sock[PATH_MAX];
	int err;

	*pw = NULL;
	if (!find_bindir(bin, sizeof(bin)))
		return pcb_fail(r, -EOPNOTSUPP, "postgres is not installed: "
				"scripts/deps.sh installs it (apt-get install "
				"postgresql)");
	if (geteuid() == 0 && !(*pw = getpwnam(PG_USER)))
		return pcb_fail(r, -EOPNOTSUPP, "PostgreSQL does not run as root "
				"and there is no user %s (the postgresql package "
				"makes it)", PG_USER);
	if (!realpath(r->dir, sock))
		return pcb_fail(r, -errno, "%s: %s", r->dir, strerror(errno));
	if (strlen(sock) + strlen("/.s.PGSQL.5432") > SOCKET_MAX)
		return pcb_fail(r, -ENAMETOOLONG, "the server's socket in %s would "
				"be longer than %d bytes: a shorter --dir",
				sock, SOCKET_MAX);
	if ((err = give(*pw, sock)) < 0)
		return pcb_fail(r, err, "cannot give %s to %s: %s", sock, PG_USER,
				strerror(-err));
	if (*pw) {
		pcb_arg(a, "setpriv");
		pcb_arg(a, "--reuid=%s", PG_USER);
		pcb_arg(a, "--regid=%s", PG_USER);
		pcb_arg(a, "--init-groups");
		pcb_arg(a, "--");
	}
	pcb_arg(a, "sh");
	pcb_arg(a, "-c");
	pcb_arg(a, "%s", script);
	pcb_arg(a, "sh");
	pcb_arg(a, "%s", bin);
	pcb_arg(a, "%s", data);
	pcb_arg(a, "%s", sock);
	return 0;
}

/* The server's settings, after the script's own arguments. */
static void server_args(struct pcb_run *r, struct pcb_args *a)
{
	pcb_arg(a, "--");
	pcb_arg(a, "-c");
	pcb_arg(a, "shared_buffers=%s", SHARED_BUFFERS);
	pcb_arg(a, "-c");
	pcb_arg(a, "listen_addresses=");
	pcb_arg(a, "-c");
	pcb_arg(a, "max_wal_size=%lldkB",
		(long long)pcb_param(r->par, "max_wal_size") >> 10);
}

static int make_cluster(struct pcb_run *r, const char *dir)
{
	struct pcb_prog p = { .name = "pgbench-prepare", .plain = true };
	struct pcb_args a = { .n = 0 };
	const struct passwd *pw;
	char data[1200];
	int err;

	pcb_fmt(data, sizeof(data), "%s/data", dir);
	if ((err = begin(r, &a, make_script, data, &pw)) < 0)
		return err;
	pcb_arg(&a, "scale=%lld", (long long)pcb_param(r->par, "scale"));
	server_args(r, &a);
	/* initdb makes @data; as root, its parent is not the user's */
	if (mkdir(data, 0700) < 0 || (err = give(pw, data)) < 0)
		return pcb_fail(r, -errno, "cannot make %s for %s: %s", data,
				PG_USER, strerror(errno));
	p.argv = a.v;
	return pcb_prog_run(r, &p);
}

/*
 * The repetition's own copy of the cluster, in its folder (cp -a: the
 * owner kept), outside any cache; the kernel's cache of the cluster
 * dropped again (rep.c drops the copy's).  So every engine and every
 * repetition starts from the same data, and a run that broke its copy
 * breaks no other.
 */
static int copy_cluster(struct pcb_run *r)
{
	struct pcb_prog p = { .name = "cp-cluster", .plain = true };
	struct pcb_args a = { .n = 0 };
	int err;

	pcb_arg(&a, "cp");
	pcb_arg(&a, "-a");
	pcb_arg(&a, "%s/data", r->prep);
	pcb_arg(&a, "data");		/* in the repetition's folder */
	p.argv = a.v;
	err = pcb_prog_run(r, &p);
	pcb_drop_cache(r->prep);
	return err;
}

/* The number after @key in @text; NaN if none. */
static double after(const char *text, const char *key)
{
	const char *k = text ? strstr(text, key) : NULL;

	return k ? strtod(k + strlen(key), NULL) : __builtin_nan("");
}

/* Run as root: the shim's files writable by the postgres user's
 * processes (program.c's names: "<prog>.stats", "pagecache-live/"). */
static int give_shim_files(struct pcb_run *r, const struct pcb_prog *p,
			   const struct passwd *pw)
{
	char path[1200];
	int fd, err;

	if (!pw || pcb_prog_mode(r) != PCB_PROG_PAGECACHE)
		return 0;
	pcb_path(r, path, sizeof(path), "%s.stats", p->name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || fchown(fd, pw->pw_uid, pw->pw_gid) < 0) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return pcb_fail(r, err, "cannot give %s to %s", path, PG_USER);
	}
	close(fd);
	pcb_path(r, path, sizeof(path), "pagecache-live");
	if ((err = give(pw, path)) < 0 && err != -ENOENT)
		return pcb_fail(r, err, "cannot give %s to %s", path, PG_USER);
	return 0;
}

static int run(struct pcb_run *r)
{
	struct pcb_prog p = { .name = "pgbench" };
	struct pcb_args a = { .n = 0 };
	int secs = (int)(r->opt->duration + 0.5), err;
	const struct passwd *pw;
	long long sums[5];
	char data[PATH_MAX + 8], *text, *l;

	if (!realpath(r->dir, data))
		return pcb_fail(r, -errno, "%s: %s", r->dir, strerror(errno));
	strcat(data, "/data");		/* copy_cluster's */
	if ((err = begin(r, &a, run_script, data, &pw)) < 0 ||
	    (err = give_shim_files(r, &p, pw)) < 0)
		return err;
	pcb_arg(&a, "secs=%d", secs < 1 ? 1 : secs);
	pcb_arg(&a, "clients=%lld", (long long)pcb_param(r->par, "clients"));
	pcb_arg(&a, "threads=%lld", (long long)pcb_param(r->par, "threads"));
	pcb_arg(&a, "warm_rows=%lld", pcb_warming(r) ?
		(long long)pcb_param(r->par, "warmup_rows") : 0ll);
	pcb_arg(&a, "warm_tx=%lld", (long long)pcb_param(r->par, "warmup_transactions"));
	pcb_arg(&a, "script=%s", pcb_param(r->par, "select_only") ? "-S" : "-n");
	server_args(r, &a);
	p.argv = a.v;
	if (pcb_warming(r))
		p.steady_file = STEADY_FILE;
	if ((err = pcb_prog_run(r, &p)))
		return err;
	if (pcb_warming(r) && !pcb_stop)
		return pcb_fail(r, -EIO, "the warm-up did not end (no %s)", STEADY_FILE);
	text = pcb_prog_slurp(p.out);
	pcb_metric(r, "transactions/s", after(text, "\ntps = "));
	pcb_metric(r, "transactions",
		   after(text, "number of transactions actually processed: "));
	pcb_metric(r, "latency-mean-us", 1000 * after(text, "latency average = "));
	pcb_direction(r, "latency-mean-us", false);
	l = text ? strstr(text, "pcb-sums ") : NULL;
	if (pcb_stop) {
		err = 0;
	} else if (!l || sscanf(l, "pcb-sums %lld %lld %lld %lld %lld", &sums[0],
				&sums[1], &sums[2], &sums[3], &sums[4]) != 5) {
		err = pcb_fail(r, -EIO, "no sums after the run (%s)", p.out);
	} else if (sums[1] != sums[4] || sums[2] != sums[4] || sums[3] != sums[4]) {
		err = pcb_fail(r, -EIO, "the bank's sums differ after %lld "
			       "transactions: accounts %lld, tellers %lld, "
			       "branches %lld, history %lld", sums[0], sums[1],
			       sums[2], sums[3], sums[4]);
	}
	free(text);
	return err;
}

/* What the three workloads share: the server, its cluster, the run. */
#define PGBENCH_WORKLOAD(id, wname, wwhat, wwarmup, wparams) \
	PCB_WORKLOAD(id) = { \
		.name = wname, \
		.group = "pgbench", \
		.what = wwhat, \
		.metric = "transactions/s", \
		.timed = true, \
		.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL), \
		.na_reason = "PostgreSQL chooses its own I/O: it runs under " \
			     "pagecache or the kernel's page cache only", \
		.warmup = wwarmup, \
		.params = wparams, \
		.disk = disk, \
		.prepare = copy_cluster, \
		.run = run, \
		.program = { "pgbench", "postgresql", make_cluster }, \
	}

PGBENCH_WORKLOAD(pgbench_tpcb, "pgbench-tpcb",
		 "PostgreSQL: pgbench TPC-B-like, 4 clients, a 4xB cluster",
		 "a scan of B of the accounts, then 25 transactions a client",
		 params_tpcb);
PGBENCH_WORKLOAD(pgbench_ro, "pgbench-ro",
		 "PostgreSQL: pgbench select-only, 4 clients, a 4xB cluster",
		 "a scan of B of the accounts, then 25 selects a client",
		 params_ro);
PGBENCH_WORKLOAD(pgbench_ro_fit, "pgbench-ro-fit",
		 "PostgreSQL: pgbench select-only, 4 clients, a B/2 cluster",
		 "a scan of the accounts, then 25 selects a client",
		 params_ro_fit);
