/*
 * test_compare.c - `pagecache compare`: the formulas of docs/workloads.md
 * ("Reports") against figures computed by hand, then the command itself,
 * run in-process on the seeds' own tables (tests/fixtures/compare):
 *
 * - aim7-seed000: aim7 disk_wrt jobs-per-min of seed 000's four commits:
 *   484435, -13.3% 420004, -17.0% 402250, -15.6% 408998.
 * - xfsrepair-seed003: seed 003's xfsrepair rows.  Three samples per
 *   kernel, the middle one = 3 Amean - Min - Max, reproduce every Min,
 *   Amean, Stddev (population sigma), CoeffVar and Max row of the seed.
 * - geomean-seed000: seed 000's xfs/ext4 aim7 table; GEO-MEAN 193335 and
 *   -27% in the seed (193334 and -26.9% from the rounded case values).
 * - seq-write: two engines with sampled counters, one n/a.
 * (The suite fixture, the verdict and the report: test_compare_verdict.c
 * and test_report.c.)
 *
 * The hand figures: mean {497.64, 502.51, 523.40} = 507.85; sum of
 * squared deviations 10.21^2 + 5.34^2 + 15.55^2 = 374.5622, so sigma =
 * sqrt(374.5622 / 3) = 11.1738, s = sqrt(374.5622 / 2) = 13.6851, the
 * 95% half-width 4.3027 * 13.6851 / sqrt(3) = 33.9960; CoeffVar 100 *
 * 11.1738 / 507.85 = 2.2002.  {456.87, 457.47, 464.40}: mean 459.58,
 * half-width 10.3963; 507.85 - 459.58 = 48.27 > 33.996 + 10.396 = 44.39,
 * so the Amean is starred.  -13.3%: 100 (420004 - 484435) / 484435 =
 * -13.3002.  Amean percentage (lower is better): 100 (1 - 459.58 /
 * 507.85) = 9.5048.
 *
 * Every run of the command is in-process (pcc_run with memory
 * streams); no random input, so no seed.  Runs in well under a second,
 * plus gnuplot's time for the plot tests (skipped when gnuplot is
 * missing).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare_util.h"
#include "../tools/compare/stats.h"

#define assert_near(a, b, eps)                                               \
	do {                                                                 \
		double a_ = (a), b_ = (b);                                   \
		if (!(fabs(a_ - b_) <= (eps)))                               \
			fail_msg("%s = %.9g, want %.9g +- %g", #a, a_, b_,   \
				 (double)(eps));                             \
	} while (0)



/* ------------------------------------------------------------ statistics */

static const double van[] = { 497.64, 502.51, 523.40 };	/* real-xfsrepair */
static const double slow[] = { 456.87, 457.47, 464.40 };

static void test_mean_sd_cv(void **state)
{
	struct pcc_stats st;

	(void)state;
	assert_near(pcc_stats_mean(van, 3), 507.85, 1e-9);
	assert_near(pcc_stats_sd(van, 3), 11.17381, 1e-5);	/* seed: 11.17 */
	assert_near(pcc_stats_sd_sample(van, 3), 13.68507, 1e-5);
	assert_true(isnan(pcc_stats_sd_sample(van, 1)));
	pcc_stats_compute(van, 3, &st);
	assert_int_equal(st.n, 3);
	assert_near(st.min, 497.64, 0);
	assert_near(st.max, 523.40, 0);
	assert_near(st.cv, 2.20022, 1e-5);			/* seed: 2.20 */
	assert_near(st.hw, 33.99597, 1e-4);
	pcc_stats_compute(van, 1, &st);
	assert_true(isinf(st.hw));
	assert_near(st.sd, 0, 0);
}

static void test_hmean(void **state)
{
	const double a[] = { 1, 2, 4 }, z[] = { 0, 2 }, neg[] = { -1, 2 };

	(void)state;
	assert_near(pcc_stats_hmean(a, 3), 3 / 1.75, 1e-12);
	assert_near(pcc_stats_hmean(z, 2), 0, 0);	/* its limit */
	assert_true(isnan(pcc_stats_hmean(neg, 2)));
	assert_true(isnan(pcc_stats_hmean(a, 0)));
}

