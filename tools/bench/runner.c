/*
 * tools/bench/runner.c - the parent: every run, one child per repetition.
 *
 *   for each budget (--budget list; the memory cgroup made for each)
 *    for each workload
 *     for each engine, config: its result set up   (one result file each)
 *     for rep 1..N, for each engine, config in turn   (by turns, every
 *                                      other turn backwards: A1 B1 B2 A2 A3
 *                                      B3; --order sequential: A1 A2 B1 B2)
 *       <test dir>/pagecache-bench.<pid>/<n>/      fresh, empty
 *       fork ── child: enter the cgroup (kernel engines), pcb_rep_run(),
 *               │      its JSON down the pipe, exit
 *               └─ parent: (--profile: perf record the child, profile.c)
 *                  read the pipe (progress line, watchdog), wait,
 *                  (--profile: its top symbols into the JSON)
 *                  remove the repetition's folder
 *     write every result file, print its summary line
 *
 * By turns, because the machine drifts: this VM's device changes its
 * fsync rate by 1.5x within a minute, and run one engine after the other
 * the drift lands on one side (sqlite-oltp's pagecache / kernel was 485 /
 * 285, then 337 / 398).  In turns every engine's repetitions are spread
 * over the same minutes, so a slow drift moves both sides alike and
 * cancels out of their ratio.  The turns alternate their direction, so
 * that no engine always goes first: on this VM the first to run after
 * another engine's repetition gets memory just freed and faulted in, the
 * second memory the host may have taken back (a huge page's first touch
 * waits for the host: 0.63-0.70 s for 256 MiB against 0.05 s again at
 * once), and when pagecache went first in every turn only its side paid
 * it.  Each repetition records when it started ("started_at", Unix ns)
 * so the order can be seen in the files.
 *
 * A program workload (program.c) runs its kernel engines with the cgroup's
 * limit set to the program's peak RSS under pagecache (program_limit):
 * pagecache's result comes first in the first turn, so its first
 * repetition has run before any kernel one, and that peak is the limit of every kernel
 * repetition of the workload; the limit is set before each of them and
 * the budget's restored after.
 *
 * The parent stays single-threaded and never touches an engine, so each
 * child starts from a clean process, and a repetition that crashes or is
 * killed by the OOM killer is recorded as an error.
 *
 * Ctrl-C (SIGINT; also SIGTERM, SIGHUP, SIGPIPE): the handler sets
 * pcb_stop and forwards SIGINT to the running child, whose workload stops
 * at its next check and still reports what it measured; a second Ctrl-C
 * kills the child.  The run then stops: results so far are written (the
 * interrupted one marked partial, its workload's others with the turns
 * they had, none for one that had no turn), the test files are removed,
 * and the exit code is 130.  `child` and `signals` are written by the
 * handler and read by the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static volatile pid_t child;
static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	pid_t c = child;

	(void)sig;
	pcb_stop = 1;
	signals++;
	if (c > 0)
		kill(c, signals > 1 ? SIGKILL : SIGINT);
}

static void child_on_signal(int sig)
{
	(void)sig;
	pcb_stop = 1;
}

static void catch(void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* the terminal went away */
	sigaction(SIGPIPE, &sa, NULL);	/* `pagecache bench | head` */
}

/* Everything one run (workload x engine x config) needs. */
struct run_ctx {
	const struct pcb_opts *opt;
	const struct pcb_workload *wl;
	const struct pcb_engine_ops *ops;
	const struct pcb_params *par;
	const struct pcb_cgroup *cg;
	const char *root;		/* the test folder of this invocation */
	char config[PCB_MAX_SETS + 64];
	char label[128];
	int index, total;		/* for the progress line */
	uint64_t t_start;		/* the whole invocation's start */
	int reps_total, reps_done;	/* repetitions to run, and run */
};

/*
 * The time limit of an untimed repetition: three times --duration, unless
 * the run, at its pace so far, would overrun --max-time; then the time
 * left shared among the repetitions left (at least one second).
 */
static double rep_limit(const struct run_ctx *c)
{
	double limit = 3 * c->opt->duration, elapsed, left, pace;
	int reps_left = c->reps_total - c->reps_done;

	if (c->opt->max_time <= 0 || reps_left <= 0 || c->reps_done == 0)
		return limit;
	elapsed = pcb_secs(pcb_now_ns() - c->t_start);
	pace = elapsed / c->reps_done;
	if (elapsed + pace * reps_left <= c->opt->max_time)
		return limit;
	left = (c->opt->max_time - elapsed) / reps_left * 0.8;
	return left < 1 ? 1 : left < limit ? left : limit;
}

