/*
 * tools/bench/cgroup.c - the memory cgroup the kernel engines run in.
 *
 * The kernel's page cache gets the same budget as ours by running each
 * repetition of the kernel, dontcache and direct engines in a child
 * process moved into a memory cgroup whose limit is the budget:
 *
 *   our cgroup (from /proc/self/cgroup, under the controller's mount)
 *     └── pagecache-bench.<pid>/     made here, limit = budget + allowance
 *           cgroup.procs  <- the repetition's child writes its own pid
 *
 * cgroup v1 (memory.limit_in_bytes, memory.force_empty) is tried first
 * when a v1 memory hierarchy holds us, then v2 (memory.max; the memory
 * controller must be, or be made, available to our cgroup's children).
 * When neither works the run goes on unconstrained, and `why` says why.
 *
 * Only the parent makes, resets, re-limits (a program workload's fair
 * budget: runner.c) and removes the cgroup, between
 * repetitions, when no process is in it; the child only enters it.  A run
 * killed before it could remove its cgroup leaves it behind: the next run
 * removes those whose process is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int write_file(const char *dir, const char *file, const char *val)
{
	char path[768];
	int fd, err = 0;
	size_t len = strlen(val);

	pcb_fmt(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

int pcb_cgroup_read_u64(const char *dir, const char *file, uint64_t *v)
{
	char path[768], buf[64];
	FILE *f;
	int err = -EIO;

	pcb_fmt(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f)) {
		if (strncmp(buf, "max", 3) == 0) {
			*v = UINT64_MAX;
			err = 0;
		} else if (sscanf(buf, "%" SCNu64, v) == 1) {
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/*
 * The folder of our own cgroup in the hierarchy that has @want: "memory"
 * for v1, "" for v2.  0, or -ENOENT.
 */
static int own_cgroup(int version, char *out, size_t len)
{
	char line[1024], cgpath[512] = "", mnt[512] = "", root[512] = "";
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c1 = 0;
		*c2 = 0;
		c2[1 + strcspn(c2 + 1, "\n")] = 0;
		if (version == 2 && strcmp(line, "0") == 0 && c1[1] == 0) {
			pcb_fmt(cgpath, sizeof(cgpath), "%s", c2 + 1);
			found = true;
		} else if (version == 1) {
			char ctl[256], *tok, *save;

			pcb_fmt(ctl, sizeof(ctl), "%s", c1 + 1);
			for (tok = strtok_r(ctl, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, "memory") == 0) {
					pcb_fmt(cgpath, sizeof(cgpath), "%s",
						 c2 + 1);
					found = true;
				}
		}
	}
	fclose(f);
	if (!found)
		return -ENOENT;

	/* the mount of that hierarchy: "... root mountpoint ... - type src opts" */
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char r[512], m[512], type[64], opts[512];
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", type, opts) != 2)
			continue;
		if (version == 2 && strcmp(type, "cgroup2") == 0)
			found = true;
		if (version == 1 && strcmp(type, "cgroup") == 0) {
			char *tok, *save;

			for (tok = strtok_r(opts, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, "memory") == 0)
					found = true;
		}
		if (found) {
			pcb_fmt(root, sizeof(root), "%s", r);
			pcb_fmt(mnt, sizeof(mnt), "%s", m);
		}
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	/* the path is relative to the namespace's root, the mount shows root */
	if (strcmp(root, "/") != 0 && strncmp(cgpath, root, strlen(root)) == 0)
		memmove(cgpath, cgpath + strlen(root), strlen(cgpath + strlen(root)) + 1);
	if (strcmp(cgpath, "/") == 0)
		cgpath[0] = 0;
	pcb_fmt(out, len, "%s%s", mnt, cgpath);
	return 0;
}

/* Remove the cgroups of earlier runs that were killed before they could. */
static void remove_stale(const char *own)
{
	DIR *d = opendir(own);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[800], tail;
		int pid;

		if (sscanf(e->d_name, "pagecache-bench.%d%c", &pid, &tail) != 1 ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		pcb_fmt(path, sizeof(path), "%s/%s", own, e->d_name);
		rmdir(path);
	}
	closedir(d);
}

