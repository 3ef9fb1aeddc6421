/*
 * model.h - what `pagecache compare` knows after reading its arguments:
 * the result files (load.c), the sets and cases they fall into and every
 * metric's samples per set (group.c).  The printers (lkp.c, mmtests.c),
 * the gate (gate.c) and the plots (plot.c) only read it.
 *
 * Single-threaded; one pc_cmp_db per command, freed by pc__cmp_db_free.
 */
#ifndef PC_COMPARE_MODEL_H
#define PC_COMPARE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define PC_CMP_FORMAT "pagecache-result-1"

/* One result file, as read.  Every const char * points into root. */
struct pc_cmp_result {
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
	json_t *params;		/* object or NULL (borrowed from root) */
	json_t *directions;	/* object or NULL */
	json_t *reps;		/* array (may be empty) */
	char *machine;		/* canonical JSON of "machine", or NULL */
	int set, kase;		/* filled by pc__cmp_group */
};

/* The samples of one metric of one case in one set, in repetition order. */
struct pc_cmp_vals {
	double *v;
	size_t n, cap;
};

struct pc_cmp_metric {
	char *name;		/* "MB/s", or "vmstat.pgsteal_direct" */
	bool higher;		/* higher is better */
	bool pct;		/* name ends in '%': differences are absolute */
	bool headline;
	bool vmstat;		/* a counter delta: LKP table only */
	struct pc_cmp_vals *per_set;	/* [db->nset] */
};

/* A workload with the parameters that tell its runs apart. */
struct pc_cmp_case {
	char *key;		/* workload + "\n" + the case parameters */
	char *name;		/* "aim7" or "aim7/task=disk_wrt" */
	const char *workload;
	const char **status;	/* [db->nset]: NULL when the set has no run */
	const char **reason;	/* [db->nset] */
	size_t nmetric, cap;
	struct pc_cmp_metric *metric;	/* in order of first appearance */
};

struct pc_cmp_db {
	size_t nres, rescap;
	struct pc_cmp_result **res;
	size_t nset;
	char **set;		/* set names; set[0] is the base */
	size_t ncase;
	struct pc_cmp_case *kase;
	size_t nnote, notecap;
	char **note;
};

/* load.c */
/*
 * Read every RESULT argument (files, or folders searched recursively for
 * *.json, in name order; a file reached twice is read once) into db->res.
 * Bad files are reported on err with their path and skipped.  Returns 0,
 * or -ENOENT after reporting an argument that does not exist.
 */
int pc__cmp_load(struct pc_cmp_db *db, char *const *paths, int npaths,
		 FILE *err);
void pc__cmp_db_free(struct pc_cmp_db *db);

/* group.c */
/* Sets, cases and metric samples from db->res; notes on what is mixed. */
int pc__cmp_group(struct pc_cmp_db *db, char *const *paths);
/* printf-style note for the report; -ENOMEM on failure. */
int pc__cmp_note(struct pc_cmp_db *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The headline metric of a case, or NULL (only n/a runs). */
const struct pc_cmp_metric *pc__cmp_headline(const struct pc_cmp_case *c);

/* lkp.c */
/*
 * The LKP table; returns the number of lines hidden (no real change, or a
 * counter delta without @counters).  @all shows every line.
 */
size_t pc__cmp_print_lkp(const struct pc_cmp_db *db, bool all, bool counters,
			 FILE *out);
/* The value formats both tables and the gate use; buf >= 32 bytes. */
const char *pc__cmp_fmt_value(double v, char *buf);
const char *pc__cmp_fmt_change(double change, bool absolute, char *buf);

/* mmtests.c */
void pc__cmp_print_mmtests(const struct pc_cmp_db *db, FILE *out);

/* gate.c */
/* Print and count headline metrics worse than the base by more than pct. */
size_t pc__cmp_gate(const struct pc_cmp_db *db, double pct, FILE *out);

/* plot.c */
/*
 * PNGs into dir through gnuplot: the number of charts drawn, -ENOENT when
 * skipped because gnuplot is missing, another negative errno on failure;
 * every problem is said on err.  PC_GNUPLOT names the gnuplot binary.
 */
int pc__cmp_plot(const struct pc_cmp_db *db, const char *dir, FILE *err);

#endif