static void progress(const struct run_ctx *c, int rep, uint64_t t0)
{
	if (!c->opt->tty)
		return;
	fprintf(stderr, "\r\033[K[%d/%d] %s  %s  rep %d/%d  %.1fs  (total %.0fs)",
		c->index, c->total, c->wl->name, c->label, rep, c->opt->reps,
		pcb_secs(pcb_now_ns() - t0), pcb_secs(pcb_now_ns() - c->t_start));
	fflush(stderr);
}

static void progress_clear(const struct pcb_opts *opt)
{
	if (opt->tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
}

static json_t *error_rep(const char *fmt, const char *what)
{
	char msg[256];

	pcb_fmt(msg, sizeof(msg), fmt, what);
	return json_pack("{s:s, s:s, s:b}", "status", "error", "reason", msg,
			 "partial", (int)pcb_stop);
}

static void __attribute__((noreturn))
child_main(const struct run_ctx *c, const char *dir, int rep,
	   const char *trace, const struct pcb_profile *prof, int fd)
{
	struct pcb_run r;
	json_t *out;
	char *text;
	size_t len, off = 0;
	int err;

	catch(child_on_signal);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&r, 0, sizeof(r));
	r.wl = c->wl;
	r.ops = pcb_is_program(c->wl) ? pcb_program_engine(c->ops) : c->ops;
	r.par = c->par;
	r.opt = c->opt;
	r.dir = dir;
	r.rep = rep;
	r.limit_s = rep_limit(c);
	r.config = c->config;
	r.profile = prof;
	if (c->ops->in_cgroup && c->cg->ok) {
		r.cgroup = c->cg->dir;
		r.cg_version = c->cg->version;
	}
	char config[sizeof(c->config) + 1100];
	if (trace) {
		pcb_fmt(config, sizeof(config), "%s trace=%s/%s", c->config,
			 c->opt->out, trace);
		r.config = config;
	}
	/* a program workload puts only its program in the cgroup */
	if (r.cgroup && !pcb_is_program(c->wl) && (err = pcb_cgroup_enter(c->cg)) < 0)
		out = error_rep("cannot enter the memory cgroup: %s",
				strerror(-err));
	else
		out = pcb_rep_run(&r);
	if (trace)
		json_object_set_new(out, "trace", json_string(trace));
	text = json_dumps(out, JSON_COMPACT);
	len = text ? strlen(text) : 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	_exit(0);
}

/* Why a child ended without a word. */
static json_t *child_death(const struct run_ctx *c, int status)
{
	char what[160];

	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		pcb_fmt(what, sizeof(what), "signal %d (%s)%s", sig,
			 strsignal(sig),
			 sig == SIGKILL && c->ops->in_cgroup && c->cg->ok ?
			 ", the memory cgroup's OOM killer?" : "");
		return error_rep("the repetition was killed by %s", what);
	}
	pcb_fmt(what, sizeof(what), "%d", WEXITSTATUS(status));
	return error_rep("the repetition exited with %s and no figures", what);
}

/* The time of day in ns since the Unix epoch: when a repetition started. */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static json_t *run_rep(struct run_ctx *c, int rep, const char *trace)
{
	char dir[1100];
	int fds[2], status = 0;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	uint64_t t0 = pcb_now_ns(), started = wall_ns(), limit_ns, killed_at = 0;
	struct pcb_profile prof;
	bool profiling = c->opt->profile;
	json_t *out;
	pid_t pid;

	pcb_fmt(dir, sizeof(dir), "%s/%d", c->root, rep);
	pcb_rmtree(dir);
	if (pcb_mkdir(dir) < 0)
		return error_rep("cannot make %s", dir);
	if (profiling) {
		pcb_profile_paths(&prof, c->root, rep);
		prof.program = pcb_is_program(c->wl);
		profiling = pcb_profile_prepare(&prof) == 0;
	}
	if (c->ops->in_cgroup)
		pcb_cgroup_reset(c->cg);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_rep("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error_rep("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(c, dir, rep, trace, profiling ? &prof : NULL, fds[1]);
	}
	child = pid;
	if (profiling)
		pcb_profile_attach(&prof, pid);
	if (pcb_stop)			/* Ctrl-C raced the fork */
		kill(pid, SIGINT);
	close(fds[1]);

	/* the watchdog: a hung engine must not hang the suite */
	limit_ns = (uint64_t)(c->opt->duration * 1e9) * 4 + 120000000000ull;
	for (;;) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		int n = poll(&pfd, 1, 200);
		uint64_t now = pcb_now_ns();

		progress(c, rep, t0);
		if (!killed_at && now - t0 > limit_ns) {
			kill(pid, SIGINT);
			killed_at = now;
		} else if (killed_at && now - killed_at > 10000000000ull) {
			kill(pid, SIGKILL);
		}
		if (n <= 0)
			continue;
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 131072);

			if (!nb)
				break;
			buf = nb;
		}
		ssize_t got = read(fds[0], buf + len, cap - len - 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child = 0;
	pcb_rmtree(dir);

	out = NULL;
	if (buf && len) {
		buf[len] = 0;
		out = json_loads(buf, 0, NULL);
	}
	free(buf);
	if (!out)
		out = child_death(c, status);
	if (profiling)
		pcb_profile_finish(&prof, out);
	if (killed_at) {
		json_object_set_new(out, "status", json_string("error"));
		json_object_set_new(out, "reason", json_string(
			"the repetition overran its time limit and was stopped"));
	}
	json_object_set_new(out, "started_at", json_integer((json_int_t)started));
	return out;
}

