/*
 * tools/bench/engine_os.c - the kernel's own I/O paths as engines.
 *
 *   kernel     buffered pread/pwrite through the kernel's page cache
 *   dontcache  preadv2/pwritev2 with RWF_DONTCACHE: buffered, but the
 *              pages are dropped once read or written back (Linux 6.14+)
 *   direct     O_DIRECT: no cache at all, the device's limit; aligned I/O
 *              only (docs/workloads.md: what it cannot serve is n/a)
 *
 * All three run in the memory cgroup (cgroup.c) when one could be made.
 * Their counters are the deltas of /proc/vmstat (machine-wide) and of the
 * cgroup's memory.stat (as "memcg.<name>"); their samples come from the
 * cgroup's memory.stat, or from /proc/meminfo when unconstrained.
 *
 * A pcb_file here is a file descriptor and the RWF_ flags of its engine;
 * the engine's state is one of the three static descriptions below.
 * Nothing is shared between threads but what the kernel shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench.h"

struct os_engine {
	int oflags;			/* added to every open */
	int rwf;			/* added to every read and write */
	bool cache;			/* keeps pages cached at all */
};

struct os_file {
	int fd;
	const struct os_engine *e;
};

static const struct os_engine kernel_eng = { 0, 0, true };
static const struct os_engine dontcache_eng = { 0, RWF_DONTCACHE, true };
static const struct os_engine direct_eng = { O_DIRECT, 0, false };

static struct os_file *F(struct pcb_file *f)
{
	return (struct os_file *)f;
}

static int start_kernel(struct pcb_run *r)
{
	r->eng = (void *)&kernel_eng;
	return 0;
}

static int start_dontcache(struct pcb_run *r)
{
	r->eng = (void *)&dontcache_eng;
	return 0;
}

static int start_direct(struct pcb_run *r)
{
	r->eng = (void *)&direct_eng;
	return 0;
}

static int os_stop(struct pcb_run *r)
{
	r->eng = NULL;
	return 0;
}

