/*
 * mmtests.c - the mmtests table: one block per case, rows Min, Hmean
 * (higher-is-better metrics) or Amean (lower-is-better), Stddev,
 * CoeffVar, Max, each for every metric of the case (the vmstat counters
 * and the perf profiles stay in the LKP table), one column per set:
 *
 *   xfsrepair
 *                                 vanilla           slowscan-v2
 *   Min      real-xfsrepair     497.64 (  0.00%)     456.87 (  8.19%)
 *   Amean    real-xfsrepair     507.85 (  0.00%)     459.58 *   9.50%*
 *
 * The percentage is positive when the set is better than the base:
 * 100 (new/base - 1) for higher-is-better, 100 (1 - new/base) for
 * lower-is-better; Stddev and CoeffVar always use the lower-is-better
 * form.  Stddev is the population sigma, CoeffVar 100 sigma / mean.  The
 * mean row is starred (*  9.50%*) when the arithmetic means differ by more
 * than the sum of their 95% confidence half-widths (stats.c: Student t,
 * sample s); on an Hmean row the test is still made on the arithmetic
 * means, whose confidence interval is the one known.
 *
 * Reads the db only; writes to out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "stats.h"

#define W_CELL 23	/* space + value 12 + space + "(%6.2f%)" 9 */

enum row { ROW_MIN, ROW_MEAN, ROW_SD, ROW_CV, ROW_MAX, NROW };

static double row_value(enum row r, const struct pcc_stats *st, bool higher)
{
	switch (r) {
	case ROW_MIN:
		return st->min;
	case ROW_MEAN:
		return higher ? st->hmean : st->mean;
	case ROW_SD:
		return st->sd;
	case ROW_CV:
		return st->cv;
	default:
		return st->max;
	}
}

static const char *row_name(enum row r, bool higher)
{
	static const char *const names[NROW] = {
		"Min", "Amean", "Stddev", "CoeffVar", "Max",
	};

	return r == ROW_MEAN && higher ? "Hmean" : names[r];
}

static void fmt_num(double v, char *buf)
{
	if (isnan(v))
		snprintf(buf, 32, "n/a");
	else if (fabs(v) >= 1e9)
		snprintf(buf, 32, "%.4g", v);
	else if (fabs(v) >= 0.1 || v == 0)
		snprintf(buf, 32, "%.2f", v);
	else if (fabs(v) >= 1e-4)	/* small figures keep some digits */
		snprintf(buf, 32, "%.4f", v);
	else
		snprintf(buf, 32, "%.3e", v);
}

static void print_row(const struct pcc_db *db, const struct pcc_case *c,
		      const struct pcc_metric *m, enum row r, int mw,
		      const struct pcc_stats *st, FILE *out)
{
	bool better_up = (r == ROW_SD || r == ROW_CV) ? false : m->higher;
	double base = row_value(r, &st[0], m->higher);

	fprintf(out, "%-8s %-*s", row_name(r, m->higher), mw, m->name);
	for (size_t s = 0; s < db->nset; s++) {
		char num[32], pct[32];
		double v, p;
		bool star;

		if (!st[s].n) {
			const char *t = c->status[s] && strcmp(c->status[s], "ok")
					? c->status[s] : "-";

			fprintf(out, " %12s%*s", t, s + 1 < db->nset ? 10 : 0, "");
			continue;
		}
		v = row_value(r, &st[s], m->higher);
		fmt_num(v, num);
		if (s == 0) {
			fprintf(out, " %12s (%6.2f%%)", num, 0.0);
			continue;
		}
		p = st[0].n ? pcc_stats_mm_pct(base, v, better_up) : NAN;
		star = r == ROW_MEAN && st[0].n &&
		       pcc_stats_significant(&st[0], &st[s]);
		if (isnan(p) || isinf(p))
			snprintf(pct, sizeof(pct), "(   n/a )");
		else
			snprintf(pct, sizeof(pct), star ? "*%6.2f%%*" : "(%6.2f%%)",
				 p);
		fprintf(out, " %12s %s", num, pct);
	}
	fputc('\n', out);
}

static void print_case(const struct pcc_db *db, const struct pcc_case *c,
		       bool legend, struct pcc_stats *st, FILE *out)
{
	int mw = 10;
	size_t shown = 0;

	for (size_t i = 0; i < c->nmetric; i++) {
		if (!c->metric[i].vmstat && !c->metric[i].profile) {
			int n = (int)strlen(c->metric[i].name);

			mw = n > mw ? n : mw;
			shown++;
		}
	}
	fprintf(out, "%s\n", c->name);
	if (!shown) {
		for (size_t s = 0; s < db->nset; s++)
			if (c->status[s])
				fprintf(out, "  %s: %s%s%s\n", db->set[s],
					c->status[s], c->reason[s] ? " " : "",
					c->reason[s] ? c->reason[s] : "");
		fputc('\n', out);
		return;
	}
	fprintf(out, "%*s", 9 + mw, "");
	for (size_t s = 0; s < db->nset; s++) {
		if (legend) {
			char buf[32];

			snprintf(buf, sizeof(buf), "[%zu]", s);
			fprintf(out, "%*s", W_CELL, buf);
		} else {
			fprintf(out, "%*s", W_CELL, db->set[s]);
		}
	}
	fputc('\n', out);
	for (enum row r = 0; r < NROW; r++) {
		for (size_t i = 0; i < c->nmetric; i++) {
			const struct pcc_metric *m = &c->metric[i];

			if (m->vmstat || m->profile)
				continue;
			for (size_t s = 0; s < db->nset; s++)
				pcc_stats_compute(m->per_set[s].v,
						  m->per_set[s].n, &st[s]);
			print_row(db, c, m, r, mw, st, out);
		}
	}
	fputc('\n', out);
}

void pcc_print_mmtests(const struct pcc_db *db, FILE *out)
{
	struct pcc_stats *st = calloc(db->nset ? db->nset : 1, sizeof(*st));
	bool legend = false;

	if (!st)
		return;
	for (size_t s = 0; s < db->nset; s++)
		legend |= strlen(db->set[s]) > W_CELL - 1;
	for (size_t s = 0; legend && s < db->nset; s++)
		fprintf(out, "[%zu] %s\n", s, db->set[s]);
	if (legend)
		fputc('\n', out);
	for (size_t k = 0; k < db->ncase; k++)
		print_case(db, &db->kase[k], legend, st, out);
	free(st);
}
