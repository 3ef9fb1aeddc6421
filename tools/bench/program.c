/*
 * tools/bench/program.c - real programs as workloads: fio, db_bench and
 * sqlite3, unmodified, run as a child of the repetition (docs/workloads.md,
 * "Real programs").
 *
 * A program workload (wl_fio.c, wl_rocksdb.c, wl_sqlite.c) names its
 * program, the program's Debian package and how its files are made in
 * `.program` of its struct pcb_workload; pcb_prog_prepare finds the one
 * and makes the others.  It does no I/O of its own: the engine is how its
 * program runs.
 *
 *   pagecache   pagecache exec --cache bench-PID-N --stats FILE --set
 *               memory=B [--set ...] -- PROGRAM ...   (this binary's own
 *               exec subcommand): the program's regular files go through
 *               a shared cache of the run's own (made with its budget, in
 *               its cache process), one for all the program's
 *               processes.  The engine here is pcb_engine_exec
 *               (engine_exec.c): no cache in the repetition, its counters
 *               and samples those the program's processes leave and
 *               publish.
 *   kernel      the program itself, moved into the memory cgroup between
 *   direct      fork and exec (only the program is charged: not the
 *               repetition that watches it).  direct: the program asked
 *               for O_DIRECT (fio's direct=1); others have no direct mode.
 *
 * The fair budget (runner.c): the cgroup's limit for a program workload
 * is the largest peak RSS ("peak-rss-MiB": wait4's ru_maxrss) of the same
 * program under pagecache in the same run, less the file pages it maps
 * ("file-rss-MiB": its binary and libraries, the largest RssFile seen in
 * its tree): its own memory plus the cache it filled.  So both engines get
 * the same total memory, whatever the program keeps for itself
 * (memtables, block cache, SQLite's cache).  The mapped files are left out
 * because the kernel's cgroup is not charged for them either: they were
 * in the kernel's cache before the program started.  Counting them gave
 * the kernel's fio-randread 278 MiB of its file's pages against
 * pagecache's 251 MiB at a 256M budget.
 *
 * Files a program reads (fio's file, the RocksDB and SQLite databases)
 * are prepared once per run and budget, by the program itself without any
 * cache or cgroup, in <root>/prep-<workload>-<budget bytes>/ beside the
 * repetitions' folders (runner.c removes the root at the end); a ".done"
 * file marks a preparation that finished.  Each run drops the kernel's
 * cache of them first.  The program's stdout and stderr go to files in
 * the repetition's folder, parsed when it has exited.
 *
 * Steady state: a program workload warms up inside its own run (under
 * pagecache the cache is in its process, and dies with it), and says
 * when the warm-up is over: a file it makes (struct pcb_prog's
 * steady_file: fio's exec_prerun, sqlite3's .output) or a line it prints
 * (steady_text: db_bench's report of its warm-up pass).  The wait loop
 * looks every POLL_NS and calls pcb_steady() there (or at the warm-up's
 * cap, said in "warmup": the program goes on); pcb_counters() then adds
 * the running program's device I/O (/proc/PID/io of r->prog_pid and its
 * live descendants), which is ours only once it is reaped.
 *
 * Stopping: at the repetition's deadline (when asked: the untimed
 * programs' cap) or on Ctrl-C the program gets SIGINT (fio and sqlite3
 * stop and report what they did), then SIGKILL 10 s later.  It dies with
 * the repetition (PR_SET_PDEATHSIG) if the watchdog kills that.
 *
 * Everything here runs in the repetition's main thread, while its sampler
 * thread runs: so the child does nothing between fork and exec but
 * async-signal-safe system calls (its signals, cgroup, dup2, chdir,
 * execve, _exit); the program's path, the command line, its environment
 * and the messages are made before the fork (struct child_plan).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define KILL_AFTER_NS	(10 * 1000000000ull)	/* SIGINT, then SIGKILL */
#define POLL_NS		(20 * 1000000ull)
#define RSS_EVERY	12		/* polls between looks at RssFile */

