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
 * The soft limit is read once and kept (an open of a file costs a
 * descriptor move or two, and a getrlimit(2) each was a tenth of the
 * system calls SQLite's commit adds): read again when the kept one no
 * longer holds, F_DUPFD's EINVAL (the limit was lowered under the base),
 * and every REREAD_EVERY moves, so a raised limit is seen soon.  A stale
 * limit costs only where the descriptor lands, never correctness: the
 * kernel checks the real one.
 *
 * One atomic, no lock: safe from any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base.h"

#define FD_HIGH_BASE 4096
#define REREAD_EVERY 256

static _Atomic uint64_t soft_limit;	/* the last read; 0: none yet */
static _Atomic unsigned moves;

/* RLIMIT_NOFILE's soft limit, read again if @fresh; 0 if unknown. */
static uint64_t nofile(bool fresh)
{
	uint64_t lim = atomic_load_explicit(&soft_limit, memory_order_relaxed);
	struct rlimit rl;

	if (lim && !fresh)
		return lim;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	lim = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	atomic_store_explicit(&soft_limit, lim, memory_order_relaxed);
	return lim;
}

int pc__fd_high(int fd)
{
	bool fresh = atomic_fetch_add_explicit(&moves, 1, memory_order_relaxed) %
		     REREAD_EVERY == REREAD_EVERY - 1;
	int saved = errno;

	for (int tries = 0; fd >= 0 && tries < 2; tries++, fresh = true) {
		uint64_t lim = nofile(fresh);
		uint64_t base = pc_min(lim / 2, (uint64_t)FD_HIGH_BASE);
		int hi;

		if (!lim || (uint64_t)fd >= base)
			break;
		hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
		if (hi >= 0) {
			close(fd);
			fd = hi;
			break;
		}
		if (errno != EINVAL)	/* EMFILE: nothing free up there */
			break;
	}
	errno = saved;
	return fd;
}