static int os_open(struct pcb_run *r, const char *path, int flags,
		   struct pcb_file **out)
{
	const struct os_engine *e = r->eng;
	struct os_file *f = malloc(sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->e = e;
	f->fd = open(path, flags | e->oflags | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		int err = -errno;

		free(f);
		return err;
	}
	*out = (struct pcb_file *)f;
	return 0;
}

static bool misaligned(const struct os_file *f, const void *buf, size_t len,
		       off_t off)
{
	return (f->e->oflags & O_DIRECT) &&
	       (((uintptr_t)buf | len | (uint64_t)off) & 4095);
}

static ssize_t os_pread(struct pcb_file *pf, void *buf, size_t len, off_t off)
{
	struct os_file *f = F(pf);
	size_t done = 0;

	if (misaligned(f, buf, len, off))
		return -EINVAL;
	while (done < len) {
		struct iovec iov = { (char *)buf + done, len - done };
		ssize_t n = preadv2(f->fd, &iov, 1, off + (off_t)done, f->e->rwf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t os_pread_cached(struct pcb_file *pf, void *buf, size_t len,
			       off_t off)
{
	struct os_file *f = F(pf);
	struct iovec iov = { buf, len };
	ssize_t n;

	if (!f->e->cache)
		return -EAGAIN;
	n = preadv2(f->fd, &iov, 1, off, f->e->rwf | RWF_NOWAIT);
	if (n < 0)
		return errno == EOPNOTSUPP || errno == EINTR ? -EAGAIN : -errno;
	if ((size_t)n < len) {
		/* partly cached: read the rest the ordinary way */
		ssize_t m = os_pread(pf, (char *)buf + n, len - (size_t)n,
				     off + n);

		return m < 0 ? m : n + m;
	}
	return n;
}

static ssize_t os_pwrite(struct pcb_file *pf, const void *buf, size_t len,
			 off_t off)
{
	struct os_file *f = F(pf);
	size_t done = 0;

	if (misaligned(f, buf, len, off))
		return -EINVAL;
	while (done < len) {
		struct iovec iov = { (char *)buf + done, len - done };
		ssize_t n = pwritev2(f->fd, &iov, 1, off + (off_t)done,
				     f->e->rwf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int os_fsync(struct pcb_file *f)
{
	return fsync(F(f)->fd) < 0 ? -errno : 0;
}

static int os_ftruncate(struct pcb_file *f, off_t len)
{
	return ftruncate(F(f)->fd, len) < 0 ? -errno : 0;
}

static int os_fadvise(struct pcb_file *f, off_t off, off_t len, int advice)
{
	return -posix_fadvise(F(f)->fd, off, len, advice);
}

static int os_close(struct pcb_file *pf)
{
	struct os_file *f = F(pf);
	int err = close(f->fd) < 0 ? -errno : 0;

	free(f);
	return err;
}

static int os_unlink(struct pcb_run *r, const char *path)
{
	(void)r;
	return unlink(path) < 0 ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* Counters and samples.                                               */

json_t *pcb_os_vmstat(const char *cgroup_dir, int cg_version)
{
	char key[128];
	unsigned long long v;
	json_t *o = json_object(), *cg;
	FILE *f = fopen("/proc/vmstat", "re");

	(void)cg_version;
	if (f) {
		while (fscanf(f, "%127s %llu", key, &v) == 2)
			json_object_set_new(o, key, json_integer((json_int_t)v));
		fclose(f);
	}
	if (cgroup_dir && (cg = pcb_cgroup_stat(cgroup_dir))) {
		const char *k;
		json_t *val;

		json_object_foreach(cg, k, val) {
			pcb_fmt(key, sizeof(key), "memcg.%s", k);
			json_object_set(o, key, val);
		}
		json_decref(cg);
	}
	return o;
}

static uint64_t get(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static int meminfo_sample(uint64_t v[PCB_NR_SAMPLES])
{
	static const char *const keys[PCB_NR_SAMPLES] = {
		"MemFree:", "Inactive(file):", "Active(file):", "Dirty:",
		"Writeback:"
	};
	char name[64];
	unsigned long long kb;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -errno;
	memset(v, 0, sizeof(uint64_t) * PCB_NR_SAMPLES);
	while (fscanf(f, "%63s %llu kB", name, &kb) == 2)
		for (int i = 0; i < PCB_NR_SAMPLES; i++)
			if (strcmp(name, keys[i]) == 0)
				v[i] = kb / 4;
	fclose(f);
	return 0;
}

int pcb_os_sample(const char *cgroup_dir, int cg_version,
		  uint64_t v[PCB_NR_SAMPLES])
{
	uint64_t limit = 0, usage = 0;
	json_t *st;

	if (!cgroup_dir)
		return meminfo_sample(v);
	st = pcb_cgroup_stat(cgroup_dir);
	if (!st)
		return -EIO;
	if (cg_version == 1) {
		pcb_cgroup_read_u64(cgroup_dir, "memory.limit_in_bytes", &limit);
		pcb_cgroup_read_u64(cgroup_dir, "memory.usage_in_bytes", &usage);
		v[PCB_S_DIRTY] = get(st, "dirty") / 4096;
		v[PCB_S_WRITEBACK] = get(st, "writeback") / 4096;
	} else {
		pcb_cgroup_read_u64(cgroup_dir, "memory.max", &limit);
		pcb_cgroup_read_u64(cgroup_dir, "memory.current", &usage);
		v[PCB_S_DIRTY] = get(st, "file_dirty") / 4096;
		v[PCB_S_WRITEBACK] = get(st, "file_writeback") / 4096;
	}
	v[PCB_S_FREE] = limit > usage ? (limit - usage) / 4096 : 0;
	v[PCB_S_INACTIVE] = get(st, "inactive_file") / 4096;
	v[PCB_S_ACTIVE] = get(st, "active_file") / 4096;
	json_decref(st);
	return 0;
}

static json_t *os_vmstat(struct pcb_run *r)
{
	return pcb_os_vmstat(r->cgroup, r->cg_version);
}

static int os_sample(struct pcb_run *r, uint64_t v[PCB_NR_SAMPLES])
{
	return pcb_os_sample(r->cgroup, r->cg_version, v);
}

#define OS_OPS \
	.in_cgroup = true, \
	.stop = os_stop, \
	.open = os_open, \
	.pread = os_pread, \
	.pread_cached = os_pread_cached, \
	.pwrite = os_pwrite, \
	.fsync = os_fsync, \
	.ftruncate = os_ftruncate, \
	.fadvise = os_fadvise, \
	.close = os_close, \
	.unlink = os_unlink, \
	.vmstat = os_vmstat, \
	.sample = os_sample

const struct pcb_engine_ops pcb_engine_kernel = {
	.name = "kernel",
	.what = "buffered I/O through the kernel's page cache, in a memory cgroup",
	.start = start_kernel,
	OS_OPS,
};

const struct pcb_engine_ops pcb_engine_dontcache = {
	.name = "dontcache",
	.what = "buffered I/O with RWF_DONTCACHE (uncached buffered I/O, 6.14+)",
	.start = start_dontcache,
	OS_OPS,
};

const struct pcb_engine_ops pcb_engine_direct = {
	.name = "direct",
	.what = "O_DIRECT, no cache: the device's limit (aligned workloads only)",
	.align = 4096,
	.start = start_direct,
	OS_OPS,
};
