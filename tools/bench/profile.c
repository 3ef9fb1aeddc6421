/*
 * tools/bench/profile.c - `--profile`: a perf cpu-clock profile of each
 * repetition's measured part, kept as LKP keeps it.
 *
 *   parent                               child (the repetition)
 *   ------                               ----------------------
 *   mkfifo N.perf-ctl, N.perf-ack
 *   fork ─────────────────────────────>  prepare the files
 *   perf record -e cpu-clock -p CHILD    pcb_profile_ctl("disable"): waits
 *        -D -1 (events off)                for perf's ack = attached
 *                                          start the engine
 *        --control fifo:ctl,ack            "enable"  ─┐ ack
 *                                          measured part
 *                                          "disable" ─┘ ack
 *   waitpid(child), then perf               stop the engine, exit
 *   (it ends with its target)
 *   perf script -F pid,ip,sym -> samples summed by symbol: the top
 *   PCB_PROFILE_TOP into the repetition's metrics, "perf-profile.self.
 *   cycles-pp.SYMBOL": percent of the samples (LKP's names), and its
 *   "profile" object.
 *
 * perf runs as the parent's child, so it is outside the memory cgroup the
 * kernel engines run in (its buffers are not charged to their budget), and
 * it follows every thread of the repetition: those alive at attach, which
 * happens before the engine starts, and all they create, processes too
 * (perf's events are inherited across fork and exec).  So a program
 * workload's program (program.c), forked by the repetition in its
 * measured part, is followed with all it forks; its profile keeps the
 * samples of processes other than the repetition's (whose main thread
 * only waits and whose sampler reads counters): "processes" says how many
 * each had, "runner_samples" how many were left out.  Its start-up
 * (half a second on a busy machine) overlaps the making of the files; its
 * report costs a few tenths of a second per repetition after it.  This VM has no
 * hardware counters; cpu-clock is a timer, so the "cycles" of the names
 * are samples of CPU time.  Kernel symbols are resolved through
 * /proc/kallsyms: the kernel engine's profile is mostly kernel functions,
 * pagecache's mostly its own.
 *
 * perf is PC_PERF when set, else perf on PATH; it runs without a shell.
 *
 * Nothing here is fatal: a perf that is missing or refuses (perf_event_
 * paranoid, no permission) is found by pcb_profile_probe before the run,
 * said once, and the run goes on without profiles; a repetition whose
 * perf fails gets "profile": {"error": ...} and its figures all the same.
 * The parent is single-threaded; the child's half only writes to fifos.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define PERF_FREQ	"4000"		/* samples per second of CPU time */
#define ACK_TIMEOUT_MS	10000		/* perf's attach under load */
#define EXIT_TIMEOUT_MS	10000		/* perf writing its file */

static const char *perf_bin(void)
{
	const char *p = getenv("PC_PERF");

	return p && *p ? p : "perf";
}

/* Start argv with stdout and stderr to @log (or /dev/null); its pid. */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(log ? log : "/dev/null",
			      O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		signal(SIGINT, SIG_DFL);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	int status = 0;

	for (int waited = 0;; waited += 20) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return status;
		if (w < 0 && errno != EINTR)
			return -1;
		if (waited == timeout_ms)
			kill(pid, SIGINT);
		if (waited == 2 * timeout_ms)
			kill(pid, SIGKILL);
		usleep(20000);
	}
}

/* The first line of a log file, for a message. */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

int pcb_profile_probe(const char *dir, char *why, size_t len)
{
	char data[1100], log[1100];
	char *argv[] = { (char *)perf_bin(), "record", "-e", "cpu-clock", "-q",
			 "-B", "-N", "--no-bpf-event", "-o", data, "--", "true",
			 NULL };
	pid_t pid;
	int status;

	pcb_fmt(data, sizeof(data), "%s/pagecache-perf-probe.%d.data", dir,
		(int)getpid());
	pcb_fmt(log, sizeof(log), "%s.log", data);
	pid = spawn(argv, log);
	status = pid < 0 ? -1 : wait_exit(pid, EXIT_TIMEOUT_MS);
	if (status != 0) {
		char line[200];

		first_line(log, line, sizeof(line));
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			pcb_fmt(why, len, "%s not found (Debian package "
				"linux-perf)", perf_bin());
		else
			pcb_fmt(why, len, "%s record fails here: %s", perf_bin(),
				line[0] ? line : "no message");
	}
	unlink(data);
	unlink(log);
	return status == 0 ? 0 : -ENOENT;
}

