/*
 * tools/bench/cli.c - `pagecache bench` and `pagecache run`: the command
 * line, and the checks made before anything starts.
 *
 * parse ── names (workloads, groups, engines), sizes, numbers, --set pairs
 *   │      any error: a message naming the culprit, exit 2
 * check ── each budget (not too small, not more than the machine has), the test
 *   │      folder (exists, O_DIRECT where an engine needs it), free space
 *   │      for the largest workload at the largest budget, RWF_DONTCACHE
 *   │      (refused: dontcache is n/a, said once), perf for --profile
 *   │      (missing or refused: said once, the run goes on unprofiled), the
 *   │      pagecache config at each budget (tried in a child)
 * run ──── pcb_run_all (runner.c)
 *
 * `run` is `bench` with the default suite's defaults (shorter timed
 * workloads, so the whole suite fits in ten minutes on two cores).
 * Parent only, before any child exists.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pagecache.h"
#include "bench.h"

#define MIN_BUDGET	(4ull << 20)
#define DEFAULT_BUDGET	(256ull << 20)
#define BENCH_DURATION	30.0	/* docs/workloads.md: readtwice's default */
#define SUITE_DURATION	5.0
#define SUITE_MAX_TIME	510.0	/* s: `make run` within ten minutes */

/* The default suite's workloads (.in_suite), comma-separated, wrapped. */
static void print_suite(FILE *f)
{
	int col = 2;

	fprintf(f, "  ");
	for (int i = 0, first = 1; i < pcb_nr_workloads(); i++) {
		const struct pcb_workload *w = pcb_workload(i);
		int len = (int)strlen(w->name);

		if (!w->in_suite)
			continue;
		if (!first && col + len + 2 > 76) {
			fprintf(f, ",\n  ");
			col = 2;
		} else if (!first) {
			fprintf(f, ", ");
			col += 2;
		}
		fprintf(f, "%s", w->name);
		col += len;
		first = 0;
	}
	fprintf(f, "\n");
}

static void usage(FILE *f, bool suite)
{
	if (suite) {
		fprintf(f,
"usage: pagecache run [bench options]\n"
"\n"
"Runs the default suite (below) on every engine at a budget of 256M,\n"
"3 repetitions, timed workloads %.0f s each, perf profiles on, then\n"
"prints the verdict (pagecache against the kernel's page cache, one\n"
"row per workload) and writes compare.txt (the full LKP and mmtests\n"
"tables) and report.html (with charts) into the result folder.\n"
"Takes the options of `pagecache bench`.  The suite:\n", SUITE_DURATION);
		print_suite(f);
	} else
		fprintf(f,
"usage: pagecache bench [options]\n"
"\n"
"Runs workloads (docs/workloads.md) against engines under one memory budget and\n"
"writes a result file per workload x engine x config.\n");
	fprintf(f,
"\n"
"  -w, --workload LIST   workloads or groups, comma-separated, or 'suite'\n"
"                        (the default) or 'all'; see --list\n"
"  -e, --engine LIST     pagecache,kernel,dontcache,direct,limit (default:\n"
"                        all; limit serves the cached-read workloads only)\n"
"  -b, --budget LIST     memory budget B, e.g. 256M (default 256M, min 4M);\n"
"                        a list (64M,1G,8G) runs every workload at each\n"
"  -r, --reps N          repetitions of each run (default 3)\n"
"      --order ORDER     turns (default): rep 1 of every engine and config,\n"
"                        then rep 2 in the reverse order, rep 3 as rep 1,\n"
"                        ...; sequential: all of one, then the next\n"
"  -s, --set KEY=VALUE   a pagecache config pair (repeatable), e.g.\n"
"                        --set nodes=4 --set reclaim.batch_remove=1\n"
"  -V, --variant PAIRS   another pagecache config run beside the base by\n"
"                        turns (up to 2; pairs comma-separated, added to\n"
"                        the --set pairs), e.g. --variant shared=on: an A/B\n"
"                        in one run; given, they replace the workloads' own\n"
"                        variants\n"
"  -d, --duration SECS   timed workloads run this long; the others stop at\n"
"                        three times it (default %.0f)\n"
"      --max-time SECS   when the run, at its pace, would take longer, stop\n"
"                        the untimed workloads sooner (run: %.0f; bench: off)\n"
"  -o, --out DIR         result folder (default bench/results/<date>-<host>)\n"
"      --dir DIR         test files go in a fresh folder under DIR, removed\n"
"                        at the end (default /var/tmp: a disk, not tmpfs)\n"
"      --label NAME      the pagecache engine's set name in results\n"
"      --trace           record a trace of each pagecache repetition\n"
"      --profile         perf record -e cpu-clock each repetition's measured\n"
"                        part; its top symbols become metrics\n"
"                        perf-profile.self.cycles-pp.SYMBOL (%% of samples)\n"
"                        (run: on; bench: off; --no-profile: off)\n"
"      --list            list workloads and engines, then exit\n"
"  -h, --help            this help\n",
		suite ? SUITE_DURATION : BENCH_DURATION, SUITE_MAX_TIME);
}

