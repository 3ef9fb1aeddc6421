/*
 * rw.c - the read and write paths, and lseek.
 *
 * Every call here looks its fd up once; an fd the shim does not manage
 * goes to libc with nothing else done.  On a managed one:
 *
 *   read, write, readv, writev,     the description's offset, under its
 *   preadv2/pwritev2 at offset -1   pos_lock (the kernel's f_pos_lock):
 *                                   read it, do the call, advance it
 *   pread, pwrite, preadv,          at the offset given; pwrite on an
 *   pwritev, p*v2 at an offset      O_APPEND description appends (Linux)
 *   lseek                           the offset only; the size is the cache's
 *
 * The offset is the description's own (struct shim_ofd's pos) until
 * another process shares the description (a fork, an exec, a spawn in a
 * shared cache: shared_pos.c); from then on it is the kernel's f_pos of
 * the fd, read and set around the cache's call under the file's
 * pc_file_pos_lock, and O_APPEND is the kernel's status flag (pos_begin,
 * pos_end, write_flags).  pread and pwrite never touch an offset.
 *
 * Writes go through pc_writev, which appends under the file's i_rwsem and
 * says where the data ended: O_APPEND (the description's status flag,
 * which F_SETFL changes) and RWF_APPEND/RWF_NOAPPEND are passed per call,
 * so the pc_file itself is never O_APPEND.
 *
 * The kernel's checks and errnos, in its order: EBADF for the wrong access
 * mode, EINVAL for a bad iovec count or a negative offset, EFAULT for a
 * NULL buffer with a length, EOPNOTSUPP for RWF flags it does not know (and
 * for a write's RWF_NOWAIT and RWF_ATOMIC, which a buffered ext4 file
 * refuses the same way); counts are cut to the kernel's largest transfer
 * (MAX_RW_COUNT).  A read's RWF_NOWAIT copies what the cache holds from
 * the offset on, and is -EAGAIN when its first page is not cached (the
 * kernel's filemap_read under IOCB_NOWAIT).
 * What cannot be done the kernel's way: a buffer pointing at unmapped
 * memory faults in the shim (the copy is ours) instead of giving EFAULT.
 *
 * SEEK_DATA and SEEK_HOLE see the whole file as data, as on a filesystem
 * without holes: correct, and what the cache's view (dirty pages not yet on
 * the disk) allows.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif
#define RWF_ATOMIC_ 0x00000040
#define RWF_DONTCACHE_ 0x00000080
#define RWF_KNOWN (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | \
		   RWF_NOAPPEND | RWF_ATOMIC_ | RWF_DONTCACHE_)

/*
 * The kernel's checks of an iovec: -EINVAL for the count, -EFAULT for a
 * NULL buffer with a length.  More than MAX_RW_COUNT is cut, in a copy
 * (*cut, the caller frees it; -ENOMEM without one).  Returns the count.
 */
static int iov_check(const struct iovec *iov, int cnt, struct iovec **cut)
{
	size_t total = 0;

	*cut = NULL;
	if (cnt < 0 || cnt > IOV_MAX)
		return -EINVAL;
	if (cnt && !iov)
		return -EFAULT;
	for (int i = 0; i < cnt; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -EFAULT;
		if (iov[i].iov_len > (size_t)SSIZE_MAX)
			return -EINVAL;
		if (total + iov[i].iov_len > (size_t)SHIM_MAX_RW) {
			*cut = malloc((size_t)(i + 1) * sizeof(*iov));
			if (!*cut)
				return -ENOMEM;
			memcpy(*cut, iov, (size_t)(i + 1) * sizeof(*iov));
			(*cut)[i].iov_len = (size_t)SHIM_MAX_RW - total;
			return i + 1;
		}
		total += iov[i].iov_len;
	}
	return cnt;
}

ssize_t shim_ofd_readv(struct shim_ofd *o, const struct iovec *iov, int cnt,
		       off_t *pos)
{
	struct iovec *cut;
	ssize_t r;

	if (!shim_can_read(atomic_load(&o->flags)))
		return shim_fail(-EBADF);
	if ((r = iov_check(iov, cnt, &cut)) < 0)
		return shim_fail(r);
	if (*pos < 0) {
		free(cut);
		return shim_fail(-EINVAL);
	}
	r = LIB(pc_readv(o->file, cut ? cut : iov, (int)r, pos));
	free(cut);
	if (r < 0)
		return shim_fail(r);
	SHIM_INC(managed_reads);
	SHIM_ADD(managed_read_bytes, (uint64_t)r);
	return r;
}

