/*
 * test_compare_verdict.c - `pagecache compare`'s verdict, its GEO-MEAN of
 * headlines only, the perf profile lines, --base and --report, run
 * in-process on tests/fixtures/compare/suite: four workloads as `pagecache
 * run` writes them (kernel, pagecache, a limit row, a lower-is-better
 * headline, an n/a base, perf profiles, counter samples, the load).
 *
 * The suite's verdict by hand: headline ratios pagecache/kernel, above 1
 * better: seq-write 1210 / 710 = 1.70423, dd-async (lower is better)
 * 2.1 / 2.6 = 0.807692, cached-read-T1 1150000 / 1100000 = 1.045455;
 * GEO-MEAN (1.70423 * 0.807692 * 1.045455)^(1/3) = 1.439058^(1/3) =
 * 1.12912, +12.9%.  seq-write's ranges {700..720} and {1200..1220} are
 * apart: better; dd-async {2.0..2.2} against {2.5..2.7}: worse;
 * cached-read {1.0..1.2}e6 against {1.05..1.25}e6 overlap: not real.  Of
 * the limit: 1150000 / 2000000 = 57.5%, printed 57% (0.575 is a hair
 * below in binary).  No random input, so no seed.
 */
#include "compare_util.h"

static void test_verdict_suite(void **state)
{
	struct run r = compare(fx("suite"), NULL);
	const char *l;

	(void)state;
	assert_int_equal(r.rc, 0);
	/* several workloads: the verdict is the default, the tables are not */
	assert_has(r.out, "Verdict: pagecache against kernel (the base)");
	assert_lacks(r.out, "LKP style");
	assert_lacks(r.out, "Hmean");
	assert_true(lines(r.out) <= 40);
	l = line_with(r.out, "seq-write ");
	assert_has(l, "MB/s ↑");
	assert_has(l, "   710 ");
	assert_has(l, " 1210 ");
	assert_has(l, "+70.4%  better");
	l = line_with(r.out, "dd-async ");
	assert_has(l, "slowest-seconds ↓");
	assert_has(l, "2.10 ±  4%");
	assert_has(l, "+23.8%  worse");
	l = line_with(r.out, "cached-read-T1 ");
	assert_has(l, "+4.5%  no");
	assert_has(l, "57%");
	/* no kernel run: n/a, and no change */
	l = line_with(r.out, "numa-shuffle ");
	assert_has(l, "n/a");
	assert_has(l, "510");
	assert_lacks(l, "%");
	assert_has(r.out, "of limit");
	assert_has(r.out, "GEO-MEAN of 3 headline ratios pagecache/kernel: "
		   "1.13 (+12.9%); above 1: pagecache is better\n");
	assert_has(r.out, "1 better, 1 worse, 1 not real\n");
	assert_has(r.out, "Also compared (workloads): limit (1)\n");
	assert_has(r.out, "Load average up to 3.5 on 2 cores while they ran: "
		   "a busy machine, noisy figures\n");
	run_free(&r);
	/* asked for on one workload too; the tables still on demand */
	r = compare("--format", "verdict", fx("seq-write"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "Verdict: pagecache against kernel");
	assert_has(line_with(r.out, "seq-write "), "+9.0%  better");
	assert_lacks(r.out, "of limit");
	run_free(&r);
	r = compare("--format", "lkp", fx("suite"), NULL);
	assert_has(r.out, "LKP style");
	assert_lacks(r.out, "Verdict");
	run_free(&r);
}

/* A verdict over many workloads still fits a screen. */
static void test_verdict_fits(void **state)
{
	const char *d = mkdir_tmp("many");
	const double k[] = { 100, 101, 102 }, p[] = { 150, 151, 152 };
	char path[700], task[32];
	struct run r;

	(void)state;
	for (int i = 0; i < 60; i++) {
		snprintf(task, sizeof(task), "t%02d", i / 2);
		snprintf(path, sizeof(path), "%s/%d.json", d, i);
		write_result(path, i % 2 ? "pagecache" : "kernel", task,
			     "ops/s", true, i % 2 ? p : k, 3);
	}
	/* one workload, so ask for the verdict */
	r = compare("--format", "verdict", d, NULL);
	assert_int_equal(r.rc, 0);
	assert_true(lines(r.out) <= 40);
	assert_has(r.out, "... and 2 more workloads");
	/* the GEO-MEAN spans all 30, not the 28 shown: 151 / 101 */
	assert_has(r.out, "GEO-MEAN of 30 headline ratios pagecache/kernel: "
		   "1.5 (+49.5%)");
	assert_has(r.out, "30 better, 0 worse, 0 not real");
	run_free(&r);
}

/* GEO-MEAN lines average headlines only, never other figures. */
static void test_geomean_headlines_only(void **state)
{
	struct run r = compare("--format", "lkp", fx("suite"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	/* seconds is not a headline anywhere; MB/s heads two cases, but one
	 * has no kernel run, and one case is no mean */
	assert_lacks(r.out, "GEO-MEAN seconds");
	assert_lacks(r.out, "GEO-MEAN MB/s");
	assert_has(r.out, "         1                                       "
		   "+12.9%       1.13        GEO-MEAN headline-ratio\n");
	assert_has(r.out, "(GEO-MEAN headline-ratio over 3 of 4 cases; left "
		   "out: numa-shuffle (no run in kernel)");
	run_free(&r);
}

/* bench --profile's lines: LKP only, in points, a missing symbol 0. */
static void test_profile_lines(void **state)
{
	struct run r = compare("--format", "both", fx("suite"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	/* 40, 41, 42 against no samples at all in pagecache's profiles */
	assert_has(r.out, "        41                                        "
		   "-41.0          0        seq-write.perf-profile.self."
		   "cycles-pp._copy_to_iter\n");
	assert_has(r.out, "        +29.0         29 ±  3%  seq-write.perf-"
		   "profile.self.cycles-pp.pc_pread\n");
	/* the seed's 1.6%: above the 1% floor, shown */
	assert_has(r.out, "seq-write.perf-profile.self.cycles-pp."
		   "native_queued_spin_lock_slowpath\n");
	/* the limit engine has no profile: its column stays blank */
	assert_has(line_with(r.out, "cached-read-T1.perf-profile.self.cycles-"
			     "pp.pc_pread"), "         0    ");
	/* mmtests rows are for the workload's own figures */
	assert_lacks(strstr(r.out, "mmtests style"), "perf-profile");
	run_free(&r);
}

static void test_base_option(void **state)
{
	struct run r = compare("--format", "lkp", "--base", "pagecache",
			       fx("suite"), NULL);

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "sets: pagecache (base), kernel, limit\n");
	assert_has(line_with(r.out, "  seq-write.MB/s\n"), "-41.3%        710 ");
	run_free(&r);
	r = compare("--format", "lkp", "--base", "nosuch", fx("suite"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "note: no set is called \"nosuch\": the base is kernel");
	run_free(&r);
}

/* --report DIR: the tables in compare.txt, the page, its charts. */
static void test_report_files(void **state)
{
	const char *dir = tu_path("rep/out");
	char p[800], *txt = NULL;
	size_t len = 0;
	FILE *f;
	struct run r;

	(void)state;
	mkdir_tmp("rep");
	r = compare("--report", dir, fx("suite"), NULL);
	assert_int_equal(r.rc, 0);
	assert_has(r.out, "Full tables: ");
	assert_has(r.out, "/rep/out/compare.txt\nReport:      ");
	assert_has(r.out, "/rep/out/report.html\n");
	snprintf(p, sizeof(p), "%s/compare.txt", dir);
	f = fopen(p, "r");
	assert_non_null(f);
	txt = malloc(1 << 20);
	assert_non_null(txt);
	len = fread(txt, 1, (1 << 20) - 1, f);
	txt[len] = 0;
	fclose(f);
	/* both tables, the profiles, every note */
	assert_has(txt, "LKP style");
	assert_has(txt, "mmtests style");
	assert_has(txt, "seq-write.perf-profile.self.cycles-pp.pc_pread");
	assert_has(txt, "note: numa-shuffle on kernel: n/a");
	free(txt);
	snprintf(p, sizeof(p), "%s/report.html", dir);
	assert_int_equal(access(p, R_OK), 0);
	if (have_gnuplot()) {
		snprintf(p, sizeof(p), "%s/plots/overview.ratio.png", dir);
		assert_png(p);
		snprintf(p, sizeof(p), "%s/plots/seq-write.counters.png", dir);
		assert_png(p);
		snprintf(p, sizeof(p), "%s/plots/dd-async.reps.png", dir);
		assert_png(p);
	}
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_suite),
		cmocka_unit_test(test_verdict_fits),
		cmocka_unit_test(test_geomean_headlines_only),
		cmocka_unit_test(test_profile_lines),
		cmocka_unit_test(test_base_option),
		cmocka_unit_test(test_report_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