/* ------------------------------------------------------------------ */

/* Does --set give any of the keys of @pairs ("k=v k2=v2")? */
static bool set_has_key(const char *sets, const char *pairs)
{
	for (const char *q = pairs; *q; q += strcspn(q, " "), q += *q == ' ') {
		size_t klen = strcspn(q, "=");

		for (const char *p = sets; *p; p += strcspn(p, " "), p += *p == ' ')
			if (strncmp(p, q, klen) == 0 && p[klen] == '=')
				return true;
	}
	return false;
}

/*
 * Does @wl run on engine @e at all?  An I/O engine always has a row (n/a
 * when it cannot serve the workload); the limit engine only where the
 * workload names it: elsewhere there is no limit to measure.
 */
static bool has_row(const struct pcb_workload *wl, int e)
{
	return e != PCB_LIMIT || (wl->engines & PCB_ENG(e));
}

/* The configs of one engine for one workload: 0 is the base. */
static int nr_configs(const struct pcb_opts *opt, const struct pcb_workload *wl,
		      int e, const char *variants[3])
{
	int n = 0;

	variants[n++] = "";
	if (e != PCB_PAGECACHE)
		return n;
	if (opt->nr_variants) {		/* --variant: the user's A/B */
		for (int i = 0; i < opt->nr_variants; i++)
			variants[n++] = opt->variants[i];
		return n;
	}
	for (int i = 0; i < 2 && wl->pc_variants[i]; i++)
		if (!set_has_key(opt->sets, wl->pc_variants[i]))
			variants[n++] = wl->pc_variants[i];
	return n;
}

static void make_names(struct run_ctx *c, int e, const char *variant)
{
	const struct pcb_opts *o = c->opt;
	char size[32], extra[PCB_MAX_SETS + 32];

	pcb_fmt_size(o->budget, size, sizeof(size));
	if (e != PCB_PAGECACHE) {
		char lim[32];

		/* the limit in force, or none */
		pcb_fmt_size(c->cg->limit, lim, sizeof(lim));
		if (c->ops->in_cgroup && c->cg->ok)
			pcb_fmt(c->config, sizeof(c->config), "memory=%s memcg.v%d.limit=%s",
				size, c->cg->version, lim);
		else if (e == PCB_LIMIT)	/* no cache: nothing to limit */
			pcb_fmt(c->config, sizeof(c->config), "memory=%s", size);
		else
			pcb_fmt(c->config, sizeof(c->config), "memory=%s memcg=none", size);
		pcb_fmt(c->label, sizeof(c->label), "%s", c->ops->name);
		return;
	}
	pcb_fmt(extra, sizeof(extra), "%s%s%s", o->sets,
		 o->sets[0] && variant[0] ? " " : "", variant);
	pcb_fmt(c->config, sizeof(c->config), "memory=%s%s%s", size,
		 extra[0] ? " " : "", extra);
	pcb_fmt(c->label, sizeof(c->label), "%s", o->label ? o->label : "pagecache");
	if (!o->label && extra[0]) {
		/* "pagecache+nodes=4,reclaim.batch_remove=1" */
		size_t l = strlen(c->label);

		pcb_fmt(c->label + l, sizeof(c->label) - l, "+%s", extra);
		for (char *p = c->label + l; *p; p++)
			if (*p == ' ')
				*p = ',';
	} else if (o->label && variant[0]) {
		size_t l = strlen(c->label);

		pcb_fmt(c->label + l, sizeof(c->label) - l, "+%s", variant);
	}
}

