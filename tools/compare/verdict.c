/*
 * verdict.c - the verdict: is the subject faster than the base here, by
 * how much, and is it real?  One row per case, its headline only:
 *
 *   Verdict: pagecache against kernel (the base); headline of each
 *   workload, mean of 3 runs ± %stddev (shown above 2%)
 *
 *   workload         headline            kernel       pagecache  change  real?  of limit
 *   seq-write        MB/s ↑          776 ±  8%      1237 ±  2%  +59.4%  better
 *   cached-read-T1   reads/s/thread ↑  1318842       1546892 ±17%  ...          41%
 *   GEO-MEAN of 10 headline ratios pagecache/kernel: 1.78 (+78%) ...
 *
 * - change: LKP's %change of the means (the difference in points for a
 *   metric in %), whatever the direction; the arrow says which way is
 *   better.
 * - real?: the LKP rule (stats.c, pcc_stats_real_change: >= 3 runs a
 *   side, trimmed ranges apart, ratio of means above 1.01) and, when it
 *   holds, which way: "better" / "worse"; "no" when it does not hold; "-"
 *   when either side has fewer than 3 runs.
 * - of limit: the subject's headline as a share of the case's limit run
 *   (group.c's limit_set: the limit engine, or a direct run its result
 *   file calls the device's limit), turned so that 100% is the limit
 *   whichever way the metric points.  The column is left out when no case
 *   has a limit.
 * - GEO-MEAN: exp(mean ln r) of the rows' headline ratios, each r turned
 *   so that above 1 means the subject is better (base / subject for a
 *   lower-is-better headline): one figure that means the same thing in
 *   every row.  A row with a side missing or a mean <= 0 is left out,
 *   and the line says how many rows it spans.
 *
 * Reads the db only; everything it computes lives in the pcc_verdict.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

const char *pcc_verdict_word(enum pcc_real r)
{
	switch (r) {
	case PCC_REAL_BETTER:
		return "better";
	case PCC_REAL_WORSE:
		return "worse";
	case PCC_REAL_NO:
		return "no";
	default:
		return "-";
	}
}

/* Sets whose every ok run is a limit run. */
static bool limit_only(const struct pcc_db *db, size_t set)
{
	bool any = false;

	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];

		if ((size_t)r->set != set || strcmp(r->status, "ok"))
			continue;
		if (!r->limit)
			return false;
		any = true;
	}
	return any;
}

/* The cases in which set s has figures for the headline. */
static size_t cases_with(const struct pcc_db *db, size_t s)
{
	size_t n = 0;

	for (size_t k = 0; k < db->ncase; k++) {
		const struct pcc_metric *m = pcc_headline(&db->kase[k]);

		n += m && m->per_set[s].n > 0;
	}
	return n;
}

static size_t pick_subject(const struct pcc_db *db)
{
	size_t best = 0, most = 0;

	for (size_t s = 1; s < db->nset; s++) {
		size_t n;

		if (limit_only(db, s))
			continue;
		if (!strcmp(db->set[s], "pagecache"))
			return s;
		n = cases_with(db, s);
		if (n > most) {
			best = s;
			most = n;
		}
	}
	return best;
}

static void row_stats(const struct pcc_metric *m, size_t s,
		      struct pcc_stats *st)
{
	const struct pcc_vals *x = &m->per_set[s];

	memset(st, 0, sizeof(*st));
	if (x->n)
		pcc_stats_compute(x->v, x->n, st);
}

/* a against b, above 1 when a is better; NaN unless both are > 0 */
static double oriented(double a, double b, bool higher)
{
	if (!(a > 0) || !(b > 0))
		return NAN;
	return higher ? a / b : b / a;
}

static void build_row(struct pcc_verdict *v, const struct pcc_case *c,
		      struct pcc_verdict_row *row)
{
	const struct pcc_metric *m = pcc_headline(c);
	const struct pcc_vals *b, *s;
	const char *st;

