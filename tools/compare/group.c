/*
 * group.c - which set and which case each result belongs to, and the
 * samples of every metric per case and set.
 *
 * Sets (the columns).  A result's set is its "label" when it has one;
 * otherwise its engine if engines differ among the results, its config if
 * configs differ, "engine+config" if both do.  When that would put runs
 * from different RESULT arguments into the same column of the same case
 * (`compare before/ after/`, both with the same engines), the argument
 * becomes part of the set: "before" (or "before:kernel" when the content
 * also differs).  Sets are ordered by first appearance; set 0 is the base,
 * unless --base names another (which then moves to the front).  A set
 * holding a case's "limit" run (the limit engine, or a direct run its
 * file calls the limit) is that case's limit_set: the verdict's reference.
 *
 * Cases (the rows).  A case is a workload plus the parameters that tell
 * its runs apart: a parameter is part of the case when two runs of the
 * same workload *in the same set* have different values of it (aim7's
 * task, seq-write's nodes).  A parameter that only differs between sets
 * (a different budget in an older run) is a property of the set: the runs
 * still face each other, and a note says so.
 *
 * Metrics.  The "metrics" of the repetitions in order of first appearance
 * (the bench tool writes the headline first), then the "vmstat" deltas as
 * "vmstat.NAME", then the warm-up's length (a repetition's "warmup", when
 * one ran: bench discards it from everything else) as "warmup-seconds".
 * Direction: the headline's, else "directions", else lower-is-better for
 * names containing latency, seconds or time, higher otherwise.  Profile
 * metrics ("perf-profile.self.cycles-pp.SYMBOL", bench --profile) are
 * percentages of samples: changes in points, lower is better, and, like
 * the counters, for the LKP table only; a repetition that was profiled
 * but lacks a symbol counts 0 for it (pad_profiles).
 *
 * Notes say what is mixed or missing; warnings are the notes that put the
 * figures in doubt (a kernel run without its memory limit, an interrupted
 * or failed run, several machines), which the verdict repeats.
 *
 * Single-threaded; everything allocated here is freed by pcc_db_free.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int vnote(struct pcc_db *db, bool warn, const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < db->nnote; i++) {
		if (!strcmp(db->note[i], s)) {	/* say it once */
			db->warn[i] |= warn;
			free(s);
			return 0;
		}
	}
	if (db->nnote == db->notecap) {
		size_t cap = db->notecap ? 2 * db->notecap : 8;
		char **p = realloc(db->note, cap * sizeof(*p));
		bool *w = p ? realloc(db->warn, cap * sizeof(*w)) : NULL;

		if (p)
			db->note = p;
		if (!w) {
			free(s);
			return -ENOMEM;
		}
		db->warn = w;
		db->notecap = cap;
	}
	db->warn[db->nnote] = warn;
	db->note[db->nnote++] = s;
	return 0;
}

int pcc_note(struct pcc_db *db, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vnote(db, false, fmt, ap);
	va_end(ap);
	return rc;
}

int pcc_warn(struct pcc_db *db, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vnote(db, true, fmt, ap);
	va_end(ap);
	return rc;
}

const struct pcc_metric *pcc_headline(const struct pcc_case *c)
{
	for (size_t i = 0; i < c->nmetric; i++)
		if (c->metric[i].headline)
			return &c->metric[i];
	return NULL;
}

static bool streq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* ---- sets ---- */

static char *content_key(const struct pcc_db *db,
			 const struct pcc_result *r)
{
	bool engines = false, configs = false;
	char *s;

	if (r->label)
		return strdup(r->label);
	for (size_t i = 1; i < db->nres; i++) {
		engines |= !streq(db->res[i]->engine, db->res[0]->engine);
		configs |= !streq(db->res[i]->config, db->res[0]->config);
	}
	if (configs && r->config && *r->config) {
		if (!engines)
			return strdup(r->config);
		if (asprintf(&s, "%s+%s", r->engine, r->config) < 0)
			return NULL;
		return s;
	}
	return strdup(r->engine);
}

static void free_sets(struct pcc_db *db)
{
	for (size_t i = 0; i < db->nset; i++)
		free(db->set[i]);
	free(db->set);
	db->set = NULL;
	db->nset = 0;
}

