/*
 * stats.c - the formulas of docs/workloads.md ("Reports"), nothing else.
 *
 * Pure functions over arrays of doubles: no allocation, no I/O, no state,
 * so tests can check each against figures computed by hand.  The tables
 * (lkp.c, mmtests.c) and the gate (gate.c) call them; they never compute
 * a statistic themselves.
 *
 * Choices the text leaves open, made here once:
 * - the spread printed (%stddev, Stddev, CoeffVar) uses the population
 *   sigma (divide by n).  The xfsrepair rows of seed 003 are reproduced
 *   exactly by three samples and the population sigma, so mmtests agrees.
 * - the confidence half-width uses the sample s (divide by n - 1) and
 *   Student's t at 97.5% (two-sided 95%): a table for df <= 30, then
 *   linear in 1/df between 30, 40, 60, 120 and infinity (error < 0.001).
 * - GEO-MEAN takes logs of the values above 0 only; the callers decide
 *   what to do with the cases that had a zero (lkp.c leaves the case out
 *   of every column, so the columns stay comparable, and says so).
 * - the harmonic mean of samples with a 0 in them is 0 (its limit), of
 *   samples with a negative one NaN.
 */
#include <math.h>

#include "stats.h"

double pcc_stats_mean(const double *v, size_t n)
{
	double sum = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

static double sum_sq_dev(const double *v, size_t n, double mean)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return ss;
}

double pcc_stats_sd(const double *v, size_t n)
{
	if (!n)
		return NAN;
	return sqrt(sum_sq_dev(v, n, pcc_stats_mean(v, n)) / (double)n);
}

double pcc_stats_sd_sample(const double *v, size_t n)
{
	if (n < 2)
		return NAN;
	return sqrt(sum_sq_dev(v, n, pcc_stats_mean(v, n)) / (double)(n - 1));
}

double pcc_stats_hmean(const double *v, size_t n)
{
	double inv = 0;
	bool zero = false;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 0 || isnan(v[i]))
			return NAN;
		if (v[i] == 0)
			zero = true;
		else
			inv += 1 / v[i];
	}
	return zero ? 0 : (double)n / inv;
}

double pcc_stats_geomean(const double *v, size_t n, size_t *skipped)
{
	double lsum = 0;
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i] > 0) {		/* false for NaN too */
			lsum += log(v[i]);
			used++;
		}
	}
	if (skipped)
		*skipped = n - used;
	return used ? exp(lsum / (double)used) : NAN;
}

/* t(0.975, df) for df = 1..30 */
static const double t975[30] = {
	12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060,
	2.2622, 2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199,
	2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639,
	2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

double pcc_stats_t975(size_t df)
{
	/* beyond 30: linear in 1/df through these points */
	static const struct { double df, t; } tail[] = {
		{ 30, 2.0423 }, { 40, 2.0211 }, { 60, 2.0003 },
		{ 120, 1.9799 }, { INFINITY, 1.9600 },
	};

	if (df == 0)
		return NAN;
	if (df <= 30)
		return t975[df - 1];
	for (size_t i = 0; i + 1 < sizeof(tail) / sizeof(tail[0]); i++) {
		if ((double)df <= tail[i + 1].df) {
			double x = 1 / (double)df;
			double x0 = 1 / tail[i].df, x1 = 1 / tail[i + 1].df;

			return tail[i].t + (tail[i + 1].t - tail[i].t) *
					   (x - x0) / (x1 - x0);
		}
	}
	return 1.9600;
}

double pcc_stats_half_width(const double *v, size_t n)
{
	if (n < 2)
		return INFINITY;
	return pcc_stats_t975(n - 1) * pcc_stats_sd_sample(v, n) /
	       sqrt((double)n);
}

void pcc_stats_compute(const double *v, size_t n, struct pcc_stats *st)
{
	st->n = n;
	st->min = st->max = NAN;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i] < st->min)
			st->min = v[i];
		if (i == 0 || v[i] > st->max)
			st->max = v[i];
	}
	st->mean = pcc_stats_mean(v, n);
	st->hmean = pcc_stats_hmean(v, n);
	st->sd = pcc_stats_sd(v, n);
	st->cv = st->mean != 0 ? 100 * st->sd / fabs(st->mean) : NAN;
	st->hw = pcc_stats_half_width(v, n);
}

bool pcc_stats_trimmed_range(const double *v, size_t n, double *lo, double *hi)
{
	size_t imin = 0, imax = 0;
	bool first = true;

	if (!n)
		return false;
	if (n > 3) {
		/* drop one lowest and one highest sample (two distinct slots) */
		for (size_t i = 1; i < n; i++) {
			if (v[i] < v[imin])
				imin = i;
			if (v[i] >= v[imax])
				imax = i;
		}
		if (imin == imax)	/* all equal */
			imax = imin == 0 ? 1 : 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (n > 3 && (i == imin || i == imax))
			continue;
		if (first || v[i] < *lo)
			*lo = v[i];
		if (first || v[i] > *hi)
			*hi = v[i];
		first = false;
	}
	return true;
}

double pcc_stats_ratio(double a, double b)
{
	if (a == b)
		return 1;
	if (a <= 0 || b <= 0)
		return INFINITY;
	return a > b ? a / b : b / a;
}

bool pcc_stats_real_change(const double *base, size_t nb,
			   const double *nw, size_t nn)
{
	double blo, bhi, nlo, nhi;

	if (nb < 3 || nn < 3)
		return false;
	pcc_stats_trimmed_range(base, nb, &blo, &bhi);
	pcc_stats_trimmed_range(nw, nn, &nlo, &nhi);
	if (!(bhi < nlo || nhi < blo))	/* touching is overlapping */
		return false;
	return pcc_stats_ratio(pcc_stats_mean(base, nb),
			       pcc_stats_mean(nw, nn)) > 1.01;
}

double pcc_stats_lkp_change(double base, double nw, bool absolute)
{
	if (absolute)
		return nw - base;
	if (base == 0)
		return nw == 0 ? 0 : NAN;
	return 100 * (nw - base) / fabs(base);
}

double pcc_stats_mm_pct(double base, double nw, bool higher_is_better)
{
	if (base == 0)
		return nw == 0 ? 0 : NAN;
	return higher_is_better ? 100 * (nw / base - 1) : 100 * (1 - nw / base);
}

bool pcc_stats_significant(const struct pcc_stats *a, const struct pcc_stats *b)
{
	if (a->n < 2 || b->n < 2)
		return false;
	return fabs(a->mean - b->mean) > a->hw + b->hw;
}