	*row = (struct pcc_verdict_row){
		.c = c, .m = m, .change = NAN, .ratio = NAN, .ratio_lo = NAN,
		.ratio_hi = NAN, .of_limit = NAN, .real = PCC_REAL_UNKNOWN,
	};
	st = c->status[v->base];
	row->base_text = st && strcmp(st, "ok") ? st : NULL;
	st = c->status[v->subj];
	row->subj_text = st && strcmp(st, "ok") ? st : NULL;
	if (!m)
		return;
	row_stats(m, v->base, &row->base);
	row_stats(m, v->subj, &row->subj);
	if (c->limit_set >= 0 && (size_t)c->limit_set != v->subj &&
	    (size_t)c->limit_set != v->base) {
		row_stats(m, (size_t)c->limit_set, &row->limit);
		row->of_limit = oriented(row->subj.mean, row->limit.mean,
					 m->higher);
		v->any_limit |= row->limit.n > 0;
	}
	if (!row->base.n || !row->subj.n || v->subj == v->base)
		return;
	row->change = pcc_stats_lkp_change(row->base.mean, row->subj.mean,
					   m->pct);
	row->ratio = oriented(row->subj.mean, row->base.mean, m->higher);
	if (m->higher) {
		row->ratio_lo = oriented(row->subj.min, row->base.max, true);
		row->ratio_hi = oriented(row->subj.max, row->base.min, true);
	} else {
		row->ratio_lo = oriented(row->subj.max, row->base.min, false);
		row->ratio_hi = oriented(row->subj.min, row->base.max, false);
	}
	b = &m->per_set[v->base];
	s = &m->per_set[v->subj];
	if (b->n < 3 || s->n < 3)
		row->real = PCC_REAL_UNKNOWN;
	else if (!pcc_stats_real_change(b->v, b->n, s->v, s->n))
		row->real = PCC_REAL_NO;
	else
		row->real = row->ratio > 1 ? PCC_REAL_BETTER : PCC_REAL_WORSE;
}

int pcc_verdict_build(const struct pcc_db *db, struct pcc_verdict *v)
{
	double lsum = 0;

	*v = (struct pcc_verdict){ .geomean = NAN };
	if (!db->nset)
		return 0;
	v->subj = pick_subject(db);
	v->row = calloc(db->ncase ? db->ncase : 1, sizeof(*v->row));
	if (!v->row)
		return -ENOMEM;
	v->nrow = db->ncase;
	for (size_t k = 0; k < db->ncase; k++) {
		struct pcc_verdict_row *row = &v->row[k];

		build_row(v, &db->kase[k], row);
		if (row->ratio > 0 && isfinite(row->ratio)) {
			lsum += log(row->ratio);
			v->ngeo++;
		}
		if (row->subj.n && row->base.n && v->subj != v->base) {
			v->better += row->real == PCC_REAL_BETTER;
			v->worse += row->real == PCC_REAL_WORSE;
			v->notreal += row->real == PCC_REAL_NO;
			v->unknown += row->real == PCC_REAL_UNKNOWN;
		}
	}
	if (v->ngeo)
		v->geomean = exp(lsum / (double)v->ngeo);
	return 0;
}

void pcc_verdict_free(struct pcc_verdict *v)
{
	free(v->row);
	memset(v, 0, sizeof(*v));
}

/* ---- printing ---- */

/* Columns a UTF-8 string takes (continuation bytes take none). */
static int width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void put(FILE *out, const char *s, int w, bool right)
{
	int pad = w - width(s);

	if (right)
		fprintf(out, "%*s%s", pad > 0 ? pad : 0, "", s);
	else
		fprintf(out, "%s%*s", s, pad > 0 ? pad : 0, "");
}

/* "1237 ±  2%", "n/a", or "-" */
static const char *cell(const struct pcc_stats *st, const char *text,
			char *buf)
{
	char v[32];

	if (!st->n)
		snprintf(buf, 48, "%s", text ? text : "-");
	else if (st->cv > 2)
		snprintf(buf, 48, "%s ±%3.0f%%", pcc_fmt_value(st->mean, v),
			 st->cv > 999 ? 999 : st->cv);
	else
		snprintf(buf, 48, "%s", pcc_fmt_value(st->mean, v));
	return buf;
}

