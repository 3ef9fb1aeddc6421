/*
 * verdict.h - the answer at a glance: one row per case, the headline of a
 * subject set against the base, and whether the change is real
 * (verdict.c).  The terminal verdict, report.html and the overview chart
 * are all drawn from one struct pcc_verdict, so they cannot disagree.
 */
#ifndef PC_COMPARE_VERDICT_H
#define PC_COMPARE_VERDICT_H

#include "model.h"
#include "stats.h"

/* The LKP rule on one row (pcc_stats_real_change), said as a verdict. */
enum pcc_real {
	PCC_REAL_UNKNOWN,	/* fewer than 3 runs a side, or one side absent */
	PCC_REAL_NO,		/* ranges overlap, or the ratio is <= 1.01 */
	PCC_REAL_BETTER,
	PCC_REAL_WORSE,
};

struct pcc_verdict_row {
	const struct pcc_case *c;
	const struct pcc_metric *m;	/* the case's headline; NULL: no run */
	struct pcc_stats base, subj, limit;	/* n == 0: no such run */
	const char *base_text, *subj_text;	/* "n/a" / "error" when so */
	double change;		/* LKP %change of subj (points for a "%"
				 * metric); NaN when a side is missing */
	double ratio;		/* subj against base, above 1 when better
				 * (base / subj for lower-is-better); NaN */
	double ratio_lo, ratio_hi;	/* the same from the extreme runs: the
					 * worst subj against the best base,
					 * and the other way round */
	double of_limit;	/* subj against the limit, oriented so that
				 * 1 is at the limit; NaN without one */
	enum pcc_real real;
};

struct pcc_verdict {
	size_t base, subj;	/* set indexes; subj == base: one set only */
	size_t nrow;
	struct pcc_verdict_row *row;	/* one per case, in case order */
	double geomean;		/* of the rows' ratios; NaN if none */
	size_t ngeo;		/* rows it spans */
	size_t better, worse, notreal, unknown;
	bool any_limit;
};

/*
 * The subject is the set called "pagecache" when there is one, else the
 * non-base set with figures in the most cases (the first on a tie); sets
 * that only hold limit runs are never the subject.  0 or -ENOMEM.
 */
int pcc_verdict_build(const struct pcc_db *db, struct pcc_verdict *v);
void pcc_verdict_free(struct pcc_verdict *v);

/*
 * The verdict on out, at most 40 lines: a title, one row per case (the
 * first PCC_VERDICT_ROWS; the rest counted), the GEO-MEAN of the ratios,
 * the real changes, the warnings, the other sets, and where the full
 * tables and the report are (@report_dir, or NULL when none was written).
 */
#define PCC_VERDICT_ROWS 28
void pcc_verdict_print(const struct pcc_db *db, const struct pcc_verdict *v,
		       const char *report_dir, FILE *out);

/* "better", "worse", "no" or "-": the row's real-change word. */
const char *pcc_verdict_word(enum pcc_real r);

/* plot.c */
/*
 * The report's charts into dir (made if needed), drawn by one gnuplot
 * run of dir/report-plots.gp in dir: overview.ratio.png (the verdict's
 * ratios), and per case CASE.reps.png (the headline of every repetition
 * of every set) and CASE.counters.png (subject and base, their median
 * repetitions, one time axis).  The number of charts, -ENOENT without
 * gnuplot (said on err), or another negative errno.
 */
int pcc_plot_report(const struct pcc_db *db, const struct pcc_verdict *v,
		    const char *dir, FILE *err);

/* report.c */
/* dir/report.html; @plots: the charts were drawn into dir/plots.  0 or
 * a negative errno (said on err). */
int pcc_report_html(const struct pcc_db *db, const struct pcc_verdict *v,
		    const char *dir, bool plots, FILE *err);
/*
 * The files compare writes (compare.txt, report.html, gnuplot scripts):
 * pcc_file_create opens dir/name for writing, *path its name (the caller
 * frees it), 0 or a negative errno; pcc_file_close closes it, -EIO if the
 * write failed.  Both say what went wrong on err.
 */
int pcc_file_create(const char *dir, const char *name, char **path,
		    FILE **f, FILE *err);
int pcc_file_close(FILE *f, const char *path, FILE *err);

#endif
