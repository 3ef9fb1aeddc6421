/*
 * plot.c - `--plot DIR`: PNG charts through gnuplot.
 *
 * One gnuplot script, DIR/compare-plots.gp, holds the data inline
 * ($name << EOD blocks) and every chart, so one gnuplot process draws
 * them all and the script can be rerun or edited by hand.  Charts:
 * - CASE.reps.png: the headline figure of each repetition, one line per
 *   set, x = repetition, y = the metric (its name is its unit);
 * - CASE.SET.repN.counters.png: for each repetition that recorded
 *   "samples", the page counters free, inactive, active, dirty and
 *   writeback over time (seconds since the start of the run).
 * File names keep [A-Za-z0-9._=+-] of the case and set names (their
 * first 100 characters) and turn anything else into '_'.  Terminal
 * pngcairo when the gnuplot has it, png otherwise; text is not "enhanced"
 * (no '_' subscripts).
 *
 * gnuplot is the binary named by PC_GNUPLOT, else "gnuplot" on PATH.
 * When there is none the plots are skipped with a message; the tables do
 * not depend on them.  gnuplot's own messages are passed on to err.
 *
 * Reads the db only; single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verdict.h"

static const char *const counters[] = {
	"free", "inactive", "active", "dirty", "writeback",
};
static const char *const colours[] = {
	"#2ca02c", "#1f77b4", "#d62728", "#ff7f0e", "#7b3294",
};
#define NCOUNTER (sizeof(counters) / sizeof(counters[0]))

/* The gnuplot to run (malloc'd), or NULL when there is none. */
static char *find_gnuplot(void)
{
	const char *name = getenv("PC_GNUPLOT");
	const char *path = getenv("PATH");

	if (!name || !*name)
		name = "gnuplot";
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	while (path && *path) {
		size_t len = strcspn(path, ":");
		char *cand;

		if (asprintf(&cand, "%.*s/%s", (int)len, len ? path : ".",
			     name) < 0)
			return NULL;
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += len + (path[len] == ':');
	}
	return NULL;
}

static int mkdir_p(const char *dir)
{
	char *p = strdup(dir);
	int rc = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = 0;
			if (mkdir(p, 0777) < 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	if (!rc) {
		struct stat st;

		if (stat(dir, &st) < 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
	}
	return rc;
}

/* A gnuplot single-quoted string: '' stands for '. */
static void put_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < ' ' ? ' ' : *s, f);	/* one line */
	}
	fputc('\'', f);
}

char *pcc_plot_file(const char *a, const char *b, long rep, const char *what)
{
	char *name = NULL;
	size_t len;
	FILE *m = open_memstream(&name, &len);

	if (!m)
		return NULL;
	for (const char *parts[] = { a, b }, **p = parts; p < parts + 2; p++) {
		if (!*p)
			continue;
		if (p != parts)
			fputc('.', m);
		for (const char *s = *p; *s && s - *p < 100; s++)
			fputc(strchr("._=+-", *s) || (*s >= 'a' && *s <= 'z') ||
			      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
			      ? *s : '_', m);
	}
	if (rep > 0)
		fprintf(m, ".rep%ld", rep);
	fprintf(m, ".%s.png", what);
	fclose(m);
	return name;
}

static void put_file_name(FILE *f, const char *dir, const char *a,
			  const char *b, long rep, const char *what)
{
	char *name = pcc_plot_file(a, b, rep, what);

	if (!name)
		return;
	fputs("set output ", f);
	put_str(f, dir);
	fputs(" . '/' . ", f);
	put_str(f, name);
	fputc('\n', f);
	free(name);
}

static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.17g", v);
	else
		fputs(" NaN", f);
}

static void put_reset(FILE *f)
{
	fputs("reset\nset grid\nset key outside right top\n", f);
}

