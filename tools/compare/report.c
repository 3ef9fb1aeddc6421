/*
 * report.c - DIR/report.html: the comparison as a person reads it, one
 * self-contained page (inline CSS, no script; the PNGs in DIR/plots):
 *
 *   title       subject against base, the folder, runs, budget, commit
 *   Verdict     the verdict's rows (verdict.c) as a table, GEO-MEAN,
 *               real changes, warnings
 *   Overview    plots/overview.ratio.png: the ratio per workload
 *   a section   per case: what it does; every set's headline (mean ±
 *               %stddev, min, max, runs, change, real?); the headline of
 *               each repetition; the counters of subject and base on one
 *               time axis; each engine's ten hottest symbols (--profile);
 *               links to the result files
 *   Machine     machine, budgets, each set's config and commit, notes
 *   Files       compare.txt, the gnuplot script, every result file
 *
 * The page is written as XML-well-formed HTML5 (every element closed,
 * void elements self-closed, attributes quoted, text escaped) so that
 * tests/test_report.c can check it with a plain tag-balance reader; an
 * image is referenced only once its PNG exists.
 *
 * Reads the db and the verdict only; single-threaded.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verdict.h"

#define PROFILE_ROWS 10

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s >= ' ' || *s == '\n')
				fputc(*s, f);
		}
	}
}

static const char style[] =
"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
"max-width:1240px;padding:0 24px 48px;color:#1d1d1f;line-height:1.45}"
"h1{font-size:1.6em;margin:28px 0 4px}h2{margin-top:40px;border-bottom:"
"2px solid #ddd;padding-bottom:4px}h3{margin:22px 0 6px;font-size:1.05em}"
".sub{color:#555;margin:0 0 12px}nav{background:#f5f5f7;padding:8px 12px;"
"border-radius:6px;font-size:.92em}nav a{margin-right:12px;white-space:nowrap}"
"table{border-collapse:collapse;margin:8px 0;font-size:.92em}"
"th,td{padding:3px 10px;border-bottom:1px solid #e3e3e3;text-align:left;"
"vertical-align:top}th{background:#f5f5f7;font-weight:600}"
"td.n{text-align:right;font-family:ui-monospace,Menlo,Consolas,monospace;"
"white-space:nowrap}tr.rb td{background:#eef7ee}tr.rw td{background:"
"#fcefef}.better{color:#1e7b1e;font-weight:600}.worse{color:#b21f1f;"
"font-weight:600}.muted{color:#777}.warn{color:#8a5a00}p.big{font-size:1.15em}"
"img{max-width:100%;height:auto;border:1px solid #e3e3e3;margin:6px 0}"
".row{display:flex;flex-wrap:wrap;gap:18px}.row table{min-width:330px}"
"code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}"
"pre{background:#f5f5f7;padding:10px;overflow-x:auto}"
"details{margin:8px 0}summary{cursor:pointer;color:#335}";

static void num_cell(FILE *f, const struct pcc_stats *st, const char *text)
{
	char v[32];

	fputs("<td class=\"n\">", f);
	if (!st->n)
		esc(f, text ? text : "-");
	else if (st->cv > 2)
		fprintf(f, "%s ± %.0f%%", pcc_fmt_value(st->mean, v),
			st->cv > 999 ? 999 : st->cv);
	else
		fputs(pcc_fmt_value(st->mean, v), f);
	fputs("</td>", f);
}

/* the class of a real-change word, and of its table row */
static const char *word_class(enum pcc_real r)
{
	return r == PCC_REAL_BETTER ? "better" : r == PCC_REAL_WORSE ? "worse"
								      : "";
}

static const char *row_class(enum pcc_real r)
{
	return r == PCC_REAL_BETTER ? "rb" : r == PCC_REAL_WORSE ? "rw" : "";
}