static void headline_text(const struct pcc_verdict_row *row, char *buf)
{
	if (row->m)
		snprintf(buf, 80, "%.60s %s", row->m->name,
			 row->m->higher ? "↑" : "↓");
	else
		snprintf(buf, 80, "-");
}

/* The number of runs per side: "3 runs" or "1 to 3 runs". */
static void runs_text(const struct pcc_db *db, const struct pcc_verdict *v,
		      char *buf, size_t len)
{
	size_t lo = 0, hi = 0;

	for (size_t i = 0; i < v->nrow; i++) {
		const struct pcc_stats *sides[] = { &v->row[i].base,
						    &v->row[i].subj };

		for (int j = 0; j < 2; j++) {
			size_t n = sides[j]->n;

			if (!n)
				continue;
			lo = !lo || n < lo ? n : lo;
			hi = n > hi ? n : hi;
		}
	}
	(void)db;
	if (lo == hi)
		snprintf(buf, len, "%zu run%s", hi, hi == 1 ? "" : "s");
	else
		snprintf(buf, len, "%zu to %zu runs", lo, hi);
}

static void print_rows(const struct pcc_db *db, const struct pcc_verdict *v,
		       int wn, int wm, int wv, FILE *out)
{
	char hb[80], c1[48], c2[48], ch[32], lim[32];

	put(out, "workload", wn, false);
	fputs("  ", out);
	put(out, "headline", wm, false);
	fputs("  ", out);
	put(out, db->set[v->base], wv, true);
	fputs("  ", out);
	put(out, db->set[v->subj], wv, true);
	fprintf(out, "  %8s  %-6s%s\n", "change", "real?",
		v->any_limit ? "  of limit" : "");
	for (size_t i = 0; i < v->nrow && i < PCC_VERDICT_ROWS; i++) {
		const struct pcc_verdict_row *r = &v->row[i];

		headline_text(r, hb);
		put(out, r->c->name, wn, false);
		fputs("  ", out);
		put(out, hb, wm, false);
		fputs("  ", out);
		put(out, cell(&r->base, r->base_text, c1), wv, true);
		fputs("  ", out);
		put(out, cell(&r->subj, r->subj_text, c2), wv, true);
		if (isnan(r->change))
			ch[0] = 0;
		else
			pcc_fmt_change(r->change, r->m->pct, ch);
		fprintf(out, "  %8s  %-6s", ch, r->base.n && r->subj.n ?
			pcc_verdict_word(r->real) : "");
		if (v->any_limit && !isnan(r->of_limit))
			fprintf(out, "  %7s", (snprintf(lim, sizeof(lim), "%.0f%%",
					       100 * r->of_limit), lim));
		fputc('\n', out);
	}
	if (v->nrow > PCC_VERDICT_ROWS)
		fprintf(out, "... and %zu more workloads (compare.txt, "
			"report.html)\n", v->nrow - PCC_VERDICT_ROWS);
}

static void print_others(const struct pcc_db *db, const struct pcc_verdict *v,
			 FILE *out)
{
	bool first = true;

	for (size_t s = 0; s < db->nset; s++) {
		size_t n;

		if (s == v->base || s == v->subj)
			continue;
		n = cases_with(db, s);
		fprintf(out, "%s%s (%zu)", first ? "Also compared (workloads): "
			: ", ", db->set[s], n);
		first = false;
	}
	if (!first)
		fputs("\n", out);
}

/* The busiest the machine was while the results were taken, against its
 * cores: on a shared machine the first thing to know about the figures. */