/* pngcairo when the gnuplot has it, png otherwise */
static void put_terminal(FILE *f, int w, int h)
{
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"    set terminal pngcairo size %d,%d noenhanced font ',10'\n"
		"} else {\n"
		"    set terminal png size %d,%d noenhanced\n"
		"}\n", w, h, w, h);
}

/* The chart of the headline per repetition; true if one was written.
 * For the report (v given): the base dark grey, the subject blue. */
static bool reps_chart(const struct pcc_db *db, const struct pcc_verdict *v,
		       size_t k, const char *dir, FILE *f)
{
	static const char *const others[] = { "#ff7f0e", "#2ca02c", "#9467bd",
					      "#8c564b", "#e377c2", "#17becf" };
	bool report = v != NULL;
	size_t other = 0;
	const struct pcc_case *c = &db->kase[k];
	const struct pcc_metric *m = pcc_headline(c);
	size_t nrep = 0, col = 2;
	bool nonneg = true, first = true;
	double lo = INFINITY, hi = 0;

	if (!m)
		return false;
	for (size_t s = 0; s < db->nset; s++) {
		const struct pcc_vals *vals = &m->per_set[s];

		nrep = vals->n > nrep ? vals->n : nrep;
		for (size_t i = 0; i < vals->n; i++) {
			nonneg &= vals->v[i] >= 0;
			lo = vals->v[i] < lo ? vals->v[i] : lo;
			hi = vals->v[i] > hi ? vals->v[i] : hi;
		}
	}
	if (!nrep)
		return false;
	fprintf(f, "\n$reps%zu << EOD\n", k);
	for (size_t i = 0; i < nrep; i++) {
		fprintf(f, "%zu", i + 1);
		for (size_t s = 0; s < db->nset; s++)
			put_num(f, i < m->per_set[s].n ? m->per_set[s].v[i] : NAN);
		fputc('\n', f);
	}
	fputs("EOD\n", f);
	put_reset(f);
	if (report)
		put_terminal(f, 900, 400);
	put_file_name(f, dir, c->name, NULL, 0, "reps");
	fprintf(f, "set title sprintf('%%s: %%s of each repetition "
		"(%s is better)', ", m->higher ? "higher" : "lower");
	put_str(f, c->name);
	fputs(", ", f);
	put_str(f, m->name);
	fputs(")\nset xlabel 'repetition'\nset ylabel ", f);
	put_str(f, m->name);
	fprintf(f, "\nset xtics 1\nset xrange [0.5:%zu.5]\n", nrep);
	if (report && lo > 0 && hi / lo > 30)	/* engines 100x apart */
		fputs("set logscale y\nset ylabel offset 1,0\n", f);
	else if (nonneg)
		fputs("set yrange [0:*]\n", f);
	if (report && hi >= 1e5)		/* 2.5M, not 2.5e+06 */
		fputs("set format y '%.1s%c'\n", f);
	fputs("plot", f);
	for (size_t s = 0; s < db->nset; s++, col++) {
		if (!m->per_set[s].n)
			continue;
		fprintf(f, "%s $reps%zu using 1:%zu with linespoints lw 2 pt 7 ",
			first ? "" : ",", k, col);
		if (report)
			fprintf(f, "lc rgb '%s' ", s == v->base ? "#444444" :
				s == v->subj ? "#1f77b4" :
				others[other++ % (sizeof(others) / sizeof(*others))]);
		fputs("title ", f);
		put_str(f, db->set[s]);
		first = false;
	}
	fputc('\n', f);
	return true;
}