/* ------------------------------------------------------------------ */
/* Programs: found, files prepared once, run, output read.             */

/* @name's path on PATH into @buf (or @name itself if it has a '/'); false
 * if not found. */
static bool find_program(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		pcb_fmt(buf, len, "%s", name);
		return access(buf, X_OK) == 0;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		pcb_fmt(buf, len, "%.*s/%s", (int)n, p, name);
		if (n && access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	buf[0] = 0;
	return false;
}

static const char *prep_dir(const struct pcb_run *r, char *buf, size_t len)
{
	/* the repetition's folder is <root>/<n> (runner.c) */
	pcb_fmt(buf, len, "%s/../prep-%s-%llu", r->dir, r->wl->name,
		(unsigned long long)pcb_param(r->par, "budget"));
	return buf;
}

/* The files of .program.make, once per run and budget, into r->prep. */
static int prep_files(struct pcb_run *r)
{
	char *dir = r->prep, done[1200], abs[PATH_MAX];
	size_t len = sizeof(r->prep);
	int err, fd;

	prep_dir(r, dir, len);
	pcb_fmt(done, sizeof(done), "%s/.done", dir);
	if (access(done, F_OK) == 0)
		goto absolute;
	pcb_rmtree(dir);		/* a preparation that did not finish */
	if ((err = pcb_mkdir(dir)) < 0)
		return pcb_fail(r, err, "cannot make %s: %s", dir, strerror(-err));
	err = r->wl->program.make(r, dir);
	if (err < 0)
		return err;
	sync();				/* the files on the disk, not dirty */
	fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return pcb_fail(r, -errno, "cannot make %s", done);
	close(fd);
absolute:
	/* the programs run in the repetition's folder: give them full paths */
	if (!realpath(dir, abs))
		return pcb_fail(r, -errno, "%s: %s", dir, strerror(errno));
	pcb_fmt(dir, len, "%s", abs);
	pcb_drop_cache(dir);
	return 0;
}

int pcb_prog_prepare(struct pcb_run *r)
{
	const struct pcb_program *prog = &r->wl->program;
	char path[PATH_MAX];

	r->prep[0] = 0;
	if (!find_program(prog->name, path, sizeof(path)))
		return pcb_fail(r, -EOPNOTSUPP, "%s is not installed: "
				"scripts/deps.sh installs it (apt-get install %s)",
				prog->name, prog->package);
	return prog->make ? prep_files(r) : 0;
}

/* Open @path (relative: to our working directory) close-on-exec; the fd
 * or -errno. */
static int open_in(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	return fd < 0 ? -errno : fd;
}

/*
 * What the child does, all of it made before the fork: between fork and
 * exec only async-signal-safe calls (the repetition's sampler thread may
 * hold any lock of libc's when it forks).
 */
struct child_plan {
	char *const *argv;
	char **envp;			/* environ, or ours plus PAGECACHE_LIVE */
	char path[PATH_MAX];		/* argv[0] found on PATH, or "" */
	const char *dir;		/* its working directory */
	char procs[600];		/* the cgroup's cgroup.procs, or "" */
	char no_cgroup[700];		/* messages for its stderr */
	char no_run[PATH_MAX + 64];
	int in, out, err;
};

/* @msg, then ": errno N\n", with write(2) only. */
static void child_say(int fd, const char *msg, int e)
{
	char num[16], *p = num + sizeof(num);

	*--p = '\n';
	do
		*--p = (char)('0' + e % 10);
	while ((e /= 10) && p > num + 1);
	if (write(fd, msg, strlen(msg)) < 0 || write(fd, ": errno ", 8) < 0 ||
	    write(fd, p, (size_t)(num + sizeof(num) - p)) < 0)
		return;
}

/* The child: its cgroup, its files, then the program.  Never returns. */
static void __attribute__((noreturn)) child(const struct child_plan *c)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	if (c->procs[0]) {		/* "0": the writer itself */
		int fd = open(c->procs, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1) {
			child_say(c->err, c->no_cgroup, errno);
			_exit(126);
		}
		close(fd);
	}
	if (dup2(c->in, 0) < 0 || dup2(c->out, 1) < 0 || dup2(c->err, 2) < 0)
		_exit(126);
	if (chdir(c->dir) < 0)
		_exit(126);
	if (c->path[0])
		execve(c->path, c->argv, c->envp);
	else
		errno = ENOENT;
	child_say(2, c->no_run, errno);
	_exit(errno == ENOENT ? 127 : 126);
}