/* Does DIR/plots/NAME exist?  Then its relative path, else NULL. */
static char *plot_path(const char *dir, const char *a, const char *what)
{
	char *name = pcc_plot_file(a, NULL, 0, what), *rel = NULL, *full = NULL;

	if (name && asprintf(&rel, "plots/%s", name) >= 0 &&
	    asprintf(&full, "%s/%s", dir, rel) >= 0 && access(full, R_OK) == 0) {
		free(name);
		free(full);
		return rel;
	}
	free(name);
	free(full);
	free(rel);
	return NULL;
}

static void image(FILE *f, const char *dir, const char *a, const char *what,
		  const char *alt)
{
	char *p = plot_path(dir, a, what);

	if (!p)
		return;
	fputs("<p><img src=\"", f);
	esc(f, p);
	fputs("\" alt=\"", f);
	esc(f, alt);
	fputs("\" /></p>\n", f);
	free(p);
}

/* A link to a file: relative when it is under dir, else file://; its
 * text is @text, or the file's name. */
static void file_link(FILE *f, const char *dir, const char *path,
		      const char *text)
{
	char d[PATH_MAX], p[PATH_MAX];
	size_t n;

	fputs("<a href=\"", f);
	if (realpath(dir, d) && realpath(path, p) && (n = strlen(d)) &&
	    !strncmp(p, d, n) && p[n] == '/') {
		esc(f, p + n + 1);
	} else {
		fputs("file://", f);
		esc(f, realpath(path, p) ? p : path);
	}
	fputs("\"><code>", f);
	esc(f, text ? text : strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	fputs("</code></a>", f);
}

/* ---- the pieces ---- */

/* Distinct string values of one top-level key, comma-separated. */
static void distinct(const struct pcc_db *db, const char *key, FILE *f)
{
	size_t shown = 0;

	for (size_t i = 0; i < db->nres; i++) {
		const char *s = json_string_value(json_object_get(db->res[i]->root,
								  key));
		bool seen = false;

		for (size_t j = 0; j < i && s && !seen; j++)
			seen = json_string_value(json_object_get(db->res[j]->root,
					key)) && !strcmp(s, json_string_value(
					json_object_get(db->res[j]->root, key)));
		if (!s || !*s || seen)
			continue;
		fputs(shown++ ? ", " : "", f);
		esc(f, s);
	}
	if (!shown)
		fputs("unknown", f);
}

static void budgets(const struct pcc_db *db, FILE *f)
{
	long long seen[16];
	size_t n = 0;

	for (size_t i = 0; i < db->nres && n < 16; i++) {
		json_t *b = json_object_get(db->res[i]->params, "budget");
		long long v = json_integer_value(b);
		bool dup = false;

		for (size_t j = 0; j < n; j++)
			dup |= seen[j] == v;
		if (!json_is_integer(b) || dup)
			continue;
		fprintf(f, "%s%lld MiB", n ? ", " : "", v >> 20);
		seen[n++] = v;
	}
	if (!n)
		fputs("not recorded", f);
}

/* "run 2026-12-01 08:30:41 to 08:37:37 UTC": the first and last start */
static void started(const struct pcc_db *db, FILE *f)
{
	const char *lo = NULL, *hi = NULL;

	for (size_t i = 0; i < db->nres; i++) {
		const char *s = json_string_value(json_object_get(db->res[i]->root,
								  "started"));

		if (!s || strlen(s) != 20)	/* 2026-12-01T08:30:41Z */
			continue;
		lo = !lo || strcmp(s, lo) < 0 ? s : lo;
		hi = !hi || strcmp(s, hi) > 0 ? s : hi;
	}
	if (!lo) {
		fputs("start time not recorded", f);
		return;
	}
	fprintf(f, "run %.10s %.8s", lo, lo + 11);
	if (strcmp(lo, hi))
		fprintf(f, " to %.*s%.8s", strncmp(lo, hi, 10) ? 11 : 0, hi,
			hi + 11);
	fputs(" UTC", f);
}

/* "; load average 12.3 to 25.1 (2 cores)" when the results recorded it */
static void load_range(const struct pcc_db *db, FILE *f)
{
	double lo = NAN, hi = NAN;
	long long cores = json_integer_value(json_object_get(json_object_get(
				db->res[0]->root, "machine"), "cores"));

	for (size_t i = 0; i < db->nres; i++) {
		json_t *load = json_object_get(db->res[i]->root, "load");
		const char *k[] = { "start", "end" };

		for (int j = 0; j < 2; j++) {
			json_t *x = json_object_get(load, k[j]);
			double v = json_number_value(x);

			if (!json_is_number(x))
				continue;
			lo = !(v >= lo) ? v : lo;
			hi = !(v <= hi) ? v : hi;
		}
	}
	if (isnan(lo))
		return;
	fprintf(f, "; load average %.1f to %.1f", lo, hi);
	if (cores > 0)
		fprintf(f, " on %lld cores%s", cores, hi > (double)cores ?
			" (a busy machine: noisy figures)" : "");
}

static void header(const struct pcc_db *db, const struct pcc_verdict *v,
		   const char *dir, FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
	      "<title>", f);
	esc(f, db->set[v->subj]);
	fputs(" against ", f);
	esc(f, db->set[v->base]);
	fputs(" - pagecache report</title>\n<style>", f);
	fputs(style, f);
	fputs("</style>\n</head>\n<body>\n<h1>", f);
	esc(f, db->set[v->subj]);
	fputs(" against ", f);
	esc(f, db->set[v->base]);
	fputs("</h1>\n<p class=\"sub\">", f);
	fprintf(f, "%zu workload%s, %zu result files in <code>", db->ncase,
		db->ncase == 1 ? "" : "s", db->nres);
	esc(f, dir);
	fputs("</code>; budget ", f);
	budgets(db, f);
	fputs("; commit ", f);
	distinct(db, "commit", f);
	fputs("; ", f);
	started(db, f);
	load_range(db, f);
	fputs("</p>\n<nav><a href=\"#verdict\">Verdict</a>\n"
	      "<a href=\"#overview\">Overview</a>\n", f);
	for (size_t k = 0; k < db->ncase; k++) {
		fprintf(f, "<a href=\"#w%zu\">", k);
		esc(f, db->kase[k].name);
		fputs("</a>\n", f);
	}
	fputs("<a href=\"#machine\">Machine and config</a>\n"
	      "<a href=\"#files\">Files</a></nav>\n", f);
}

