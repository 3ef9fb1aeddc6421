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
 *   perf report --sort sym -n -> the top PCB_PROFILE_TOP symbols into the
 *   repetition's metrics, "perf-profile.self.cycles-pp.SYMBOL": percent of
 *   the samples (LKP's names), and its "profile" object.
 *
 * perf runs as the parent's child, so it is outside the memory cgroup the
 * kernel engines run in (its buffers are not charged to their budget), and
 * it follows every thread of the repetition: those alive at attach, which
 * happens before the engine starts, and all they create.  Its start-up
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

	pcb_fmt(pid, sizeof(pid), "%d", (int)target);
	pcb_fmt(control, sizeof(control), "fifo:%s,%s", p->ctl, p->ack);
	p->pid = spawn(argv, p->log);
}

/* "    24.43%           611  [k] do_syscall_64" */
static bool parse_line(const char *line, double *pct, long *n, bool *kernel,
		       char *sym, size_t len)
{
	const char *s;
	char *end;

	*pct = strtod(line, &end);
	if (end == line || *end != '%')
		return false;
	*n = strtol(end + 1, &end, 10);
	s = end + strspn(end, " ");
	if (s[0] != '[' || !s[1] || s[2] != ']' || s[3] != ' ')
		return false;
	*kernel = s[1] == 'k';
	s += 4;
	pcb_fmt(sym, len, "%s", s);
	sym[strcspn(sym, "\n")] = 0;
	for (size_t i = strlen(sym); i > 0 && sym[i - 1] == ' '; i--)
		sym[i - 1] = 0;
	return sym[0] != 0;
}

/* perf report's table of one data file: {"samples", "top": [...]}.  Its
 * text goes to the log file (perf record is done with it). */
static json_t *report(const struct pcb_profile *p, char *why, size_t len)
{
	char line[1024], sym[512];
	char *argv[] = { (char *)perf_bin(), "report", "-i", (char *)p->data,
			 "--stdio", "--no-children", "--sort", "sym", "-n",
			 "--percent-limit", "0", "-f", NULL };
	json_t *top;
	long total = 0;
	pid_t pid = spawn(argv, p->log);
	int status = pid < 0 ? -1 : wait_exit(pid, EXIT_TIMEOUT_MS);
	FILE *f = status == 0 ? fopen(p->log, "re") : NULL;

	if (!f) {
		pcb_fmt(why, len, "perf report failed (status %d)", status);
		return NULL;
	}
	top = json_array();
	while (fgets(line, sizeof(line), f)) {
		double pct;
		long n;
		bool kernel;

		if (!parse_line(line, &pct, &n, &kernel, sym, sizeof(sym)))
			continue;
		total += n;
		/* unresolved addresses say nothing across repetitions */
		if (!strncmp(sym, "0x", 2) ||
		    json_array_size(top) == PCB_PROFILE_TOP)
			continue;
		json_array_append_new(top, json_pack("{s:s, s:f, s:b}",
			"symbol", sym, "pct", pct, "kernel", kernel));
	}
	fclose(f);
	if (!total) {
		pcb_fmt(why, len, "perf report found no samples");
		json_decref(top);
		return NULL;
	}
	return json_pack("{s:I, s:o}", "samples", (json_int_t)total, "top", top);
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