static void test_geomean(void **state)
{
	/* seed 000, the xfs column of the GEO-MEAN table: 193335 */
	const double xfs[] = { 267649, 485217, 360286, 338114, 60130, 403144,
			       26327 };
	const double pow10[] = { 1, 10, 100 };
	const double zero[] = { 0, 4, 16 }, only0[] = { 0 };
	size_t skipped = 99;

	(void)state;
	assert_near(pcc_stats_geomean(xfs, N(xfs), &skipped), 193334.46, 0.01);
	assert_int_equal(skipped, 0);
	assert_near(pcc_stats_geomean(pow10, 3, NULL), 10, 1e-9);
	/* a zero is left out, and counted: sqrt(4 * 16) */
	assert_near(pcc_stats_geomean(zero, 3, &skipped), 8, 1e-9);
	assert_int_equal(skipped, 1);
	assert_true(isnan(pcc_stats_geomean(only0, 1, &skipped)));
	assert_int_equal(skipped, 1);
}

static void test_t_and_significance(void **state)
{
	const double one[] = { 500 };
	struct pcc_stats a, b, c;

	(void)state;
	assert_near(pcc_stats_t975(1), 12.7062, 1e-4);
	assert_near(pcc_stats_t975(2), 4.3027, 1e-4);
	assert_near(pcc_stats_t975(30), 2.0423, 1e-4);
	assert_near(pcc_stats_t975(60), 2.0003, 1e-4);
	assert_near(pcc_stats_t975(1000), 1.9623, 1e-3);
	assert_true(isnan(pcc_stats_t975(0)));
	assert_near(pcc_stats_half_width(slow, 3), 10.39625, 1e-4);
	pcc_stats_compute(van, 3, &a);
	pcc_stats_compute(slow, 3, &b);
	/* 48.27 > 33.996 + 10.396 */
	assert_true(pcc_stats_significant(&a, &b));
	assert_true(pcc_stats_significant(&b, &a));
	/* one sample: no interval, never significant */
	pcc_stats_compute(one, 1, &c);
	assert_false(pcc_stats_significant(&a, &c));
}

static void test_not_significant(void **state)
{
	/* real-fsmark, vanilla against slowscan-v2: 10.66 apart, the two
	 * half-widths 4.3027 * sqrt(128.6078 / 2) / sqrt(3) = 19.9204 and
	 * 4.3027 * sqrt(47.3426 / 2) / sqrt(3) = 12.0862 */
	const double v[] = { 1157.41, 1170.50, 1171.98 };
	const double s[] = { 1150.38, 1158.28, 1159.25 };
	struct pcc_stats a, b;

	(void)state;
	pcc_stats_compute(v, 3, &a);
	pcc_stats_compute(s, 3, &b);
	assert_near(a.hw, 19.9204, 1e-3);
	assert_near(b.hw, 12.0862, 1e-3);
	assert_false(pcc_stats_significant(&a, &b));
}

static void test_changes_and_signs(void **state)
{
	(void)state;
	/* LKP: relative, sign of the difference whatever the direction */
	assert_near(pcc_stats_lkp_change(484435, 420004, false), -13.30024, 1e-4);
	assert_near(pcc_stats_lkp_change(100, 125, false), 25, 1e-12);
	/* a metric in %: the difference itself */
	assert_near(pcc_stats_lkp_change(27.5, 1.0666667, true), -26.4333333,
		    1e-6);
	assert_near(pcc_stats_lkp_change(0, 0, false), 0, 0);
	assert_true(isnan(pcc_stats_lkp_change(0, 3, false)));
	/* mmtests: positive when better */
	assert_near(pcc_stats_mm_pct(100, 110, true), 10, 1e-12);
	assert_near(pcc_stats_mm_pct(100, 90, true), -10, 1e-12);
	assert_near(pcc_stats_mm_pct(507.85, 459.58, false), 9.50478, 1e-5);
	assert_near(pcc_stats_mm_pct(100, 110, false), -10, 1e-12);
	/* Stddev form (lower is better): seed 003's -42.60% from 13.98 to
	 * 19.94 (-42.63 from the rounded values) */
	assert_near(pcc_stats_mm_pct(13.98, 19.94, false), -42.63233, 1e-5);
	assert_true(isnan(pcc_stats_mm_pct(0, 1, true)));
	assert_near(pcc_stats_mm_pct(0, 0, false), 0, 0);
}