static int engine_rank(const char *path)
{
	/* the comparison's base first: the kernel's page cache */
	static const char *const order[] = { "-kernel", "-pagecache", "-dontcache",
					     "-direct", "-limit" };
	for (int i = 0; i < 5; i++)
		if (strstr(path, order[i]))
			return i;
	return 5;
}

static int cmp_files(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int d = engine_rank(x) - engine_rank(y);

	return d ? d : strcmp(x, y);
}

/* The memory cgroup of this budget, when a kernel engine runs. */
static void cgroup_for_budget(const struct pcb_opts *opt, struct pcb_cgroup *cg)
{
	char size[32], lim[32];
	bool need_cg = false;

	for (int e = 0; e < PCB_NR_ENGINES; e++)
		if ((opt->engines & PCB_ENG(e)) && pcb_engines[e]->in_cgroup)
			need_cg = true;
	memset(cg, 0, sizeof(*cg));
	if (!need_cg)
		return;
	pcb_fmt_size(opt->budget, size, sizeof(size));
	pcb_fmt_size(opt->budget + PCB_CGROUP_ALLOWANCE, lim, sizeof(lim));
	if (pcb_cgroup_create(cg, opt->budget + PCB_CGROUP_ALLOWANCE) == 0)
		printf("kernel engines: memory cgroup v%d %s, limit %s "
		       "(the budget, and %llu MiB for the process itself)\n",
		       cg->version, cg->dir, lim,
		       (unsigned long long)(PCB_CGROUP_ALLOWANCE >> 20));
	else
		printf("kernel engines: UNCONSTRAINED, no memory cgroup (%s): "
		       "the kernel's cache may use all memory, not %s\n",
		       cg->why, size);
}

/*
 * A program's fair budget (program.c): the kernel engines' cgroup limit is
 * the peak RSS of the same program under pagecache in this run, *peak
 * (taken before a kernel result's first repetition: pagecache's first
 * repetition's, by turns), which one unrecorded pagecache repetition
 * measures first when there is none (the pagecache engine did not run,
 * or its repetition failed).  Without it the limit stays the budget's.
 * Both figures go into the result's "fair_budget" (not its params, which
 * compare expects equal between engines).  The parent's; the cgroup empty.
 */
static json_t *program_limit(struct run_ctx *c, struct pcb_cgroup *cg,
			     uint64_t *peak)
{
	if (!*peak && !pcb_stop) {
		const struct pcb_engine_ops *ops = c->ops;
		json_t *reps = json_array();

		c->ops = pcb_engines[PCB_PAGECACHE];
		make_names(c, PCB_PAGECACHE, "");
		json_array_append_new(reps, run_rep(c, 1, NULL));
		*peak = pcb_prog_peak(reps);
		json_decref(reps);
		c->ops = ops;
	}
	if (*peak)
		pcb_cgroup_set_limit(cg, *peak);
	return json_pack("{s:I, s:I}", "pagecache_peak_rss", (json_int_t)*peak,
			 "memcg_limit", (json_int_t)cg->limit);
}

struct run_all {
	char **files;
	int nfiles;
	bool traced_note;
	json_t *machine;
};

/*
 * One result of a workload (an engine and config) while its repetitions
 * take their turns with the others'.
 */
struct slot {
	int e;
	const char *variant;		/* "" for the base config */
	bool base;			/* the base config (variant 0) */
	bool runs;			/* served and not n/a: it has repetitions */
	bool fair;			/* a program on a kernel engine, in the cgroup */
	bool fair_done;			/* its limit taken (program_limit) */
	uint64_t limit;			/* then: the cgroup's limit for its reps */
	int reps_run;
	struct pcb_result res;
};

#define MAX_SLOTS (PCB_NR_ENGINES * 3)	/* nr_configs gives at most 3 */

