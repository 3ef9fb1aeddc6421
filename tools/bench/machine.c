/*
 * tools/bench/machine.c - facts about the machine and the test directory.
 *
 * Owns the "machine" object of result files (CPU model, cores, memory,
 * kernel, filesystem and device of the test directory, hostname), the
 * free-space and available-memory figures the checks use, and the probes
 * of what the kernel accepts on the test directory's filesystem: O_DIRECT
 * (refused by tmpfs) and RWF_DONTCACHE (Linux 6.14+, and only on
 * filesystems that support it).  Called by the parent only, before runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bench.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static uint64_t meminfo(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtoull(line + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

uint64_t pcb_mem_available(void)
{
	return meminfo("MemAvailable");
}

int pcb_free_space(const char *dir, uint64_t *bytes)
{
	struct statvfs st;

	if (statvfs(dir, &st) < 0)
		return -errno;
	*bytes = (uint64_t)st.f_bavail * st.f_frsize;
	return 0;
}

bool pcb_dir_is_tmpfs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && st.f_type == TMPFS_MAGIC;
}

static void cpu_model(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	pcb_fmt(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && strncmp(line, "model name", 10) == 0) {
			colon += 1 + strspn(colon + 1, " \t");
			colon[strcspn(colon, "\n")] = 0;
			pcb_fmt(out, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

/* The filesystem type and source of the mount holding @dir (by st_dev). */
static void dir_mount(const char *dir, char *fs, size_t fslen, char *dev,
		      size_t devlen)
{
	char line[1024];
	struct stat st;
	FILE *f;

	pcb_fmt(fs, fslen, "unknown");
	pcb_fmt(dev, devlen, "unknown");
	if (stat(dir, &st) < 0 || !(f = fopen("/proc/self/mountinfo", "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char type[64], src[256];
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2 ||
		    sscanf(dash + 3, "%63s %255s", type, src) != 2)
			continue;
		if (makedev(maj, min) == st.st_dev) {
			pcb_fmt(fs, fslen, "%s", type);
			pcb_fmt(dev, devlen, "%s", src);
			/* keep looking: the last mount on a device wins */
		}
	}
	fclose(f);
}

json_t *pcb_machine(const char *dir)
{
	char cpu[256], fs[64], dev[256], host[256] = "unknown";
	struct utsname u;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	cpu_model(cpu, sizeof(cpu));
	dir_mount(dir, fs, sizeof(fs), dev, sizeof(dev));
	if (uname(&u) < 0)
		pcb_fmt(u.release, sizeof(u.release), "unknown");
	gethostname(host, sizeof(host) - 1);
	return json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s}",
			 "cpu", cpu,
			 "cores", (json_int_t)(cores > 0 ? cores : 1),
			 "memory", (json_int_t)meminfo("MemTotal"),
			 "kernel", u.release,
			 "fs", fs,
			 "device", dev,
			 "hostname", host);
}

/* A scratch file in @dir, opened with @flags and already unlinked. */
static int scratch(const char *dir, int flags)
{
	char path[1024];
	int fd;

	pcb_fmt(path, sizeof(path), "%s/.pagecache-probe.%d", dir, (int)getpid());
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC | flags, 0600);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

int pcb_probe_direct(const char *dir)
{
	void *buf = pcb_buf(4096);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = scratch(dir, O_DIRECT);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	if (pwrite(fd, buf, 4096, 0) != 4096)
		err = -errno;
	close(fd);
	free(buf);
	return err;
}

int pcb_probe_dontcache(const char *dir)
{
	char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	int fd, err = 0;

	memset(buf, 1, sizeof(buf));
	fd = scratch(dir, 0);
	if (fd < 0)
		return fd;
	if (pwritev2(fd, &iov, 1, 0, RWF_DONTCACHE) < 0 ||
	    preadv2(fd, &iov, 1, 0, RWF_DONTCACHE) < 0)
		err = -errno;
	close(fd);
	return err;
}
