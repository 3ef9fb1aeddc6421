/*
 * lkp.c - the LKP table: one column per set, the base first, one line per
 * case and metric (its own figures, then its perf profile, then its
 * counters), GEO-MEAN lines at the end.
 *
 *           kernel                   pagecache      <- set names
 *   ---------------- ---------------------------
 *            %stddev     %change         %stddev
 *                \           |               \
 *       484435 ±  3%     -13.3%     420004        aim7.jobs-per-min
 *   |<--- 16 ----->| |<----------- 28 ---------->|
 *    value   spread  change     value   spread     case.metric
 *
 * Every number comes from stats.c: %change = 100 (mean - mean_base) /
 * mean_base (the difference itself for a metric named "...%", printed
 * without a % sign); "± N%" is 100 sigma / mean with the population sigma,
 * printed only when above 2%.  A line is printed when some set's change
 * against the base is real (pcc_stats_real_change), or always with --all
 * or when there is one set only; a perf profile line ("perf-profile.*")
 * also needs 1% of the samples in some set (not with --all).  A set
 * without a run of the case leaves its column blank; a run that could not
 * be done says "n/a" (or "error") on the headline line.
 *
 * GEO-MEAN, only over figures that mean the same thing in every case it
 * spans (never over counts, sizes or CPU seconds of different workloads):
 * - "GEO-MEAN METRIC", for a headline metric that heads two cases or more
 *   (aim7's jobs-per-min over its tasks): exp(mean ln v) of the case
 *   means per set, the cases where METRIC is not the headline left aside;
 * - "GEO-MEAN headline-ratio", when the cases have different headlines:
 *   per set, exp(mean ln r) of each case's headline as a ratio to the
 *   base, turned so that above 1 is better (base / set for lower-is-better
 *   headlines); the base's is 1.
 * Every column must average the same cases, so a zero is not skipped in
 * one column only: a case with a mean <= 0 in any set (or no run in the
 * base) is left out of every column, and a set that has no run of some
 * remaining case gets no GEO-MEAN (blank) rather than one over fewer
 * cases.  A line under the GEO-MEAN names what was left out.
 *
 * Reads the db only; writes to out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "stats.h"

#define W_BASE 16	/* value 10 + spread 6 */
#define W_SET 28	/* space + change 10 + space + value 10 + spread 6 */

const char *pcc_fmt_value(double v, char *buf)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, 32, "n/a");
	else if (isinf(v))
		snprintf(buf, 32, "%sinf", v < 0 ? "-" : "");
	else if (a >= 1e10)
		snprintf(buf, 32, "%.3e", v);
	else if (a >= 1000 || fabs(v - round(v)) < 1e-9 * (a > 1 ? a : 1))
		snprintf(buf, 32, "%.0f", v);
	else if (a >= 1)
		snprintf(buf, 32, "%.2f", v);
	else
		snprintf(buf, 32, "%.3g", v);
	return buf;
}

const char *pcc_fmt_change(double change, bool absolute, char *buf)
{
	if (isnan(change))
		snprintf(buf, 32, "n/a");
	else if (isinf(change))
		snprintf(buf, 32, "%sinf", change < 0 ? "-" : "+");
	else if (absolute)
		snprintf(buf, 32, fabs(change) < 1 ? "%+.2f" : "%+.1f", change);
	else
		snprintf(buf, 32, "%+.1f%%", change);
	return buf;
}

static const char *fmt_spread(double cv, char *buf)
{
	if (!(cv > 2))		/* also NaN */
		snprintf(buf, 32, "      ");
	else if (cv < 99.5)
		snprintf(buf, 32, " ± %2.0f%%", cv);
	else
		snprintf(buf, 32, " ±%3.0f%%", cv > 999 ? 999 : cv);
	return buf;
}

/* One column's content on one line. */
struct cell {
	const char *text;	/* instead of a value ("n/a"), or NULL */
	size_t n;		/* 0: blank unless text */
	double mean, cv;
};

static void print_line(const struct pcc_db *db, const struct cell *cells,
		       bool absolute, const char *label, FILE *out)
{
	char v[32], s[32], ch[32];

	for (size_t i = 0; i < db->nset; i++) {
		const struct cell *c = &cells[i];
		const struct cell *b = &cells[0];

		if (i > 0) {
			const char *chg = "";

			if (c->n && b->n)
				chg = pcc_fmt_change(pcc_stats_lkp_change(
					b->mean, c->mean, absolute), absolute, ch);
			fprintf(out, " %10s ", chg);
		}
		if (c->n)
			fprintf(out, "%10s%s", pcc_fmt_value(c->mean, v),
				fmt_spread(c->cv, s));
		else
			fprintf(out, "%10s%6s", c->text ? c->text : "", "");
	}
	fprintf(out, "  %s\n", label);
}

