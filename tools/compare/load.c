/*
 * load.c - from RESULT arguments to validated result files in db->res.
 *
 * An argument is a file (read whatever its name) or a folder, searched
 * recursively for *.json in name order (scandir + alphasort), so "the
 * first set found" is the same on every run.  A file reached twice (named
 * and inside a named folder, or through a link) is read once, at its
 * first place: `compare DIR/x-kernel.json DIR` makes the kernel the base.
 *
 * Each file is checked once here, so the rest of the command can trust
 * the types: "format" must be "pagecache-result-1", "workload" and
 * "engine" strings, "reps" an array of objects whose "metrics", "vmstat"
 * and "samples" are objects; a run with status "ok" needs a "headline".
 * Anything else (not JSON, truncated, another program's JSON, wrong
 * types) is reported on err with the path and skipped; never fatal.
 * Non-numeric metric values are reported and ignored one by one.
 *
 * Single-threaded.  A pcc_result owns its json_t root; its strings
 * point into it and live until pcc_db_free.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"

#define MAX_DEPTH 32

/* realpaths already read */
struct seen {
	char **path;
	size_t n, cap;
};

static bool seen_add(struct seen *s, const char *path)
{
	char *rp = realpath(path, NULL);

	if (!rp)
		return true;	/* let the open report it */
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->path[i], rp)) {
			free(rp);
			return false;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **p = realloc(s->path, cap * sizeof(*p));

		if (!p) {
			free(rp);
			return true;
		}
		s->path = p;
		s->cap = cap;
	}
	s->path[s->n++] = rp;
	return true;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
}

static void result_free(struct pcc_result *r)
{
	if (!r)
		return;
	json_decref(r->root);
	free(r->path);
	free(r->machine);
	free(r);
}

static const char *opt_string(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Check the shape of one repetition; complain about what is ignored. */
static const char *check_rep(json_t *rep, size_t i, const char *path,
			     const char *headline, FILE *err)
{
	static const char *const objs[] = { "metrics", "vmstat", "samples" };
	const char *key;
	json_t *val;

	if (!json_is_object(rep))
		return "a repetition is not an object";
	for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++) {
		json_t *o = json_object_get(rep, objs[k]);

		if (o && !json_is_object(o))
			return "a repetition's metrics, vmstat or samples is not an object";
	}
	json_object_foreach(json_object_get(rep, "metrics"), key, val) {
		if (!json_is_number(val) && !json_is_null(val))
			fprintf(err, "compare: %s: repetition %zu: metric \"%s\" "
				"is not a number; ignored\n", path, i + 1, key);
	}
	if (headline && !json_is_number(json_object_get(
				json_object_get(rep, "metrics"), headline)))
		fprintf(err, "compare: %s: repetition %zu has no number for "
			"the headline metric \"%s\"\n", path, i + 1, headline);
	return NULL;
}

/* Validate root; NULL when good, else why it is skipped. */
static const char *check(struct pcc_result *r, FILE *err)
{
	json_t *root = r->root, *h, *v;
	const char *fmt;
	size_t i;

	if (!json_is_object(root))
		return "not a pagecache result (not a JSON object)";
	fmt = opt_string(root, "format");
	if (!fmt)
		return "not a pagecache result (no \"format\": \"" PCC_FORMAT "\")";
	if (strcmp(fmt, PCC_FORMAT))
		return "unknown result format (want \"" PCC_FORMAT "\")";
	r->workload = opt_string(root, "workload");
	r->engine = opt_string(root, "engine");
	if (!r->workload || !*r->workload || !r->engine || !*r->engine)
		return "\"workload\" or \"engine\" missing or not a string";
	r->label = opt_string(root, "label");
	if (r->label && !*r->label)
		r->label = NULL;
	r->config = opt_string(root, "config");
	r->status = opt_string(root, "status");
	if (!r->status)
		r->status = "ok";
	if (strcmp(r->status, "ok") && strcmp(r->status, "n/a") &&
	    strcmp(r->status, "error"))
		return "\"status\" is not ok, n/a or error";
	r->reason = opt_string(root, "reason");
	r->partial = json_is_true(json_object_get(root, "partial"));
	r->unconstrained = json_is_false(json_object_get(root, "constrained"));
	r->limit = !strcmp(r->engine, "limit") ||
		   json_is_true(json_object_get(root, "limit"));

	r->params = json_object_get(root, "params");
	if (r->params && !json_is_object(r->params))
		return "\"params\" is not an object";
	r->directions = json_object_get(root, "directions");
	if (r->directions && !json_is_object(r->directions))
		r->directions = NULL;

	h = json_object_get(root, "headline");
	r->headline = opt_string(h, "metric");
	r->higher = !json_is_false(json_object_get(h, "higher_is_better"));
	if (!strcmp(r->status, "ok") && !r->headline)
		return "no \"headline\": {\"metric\": ...}";

	r->reps = json_object_get(root, "reps");
	if (!r->reps && strcmp(r->status, "ok"))
		return NULL;	/* n/a or error: nothing measured */
	if (!json_is_array(r->reps))
		return "\"reps\" missing or not an array";
	json_array_foreach(r->reps, i, v) {
		const char *why = check_rep(v, i, r->path, r->headline,
						 err);

		if (why)
			return why;
	}
	if ((v = json_object_get(root, "machine")) && json_is_object(v))
		r->machine = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);
	return NULL;
}