static void list(void)
{
	printf("workloads (group: name, headline, engines):\n");
	for (int i = 0; i < pcb_nr_workloads(); i++) {
		const struct pcb_workload *w = pcb_workload(i);
		char eng[64] = "", prog[80] = "";

		for (int e = 0; e < PCB_NR_ENGINES; e++)
			if (w->engines & PCB_ENG(e)) {
				strcat(eng, eng[0] ? "," : "");
				strcat(eng, pcb_engines[e]->name);
			}
		if (pcb_is_program(w))
			pcb_fmt(prog, sizeof(prog), "  [program: %s]",
				w->program.name);
		printf("  %-12s %-20s %-18s %-4s %s%s%s\n    %s\n", w->group,
		       w->name, w->metric, w->lower ? "(lo)" : "(hi)", eng,
		       w->in_suite ? "  [suite]" : "", prog, w->what);
		if (w->warmup)
			printf("    warm-up: %s\n", w->warmup);
		else
			printf("    measured from its start: no warm-up\n");
	}
	printf("engines:\n");
	for (int e = 0; e < PCB_NR_ENGINES; e++)
		printf("  %-10s %s\n", pcb_engines[e]->name, pcb_engines[e]->what);
}

static int bad(const char *fmt, const char *what)
{
	fprintf(stderr, "pagecache bench: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	return 2;
}

static void add_workload(struct pcb_opts *o, int i)
{
	for (int j = 0; j < o->nr_workloads; j++)
		if (o->workloads[j] == i)
			return;
	if (o->nr_workloads < (int)(sizeof(o->workloads) / sizeof(o->workloads[0])))
		o->workloads[o->nr_workloads++] = i;
}

static int parse_workloads(struct pcb_opts *o, const char *arg)
{
	char buf[1024], *save, *tok;

	pcb_fmt(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (int i = 0; i < pcb_nr_workloads(); i++) {
			const struct pcb_workload *w = pcb_workload(i);

			if (strcmp(tok, "all") == 0 || strcmp(w->name, tok) == 0 ||
			    strcmp(w->group, tok) == 0 ||
			    (strcmp(tok, "suite") == 0 && w->in_suite)) {
				add_workload(o, i);
				found = true;
			}
		}
		if (!found)
			return bad("unknown workload '%s' (see --list)", tok);
	}
	return 0;
}

static int parse_engines(struct pcb_opts *o, const char *arg)
{
	char buf[256], *save, *tok;

	pcb_fmt(buf, sizeof(buf), "%s", arg);
	o->engines = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int e = pcb_engine_find(tok);

		if (strcmp(tok, "all") == 0)
			o->engines = PCB_ENG_EVERY;
		else if (e < 0)
			return bad("unknown engine '%s' (pagecache, kernel, "
				   "dontcache, direct, limit)", tok);
		else
			o->engines |= PCB_ENG(e);
	}
	if (!o->engines)
		return bad("no engine in '%s'", arg);
	return 0;
}