/* ------------------------------------------------------------------ */
/* The parent's half.                                                  */

void pcb_profile_paths(struct pcb_profile *p, const char *root, int rep)
{
	pcb_fmt(p->ctl, sizeof(p->ctl), "%s/%d.perf-ctl", root, rep);
	pcb_fmt(p->ack, sizeof(p->ack), "%s/%d.perf-ack", root, rep);
	pcb_fmt(p->data, sizeof(p->data), "%s/%d.perf.data", root, rep);
	pcb_fmt(p->log, sizeof(p->log), "%s/%d.perf.log", root, rep);
	p->pid = 0;
}

int pcb_profile_prepare(struct pcb_profile *p)
{
	unlink(p->ctl);
	unlink(p->ack);
	if (mkfifo(p->ctl, 0600) < 0 || mkfifo(p->ack, 0600) < 0)
		return -errno;
	return 0;
}

void pcb_profile_attach(struct pcb_profile *p, pid_t target)
{
	char pid[32], control[2300];
	/* no build-ids, no ~/.debug cache, no BPF side band: a second less
	 * per repetition on a busy machine; the report is made here, at once */
	char *argv[] = { (char *)perf_bin(), "record", "-e", "cpu-clock",
			 "-F", PERF_FREQ, "-p", pid, "-o", p->data, "-D", "-1",
			 "--control", control, "-q", "-B", "-N",
			 "--no-bpf-event", NULL };

	p->target = target;
	pcb_fmt(pid, sizeof(pid), "%d", (int)target);
	pcb_fmt(control, sizeof(control), "fifo:%s,%s", p->ctl, p->ack);
	p->pid = spawn(argv, p->log);
}

/* One symbol of the report, summed over processes. */
struct sym {
	char name[256];
	long n;
	bool kernel;
};

struct syms {
	struct sym *v;
	size_t n, cap;
	long total;			/* samples counted */
	long runner;			/* the repetition's own, left out */
	json_t *procs;			/* pid -> samples */
};

static void syms_add(struct syms *s, const char *name, long n, bool kernel)
{
	size_t i;

	s->total += n;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))	/* one metric a name */
			break;
	if (i == s->n) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 256;
			struct sym *v = realloc(s->v, cap * sizeof(*v));

			if (!v)
				return;
			s->v = v;
			s->cap = cap;
		}
		pcb_fmt(s->v[i].name, sizeof(s->v[i].name), "%s", name);
		s->v[i].n = 0;
		s->v[i].kernel = kernel;
		s->n++;
	}
	s->v[i].n += n;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

/*
 * One sample of perf script's "-F pid,ip,sym", into @s:
 *   "15223      7f087b2f1356 __GI___libc_write"
 * A program workload's (p->program) samples of the repetition itself
 * (p->target: its main thread, its sampler) are counted apart: the
 * program's processes are the others.
 */
static void parse_line(const struct pcb_profile *p, const char *line,
		       struct syms *s)
{
	char name[256], key[32];
	unsigned long long ip;
	long pid;
	char *end;
	size_t len;

	pid = strtol(line, &end, 10);
	if (end == line || *end != ' ')
		return;
	ip = strtoull(end, &end, 16);
	if (*end != ' ')
		return;
	pcb_fmt(name, sizeof(name), "%s", end + strspn(end, " "));
	name[strcspn(name, "\n")] = 0;
	for (len = strlen(name); len > 0 && name[len - 1] == ' '; len--)
		name[len - 1] = 0;
	if (p->program && pid == p->target) {
		s->runner++;
		return;
	}
	if (p->program) {
		json_t *n;

		pcb_fmt(key, sizeof(key), "%ld", pid);
		n = json_object_get(s->procs, key);
		json_object_set_new(s->procs, key, json_integer(
			(n ? json_integer_value(n) : 0) + 1));
	}
	/* unresolved addresses say nothing across repetitions: counted,
	 * not named */
	syms_add(s, name[0] && strcmp(name, "[unknown]") ? name : "",
		 1, ip >> 63);
}

/* perf script's samples of one data file: {"samples", "top": [...]}, the
 * top symbols by their share of the samples (and of a program's,
 * "processes": pid -> samples, and "runner_samples", left out).  Its
 * text goes to the log file (perf record is done with it). */
