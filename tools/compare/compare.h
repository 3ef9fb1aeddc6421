/*
 * compare.h - `pagecache compare`: LKP and mmtests tables of benchmark
 * results, plots, and a regression gate (tools/compare/README.md).
 */
#ifndef PC_COMPARE_H
#define PC_COMPARE_H

#include <stdio.h>

/*
 * `pagecache compare [--format verdict|lkp|mmtests|both] [--all]
 * [--counters] [--base SET] [--plot DIR] [--report DIR] [--fail-below PCT]
 * RESULT...`; argv[0] is "compare".  Prints on stdout
 * and stderr; returns the exit status: 0 done, 1 a headline metric
 * regressed beyond --fail-below, 2 a bad command line or nothing readable.
 */
int pc_compare_main(int argc, char **argv);

/* The same with the output streams given (tests). */
int pcc_run(int argc, char **argv, FILE *out, FILE *err);

/*
 * `pagecache report [--base SET] DIR [RESULT...]`: report.html, its
 * charts and compare.txt in DIR from the results in DIR, the verdict on
 * stdout; `compare --report DIR --base SET DIR RESULT...` (SET: kernel).
 */
int pc_report_main(int argc, char **argv);

#endif
