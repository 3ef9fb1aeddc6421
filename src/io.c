/*
 * io.c - the I/O backend interface: the ops tables by name, and what the
 * backends share (iovec arithmetic, a blocking transfer loop, dropping the
 * kernel's copy of a buffered range).
 *
 * A backend is a struct pc_io_ops (io.h) and a private struct that
 * the opaque struct pc_io * points to (struct pc_io itself is never
 * defined).  Every private struct begins with a pointer to its own ops
 * table, so that an io can be told apart (the fault calls ignore an io that
 * is not a fault one):
 *
 *     struct pc_io_<name> { const struct pc_io_ops *ops; ... }
 *
 *   io_uring.c  one ring per pc_io, a completion thread    the default
 *               (requests marked now: as io_sync.c)
 *   io_sync.c   preadv/pwritev in the submitting thread    fallback, tests
 *   io_fault.c  fault rules in front of the sync backend   tests
 *
 * A request's life, the same in every backend:
 *
 *   submit ─► transfer ─► short with progress? ─yes─► the rest, from there
 *                │                                    (a read that meets end
 *                │                                     of file stops there)
 *                ▼
 *   dontneed? ─► writes: sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER)
 *                then posix_fadvise(DONTNEED) ─► end_io(req), exactly once
 *
 * req->res is the backend's while the request is in flight; at end_io it
 * is the bytes done, or -errno (a failure after partial progress is still a
 * failure).
 *
 * A write's req->rwf goes to pwritev2: RWF_DONTCACHE (the kernel drops
 * its copy once it is written back, no fadvise after) where the file
 * system takes it - refused, the write is made without it and req->rwf
 * says so, for its submitter to drop the kernel's copy itself (sync.c).
 *
 * Nothing here has state: no locks, no threads; callable from any thread.
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io.h"

#define IO_WINDOW 64		/* iovecs per preadv/pwritev call */
#define IO_SYNC_RANGE_FLAGS (SYNC_FILE_RANGE_WAIT_BEFORE | \
			     SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)

const struct pc_io_ops *pc__io_ops_by_name(const char *name)
{
	static const struct pc_io_ops *const all[] = {
		&pc__io_uring_ops, &pc__io_sync_ops, &pc__io_fault_ops,
	};

	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

/* The bytes a request asks for: the sum of its iovecs. */
size_t pc__io_req_bytes(const struct pc_io_req *req)
{
	size_t n = 0;

	for (int i = 0; i < req->iovcnt; i++)
		n += req->iov[i].iov_len;
	return n;
}

/*
 * Describe bytes [skip, skip + len) of @src[@cnt] in @dst, at most @max
 * iovecs (fewer bytes when they do not fit); returns the iovecs used.
 */
int pc__io_iov_slice(struct iovec *dst, int max, const struct iovec *src,
		     int cnt, size_t skip, size_t len)
{
	int i = 0, n = 0;

	while (i < cnt && skip >= src[i].iov_len)
		skip -= src[i++].iov_len;
	for (; i < cnt && n < max && len > 0; i++) {
		size_t l = src[i].iov_len - skip;

		if (l == 0)
			continue;
		l = pc_min(l, len);
		dst[n].iov_base = (char *)src[i].iov_base + skip;
		dst[n].iov_len = l;
		n++;
		len -= l;
		skip = 0;
	}
	return n;
}

/*
 * Is @err, for the rest of a read that got @done bytes, end of file?  An
 * O_DIRECT read that meets end of file stops at an unaligned offset; the
 * kernel may refuse the rest with EINVAL (alignment) rather than return 0.
 */
bool pc__io_eof_einval(const struct pc_io_req *req, size_t done, ssize_t err)
{
	return err == -EINVAL && req->op == PC_IO_READ && done > 0 &&
	       ((uint64_t)req->off + done) % 512 != 0;
}

/*
 * pwritev2 with @req's RWF_ flags.  RWF_DONTCACHE refused (EOPNOTSUPP:
 * the file system lacks it; EINVAL on some older paths) is dropped from
 * req->rwf and the write made without it; any other flag refused fails
 * the write (they are not optional).
 */
static ssize_t write_rwf(struct pc_io_req *req, const struct iovec *iov,
			 int cnt, off_t pos)
{
	ssize_t r;

	if (!req->rwf)
		return pwritev(req->fd, iov, cnt, pos);
	r = pwritev2(req->fd, iov, cnt, pos, req->rwf);
	if (r >= 0 || (errno != EOPNOTSUPP && errno != EINVAL) ||
	    !(req->rwf & RWF_DONTCACHE))
		return r;
	req->rwf &= ~RWF_DONTCACHE;
	return write_rwf(req, iov, cnt, pos);
}

/*
 * Do the first @limit bytes of @req in this thread: preadv/pwritev,
 * continuing short transfers, retrying EINTR and EAGAIN.  Returns the bytes
 * done (fewer than @limit only when a read met end of file), or -errno.
 */
ssize_t pc__io_transfer(struct pc_io_req *req, size_t limit)
{
	struct iovec win[IO_WINDOW];
	size_t done = 0;

	while (done < limit) {
		int cnt = pc__io_iov_slice(win, IO_WINDOW, req->iov,
					   req->iovcnt, done, limit - done);
		off_t pos = req->off + (off_t)done;
		ssize_t r;

		if (cnt == 0)
			break;		/* @limit beyond the iovecs */
		if (req->op == PC_IO_WRITE)
			r = write_rwf(req, win, cnt, pos);
		else
			r = preadv(req->fd, win, cnt, pos);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r == 0) {
			if (req->op == PC_IO_READ)
				break;	/* end of file */
			return -EIO;	/* a write that makes no progress */
		}
		if (errno == EINTR || errno == EAGAIN)
			continue;
		if (pc__io_eof_einval(req, done, -errno))
			break;
		return -errno;
	}
	return (ssize_t)done;
}

void pc__io_do(struct pc_io_req *req)
{
	ssize_t r = pc__io_transfer(req, pc__io_req_bytes(req));

	if (r > 0 && req->dontneed) {
		int err = pc__io_dontneed(req, (size_t)r);

		if (err)
			r = err;
	}
	req->res = r;
	req->end_io(req);	/* req may be gone after this */
}

/*
 * After @len bytes of a dontneed request were transferred: write them back
 * and wait (writes), then ask the kernel to drop its pages.  Returns 0, or
 * the -errno of the writeback (the write failed after all).
 */
int pc__io_dontneed(const struct pc_io_req *req, size_t len)
{
	int err = 0;

	if (len == 0)
		return 0;	/* a length of 0 would mean "to end of file" */
	if (req->op == PC_IO_WRITE) {
		while (sync_file_range(req->fd, req->off, (off_t)len,
				       IO_SYNC_RANGE_FLAGS) != 0) {
			if (errno == EINTR)
				continue;
			err = pc__io_sync_range_err(-errno);
			break;
		}
		if (err)
			return err;
	}
	(void)posix_fadvise(req->fd, req->off, (off_t)len,
			    POSIX_FADV_DONTNEED);
	return 0;
}

/* sync_file_range's -errno as a write error: 0 if it is not one. */
int pc__io_sync_range_err(int err)
{
	/* Not a failed write: the fd cannot do it (a pipe, an odd fs). */
	if (err == -EINVAL || err == -ESPIPE || err == -ENOSYS ||
	    err == -EOPNOTSUPP)
		return 0;
	return err;
}

/* Sleep @us microseconds, through signals. */
void pc__io_sleep_us(unsigned us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
