/*
 * compare.c - the `pagecache compare` and `pagecache report` commands:
 * options, then
 *
 *   RESULT... --load.c--> result files --group.c--> sets x cases x metrics
 *        --> verdict.c (the verdict: the default for several workloads)
 *        --> lkp.c / mmtests.c (the tables: --format lkp|mmtests|both, the
 *            default for one workload)
 *        --> plot.c (PNGs, --plot DIR)
 *        --> --report DIR: compare.txt (both tables, every note), plots/
 *            and report.html (report.c), the verdict on out
 *        --> gate.c (--fail-below PCT: exit 1 on a real regression)
 *
 * `pagecache report DIR` is `compare --report DIR --base kernel DIR`.
 *
 * Exit status: 0; 1 when the gate finds a regression; 2 for a bad command
 * line, a RESULT that does not exist, no readable result at all, or plots
 * or a report asked for that could not be made (gnuplot missing is not an
 * error: the plots are skipped with a message, and the report says so).
 *
 * Reentrant: no globals, options parsed by hand (no getopt state), so
 * tests call pcc_run in-process as often as they like.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "model.h"
#include "verdict.h"

enum { FMT_AUTO = 0, FMT_LKP = 1, FMT_MMTESTS = 2, FMT_BOTH = 3,
       FMT_VERDICT = 4 };

struct opts {
	int format;
	bool all;
	bool counters;
	const char *plot;
	const char *report;
	const char *base;
	double fail_below;	/* NAN: no gate */
	char **paths;
	int npaths;
};

static const char usage[] =
"usage: pagecache compare [--format verdict|lkp|mmtests|both] [--all]\n"
"                         [--counters] [--base SET] [--plot DIR]\n"
"                         [--report DIR] [--fail-below PCT] RESULT...\n"
"\n"
"Compare benchmark results (files written by `pagecache bench`, or folders\n"
"searched recursively for *.json).  Runs are grouped by workload and set\n"
"against each other by label, engine or config, whichever differs; the\n"
"first set given or found is the base.\n"
"\n"
"  --format F        verdict: one row per workload, its headline against\n"
"                    the base, whether the change is real, one GEO-MEAN\n"
"                    (the default when the results hold several workloads);\n"
"                    lkp: %stddev/%change columns and GEO-MEAN lines;\n"
"                    mmtests: Min/Hmean|Amean/Stddev/CoeffVar/Max rows;\n"
"                    both (the default for one workload)\n"
"  --all             LKP table: every line, not only real changes, and\n"
"                    every counter\n"
"  --counters        LKP table: the counters' deltas (vmstat, memcg) too\n"
"  --base SET        the set to compare against (default: the first found)\n"
"  --plot DIR        PNG charts (through gnuplot) into DIR\n"
"  --report DIR      write DIR/compare.txt (both tables, counters, notes),\n"
"                    DIR/report.html and its charts in DIR/plots\n"
"  --fail-below PCT  exit 1 when a headline metric of a set is worse than\n"
"                    the base by more than PCT percent and the change is\n"
"                    real (>= 3 samples each, ranges apart, ratio > 1.01)\n"
"  --help            this text\n"
"\n"
"Exit status: 0 done, 1 regression found by --fail-below, 2 bad usage or\n"
"no readable result.\n";

static int bad_usage(FILE *err, const char *fmt, const char *arg)
{
	fputs("compare: ", err);
	fprintf(err, fmt, arg);
	fputs("\n(see pagecache compare --help)\n", err);
	return 2;
}

/*
 * Parse argv into o.  Returns -1 to go on, or the exit status (0 after
 * --help).  o->paths is allocated.
 */
