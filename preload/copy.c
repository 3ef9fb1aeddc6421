/*
 * copy.c - the copies the kernel would do without the program seeing the
 * data: copy_file_range, sendfile, splice, and syscall(2) with their
 * numbers.
 *
 * When neither fd is managed they go to the kernel as they are.  When one
 * is, the kernel would read or write the file behind the cache (stale
 * data, or pages the cache then overwrites), so the copy is served through
 * the cache instead: a bounce buffer, read from one side, written to the
 * other, a chunk at a time.  A side is
 *
 *   managed       pc_readv / pc_writev at the caller's offset, or at the
 *                 description's (under its pos_lock, moved at the end; a
 *                 shared-position description's is the kernel's, read at
 *                 the start and set at the end without pc_file_pos_lock,
 *                 as the kernel moves f_pos in these calls without its
 *                 f_pos_lock);
 *   unmanaged     pread/pwrite at the caller's offset, or plain read/write
 *                 (the kernel moves its own offset; pipes, sockets).
 *
 * The checks the kernel makes come first, with its errnos and in its
 * order: for copy_file_range EINVAL for flags, EISDIR, EINVAL for what is
 * not a regular file, EBADF for access modes and O_APPEND, EOVERFLOW for a
 * range that wraps, then the count cut at the source's end (the cache's
 * size) before EINVAL for overlapping ranges of one file and for negative
 * offsets; for sendfile EBADF for the source's mode, EINVAL for a negative
 * offset, EBADF for the sink's, EINVAL for O_APPEND; for splice 0 for len 0
 * before anything, EINVAL for flags, ESPIPE for an offset of the pipe's
 * side, EBADF for modes, EINVAL for no pipe and for O_APPEND.  A short write (a full pipe or socket) ends the
 * copy: the source's offset moves by what was written, never by what was
 * only read.  A short read from a stream (a pipe holding less than asked)
 * ends it too, as the kernel's splice returns what the pipe held.  SPLICE_F_NONBLOCK
 * (or an O_NONBLOCK pipe) is honoured with a poll of the pipe first; the
 * chunk is then one pipe buffer, which a ready pipe takes without waiting.
 *
 * syscall(2) is interposed for these three numbers only (fsx makes its
 * copies with syscall(__NR_copy_file_range), as programs built before
 * glibc 2.27 had the wrapper do): served as the libc call, so the kernel
 * never copies behind the cache.  Every other number, and every call on
 * the shim's behalf (shim_internal: the library's futexes), is libc's
 * syscall with the six arguments it was given, as glibc's own passes
 * them on.
 */
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <stdarg.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

#define CHUNK (256 * 1024)

enum side_kind {
	SIDE_OFFP,	/* at the caller's offset */
	SIDE_DESC,	/* managed, at the description's offset (pos_lock) */
	SIDE_KPOS,	/* unmanaged file at the kernel's offset: p-calls, then lseek */
	SIDE_STREAM,	/* unmanaged: read/write (pipes, sockets) */
	SIDE_SHARED,	/* the other side's description, whose end moves it */
};

struct side {
	int fd;
	struct shim_ofd *o;	/* managed, or NULL */
	off_t *offp;		/* the caller's offset, or NULL */
	off_t pos;
	enum side_kind kind;
};

/* The access mode and status flags of either kind of side; -1: errno. */
static int side_flags(const struct side *s)
{
	return s->o && !atomic_load(&s->o->kpos) ? atomic_load(&s->o->flags)
						 : REAL(fcntl)(s->fd, F_GETFL);
}

/* Where the side starts; @seekable: an unmanaged side without an offset
 * is a file whose kernel offset moves (else a stream). */
static int side_begin(struct side *s, bool seekable)
{
	if (s->offp) {
		if (*s->offp < 0)
			return -EINVAL;
		s->kind = SIDE_OFFP;
		s->pos = *s->offp;
	} else if (s->o) {
		s->kind = SIDE_DESC;
		pthread_mutex_lock(&s->o->pos_lock);
		s->pos = atomic_load(&s->o->kpos) ? REAL(lseek)(s->fd, 0, SEEK_CUR)
						  : s->o->pos;
	} else if (seekable) {
		s->kind = SIDE_KPOS;
		s->pos = REAL(lseek)(s->fd, 0, SEEK_CUR);
		if (s->pos < 0)
			return -errno;
	} else {
		s->kind = SIDE_STREAM;
	}
	return 0;
}

