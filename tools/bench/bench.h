/*
 * tools/bench/bench.h - the benchmark lab: what its files share.
 *
 * `pagecache bench` runs workloads (docs/workloads.md) against engines
 * (docs/design.md, "The benchmark lab") and writes one result file per
 * workload x engine x config (bench/results/README.md).
 *
 *   cli.c        options, checks before starting, the two entry points
 *   runner.c     the parent: the loop over runs, one forked child per
 *                repetition, progress line, Ctrl-C, result files
 *   rep.c        the child: one repetition (prepare, sample, warm-up,
 *                measured part, counters)
 *   result.c     result JSON and the summary table
 *   engine_pc.c  the pagecache engine (public API only)
 *   engine_os.c  kernel, dontcache, direct: the kernel's own I/O paths
 *   engine_limit.c  limit: the hit path's physical limit (a huge-page buffer)
 *   cgroup.c     the memory cgroup the kernel engines run in
 *   machine.c    machine and filesystem facts, kernel feature probes
 *   profile.c    --profile: perf record of each repetition, its top symbols
 *   util.c       sizes, clocks, buffers, threads, test files
 *   workloads.c  the workload table (from the section pcb_workloads)
 *   wl_*.c       the workloads, each written once against the engine ops
 *   program.c    real programs (wl_fio.c, wl_rocksdb.c, wl_sqlite.c) run
 *                as a child, under `pagecache exec` or in the cgroup
 *
 * Process model: the parent never runs a workload.  Each repetition runs
 * in a child forked from the single-threaded parent (moved into the memory
 * cgroup for the kernel engines), which sends its figures back as one JSON
 * document through a pipe.  A crash or an OOM kill of a repetition is
 * thus an "error" in a result file, not the end of the suite.
 *
 * Errors follow the library's convention: 0 or a count, or a negative
 * errno; a failing workload also leaves a message in run->err.
 */
#ifndef PC_TOOLS_BENCH_H
#define PC_TOOLS_BENCH_H

#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ------------------------------------------------------------------ */
/* Entry points (argv[0] is the subcommand's name).                    */

/* `pagecache bench ...`: returns the process exit code. */
int pc_bench_main(int argc, char **argv);

/*
 * `pagecache run ...`: the default suite.  On return *files holds the
 * result files written, the kernel engine's first (the comparison's base),
 * NULL-terminated; free with pcb_free_files().  Returns an exit code.
 */
int pcb_suite_main(int argc, char **argv, char ***files);
void pcb_free_files(char **files);

/* ------------------------------------------------------------------ */
/* Engines.                                                            */

enum pcb_engine_id {
	PCB_PAGECACHE,
	PCB_KERNEL,
	PCB_DONTCACHE,
	PCB_DIRECT,
	PCB_LIMIT,
	PCB_NR_ENGINES
};
#define PCB_ENG(e)	(1u << (e))
/* Every engine that does file I/O.  The limit engine does none: only the
 * hit-path workloads name it (PCB_ENG_HIT). */
#define PCB_ENG_ALL	(PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL) | \
			 PCB_ENG(PCB_DONTCACHE) | PCB_ENG(PCB_DIRECT))
#define PCB_ENG_HIT	(PCB_ENG_ALL | PCB_ENG(PCB_LIMIT))
#define PCB_ENG_EVERY	((1u << PCB_NR_ENGINES) - 1)	/* -e all */
#define PCB_ENG_CACHED	(PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL) | \
			 PCB_ENG(PCB_DONTCACHE))

/* The counters sampled during the measured part (rep.c), in pages. */
enum {
	PCB_S_FREE,
	PCB_S_INACTIVE,
	PCB_S_ACTIVE,
	PCB_S_DIRTY,
	PCB_S_WRITEBACK,
	PCB_NR_SAMPLES
};
extern const char *const pcb_sample_names[PCB_NR_SAMPLES];
/* The pc_vmstat counters of those samples (engine_pc.c; program.c). */
extern const char *const pcb_pc_sample_counters[PCB_NR_SAMPLES];