/*
 * The full command line: under pagecache, through `pagecache exec`.  A
 * program that starts with a change of user (setpriv ... --, as
 * pgbench-tpcb's does when run as root) has it first: a process that
 * changes its credentials leaves the shared cache (preload/process.c), so
 * the change is made before the cache, which is then that user's.
 */
static char **command(const struct pcb_run *r, struct pcb_prog *p,
		      char *pairs)
{
	size_t n = 0, cap = 16;
	char *const *rest = p->argv;
	char **argv;

	for (char *const *a = p->argv; *a; a++)
		cap++;
	for (const char *c = r->config; *c; c++)
		cap += *c == ' ' ? 2 : 0;
	cap += 2;
	argv = calloc(cap, sizeof(*argv));
	if (!argv)
		return NULL;
	if (p->mode == PCB_PROG_PAGECACHE && !strcmp(p->argv[0], "setpriv")) {
		while (*rest && strcmp(*rest, "--"))
			argv[n++] = *rest++;
		if (*rest)
			argv[n++] = *rest++;	/* the "--" */
	}
	if (p->mode == PCB_PROG_PAGECACHE) {
		static char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *save, *tok;

		if (len <= 0) {
			free(argv);
			return NULL;
		}
		self[len] = 0;
		argv[n++] = self;
		argv[n++] = "exec";
		/* A cache of the run's own, made with its budget: the user's
		 * default one may be there already, with another. */
		static char cache[48];
		static unsigned runs;

		snprintf(cache, sizeof(cache), "bench-%d-%u", (int)getpid(),
			 ++runs);
		argv[n++] = "--cache";
		argv[n++] = cache;
		argv[n++] = "--stats";
		argv[n++] = p->stats;
		/* "memory=256M nodes=4": every pair as --set */
		for (tok = strtok_r(pairs, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save)) {
			argv[n++] = "--set";
			argv[n++] = tok;
		}
		argv[n++] = "--";
	}
	for (char *const *a = rest; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	return argv;
}

/* environ with PAGECACHE_LIVE=@dir (malloc'd, the strings environ's but
 * @var); NULL if out of memory. */
static char **live_env(const char *dir, char *var, size_t len)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PAGECACHE_LIVE=", 15))
			envp[k++] = environ[i];
	pcb_fmt(var, len, "PAGECACHE_LIVE=%s", dir);
	envp[k] = var;
	return envp;
}

/* The last line of a file, for a message (at most @len - 1 bytes). */
static void last_line(const char *path, char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			pcb_fmt(buf, len, "%s", line);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* Has the program said its warm-up is over: @file there, or its
 * steady_text in its stdout so far? */
static bool steady_seen(const struct pcb_prog *p, const char *file)
{
	bool seen = false;
	char *text;

	if (p->steady_file)
		return access(file, F_OK) == 0;
	if ((text = pcb_prog_slurp(p->out))) {
		seen = strstr(text, p->steady_text) != NULL;
		free(text);
	}
	return seen;
}

/*
 * The largest RssFile of a process in @root's tree, into *@most: the file
 * pages it maps (its binary, its libraries).  They are the kernel's page
 * cache under either engine and charged to neither budget - the kernel's
 * cgroup does not charge pages that were cached before the program came -
 * so the fair budget leaves them out (pcb_prog_peak).
 */
static void sample_file_rss(pid_t root, uint64_t *most)
{
	static pid_t pid[PCB_TREE_MAX];
	int n = pcb_tree_pids(root, pid, PCB_TREE_MAX);

	for (int i = 0; i < n; i++) {
		char path[64], line[128];
		unsigned long long kb;
		FILE *f;

		pcb_fmt(path, sizeof(path), "/proc/%d/status", (int)pid[i]);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "RssFile: %llu kB", &kb) == 1) {
				if ((uint64_t)kb << 10 > *most)
					*most = (uint64_t)kb << 10;
				break;
			}
		fclose(f);
	}
}