static void print_load(const struct pcc_db *db, FILE *out)
{
	double hi = NAN;
	long long cores = 0;

	for (size_t i = 0; i < db->nres; i++) {
		json_t *root = db->res[i]->root, *load = json_object_get(root, "load");
		const char *k[] = { "start", "end" };

		for (int j = 0; j < 2; j++) {
			json_t *x = json_object_get(load, k[j]);

			if (json_is_number(x) && !(json_number_value(x) <= hi))
				hi = json_number_value(x);
		}
		if (!cores)
			cores = json_integer_value(json_object_get(
				json_object_get(root, "machine"), "cores"));
	}
	if (isnan(hi) || cores <= 0)
		return;
	fprintf(out, "Load average up to %.1f on %lld cores while they ran%s\n",
		hi, cores, hi > (double)cores ? ": a busy machine, noisy figures"
					      : "");
}

void pcc_verdict_print(const struct pcc_db *db, const struct pcc_verdict *v,
		       const char *report_dir, FILE *out)
{
	int wn = 8, wm = 8, wv = 6;
	size_t nwarn = 0, shown = 0;
	char runs[40], hb[80], c[48];

	if (!db->nset)
		return;
	for (size_t i = 0; i < v->nrow && i < PCC_VERDICT_ROWS; i++) {
		const struct pcc_verdict_row *r = &v->row[i];
		int w;

		headline_text(r, hb);
		wn = (w = width(r->c->name)) > wn ? w : wn;
		wm = (w = width(hb)) > wm ? w : wm;
		wv = (w = width(cell(&r->base, r->base_text, c))) > wv ? w : wv;
		wv = (w = width(cell(&r->subj, r->subj_text, c))) > wv ? w : wv;
	}
	wv = width(db->set[v->base]) > wv ? width(db->set[v->base]) : wv;
	wv = width(db->set[v->subj]) > wv ? width(db->set[v->subj]) : wv;
	runs_text(db, v, runs, sizeof(runs));
	if (v->subj == v->base)
		fprintf(out, "Verdict: %s alone (one set: nothing to set it "
			"against); headline of each workload, mean of %s\n\n",
			db->set[v->base], runs);
	else
		fprintf(out, "Verdict: %s against %s (the base), the headline "
			"of each workload:\nmean of %s, ± %%stddev when above "
			"2%%\n\n", db->set[v->subj], db->set[v->base], runs);
	print_rows(db, v, wn, wm, wv, out);
	fputc('\n', out);
	if (v->subj != v->base && v->ngeo)
		fprintf(out, "GEO-MEAN of %zu headline ratio%s %s/%s: %.3g "
			"(%+.1f%%); above 1: %s is better\n", v->ngeo,
			v->ngeo == 1 ? "" : "s", db->set[v->subj],
			db->set[v->base], v->geomean, 100 * (v->geomean - 1),
			db->set[v->subj]);
	else if (v->subj != v->base)
		fprintf(out, "GEO-MEAN: no workload has figures on both "
			"sides\n");
	if (v->subj != v->base)
		fprintf(out, "Real changes (LKP: >= 3 runs a side, ranges "
			"apart, ratio > 1.01): %zu better, %zu worse, %zu not "
			"real%s\n", v->better, v->worse, v->notreal,
			v->unknown ? (snprintf(c, sizeof(c), ", %zu too few "
				      "runs", v->unknown), c) : "");
	if (v->any_limit)
		fprintf(out, "of limit: %s as a share of the workload's limit "
			"run (limit engine, or direct as the device's)\n",
			db->set[v->subj]);
	for (size_t i = 0; i < db->nnote; i++)
		nwarn += db->warn[i];
	for (size_t i = 0; i < db->nnote && shown < 4; i++) {
		if (!db->warn[i])
			continue;
		fprintf(out, "warning: %.200s\n", db->note[i]);
		shown++;
	}
	if (nwarn > shown)
		fprintf(out, "warning: %zu more (compare.txt, or --format "
			"lkp)\n", nwarn - shown);
	print_load(db, out);
	print_others(db, v, out);
	if (report_dir)
		fprintf(out, "Full tables: %s/compare.txt\nReport:      "
			"%s/report.html\n", report_dir, report_dir);
	else
		fprintf(out, "Full tables: --format both (lkp, mmtests); "
			"report.html: --report DIR\n");
}