static int parse_budgets(struct pcb_opts *o, const char *arg)
{
	char buf[256], *save, *tok;

	pcb_fmt(buf, sizeof(buf), "%s", arg);
	o->nr_budgets = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t b;

		if (pcb_parse_size(tok, &b) < 0)
			return bad("bad --budget '%s' (a size: 256M, 1G; or a list: "
				   "64M,1G,8G)", tok);
		if (o->nr_budgets == PCB_MAX_BUDGETS)
			return bad("too many budgets in --budget (at '%s')", tok);
		for (int i = 0; i < o->nr_budgets; i++)
			if (o->budgets[i] == b)
				return bad("budget '%s' twice in --budget", tok);
		o->budgets[o->nr_budgets++] = b;
	}
	if (!o->nr_budgets)
		return bad("no budget in --budget '%s'", arg);
	return 0;
}

static int parse_set(struct pcb_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t len = strlen(o->sets);

	if (!eq || eq == arg || !eq[1] || strpbrk(arg, " \t\n"))
		return bad("--set wants KEY=VALUE, not '%s'", arg);
	if (strncmp(arg, "memory=", 7) == 0)
		return bad("--set %s: the budget is --budget", arg);
	if (strncmp(arg, "trace=", 6) == 0)
		return bad("--set %s: traces are --trace", arg);
	if (len + strlen(arg) + 2 > sizeof(o->sets))
		return bad("too many --set pairs (at '%s')", arg);
	pcb_fmt(o->sets + len, sizeof(o->sets) - len, "%s%s", len ? " " : "", arg);
	return 0;
}

/* --variant: KEY=VALUE pairs, comma-separated, kept space-separated. */
static int parse_variant(struct pcb_opts *o, const char *arg)
{
	char *v;

	if (o->nr_variants == 2)
		return bad("at most two --variant (at '%s')", arg);
	if (strlen(arg) + 1 > sizeof(o->variants[0]))
		return bad("--variant '%s': too long", arg);
	v = o->variants[o->nr_variants];
	pcb_fmt(v, sizeof(o->variants[0]), "%s", arg);
	for (char *p = v; *p; p++)
		if (*p == ',')
			*p = ' ';
	for (const char *q = v; ; q += strcspn(q, " ") + 1) {
		size_t len = strcspn(q, " ");
		const char *eq = memchr(q, '=', len);

		if (!eq || eq == q || eq == q + len - 1 || strpbrk(arg, " \t\n"))
			return bad("--variant wants KEY=VALUE[,KEY=VALUE], not '%s'",
				   arg);
		if (!strncmp(q, "memory=", 7) || !strncmp(q, "trace=", 6))
			return bad("--variant %s: the budget is --budget, traces "
				   "--trace", arg);
		if (!q[len])
			break;
	}
	for (int i = 0; i < o->nr_variants; i++)
		if (!strcmp(o->variants[i], v))
			return bad("--variant '%s' twice", arg);
	o->nr_variants++;
	return 0;
}

static int parse(struct pcb_opts *o, int argc, char **argv, bool suite)
{
	enum { OPT_DIR = 256, OPT_LABEL, OPT_TRACE, OPT_LIST, OPT_MAX_TIME,
	       OPT_PROFILE, OPT_NO_PROFILE, OPT_ORDER };
	static const struct option longopts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "engine", required_argument, NULL, 'e' },
		{ "budget", required_argument, NULL, 'b' },
		{ "reps", required_argument, NULL, 'r' },
		{ "set", required_argument, NULL, 's' },
		{ "variant", required_argument, NULL, 'V' },
		{ "duration", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "max-time", required_argument, NULL, OPT_MAX_TIME },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "profile", no_argument, NULL, OPT_PROFILE },
		{ "no-profile", no_argument, NULL, OPT_NO_PROFILE },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int ch, err;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":w:e:b:r:s:V:d:o:h", longopts,
				 NULL)) != -1) {
		switch (ch) {
		case 'w':
			if ((err = parse_workloads(o, optarg)))
				return err;
			break;
		case 'e':
			if ((err = parse_engines(o, optarg)))
				return err;
			break;
		case 'b':
			if ((err = parse_budgets(o, optarg)))
				return err;
			break;
		case 'r':
			o->reps = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || o->reps < 1 || o->reps > 1000)
				return bad("bad --reps '%s' (1 to 1000)", optarg);
			break;
		case 's':
			if ((err = parse_set(o, optarg)))
				return err;
			break;
		case 'V':
			if ((err = parse_variant(o, optarg)))
				return err;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration > 0) ||
			    o->duration > 86400)
				return bad("bad --duration '%s' (seconds, > 0)", optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_DIR:
			o->dir = optarg;
			break;
		case OPT_MAX_TIME:
			o->max_time = strtod(optarg, &end);
			if (*end || end == optarg || o->max_time < 0)
				return bad("bad --max-time '%s' (seconds, 0: off)", optarg);
			break;
		case OPT_ORDER:
			if (!strcmp(optarg, "turns"))
				o->order = PCB_ORDER_TURNS;
			else if (!strcmp(optarg, "sequential"))
				o->order = PCB_ORDER_SEQUENTIAL;
			else
				return bad("bad --order '%s' (turns or sequential)",
					   optarg);
			break;
		case OPT_LABEL:
			if (!*optarg || strpbrk(optarg, "/ \t"))
				return bad("bad --label '%s' (no spaces or slashes)",
					   optarg);
			o->label = optarg;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_PROFILE:
		case OPT_NO_PROFILE:
			o->profile = ch == OPT_PROFILE;
			break;
		case OPT_LIST:
			list();
			return -1;
		case 'h':
			usage(stdout, suite);
			return -1;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s' (see --help)", argv[optind]);
	return 0;
}