static void verdict_table(const struct pcc_db *db, const struct pcc_verdict *v,
			  FILE *f)
{
	size_t nwarn = 0;

	fputs("<h2 id=\"verdict\">Verdict</h2>\n", f);
	if (v->subj != v->base && v->ngeo)
		fprintf(f, "<p class=\"big\">Over %zu workload%s, the GEO-MEAN "
			"of the headline ratios %s/%s is <b>%.3g</b> (%+.1f%%): "
			"above 1, %s is better.  Real changes: <span "
			"class=\"better\">%zu better</span>, <span "
			"class=\"worse\">%zu worse</span>, %zu not real%s.</p>\n",
			v->ngeo, v->ngeo == 1 ? "" : "s", db->set[v->subj],
			db->set[v->base], v->geomean, 100 * (v->geomean - 1),
			db->set[v->subj], v->better, v->worse, v->notreal,
			v->unknown ? ", some with too few runs to tell" : "");
	fputs("<table>\n<tr><th>workload</th><th>headline</th><th>", f);
	esc(f, db->set[v->base]);
	fputs("</th><th>", f);
	esc(f, db->set[v->subj]);
	fputs("</th><th>change</th><th>real?</th>", f);
	if (v->any_limit)
		fputs("<th>of limit</th>", f);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < v->nrow; i++) {
		const struct pcc_verdict_row *r = &v->row[i];
		char ch[32];

		fprintf(f, "<tr class=\"%s\"><td><a href=\"#w%zu\">",
			row_class(r->real), i);
		esc(f, r->c->name);
		fputs("</a></td><td>", f);
		if (r->m) {
			esc(f, r->m->name);
			fputs(r->m->higher ? " ↑" : " ↓", f);
		}
		fputs("</td>", f);
		num_cell(f, &r->base, r->base_text);
		num_cell(f, &r->subj, r->subj_text);
		fprintf(f, "<td class=\"n\">%s</td><td class=\"%s\">%s</td>",
			isnan(r->change) ? "" :
			pcc_fmt_change(r->change, r->m->pct, ch),
			word_class(r->real), r->base.n && r->subj.n ?
			pcc_verdict_word(r->real) : "");
		if (v->any_limit) {
			if (isnan(r->of_limit))
				fputs("<td></td>", f);
			else
				fprintf(f, "<td class=\"n\">%.0f%%</td>",
					100 * r->of_limit);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<p class=\"muted\">Mean of the runs ± %stddev "
	      "(population σ / mean, shown above 2%). change: LKP's %change "
	      "of the means (points for a metric in %); the arrow says which "
	      "way is better. real?: LKP's rule, both sides with at least 3 "
	      "runs, their ranges (less the extremes when there are more than "
	      "3) apart, and the ratio of the means above 1.01.", f);
	if (v->any_limit)
		fputs(" of limit: the headline as a share of the workload's "
		      "limit run (the limit engine, or a direct run marked as "
		      "the device's limit).", f);
	fputs("</p>\n", f);
	for (size_t i = 0; i < db->nnote; i++) {
		if (!db->warn[i])
			continue;
		fputs(nwarn++ ? "" : "<ul>\n", f);
		fputs("<li class=\"warn\">", f);
		esc(f, db->note[i]);
		fputs("</li>\n", f);
	}
	if (nwarn)
		fputs("</ul>\n", f);
}