struct pcb_file;
struct pcb_run;

/*
 * What a workload may do to a file, whatever serves it.  Every call
 * returns 0 or a count, or a negative errno.  pread returns fewer bytes
 * than asked only at end of file; pwrite writes all or fails.  Calls on
 * one pcb_file come from one thread at a time; start/stop, vmstat and
 * sample are called by the repetition's driver (sample from its sampler
 * thread, concurrently with the workload).
 */
struct pcb_engine_ops {
	const char *name;
	const char *what;		/* one line for --help */
	unsigned align;			/* I/O alignment required, 0: any */
	bool in_cgroup;			/* runs in the memory cgroup */

	int (*start)(struct pcb_run *r);	/* sets r->eng */
	int (*stop)(struct pcb_run *r);
	int (*open)(struct pcb_run *r, const char *path, int flags,
		    struct pcb_file **out);
	ssize_t (*pread)(struct pcb_file *f, void *buf, size_t len, off_t off);
	/* as pread, but -EAGAIN (and no I/O) unless the data is cached */
	ssize_t (*pread_cached)(struct pcb_file *f, void *buf, size_t len,
				off_t off);
	ssize_t (*pwrite)(struct pcb_file *f, const void *buf, size_t len,
			  off_t off);
	int (*fsync)(struct pcb_file *f);
	int (*ftruncate)(struct pcb_file *f, off_t len);
	int (*fadvise)(struct pcb_file *f, off_t off, off_t len, int advice);
	int (*close)(struct pcb_file *f);
	int (*unlink)(struct pcb_run *r, const char *path);
	/* zero copy: pin page @index, give its data, unpin; NULL if none */
	int (*page_get)(struct pcb_file *f, uint64_t index, const void **data,
			void **pin);
	void (*page_put)(void *pin);
	/* make the calling thread allocate from @node; NULL if no nodes */
	int (*thread_set_node)(struct pcb_run *r, int node);
	/* every counter of the engine, name -> integer */
	json_t *(*vmstat)(struct pcb_run *r);
	/* the page counts now (the sampler thread); 0, -EAGAIN: none at
	 * this moment, or another -errno: none to sample at all */
	int (*sample)(struct pcb_run *r, uint64_t v[PCB_NR_SAMPLES]);
};

extern const struct pcb_engine_ops pcb_engine_pagecache;
extern const struct pcb_engine_ops pcb_engine_kernel;
extern const struct pcb_engine_ops pcb_engine_dontcache;
extern const struct pcb_engine_ops pcb_engine_direct;
extern const struct pcb_engine_ops pcb_engine_limit;
extern const struct pcb_engine_ops *const pcb_engines[PCB_NR_ENGINES];
int pcb_engine_find(const char *name);	/* id, or -ENOENT */

/* engine_os.c: for the kernel engines' samples and counters */
json_t *pcb_os_vmstat(const char *cgroup_dir, int cg_version);
int pcb_os_sample(const char *cgroup_dir, int cg_version,
		  uint64_t v[PCB_NR_SAMPLES]);

/* ------------------------------------------------------------------ */
/* Options: what the command line asked for (cli.c).                   */

#define PCB_MAX_SETS 512

#define PCB_MAX_BUDGETS 8

/* The order of a run's repetitions (--order; runner.c). */
enum pcb_order {
	PCB_ORDER_TURNS,	/* rep 1 of every engine and config, then rep 2... */
	PCB_ORDER_SEQUENTIAL,	/* every rep of one, then every rep of the next */
};