int pcb_prog_run(struct pcb_run *r, struct pcb_prog *p)
{
	char *pairs = strdup(r->config ? r->config : ""), **argv = NULL;
	static struct child_plan plan;	/* large: not on the stack */
	static char live_var[1200];
	char **envp = NULL, steady[1200];
	int in = -1, out = -1, errf = -1, err = 0;
	bool warm = !p->plain && r->warming && (p->steady_file || p->steady_text);
	uint64_t t0, sent = 0;
	unsigned polls = 0;
	struct rusage ru;
	pid_t pid = -1;

	p->mode = p->plain ? PCB_PROG_KERNEL : pcb_prog_mode(r);
	pcb_path(r, p->out, sizeof(p->out), "%s.out", p->name);
	pcb_path(r, p->err, sizeof(p->err), "%s.err", p->name);
	pcb_path(r, p->stats, sizeof(p->stats), "%s.stats", p->name);
	if (p->steady_file)
		pcb_path(r, steady, sizeof(steady), "%s", p->steady_file);
	p->stopped = false;
	if (!pairs || !(argv = command(r, p, pairs))) {
		err = pcb_fail(r, -ENOMEM, "cannot build %s's command line",
			       p->name);
		goto out;
	}
	if ((in = open_in(p->stdin_path ? p->stdin_path : "/dev/null",
			  O_RDONLY)) < 0 ||
	    (out = open_in(p->out, O_WRONLY | O_CREAT | O_TRUNC)) < 0 ||
	    (errf = open_in(p->err, O_WRONLY | O_CREAT | O_TRUNC)) < 0) {
		err = pcb_fail(r, in < 0 ? in : out < 0 ? out : errf,
			       "cannot open %s's files", p->name);
		goto out;
	}
	plan.argv = argv;
	plan.envp = environ;
	if (p->mode == PCB_PROG_PAGECACHE &&
	    !(plan.envp = envp = live_env(pcb_exec_live_dir(r), live_var,
					  sizeof(live_var)))) {
		err = pcb_fail(r, -ENOMEM, "cannot build %s's environment",
			       p->name);
		goto out;
	}
	find_program(argv[0], plan.path, sizeof(plan.path));
	plan.dir = r->dir;
	plan.procs[0] = 0;
	if (!p->plain && p->mode != PCB_PROG_PAGECACHE && r->cgroup)
		pcb_fmt(plan.procs, sizeof(plan.procs), "%s/cgroup.procs",
			r->cgroup);
	pcb_fmt(plan.no_cgroup, sizeof(plan.no_cgroup),
		"cannot enter the memory cgroup %s", r->cgroup ? r->cgroup : "");
	pcb_fmt(plan.no_run, sizeof(plan.no_run), "cannot run %s", argv[0]);
	plan.in = in;
	plan.out = out;
	plan.err = errf;
	fflush(NULL);
	t0 = pcb_now_ns();
	pid = fork();
	if (pid < 0) {
		err = pcb_fail(r, -errno, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(&plan);
	r->prog_pid = pid;
	p->file_rss = 0;

	for (;;) {
		struct timespec ts = { 0, (long)POLL_NS };
		int status;
		pid_t w = wait4(pid, &status, WNOHANG, &ru);

		if (w == pid) {
			p->status = status;
			break;
		}
		if (w < 0 && errno != EINTR) {
			err = pcb_fail(r, -errno, "wait4: %s", strerror(errno));
			break;
		}
		if (warm && (steady_seen(p, steady) || pcb_time_up(r))) {
			/* the program's warm-up is over (or over its cap, said
			 * in "warmup": it goes on under the measured part's) */
			if (pcb_time_up(r) && !pcb_stop)
				r->capped = true;
			pcb_steady(r);
			warm = false;
		}
		if (!sent && (pcb_stop || (p->stop_at_deadline && pcb_time_up(r)))) {
			kill(pid, SIGINT);
			sent = pcb_now_ns();
			p->stopped = true;
		} else if (sent && pcb_now_ns() - sent > KILL_AFTER_NS) {
			kill(pid, SIGKILL);
		}
		if (polls++ % RSS_EVERY == 1)
			sample_file_rss(pid, &p->file_rss);
		nanosleep(&ts, NULL);
	}
	p->secs = pcb_secs(pcb_now_ns() - t0);
	r->prog_pid = 0;
	if (err)
		goto out;
	p->maxrss = (uint64_t)ru.ru_maxrss << 10;
	if (p->mode == PCB_PROG_PAGECACHE)
		pcb_exec_add_stats(r, p->stats);
	if (!p->plain) {
		pcb_metric(r, "peak-rss-MiB", (double)p->maxrss / (1 << 20));
		pcb_direction(r, "peak-rss-MiB", false);
		pcb_metric(r, "file-rss-MiB", (double)p->file_rss / (1 << 20));
		pcb_direction(r, "file-rss-MiB", false);
		pcb_metric(r, "program-seconds", p->secs);
		pcb_direction(r, "program-seconds", false);
		/* user- and sys-seconds are the repetition's: it only waits */
		pcb_metric(r, "program-user-seconds",
			   (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
		pcb_direction(r, "program-user-seconds", false);
		pcb_metric(r, "program-sys-seconds",
			   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
		pcb_direction(r, "program-sys-seconds", false);
	}
	if (!p->stopped && !(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0)) {
		char line[200];

		last_line(p->err, line, sizeof(line));
		if (WIFSIGNALED(p->status))
			err = pcb_fail(r, -EIO, "%s was killed by signal %d%s: %s",
				       p->name, WTERMSIG(p->status),
				       WTERMSIG(p->status) == SIGKILL && r->cgroup ?
				       " (the cgroup's OOM killer?)" : "", line);
		else
			err = pcb_fail(r, -EIO, "%s exited with %d: %s", p->name,
				       WEXITSTATUS(p->status), line);
	}
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (errf >= 0)
		close(errf);
	free(envp);
	free(argv);
	free(pairs);
	return err;
}

void pcb_arg(struct pcb_args *a, const char *fmt, ...)
{
	size_t room = sizeof(a->store) - a->used;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(a->store + a->used, room, fmt, ap);
	va_end(ap);
	/* the command lines are ours and small: too long is a bug */
	if (n < 0 || (size_t)n >= room || a->n + 1 >= (int)(sizeof(a->v) /
							      sizeof(a->v[0]))) {
		fprintf(stderr, "pagecache bench: command line too long\n");
		abort();
	}
	a->v[a->n++] = a->store + a->used;
	a->v[a->n] = NULL;
	a->used += (size_t)n + 1;
}

char *pcb_prog_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 131072);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = 0;
	return buf;
}

uint64_t pcb_prog_peak(json_t *reps)
{
	double peak = 0;
	size_t i;
	json_t *rep;

	json_array_foreach(reps, i, rep) {
		json_t *ms = json_object_get(rep, "metrics");
		json_t *m = json_object_get(ms, "peak-rss-MiB");
		json_t *file = json_object_get(ms, "file-rss-MiB");
		const char *status = json_string_value(json_object_get(rep,
								       "status"));
		double v;

		if (status && strcmp(status, "ok") != 0)
			continue;	/* a program that died early: no peak */
		if (!json_is_number(m))
			continue;
		v = json_number_value(m);
		if (json_is_number(file) && json_number_value(file) < v)
			v -= json_number_value(file);
		if (v > peak)
			peak = v;
	}
	return (uint64_t)(peak * (1 << 20));
}