/* Every set's headline in case k. */
static void sets_table(const struct pcc_db *db, size_t k, FILE *f)
{
	const struct pcc_case *c = &db->kase[k];
	const struct pcc_metric *m = pcc_headline(c);
	const struct pcc_vals *b = m ? &m->per_set[0] : NULL;

	fputs("<table>\n<tr><th>set</th><th>mean</th><th>min</th><th>max</th>"
	      "<th>runs</th><th>change</th><th>real?</th><th>note</th></tr>\n", f);
	for (size_t s = 0; s < db->nset; s++) {
		const struct pcc_vals *x = m ? &m->per_set[s] : NULL;
		struct pcc_stats st = { 0 };
		enum pcc_real real = PCC_REAL_UNKNOWN;
		char v1[32], v2[32], ch[32] = "";

		if (!c->status[s])
			continue;
		if (x && x->n)
			pcc_stats_compute(x->v, x->n, &st);
		if (s && x && x->n && b->n) {
			double mb = pcc_stats_mean(b->v, b->n);

			pcc_fmt_change(pcc_stats_lkp_change(mb, st.mean, m->pct),
				       m->pct, ch);
			if (b->n >= 3 && x->n >= 3)
				real = !pcc_stats_real_change(b->v, b->n, x->v,
							      x->n) ? PCC_REAL_NO :
				       (m->higher ? st.mean > mb : st.mean < mb) ?
				       PCC_REAL_BETTER : PCC_REAL_WORSE;
		}
		fputs("<tr><td>", f);
		esc(f, db->set[s]);
		fputs(s ? "" : " <span class=\"muted\">(base)</span>", f);
		fputs("</td>", f);
		num_cell(f, &st, c->status[s]);
		fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%zu</td><td class=\"n\">%s</td>"
			"<td class=\"%s\">%s</td><td class=\"muted\">",
			st.n ? pcc_fmt_value(st.min, v1) : "",
			st.n ? pcc_fmt_value(st.max, v2) : "", st.n, ch,
			word_class(real), s && st.n && b->n ?
			pcc_verdict_word(real) : "");
		esc(f, c->reason[s]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

struct sym {
	const char *name;
	double sum;
	int runs;
	bool kernel;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	double d = y->sum / y->runs - x->sum / x->runs;

	return d > 0 ? 1 : d < 0 ? -1 : strcmp(x->name, y->name);
}

/* Set s's hottest symbols in case k, from each run's "profile". */
static bool profile_table(const struct pcc_db *db, size_t k, size_t s, FILE *f)
{
	struct sym *sym = NULL;
	size_t n = 0, cap = 0;
	int runs = 0, samples = 0;

	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		size_t j, t;
		json_t *rep, *e;

		if ((size_t)r->kase != k || (size_t)r->set != s)
			continue;
		json_array_foreach(r->reps, j, rep) {
			json_t *p = json_object_get(rep, "profile");

			if (!json_object_get(p, "top"))
				continue;
			runs++;
			samples += (int)json_integer_value(json_object_get(p,
								"samples"));
			json_array_foreach(json_object_get(p, "top"), t, e) {
				const char *name = json_string_value(
					json_object_get(e, "symbol"));
				size_t q;

				if (!name)
					continue;
				for (q = 0; q < n && strcmp(sym[q].name, name); q++)
					;
				if (q == n) {
					if (n == cap) {
						struct sym *ns;

						cap = cap ? 2 * cap : 32;
						ns = realloc(sym, cap * sizeof(*ns));
						if (!ns)
							goto out;
						sym = ns;
					}
					sym[n++] = (struct sym){ .name = name };
				}
				sym[q].sum += json_number_value(json_object_get(e, "pct"));
				sym[q].runs++;
				sym[q].kernel = json_is_true(json_object_get(e, "kernel"));
			}
		}
	}
	if (!n)
		goto out;
	qsort(sym, n, sizeof(*sym), cmp_sym);
	fputs("<table>\n<tr><th colspan=\"3\">", f);
	esc(f, db->set[s]);
	fprintf(f, " <span class=\"muted\">(%d run%s, %d samples)</span></th>"
		"</tr>\n<tr><th>%% of samples</th><th>symbol</th><th></th></tr>\n",
		runs, runs == 1 ? "" : "s", samples);
	for (size_t q = 0; q < n && q < PROFILE_ROWS; q++) {
		fprintf(f, "<tr><td class=\"n\">%.2f</td><td><code>",
			sym[q].sum / sym[q].runs);
		esc(f, sym[q].name);
		fprintf(f, "</code></td><td class=\"muted\">%s", sym[q].kernel ?
			"kernel" : "user");
		if (sym[q].runs < runs)
			fprintf(f, ", %d of %d runs", sym[q].runs, runs);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
out:
	free(sym);
	return n > 0;
}

static void profiles(const struct pcc_db *db, const struct pcc_verdict *v,
		     size_t k, FILE *f)
{
	char *buf = NULL, *rest = NULL;
	size_t len = 0, rlen = 0;
	FILE *m = open_memstream(&buf, &len), *o = open_memstream(&rest, &rlen);
	bool main_any = false, other_any = false;

	if (!m || !o)
		goto out;
	main_any |= profile_table(db, k, v->subj, m);
	if (v->base != v->subj)
		main_any |= profile_table(db, k, v->base, m);
	for (size_t s = 0; s < db->nset; s++)
		if (s != v->subj && s != v->base)
			other_any |= profile_table(db, k, s, o);
	fclose(m);
	fclose(o);
	m = o = NULL;
	fputs("<h3>Where the CPU time went</h3>\n", f);
	if (!main_any && !other_any) {
		fputs("<p class=\"muted\">No profiles: run with <code>pagecache "
		      "bench --profile</code> (perf record -e cpu-clock).</p>\n", f);
		goto out;
	}
	fputs("<p class=\"muted\">perf record -e cpu-clock over the measured "
	      "part of each run: the share of samples in each symbol, mean over "
	      "the runs where it was among the top 20 (LKP's "
	      "perf-profile.self.cycles-pp lines; this VM has no hardware "
	      "counters).</p>\n<div class=\"row\">\n", f);
	fputs(buf, f);
	fputs("</div>\n", f);
	if (other_any) {
		fputs("<details><summary>the other sets' profiles</summary>\n"
		      "<div class=\"row\">\n", f);
		fputs(rest, f);
		fputs("</div>\n</details>\n", f);
	}
out:
	if (m)
		fclose(m);
	if (o)
		fclose(o);
	free(buf);
	free(rest);
}

static void case_section(const struct pcc_db *db, const struct pcc_verdict *v,
			 const char *dir, size_t k, FILE *f)
{
	const struct pcc_case *c = &db->kase[k];
	const char *what = NULL;
	char alt[300];
	bool first = true;

	for (size_t i = 0; i < db->nres && !what; i++)
		if ((size_t)db->res[i]->kase == k)
			what = json_string_value(json_object_get(db->res[i]->root,
								 "what"));
	fprintf(f, "<h2 id=\"w%zu\">", k);
	esc(f, c->name);
	fputs("</h2>\n", f);
	if (what) {
		fputs("<p>", f);
		esc(f, what);
		fputs("</p>\n", f);
	}
	sets_table(db, k, f);
	snprintf(alt, sizeof(alt), "%s: the headline of each repetition", c->name);
	image(f, dir, c->name, "reps", alt);
	snprintf(alt, sizeof(alt), "%s: page counters over time", c->name);
	image(f, dir, c->name, "counters", alt);
	profiles(db, v, k, f);
	fputs("<p class=\"muted\">Result files: ", f);
	for (size_t i = 0; i < db->nres; i++) {
		if ((size_t)db->res[i]->kase != k)
			continue;
		fputs(first ? "" : ", ", f);
		file_link(f, dir, db->res[i]->path, NULL);
		first = false;
	}
	fputs("</p>\n", f);
}

static void machine_section(const struct pcc_db *db, FILE *f)
{
	static const char *const keys[] = { "hostname", "cpu", "cores",
					    "memory", "kernel", "fs", "device" };
	json_t *m = json_object_get(db->res[0]->root, "machine");

	fputs("<h2 id=\"machine\">Machine and config</h2>\n<table>\n", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(m, keys[i]);

		fputs("<tr><th>", f);
		esc(f, keys[i]);
		fputs("</th><td>", f);
		if (json_is_string(x))
			esc(f, json_string_value(x));
		else if (json_is_integer(x) && !strcmp(keys[i], "memory"))
			fprintf(f, "%.1f GiB", (double)json_integer_value(x) /
				(1 << 30));
		else if (json_is_integer(x))
			fprintf(f, "%lld", (long long)json_integer_value(x));
		fputs("</td></tr>\n", f);
	}
	fputs("<tr><th>budget</th><td>", f);
	budgets(db, f);
	fputs("</td></tr>\n<tr><th>commit</th><td>", f);
	distinct(db, "commit", f);
	fputs("</td></tr>\n</table>\n<h3>Each set's config</h3>\n<table>\n"
	      "<tr><th>set</th><th>engine</th><th>config</th></tr>\n", f);
	for (size_t s = 0; s < db->nset; s++) {
		for (size_t i = 0; i < db->nres; i++) {
			const struct pcc_result *r = db->res[i];
			bool seen = false;

			if ((size_t)r->set != s)
				continue;
			for (size_t j = 0; j < i && !seen; j++)
				seen = (size_t)db->res[j]->set == s &&
				       !strcmp(db->res[j]->config ? db->res[j]->config : "",
					       r->config ? r->config : "");
			if (seen)
				continue;
			fputs("<tr><td>", f);
			esc(f, db->set[s]);
			fputs("</td><td>", f);
			esc(f, r->engine);
			fputs("</td><td><code>", f);
			esc(f, r->config);
			fputs("</code></td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
	if (!db->nnote)
		return;
	fputs("<h3>Notes</h3>\n<ul>\n", f);
	for (size_t i = 0; i < db->nnote; i++) {
		fprintf(f, "<li%s>", db->warn[i] ? " class=\"warn\"" : "");
		esc(f, db->note[i]);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

static void files_section(const struct pcc_db *db, const char *dir,
			  bool plots, FILE *f)
{
	fputs("<h2 id=\"files\">Files</h2>\n<p><a href=\"compare.txt\"><code>"
	      "compare.txt</code></a>: the LKP and mmtests tables in full, with "
	      "the counters' deltas and every note.", f);
	if (plots)
		fputs(" <a href=\"plots/report-plots.gp\"><code>plots/report-"
		      "plots.gp</code></a>: the charts' gnuplot script, data "
		      "inline.", f);
	else
		fputs(" No charts: gnuplot was not found (package "
		      "gnuplot-nox).", f);
	fputs("</p>\n<table>\n<tr><th>result files</th>", f);
	for (size_t s = 0; s < db->nset; s++) {
		fputs("<th>", f);
		esc(f, db->set[s]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t k = 0; k < db->ncase; k++) {
		fprintf(f, "<tr><td><a href=\"#w%zu\">", k);
		esc(f, db->kase[k].name);
		fputs("</a></td>", f);
		for (size_t s = 0; s < db->nset; s++) {
			bool first = true;

			fputs("<td>", f);
			for (size_t i = 0; i < db->nres; i++) {
				const struct pcc_result *r = db->res[i];

				if ((size_t)r->kase != k || (size_t)r->set != s)
					continue;
				fputs(first ? "" : " ", f);
				file_link(f, dir, r->path, strcmp(r->status, "ok") ?
					  r->status : "json");
				first = false;
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int pcc_file_create(const char *dir, const char *name, char **path,
		    FILE **f, FILE *err)
{
	int rc;

	if (asprintf(path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	*f = fopen(*path, "w");
	if (!*f) {
		rc = -errno;
		fprintf(err, "compare: %s: %s\n", *path, strerror(-rc));
		free(*path);
		*path = NULL;
		return rc;
	}
	return 0;
}

int pcc_file_close(FILE *f, const char *path, FILE *err)
{
	if (fclose(f) == 0)
		return 0;
	fprintf(err, "compare: %s: write failed\n", path);
	return -EIO;
}

int pcc_report_html(const struct pcc_db *db, const struct pcc_verdict *v,
		    const char *dir, bool plots, FILE *err)
{
	char *path, *overview;
	FILE *f;
	int rc;

	if (!db->nset)
		return -ENOMEM;
	rc = pcc_file_create(dir, "report.html", &path, &f, err);
	if (rc < 0)
		return rc;
	header(db, v, dir, f);
	verdict_table(db, v, f);
	fputs("<h2 id=\"overview\">Overview</h2>\n", f);
	image(f, dir, "overview", "ratio", "the headline ratio per workload");
	overview = plot_path(dir, "overview", "ratio");
	if (overview) {
		fputs("<p class=\"muted\">Each bar goes from 1 to the ratio of "
		      "the means of the workload's headline, ", f);
		esc(f, db->set[v->subj]);
		fputs(" against ", f);
		esc(f, db->set[v->base]);
		fputs(", turned so that above 1 is better whichever way the "
		      "metric points (log scale). The whisker spans the extreme "
		      "runs: the worst run against the best of the base, and the "
		      "other way round. Green: a real improvement, red: a real "
		      "regression, grey: not a real change (or too few runs to "
		      "tell).</p>\n", f);
	} else {
		fputs("<p class=\"muted\">No overview chart (no workload has "
		      "figures on both sides, or no gnuplot).</p>\n", f);
	}
	for (size_t k = 0; k < db->ncase; k++)
		case_section(db, v, dir, k, f);
	machine_section(db, f);
	files_section(db, dir, plots, f);
	fputs("</body>\n</html>\n", f);
	free(overview);
	rc = pcc_file_close(f, path, err);
	free(path);
	return rc;
}