/* Would the library take this config?  Tried in a child: it allocates. */
static int check_config(const char *config)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pc_cache *c = NULL;
		int err = pc_cache_create(&c, config);

		if (err == 0)
			pc_cache_destroy(c);
		_exit(err < 0 ? (-err & 0xff) : 0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		return -EFAULT;
	return -WEXITSTATUS(status);
}

/* What depends on the budget in force (o->budget). */
static int check_budget(struct pcb_opts *o)
{
	char size[32], size2[32];
	uint64_t avail = pcb_mem_available(), freeb = 0, need = 0;
	const char *needed_by = "";
	int err;

	pcb_fmt_size(o->budget, size, sizeof(size));
	if (o->budget < MIN_BUDGET)
		return bad("budget %s too small: at least 4M", size);
	if (avail && o->budget > avail / 10 * 9)
		return bad("budget %s is more than this machine has available", size);

	/* free space for the largest workload, and a margin */
	for (int i = 0; i < o->nr_workloads; i++) {
		const struct pcb_workload *w = pcb_workload(o->workloads[i]);
		struct pcb_params par = { 0 };
		uint64_t d;

		w->params(&par, o);
		d = w->disk(&par);
		if (d > need) {
			need = d;
			needed_by = w->name;
		}
	}
	need += need / 10 + (16u << 20);
	if (pcb_free_space(o->dir, &freeb) == 0 && freeb < need) {
		fprintf(stderr, "pagecache bench: not enough free space in %s for "
			"budget %s: %s needs %s, %s free\n", o->dir, size, needed_by,
			pcb_fmt_size(need >> 20 << 20, size2, sizeof(size2)),
			pcb_fmt_size(freeb >> 20 << 20, size, sizeof(size)));
		return 2;
	}
	for (int v = -1; v < o->nr_variants &&
			 (o->engines & PCB_ENG(PCB_PAGECACHE)); v++) {
		char config[3 * PCB_MAX_SETS];

		pcb_fmt(config, sizeof(config), "memory=%s%s%s%s%s", size,
			 o->sets[0] ? " " : "", o->sets, v < 0 ? "" : " ",
			 v < 0 ? "" : o->variants[v]);
		if ((err = check_config(config)) < 0) {
			fprintf(stderr, "pagecache bench: the library refuses the "
				"config \"%s\": %s\n", config, strerror(-err));
			return 2;
		}
	}
	return 0;
}