static int parse(int argc, char **argv, struct opts *o, FILE *out, FILE *err)
{
	bool dashdash = false;

	*o = (struct opts){ .format = FMT_AUTO, .fail_below = NAN };
	o->paths = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*o->paths));
	if (!o->paths)
		return bad_usage(err, "%s", "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		size_t nlen;

		if (dashdash || a[0] != '-' || !a[1]) {
			o->paths[o->npaths++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, out);
			return 0;
		}
		if (!strcmp(a, "--all")) {
			o->all = true;
			continue;
		}
		if (!strcmp(a, "--counters")) {
			o->counters = true;
			continue;
		}
		eq = strchr(a, '=');
		nlen = eq ? (size_t)(eq - a) : strlen(a);
		if (!((nlen == 8 && !strncmp(a, "--format", 8)) ||
		      (nlen == 6 && !strncmp(a, "--plot", 6)) ||
		      (nlen == 8 && !strncmp(a, "--report", 8)) ||
		      (nlen == 6 && !strncmp(a, "--base", 6)) ||
		      (nlen == 12 && !strncmp(a, "--fail-below", 12))))
			return bad_usage(err, "unknown option %s", a);
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return bad_usage(err, "%s needs a value", a);
		if (a[2] == 'f' && a[3] == 'o') {
			if (!strcmp(val, "lkp"))
				o->format = FMT_LKP;
			else if (!strcmp(val, "mmtests"))
				o->format = FMT_MMTESTS;
			else if (!strcmp(val, "both"))
				o->format = FMT_BOTH;
			else if (!strcmp(val, "verdict"))
				o->format = FMT_VERDICT;
			else
				return bad_usage(err, "--format %s: want verdict, "
						 "lkp, mmtests or both", val);
		} else if (a[2] == 'p' || a[2] == 'r') {
			if (!*val)
				return bad_usage(err, "%s needs a folder", a);
			if (a[2] == 'p')
				o->plot = val;
			else
				o->report = val;
		} else if (a[2] == 'b') {
			if (!*val)
				return bad_usage(err, "%s", "--base needs a set name");
			o->base = val;
		} else {
			char *end;
			double pct;

			errno = 0;
			pct = strtod(val, &end);
			if (end == val || *end || errno || !isfinite(pct) ||
			    pct < 0)
				return bad_usage(err, "--fail-below %s: want a "
						 "percentage >= 0", val);
			o->fail_below = pct;
		}
	}
	if (!o->npaths)
		return bad_usage(err, "%s", "no RESULT given: name result files "
				 "or folders");
	return -1;
}

static void print_intro(const struct pcc_db *db, FILE *out)
{
	fprintf(out, "%zu result file%s, %zu case%s; sets: ", db->nres,
		db->nres == 1 ? "" : "s", db->ncase, db->ncase == 1 ? "" : "s");
	for (size_t s = 0; s < db->nset; s++)
		fprintf(out, "%s%s%s", s ? ", " : "", db->set[s],
			s ? "" : " (base)");
	fputc('\n', out);
	for (size_t i = 0; i < db->nnote; i++)
		fprintf(out, "note: %s\n", db->note[i]);
}

static void print_tables(const struct pcc_db *db, int format, bool all,
			 bool counters, FILE *out)
{
	if (format & FMT_LKP) {
		fprintf(out, "\nLKP style: %%change against %s; ± %%stddev shown "
			"above 2%%\n\n", db->set[0]);
		pcc_print_lkp(db, all, counters, out);
	}
	if (format & FMT_MMTESTS) {
		fprintf(out, "\nmmtests style: (%%) positive when better than %s;"
			" *%%* when the means differ beyond their 95%% "
			"confidence intervals\n\n", db->set[0]);
		pcc_print_mmtests(db, out);
	}
}

/* More than one workload among the results? */
static bool many_workloads(const struct pcc_db *db)
{
	for (size_t k = 1; k < db->ncase; k++)
		if (strcmp(db->kase[k].workload, db->kase[0].workload))
			return true;
	return false;
}

/* DIR/compare.txt: the intro, every note, both tables with counters. */
static int write_tables(const struct pcc_db *db, const char *dir, bool all,
			FILE *err)
{
	char *path;
	FILE *f;
	int rc;

	rc = pcc_file_create(dir, "compare.txt", &path, &f, err);
	if (rc < 0)
		return rc;
	print_intro(db, f);
	print_tables(db, FMT_BOTH, all, true, f);
	rc = pcc_file_close(f, path, err);
	free(path);
	return rc;
}

/* --report DIR: compare.txt, the charts, report.html. */
static int write_report(const struct pcc_db *db, const struct pcc_verdict *v,
			const char *dir, bool all, FILE *err)
{
	char *plots;
	int rc, n;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		rc = -errno;
		fprintf(err, "compare: --report %s: %s\n", dir, strerror(-rc));
		return rc;
	}
	rc = write_tables(db, dir, all, err);
	if (rc < 0)
		return rc;
	if (asprintf(&plots, "%s/plots", dir) < 0)
		return -ENOMEM;
	n = pcc_plot_report(db, v, plots, err);
	free(plots);
	if (n < 0 && n != -ENOENT)
		return n;
	return pcc_report_html(db, v, dir, n >= 0, err);
}

