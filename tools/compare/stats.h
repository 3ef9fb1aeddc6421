/*
 * stats.h - the pure statistics behind `pagecache compare`: no I/O, no
 * allocation, no globals; every function is a formula of docs/workloads.md
 * ("Reports") and is unit-tested on its own in tests/test_compare.c.
 *
 * Conventions: a value that cannot be computed (mean of nothing, a
 * percentage against a zero base) is NaN; callers print it as "n/a".
 */
#ifndef PC_COMPARE_STATS_H
#define PC_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Everything the tables print about one series of samples. */
struct pcc_stats {
	size_t n;
	double min, max;
	double mean;	/* arithmetic mean */
	double hmean;	/* harmonic mean: 0 if any sample is 0, NaN if any < 0 */
	double sd;	/* population standard deviation (divides by n) */
	double cv;	/* 100 * sd / mean: LKP's %stddev, mmtests' CoeffVar */
	double hw;	/* 95% confidence half-width of the mean (Student t,
			 * sample sd); INFINITY when n < 2 */
};

void pcc_stats_compute(const double *v, size_t n, struct pcc_stats *st);

double pcc_stats_mean(const double *v, size_t n);
/* Population sigma: sqrt(sum (v - mean)^2 / n). */
double pcc_stats_sd(const double *v, size_t n);
/* Sample s: sqrt(sum (v - mean)^2 / (n - 1)); NaN when n < 2. */
double pcc_stats_sd_sample(const double *v, size_t n);
double pcc_stats_hmean(const double *v, size_t n);

/*
 * exp(mean of ln v) over the v > 0; values <= 0 (and NaN) are left out
 * and counted in *skipped (may be NULL).  NaN when no value is > 0.
 */
double pcc_stats_geomean(const double *v, size_t n, size_t *skipped);

/* The 97.5% quantile of Student's t with df degrees of freedom (df >= 1). */
double pcc_stats_t975(size_t df);
/* t975(n - 1) * s / sqrt(n); INFINITY when n < 2. */
double pcc_stats_half_width(const double *v, size_t n);

/*
 * The range LKP compares: [min, max] of the samples after dropping the
 * lowest and the highest one when there are more than 3.  False when n = 0.
 */
bool pcc_stats_trimmed_range(const double *v, size_t n, double *lo, double *hi);

/* max(a, b) / min(a, b); 1 when equal, INFINITY when one is <= 0. */
double pcc_stats_ratio(double a, double b);

/*
 * LKP's "is this change real": both sides have >= 3 samples, the trimmed
 * ranges do not overlap (touching counts as overlapping), and the ratio of
 * the means is above 1.01.
 */
bool pcc_stats_real_change(const double *base, size_t nb,
			   const double *nw, size_t nn);

/*
 * LKP %change: 100 * (new - base) / base; for a percentage metric
 * (absolute) the difference new - base.  NaN when base is 0 and new is not
 * (0 when both are).
 */
double pcc_stats_lkp_change(double base, double nw, bool absolute);

/*
 * mmtests' percentage, positive when new is better:
 * higher-is-better 100 * (new / base - 1), lower-is-better
 * 100 * (1 - new / base).  NaN when base is 0 and new is not.
 */
double pcc_stats_mm_pct(double base, double nw, bool higher_is_better);

/*
 * mmtests' asterisks: |mean_a - mean_b| > hw_a + hw_b.  Never true when
 * either side has fewer than 2 samples.
 */
bool pcc_stats_significant(const struct pcc_stats *a, const struct pcc_stats *b);

#endif
