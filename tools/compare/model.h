/*
 * model.h - what `pagecache compare` knows after reading its arguments:
 * the result files (load.c), the sets and cases they fall into and every
 * metric's samples per set (group.c).  The printers (lkp.c, mmtests.c),
 * the gate (gate.c) and the plots (plot.c) only read it.
 *
 * Single-threaded; one pcc_db per command, freed by pcc_db_free.
 *
 * Names: everything the compare tool shares between its files starts with
 * pcc_ (the tool's own prefix; pc_ and pc__ belong to the library).
 */
#ifndef PC_COMPARE_MODEL_H
#define PC_COMPARE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define PCC_FORMAT "pagecache-result-1"

/* One result file, as read.  Every const char * points into root. */
struct pcc_result {
	char *path;
	int arg;		/* which RESULT argument it came from */
	json_t *root;
	const char *workload, *engine, *label, *config;
	const char *status;	/* "ok", "n/a" or "error" */
	const char *reason;
	const char *headline;	/* headline metric name; NULL if none */
	bool higher;		/* headline direction */
	bool partial;
	bool unconstrained;	/* "constrained": false */
	bool limit;		/* the physical limit of its workload: engine
				 * "limit", or "limit": true (a direct run the
				 * lab calls the device's limit) */
	json_t *params;		/* object or NULL (borrowed from root) */
	json_t *directions;	/* object or NULL */
	json_t *reps;		/* array (may be empty) */
	char *machine;		/* canonical JSON of "machine", or NULL */
	int set, kase;		/* filled by pcc_group */
};

/* The samples of one metric of one case in one set, in repetition order. */
struct pcc_vals {
	double *v;
	size_t n, cap;
};

struct pcc_metric {
	char *name;		/* "MB/s", or "vmstat.pgsteal_direct" */
	bool higher;		/* higher is better */
	bool pct;		/* name ends in '%': differences are absolute */
	bool headline;
	bool vmstat;		/* a counter delta: LKP table only */
	bool profile;		/* "perf-profile.*": percent of samples in a
				 * symbol; LKP table only, lower is better */
	struct pcc_vals *per_set;	/* [db->nset] */
};

/* A workload with the parameters that tell its runs apart. */
struct pcc_case {
	char *key;		/* workload + "\n" + the case parameters */
	char *name;		/* "aim7" or "aim7/task=disk_wrt" */
	const char *workload;
	const char **status;	/* [db->nset]: NULL when the set has no run */
	const char **reason;	/* [db->nset] */
	size_t nmetric, cap;
	struct pcc_metric *metric;	/* in order of first appearance */
	int limit_set;		/* the set holding its limit run, or -1 */
};

struct pcc_db {
	size_t nres, rescap;
	struct pcc_result **res;
	size_t nset;
	char **set;		/* set names; set[0] is the base */
	size_t ncase;
	struct pcc_case *kase;
	size_t nnote, notecap;
	char **note;
	bool *warn;		/* [nnote]: a note that questions the figures */
};

#define PCC_PROFILE_PREFIX "perf-profile."	/* bench --profile's metrics */

/* load.c */
/*
 * Read every RESULT argument (files, or folders searched recursively for
 * *.json, in name order; a file reached twice is read once) into db->res.
 * Bad files are reported on err with their path and skipped.  Returns 0,
 * or -ENOENT after reporting an argument that does not exist.
 */
int pcc_load(struct pcc_db *db, char *const *paths, int npaths,
	     FILE *err);
void pcc_db_free(struct pcc_db *db);

/* group.c */
/*
 * Sets, cases and metric samples from db->res; notes on what is mixed.
 * @base, if not NULL, names the set to make the base (set 0) when there
 * is one of that name; otherwise the first set found is.
 */
int pcc_group(struct pcc_db *db, char *const *paths, const char *base);
/* printf-style note for the report; -ENOMEM on failure.  A warning is a
 * note the verdict repeats: the figures may not mean what they seem. */
int pcc_note(struct pcc_db *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pcc_warn(struct pcc_db *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The headline metric of a case, or NULL (only n/a runs). */
const struct pcc_metric *pcc_headline(const struct pcc_case *c);

/* lkp.c */
/*
 * The LKP table; returns the number of lines hidden (no real change, or a
 * counter delta without @counters).  @all shows every line.
 */
size_t pcc_print_lkp(const struct pcc_db *db, bool all, bool counters,
		     FILE *out);
/* The value formats both tables and the gate use; buf >= 32 bytes. */
const char *pcc_fmt_value(double v, char *buf);
const char *pcc_fmt_change(double change, bool absolute, char *buf);

/* mmtests.c */
void pcc_print_mmtests(const struct pcc_db *db, FILE *out);

/* gate.c */
/* Print and count headline metrics worse than the base by more than pct. */
size_t pcc_gate(const struct pcc_db *db, double pct, FILE *out);

/* plot.c */
/*
 * PNGs into dir through gnuplot: the number of charts drawn, -ENOENT when
 * skipped because gnuplot is missing, another negative errno on failure;
 * every problem is said on err.  PC_GNUPLOT names the gnuplot binary.
 */
int pcc_plot(const struct pcc_db *db, const char *dir, FILE *err);
/* A chart's file name: "A.B.repN.WHAT.png", A and B kept to the
 * characters [A-Za-z0-9._=+-] (others become '_'); B may be NULL, rep 0
 * leaves ".repN" out.  malloc'd; NULL on failure. */
char *pcc_plot_file(const char *a, const char *b, long rep, const char *what);

#endif