/* Take names[i] as the set of res[i]; names are consumed. */
static int assign_sets(struct pcc_db *db, char **names)
{
	int rc = 0;

	db->set = calloc(db->nres ? db->nres : 1, sizeof(*db->set));
	if (!db->set)
		rc = -ENOMEM;
	for (size_t i = 0; i < db->nres; i++) {
		size_t s;

		if (rc || !names[i]) {
			rc = -ENOMEM;
			free(names[i]);
			continue;
		}
		for (s = 0; s < db->nset; s++)
			if (!strcmp(db->set[s], names[i]))
				break;
		if (s == db->nset)
			db->set[db->nset++] = names[i];
		else
			free(names[i]);
		db->res[i]->set = (int)s;
	}
	return rc;
}

/* ---- cases ---- */

static void free_cases(struct pcc_db *db)
{
	for (size_t i = 0; i < db->ncase; i++) {
		free(db->kase[i].key);
		free(db->kase[i].name);
	}
	free(db->kase);
	db->kase = NULL;
	db->ncase = 0;
}

/* The value of a parameter as JSON text, "-" when absent. */
static char *param_json(const struct pcc_result *r, const char *k)
{
	json_t *v = json_object_get(r->params, k);

	return v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("-");
}

static char *param_text(const struct pcc_result *r, const char *k)
{
	static const char suffix[] = "KMGT";
	json_t *v = json_object_get(r->params, k);
	long long b = json_integer_value(v);
	char *s;
	int i = -1;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (strcmp(k, "budget") || !json_is_integer(v) || b <= 0)
		return param_json(r, k);
	while (i < 3 && (b & 1023) == 0) {	/* budget=256M, as --budget */
		b >>= 10;
		i++;
	}
	if (asprintf(&s, i < 0 ? "%lld" : "%lld%c", b, i < 0 ? 0 : suffix[i]) < 0)
		return NULL;
	return s;
}

static bool param_differs(const struct pcc_result *a,
			  const struct pcc_result *b, const char *k)
{
	json_t *x = json_object_get(a->params, k);
	json_t *y = json_object_get(b->params, k);

	return !(x == y || (x && y && json_equal(x, y)));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted union of the parameter names of the runs of one workload. */
static const char **param_names(const struct pcc_db *db, const char *w,
				size_t *n)
{
	const char **k = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < db->nres; i++) {
		const char *name;
		json_t *v;

		if (strcmp(db->res[i]->workload, w))
			continue;
		json_object_foreach(db->res[i]->params, name, v) {
			size_t j;

			for (j = 0; j < *n && strcmp(k[j], name); j++)
				;
			if (j < *n)
				continue;
			if (*n == cap) {
				const char **p;

				cap = cap ? 2 * cap : 16;
				p = realloc(k, cap * sizeof(*k));
				if (!p) {
					free(k);
					*n = 0;
					return NULL;
				}
				k = p;
			}
			k[(*n)++] = name;
		}
	}
	if (*n)
		qsort(k, *n, sizeof(*k), cmp_str);
	return k;
}

static int case_of(struct pcc_db *db, char *key, char *name, const char *w)
{
	for (size_t i = 0; i < db->ncase; i++) {
		if (!strcmp(db->kase[i].key, key)) {
			free(key);
			free(name);
			return (int)i;
		}
	}
	db->kase[db->ncase] = (struct pcc_case){
		.key = key, .name = name, .workload = w,
	};
	return (int)db->ncase++;
}

/* Cases of workload w; notes the parameters that differ only by set. */
static int cases_of_workload(struct pcc_db *db, const char *w)
{
	size_t nk;
	const char **k = param_names(db, w, &nk);
	int rc = 0;

	for (size_t p = 0; p < nk; p++) {
		bool in_set = false, across = false;

		for (size_t i = 0; i < db->nres; i++) {
			const struct pcc_result *a = db->res[i];

			if (strcmp(a->workload, w))
				continue;
			for (size_t j = i + 1; j < db->nres; j++) {
				const struct pcc_result *b = db->res[j];

				if (strcmp(b->workload, w) ||
				    !param_differs(a, b, k[p]))
					continue;
				if (a->set == b->set)
					in_set = true;
				else
					across = true;
			}
		}
		if (!in_set) {
			if (across)
				pcc_warn(db, "%s: parameter \"%s\" differs "
					 "between sets; the runs are set "
					 "against each other anyway", w, k[p]);
			k[p] = NULL;	/* not a case parameter */
		}
	}
	for (size_t i = 0; i < db->nres && !rc; i++) {
		struct pcc_result *r = db->res[i];
		char *key = NULL, *name = NULL;
		size_t klen = 0, nlen = 0;
		FILE *fk, *fn;
		bool first = true;

		if (strcmp(r->workload, w))
			continue;
		fk = open_memstream(&key, &klen);
		fn = open_memstream(&name, &nlen);
		if (!fk || !fn) {
			if (fk)
				fclose(fk);
			if (fn)
				fclose(fn);
			free(key);
			free(name);
			free(k);
			return -ENOMEM;
		}
		fprintf(fk, "%s\n", w);
		fputs(w, fn);
		for (size_t p = 0; p < nk; p++) {
			char *js, *tx;

			if (!k[p])
				continue;
			js = param_json(r, k[p]);
			tx = param_text(r, k[p]);
			fprintf(fk, "%s=%s\n", k[p], js ? js : "?");
			fprintf(fn, "%s%s=%s", first ? "/" : ",", k[p],
				tx ? tx : "?");
			first = false;
			free(js);
			free(tx);
		}
		fclose(fk);
		fclose(fn);
		r->kase = case_of(db, key, name, w);
	}
	free(k);
	return rc;
}