ssize_t shim_ofd_writev(struct shim_ofd *o, const struct iovec *iov, int cnt,
			off_t *pos, int pcflags)
{
	int fl = atomic_load(&o->flags);
	struct iovec *cut;
	ssize_t r;

	if (!shim_can_write(fl))
		return shim_fail(-EBADF);
	if ((r = iov_check(iov, cnt, &cut)) < 0)
		return shim_fail(r);
	if (*pos < 0) {
		free(cut);
		return shim_fail(-EINVAL);
	}
	if ((fl & O_APPEND) && !(pcflags & PC_RW_NOAPPEND))
		pcflags |= PC_RW_APPEND;
	r = LIB(pc_writev(o->file, cut ? cut : iov, (int)r, pos,
			  pcflags & ~PC_RW_NOAPPEND));
	free(cut);
	if (r < 0)
		return shim_fail(r);
	SHIM_INC(managed_writes);
	SHIM_ADD(managed_write_bytes, (uint64_t)r);
	return r;
}

/*
 * The description's offset, pos_lock held from begin to end: ours, or for
 * a shared-position description (kpos) the kernel's, under the file's
 * pc_file_pos_lock too.  begin: 0 or -1 with errno (nothing held then).
 */
static int pos_begin(struct shim_ofd *o, int fd, off_t *pos)
{
	int e;

	pthread_mutex_lock(&o->pos_lock);
	if (!atomic_load_explicit(&o->kpos, memory_order_relaxed)) {
		*pos = o->pos;
		return 0;
	}
	if ((e = shim_kpos_begin(o, fd, pos)) == 0)
		return 0;
	pthread_mutex_unlock(&o->pos_lock);
	return (int)shim_fail(e);
}

static void pos_end(struct shim_ofd *o, int fd, off_t pos, bool move)
{
	if (atomic_load_explicit(&o->kpos, memory_order_relaxed))
		shim_kpos_end(o, fd, pos, move);
	else if (move)
		o->pos = pos;
	pthread_mutex_unlock(&o->pos_lock);
}

/* A write's flags: a kpos description's O_APPEND is the kernel's. */
static int write_flags(struct shim_ofd *o, int fd, int pcflags)
{
	if (atomic_load_explicit(&o->kpos, memory_order_relaxed))
		return shim_kpos_pcflags(o, fd, pcflags);
	return pcflags;
}

/* At the description's offset, moving it. */
static ssize_t pos_readv(struct shim_ofd *o, int fd, const struct iovec *iov,
			 int cnt)
{
	ssize_t r;
	off_t pos;

	if (pos_begin(o, fd, &pos))
		return -1;
	r = shim_ofd_readv(o, iov, cnt, &pos);
	pos_end(o, fd, pos, r > 0);
	return r;
}

static ssize_t pos_writev(struct shim_ofd *o, int fd, const struct iovec *iov,
			  int cnt, int pcflags)
{
	ssize_t r;
	off_t pos;

	if (pos_begin(o, fd, &pos))
		return -1;
	r = shim_ofd_writev(o, iov, cnt, &pos, write_flags(o, fd, pcflags));
	pos_end(o, fd, pos, r >= 0);
	return r;
}

static ssize_t at_readv(struct shim_ofd *o, const struct iovec *iov, int cnt,
			off_t off)
{
	return shim_ofd_readv(o, iov, cnt, &off);
}

static ssize_t at_writev(struct shim_ofd *o, int fd, const struct iovec *iov,
			 int cnt, off_t off, int pcflags)
{
	return shim_ofd_writev(o, iov, cnt, &off, write_flags(o, fd, pcflags));
}

/* One buffer: read, write, pread, pwrite. */
static ssize_t pos_read(struct shim_ofd *o, int fd, void *buf, size_t n)
{
	struct iovec iov = { buf, n };

	return pos_readv(o, fd, &iov, 1);
}

static ssize_t pos_write(struct shim_ofd *o, int fd, const void *buf, size_t n)
{
	struct iovec iov = { (void *)buf, n };

	return pos_writev(o, fd, &iov, 1, 0);
}

static ssize_t at_read(struct shim_ofd *o, void *buf, size_t n, off_t off)
{
	struct iovec iov = { buf, n };

	return at_readv(o, &iov, 1, off);
}

static ssize_t at_write(struct shim_ofd *o, int fd, const void *buf, size_t n,
			off_t off)
{
	struct iovec iov = { (void *)buf, n };

	return at_writev(o, fd, &iov, 1, off, 0);
}

/* RWF_* of preadv2/pwritev2 as PC_RW_*; -EOPNOTSUPP for the refused
 * (RWF_NOWAIT here is a write's: a read's is taken off first). */
static int rwf_flags(int flags)
{
	int pc = 0;

	if ((flags & ~RWF_KNOWN) || (flags & (RWF_NOWAIT | RWF_ATOMIC_)))
		return -EOPNOTSUPP;
	if (flags & RWF_DSYNC)
		pc |= PC_RW_DSYNC;
	if (flags & RWF_SYNC)
		pc |= PC_RW_SYNC;
	if (flags & RWF_APPEND)
		pc |= PC_RW_APPEND;
	else if (flags & RWF_NOAPPEND)
		pc |= PC_RW_NOAPPEND;
	return pc;
}

/*
 * How many of @want bytes at @off are in pages the cache holds uptodate,
 * counted from the first (pc_get_page's PC_GET_NOWAIT, page by page, up
 * to the size): what a RWF_NOWAIT read may copy.
 */
