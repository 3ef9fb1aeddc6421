/*
 * tools/bench/result.c - result files (bench/results/README.md) and the
 * summary table printed at the end of a run.
 *
 * A pcb_result is one result file being assembled by the parent: the
 * fixed fields are set at init in the documented order (with the load
 * average as the run starts); each repetition's JSON from its child is
 * folded in as it arrives (status, partial, directions, the rep itself);
 * pcb_result_write adds the load average at the end and writes the whole
 * file (to a temporary name, then renamed, so a reader never sees half a
 * file).  Parent only, one thread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef PC_COMMIT
#define PC_COMMIT "unknown"	/* the Makefile passes build/V/commit.h */
#endif

/* The 1-minute load average; NaN when /proc/loadavg cannot be read. */
static double loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	double v = NAN;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = NAN;
		fclose(f);
	}
	return v;
}

void pcb_result_init(struct pcb_result *res, const struct pcb_workload *wl,
		     const char *engine, const char *label, const char *config,
		     const struct pcb_params *par, json_t *machine,
		     bool constrained)
{
	char started[32];
	time_t now = time(NULL);
	struct tm tm;

	memset(res, 0, sizeof(*res));
	res->wl = wl;
	pcb_fmt(res->label, sizeof(res->label), "%s", label);
	gmtime_r(&now, &tm);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	res->root = json_object();
	res->reps = json_array();
	json_object_set_new(res->root, "format", json_string("pagecache-result-1"));
	json_object_set_new(res->root, "workload", json_string(wl->name));
	json_object_set_new(res->root, "what", json_string(wl->what));
	json_object_set_new(res->root, "engine", json_string(engine));
	json_object_set_new(res->root, "label", json_string(label));
	json_object_set_new(res->root, "config", json_string(config));
	json_object_set_new(res->root, "params", pcb_params_json(par));
	json_object_set(res->root, "machine", machine);
	json_object_set_new(res->root, "constrained", json_boolean(constrained));
	json_object_set_new(res->root, "partial", json_false());
	json_object_set_new(res->root, "status", json_string("ok"));
	json_object_set_new(res->root, "reason", json_string(""));
	json_object_set_new(res->root, "headline",
			    json_pack("{s:s, s:b}", "metric", wl->metric,
				      "higher_is_better", !wl->lower));
	json_object_set_new(res->root, "directions", json_object());
	json_object_set(res->root, "reps", res->reps);
	json_object_set_new(res->root, "started", json_string(started));
	json_object_set_new(res->root, "commit", json_string(PC_COMMIT));
	if (!isnan(loadavg()))
		json_object_set_new(res->root, "load", json_pack("{s:f}", "start",
								  loadavg()));
	if (!strcmp(engine, "limit") ||
	    (!strcmp(engine, "direct") && wl->direct_is_limit))
		json_object_set_new(res->root, "limit", json_true());
}

void pcb_result_set_status(struct pcb_result *res, const char *status,
			   const char *reason)
{
	const char *cur = json_string_value(json_object_get(res->root, "status"));

	/* n/a outranks error outranks ok: the worst news is kept */
	if (strcmp(cur, "n/a") == 0 ||
	    (strcmp(cur, "error") == 0 && strcmp(status, "ok") == 0))
		return;
	json_object_set_new(res->root, "status", json_string(status));
	if (reason && *reason) {
		pcb_fmt(res->reason, sizeof(res->reason), "%s", reason);
		json_object_set_new(res->root, "reason", json_string(reason));
	}
}

