/*
 * tools/bench/rep.c - one repetition, inside its child process.
 *
 *   prepare      the workload's files, made without the engine (util.c;
 *                a program workload's program found, its files made once:
 *                program.c)
 *   drop         the kernel's cache of them: fdatasync + FADV_DONTNEED
 *   start        the engine (pagecache: a fresh pc_cache, budget touched)
 *   counters     snapshot ─┐
 *   sampler      adaptive ─┤  the workload's run: first its warm-up (a
 *   run          ──────────┘  workload with .warmup, on an engine with a
 *                             cache), then pcb_steady(): the warm-up's
 *                             deltas into "warmup", a new snapshot, the
 *                             clock and deadline restarted, and the
 *                             measured part (--profile: perf's events on
 *                             around it only)
 *   counters     snapshot: deltas since the steady state (or the start),
 *                rusage, derived figures (a workload may also snapshot
 *                its phases: pcb_counters, pcb_phase_end)
 *   stop         the engine (pagecache: pc_cache_destroy writes back)
 *
 * and the result, one JSON object (pcb_rep_run's comment in bench.h).
 *
 * The sampler reads the engine's page counters (pagecache: its vmstat;
 * the kernel engines: the memory cgroup's memory.stat) on one time axis,
 * seconds since the start of the measured part (the warm-up's samples
 * negative: the axis is shifted when the sampler stops), so every
 * engine's timeline lines up with every other's.  Its interval adapts to a run
 * whose length nobody knows in advance: it starts at SAMPLE_MIN_NS and,
 * whenever SAMPLE_CAP samples are held, every other one is dropped and the
 * interval doubles.  The samples are due on a grid (0, 10, 20 ms ...), not
 * one interval after the last was taken: a sampler that wakes late, as it
 * always does by a little, takes the next one on time, so the lateness
 * does not add up.  Two are never closer than SAMPLE_GAP_NS (half the
 * first interval); a sampler later than that loses its slot.  So a run of
 * T seconds keeps between SAMPLE_CAP / 2 and SAMPLE_CAP samples once
 * T > SAMPLE_CAP x 10 ms, and one every 10 ms before that: at least 50
 * whenever the run lasts 0.5 s (unless the machine holds the sampler back
 * by more than 5 ms), never two closer than 5 ms (the last one, the state
 * at the end, replaces its predecessor rather than crowd it).  The end is
 * sampled even when the run was over before the sampler first ran, so no
 * run has none.
 *
 * The sampler is the only other thread this file starts; it owns its
 * arrays until joined.  r->metrics and r->directions belong to the
 * workload's main thread (worker threads hand their figures back to it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

volatile sig_atomic_t pcb_stop;

#define SAMPLE_MIN_NS	(10 * 1000 * 1000ull)	/* 10 ms: the first interval */
#define SAMPLE_GAP_NS	(SAMPLE_MIN_NS / 2)	/* never two samples closer */
#define SAMPLE_CAP	240			/* held at most; even */

bool pcb_time_up(const struct pcb_run *r)
{
	return pcb_stop || (r->deadline_ns && pcb_now_ns() >= r->deadline_ns);
}

void pcb_metric(struct pcb_run *r, const char *name, double v)
{
	if (isfinite(v))
		json_object_set_new(r->metrics, name, json_real(v));
}

void pcb_direction(struct pcb_run *r, const char *name, bool higher)
{
	json_object_set_new(r->directions, name, json_boolean(higher));
}

bool pcb_vm(const struct pcb_run *r, const char *name, double *v)
{
	json_t *j = r->vm ? json_object_get(r->vm, name) : NULL;

	if (!json_is_integer(j))
		return false;
	*v = (double)json_integer_value(j);
	return true;
}

/* Any thread of the workload may fail: the first message wins. */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