static size_t cached_prefix(pc_file *f, off_t off, size_t want)
{
	off_t size = LIB(pc_size(f)), end = off + (off_t)want, at = off;

	if (end > size)
		end = size;
	while (at < end) {
		uint64_t index = (uint64_t)at / 4096;
		pc_page *p;

		if (LIB(pc_get_page(f, index, PC_GET_NOWAIT, &p)) != 0)
			break;
		shim_internal++;	/* LIB() of a void call */
		pc_put_page(p);
		shim_internal--;
		at = (off_t)(index + 1) * 4096;
	}
	return at > end ? (size_t)(end - off) : (size_t)(at - off);
}

/*
 * A read with RWF_NOWAIT, as the kernel's filemap_read under IOCB_NOWAIT:
 * what the cached pages from *@pos on hold, or -EAGAIN when the first is
 * not cached (0 at and past the end).  A page reclaimed between the look
 * and the copy is read in, waiting: the data is right either way.
 */
static ssize_t readv_nowait(struct shim_ofd *o, const struct iovec *iov, int cnt,
			    off_t *pos)
{
	struct iovec *cut, *v;
	size_t total = 0, n, left;
	ssize_t r;
	int k;

	if (!shim_can_read(atomic_load(&o->flags)))
		return shim_fail(-EBADF);
	if ((r = iov_check(iov, cnt, &cut)) < 0)
		return shim_fail(r);
	k = (int)r;
	v = malloc((size_t)(k ? k : 1) * sizeof(*v));
	if (!v || *pos < 0) {
		r = v ? -EINVAL : -ENOMEM;
		free(v);
		free(cut);
		return shim_fail(r);
	}
	memcpy(v, cut ? cut : iov, (size_t)k * sizeof(*v));
	free(cut);
	for (int i = 0; i < k; i++)
		total += v[i].iov_len;
	n = cached_prefix(o->file, *pos, total);
	if (n == 0 && total && *pos < LIB(pc_size(o->file))) {
		free(v);
		return shim_fail(-EAGAIN);
	}
	left = n;
	for (int i = 0; i < k; i++) {	/* the iovec cut to the cached bytes */
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	r = shim_ofd_readv(o, v, k, pos);
	free(v);
	return r;
}

static ssize_t readv2(struct shim_ofd *o, int fd, const struct iovec *iov,
		      int cnt, off_t off, int flags)
{
	bool nowait = flags & RWF_NOWAIT;
	int pc = rwf_flags(flags & ~RWF_NOWAIT);
	ssize_t r;

	if (pc < 0)
		return shim_fail(pc);
	if (!nowait)
		return off == -1 ? pos_readv(o, fd, iov, cnt)
				 : at_readv(o, iov, cnt, off);
	if (off != -1)
		return readv_nowait(o, iov, cnt, &off);
	if (pos_begin(o, fd, &off))
		return -1;
	r = readv_nowait(o, iov, cnt, &off);
	pos_end(o, fd, off, r > 0);
	return r;
}

static ssize_t writev2(struct shim_ofd *o, int fd, const struct iovec *iov,
		       int cnt, off_t off, int flags)
{
	int pc = rwf_flags(flags);

	if (pc < 0)
		return shim_fail(pc);
	return off == -1 ? pos_writev(o, fd, iov, cnt, pc)
			 : at_writev(o, fd, iov, cnt, off, pc);
}

/* ------------------------------------------------------------------ */
/* lseek.                                                              */

static off_t do_lseek(struct shim_ofd *o, int fd, off_t off, int whence)
{
	off_t size, np, cur;

	if (pos_begin(o, fd, &cur))
		return -1;
	size = LIB(pc_size(o->file));
	switch (whence) {
	case SEEK_SET:
		np = off;
		break;
	case SEEK_CUR:
		np = (off > 0 && cur > INT64_MAX - off) ? -1 : cur + off;
		break;
	case SEEK_END:
		np = (off > 0 && size > INT64_MAX - off) ? -1 : size + off;
		break;
	case SEEK_DATA:	/* no holes: data from here to the end */
	case SEEK_HOLE:
		if (off < 0 || off >= size) {
			pos_end(o, fd, cur, false);
			return shim_fail(-ENXIO);
		}
		np = whence == SEEK_DATA ? off : size;
		break;
	default:
		np = -1;
		break;
	}
	if (np < 0) {
		pos_end(o, fd, cur, false);
		return shim_fail(-EINVAL);
	}
	pos_end(o, fd, np, true);
	return np;
}

/* ------------------------------------------------------------------ */
/* The wrappers: syms.h's rw.c group (read, pread, pread64, ... lseek64). */

/* __read_chk, __pread_chk, __pread64_chk: glibc's check, then ours. */
#define SHIM_WRAP_chk(ret, name, params, args, how) \
	SHIM_EXPORT ret name params \
	{ \
		if (n > buflen || !shim_e_ofd(shim_fdt_get(fd))) \
			return REAL(name) args;	/* fails or reads */ \
		return how; \
	}

SHIM_SYMS_RW(SHIM_WRAP)