int pcc_run(int argc, char **argv, FILE *out, FILE *err)
{
	struct pcc_db db = { 0 };
	struct pcc_verdict v = { 0 };
	struct opts o;
	int rc = parse(argc, argv, &o, out, err);
	int format;

	if (rc >= 0)
		goto done;
	rc = pcc_load(&db, o.paths, o.npaths, err);
	if (rc == 0 && db.nres == 0) {
		fprintf(err, "compare: no readable result file in the %d "
			"RESULT argument%s\n", o.npaths, o.npaths == 1 ? "" : "s");
		rc = 2;
		goto done;
	}
	if (rc == 0)
		rc = pcc_group(&db, o.paths, o.base);
	if (rc == 0)
		rc = pcc_verdict_build(&db, &v);
	if (rc < 0) {
		if (rc != -ENOENT)
			fprintf(err, "compare: %s\n", strerror(-rc));
		rc = 2;
		goto done;
	}
	format = o.format;
	if (format == FMT_AUTO)
		format = many_workloads(&db) && db.nset > 1 ? FMT_VERDICT
							    : FMT_BOTH;
	if (o.report && write_report(&db, &v, o.report, o.all, err) < 0)
		rc = 2;
	if (format == FMT_VERDICT) {
		pcc_verdict_print(&db, &v, o.report, out);
	} else {
		print_intro(&db, out);
		print_tables(&db, format, o.all, o.counters, out);
		if (o.report)
			fprintf(out, "\nreport: %s/report.html; both tables: "
				"%s/compare.txt\n", o.report, o.report);
	}
	if (o.plot) {
		int n;

		fflush(out);
		n = pcc_plot(&db, o.plot, err);
		if (n >= 0)
			fprintf(out, "plots: %d PNG file%s in %s (script: "
				"%s/compare-plots.gp)\n", n, n == 1 ? "" : "s",
				o.plot, o.plot);
		else if (n != -ENOENT)
			rc = 2;
	}
	if (!isnan(o.fail_below)) {
		if (o.plot || !(format & FMT_MMTESTS))	/* else blank */
			fputc('\n', out);
		if (pcc_gate(&db, o.fail_below, out)) {
			fflush(out);
			fprintf(err, "compare: headline regression beyond "
				"--fail-below %g\n", o.fail_below);
			rc = 1;
		} else {
			fprintf(out, "No headline metric is worse than the base "
				"by more than %g%% with a real change.\n",
				o.fail_below);
		}
	}
	if (rc < 0)
		rc = 0;
done:
	fflush(out);
	pcc_verdict_free(&v);
	pcc_db_free(&db);
	free(o.paths);
	return rc;
}

int pc_compare_main(int argc, char **argv)
{
	return pcc_run(argc, argv, stdout, stderr);
}

/* `pagecache report [--base SET] DIR [RESULT...]` */
int pc_report_main(int argc, char **argv)
{
	char **cargv = calloc((size_t)argc + 6, sizeof(*cargv));
	const char *base = "kernel", *dir = NULL;
	int n = 0, rc;

	if (!cargv)
		return 2;
	cargv[n++] = "compare";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: pagecache report [--base SET] DIR "
			       "[RESULT...]\n\n"
			       "Writes DIR/report.html (the verdict, charts in "
			       "DIR/plots, each workload's\nrepetitions, "
			       "counters and profiles, the machine and config) "
			       "and DIR/compare.txt\n(the LKP and mmtests "
			       "tables) from the result files in DIR (and any\n"
			       "RESULT given), and prints the verdict.  The base "
			       "is the kernel's page cache\nwhen there is a "
			       "\"kernel\" set, else the first set found.\n");
			free(cargv);
			return 0;
		}
		if (!strcmp(argv[i], "--base") && i + 1 < argc) {
			base = argv[++i];
			continue;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "report: unknown option %s (see "
				"pagecache report --help)\n", argv[i]);
			free(cargv);
			return 2;
		}
		if (!dir)
			dir = argv[i];
	}
	if (!dir) {
		fprintf(stderr, "report: name the result folder (see "
			"pagecache report --help)\n");
		free(cargv);
		return 2;
	}
	cargv[n++] = "--report";
	cargv[n++] = (char *)dir;
	cargv[n++] = "--base";
	cargv[n++] = (char *)base;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--base")) {
			i++;
			continue;
		}
		cargv[n++] = argv[i];
	}
	rc = pcc_run(n, cargv, stdout, stderr);
	free(cargv);
	return rc;
}