static int db_add(struct pcc_db *db, struct pcc_result *r)
{
	if (db->nres == db->rescap) {
		size_t cap = db->rescap ? 2 * db->rescap : 16;
		struct pcc_result **p = realloc(db->res, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		db->res = p;
		db->rescap = cap;
	}
	db->res[db->nres++] = r;
	return 0;
}

static int load_file(struct pcc_db *db, const char *path, int arg,
		     FILE *err)
{
	struct pcc_result *r = calloc(1, sizeof(*r));
	json_error_t je;
	const char *why;

	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	r->arg = arg;
	r->set = r->kase = -1;
	r->root = json_load_file(path, 0, &je);
	if (!r->root) {
		if (je.line > 0)
			fprintf(err, "compare: %s: not valid JSON (line %d, "
				"column %d: %s); skipped\n", path, je.line,
				je.column, je.text);
		else
			fprintf(err, "compare: %s: %s; skipped\n", path, je.text);
		result_free(r);
		return 0;
	}
	why = check(r, err);
	if (why) {
		fprintf(err, "compare: %s: %s; skipped\n", path, why);
		result_free(r);
		return 0;
	}
	if (db_add(db, r) < 0) {
		result_free(r);
		return -ENOMEM;
	}
	return 0;
}

static bool is_json_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".json");
}

static int load_path(struct pcc_db *db, struct seen *seen,
		     const char *path, int arg, bool named, int depth,
		     FILE *err)
{
	struct dirent **ent;
	struct stat st;
	int n, rc = 0;

	if (stat(path, &st) < 0) {
		int e = errno;

		fprintf(err, "compare: %s: %s%s\n", path, strerror(e),
			named ? "" : "; skipped");
		return named ? -e : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (!named && (!S_ISREG(st.st_mode) || !is_json_name(path)))
			return 0;
		if (!seen_add(seen, path))
			return 0;
		return load_file(db, path, arg, err);
	}
	if (depth >= MAX_DEPTH) {
		fprintf(err, "compare: %s: folders nested too deep; skipped\n",
			path);
		return 0;
	}
	n = scandir(path, &ent, NULL, alphasort);
	if (n < 0) {
		fprintf(err, "compare: %s: %s; skipped\n", path, strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ent[i]->d_name;
		size_t len = strlen(path) + strlen(name) + 2;
		char *sub;

		if (rc < 0 || name[0] == '.' || !(sub = malloc(len))) {
			free(ent[i]);
			continue;
		}
		snprintf(sub, len, "%s%s%s", path,
			 path[strlen(path) - 1] == '/' ? "" : "/", name);
		rc = load_path(db, seen, sub, arg, false, depth + 1, err);
		free(sub);
		free(ent[i]);
	}
	free(ent);
	return rc;
}

int pcc_load(struct pcc_db *db, char *const *paths, int npaths,
	     FILE *err)
{
	struct seen seen = { 0 };
	int rc = 0;

	for (int i = 0; i < npaths && rc == 0; i++)
		rc = load_path(db, &seen, paths[i], i, true, 0, err);
	seen_free(&seen);
	return rc;
}

void pcc_db_free(struct pcc_db *db)
{
	for (size_t i = 0; i < db->nres; i++)
		result_free(db->res[i]);
	free(db->res);
	for (size_t i = 0; i < db->nset; i++)
		free(db->set[i]);
	free(db->set);
	for (size_t i = 0; i < db->ncase; i++) {
		struct pcc_case *c = &db->kase[i];

		for (size_t m = 0; m < c->nmetric; m++) {
			for (size_t s = 0; s < db->nset; s++)
				free(c->metric[m].per_set[s].v);
			free(c->metric[m].per_set);
			free(c->metric[m].name);
		}
		free(c->metric);
		free(c->status);
		free(c->reason);
		free(c->key);
		free(c->name);
	}
	free(db->kase);
	for (size_t i = 0; i < db->nnote; i++)
		free(db->note[i]);
	free(db->note);
	free(db->warn);
	memset(db, 0, sizeof(*db));
}