int pcb_fail(struct pcb_run *r, int err, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (!r->err[0]) {
		va_start(ap, fmt);
		vsnprintf(r->err, sizeof(r->err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&fail_lock);
	return err;
}

const char *pcb_path(const struct pcb_run *r, char *buf, size_t len,
		     const char *fmt, ...)
{
	va_list ap;
	int n = pcb_fmt(buf, len, "%s/", r->dir);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return buf;
}

/* ------------------------------------------------------------------ */
/* The sampler thread.                                                 */

struct sampler {
	struct pcb_run *r;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;			/* under lock */
	uint64_t t0;			/* r->t0_ns: time 0 of the samples */
	/* owned by the thread until joined */
	uint64_t interval;		/* ns between samples, doubles */
	uint64_t last_ns;		/* when the last sample was taken */
	size_t n;
	double t[SAMPLE_CAP];
	uint64_t v[PCB_NR_SAMPLES][SAMPLE_CAP];
};

/* Keep every other sample (0, 2, 4, ...) and double the interval. */
static void sample_thin(struct sampler *s)
{
	for (size_t j = 0; 2 * j < s->n; j++) {
		s->t[j] = s->t[2 * j];
		for (int i = 0; i < PCB_NR_SAMPLES; i++)
			s->v[i][j] = s->v[i][2 * j];
	}
	s->n = (s->n + 1) / 2;
	s->interval *= 2;
}

/* False when the engine has no counters to sample (the limit engine).
 * -EAGAIN from the engine: none at this moment (a program that has not
 * published its counters yet, program.c), no sample, try again. */
static bool sample_once(struct sampler *s, bool last)
{
	uint64_t v[PCB_NR_SAMPLES] = { 0 };
	uint64_t now;
	int err;

	now = pcb_now_ns();
	err = s->r->ops->sample(s->r, v);
	if (err == -EAGAIN)
		return true;
	if (err < 0)
		return s->n > 0;
	if (last && s->n &&
	    now - s->t0 < (uint64_t)(s->t[s->n - 1] * 1e9) + SAMPLE_GAP_NS)
		s->n--;			/* the end replaces a close neighbour */
	if (s->n == SAMPLE_CAP)
		sample_thin(s);
	s->last_ns = now;
	s->t[s->n] = pcb_secs(now - s->t0);
	for (int i = 0; i < PCB_NR_SAMPLES; i++)
		s->v[i][s->n] = v[i];
	s->n++;
	return true;
}

static void *sampler_main(void *p)
{
	struct sampler *s = p;
	uint64_t when = s->t0;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		bool more;

		pthread_mutex_unlock(&s->lock);
		more = sample_once(s, false);
		pthread_mutex_lock(&s->lock);
		if (!more) {		/* nothing to sample: wait for the end */
			while (!s->stop)
				pthread_cond_wait(&s->cond, &s->lock);
			break;
		}
		/* the next point of the grid: a thinning keeps the points of
		 * the doubled grid, and the sample that caused it is one of
		 * them; a sampler woken so late (a loaded machine) that the
		 * point is near or past waits SAMPLE_GAP_NS all the same */
		when += s->interval;
		if (when < s->last_ns + SAMPLE_GAP_NS)
			when = s->last_ns + SAMPLE_GAP_NS;
		ts.tv_sec = (time_t)(when / 1000000000u);
		ts.tv_nsec = (long)(when % 1000000000u);
		while (!s->stop && pcb_now_ns() < when)
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	/* the state at the end, also when the run ended before this thread
	 * first ran (a loaded machine): every run has one sample at least */
	sample_once(s, true);
	return NULL;
}

static int sampler_start(struct sampler *s, struct pcb_run *r)
{
	pthread_condattr_t ca;

	s->r = r;
	s->stop = false;
	s->t0 = r->t0_ns;
	s->interval = SAMPLE_MIN_NS;
	s->last_ns = 0;
	s->n = 0;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	return -pthread_create(&s->tid, NULL, sampler_main, s);
}

static json_t *sampler_stop(struct sampler *s, bool started)
{
	json_t *o = json_object(), *a;
	double shift;

	if (started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->tid, NULL);
	}
	/* on the measured part's axis: the warm-up's samples before 0 */
	shift = pcb_secs(s->r->t0_ns - s->t0);
	a = json_array();
	for (size_t j = 0; j < s->n; j++)
		json_array_append_new(a, json_real(round((s->t[j] - shift) * 1e6) / 1e6));
	json_object_set_new(o, "t", a);
	for (int i = 0; i < PCB_NR_SAMPLES; i++) {
		a = json_array();
		for (size_t j = 0; j < s->n; j++)
			json_array_append_new(a, json_integer((json_int_t)s->v[i][j]));
		json_object_set_new(o, pcb_sample_names[i], a);
	}
	json_object_set_new(o, "interval_ms",
			    json_real((double)s->interval / 1e6));
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	return o;
}

/* ------------------------------------------------------------------ */
/* Counters.                                                           */

static json_t *delta(json_t *before, json_t *after)
{
	json_t *d = json_object(), *v;
	const char *k;

	if (!before || !after)
		return d;
	/* a counter that appears on the way (a program's, read when it has
	 * exited: program.c) started at 0 */
	json_object_foreach(after, k, v) {
		json_t *b = json_object_get(before, k);

		if (json_is_integer(v) && (!b || json_is_integer(b)))
			json_object_set_new(d, k, json_integer(
				json_integer_value(v) -
				(b ? json_integer_value(b) : 0)));
	}
	return d;
}

/* A process's device I/O (@path: its /proc/PID/io, summed over its
 * threads and the children it has reaped), added to @o's "io.*". */
static void add_proc_io(json_t *o, const char *path)
{
	static const char *const keys[] = { "read_bytes", "write_bytes" };
	char name[64], key[80];
	unsigned long long v;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fscanf(f, "%63[^:]: %llu\n", name, &v) == 2)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strcmp(name, keys[i]) == 0) {
				json_t *old;

				pcb_fmt(key, sizeof(key), "io.%s", name);
				old = json_object_get(o, key);
				json_object_set_new(o, key, json_integer((json_int_t)v +
					(json_is_integer(old) ? json_integer_value(old) : 0)));
			}
	fclose(f);
}