void pcb_result_add_rep(struct pcb_result *res, json_t *rep)
{
	const char *status = json_string_value(json_object_get(rep, "status"));
	const char *reason = json_string_value(json_object_get(rep, "reason"));
	json_t *metrics = json_object_get(rep, "metrics");
	json_t *dirs = json_object_get(rep, "directions"), *v, *keep;
	const char *k;

	if (!status)
		status = "error";
	if (json_is_true(json_object_get(rep, "partial"))) {
		res->partial = true;
		json_object_set_new(res->root, "partial", json_true());
	}
	if (strcmp(status, "ok") != 0) {
		if (strcmp(status, "error") == 0)
			res->any_error = true;
		pcb_result_set_status(res, status, reason);
		json_decref(rep);
		return;
	}
	if (reason && *reason && !strstr(res->reason, reason)) {
		/* "stopped at its time limit of 15 s; ... of 4 s" */
		size_t len = strlen(res->reason);

		pcb_fmt(res->reason + len, sizeof(res->reason) - len, "%s%s",
			len ? "; " : "", reason);
		json_object_set_new(res->root, "reason", json_string(res->reason));
	}
	/* an interrupted repetition without its headline has nothing to say */
	if (!json_object_get(metrics, res->wl->metric)) {
		json_decref(rep);
		return;
	}
	json_object_foreach(dirs, k, v)
		if (strcmp(k, res->wl->metric) != 0)
			json_object_set(json_object_get(res->root, "directions"),
					k, v);
	keep = json_object();
	if (json_object_get(rep, "started_at"))
		json_object_set(keep, "started_at", json_object_get(rep, "started_at"));
	json_object_set(keep, "metrics", metrics);
	json_object_set(keep, "vmstat", json_object_get(rep, "vmstat"));
	json_object_set(keep, "samples", json_object_get(rep, "samples"));
	if (json_object_get(rep, "phases"))
		json_object_set(keep, "phases", json_object_get(rep, "phases"));
	if (json_object_get(rep, "warmup"))
		json_object_set(keep, "warmup", json_object_get(rep, "warmup"));
	if (json_object_get(rep, "trace"))
		json_object_set(keep, "trace", json_object_get(rep, "trace"));
	if (json_object_get(rep, "profile"))
		json_object_set(keep, "profile", json_object_get(rep, "profile"));
	json_array_append_new(res->reps, keep);
	json_decref(rep);
}

/* <workload>-<label>[-<budget>].json, with nothing a shell or a folder
 * would mind */
static void file_name(const struct pcb_result *res, char *buf, size_t len)
{
	pcb_fmt(buf, len, "%s-%s%s%s", res->wl->name, res->label,
		res->budget[0] ? "-" : "", res->budget);
	for (char *p = buf; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("-_.+=,", *p))
			*p = '_';
	strncat(buf, ".json", len - strlen(buf) - 1);
}

int pcb_result_write(struct pcb_result *res, const char *dir)
{
	char name[512], tmp[1100];

	file_name(res, name, sizeof(name));
	pcb_fmt(res->path, sizeof(res->path), "%s/%s", dir, name);
	if (json_object_get(res->root, "load") && !isnan(loadavg()))
		json_object_set_new(json_object_get(res->root, "load"), "end",
				    json_real(loadavg()));
	pcb_fmt(tmp, sizeof(tmp), "%s.tmp", res->path);
	if (json_dump_file(res->root, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
			   JSON_REAL_PRECISION(10)) < 0) {
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, res->path) < 0) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

void pcb_result_free(struct pcb_result *res)
{
	json_decref(res->reps);
	json_decref(res->root);
	res->reps = res->root = NULL;
}

void pcb_result_summary(const struct pcb_result *res, FILE *out)
{
	const char *status = json_string_value(json_object_get(res->root, "status"));
	size_t n = json_array_size(res->reps);
	double sum = 0, sq = 0, mean, sd;
	char fig[64] = "", label[sizeof(res->label) + sizeof(res->budget) + 2];

	for (size_t i = 0; i < n; i++) {
		json_t *m = json_object_get(json_array_get(res->reps, i), "metrics");
		double v = json_number_value(json_object_get(m, res->wl->metric));

		sum += v;
		sq += v * v;
	}
	if (n) {
		mean = sum / (double)n;
		sd = sqrt(fmax(0, sq / (double)n - mean * mean));
		pcb_fmt(fig, sizeof(fig), "%12.*f %s%5.1f%%",
			fabs(mean) >= 1000 ? 0 : fabs(mean) >= 10 ? 1 : 3, mean,
			"±", mean != 0 ? 100 * sd / fabs(mean) : 0);
	}
	pcb_fmt(label, sizeof(label), "%s%s%s", res->label,
		res->budget[0] ? " @" : "", res->budget);
	fprintf(out, "%-18s %-22s %-16s %-4s %-23s %zu rep%s%s%s%s\n",
		res->wl->name, label, res->wl->metric,
		res->wl->lower ? "(lo)" : "(hi)", n ? fig : "",
		n, n == 1 ? "" : "s",
		strcmp(status, "ok") ? "  " : "", strcmp(status, "ok") ? status : "",
		res->partial ? "  partial" : "");
	if (res->reason[0])
		fprintf(out, "%-18s   %s\n", "", res->reason);
}