static json_t *report(const struct pcb_profile *p, char *why, size_t len)
{
	char line[1024];
	char *argv[] = { (char *)perf_bin(), "script", "-i", (char *)p->data,
			 "-F", "pid,ip,sym", "-f", NULL };
	struct syms s = { .procs = json_object() };
	json_t *top, *out;
	pid_t pid = spawn(argv, p->log);
	int status = pid < 0 ? -1 : wait_exit(pid, EXIT_TIMEOUT_MS);
	FILE *f = status == 0 ? fopen(p->log, "re") : NULL;

	if (!f) {
		pcb_fmt(why, len, "perf script failed (status %d)", status);
		json_decref(s.procs);
		return NULL;
	}
	while (fgets(line, sizeof(line), f))
		parse_line(p, line, &s);
	fclose(f);
	if (!s.total) {
		pcb_fmt(why, len, p->program && s.runner ?
			"perf found no samples of the program" :
			"perf found no samples");
		free(s.v);
		json_decref(s.procs);
		return NULL;
	}
	qsort(s.v, s.n, sizeof(*s.v), sym_cmp);
	top = json_array();
	for (size_t i = 0; i < s.n && json_array_size(top) < PCB_PROFILE_TOP; i++) {
		if (!s.v[i].name[0])
			continue;
		json_array_append_new(top, json_pack("{s:s, s:f, s:b}",
			"symbol", s.v[i].name,
			"pct", round(10000.0 * (double)s.v[i].n / (double)s.total) / 100,
			"kernel", s.v[i].kernel));
	}
	out = json_pack("{s:I, s:o}", "samples", (json_int_t)s.total, "top", top);
	if (p->program) {
		json_object_set_new(out, "processes", s.procs);
		json_object_set_new(out, "runner_samples",
				    json_integer((json_int_t)s.runner));
	} else {
		json_decref(s.procs);
	}
	free(s.v);
	return out;
}

void pcb_profile_finish(struct pcb_profile *p, json_t *rep)
{
	json_t *prof = NULL, *metrics = json_object_get(rep, "metrics");
	char why[300] = "";
	int status;

	if (!p->pid)
		return;
	if (p->pid < 0) {
		pcb_fmt(why, sizeof(why), "cannot start perf");
	} else {
		status = wait_exit(p->pid, EXIT_TIMEOUT_MS);
		if (status != 0) {
			char l[200];

			first_line(p->log, l, sizeof(l));
			pcb_fmt(why, sizeof(why), "perf record failed: %s",
				l[0] ? l : "no message");
		}
	}
	if (!why[0] && json_is_object(metrics))
		prof = report(p, why, sizeof(why));
	if (prof) {
		size_t i;
		json_t *s;

		json_array_foreach(json_object_get(prof, "top"), i, s) {
			char name[600];

			pcb_fmt(name, sizeof(name), "%s%s", PCB_PROFILE_PREFIX,
				json_string_value(json_object_get(s, "symbol")));
			json_object_set(metrics, name, json_object_get(s, "pct"));
		}
		json_object_set_new(rep, "profile", prof);
	} else if (why[0] && json_is_object(metrics)) {
		json_object_set_new(rep, "profile",
				    json_pack("{s:s}", "error", why));
	}
	unlink(p->ctl);
	unlink(p->ack);
	unlink(p->data);
	unlink(p->log);
	p->pid = 0;
}

/* ------------------------------------------------------------------ */
/* The child's half.                                                   */

int pcb_profile_ctl(struct pcb_run *r, const char *cmd)
{
	char buf[64], line[32];
	struct pollfd pfd;
	ssize_t n;
	int ctl, ack, err = 0;

	if (!r->profile)
		return 0;
	/* O_RDWR: a fifo opened so never blocks, perf there or not */
	ctl = open(r->profile->ctl, O_RDWR | O_CLOEXEC);
	ack = open(r->profile->ack, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (ctl < 0 || ack < 0) {
		err = -errno;
		goto out;
	}
	pcb_fmt(line, sizeof(line), "%s\n", cmd);
	if (write(ctl, line, strlen(line)) != (ssize_t)strlen(line)) {
		err = -EIO;
		goto out;
	}
	pfd = (struct pollfd){ .fd = ack, .events = POLLIN };
	for (;;) {
		int k = poll(&pfd, 1, ACK_TIMEOUT_MS);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		n = read(ack, buf, sizeof(buf) - 1);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		err = n > 0 && !strncmp(buf, "ack", 3) ? 0 : -EIO;
		break;
	}
out:
	if (ctl >= 0)
		close(ctl);
	if (ack >= 0)
		close(ack);
	if (err)
		r->profile = NULL;	/* no more waiting on a deaf perf */
	return err;
}