static int build_cases(struct pcc_db *db)
{
	int rc = 0;

	db->kase = calloc(db->nres ? db->nres : 1, sizeof(*db->kase));
	if (!db->kase)
		return -ENOMEM;
	for (size_t i = 0; i < db->nres && !rc; i++) {
		bool done = false;

		for (size_t j = 0; j < i; j++)
			done |= !strcmp(db->res[j]->workload, db->res[i]->workload);
		if (!done)
			rc = cases_of_workload(db, db->res[i]->workload);
	}
	return rc;
}

/* Runs from different arguments landing in the same set and case? */
static bool args_collide(const struct pcc_db *db)
{
	for (size_t i = 0; i < db->nres; i++)
		for (size_t j = i + 1; j < db->nres; j++)
			if (db->res[i]->arg != db->res[j]->arg &&
			    db->res[i]->set == db->res[j]->set &&
			    db->res[i]->kase == db->res[j]->kase)
				return true;
	return false;
}

static char *arg_name(const char *path)
{
	char *s = strdup(path);
	size_t n = s ? strlen(s) : 0;

	while (n > 1 && s[n - 1] == '/')
		s[--n] = 0;
	return s;
}

/* ---- metrics ---- */

static bool lower_by_name(const char *name)
{
	return strstr(name, "latency") || strstr(name, "seconds") ||
	       strstr(name, "time");
}

static struct pcc_metric *metric_get(struct pcc_db *db,
				     struct pcc_case *c,
				     const struct pcc_result *r,
				     const char *name, bool vmstat)
{
	struct pcc_metric *m;
	json_t *dir;

	for (size_t i = 0; i < c->nmetric; i++)
		if (!strcmp(c->metric[i].name, name))
			return &c->metric[i];
	if (c->nmetric == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;

		m = realloc(c->metric, cap * sizeof(*m));
		if (!m)
			return NULL;
		c->metric = m;
		c->cap = cap;
	}
	m = &c->metric[c->nmetric];
	*m = (struct pcc_metric){ .vmstat = vmstat };
	m->name = strdup(name);
	m->per_set = calloc(db->nset, sizeof(*m->per_set));
	if (!m->name || !m->per_set) {
		free(m->name);
		free(m->per_set);
		return NULL;
	}
	m->headline = !vmstat && r->headline && !strcmp(name, r->headline);
	dir = vmstat ? NULL : json_object_get(r->directions, name);
	if (m->headline)
		m->higher = r->higher;
	else if (json_is_boolean(dir))
		m->higher = json_is_true(dir);
	else
		m->higher = !lower_by_name(name);
	m->pct = name[0] && name[strlen(name) - 1] == '%';
	if (!vmstat && !strncmp(name, PCC_PROFILE_PREFIX,
				strlen(PCC_PROFILE_PREFIX))) {
		m->profile = m->pct = true;	/* LKP: changes in points */
		m->higher = false;
	}
	c->nmetric++;
	return m;
}

static int vals_add(struct pcc_vals *v, double x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 8;
		double *p = realloc(v->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

static int add_object(struct pcc_db *db, struct pcc_case *c,
		      const struct pcc_result *r, json_t *obj, bool vmstat)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val) {
		struct pcc_metric *m;
		char *name = NULL;

		if (!json_is_number(val))
			continue;	/* reported by load.c */
		if (vmstat && asprintf(&name, "vmstat.%s", key) < 0)
			return -ENOMEM;
		m = metric_get(db, c, r, vmstat ? name : key, vmstat);
		free(name);
		if (!m || vals_add(&m->per_set[r->set], json_number_value(val)))
			return -ENOMEM;
	}
	return 0;
}