static const char *header_name(const struct pcc_db *db, size_t i,
			       char *buf)
{
	size_t w = i ? W_SET - 1 : W_BASE;

	if (strlen(db->set[i]) <= w)
		return db->set[i];
	snprintf(buf, 32, "[%zu]", i);
	return buf;
}

static void print_header(const struct pcc_db *db, FILE *out)
{
	char buf[32];
	bool legend = false;

	for (size_t i = 0; i < db->nset; i++)
		legend |= header_name(db, i, buf) != db->set[i];
	for (size_t i = 0; legend && i < db->nset; i++)
		fprintf(out, "[%zu] %s\n", i, db->set[i]);
	for (size_t i = 0; i < db->nset; i++)
		fprintf(out, "%*s", i ? W_SET : W_BASE, header_name(db, i, buf));
	fputc('\n', out);
	for (size_t i = 0; i < db->nset; i++)
		fprintf(out, "%s%.*s", i ? " " : "", i ? W_SET - 1 : W_BASE,
			"--------------------------------");
	fputc('\n', out);
	for (size_t i = 0; i < db->nset; i++)
		fprintf(out, i ? "%11s%17s" : "%.0s%16s", "%change", "%stddev");
	fputc('\n', out);
	for (size_t i = 0; i < db->nset; i++)
		fprintf(out, i ? "%11s%11s      " : "%.0s%10s      ", "|", "\\");
	fputc('\n', out);
}

static void cell_of(const struct pcc_case *c, const struct pcc_metric *m,
		    size_t set, struct cell *cell)
{
	const struct pcc_vals *v = &m->per_set[set];
	struct pcc_stats st;

	*cell = (struct cell){ 0 };
	if (v->n) {
		pcc_stats_compute(v->v, v->n, &st);
		cell->n = v->n;
		cell->mean = st.mean;
		cell->cv = st.cv;
	} else if (m->headline && c->status[set] &&
		   strcmp(c->status[set], "ok")) {
		cell->text = c->status[set];
	}
}

static bool any_real(const struct pcc_db *db, const struct pcc_metric *m)
{
	const struct pcc_vals *b = &m->per_set[0];

	for (size_t i = 1; i < db->nset; i++)
		if (pcc_stats_real_change(b->v, b->n, m->per_set[i].v,
					  m->per_set[i].n))
			return true;
	return false;
}

/* A profile line worth its place: 1% of the samples or more somewhere. */
static bool hot(const struct pcc_db *db, const struct pcc_metric *m)
{
	for (size_t s = 0; s < db->nset; s++)
		if (pcc_stats_mean(m->per_set[s].v, m->per_set[s].n) >= 1)
			return true;
	return false;
}

/* The headline of case c when it is called name (any name if NULL). */
static const struct pcc_metric *geo_metric(const struct pcc_case *c,
					   const char *name)
{
	const struct pcc_metric *m = pcc_headline(c);

	return m && (!name || !strcmp(m->name, name)) ? m : NULL;
}

/* What one set contributes for one case: its mean, or for the headline
 * ratio (name NULL) its mean against the base's, above 1 when better. */
static double geo_value(const struct pcc_metric *m, size_t s, bool ratio)
{
	const struct pcc_vals *x = &m->per_set[s], *b = &m->per_set[0];
	double mean = pcc_stats_mean(x->v, x->n), base;

	if (!ratio)
		return mean;
	base = pcc_stats_mean(b->v, b->n);
	return m->higher ? mean / base : base / mean;
}