static void test_real_change_rule(void **state)
{
	const double b3[] = { 100, 100, 100 }, n3[] = { 110, 110, 110 };
	const double b2[] = { 100, 100 }, n2[] = { 110, 110 };
	const double lo[] = { 98, 99, 100 }, touch[] = { 100, 105, 110 };
	const double below[] = { 98, 99, 99.99 };
	const double r101[] = { 101, 101, 101 }, r1011[] = { 101.1, 101.1, 101.1 };
	const double out4[] = { 100, 101, 102, 150 }, n4[] = { 120, 121, 122, 123 };
	const double out3[] = { 100, 101, 150 }, m3[] = { 120, 121, 122 };
	const double eq4[] = { 7, 7, 7, 7 };
	double l, h;

	(void)state;
	assert_true(pcc_stats_real_change(b3, 3, n3, 3));
	assert_true(pcc_stats_real_change(n3, 3, b3, 3));
	/* 2 against 3 samples: never real */
	assert_false(pcc_stats_real_change(b2, 2, n3, 3));
	assert_false(pcc_stats_real_change(b3, 3, n2, 2));
	/* touching ranges overlap; apart by a hair do not */
	assert_false(pcc_stats_real_change(lo, 3, touch, 3));
	assert_true(pcc_stats_real_change(below, 3, touch, 3));
	/* ratio exactly 1.01 is not above 1.01, either way round */
	assert_true(pcc_stats_ratio(100, 101) == 1.01);
	assert_false(pcc_stats_real_change(b3, 3, r101, 3));
	assert_false(pcc_stats_real_change(r101, 3, b3, 3));
	assert_true(pcc_stats_real_change(b3, 3, r1011, 3));
	/* more than 3 samples: the extremes are trimmed */
	assert_true(pcc_stats_trimmed_range(out4, 4, &l, &h));
	assert_near(l, 101, 0);
	assert_near(h, 102, 0);
	assert_true(pcc_stats_real_change(out4, 4, n4, 4));
	/* exactly 3: nothing trimmed, the outlier overlaps */
	assert_true(pcc_stats_trimmed_range(out3, 3, &l, &h));
	assert_near(h, 150, 0);
	assert_false(pcc_stats_real_change(out3, 3, m3, 3));
	assert_true(pcc_stats_trimmed_range(eq4, 4, &l, &h));
	assert_near(l, 7, 0);
	assert_near(h, 7, 0);
	assert_false(pcc_stats_trimmed_range(eq4, 0, &l, &h));
	/* ratio against zero or below */
	assert_true(isinf(pcc_stats_ratio(0, 5)));
	assert_near(pcc_stats_ratio(0, 0), 1, 0);
}

/* ---------------------------------------------------------------- tables */