/*
 * @root and every live descendant of it (a program's process tree), into
 * @out (at most @max); their number.  The main thread's only.
 */
int pcb_tree_pids(pid_t root, pid_t *out, int max)
{
	static pid_t pid[PCB_TREE_MAX], ppid[PCB_TREE_MAX];
	static bool in[PCB_TREE_MAX];
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[64], buf[512];
	int n = 0, k = 0;
	bool more = true;

	while (d && (de = readdir(d)) && n < PCB_TREE_MAX) {
		const char *end;
		ssize_t len;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pcb_fmt(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* "PID (COMM) STATE PPID ...": COMM may hold anything */
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (!(end = strrchr(buf, ')')))
			continue;
		pid[n] = (pid_t)atoi(de->d_name);
		ppid[n] = (pid_t)atoi(end + 4);
		in[n] = pid[n] == root;
		n++;
	}
	if (d)
		closedir(d);
	while (more) {
		more = false;
		for (int i = 0; i < n; i++)
			for (int j = 0; !in[i] && j < n; j++)
				if (in[j] && ppid[i] == pid[j])
					in[i] = more = true;
	}
	for (int i = 0; i < n && k < max; i++)
		if (in[i])
			out[k++] = pid[i];
	return k;
}

/*
 * @root's tree: their device I/O added to @o.  Each one's /proc/PID/io
 * counts the children it has reaped, so nothing is counted twice or
 * missed but a process that exits between the two reads.
 */
static void add_tree_io(json_t *o, pid_t root)
{
	static pid_t pid[PCB_TREE_MAX];
	char path[64];
	int n = pcb_tree_pids(root, pid, PCB_TREE_MAX);

	for (int i = 0; i < n; i++) {
		pcb_fmt(path, sizeof(path), "/proc/%d/io", (int)pid[i]);
		add_proc_io(o, path);
	}
}

json_t *pcb_counters(struct pcb_run *r)
{
	json_t *o = r->ops->vmstat(r);

	if (o) {
		add_proc_io(o, "/proc/self/io");
		/* a program still running: its I/O is not ours until reaped */
		if (r->prog_pid > 0)
			add_tree_io(o, r->prog_pid);
	}
	return o;
}

json_t *pcb_phase_end(struct pcb_run *r, const char *name, json_t *before)
{
	json_t *after = pcb_counters(r), *d = delta(before, after);

	json_decref(before);
	json_decref(after);
	if (!r->phases)
		r->phases = json_object();
	json_object_set_new(r->phases, name, d);
	return d;
}

double pcb_count(json_t *counters, const char *name)
{
	json_t *v = counters ? json_object_get(counters, name) : NULL;

	return json_is_integer(v) ? (double)json_integer_value(v) : 0;
}

static double tv_secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Figures every workload gets where the engine's counters allow. */
static void derive_common(struct pcb_run *r, const struct rusage *ru1)
{
	static const char *const prefix[] = { "memcg.", "" };
	double d, k;

	pcb_metric(r, "user-seconds", tv_secs(ru1->ru_utime) - r->cpu0[0]);
	pcb_metric(r, "sys-seconds", tv_secs(ru1->ru_stime) - r->cpu0[1]);
	/* the cgroup's own reclaim first (v2 counts it), then the machine's */
	for (int i = 0; i < 2; i++) {
		char kd[64], kk[64];

		pcb_fmt(kd, sizeof(kd), "%spgsteal_direct", prefix[i]);
		pcb_fmt(kk, sizeof(kk), "%spgsteal_kswapd", prefix[i]);
		if (pcb_vm(r, kd, &d) && pcb_vm(r, kk, &k) && d + k > 0) {
			pcb_metric(r, "direct-reclaim%", 100 * d / (d + k));
			pcb_direction(r, "direct-reclaim%", false);
			break;
		}
	}
}

/* The rep's metrics with the headline first (bench/results/README.md). */
static json_t *ordered_metrics(struct pcb_run *r)
{
	json_t *o = json_object(), *v;
	const char *k;

	v = json_object_get(r->metrics, r->wl->metric);
	if (v)
		json_object_set(o, r->wl->metric, v);
	json_object_foreach(r->metrics, k, v)
		if (strcmp(k, r->wl->metric) != 0)
			json_object_set(o, k, v);
	return o;
}

/* ------------------------------------------------------------------ */
/* Steady state: the warm-up, then the measured part (bench.h).        */

/* The measured part's time limit, from its start. */
static uint64_t measured_limit_ns(const struct pcb_run *r)
{
	/* timed workloads run for --duration; the others stop at the
	 * runner's limit, so a slow engine cannot stall a suite */
	return (uint64_t)((r->wl->timed ? r->opt->duration : r->limit_s) * 1e9);
}

/* An engine without a cache (direct) is in steady state from the start. */
static bool has_cache(const struct pcb_run *r)
{
	return r->ops != &pcb_engine_direct;
}

bool pcb_warming(const struct pcb_run *r)
{
	return r->warming;
}

void pcb_steady(struct pcb_run *r)
{
	struct rusage ru;
	json_t *mid, *w;
	uint64_t now;

	if (!r->warming)
		return;
	mid = pcb_counters(r);
	getrusage(RUSAGE_SELF, &ru);
	now = pcb_now_ns();
	w = json_object();
	json_object_set_new(w, "what", json_string(r->wl->warmup));
	json_object_set_new(w, "seconds", json_real(pcb_secs(now - r->warm_t0_ns)));
	/* stopped by its cap: the measured part starts short of steady */
	json_object_set_new(w, "capped", json_boolean(r->capped && !pcb_stop));
	json_object_set_new(w, "user-seconds", json_real(tv_secs(ru.ru_utime) -
							 r->cpu0[0]));
	json_object_set_new(w, "sys-seconds", json_real(tv_secs(ru.ru_stime) -
							r->cpu0[1]));
	json_object_set_new(w, "vmstat", delta(r->base, mid));
	r->warmup = w;
	json_decref(r->base);
	r->base = mid;
	r->cpu0[0] = tv_secs(ru.ru_utime);
	r->cpu0[1] = tv_secs(ru.ru_stime);
	r->capped = false;
	r->warming = false;
	r->t0_ns = now;
	r->deadline_ns = now + measured_limit_ns(r);
	pcb_profile_ctl(r, "enable");
}

json_t *pcb_rep_run(struct pcb_run *r)
{
	json_t *out = json_object(), *after = NULL;
	json_t *samples = NULL;
	struct sampler s;
	struct rusage ru0, ru1;
	bool inited = false, sampling = false, started = false;
	int err = 0;

	r->metrics = json_object();
	r->directions = json_object();
	/* known from the preparation on (a script may hold the warm-up) */
	r->warming = r->wl->warmup && has_cache(r);
	if (pcb_is_program(r->wl))
		err = pcb_prog_prepare(r);
	if (!err && r->wl->prepare)
		err = r->wl->prepare(r);
	/* perf attached (it started while the files were made), events still
	 * off: the engine's threads are born under it */
	pcb_profile_ctl(r, "disable");
	if (!err) {
		pcb_drop_cache(r->dir);
		err = r->ops->start(r);
		started = err == 0;
	}
	if (!err) {
		r->base = pcb_counters(r);
		getrusage(RUSAGE_SELF, &ru0);
		r->cpu0[0] = tv_secs(ru0.ru_utime);
		r->cpu0[1] = tv_secs(ru0.ru_stime);
		/* the warm-up, when there is one, is capped like an untimed
		 * workload; pcb_steady() starts the measured part's clock */
		r->t0_ns = r->warm_t0_ns = pcb_now_ns();
		r->deadline_ns = r->t0_ns + (r->warming ? (uint64_t)(r->limit_s * 1e9)
							: measured_limit_ns(r));
		if (r->wl->warmup && !r->warming)
			r->warmup = json_pack("{s:s, s:f, s:s}", "what", r->wl->warmup,
					      "seconds", 0.0, "skipped",
					      "no cache to fill: steady from the start");
		err = sampler_start(&s, r);
		inited = true;
		sampling = err == 0;
		if (err)
			pcb_fail(r, err, "cannot start the sampler");
	}
	if (!err) {
		if (!r->warming)
			pcb_profile_ctl(r, "enable");
		err = r->wl->run(r);
		pcb_profile_ctl(r, "disable");
		getrusage(RUSAGE_SELF, &ru1);
		after = pcb_counters(r);
		r->vm = delta(r->base, after);
		derive_common(r, &ru1);
		if (!err && r->warming && !pcb_stop)	/* a workload's bug */
			err = pcb_fail(r, -EIO, "the warm-up never ended (no pcb_steady)");
		if (!err && r->wl->derive)
			r->wl->derive(r);
	}
	samples = inited ? sampler_stop(&s, sampling) : json_object();
	if (started && !pcb_stop) {
		int e = r->ops->stop(r);

		if (e < 0 && !err)
			err = pcb_fail(r, e, "stopping the engine: %s",
				       strerror(-e));
	}

	if (err == -EOPNOTSUPP) {
		json_object_set_new(out, "status", json_string("n/a"));
	} else if (err < 0 && !(pcb_stop && err == -EINTR)) {
		if (!r->err[0])
			pcb_fail(r, err, "%s", strerror(-err));
		json_object_set_new(out, "status", json_string("error"));
	} else if (!pcb_stop && !json_object_get(r->metrics, r->wl->metric)) {
		pcb_fail(r, -EIO, "no %s figure", r->wl->metric);
		json_object_set_new(out, "status", json_string("error"));
	} else {
		json_object_set_new(out, "status", json_string("ok"));
		if (r->capped && !pcb_stop)
			pcb_fail(r, 0, "stopped at its time limit of %.0f s",
				 pcb_secs(r->deadline_ns - r->t0_ns));
	}
	json_object_set_new(out, "reason", json_string(r->err));
	json_object_set_new(out, "partial", json_boolean(pcb_stop));
	json_object_set_new(out, "metrics", ordered_metrics(r));
	json_object_set_new(out, "directions", r->directions);
	json_object_set_new(out, "vmstat", r->vm ? r->vm : json_object());
	if (r->phases)
		json_object_set_new(out, "phases", r->phases);
	if (r->warmup)
		json_object_set_new(out, "warmup", r->warmup);
	json_object_set_new(out, "samples", samples);
	json_decref(r->metrics);
	json_decref(r->base);
	json_decref(after);
	r->metrics = r->directions = r->vm = r->phases = r->warmup = r->base = NULL;
	return out;
}
