/*
 * tools/bench/wl_fork.c - fork: what a fork costs a process whose cache
 * is full (issue 22's "fork of a process using a 1 GiB cache under 1 ms,
 * nothing copied").
 *
 * One sparse file of 7/8 x B (holes read as zeros, so no device I/O: the
 * figure is the fork's, not the disk's), read twice in the warm-up: the
 * cache holds it all, the kernel's cgroup too.  The measured part forks
 * a child that _exits at once, again and again until --duration (at most
 * MAX_FORKS), and times each fork() in the parent, from the call to its
 * return (the atfork handlers an engine has included: a shared cache's
 * registers the child).  The child's exit and the parent's waitpid are
 * outside the timed part.  Headline: the median in microseconds (lower is
 * better); also p99 and the largest.
 *
 * What it shows: a private cache's frames are the process's anonymous
 * memory, whose page tables fork copies (and write-protects, so the next
 * writes of the parent fault); a shared cache (the "shared=on" variant)
 * lives in a MAP_SHARED memfd whose page tables fork leaves to be faulted
 * in again, so its fork costs what the kernel engine's does, where the
 * cache is not in the process at all.
 *
 * A dead child's kernel memory (its task struct, stack, VMAs: some tens of
 * KiB) is freed only after an RCU grace period, and the kernel engines'
 * cgroup is charged for it until then.  On a loaded machine grace periods
 * lag the forks, and thousands of dead children's memory filled the
 * budget-sized cgroup (kmem 16 of its 16 MiB: the OOM killer, at 8M).  So
 * every RCU_EVERY forks, outside the timed part, the loop waits for a
 * grace period (membarrier's MEMBARRIER_CMD_GLOBAL is synchronize_rcu()):
 * at most that many children's memory is waiting, on every engine alike,
 * and the kernel's cached file is not pushed out by it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define BLOCK (1u << 20)
#define MAX_FORKS 20000
#define RCU_EVERY 64		/* forks between two waits for a grace period */

static void params(struct pcb_params *p, const struct pcb_opts *o)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "file_size", (int64_t)(o->budget / 8 * 7 / BLOCK * BLOCK));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "duration_ms", (int64_t)(o->duration * 1000));
}

static uint64_t disk(const struct pcb_params *p)
{
	(void)p;
	return 1u << 20;		/* holes take no room: metadata only */
}

static int prepare(struct pcb_run *r)
{
	char path[1100];
	int err = pcb_make_file(pcb_path(r, path, sizeof(path), "fork.data"),
				(uint64_t)pcb_param(r->par, "file_size"), true);

	return err < 0 ? pcb_fail(r, err, "making %s: %s", path, strerror(-err)) : 0;
}

/* The file read through, twice: every page resident. */
static int fill(struct pcb_run *r)
{
	uint64_t size = (uint64_t)pcb_param(r->par, "file_size");
	void *buf = pcb_buf(BLOCK);
	struct pcb_file *f;
	char path[1100];
	int err;

	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "fork.data"), O_RDONLY, &f);
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	for (int pass = 0; pass < 2 && !err; pass++)
		for (uint64_t off = 0; off < size; off += BLOCK) {
			ssize_t n = r->ops->pread(f, buf, BLOCK, (off_t)off);

			if (n < 0) {
				err = pcb_fail(r, (int)n, "pread: %s", strerror((int)-n));
				break;
			}
		}
	r->ops->close(f);
	free(buf);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The dead children's kernel memory freed: an RCU grace period waited
 * for (a kernel that refuses, nohz_full, leaves it to the kernel). */
static void rcu_wait(void)
{
	(void)syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

static int run(struct pcb_run *r)
{
	uint64_t *ns = malloc(MAX_FORKS * sizeof(*ns));
	int n = 0, err = 0;

	if (!ns)
		return -ENOMEM;
	if (pcb_warming(r))
		err = fill(r);
	if (!err)
		pcb_steady(r);
	while (!err && n < MAX_FORKS && !pcb_time_up(r)) {
		uint64_t t0 = pcb_now_ns();
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(0);
		if (pid < 0) {
			err = pcb_fail(r, -errno, "fork: %s", strerror(errno));
			break;
		}
		ns[n++] = pcb_now_ns() - t0;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			err = pcb_fail(r, -ECHILD, "the forked child did not exit 0");
		if (n % RCU_EVERY == 0)
			rcu_wait();
	}
	if (!err && !n)
		err = pcb_fail(r, -EINVAL, "no fork in the measured part");
	if (!err) {
		qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
		pcb_metric(r, "fork-us", (double)ns[n / 2] / 1e3);
		pcb_direction(r, "fork-us", false);
		pcb_metric(r, "fork-us-p99", (double)ns[(size_t)n * 99 / 100] / 1e3);
		pcb_direction(r, "fork-us-p99", false);
		pcb_metric(r, "fork-us-max", (double)ns[n - 1] / 1e3);
		pcb_direction(r, "fork-us-max", false);
		pcb_metric(r, "forks", n);
	}
	free(ns);
	return err;
}

PCB_WORKLOAD(fork) = {
	.name = "fork",
	.group = "fork",
	.what = "fork + exit of a child while a 7/8xB file is cached: fork's us",
	.metric = "fork-us",
	.lower = true,
	.timed = true,
	.engines = PCB_ENG(PCB_PAGECACHE) | PCB_ENG(PCB_KERNEL) | PCB_ENG(PCB_DIRECT),
	.na_reason = "the dontcache engine keeps nothing cached to fork with",
	.warmup = "the file read twice",
	.pc_variants = { "shared=on" },
	.params = params,
	.disk = disk,
	.prepare = prepare,
	.run = run,
};