static int try_version(struct pcb_cgroup *cg, int version, uint64_t limit)
{
	char own[512], val[32];
	uint64_t got = 0;
	int err;

	err = own_cgroup(version, own, sizeof(own));
	if (err) {
		pcb_fmt(cg->why, sizeof(cg->why), "no cgroup v%d memory hierarchy",
			 version);
		return err;
	}
	if (version == 2) {
		/* the controller must be handed down to our children */
		char ctl[768], buf[512] = "";
		FILE *f;

		pcb_fmt(ctl, sizeof(ctl), "%s/cgroup.subtree_control", own);
		f = fopen(ctl, "re");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (!strstr(buf, "memory") &&
		    (err = write_file(own, "cgroup.subtree_control", "+memory"))) {
			pcb_fmt(cg->why, sizeof(cg->why),
				 "cannot enable the memory controller under %s: %s",
				 own, strerror(-err));
			return err;
		}
	}
	remove_stale(own);
	pcb_fmt(cg->dir, sizeof(cg->dir), "%s/pagecache-bench.%d", own,
		 (int)getpid());
	if (mkdir(cg->dir, 0755) < 0 && errno != EEXIST) {
		err = -errno;
		pcb_fmt(cg->why, sizeof(cg->why), "cannot make %s: %s", cg->dir,
			 strerror(errno));
		return err;
	}
	pcb_fmt(val, sizeof(val), "%" PRIu64, limit);
	if (version == 1) {
		err = write_file(cg->dir, "memory.limit_in_bytes", val);
		if (!err)
			err = pcb_cgroup_read_u64(cg->dir, "memory.limit_in_bytes",
						  &got);
	} else {
		err = write_file(cg->dir, "memory.max", val);
		write_file(cg->dir, "memory.swap.max", "0");
		if (!err)
			err = pcb_cgroup_read_u64(cg->dir, "memory.max", &got);
	}
	if (!err && got > limit + 65536)
		err = -EIO;
	if (err) {
		pcb_fmt(cg->why, sizeof(cg->why), "cannot set the limit of %s: %s",
			 cg->dir, strerror(-err));
		rmdir(cg->dir);
		return err;
	}
	cg->version = version;
	cg->limit = limit;
	cg->ok = true;
	return 0;
}

int pcb_cgroup_create(struct pcb_cgroup *cg, uint64_t limit)
{
	char why1[256], why2[256];

	memset(cg, 0, sizeof(*cg));
	if (getenv("PAGECACHE_BENCH_NO_CGROUP")) {	/* for tests */
		pcb_fmt(cg->why, sizeof(cg->why), "PAGECACHE_BENCH_NO_CGROUP is set");
		return -ENOENT;
	}
	if (try_version(cg, 1, limit) == 0)
		return 0;
	pcb_fmt(why1, sizeof(why1), "%s", cg->why);
	if (try_version(cg, 2, limit) == 0)
		return 0;
	pcb_fmt(why2, sizeof(why2), "%s", cg->why);
	pcb_fmt(cg->why, sizeof(cg->why), "%s; %s", why1, why2);
	cg->dir[0] = 0;
	return -ENOENT;
}

int pcb_cgroup_set_limit(struct pcb_cgroup *cg, uint64_t limit)
{
	char val[32];
	int err;

	if (!cg->ok)
		return -ENOENT;
	pcb_fmt(val, sizeof(val), "%" PRIu64, limit);
	err = write_file(cg->dir, cg->version == 1 ? "memory.limit_in_bytes" :
			 "memory.max", val);
	if (!err)
		cg->limit = limit;
	return err;
}

int pcb_cgroup_enter(const struct pcb_cgroup *cg)
{
	char pid[32];

	if (!cg->ok)
		return 0;
	pcb_fmt(pid, sizeof(pid), "%d", (int)getpid());
	return write_file(cg->dir, "cgroup.procs", pid);
}

void pcb_cgroup_reset(const struct pcb_cgroup *cg)
{
	/* v1: uncharge what the last repetition left (its files are gone,
	 * but the charges may linger); v2 has no such knob and needs none */
	if (cg->ok && cg->version == 1)
		write_file(cg->dir, "memory.force_empty", "0");
}

void pcb_cgroup_destroy(struct pcb_cgroup *cg)
{
	if (!cg->ok)
		return;
	/* the last child may still be leaving the cgroup */
	for (int i = 0; i < 50 && rmdir(cg->dir) < 0 && errno == EBUSY; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	cg->ok = false;
}

json_t *pcb_cgroup_stat(const char *dir)
{
	char path[768], key[128];
	unsigned long long v;
	json_t *o;
	FILE *f;

	pcb_fmt(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	o = json_object();
	while (fscanf(f, "%127s %llu", key, &v) == 2) {
		/* our cgroup has no children: the hierarchical copies repeat */
		if (strncmp(key, "total_", 6) == 0 ||
		    strncmp(key, "hierarchical_", 13) == 0)
			continue;
		json_object_set_new(o, key, json_integer((json_int_t)v));
	}
	fclose(f);
	return o;
}
