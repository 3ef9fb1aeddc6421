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

#include "model.h"

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

static void put_file_name(FILE *f, const char *dir, const char *a,
			  const char *b, long rep, const char *what)
{
	char *name;
	size_t len;
	FILE *m = open_memstream(&name, &len);

	if (!m)
		return;
	fprintf(m, "%s/", dir);
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
	fputs("set output ", f);
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

/* The chart of the headline per repetition; true if one was written. */
static bool reps_chart(const struct pcc_db *db, size_t k, const char *dir,
		       FILE *f)
{
	const struct pcc_case *c = &db->kase[k];
	const struct pcc_metric *m = pcc_headline(c);
	size_t nrep = 0, col = 2;
	bool nonneg = true, first = true;

	if (!m)
		return false;
	for (size_t s = 0; s < db->nset; s++) {
		const struct pcc_vals *v = &m->per_set[s];

		nrep = v->n > nrep ? v->n : nrep;
		for (size_t i = 0; i < v->n; i++)
			nonneg &= v->v[i] >= 0;
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
	put_file_name(f, dir, c->name, NULL, 0, "reps");
	fprintf(f, "set title sprintf('%%s: %%s of each repetition "
		"(%s is better)', ", m->higher ? "higher" : "lower");
	put_str(f, c->name);
	fputs(", ", f);
	put_str(f, m->name);
	fputs(")\nset xlabel 'repetition'\nset ylabel ", f);
	put_str(f, m->name);
	fprintf(f, "\nset xtics 1\nset xrange [0.5:%zu.5]\n", nrep);
	if (nonneg)
		fputs("set yrange [0:*]\n", f);
	fputs("plot", f);
	for (size_t s = 0; s < db->nset; s++, col++) {
		if (!m->per_set[s].n)
			continue;
		fprintf(f, "%s $reps%zu using 1:%zu with linespoints lw 2 pt 7 "
			"title ", first ? "" : ",", k, col);
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
	      "draw again with: gnuplot THIS_FILE\n"
	      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	      "    set terminal pngcairo size 1000,560 noenhanced font ',10'\n"
	      "} else {\n"
	      "    set terminal png size 1000,560 noenhanced\n"
	      "}\n", f);
	for (size_t k = 0; k < db->ncase; k++)
		charts += reps_chart(db, k, dir, f);
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

int pcc_plot(const struct pcc_db *db, const char *dir, FILE *err)
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
		fprintf(err, "compare: --plot %s: %s\n", dir, strerror(-rc));
		free(gp);
		return rc;
	}
	if (asprintf(&script, "%s/compare-plots.gp", dir) < 0) {
		free(gp);
		return -ENOMEM;
	}
	f = fopen(script, "w");
	if (!f) {
		rc = -errno;
		fprintf(err, "compare: %s: %s\n", script, strerror(-rc));
		goto out;
	}
	charts = write_script(db, dir, f);
	if (fclose(f) != 0) {
		rc = -EIO;
		fprintf(err, "compare: %s: write failed\n", script);
		goto out;
	}
	if (!charts)
		goto out;
	f = open_memstream(&cmd, &len);
	if (!f) {
		rc = -ENOMEM;
		goto out;
	}
	sh_quote(f, gp);
	fputc(' ', f);
	sh_quote(f, script);
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