static void side_end(struct side *s)
{
	switch (s->kind) {
	case SIDE_OFFP:
		*s->offp = s->pos;
		break;
	case SIDE_DESC:
		if (atomic_load(&s->o->kpos))
			REAL(lseek)(s->fd, s->pos, SEEK_SET);
		else
			s->o->pos = s->pos;
		pthread_mutex_unlock(&s->o->pos_lock);
		break;
	case SIDE_KPOS:
		REAL(lseek)(s->fd, s->pos, SEEK_SET);
		break;
	case SIDE_STREAM:
	case SIDE_SHARED:
		break;
	}
}

static ssize_t side_read(struct side *s, void *buf, size_t n)
{
	struct iovec iov = { buf, n };
	ssize_t r;

	if (s->o)
		return shim_ofd_readv(s->o, &iov, 1, &s->pos);
	if (s->kind == SIDE_STREAM)
		return REAL(read)(s->fd, buf, n);
	r = REAL(pread)(s->fd, buf, n, s->pos);
	if (r > 0)
		s->pos += r;
	return r;
}

static ssize_t side_write(struct side *s, const void *buf, size_t n)
{
	struct iovec iov = { (void *)buf, n };
	ssize_t r;

	if (s->o)
		return shim_ofd_writev(s->o, &iov, 1, &s->pos, PC_RW_NOAPPEND);
	if (s->kind == SIDE_STREAM)
		return REAL(write)(s->fd, buf, n);
	r = REAL(pwrite)(s->fd, buf, n, s->pos);
	if (r > 0)
		s->pos += r;
	return r;
}

/* The source gave @got bytes; the sink took @put (< @got): give back. */
static void side_unread(struct side *s, size_t got, ssize_t put)
{
	size_t back = got - (size_t)(put > 0 ? put : 0);

	if (s->kind != SIDE_STREAM)
		s->pos -= (off_t)back;	/* a pipe cannot give back: lost */
}

/*
 * Up to @len bytes from @in to @out, @chunk at a time; what was moved, or
 * -1 with errno when nothing was.
 */
static ssize_t move(struct side *in, struct side *out, size_t len, size_t chunk)
{
	size_t done = 0;
	ssize_t r = 0;
	char *buf;

	if (len > (size_t)SHIM_MAX_RW)
		len = (size_t)SHIM_MAX_RW;
	buf = malloc(chunk < len ? chunk : len ? len : 1);
	if (!buf)
		return shim_fail(-ENOMEM);
	while (done < len) {
		size_t n = len - done < chunk ? len - done : chunk;
		ssize_t got = side_read(in, buf, n), put;

		if (got <= 0) {
			r = got;
			break;
		}
		put = side_write(out, buf, (size_t)got);
		if (put < got) {
			side_unread(in, (size_t)got, put);
			if (put > 0)
				done += (size_t)put;
			r = put < 0 ? -1 : 0;
			break;
		}
		done += (size_t)put;
		if (in->kind == SIDE_STREAM && (size_t)got < n)
			break;	/* what the pipe held: never wait for more */
	}
	free(buf);
	if (!done && r < 0)
		return -1;	/* errno from the failed call */
	return (ssize_t)done;
}

static ssize_t run(struct side *in, bool in_seekable, struct side *out,
		   bool out_seekable, size_t len, size_t chunk)
{
	int e, saved;
	ssize_t r;

	/* One description at both ends (sendfile from a file to itself):
	 * both start at its offset, which moves once, by what was copied. */
	if (in->o && in->o == out->o && !in->offp && !out->offp) {
		if ((e = side_begin(in, in_seekable)))
			return shim_fail(e);
		out->kind = SIDE_SHARED;
		out->pos = in->pos;
		r = move(in, out, len, chunk);
		saved = errno;
		side_end(in);
		errno = saved;
		return r;
	}
	/* Two descriptions' pos_locks: in address order, never one twice. */
	if (out->o && in->o && (uintptr_t)out->o < (uintptr_t)in->o &&
	    !in->offp && !out->offp) {
		if ((e = side_begin(out, out_seekable)))
			return shim_fail(e);
		if ((e = side_begin(in, in_seekable))) {
			side_end(out);
			return shim_fail(e);
		}
	} else {
		if ((e = side_begin(in, in_seekable)))
			return shim_fail(e);
		if ((e = side_begin(out, out_seekable))) {
			side_end(in);
			return shim_fail(e);
		}
	}
	r = move(in, out, len, chunk);
	saved = errno;
	side_end(out);
	side_end(in);
	errno = saved;
	return r;
}