/* A repetition's warm-up, when one ran: its seconds as "warmup-seconds". */
static int add_warmup(struct pcc_db *db, struct pcc_case *c,
		      const struct pcc_result *r, json_t *rep)
{
	json_t *w = json_object_get(rep, "warmup");
	json_t *secs = json_object_get(w, "seconds");
	struct pcc_metric *m;

	if (!json_is_number(secs) || json_object_get(w, "skipped"))
		return 0;
	m = metric_get(db, c, r, "warmup-seconds", false);
	return !m || vals_add(&m->per_set[r->set], json_number_value(secs)) ?
	       -ENOMEM : 0;
}

/* Did this repetition record a profile (bench --profile)? */
static bool profiled(json_t *rep)
{
	return json_array_size(json_object_get(json_object_get(rep, "profile"),
					       "top")) > 0;
}

/*
 * A symbol missing from a profiled repetition's top list had (nearly) no
 * samples: it counts as 0 there, as LKP counts a function perf never
 * sampled, so one engine's kernel functions face the other's zeros.
 */
static int pad_profiles(struct pcc_db *db)
{
	size_t *runs = calloc(db->nset ? db->nset : 1, sizeof(*runs));

	if (!runs)
		return -ENOMEM;
	for (size_t k = 0; k < db->ncase; k++) {
		struct pcc_case *c = &db->kase[k];

		memset(runs, 0, db->nset * sizeof(*runs));
		for (size_t i = 0; i < db->nres; i++) {
			const struct pcc_result *r = db->res[i];
			size_t j;
			json_t *rep;

			if ((size_t)r->kase != k || strcmp(r->status, "ok"))
				continue;
			json_array_foreach(r->reps, j, rep)
				runs[r->set] += profiled(rep);
		}
		for (size_t m = 0; m < c->nmetric; m++) {
			for (size_t s = 0; c->metric[m].profile && s < db->nset; s++) {
				struct pcc_vals *v = &c->metric[m].per_set[s];

				while (v->n < runs[s]) {
					if (vals_add(v, 0)) {
						free(runs);
						return -ENOMEM;
					}
				}
			}
		}
	}
	free(runs);
	return 0;
}

static int fill(struct pcc_db *db)
{
	for (size_t i = 0; i < db->ncase; i++) {
		struct pcc_case *c = &db->kase[i];

		c->limit_set = -1;
		c->status = calloc(db->nset, sizeof(*c->status));
		c->reason = calloc(db->nset, sizeof(*c->reason));
		if (!c->status || !c->reason)
			return -ENOMEM;
	}
	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		struct pcc_case *c = &db->kase[r->kase];
		size_t j;
		json_t *rep;
		bool ok = !strcmp(r->status, "ok");

		if (!c->status[r->set] || ok) {
			c->status[r->set] = r->status;
			c->reason[r->set] = r->reason;
		}
		if (!ok)
			continue;
		/* the limit engine outranks a direct run called the limit */
		if (r->limit && (c->limit_set < 0 || !strcmp(r->engine, "limit")))
			c->limit_set = r->set;
		json_array_foreach(r->reps, j, rep) {
			if (add_object(db, c, r, json_object_get(rep, "metrics"),
				       false) ||
			    add_object(db, c, r, json_object_get(rep, "vmstat"),
				       true) ||
			    add_warmup(db, c, r, rep))
				return -ENOMEM;
		}
	}
	return pad_profiles(db);
}

/* ---- notes ---- */

static const char *opt_or(const char *s)
{
	return s && *s ? s : "?";
}

static void machine_line(struct pcc_db *db, const struct pcc_result *r)
{
	json_t *m = json_object_get(r->root, "machine");
	json_t *mem = json_object_get(m, "memory");

	pcc_note(db, "machine %s: %s, %lld cores, %.1f GiB, kernel %s, "
		 "%s on %s (first seen in %s)",
		 opt_or(json_string_value(json_object_get(m, "hostname"))),
		 opt_or(json_string_value(json_object_get(m, "cpu"))),
		 (long long)json_integer_value(json_object_get(m, "cores")),
		 json_number_value(mem) / (1024.0 * 1024 * 1024),
		 opt_or(json_string_value(json_object_get(m, "kernel"))),
		 opt_or(json_string_value(json_object_get(m, "fs"))),
		 opt_or(json_string_value(json_object_get(m, "device"))),
		 r->path);
}