/* The counters of one repetition over time; true if a chart was written. */
static bool counters_chart(const struct pcc_db *db,
			   const struct pcc_result *r, json_t *samples,
			   long rep, size_t id, const char *dir, FILE *f)
{
	json_t *t = json_object_get(samples, "t");
	json_t *col[NCOUNTER];
	size_t n = json_array_size(t), ncol = 0;
	bool first = true;

	for (size_t c = 0; c < NCOUNTER; c++) {
		col[c] = json_object_get(samples, counters[c]);
		ncol += json_is_array(col[c]);
	}
	if (!n || !ncol)
		return false;
	fprintf(f, "\n$ctr%zu << EOD\n", id);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(t, i);

		put_num(f, json_is_number(x) ? json_number_value(x) : NAN);
		for (size_t c = 0; c < NCOUNTER; c++) {
			json_t *y = json_array_get(col[c], i);

			put_num(f, json_is_number(y) ? json_number_value(y) : NAN);
		}
		fputc('\n', f);
	}
	fputs("EOD\n", f);
	put_reset(f);
	put_file_name(f, dir, db->kase[r->kase].name, db->set[r->set], rep,
		      "counters");
	fputs("set title sprintf('%s on %s, repetition %d: page counters "
	      "during the run', ", f);
	put_str(f, db->kase[r->kase].name);
	fputs(", ", f);
	put_str(f, db->set[r->set]);
	fprintf(f, ", %ld)\nset xlabel 'time since the start of the run (s)'\n"
		"set ylabel 'pages (4 KiB)'\nset yrange [0:*]\nplot", rep);
	for (size_t c = 0; c < NCOUNTER; c++) {
		if (!json_is_array(col[c]))
			continue;
		fprintf(f, "%s $ctr%zu using 1:%zu with lines lw 2 lc rgb '%s' "
			"title '%s'", first ? "" : ",", id, c + 2, colours[c],
			counters[c]);
		first = false;
	}
	fputc('\n', f);
	return true;
}

/* Write the script; returns the number of charts in it. */
static size_t write_script(const struct pcc_db *db, const char *dir,
			   FILE *f)
{
	size_t charts = 0, id = 0;

	fputs("# Written by `pagecache compare --plot`; "
	      "draw again with: gnuplot THIS_FILE\n", f);
	put_terminal(f, 1000, 560);
	for (size_t k = 0; k < db->ncase; k++)
		charts += reps_chart(db, NULL, k, dir, f);
	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		long before = 0;
		size_t j;
		json_t *rep;

		if (strcmp(r->status, "ok"))
			continue;
		/* number repetitions across merged files of a set and case */
		for (size_t e = 0; e < i; e++)
			if (db->res[e]->set == r->set &&
			    db->res[e]->kase == r->kase)
				before += (long)json_array_size(db->res[e]->reps);
		json_array_foreach(r->reps, j, rep) {
			json_t *s = json_object_get(rep, "samples");

			if (s)
				charts += counters_chart(db, r, s,
							 before + (long)j + 1,
							 id++, dir, f);
		}
	}
	return charts;
}

/* ---- the report's charts (--report DIR: DIR/plots) ---- */

static const char *const verdict_colour[] = {
	[PCC_REAL_UNKNOWN] = "#9e9e9e", [PCC_REAL_NO] = "#9e9e9e",
	[PCC_REAL_BETTER] = "#2ca02c", [PCC_REAL_WORSE] = "#d62728",
};

/* A datablock string: "..." with no double quote inside. */
static void put_dq(FILE *f, const char *s)
{
	fputs(" \"", f);
	for (; *s; s++)
		fputc(*s == '"' || (unsigned char)*s < ' ' ? '\'' : *s, f);
	fputc('"', f);
}

/*
 * overview.ratio.png: one bar per case from 1 to its headline ratio (log
 * scale, above 1 = the subject is better), green or red for a real
 * change, grey otherwise; the whiskers span the extreme runs; the ratio
 * is written beyond the whisker, on the bar's side of 1.
 */