static int checks(struct pcb_opts *o)
{
	struct stat st;
	int err;

	if (stat(o->dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(o->dir, W_OK) < 0)
		return bad("--dir %s: not a writable folder", o->dir);
	if ((o->engines & (PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_DIRECT))) &&
	    (err = pcb_probe_direct(o->dir)) < 0) {
		fprintf(stderr, "pagecache bench: --dir %s refuses O_DIRECT (%s%s): "
			"the pagecache and direct engines need it; use a folder "
			"on a disk, or --engine kernel,dontcache\n", o->dir,
			strerror(-err), pcb_dir_is_tmpfs(o->dir) ? ", tmpfs" : "");
		return 2;
	}
	for (int b = 0; b < o->nr_budgets; b++) {
		o->budget = o->budgets[b];
		if ((err = check_budget(o)))
			return err;
	}
	o->budget = o->budgets[0];
	if ((o->engines & PCB_ENG(PCB_DONTCACHE)) &&
	    (err = pcb_probe_dontcache(o->dir)) < 0) {
		pcb_fmt(o->na[PCB_DONTCACHE], sizeof(o->na[0]),
			 "the kernel refuses RWF_DONTCACHE on %s (%s)", o->dir,
			 strerror(-err));
		printf("dontcache: skipped: %s\n", o->na[PCB_DONTCACHE]);
	}
	if (o->profile) {
		char why[300];

		if (pcb_profile_probe(o->dir, why, sizeof(why)) < 0) {
			printf("--profile: %s: running without profiles\n", why);
			o->profile = false;
		}
	}
	if (mkdir(o->out, 0755) < 0 && errno != EEXIST) {
		/* bench/results/<stamp>: make the parents too */
		char path[1024];

		pcb_fmt(path, sizeof(path), "%s", o->out);
		for (char *p = path + 1; *p; p++)
			if (*p == '/') {
				*p = 0;
				mkdir(path, 0755);
				*p = '/';
			}
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "pagecache bench: cannot make --out %s: %s\n",
				o->out, strerror(errno));
			return 2;
		}
	}
	return 0;
}

static int bench(int argc, char **argv, bool suite, char ***files)
{
	static char out[512];
	struct pcb_opts *o = calloc(1, sizeof(*o));
	char host[64] = "host", stamp[32], size[PCB_MAX_BUDGETS * 12];
	time_t now = time(NULL);
	struct tm tm;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	if (!o)
		return 1;
	o->budget = DEFAULT_BUDGET;
	o->budgets[0] = DEFAULT_BUDGET;
	o->nr_budgets = 1;
	o->reps = 3;
	o->duration = suite ? SUITE_DURATION : BENCH_DURATION;
	o->max_time = suite ? SUITE_MAX_TIME : 0;
	o->profile = suite;
	o->cpus = cpus > 0 ? (int)cpus : 1;
	o->dir = "/var/tmp";
	o->engines = PCB_ENG_EVERY;
	o->tty = isatty(STDERR_FILENO);
	rc = parse(o, argc, argv, suite);
	if (rc) {
		free(o);
		return rc < 0 ? 0 : rc;
	}
	if (!o->nr_workloads)
		parse_workloads(o, "suite");
	if (!o->out) {
		gethostname(host, sizeof(host) - 1);
		host[strcspn(host, ".")] = 0;
		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		pcb_fmt(out, sizeof(out), "bench/results/%s-%s", stamp, host);
		o->out = out;
	}
	rc = checks(o);
	if (rc) {
		free(o);
		return rc;
	}
	for (int b = 0, len = 0; b < o->nr_budgets; b++) {
		char one[32];

		pcb_fmt_size(o->budgets[b], one, sizeof(one));
		len += pcb_fmt(size + len, sizeof(size) - (size_t)len, "%s%s",
			       b ? "," : "", one);
	}
	printf("pagecache %s: %d workload%s, budget%s %s, %d rep%s%s, timed runs %g s%s; "
	       "test files under %s; results in %s\n", suite ? "run" : "bench",
	       o->nr_workloads, o->nr_workloads == 1 ? "" : "s",
	       o->nr_budgets == 1 ? "" : "s", size, o->reps,
	       o->reps == 1 ? "" : "s",
	       o->reps == 1 ? "" : o->order == PCB_ORDER_TURNS ? " by turns" :
	       " in sequence", o->duration,
	       o->profile ? ", perf profiles" : "", o->dir, o->out);
	fflush(stdout);
	rc = pcb_run_all(o, files);
	free(o);
	return rc;
}

int pc_bench_main(int argc, char **argv)
{
	return bench(argc, argv, false, NULL);
}

int pcb_suite_main(int argc, char **argv, char ***files)
{
	*files = NULL;
	return bench(argc, argv, true, files);
}
