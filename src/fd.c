/*
 * fd.c - the library's own descriptors, kept out of the program's way.
 *
 * A program expects open(2) to return the lowest free number, and some
 * (daemons, shells, the preload shim's programs) dup2 onto low numbers or
 * close every descriptor they did not open themselves.  So each descriptor
 * the library keeps (a mapping's backing fd, the io_uring ring) is moved
 * up, close-on-exec, to the first free number at or above
 *
 *     base = min(RLIMIT_NOFILE soft limit / 2, FD_HIGH_BASE)
 *
 * FD_HIGH_BASE bounds the kernel's descriptor table (a table sized to a
 * 2^30 limit would cost gigabytes); half the limit leaves the lower half
 * to the program.  When nothing is free up there the descriptor stays
 * where it is: correct, only less out of the way.  The preload shim
 * protects these descriptors from the program's close (it sees them
 * created through its wrappers of open(2) and fcntl(2)).
 *
 * No state, no lock: safe from any thread.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base.h"

#define FD_HIGH_BASE 4096

int pc__fd_high(int fd)
{
	struct rlimit rl;
	rlim_t base;
	int hi, saved = errno;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return fd;
	base = pc_min(rl.rlim_cur / 2, (rlim_t)FD_HIGH_BASE);
	if ((rlim_t)fd >= base)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (hi >= 0)
		close(fd);
	errno = saved;
	return hi >= 0 ? hi : fd;
}