static bool overview_chart(const struct pcc_db *db, const struct pcc_verdict *v,
			   const char *dir, FILE *f)
{
	double lo = 1, hi = 1;
	size_t n = 0;

	fputs("\n$overview << EOD\n", f);
	for (size_t i = 0; i < v->nrow; i++) {
		const struct pcc_verdict_row *r = &v->row[i];
		double a = isnan(r->ratio_lo) ? r->ratio : r->ratio_lo;
		double b = isnan(r->ratio_hi) ? r->ratio : r->ratio_hi;
		char label[32];

		if (!(r->ratio > 0) || !isfinite(r->ratio))
			continue;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		fprintf(f, "%zu", n++);
		put_dq(f, r->c->name);
		put_num(f, r->ratio);
		put_num(f, a);
		put_num(f, b);
		fprintf(f, " %ld", strtol(verdict_colour[r->real] + 1, NULL, 16));
		snprintf(label, sizeof(label), "%.2f", r->ratio);
		put_dq(f, label);
		fputc('\n', f);
	}
	fputs("EOD\n", f);
	if (!n)
		return false;
	put_reset(f);
	put_terminal(f, 900, 110 + 30 * (int)n);
	put_file_name(f, dir, "overview", NULL, 0, "ratio");
	fputs("set title sprintf('%s / %s: the headline of each workload as a "
	      "ratio (above 1: %s is better)', ", f);
	put_str(f, db->set[v->subj]);
	fputs(", ", f);
	put_str(f, db->set[v->base]);
	fputs(", ", f);
	put_str(f, db->set[v->subj]);
	fprintf(f, ")\nunset key\nset logscale x 2\nset format x '%%g'\n"
		"set xrange [%g:%g]\nset yrange [%zu.5:-0.5]\nset ytics nomirror\n"
		"set mxtics 4\nset grid noytics xtics mxtics\n"
		"set style fill solid 0.85 noborder\n"
		"set xlabel 'ratio of the means (log scale); whiskers: the "
		"extreme runs'\n"
		"set arrow 1 from 1, graph 0 to 1, graph 1 nohead lw 1.5 "
		"lc rgb '#333333' front\n", lo / 1.8, hi * 1.5, n - 1);
	fputs("plot $overview using 3:1:(($3<1)?$3:1):(($3<1)?1:$3):($1-0.32):"
	      "($1+0.32):6:ytic(2) with boxxyerror lc rgb variable, \\\n"
	      "     '' using 3:1:4:5 with xerrorbars lc rgb '#222222' pt 7 "
	      "ps 0.5, \\\n"
	      "     '' using ($3>=1?($5>$3?$5:$3)*1.04:NaN):1:7 with labels "
	      "left, \\\n"
	      "     '' using ($3<1?($4<$3?$4:$3)/1.04:NaN):1:7 with labels "
	      "right\n", f);
	return true;
}

/*
 * The repetition of set s in case k whose headline is the median (the
 * lower middle one), among those with samples: its samples, its number
 * among the set's repetitions (1-based) and their count.
 */
static json_t *median_samples(const struct pcc_db *db, size_t k, size_t s,
			      long *rep, long *nrep, const char **engine)
{
	const char *h = NULL;
	json_t *best = NULL;
	double vals[512];
	long nums[512];
	json_t *samp[512];
	size_t n = 0;

	*nrep = 0;
	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		size_t j;
		json_t *rp;

		if ((size_t)r->kase != k || (size_t)r->set != s ||
		    strcmp(r->status, "ok"))
			continue;
		h = r->headline;
		*engine = r->engine;
		json_array_foreach(r->reps, j, rp) {
			json_t *sm = json_object_get(rp, "samples");
			json_t *x = json_object_get(json_object_get(rp, "metrics"), h);

			++*nrep;
			if (n == 512 || json_array_size(json_object_get(sm, "t")) < 2 ||
			    !json_is_number(x))
				continue;
			vals[n] = json_number_value(x);
			nums[n] = *nrep;
			samp[n++] = sm;
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t below = 0, same = 0;

		for (size_t j = 0; j < n; j++) {
			below += vals[j] < vals[i];
			same += vals[j] == vals[i] && j < i;
		}
		if (below + same == (n - 1) / 2) {
			best = samp[i];
			*rep = nums[i];
		}
	}
	return best;
}