/* Every result of workload c->wl set up, n/a ones marked; how many. */
static int slots_setup(struct run_ctx *c, const struct pcb_cgroup *cg,
		       const struct run_all *all, struct slot *slots)
{
	const struct pcb_opts *opt = c->opt;
	int n = 0;

	for (int e = 0; e < PCB_NR_ENGINES; e++) {
		const char *variants[3];
		bool served = c->wl->engines & PCB_ENG(e);
		int nv;

		if (!(opt->engines & PCB_ENG(e)) || !has_row(c->wl, e))
			continue;
		c->ops = pcb_engines[e];
		nv = nr_configs(opt, c->wl, e, variants);
		for (int v = 0; v < nv; v++) {
			struct slot *s = &slots[n++];
			struct pcb_result *res = &s->res;

			memset(s, 0, sizeof(*s));
			s->e = e;
			s->variant = variants[v];
			s->base = v == 0;
			s->runs = served && !opt->na[e][0];
			s->fair = s->runs && pcb_is_program(c->wl) &&
				  c->ops->in_cgroup && cg->ok;
			make_names(c, e, s->variant);
			pcb_result_init(res, c->wl, c->ops->name, c->label,
					c->config, c->par, all->machine,
					c->ops->in_cgroup ? cg->ok : true);
			if (opt->nr_budgets > 1)
				pcb_fmt_size(opt->budget, res->budget,
					     sizeof(res->budget));
			if (!served)
				pcb_result_set_status(res, "n/a", c->wl->na_reason);
			else if (opt->na[e][0])
				pcb_result_set_status(res, "n/a", opt->na[e]);
		}
	}
	return n;
}

/*
 * The @k-th repetition of a workload whose @nr results run @reps times
 * each: which result (*slot) and which repetition (*rep, from 1).
 */
static void schedule(const struct pcb_opts *opt, int nr, int k, int *slot,
		     int *rep)
{
	if (opt->order == PCB_ORDER_TURNS) {
		int turn = k / nr, i = k % nr;

		/* Every other turn backwards: A1 B1, B2 A2, A3 B3. */
		*slot = turn % 2 ? nr - 1 - i : i;
		*rep = turn + 1;
	} else {
		*slot = k / opt->reps;
		*rep = k % opt->reps + 1;
	}
}

/*
 * Repetition @rep of result @s: its engine and names in c, a program's
 * fair limit in the cgroup for it (taken the first time, program_limit)
 * and the budget's back after it; *peak follows pagecache's base result.
 */
static void slot_rep(struct run_ctx *c, struct pcb_cgroup *cg,
		     struct run_all *all, struct slot *s, int rep,
		     uint64_t *peak)
{
	const struct pcb_opts *opt = c->opt;
	struct pcb_result *res = &s->res;
	char trace[600], *tr = NULL;

	c->ops = pcb_engines[s->e];
	if (s->fair && !s->fair_done) {
		json_object_set_new(res->root, "fair_budget",
				    program_limit(c, cg, peak));
		s->limit = cg->limit;
		s->fair_done = true;
	} else if (s->fair && cg->limit != s->limit) {
		pcb_cgroup_set_limit(cg, s->limit);
	}
	make_names(c, s->e, s->variant);
	if (s->fair)	/* the limit in force, not the budget's */
		json_object_set_new(res->root, "config", json_string(c->config));
	if (opt->trace && s->e == PCB_PAGECACHE) {
		pcb_fmt(trace, sizeof(trace), "%s-%s%s%s-rep%d.trace",
			c->wl->name, c->label, res->budget[0] ? "-" : "",
			res->budget, rep);
		for (char *p = trace; *p; p++)
			if (*p == '/' || *p == ' ')
				*p = '_';
		tr = trace;
		if (rep == 1)
			json_object_set_new(res->root, "trace", json_string(trace));
	} else if (opt->trace && !all->traced_note) {
		printf("--trace: only the pagecache engine records traces\n");
		all->traced_note = true;
	}
	pcb_result_add_rep(res, run_rep(c, rep, tr));
	c->reps_done++;
	s->reps_run++;
	if (pcb_is_program(c->wl) && s->e == PCB_PAGECACHE && s->base) {
		uint64_t p = pcb_prog_peak(res->reps);

		if (p > *peak)
			*peak = p;
	}
	if (cg->ok && cg->limit != opt->budget + PCB_CGROUP_ALLOWANCE)
		pcb_cgroup_set_limit(cg, opt->budget + PCB_CGROUP_ALLOWANCE);
}

/*
 * Write result @s and print its summary line; 1 if it failed.  A result
 * whose first turn a Ctrl-C took away has nothing to say: not written.
 */
static int slot_finish(const struct run_ctx *c, struct run_all *all,
		       struct slot *s)
{
	struct pcb_result *res = &s->res;
	int rc = 0;