struct pcb_opts {
	uint64_t budget;		/* bytes: B of docs/workloads.md (the one in
					   force: pcb_run_all sets each) */
	uint64_t budgets[PCB_MAX_BUDGETS];	/* --budget list, in order */
	int nr_budgets;
	int reps;
	enum pcb_order order;		/* --order: turns (the default) */
	double duration;		/* s: timed workloads run this long */
	double max_time;		/* s: the whole run's target, 0: none */
	int cpus;			/* online CPUs: scales threads */
	char sets[PCB_MAX_SETS];	/* --set pairs, space-separated */
	char variants[2][PCB_MAX_SETS];	/* --variant: pagecache configs run
					   beside the base (space-separated
					   pairs); given, they replace the
					   workloads' own */
	int nr_variants;
	const char *out;		/* result folder */
	const char *dir;		/* test files go in a folder under it */
	const char *label;		/* --label, or NULL */
	bool trace;
	bool profile;			/* perf record each repetition */
	bool tty;			/* progress line on stderr */
	unsigned engines;		/* mask of PCB_ENG() */
	char na[PCB_NR_ENGINES][160];	/* why an engine cannot run here */
	int nr_workloads;
	int workloads[64];		/* indexes: pcb_workload(i) */
};

/*
 * Run every selected workload x engine x config at each budget (budgets
 * outermost, in the order given), opt->reps times each (by turns, unless
 * opt->order says sequential), writing result
 * files to opt->out (runner.c).  *files, if not NULL,
 * receives the result files with figures, the kernel engine's first.
 * Returns 0, 1 if a run failed, 130 if interrupted.
 */
int pcb_run_all(const struct pcb_opts *opt, char ***files);

/* ------------------------------------------------------------------ */
/* Workload parameters: named integers, computed from the options.    */

#define PCB_MAX_PARAMS 24

struct pcb_params {
	int n;
	struct {
		const char *name;
		int64_t v;
	} p[PCB_MAX_PARAMS];
};

void pcb_param_set(struct pcb_params *p, const char *name, int64_t v);
int64_t pcb_param(const struct pcb_params *p, const char *name);
json_t *pcb_params_json(const struct pcb_params *p);

/* ------------------------------------------------------------------ */
/* Workloads (workloads.c, wl_*.c).                                    */

/* A real program a workload runs (program.c). */
struct pcb_program {
	const char *name;		/* on PATH: else the workload is n/a */
	const char *package;		/* Debian's, for the n/a message */
	/* its files, made once per run and budget into @dir (absolute; not
	 * timed, no cache, no cgroup); NULL: none.  0 or -errno. */
	int (*make)(struct pcb_run *r, const char *dir);
};

/*
 * A workload, defined next to its code (wl_*.c) by PCB_WORKLOAD.  Fields
 * left out are false, 0 or NULL: a headline is better higher unless
 * .lower says otherwise.
 */
struct pcb_workload {
	const char *name;		/* as in result files: "aim7-disk_wrt" */
	const char *group;		/* docs/workloads.md section: "aim7" */
	const char *what;		/* one line for --list */
	const char *metric;		/* the headline */
	bool lower;			/* ... is better lower (else higher) */
	bool timed;			/* runs for --duration, else capped */
	bool in_suite;			/* part of `pagecache run` */
	unsigned engines;		/* engines that can serve it */
	bool direct_is_limit;		/* its direct run is the device's
					   limit: "limit": true in the file,
					   compare's "of limit" reference */
	const char *na_reason;		/* why the others cannot */
	/* what brings the engine to steady state before the measured part
	 * (docs/workloads.md): the workload does it, then pcb_steady(); NULL
	 * for a workload measured from its start (the -cold ones) */
	const char *warmup;
	/* extra pagecache configs this workload is also run with */
	const char *pc_variants[2];
	/* parameters scaled from the budget; also used by the checks */
	void (*params)(struct pcb_params *p, const struct pcb_opts *o);
	/* the most bytes on disk at once, for the free-space check */
	uint64_t (*disk)(const struct pcb_params *p);
	/* make the files (not timed, engine-independent); may be NULL.  A
	 * program workload's program is found and its files made first. */
	int (*prepare)(struct pcb_run *r);
	/* the measured part: fills r->metrics, headline first */
	int (*run)(struct pcb_run *r);
	/* derived figures from the counter deltas (r->vm); may be NULL */
	void (*derive)(struct pcb_run *r);
	/* a real program run as a child (program.c): the engine is how it
	 * runs; the kernel engines' cgroup limit is its peak RSS under
	 * pagecache (runner.c).  .program.name NULL: not a program. */
	struct pcb_program program;
};