static void test_lkp_seed000(void **state)
{
	struct run r = compare("--format", "lkp", fx("aim7-seed000"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "sets: f0c6bcba74ac51cb (base), 68a9f5e7007c1afa, "
		   "99091700659f4df9, bf4dc6e4ecc2a3d0");
	/* the seed's line, column for column */
	assert_has(r.out, "    484435           -13.3%     420004           "
		   "-17.0%     402250           -15.6%     408998        "
		   "aim7.jobs-per-min\n");
	assert_has(r.out, "         %stddev    %change          %stddev");
	/* sigma/mean = 0.07%: no "±" */
	assert_lacks(r.out, "484435 ±");
	assert_lacks(r.out, "420004 ±");
	assert_lacks(r.out, "Hmean");
	/* one case: no GEO-MEAN */
	assert_lacks(r.out, "GEO-MEAN");
	run_free(&r);
}

static void test_mmtests_seed003(void **state)
{
	struct run r = compare("--format", "mmtests", fx("xfsrepair-seed003"),
			       NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_lacks(r.out, "%change");
	/* seed 003's rows; lower is better, so faster is positive */
	assert_has(r.out, "Min      real-xfsrepair       497.64 (  0.00%)       "
		   "456.87 (  8.19%)       442.64 ( 11.05%)\n");
	assert_has(r.out, "Amean    real-xfsrepair       507.85 (  0.00%)       "
		   "459.58 *  9.50%*       447.66 * 11.85%*\n");
	assert_has(r.out, "Amean    syst-xfsrepair       519.88 (  0.00%)       "
		   "281.63 * 45.83%*       202.93 * 60.97%*\n");
	/* not significant: parentheses (and a worse mean is negative) */
	assert_has(r.out, "Amean    real-fsmark         1166.63 (  0.00%)      "
		   "1155.97 (  0.91%)      1166.28 (  0.03%)\n");
	assert_has(r.out, "Amean    syst-fsmark         4020.94 (  0.00%)      "
		   "4004.19 (  0.42%)      4025.87 ( -0.12%)\n");
	/* Stddev and CoeffVar in the lower-is-better form; 3.42 and
	 * -163.21% where the seed, from unrounded samples, has 3.41 and
	 * -163.23% */
	assert_has(r.out, "Stddev   real-xfsrepair        11.17 (  0.00%)         "
		   "3.42 ( 69.42%)         5.57 ( 50.19%)\n");
	assert_has(r.out, "Stddev   syst-xfsrepair        13.98 (  0.00%)        "
		   "19.94 (-42.59%)         5.69 ( 59.31%)\n");
	assert_has(r.out, "CoeffVar real-xfsrepair         2.20 (  0.00%)         "
		   "0.74 ( 66.21%)         1.24 ( 43.49%)\n");
	assert_has(r.out, "CoeffVar syst-xfsrepair         2.69 (  0.00%)         "
		   "7.08 (-163.21%)         2.80 ( -4.25%)\n");
	assert_has(r.out, "Max      syst-xfsrepair       533.37 (  0.00%)       "
		   "309.38 ( 42.00%)       207.94 ( 61.01%)\n");
	run_free(&r);
}

static void test_hmean_row_and_lkp_sign(void **state)
{
	struct run r = compare(fx("seq-write"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	/* higher is better: Hmean, positive when higher */
	assert_has(r.out, "Hmean    MB/s             470.06 (  0.00%)       "
		   "512.36 *  9.00%*");
	/* lower is better: Amean, positive when lower */
	assert_has(r.out, "Amean    lock-wait%        27.50 (  0.00%)         "
		   "1.07 * 96.12%*");
	/* LKP: +9.0% for more MB/s, a metric in % by its difference, the
	 * spread shown above 2% */
	assert_has(r.out, "    470.07            +9.0%     512.37     ");
	assert_has(r.out, "     27.50 ±  4%      -26.4       1.07 ± 12%");
	/* the engine that cannot serve it */
	assert_has(r.out, "n/a        seq-write.MB/s\n");
	assert_has(r.out, "note: seq-write on direct: n/a: 4 KiB pwrites");
	run_free(&r);
}

/* Counter deltas show with --counters or --all, not by default. */
static void test_counters_hidden_by_default(void **state)
{
	struct run r = compare("--format", "lkp", fx("seq-write"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "seq-write.vmstat."));
	run_free(&r);
	r = compare("--format", "lkp", "--counters", fx("seq-write"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "seq-write.vmstat.");
	run_free(&r);
}

static void test_geomean_table(void **state)
{
	struct run r = compare("--format", "lkp", fx("geomean-seed000"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	/* seed 000: 193335 -27% 141400, from unrounded case values */
	assert_has(r.out, "    193334           -26.9%     141398        "
		   "GEO-MEAN jobs-per-min\n");
	/* cases told apart by the parameter that varies within a set */
	assert_has(r.out, "    485217 ±  3%    +401.6%    2434088 ±  3%  "
		   "aim7/task=disk_rd.jobs-per-min\n");
	assert_lacks(r.out, "users=");
	run_free(&r);
}

static void test_geomean_with_zero(void **state)
{
	const char *d = mkdir_tmp("geo0");
	char p[6][700];
	const double a1[] = { 99, 100, 101 }, a2[] = { 399, 400, 401 },
		     a3[] = { 49, 50, 51 };
	const double b1[] = { 199, 200, 201 }, b2[] = { 799, 800, 801 },
		     b3[] = { 0, 0, 0 };
	struct run r;

	(void)state;
	for (int i = 0; i < 6; i++)
		snprintf(p[i], sizeof(p[i]), "%s/%d.json", d, i);
	write_result(p[0], "a", "t1", "jobs-per-min", true, a1, 3);
	write_result(p[1], "a", "t2", "jobs-per-min", true, a2, 3);
	write_result(p[2], "a", "t3", "jobs-per-min", true, a3, 3);
	write_result(p[3], "b", "t1", "jobs-per-min", true, b1, 3);
	write_result(p[4], "b", "t2", "jobs-per-min", true, b2, 3);
	write_result(p[5], "b", "t3", "jobs-per-min", true, b3, 3);
	r = compare("--format", "lkp", d, NULL);
	assert_int_equal(r.rc, 0);
	/* t3 has 0 in b: left out of both columns; sqrt(100 * 400) = 200,
	 * sqrt(200 * 800) = 400 */
	assert_has(r.out, "       200          +100.0%        400        "
		   "GEO-MEAN jobs-per-min\n");
	assert_has(r.out, "(GEO-MEAN jobs-per-min over 2 of 3 cases; left out: "
		   "aim7/task=t3 (a mean <= 0 in b))");
	/* the zero itself is still a line: -100% */
	assert_has(r.out, "        50          -100.0%          0        "
		   "aim7/task=t3.jobs-per-min\n");
	run_free(&r);
	/* a set with no run of t2: no GEO-MEAN of its own over fewer cases */
	snprintf(p[0], sizeof(p[0]), "%s/c.json", mkdir_tmp("geo0c"));
	write_result(p[0], "c", "t1", "jobs-per-min", true, b1, 3);
	r = compare("--format", "lkp", d, tu_path("geo0c"), NULL);
	assert_int_equal(r.rc, 0);
	/* 400, its spread (6), c's blank column (28), then 2 spaces */
	snprintf(p[1], sizeof(p[1]), "       200          +100.0%%        400"
		 "%36sGEO-MEAN jobs-per-min\n", "");
	assert_has(r.out, p[1]);
	assert_has(r.out, "left out: aim7/task=t3 (a mean <= 0 in b); "
		   "no GEO-MEAN for c: not every case was run)");
	run_free(&r);
}

static void test_filter_and_all(void **state)
{
	const char *d = mkdir_tmp("filter");
	char a[700], b[700], c[700], e[700];
	const double base[] = { 100, 100, 100 }, two[] = { 150, 150 };
	const double near[] = { 100.5, 100.5, 100.5 }, far[] = { 120, 121, 122 };
	struct run r;

	(void)state;
	snprintf(a, sizeof(a), "%s/1.json", d);
	snprintf(b, sizeof(b), "%s/2.json", d);
	snprintf(c, sizeof(c), "%s/3.json", d);
	snprintf(e, sizeof(e), "%s/4.json", d);
	write_result(a, "base", "two", "ops/s", true, base, 3);
	write_result(b, "new", "two", "ops/s", true, two, 2);
	write_result(c, "base", "far", "ops/s", true, base, 3);
	write_result(e, "new", "far", "ops/s", true, far, 3);
	r = compare("--format", "lkp", a, b, c, e, NULL);
	assert_int_equal(r.rc, 0);
	/* +50% on two samples is not real: hidden */
	assert_lacks(r.out, "aim7/task=two.ops/s");
	assert_has(r.out, "+21.0%        121        aim7/task=far.ops/s\n");
	assert_has(r.out, "(1 of 2 lines hidden");
	run_free(&r);
	r = compare("--all", "--format", "lkp", a, b, c, e, NULL);
	assert_has(r.out, "+50.0%        150        aim7/task=two.ops/s\n");
	assert_lacks(r.out, "hidden");
	run_free(&r);
	/* ratio 1.005: apart but not real */
	write_result(e, "new", "far", "ops/s", true, near, 3);
	r = compare("--format", "lkp", c, e, NULL);
	assert_lacks(r.out, "aim7.ops/s");
	run_free(&r);
}

/* ------------------------------------------------------------------ gate */

static void test_gate(void **state)
{
	char vanilla[1200], v319[1200];
	struct run r;

	(void)state;
	/* aim7: -13.3% and worse, real */
	r = compare("--format", "lkp", "--fail-below", "10", fx("aim7-seed000"),
		    NULL);
	assert_int_equal(r.rc, 1);
	assert_has(r.out, "  aim7.jobs-per-min: 68a9f5e7007c1afa 420004 against "
		   "f0c6bcba74ac51cb 484435: -13.3% (higher is better)\n");
	assert_has(r.out, "99091700659f4df9 402250");
	assert_has(r.err, "headline regression beyond --fail-below 10");
	run_free(&r);
	r = compare("--format=lkp", "--fail-below=17", fx("aim7-seed000"), NULL);
	assert_int_equal(r.rc, 0);	/* only -16.97% and less */
	assert_has(r.out, "No headline metric is worse");
	run_free(&r);
	/* lower is better: all three faster than vanilla, base first */
	r = compare("--fail-below", "1", fx("xfsrepair-seed003"), NULL);
	assert_int_equal(r.rc, 0);
	run_free(&r);
	/* 3.19 given first is the base: vanilla is 13.4% slower */
	snprintf(vanilla, sizeof(vanilla), "%s",
		 fx("xfsrepair-seed003/1-4.0.0-rc1-vanilla.json"));
	snprintf(v319, sizeof(v319), "%s",
		 fx("xfsrepair-seed003/3-3.19.0-vanilla.json"));
	r = compare("--format", "lkp", "--fail-below", "10", v319, vanilla, NULL);
	assert_int_equal(r.rc, 1);
	assert_has(r.out, "xfsrepair.real-xfsrepair: 4.0.0-rc1-vanilla 507.85 "
		   "against 3.19.0-vanilla 447.66: +13.4% (lower is better)");
	run_free(&r);
	r = compare("--format", "lkp", "--fail-below", "14", v319, vanilla, NULL);
	assert_int_equal(r.rc, 0);
	run_free(&r);
}

static void test_gate_needs_real_change(void **state)
{
	const char *d = mkdir_tmp("gate2");
	char a[700], b[700];
	const double base[] = { 100, 100, 100 }, two[] = { 50, 50 };
	struct run r;

	(void)state;
	snprintf(a, sizeof(a), "%s/a.json", d);
	snprintf(b, sizeof(b), "%s/b.json", d);
	write_result(a, "base", "x", "ops/s", true, base, 3);
	write_result(b, "new", "x", "ops/s", true, two, 2);
	r = compare("--fail-below", "5", a, b, NULL);
	assert_int_equal(r.rc, 0);	/* -50%, but on two samples */
	run_free(&r);
}

/* --------------------------------------------------- bad input and usage */

static void test_malformed_skipped(void **state)
{
	const char *d = mkdir_tmp("bad");
	char good[700], path[700];
	FILE *in, *out;
	int ch;
	struct run r;
	static const struct { const char *name, *text, *says; } bad[] = {
		{ "truncated.json", "{\"format\": \"pagecache-result-1\", "
		  "\"workload\": \"aim7\", \"reps\": [{\"met", "not valid JSON" },
		{ "empty.json", "", "not valid JSON" },
		{ "text.json", "hello, world\n", "not valid JSON" },
		{ "foreign.json", "{\"name\": \"left-pad\", \"version\": "
		  "\"1.3.0\"}\n", "not a pagecache result" },
		{ "array.json", "[1, 2, 3]\n", "not a JSON object" },
		{ "future.json", "{\"format\": \"pagecache-result-9\"}\n",
		  "unknown result format" },
		{ "badreps.json", "{\"format\": \"pagecache-result-1\", "
		  "\"workload\": \"aim7\", \"engine\": \"kernel\", \"headline\": "
		  "{\"metric\": \"x\"}, \"reps\": \"many\"}\n", "\"reps\"" },
		{ "badrep.json", "{\"format\": \"pagecache-result-1\", "
		  "\"workload\": \"aim7\", \"engine\": \"kernel\", \"headline\": "
		  "{\"metric\": \"x\"}, \"reps\": [{\"metrics\": 7}]}\n",
		  "not an object" },
		{ "nohead.json", "{\"format\": \"pagecache-result-1\", "
		  "\"workload\": \"aim7\", \"engine\": \"kernel\", "
		  "\"reps\": []}\n", "no \"headline\"" },
	};

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		snprintf(path, sizeof(path), "%s/%s", d, bad[i].name);
		write_file(path, bad[i].text);
	}
	snprintf(path, sizeof(path), "%s/README", d);
	write_file(path, "not a result\n");
	/* nothing readable: exit 2 */
	r = compare(d, NULL);
	assert_int_equal(r.rc, 2);
	for (size_t i = 0; i < N(bad); i++) {
		char want[800];

		snprintf(want, sizeof(want), "%s/%s: ", d, bad[i].name);
		assert_has(r.err, want);
		assert_has(r.err, bad[i].says);
	}
	assert_has(r.err, "no readable result file");
	run_free(&r);
	/* with one good file among them: its table, exit 0 */
	snprintf(good, sizeof(good), "%s/zgood.json", d);
	in = fopen(fx("aim7-seed000/1-f0c6bcba74ac51cb.json"), "r");
	out = fopen(good, "w");
	assert_non_null(in);
	assert_non_null(out);
	while ((ch = fgetc(in)) != EOF)
		fputc(ch, out);
	fclose(in);
	fclose(out);
	r = compare(d, NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "1 result file, 1 case; sets: f0c6bcba74ac51cb (base)");
	assert_has(r.out, "484435");
	assert_has(r.err, "truncated.json: not valid JSON");
	/* non-JSON names inside a folder are not read at all */
	assert_lacks(r.err, "README");
	run_free(&r);
}

static void test_usage(void **state)
{
	static const char *const bad[][3] = {
		{ "--format", "xml", NULL },
		{ "--fail-below", "abc", NULL },
		{ "--fail-below", "-1", NULL },
		{ "--fail-below", "", NULL },
		{ "--bogus", NULL, NULL },
		{ "-x", NULL, NULL },
		{ "--plot", NULL, NULL },
		{ "--all", NULL, NULL },		/* no RESULT */
		{ "/nonexistent/results", NULL, NULL },
	};
	struct run r;

	(void)state;
	r = compare(NULL);
	assert_int_equal(r.rc, 2);
	assert_has(r.err, "no RESULT given");
	run_free(&r);
	for (size_t i = 0; i < N(bad); i++) {
		r = compare(bad[i][0], bad[i][1], bad[i][2], NULL);
		if (r.rc != 2)
			fail_msg("%s %s: exit %d", bad[i][0],
				 bad[i][1] ? bad[i][1] : "", r.rc);
		assert_true(strlen(r.err) > 0);
		assert_int_equal(strlen(r.out), 0);
		run_free(&r);
	}
	r = compare("--help", NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "usage: pagecache compare [--format verdict|lkp|mmtests|both]");
	run_free(&r);
	/* options after RESULT, and "--" before a name starting with '-' */
	r = compare(fx("aim7-seed000"), "--format", "lkp", "--", NULL);
	assert_int_equal(r.rc, 0);
	run_free(&r);
}

/* ------------------------------------------------------- sets and notes */

static void test_sets_by_argument_and_notes(void **state)
{
	const char *before = mkdir_tmp("before"), *after = mkdir_tmp("after");
	char p[4][700];
	const double k1[] = { 100, 101, 102 }, p1[] = { 150, 151, 152 };
	const double k2[] = { 100, 101, 102 }, p2[] = { 120, 121, 122 };
	struct run r;

	(void)state;
	snprintf(p[0], sizeof(p[0]), "%s/kernel.json", before);
	snprintf(p[1], sizeof(p[1]), "%s/pagecache.json", before);
	snprintf(p[2], sizeof(p[2]), "%s/kernel.json", after);
	snprintf(p[3], sizeof(p[3]), "%s/pagecache.json", after);
	write_result(p[0], "kernel", "t", "ops/s", true, k1, 3);
	write_result(p[1], "pagecache", "t", "ops/s", true, p1, 3);
	write_result(p[2], "kernel", "t", "ops/s", true, k2, 3);
	write_result(p[3], "pagecache", "t", "ops/s", true, p2, 3);
	/* same labels in two folders: the folder is part of the set */
	r = compare("--format", "lkp", before, after, NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "/before:kernel (base), ");
	assert_has(r.out, "/after:pagecache");
	run_free(&r);
	/* mixing workloads and machines is allowed, and said */
	r = compare("--format", "both", fx("aim7-seed000"),
		    fx("xfsrepair-seed003"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "note: the results mix 2 workloads (aim7, xfsrepair)");
	assert_has(r.out, "note: the results come from 2 different machines");
	assert_has(r.out, "note: machine ivb44: ");
	run_free(&r);
	/* a file named before its folder is read once, and is the base */
	r = compare("--format", "lkp",
		    fx("aim7-seed000/3-99091700659f4df9.json"),
		    fx("aim7-seed000"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "4 result files, 1 case; sets: 99091700659f4df9 (base)");
	run_free(&r);
}

static void test_run_notes(void **state)
{
	const char *d = mkdir_tmp("notes");
	char p[4][700];
	const double v[] = { 10, 11, 12 };
	struct run r;

	(void)state;
	for (int i = 0; i < 4; i++)
		snprintf(p[i], sizeof(p[i]), "%s/%d.json", d, i);
	write_file(p[0], "{\"format\": \"pagecache-result-1\", \"workload\": "
		   "\"dd-async\", \"engine\": \"kernel\", \"constrained\": "
		   "false, \"partial\": true, \"headline\": {\"metric\": "
		   "\"seconds\", \"higher_is_better\": false}, \"reps\": "
		   "[{\"metrics\": {\"seconds\": 2.5, \"waits\": \"x\"}}]}\n");
	write_file(p[1], "{\"format\": \"pagecache-result-1\", \"workload\": "
		   "\"dd-async\", \"engine\": \"pagecache\", \"status\": "
		   "\"error\", \"reason\": \"ENOSPC\"}\n");
	write_result(p[2], "x", "t", "ops/s", true, v, 3);
	write_result(p[3], "x", "t", "ops/s", true, v, 3);
	r = compare("--format", "both", d, NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "0.json: a partial (interrupted) run");
	assert_has(r.out, "0.json: kernel ran without its memory limit");
	assert_has(r.out, "note: dd-async on pagecache: error: ENOSPC");
	assert_has(r.out, "note: aim7 on x: 2 result files merged");
	/* merged: six samples in one column */
	assert_has(r.out, "Hmean    ops/s");
	assert_has(r.err, "metric \"waits\" is not a number; ignored");
	/* no real change, so no LKP line by default ... */
	assert_lacks(r.out, "dd-async.seconds");
	run_free(&r);
	/* ... but the error run shows on its headline line with --all */
	r = compare("--all", "--format", "lkp", d, NULL);
	snprintf(p[0], sizeof(p[0]), "      2.50                       error"
		 "%36sdd-async.seconds\n", "");
	assert_has(r.out, p[0]);
	/* 10, 11, 12 twice: sigma 0.8165, 7.4% of 11 */
	assert_has(r.out, "        11 ±  7%  aim7.ops/s\n");
	run_free(&r);
}


/* ----------------------------------------------------------------- plots */


static void test_plots(void **state)
{
	const char *dir = tu_path("plots/sub");
	char p[800];
	struct run r;

	(void)state;
	if (!have_gnuplot())
		skip();
	r = compare("--format", "lkp", "--plot", dir, fx("seq-write"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "plots: 7 PNG files in ");
	snprintf(p, sizeof(p), "%s/seq-write.reps.png", dir);
	assert_png(p);
	snprintf(p, sizeof(p), "%s/seq-write.pagecache.rep3.counters.png", dir);
	assert_png(p);
	snprintf(p, sizeof(p), "%s/compare-plots.gp", dir);
	assert_int_equal(access(p, R_OK), 0);
	/* no counters for the n/a engine */
	snprintf(p, sizeof(p), "%s/seq-write.direct.rep1.counters.png", dir);
	assert_int_not_equal(access(p, F_OK), 0);
	run_free(&r);
}

static void test_plots_without_gnuplot(void **state)
{
	struct run r;

	(void)state;
	setenv("PC_GNUPLOT", "/nonexistent/gnuplot", 1);
	r = compare("--plot", tu_path("noplots"), fx("seq-write"), NULL);
	unsetenv("PC_GNUPLOT");
	assert_int_equal(r.rc, 0);	/* tables still made */
	assert_has(r.err, "gnuplot not found");
	assert_has(r.out, "Hmean    MB/s");
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mean_sd_cv),
		cmocka_unit_test(test_hmean),
		cmocka_unit_test(test_geomean),
		cmocka_unit_test(test_t_and_significance),
		cmocka_unit_test(test_not_significant),
		cmocka_unit_test(test_changes_and_signs),
		cmocka_unit_test(test_real_change_rule),
		cmocka_unit_test(test_lkp_seed000),
		cmocka_unit_test(test_mmtests_seed003),
		cmocka_unit_test(test_hmean_row_and_lkp_sign),
		cmocka_unit_test(test_counters_hidden_by_default),
		cmocka_unit_test(test_geomean_table),
		cmocka_unit_test(test_geomean_with_zero),
		cmocka_unit_test(test_filter_and_all),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_gate_needs_real_change),
		cmocka_unit_test(test_malformed_skipped),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_sets_by_argument_and_notes),
		cmocka_unit_test(test_run_notes),
		cmocka_unit_test(test_plots),
		cmocka_unit_test(test_plots_without_gnuplot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