static int file_type(int fd, mode_t *mode, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (REAL(fstat)(fd, &st) != 0)
		return -errno;
	*mode = st.st_mode & S_IFMT;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* ------------------------------------------------------------------ */

/* Where a side of copy_file_range starts, for the checks. */
static off_t start_of(const struct side *s)
{
	if (s->offp)
		return *s->offp;
	if (s->o) {
		off_t pos;

		pthread_mutex_lock(&s->o->pos_lock);
		pos = atomic_load(&s->o->kpos) ? REAL(lseek)(s->fd, 0, SEEK_CUR)
					       : s->o->pos;
		pthread_mutex_unlock(&s->o->pos_lock);
		return pos;
	}
	return REAL(lseek)(s->fd, 0, SEEK_CUR);
}

/* The source's size: the cache's for a managed side, else the kernel's. */
static off_t size_of(const struct side *s)
{
	struct stat st;

	if (s->o)
		return LIB(pc_size(s->o->file));
	return REAL(fstat)(s->fd, &st) == 0 ? st.st_size : 0;
}

/*
 * The kernel's checks of the offsets, in its order (generic_copy_file_checks,
 * then rw_verify_area): -EOVERFLOW for a range that wraps, the count cut
 * at the source's end, then -EINVAL for ranges of one file that overlap
 * (judged on the cut count) and for a negative offset.  *@len becomes
 * the cut count.
 */
static int copy_checks(const struct side *in, const struct side *out,
		       bool same, size_t *len)
{
	off_t pin = start_of(in), pout = start_of(out), size = size_of(in);
	uint64_t count = *len, uin = (uint64_t)pin, uout = (uint64_t)pout;

	if (uin + count < uin || uout + count < uout)
		return -EOVERFLOW;
	if (pin >= size)
		count = 0;
	else if (count > (uint64_t)size - uin)
		count = (uint64_t)size - uin;
	if (same && uout + count > uin && uout < uin + count)
		return -EINVAL;	/* overlapping ranges of one file */
	if (pin < 0 || pout < 0)
		return -EINVAL;
	*len = (size_t)count;
	return 0;
}

SHIM_EXPORT ssize_t copy_file_range(int fdin, off64_t *offin, int fdout,
				    off64_t *offout, size_t len, unsigned flags)
{
	struct shim_ofd *oi = shim_ofd_get(fdin), *oo = shim_ofd_get(fdout);
	struct side in = { fdin, oi, offin, 0, SIDE_STREAM };
	struct side out = { fdout, oo, offout, 0, SIDE_STREAM };
	int fin, fout, e;
	mode_t min, mout;
	dev_t din, dout;
	ino_t iin, iout;
	ssize_t r;

	if (!oi && !oo)
		return REAL(copy_file_range)(fdin, offin, fdout, offout, len, flags);
	fin = side_flags(&in);
	fout = side_flags(&out);
	if (fin < 0 || fout < 0)
		r = -1;	/* EBADF */
	else if (flags)
		r = shim_fail(-EINVAL);
	else if ((e = file_type(fdin, &min, &din, &iin)) ||
		 (e = file_type(fdout, &mout, &dout, &iout)))
		r = shim_fail(e);
	else if (min == S_IFDIR || mout == S_IFDIR)
		r = shim_fail(-EISDIR);
	else if (min != S_IFREG || mout != S_IFREG)
		r = shim_fail(-EINVAL);
	else if (!shim_can_read(fin) || !shim_can_write(fout) || (fout & O_APPEND))
		r = shim_fail(-EBADF);
	else if ((e = copy_checks(&in, &out, din == dout && iin == iout, &len)))
		r = shim_fail(e);
	else if (!len)
		r = 0;
	else
		r = run(&in, true, &out, true, len, CHUNK);
	if (oi)
		shim_ofd_put(oi);
	if (oo)
		shim_ofd_put(oo);
	return r;
}

/* sendfile, sendfile64; SHIM_PASS when neither fd is managed. */
static ssize_t copy_send(int fdout, int fdin, off_t *off, size_t count)
{
	struct shim_ofd *oi = shim_ofd_get(fdin), *oo = shim_ofd_get(fdout);
	struct side in = { fdin, oi, off, 0, SIDE_STREAM };
	struct side out = { fdout, oo, NULL, 0, SIDE_STREAM };
	int fin, fout;
	ssize_t r;

	if (!oi && !oo)
		return SHIM_PASS;	/* the kernel's */
	fin = side_flags(&in);
	fout = side_flags(&out);
	if (fin < 0 || fout < 0)
		r = -1;
	else if (!shim_can_read(fin))
		r = shim_fail(-EBADF);
	else if (off && *off < 0)
		r = shim_fail(-EINVAL);
	else if (!shim_can_write(fout))
		r = shim_fail(-EBADF);
	else if (fout & O_APPEND)
		r = shim_fail(-EINVAL);
	else if (!count)
		r = 0;
	else
		r = run(&in, true, &out, false, count, CHUNK);
	if (oi)
		shim_ofd_put(oi);
	if (oo)
		shim_ofd_put(oo);
	return r;
}

#define SPLICE_F_ALL (SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | \
		      SPLICE_F_GIFT)