/* A GEO-MEAN line of a headline metric, or of the headline ratio (NULL). */
static void print_geomean(const struct pcc_db *db, const char *name,
			  FILE *out)
{
	size_t ncase = 0, used = 0, left = 0, blank = 0;
	double *v = calloc(db->nset * db->ncase + 1, sizeof(*v));
	struct cell *cells = calloc(db->nset, sizeof(*cells));
	char *label = NULL, *why = NULL;
	size_t wlen = 0;
	FILE *w = open_memstream(&why, &wlen);
	bool pct = false;

	if (!v || !cells || !w)
		goto out;
	for (size_t k = 0; k < db->ncase; k++) {
		const struct pcc_metric *m = geo_metric(&db->kase[k], name);
		size_t bad = db->nset;

		if (!m)
			continue;
		ncase++;
		pct = name && m->pct;
		if (!m->per_set[0].n)
			bad = 0;
		for (size_t s = 0; s < db->nset && bad == db->nset; s++) {
			const struct pcc_vals *x = &m->per_set[s];

			if (x->n && !(pcc_stats_mean(x->v, x->n) > 0))
				bad = s;
		}
		if (bad < db->nset) {
			fprintf(w, "%s%s (%s in %s)", left++ ? ", " : "",
				db->kase[k].name, m->per_set[bad].n ?
				"a mean <= 0" : "no run", db->set[bad]);
			continue;
		}
		for (size_t s = 0; s < db->nset; s++) {
			const struct pcc_vals *x = &m->per_set[s];

			v[s * db->ncase + used] = x->n ?
				geo_value(m, s, !name) : NAN;
		}
		used++;
	}
	for (size_t s = 0; s < db->nset && used; s++) {
		const double *col = &v[s * db->ncase];
		bool all = true;

		for (size_t i = 0; i < used; i++)
			all &= !isnan(col[i]);
		if (!all) {
			fprintf(w, "%sno GEO-MEAN for %s: not every case was "
				"run", left + blank++ ? "; " : "", db->set[s]);
			continue;
		}
		cells[s].n = used;
		cells[s].mean = pcc_stats_geomean(col, used, NULL);
		cells[s].cv = NAN;
	}
	fclose(w);
	w = NULL;
	if (ncase < 2 || used == 1)	/* one case is its own mean */
		goto out;
	if (!name)
		name = "headline-ratio";
	if (asprintf(&label, "GEO-MEAN %s", name) < 0)
		label = NULL;
	if (used)
		print_line(db, cells, pct, label ? label : name, out);
	if (!used)
		fprintf(out, "%*s  (no GEO-MEAN %s: every case left out: %s)\n",
			W_BASE, "", name, why);
	else if (left || blank)
		fprintf(out, "%*s  (GEO-MEAN %s over %zu of %zu cases%s%s)\n",
			W_BASE, "", name, used, ncase,
			left ? "; left out: " : "; ", why);
out:
	if (w)
		fclose(w);
	free(why);
	free(label);
	free(cells);
	free(v);
}

size_t pcc_print_lkp(const struct pcc_db *db, bool all, bool counters,
		     FILE *out)
{
	struct cell *cells = calloc(db->nset ? db->nset : 1, sizeof(*cells));
	size_t hidden = 0, lines = 0;
	bool mixed = false;

	if (!cells || !db->nset) {
		free(cells);
		return 0;
	}
	print_header(db, out);
	for (size_t k = 0; k < db->ncase; k++) {
		const struct pcc_case *c = &db->kase[k];

		/* the workload's own figures, its profile, then its counters */
		for (size_t i = 0; i < 3 * c->nmetric; i++) {
			const struct pcc_metric *m = &c->metric[i % c->nmetric];
			int kind = m->vmstat ? 2 : m->profile ? 1 : 0;
			char *label;

			if (kind != (int)(i / c->nmetric))
				continue;
			lines++;
			if (m->vmstat && !all && !counters) {
				hidden++;
				continue;
			}
			if (!all && db->nset > 1 && !any_real(db, m) &&
			    !(m->headline && c->status[0] &&
			      strcmp(c->status[0], "ok"))) {
				hidden++;
				continue;
			}
			if (!all && m->profile && !hot(db, m)) {
				hidden++;
				continue;
			}
			for (size_t s = 0; s < db->nset; s++)
				cell_of(c, m, s, &cells[s]);
			if (asprintf(&label, "%s.%s", c->name, m->name) < 0)
				continue;
			print_line(db, cells, m->pct, label, out);
			free(label);
		}
	}
	/* GEO-MEAN per headline name, in order of first appearance; then
	 * of the headline ratios when the headlines differ */
	for (size_t k = 0; k < db->ncase; k++) {
		const struct pcc_metric *m = pcc_headline(&db->kase[k]);
		bool earlier = false;

		if (!m)
			continue;
		for (size_t j = 0; j < k && !earlier; j++)
			earlier = geo_metric(&db->kase[j], m->name);
		if (!earlier)
			print_geomean(db, m->name, out);
		else
			continue;
		for (size_t j = k + 1; j < db->ncase && !mixed; j++)
			mixed = pcc_headline(&db->kase[j]) &&
				!geo_metric(&db->kase[j], m->name);
	}
	if (mixed)
		print_geomean(db, NULL, out);
	if (hidden)
		fprintf(out, "(%zu of %zu lines hidden: no real change against "
			"the base; --all shows them)\n", hidden, lines);
	free(cells);
	return hidden;
}