/* A datablock of samples in MiB; returns the largest value, *t the end,
 * *t0 the first (negative: the warm-up's, bench's "warmup"). */
static double put_samples(FILE *f, const char *name, json_t *samples, double *t,
			  double *t0)
{
	json_t *ts = json_object_get(samples, "t");
	double top = 0;

	fprintf(f, "\n$%s << EOD\n", name);
	for (size_t i = 0; i < json_array_size(ts); i++) {
		double x = json_number_value(json_array_get(ts, i));

		*t = x > *t ? x : *t;
		*t0 = x < *t0 ? x : *t0;
		put_num(f, x);
		for (size_t c = 0; c < NCOUNTER; c++) {
			json_t *y = json_array_get(json_object_get(samples,
							counters[c]), i);
			double mib = json_is_number(y) ?
				     json_number_value(y) * 4096 / 1048576 : NAN;

			top = mib > top ? mib : top;
			put_num(f, mib);
		}
		fputc('\n', f);
	}
	fputs("EOD\n", f);
	return top;
}

static void put_counter_plot(FILE *f, const char *block)
{
	fputs("plot", f);
	for (size_t c = 0; c < NCOUNTER; c++)
		fprintf(f, "%s $%s using 1:%zu with lines lw 2 lc rgb '%s' "
			"title '%s'", c ? "," : "", block, c + 2, colours[c],
			counters[c]);
	fputc('\n', f);
}

/* Where an engine's samples come from (tools/bench/README.md): a program
 * under pagecache publishes them live from each of its processes. */
static const char *counters_source(const char *engine)
{
	return !strcmp(engine, "pagecache") ?
	       "its own counters (pc_vmstat, summed over its processes)" :
	       "its memory cgroup (memory.stat)";
}

/*
 * CASE.counters.png: the subject's counters next to the base's, one time
 * axis and one scale, the median repetition of each; the axis from the
 * first sample (a warm-up's are before 0), a dashed line at 0.
 */
static bool counters_pair(const struct pcc_db *db, const struct pcc_verdict *v,
			  size_t k, const char *dir, FILE *f)
{
	size_t sets[2] = { v->subj, v->base };
	json_t *smp[2];
	long rep[2] = { 0, 0 }, nrep[2];
	const char *eng[2] = { "", "" };
	double t = 0, t0 = 0, top = 0;
	int panels = 0;

	for (int i = 0; i < 2; i++) {
		smp[i] = i && v->subj == v->base ? NULL :
			 median_samples(db, k, sets[i], &rep[i], &nrep[i], &eng[i]);
		if (smp[i]) {
			double y = put_samples(f, i ? "cbase" : "csubj", smp[i], &t,
					       &t0);

			top = y > top ? y : top;
			panels++;
		}
	}
	if (!panels)
		return false;
	put_reset(f);
	put_terminal(f, panels == 2 ? 1200 : 700, 430);
	put_file_name(f, dir, db->kase[k].name, NULL, 0, "counters");
	fprintf(f, "set multiplot layout 1,%d title sprintf('%%s: page "
		"counters during the measured part, the median repetition of "
		"each', ", panels);
	put_str(f, db->kase[k].name);
	fprintf(f, ")\nset key outside bottom center horizontal samplen 2 "
		"spacing 1 width -1\n"
		"set xrange [%g:%g]\nset yrange [0:%g]\n"
		"set xlabel 'seconds since the start of the measured part%s'\n"
		"set ylabel 'MiB'\n", t0, t > 0 ? t : 1, top > 0 ? top * 1.05 : 1,
		t0 < 0 ? " (before 0: the warm-up, not measured)" : "");
	if (t0 < 0)	/* where the warm-up ends */
		fputs("set arrow 1 from 0, graph 0 to 0, graph 1 nohead dt 2 "
		      "lc rgb '#555555'\n", f);
	for (int i = 0; i < 2; i++) {
		if (!smp[i])
			continue;
		fputs("set title sprintf('%s: %s, repetition %d of %d', ", f);
		put_str(f, db->set[sets[i]]);
		fputs(", ", f);
		put_str(f, counters_source(eng[i]));
		fprintf(f, ", %ld, %ld)\n", rep[i], nrep[i]);
		put_counter_plot(f, i ? "cbase" : "csubj");
	}
	fputs("unset multiplot\n", f);
	return true;
}