/* Is a side of splice a pipe (never a managed one)?  0 or -errno. */
static int is_pipe(const struct side *s, bool *pipe)
{
	mode_t m;
	dev_t d;
	ino_t i;
	int e;

	*pipe = false;
	if (s->o)
		return 0;
	if ((e = file_type(s->fd, &m, &d, &i)))
		return e;
	*pipe = m == S_IFIFO;
	return 0;
}

/* A pipe side of splice: -EAGAIN when it is not ready and must not block. */
static int pipe_ready(int fd, short ev, unsigned flags)
{
	struct pollfd p = { fd, ev, 0 };
	int fl = REAL(fcntl)(fd, F_GETFL);

	if (!(flags & SPLICE_F_NONBLOCK) && !(fl >= 0 && (fl & O_NONBLOCK)))
		return 0;	/* may block, as the kernel's would */
	return poll(&p, 1, 0) == 1 ? 1 : -EAGAIN;
}

SHIM_EXPORT ssize_t splice(int fdin, off64_t *offin, int fdout, off64_t *offout,
			   size_t len, unsigned flags)
{
	struct shim_ofd *oi = shim_ofd_get(fdin), *oo = shim_ofd_get(fdout);
	struct side in = { fdin, oi, offin, 0, SIDE_STREAM };
	struct side out = { fdout, oo, offout, 0, SIDE_STREAM };
	int pipefd = oi ? fdout : fdin, fin, fout, ready;
	bool in_pipe, out_pipe;
	size_t chunk = 65536;
	ssize_t r;

	if (!oi && !oo)
		return REAL(splice)(fdin, offin, fdout, offout, len, flags);
	fin = side_flags(&in);
	fout = side_flags(&out);
	if (!len)
		r = 0;	/* before any check, as the kernel's */
	else if (flags & ~SPLICE_F_ALL)
		r = shim_fail(-EINVAL);
	else if (fin < 0 || fout < 0)
		r = -1;	/* EBADF */
	else if ((r = is_pipe(&in, &in_pipe)) < 0 ||
		 (r = is_pipe(&out, &out_pipe)) < 0)
		r = shim_fail(r);
	else if ((in_pipe && offin) || (out_pipe && offout))
		r = shim_fail(-ESPIPE);
	else if (!shim_can_read(fin) || !shim_can_write(fout))
		r = shim_fail(-EBADF);
	else if (!in_pipe && !out_pipe)
		r = shim_fail(-EINVAL);	/* no pipe */
	else if (in_pipe && (fout & O_APPEND))
		r = shim_fail(-EINVAL);
	else if ((ready = pipe_ready(pipefd, oi ? POLLOUT : POLLIN, flags)) < 0)
		r = shim_fail(ready);
	else {
		if (ready)
			chunk = PIPE_BUF;	/* one that a ready pipe takes */
		r = run(&in, false, &out, false, len < chunk ? len : chunk, chunk);
	}
	if (oi)
		shim_ofd_put(oi);
	if (oo)
		shim_ofd_put(oo);
	return r;
}

/*
 * A system call's six arguments are read whatever its number takes (the
 * ABI passes them in registers: the unused ones are whatever they hold),
 * as glibc's syscall does.
 */
SHIM_EXPORT long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!shim_internal) {
		switch (nr) {
		case SYS_copy_file_range:
			return copy_file_range((int)a[0], (off64_t *)a[1],
					       (int)a[2], (off64_t *)a[3],
					       (size_t)a[4], (unsigned)a[5]);
		case SYS_sendfile:
			return sendfile64((int)a[0], (int)a[1],
					  (off64_t *)a[2], (size_t)a[3]);
		case SYS_splice:
			return splice((int)a[0], (off64_t *)a[1], (int)a[2],
				      (off64_t *)a[3], (size_t)a[4],
				      (unsigned)a[5]);
		}
	}
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* The wrappers: syms.h's copy.c group. */
SHIM_SYMS_COPY(SHIM_WRAP)
