/*
 * io.h - the I/O backend interface (an ops table: io_uring.c, io_sync.c,
 * and the fault-injecting io_fault.c for tests), what the backends share
 * (io.c), and the fault rules.  A leaf: the backends know file
 * descriptors and iovecs, nothing of pages or mappings.
 */
#ifndef PC_IO_H
#define PC_IO_H

#include <sys/uio.h>

#include "base.h"

enum pc_io_op { PC_IO_READ, PC_IO_WRITE };

struct pc_io_req {
	int fd;
	int op;			/* enum pc_io_op */
	struct iovec *iov;	/* O_DIRECT fds: 4 KiB-aligned, whole blocks */
	int iovcnt;
	off_t off;
	bool dontneed;		/* buffered fallback fd: drop the kernel's copy */
	int rwf;		/* a write's pwritev2 flags (RWF_DONTCACHE), or
				   0; at end_io those it went with (the ring
				   takes none; io.c drops a refused DONTCACHE) */
	bool now;		/* the submitter waits for it at once: done in
				   the submitting thread where the backend can */
	ssize_t res;		/* at end_io: bytes done, or -errno */
	void (*end_io)(struct pc_io_req *req);	/* once, from any thread */
	void *priv;
	struct pc_io_req *next;	/* free for the submitter's use */
	struct pc_io_req *live_prev, *live_next;	/* the backend's, while
							   in flight */
};

struct pc_io;
struct pc_io_ops {
	const char *name;
	int (*create)(struct pc_io **out, unsigned depth);
	/* Waits for every request in flight, then frees. */
	void (*destroy)(struct pc_io *io);
	/*
	 * Queue @n requests and start them.  end_io is called exactly once
	 * for each, possibly before submit returns, possibly in another
	 * thread.  A transfer cut short with progress is continued; a read
	 * that meets end of file ends with the bytes it got.  Returns 0 (all
	 * requests accepted); never fails a request by its return value.
	 * A request marked @now is done in the calling thread, end_io
	 * included, before submit returns (unless submit runs in the
	 * backend's own completion thread): its submitter would only sleep
	 * until another thread woke it.  The others are started first.
	 */
	int (*submit)(struct pc_io *io, struct pc_io_req **reqs, unsigned n);
	/*
	 * Has @io failed for good (io_uring: a fatal error on the ring), so
	 * that its I/O goes the sync backend's way now?  NULL: never.
	 */
	bool (*lost)(struct pc_io *io);
};

extern const struct pc_io_ops pc__io_uring_ops;
extern const struct pc_io_ops pc__io_sync_ops;
extern const struct pc_io_ops pc__io_fault_ops;

/* Look an ops table up by name ("uring", "sync", "fault"); NULL if none. */
const struct pc_io_ops *pc__io_ops_by_name(const char *name);

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080	/* Linux 6.14: dropped once written back */
#endif

/* io.c: what the backends share. */
size_t pc__io_req_bytes(const struct pc_io_req *req);
int pc__io_iov_slice(struct iovec *dst, int max, const struct iovec *src,
		     int cnt, size_t skip, size_t len);
bool pc__io_eof_einval(const struct pc_io_req *req, size_t done, ssize_t err);
/* (Clears RWF_DONTCACHE in req->rwf where it was refused.) */
ssize_t pc__io_transfer(struct pc_io_req *req, size_t limit);
/* The whole of @req in this thread, dontneed included, then its end_io. */
void pc__io_do(struct pc_io_req *req);
int pc__io_dontneed(const struct pc_io_req *req, size_t len);
int pc__io_sync_range_err(int err);
void pc__io_sleep_us(unsigned us);

/*
 * The fault backend (for tests) wraps the sync backend.  Rules are matched
 * in order on each request; the first that matches applies.
 */
struct pc_io_fault {
	int op;			/* PC_IO_READ, PC_IO_WRITE, or -1 for both */
	int fd;			/* -1: any */
	off_t off_lo, off_hi;	/* request must overlap [off_lo, off_hi) */
	int error;		/* errno to fail with (EIO, ENOSPC); 0: none */
	bool short_io;		/* do half the transfer, then fail w/ @error */
	unsigned delay_us;	/* sleep before doing the request */
	int count;		/* times it applies; -1 forever */
	_Atomic bool *gate;	/* not NULL: after the delay, wait until it
				   is true (a request held in flight) */
};
/*
 * A rule with off_hi == 0 has no upper bound (a zeroed rule matches every
 * offset).  hits: requests any rule applied to; clear resets it too.  On a
 * backend that is not the fault one, add returns -EINVAL, the others do
 * nothing.  An error after some bytes ends a request with -errno.
 */
int pc__io_fault_add(struct pc_io *io, const struct pc_io_fault *rule);
void pc__io_fault_clear(struct pc_io *io);
uint64_t pc__io_fault_hits(struct pc_io *io);
/* Requests marked now seen since the last clear; *pages (if not NULL) theirs. */
uint64_t pc__io_fault_now(struct pc_io *io, uint64_t *pages);

#endif /* PC_IO_H */