static void notes(struct pcc_db *db)
{
	size_t nw = 0, nm = 0;
	char *ws = NULL;
	size_t wlen = 0;
	FILE *f = open_memstream(&ws, &wlen);

	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		bool wseen = false, mseen = !r->machine;

		for (size_t j = 0; j < i; j++) {
			wseen |= !strcmp(db->res[j]->workload, r->workload);
			mseen |= db->res[j]->machine &&
				 !strcmp(db->res[j]->machine, r->machine);
		}
		if (!wseen && f)
			fprintf(f, "%s%s", nw++ ? ", " : "", r->workload);
		if (!mseen)
			nm++;
	}
	if (f)
		fclose(f);
	if (nw > 1)
		pcc_note(db, "the results mix %zu workloads (%s); each case "
			 "is compared only with itself", nw, ws ? ws : "");
	free(ws);
	if (nm > 1) {
		pcc_warn(db, "the results come from %zu different machines:",
			 nm);
		for (size_t i = 0; i < db->nres; i++) {
			bool seen = !db->res[i]->machine;

			for (size_t j = 0; j < i && !seen; j++)
				seen = db->res[j]->machine &&
				       !strcmp(db->res[j]->machine,
					       db->res[i]->machine);
			if (!seen)
				machine_line(db, db->res[i]);
		}
	}
	if (db->nset == 1)
		pcc_note(db, "one set only (%s): nothing to compare against, "
			 "every line is shown", db->set[0]);
	for (size_t i = 0; i < db->nres; i++) {
		const struct pcc_result *r = db->res[i];
		const char *set = db->set[r->set];
		const char *cname = db->kase[r->kase].name;
		size_t same = 0;

		if (!strcmp(r->status, "error"))
			pcc_warn(db, "%s on %s: %s%s%s", cname, set,
				 r->status, r->reason && *r->reason ? ": " : "",
				 r->reason ? r->reason : "");
		else if (strcmp(r->status, "ok"))
			pcc_note(db, "%s on %s: %s%s%s", cname, set,
				 r->status, r->reason && *r->reason ? ": " : "",
				 r->reason ? r->reason : "");
		if (r->partial)
			pcc_warn(db, "%s: a partial (interrupted) run; its "
				 "repetitions are used", r->path);
		if (r->unconstrained)
			pcc_warn(db, "%s: %s ran without its memory limit "
				 "(no cgroup)", r->path, r->engine);
		for (size_t j = 0; j < db->nres; j++)
			same += db->res[j]->set == r->set &&
				db->res[j]->kase == r->kase;
		if (same > 1)
			pcc_note(db, "%s on %s: %zu result files merged",
				 cname, set, same);
	}
}

/* Make the set called @base set 0, the others keeping their order. */
static void rebase(struct pcc_db *db, const char *base)
{
	size_t b;
	char *name;

	for (b = 0; b < db->nset && strcmp(db->set[b], base); b++)
		;
	if (b == db->nset) {
		pcc_note(db, "no set is called \"%s\": the base is %s", base,
			 db->set[0]);
		return;
	}
	name = db->set[b];
	memmove(&db->set[1], &db->set[0], b * sizeof(*db->set));
	db->set[0] = name;
	for (size_t i = 0; i < db->nres; i++) {
		struct pcc_result *r = db->res[i];

		r->set = (size_t)r->set == b ? 0 :
			 (size_t)r->set < b ? r->set + 1 : r->set;
	}
}

int pcc_group(struct pcc_db *db, char *const *paths, const char *base)
{
	char **names = calloc(db->nres ? db->nres : 1, sizeof(*names));
	bool same_content = true;
	int rc;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < db->nres; i++)
		names[i] = content_key(db, db->res[i]);
	for (size_t i = 1; i < db->nres; i++)
		same_content &= names[i] && names[0] &&
				!strcmp(names[i], names[0]);
	rc = assign_sets(db, names);
	if (!rc)
		rc = build_cases(db);
	if (!rc && args_collide(db)) {
		free_cases(db);
		free_sets(db);
		for (size_t i = 0; i < db->nres; i++) {
			const struct pcc_result *r = db->res[i];
			char *arg = arg_name(paths[r->arg]);
			char *content = content_key(db, r);

			names[i] = NULL;
			if (arg && content && same_content)
				names[i] = arg;
			else if (arg && content &&
				 asprintf(&names[i], "%s:%s", arg, content) < 0)
				names[i] = NULL;
			if (names[i] != arg)
				free(arg);
			free(content);
		}
		rc = assign_sets(db, names);
		if (!rc)
			rc = build_cases(db);
	}
	free(names);
	if (!rc && base && db->nset)
		rebase(db, base);
	if (!rc)
		rc = fill(db);
	if (!rc)
		notes(db);
	return rc;
}