/* The report's script: overview, then each case's repetitions and counters. */
static size_t pcc_chart_script(const struct pcc_db *db,
			       const struct pcc_verdict *v, const char *dir,
			       FILE *f)
{
	size_t charts = 0;

	fputs("# Written by `pagecache report` (compare --report); draw again "
	      "in this folder with: gnuplot report-plots.gp\n", f);
	charts += overview_chart(db, v, dir, f);
	for (size_t k = 0; k < db->ncase; k++) {
		charts += reps_chart(db, v, k, dir, f);
		charts += counters_pair(db, v, k, dir, f);
	}
	return charts;
}

/* 'like this', for sh */
static void sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * Write dir/name with @write, then run gnuplot on it (in @dir when @in_dir,
 * the script's output names then being relative to it).  Returns the
 * number of charts, -ENOENT without gnuplot, or another -errno.
 */
static int draw(const struct pcc_db *db, const struct pcc_verdict *v,
		const char *dir, const char *name, bool in_dir,
		size_t (*write)(const struct pcc_db *, const struct pcc_verdict *,
				const char *, FILE *),
		FILE *err)
{
	char *gp = find_gnuplot(), *script = NULL, *cmd = NULL, line[1024];
	size_t charts = 0, len;
	FILE *f, *p;
	int rc, status;

	if (!gp) {
		fprintf(err, "compare: gnuplot not found (package gnuplot-nox): "
			"plots skipped\n");
		return -ENOENT;
	}
	rc = mkdir_p(dir);
	if (rc < 0) {
		fprintf(err, "compare: %s: %s\n", dir, strerror(-rc));
		free(gp);
		return rc;
	}
	rc = pcc_file_create(dir, name, &script, &f, err);
	if (rc < 0)
		goto out;
	charts = write(db, v, in_dir ? "." : dir, f);
	rc = pcc_file_close(f, script, err);
	if (rc < 0)
		goto out;
	if (!charts)
		goto out;
	f = open_memstream(&cmd, &len);
	if (!f) {
		rc = -ENOMEM;
		goto out;
	}
	if (in_dir) {
		fputs("cd ", f);
		sh_quote(f, dir);
		fputs(" && ", f);
	}
	sh_quote(f, gp);
	fputc(' ', f);
	sh_quote(f, in_dir ? name : script);
	fputs(" 2>&1", f);
	fclose(f);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p) {
		rc = -errno;
		fprintf(err, "compare: cannot run %s: %s\n", gp, strerror(-rc));
		goto out;
	}
	while (fgets(line, sizeof(line), p))
		fprintf(err, "gnuplot: %s", line);
	status = pclose(p);
	if (status != 0) {
		fprintf(err, "compare: %s %s failed (status %d)\n", gp, script,
			WIFEXITED(status) ? WEXITSTATUS(status) : status);
		rc = -EIO;
	}
out:
	free(cmd);
	free(script);
	free(gp);
	return rc < 0 ? rc : (int)charts;
}

static size_t plot_script(const struct pcc_db *db, const struct pcc_verdict *v,
			  const char *dir, FILE *f)
{
	(void)v;
	return write_script(db, dir, f);
}

int pcc_plot(const struct pcc_db *db, const char *dir, FILE *err)
{
	return draw(db, NULL, dir, "compare-plots.gp", false, plot_script, err);
}

int pcc_plot_report(const struct pcc_db *db, const struct pcc_verdict *v,
		    const char *dir, FILE *err)
{
	return draw(db, v, dir, "report-plots.gp", true, pcc_chart_script, err);
}
