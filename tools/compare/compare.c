/*
 * compare.c - the `pagecache compare` command: options, then
 *
 *   RESULT... --load.c--> result files --group.c--> sets x cases x metrics
 *        --> lkp.c / mmtests.c (tables on out)
 *        --> plot.c (PNGs, --plot DIR)
 *        --> gate.c (--fail-below PCT: exit 1 on a real regression)
 *
 * Exit status: 0; 1 when the gate finds a regression; 2 for a bad command
 * line, a RESULT that does not exist, no readable result at all, or plots
 * asked for that could not be made (gnuplot missing is not an error: the
 * plots are skipped with a message).
 *
 * Reentrant: no globals, options parsed by hand (no getopt state), so
 * tests call pcc_run in-process as often as they like.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "model.h"

enum { FMT_LKP = 1, FMT_MMTESTS = 2, FMT_BOTH = 3 };

struct opts {
	int format;
	bool all;
	bool counters;
	const char *plot;
	double fail_below;	/* NAN: no gate */
	char **paths;
	int npaths;
};

static const char usage[] =
"usage: pagecache compare [--format lkp|mmtests|both] [--all] [--counters]\n"
"                         [--plot DIR]\n"
"                         [--fail-below PCT] RESULT...\n"
"\n"
"Compare benchmark results (files written by `pagecache bench`, or folders\n"
"searched recursively for *.json).  Runs are grouped by workload and set\n"
"against each other by label, engine or config, whichever differs; the\n"
"first set given or found is the base.\n"
"\n"
"  --format F        lkp: %stddev/%change columns and GEO-MEAN lines;\n"
"                    mmtests: Min/Hmean|Amean/Stddev/CoeffVar/Max rows;\n"
"                    both (the default)\n"
"  --all             LKP table: every line, not only real changes, and\n"
"                    every counter\n"
"  --counters        LKP table: the counters' deltas (vmstat, memcg) too\n"
"  --plot DIR        PNG charts (through gnuplot) into DIR\n"
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

	*o = (struct opts){ .format = FMT_BOTH, .fail_below = NAN };
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
			else
				return bad_usage(err, "--format %s: want lkp, "
						 "mmtests or both", val);
		} else if (a[2] == 'p') {
			if (!*val)
				return bad_usage(err, "%s", "--plot needs a folder");
			o->plot = val;
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

int pcc_run(int argc, char **argv, FILE *out, FILE *err)
{
	struct pcc_db db = { 0 };
	struct opts o;
	int rc = parse(argc, argv, &o, out, err);

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
		rc = pcc_group(&db, o.paths);
	if (rc < 0) {
		if (rc != -ENOENT)
			fprintf(err, "compare: %s\n", strerror(-rc));
		rc = 2;
		goto done;
	}
	print_intro(&db, out);
	if (o.format & FMT_LKP) {
		fprintf(out, "\nLKP style: %%change against %s; ± %%stddev shown "
			"above 2%%\n\n", db.set[0]);
		pcc_print_lkp(&db, o.all, o.counters, out);
	}
	if (o.format & FMT_MMTESTS) {
		fprintf(out, "\nmmtests style: (%%) positive when better than %s;"
			" *%%* when the means differ beyond their 95%% "
			"confidence intervals\n\n", db.set[0]);
		pcc_print_mmtests(&db, out);
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
		if (o.plot || !(o.format & FMT_MMTESTS))	/* else blank */
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
done:
	fflush(out);
	pcc_db_free(&db);
	free(o.paths);
	return rc;
}

int pc_compare_main(int argc, char **argv)
{
	return pcc_run(argc, argv, stdout, stderr);
}