	if (s->runs && !s->reps_run) {
		pcb_result_free(res);
		return 0;
	}
	if (pcb_result_write(res, c->opt->out) < 0) {
		fprintf(stderr, "pagecache bench: cannot write %s\n", res->path);
		rc = 1;
	} else if (json_array_size(res->reps)) {
		all->files[all->nfiles++] = strdup(res->path);
		all->files = realloc(all->files,
				     (size_t)(all->nfiles + 1) * sizeof(char *));
		all->files[all->nfiles] = NULL;
	}
	if (res->any_error)
		rc = 1;
	pcb_result_summary(res, stdout);
	fflush(stdout);
	pcb_result_free(res);
	return rc;
}

/*
 * Every workload x engine x config at the budget c->opt->budget: per
 * workload its results set up, their repetitions in the order of
 * schedule() (by turns), then every result written.
 */
static int run_budget(struct run_ctx *c, struct run_all *all)
{
	const struct pcb_opts *opt = c->opt;
	struct pcb_cgroup cg;
	int rc = 0;

	cgroup_for_budget(opt, &cg);
	c->cg = &cg;
	for (int w = 0; w < opt->nr_workloads && !pcb_stop; w++) {
		struct pcb_params par = { 0 };
		struct slot slots[MAX_SLOTS];
		uint64_t peak = 0;	/* a program's, under pagecache */
		int nr, base = c->index;

		c->wl = pcb_workload(opt->workloads[w]);
		c->wl->params(&par, opt);
		c->par = &par;
		nr = slots_setup(c, &cg, all, slots);
		for (int k = 0; k < nr * opt->reps && !pcb_stop; k++) {
			int i, rep;

			schedule(opt, nr, k, &i, &rep);
			if (!slots[i].runs)
				continue;
			c->index = base + i + 1;
			slot_rep(c, &cg, all, &slots[i], rep, &peak);
		}
		c->index = base + nr;
		progress_clear(opt);
		for (int i = 0; i < nr; i++)
			if (slot_finish(c, all, &slots[i]))
				rc = 1;
	}
	pcb_cgroup_destroy(&cg);
	c->cg = NULL;
	return rc;
}

int pcb_run_all(const struct pcb_opts *opt, char ***files_out)
{
	struct pcb_opts ob = *opt;	/* the budget in force */
	struct run_ctx c = { .opt = &ob, .t_start = pcb_now_ns() };
	struct run_all all = { .files = calloc(1, sizeof(char *)) };
	char root[1024];
	int rc = 0;

	pcb_fmt(root, sizeof(root), "%s/pagecache-bench.%d", opt->dir, (int)getpid());
	c.root = root;
	if (pcb_mkdir(root) < 0) {
		fprintf(stderr, "pagecache bench: cannot make %s: %s\n", root,
			strerror(errno));
		free(all.files);
		return 1;
	}
	all.machine = pcb_machine(opt->dir);
	catch(on_signal);

	for (int b = 0; b < opt->nr_budgets; b++) {
		ob.budget = opt->budgets[b];
		for (int w = 0; w < opt->nr_workloads; w++)
			for (int e = 0; e < PCB_NR_ENGINES; e++) {
				const char *v[3];
				const struct pcb_workload *wl =
					pcb_workload(opt->workloads[w]);
				int n;

				if (!(opt->engines & PCB_ENG(e)) || !has_row(wl, e))
					continue;
				n = nr_configs(opt, wl, e, v);
				c.total += n;
				if ((wl->engines & PCB_ENG(e)) && !opt->na[e][0])
					c.reps_total += n * opt->reps;
			}
	}
	printf("%-18s %-22s %-16s %-4s %-23s %s\n", "workload", "label",
	       "metric", "", "      mean ± stddev", "reps");
	for (int b = 0; b < opt->nr_budgets && !pcb_stop; b++) {
		int r;

		ob.budget = opt->budgets[b];
		r = run_budget(&c, &all);
		if (r && !rc)
			rc = r;
	}
	progress_clear(opt);
	pcb_rmtree(root);
	json_decref(all.machine);
	printf("results: %s (%.0f s)\n", opt->out, pcb_secs(pcb_now_ns() - c.t_start));
	if (pcb_stop) {
		printf("interrupted: the last result is partial; test files removed\n");
		rc = 130;
	}
	qsort(all.files, (size_t)all.nfiles, sizeof(char *), cmp_files);
	if (files_out)
		*files_out = all.files;
	else
		pcb_free_files(all.files);
	return rc;
}

void pcb_free_files(char **files)
{
	for (char **f = files; f && *f; f++)
		free(*f);
	free(files);
}