static inline bool pcb_is_program(const struct pcb_workload *w)
{
	return w->program.name != NULL;
}

/*
 * The one list of workloads is the linker section pcb_workloads: each
 *
 *   PCB_WORKLOAD(seq_write) = { .name = "seq-write", ... };
 *
 * defines a descriptor and puts an entry for it there.  workloads.c
 * orders them by file name, then by line: the order they run in and
 * --list shows.  Adding a workload is one wl_<name>.c (and its doc).
 */
struct pcb_workload_entry {
	const struct pcb_workload *wl;
	const char *file;
	int line;
};
#define PCB_WORKLOAD(id) \
	static const struct pcb_workload pcb_wl_##id; \
	static const struct pcb_workload_entry pcb_wl_entry_##id \
		__attribute__((used, section("pcb_workloads"), \
			       aligned(__alignof__(struct pcb_workload_entry)))) = \
		{ &pcb_wl_##id, __FILE__, __LINE__ }; \
	static const struct pcb_workload pcb_wl_##id

/* The workloads in order (made at the first call, in the parent). */
int pcb_nr_workloads(void);
const struct pcb_workload *pcb_workload(int i);
int pcb_workload_find(const char *name);	/* index, or -ENOENT */

/* ------------------------------------------------------------------ */
/* Real programs (program.c; wl_fio.c, wl_rocksdb.c, wl_sqlite.c).      */

/* The pagecache engine as a program workload's repetition has it. */
extern const struct pcb_engine_ops pcb_engine_exec;
/* The engine a program workload's repetition runs with, for @e. */
const struct pcb_engine_ops *pcb_program_engine(const struct pcb_engine_ops *e);
/* engine_exec.c: the counters of a program's --stats file ("name value"
 * lines) added to the repetition's; the folder of its live records. */
void pcb_exec_add_stats(struct pcb_run *r, const char *path);
const char *pcb_exec_live_dir(const struct pcb_run *r);

enum pcb_prog_mode {
	PCB_PROG_PAGECACHE,	/* under `pagecache exec` */
	PCB_PROG_KERNEL,	/* in the memory cgroup, buffered */
	PCB_PROG_DIRECT,	/* in the memory cgroup, asked for O_DIRECT */
};

enum pcb_prog_mode pcb_prog_mode(const struct pcb_run *r);

/* One run of a program.  Paths in argv must be absolute or relative to
 * the repetition's folder (its working directory). */
struct pcb_prog {
	const char *name;		/* short: names its output files */
	char *const *argv;		/* NULL-terminated; argv[0] on PATH */
	const char *stdin_path;		/* NULL: /dev/null */
	bool stop_at_deadline;		/* SIGINT at the repetition's deadline */
	bool plain;			/* a preparation: no cache, no cgroup,
					   no figures */
	/* the program's warm-up ends (pcb_steady) when this file appears
	 * (relative: in the repetition's folder), or this text is in its
	 * stdout; NULL: no warm-up in this run */
	const char *steady_file, *steady_text;
	/* set by pcb_prog_run */
	enum pcb_prog_mode mode;
	char out[1100], err[1100];	/* its stdout, stderr */
	char stats[1100];		/* pagecache: exec's --stats file */
	int status;			/* wait status */
	bool stopped;			/* it was sent SIGINT */
	double secs;			/* wall time, fork to exit */
	uint64_t maxrss;		/* bytes */
	uint64_t file_rss;		/* bytes: the largest RssFile seen in
					   a process of its tree */
};

/*
 * A program workload's preparation, before its own .prepare: its program
 * on PATH (else -EOPNOTSUPP, n/a, saying how to get it), and its files
 * (.program.make) made once per run and budget, outside cache and cgroup;
 * r->prep is their folder (absolute), the kernel's cache of them dropped.
 * 0 or -errno.
 */
int pcb_prog_prepare(struct pcb_run *r);
/* Run @p to its end; records peak-rss-MiB and program-seconds.  0, or
 * -errno when it could not run or failed (not when it was stopped). */
int pcb_prog_run(struct pcb_run *r, struct pcb_prog *p);
/* A command line being built: pcb_arg appends one printf-made word. */
struct pcb_args {
	char *v[64];			/* NULL-terminated */
	int n;
	size_t used;
	char store[8192];
};
void pcb_arg(struct pcb_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A file's contents, NUL-terminated (free it); NULL if unreadable. */
char *pcb_prog_slurp(const char *path);
/* The largest peak-rss-MiB of a result's reps, in bytes; 0 if none. */
uint64_t pcb_prog_peak(json_t *reps);

/* ------------------------------------------------------------------ */
/* One repetition, in the child (rep.c).                               */

struct pcb_run {
	/* read-only during the repetition */
	const struct pcb_workload *wl;
	const struct pcb_engine_ops *ops;
	const struct pcb_params *par;
	const struct pcb_opts *opt;
	const char *dir;		/* this repetition's own folder */
	const char *config;		/* pagecache config string */
	const char *cgroup;		/* cgroup folder, or NULL */
	const struct pcb_profile *profile;	/* --profile's fifos, or NULL */
	int cg_version;
	int rep;			/* 1-based */
	double limit_s;			/* untimed workloads stop here, s */
	uint64_t t0_ns, deadline_ns;	/* set when the measured part starts */
	void *eng;			/* the engine's state, from start() */
	char prep[1100];		/* a program workload's files' folder
					   (pcb_prog_prepare), or "" */

	/* the workload's main thread only (not its worker threads) */
	json_t *metrics;		/* name -> number, headline first */
	json_t *directions;		/* name -> higher is better */
	json_t *vm;			/* counter deltas, for derive() */
	json_t *phases;			/* phase name -> its counter deltas */
	_Atomic bool capped;		/* stopped by its time limit */
	char err[256];			/* the first error; pcb_fail() */

	/* the warm-up (rep.c: pcb_warming, pcb_steady) */
	bool warming;			/* it runs: the measured part has not
					   begun */
	uint64_t warm_t0_ns;		/* when it began */
	json_t *base;			/* counters the measured deltas start
					   from */
	json_t *warmup;			/* the rep's "warmup", or NULL */
	double cpu0[2];			/* user, sys seconds at the start of
					   the measured part */
	pid_t prog_pid;			/* a program running (program.c): its
					   process tree's device I/O counts in
					   pcb_counters */
};

/* Run one repetition in this (child) process; returns the rep's JSON:
 * {"status","reason","partial","metrics","directions","vmstat","samples"}. */
json_t *pcb_rep_run(struct pcb_run *r);

/*
 * Steady state (docs/workloads.md).  A workload with .warmup first brings
 * the engine to steady state (the cache full, or its working set
 * resident), then calls pcb_steady(): the measured part starts there.
 * pcb_warming() says whether the warm-up is to run at all (known from
 * the workload's prepare on): not on an engine without a cache (direct),
 * where steady state is the start.
 * While it runs, r->t0_ns and r->deadline_ns are the warm-up's (capped
 * like an untimed workload: r->limit_s); pcb_steady() records it in the
 * rep's "warmup" (seconds, its counter deltas, whether it was capped:
 * r->capped is then cleared), snapshots the counters the measured deltas
 * start from, restarts the clock and the deadline and turns the profile
 * on.  Without a pcb_steady() call nothing is measured but the figures of
 * the workload's own.  Both from the workload's main thread, the other
 * threads joined (or, for a program, from pcb_prog_run's wait).
 */
bool pcb_warming(const struct pcb_run *r);
void pcb_steady(struct pcb_run *r);

/* Set by SIGINT (both parent and child): stop as soon as possible. */
extern volatile sig_atomic_t pcb_stop;

/* Should a workload stop now (Ctrl-C or its time is up)? */
bool pcb_time_up(const struct pcb_run *r);

void pcb_metric(struct pcb_run *r, const char *name, double v);
void pcb_direction(struct pcb_run *r, const char *name, bool higher);
/* A counter delta of this repetition; false when the engine lacks it. */
bool pcb_vm(const struct pcb_run *r, const char *name, double *v);

/*
 * Counters of a workload's phases.  pcb_counters: a snapshot of the
 * engine's counters plus the process's own I/O ("io.read_bytes",
 * "io.write_bytes" of /proc/self/io: what it made the device transfer,
 * any engine).  pcb_phase_end: the deltas since @before, recorded as the
 * rep's "phases"[@name] and returned (owned by the rep); takes @before.
 */
json_t *pcb_counters(struct pcb_run *r);
/* @root and its live descendants (at most @max of them, PCB_TREE_MAX is
 * /proc's bound) into @out; how many.  The main thread's only. */
#define PCB_TREE_MAX 4096
int pcb_tree_pids(pid_t root, pid_t *out, int max);
json_t *pcb_phase_end(struct pcb_run *r, const char *name, json_t *before);
/* A counter of a snapshot or a delta; 0 when absent. */
double pcb_count(json_t *counters, const char *name);
/* Record the first error: returns @err (negative errno). */
int pcb_fail(struct pcb_run *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* dir/name (printf-style) into buf */
const char *pcb_path(const struct pcb_run *r, char *buf, size_t len,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Engine calls, for the workloads. */
static inline int pcb_open(struct pcb_run *r, const char *path, int flags,
			   struct pcb_file **out)
{
	return r->ops->open(r, path, flags, out);
}

/* ------------------------------------------------------------------ */
/* Helpers (util.c).                                                   */

/* snprintf that truncates quietly (paths and messages are bounded) */
int pcb_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t pcb_now_ns(void);
static inline double pcb_secs(uint64_t ns) { return (double)ns / 1e9; }
uint64_t pcb_rand(uint64_t *state);		/* xorshift64* */
void *pcb_buf(size_t len);			/* 4 KiB aligned, touched */
uint64_t pcb_rss_bytes(void);			/* this process's RSS; 0: unknown */
int pcb_parse_size(const char *s, uint64_t *out);
const char *pcb_fmt_size(uint64_t v, char *buf, size_t len);  /* "256M" */

/* Run @n threads of @fn(r, i, arg), started together; first error. */
typedef int (*pcb_thread_fn)(struct pcb_run *r, int i, void *arg);
int pcb_threads(struct pcb_run *r, int n, pcb_thread_fn fn, void *arg);

/* Test files, made without the engines and without the kernel's cache. */
int pcb_make_file(const char *path, uint64_t size, bool sparse);
int pcb_mkdir(const char *path);
void pcb_drop_cache(const char *dir);	/* fdatasync + FADV_DONTNEED */
int pcb_rmtree(const char *path);	/* rm -rf; 0 or -errno */

/* ------------------------------------------------------------------ */
/* The memory cgroup (cgroup.c).                                       */

/*
 * The cgroup's limit is the budget plus an allowance for the process's
 * own memory (buffers, thread stacks: a few MiB), so that the kernel's
 * page cache gets about the budget, as pagecache does.  Sanitizer builds
 * need far more for their shadow memory.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PCB_CGROUP_ALLOWANCE	(1ull << 30)
#else
#define PCB_CGROUP_ALLOWANCE	(8ull << 20)
#endif

struct pcb_cgroup {
	bool ok;			/* made, limit set */
	int version;			/* 1 or 2 */
	uint64_t limit;			/* bytes */
	char dir[512];			/* our child cgroup */
	char why[256];			/* when not ok */
};

int pcb_cgroup_create(struct pcb_cgroup *cg, uint64_t limit);
int pcb_cgroup_enter(const struct pcb_cgroup *cg);	/* this process */
int pcb_cgroup_set_limit(struct pcb_cgroup *cg, uint64_t limit); /* empty */
void pcb_cgroup_reset(const struct pcb_cgroup *cg);	/* between reps */
void pcb_cgroup_destroy(struct pcb_cgroup *cg);
/* memory.stat as name -> integer (NULL on failure) */
json_t *pcb_cgroup_stat(const char *dir);
int pcb_cgroup_read_u64(const char *dir, const char *file, uint64_t *v);

/* ------------------------------------------------------------------ */
/* Profiles (profile.c).                                               */

#define PCB_PROFILE_PREFIX	"perf-profile.self.cycles-pp."	/* LKP's */
#define PCB_PROFILE_TOP		20	/* symbols kept per repetition */

/* One repetition's perf record, set up by the parent. */
struct pcb_profile {
	char ctl[1100], ack[1100];	/* perf's --control fifos */
	char data[1100], log[1100];
	pid_t pid;			/* perf record; 0: none */
	pid_t target;			/* the repetition it follows */
	bool program;			/* a program workload's: the report
					   keeps the program's processes */
};

/* 0 if perf can record here; else -ENOENT and why. */
int pcb_profile_probe(const char *dir, char *why, size_t len);
/* Parent: name the files of repetition @rep under @root, make the fifos. */
void pcb_profile_paths(struct pcb_profile *p, const char *root, int rep);
int pcb_profile_prepare(struct pcb_profile *p);
/* Parent: perf record -p @target, events off until the child says (and
 * the children it forks: a program workload's program). */
void pcb_profile_attach(struct pcb_profile *p, pid_t target);
/* Parent, after the child is gone: the top symbols into @rep's metrics
 * (PCB_PROFILE_PREFIX "SYMBOL": percent of samples) and "profile"; of a
 * program workload's (p->program), the program's processes' samples only. */
void pcb_profile_finish(struct pcb_profile *p, json_t *rep);
/* Child: send perf "enable" or "disable" and wait for its ack; without
 * --profile a no-op.  On failure profiling stops for the repetition. */
int pcb_profile_ctl(struct pcb_run *r, const char *cmd);

/* ------------------------------------------------------------------ */
/* Machine and filesystem (machine.c).                                 */

json_t *pcb_machine(const char *dir);	/* the "machine" object */
uint64_t pcb_mem_available(void);
int pcb_free_space(const char *dir, uint64_t *bytes);
bool pcb_dir_is_tmpfs(const char *dir);
/* 0, or the negative errno the kernel answers to RWF_DONTCACHE / O_DIRECT */
int pcb_probe_dontcache(const char *dir);
int pcb_probe_direct(const char *dir);

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080	/* linux/fs.h, Linux 6.14 */
#endif

/* ------------------------------------------------------------------ */
/* Results (result.c).                                                 */

struct pcb_result {
	json_t *root;			/* the result file's object */
	json_t *reps;			/* its "reps" array */
	const struct pcb_workload *wl;
	char label[128];
	char budget[32];		/* "1G" when several budgets run: in the
					   file name and the summary, else "" */
	char path[1024];
	bool partial, any_error;
	char reason[256];
};

void pcb_result_init(struct pcb_result *res, const struct pcb_workload *wl,
		     const char *engine, const char *label, const char *config,
		     const struct pcb_params *par, json_t *machine,
		     bool constrained);
/* Add a repetition's JSON (from the child); takes the reference. */
void pcb_result_add_rep(struct pcb_result *res, json_t *rep);
void pcb_result_set_status(struct pcb_result *res, const char *status,
			   const char *reason);
/* Write to dir/<workload>-<label>.json; 0 or -errno. */
int pcb_result_write(struct pcb_result *res, const char *dir);
void pcb_result_free(struct pcb_result *res);
/* One line of the summary table for @res. */
void pcb_result_summary(const struct pcb_result *res, FILE *out);

#endif
