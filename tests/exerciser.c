/*
 * exerciser.c - a model-checked random exerciser of every file call the
 * shim serves (in the spirit of xfstests' fsx; written here).  A plain
 * program: tests/test_exerciser.sh runs it under `pagecache exec` (shared
 * caches of 1M, 2M and 8M, and --private) and once without the shim, where
 * it validates the model itself against the kernel; `make soak` runs it
 * with fresh seeds for minutes.
 *
 * What it models.  Three files of its own (main, aux, map), and in the
 * multi-process mode a fourth (shared) that every worker opens: for each,
 * the bytes and the size, bytes past the size always zero (a truncation
 * clears them, so an extension needs nothing).  For each file three
 * descriptors: fd and its dup (one open file description: one position),
 * and app (O_APPEND, its own position).  Everything the run depends on -
 * the options, the random state, the positions, the fd numbers, the models,
 * the op log - lives in one memfd mapped MAP_SHARED, so a forked child's
 * ops move the parent's model, and an exec'd image maps it again from the
 * fd number in its argv (-X FD) and goes on with the same sequence.  The
 * shared file's model is a second memfd, changed only under an fcntl write
 * lock on the whole file.
 *
 * The ops (table ops[] below: name, weight, where it may run):
 *   read write pread pwrite readv writev preadv pwritev
 *   preadv2 pwritev2 (offset -1: the position; RWF_HIPRI, RWF_NOWAIT
 *     (EAGAIN or a prefix; EOPNOTSUPP: skipped and said, as fallocate's),
 *     RWF_DSYNC, RWF_SYNC, RWF_APPEND writes)
 *   append (write, writev, pwrite on the O_APPEND fd: at the size)
 *   lseek (SEEK_SET/CUR/END; SEEK_DATA/SEEK_HOLE, checked against what the
 *     model allows: no nonzero byte skipped, a hole reads zero; ENXIO past
 *     the size; EINVAL below 0)
 *   ftruncate truncate (by path)
 *   fallocate: 0, KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE (+KEEP_SIZE),
 *     COLLAPSE_RANGE, INSERT_RANGE (block-aligned; an unaligned or
 *     out-of-range one expects EINVAL); posix_fallocate.  A mode the test
 *     directory's file system answers EOPNOTSUPP is skipped from then on
 *     and said once ("fallocate MODE: not supported ...")
 *   copy_file_range (between the files, and within one on ranges that do
 *     not overlap), sendfile (both called again after a short count, as
 *     a program does), splice (file -> pipe -> file), splice_read
 *     (file -> pipe, the pipe read and checked).  Source ranges stay below
 *     the source's size unless -E (past EOF: a known shim bug)
 *   mmap_read mmap_write (MAP_SHARED, msync sometimes): the map file, and
 *     main in the last tenth of the run (under the shim a mapping hands the
 *     file to the kernel for good)
 *   sync (fsync, fdatasync, sync_file_range, syncfs)
 *   reopen (all three fds closed and opened again, sometimes O_TRUNC)
 *   dup (the dup closed and made again: dup, dup2, dup3, F_DUPFD)
 *   fork, exec (with -F): a child does 1-4 ops through the inherited fds
 *     while the parent waits; the process re-execs itself mid-sequence
 *   locked (with -P): an op on the shared file under the fcntl lock
 * The check after every op: what a read returned against the model, the
 * errno against the kernel's, the size of every file (fstat) against its
 * model, the bytes an op changed read back (pread); every 64 ops, after a
 * reopen, a fork and an exec, and at the end, every file whole.  A mismatch
 * prints the seed, the last 20 ops (offsets, lengths, results, sizes), the
 * first differing offset with expected and got bytes, and exits 1.
 *
 * One seed, the same ops everywhere: where the kernel may answer in more
 * than one way (where SEEK_DATA/SEEK_HOLE find holes, how much of a
 * RWF_NOWAIT read was cached) the answer is checked against what the model
 * allows and the position then set as if it had been the model's, so a
 * plain run and a shim run of one seed end with the same sizes and the
 * same digest (FNV-1a of the models, in the last line), which
 * test_exerciser.sh compares.
 *
 *   exerciser [-S SEED] [-N OPS (2000)] [-L MAXSIZE (1 MiB)]
 *             [-l MAXLEN (256 KiB)] [-d DIR ($TMPDIR or /var/tmp)]
 *             [-P WORKERS] [-F] [-E] [-x OP]... [-v]
 * prints "exerciser: seed SEED ..." first; -S SEED replays it (with -P
 * each worker's sequence, worker i's seed SEED+i+1; their interleaving on
 * the shared file is the scheduler's, and the model holds whatever it is).
 * -x OP leaves an op of the table out (to minimise a failure), -v prints
 * every op.  Exit 0: every op agreed; 1: a mismatch (or an unexpected
 * error); 2: usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { F_MAIN, F_AUX, F_MAP, F_SHARED, NFILES, NOWN = F_SHARED };
static const char *const file_name[NFILES] = { "main", "aux", "map", "shared" };

enum {	/* st->flags */
	OPT_FORK_EXEC = 1 << 0,	/* -F */
	OPT_PAST_EOF = 1 << 1,	/* -E */
	OPT_VERBOSE = 1 << 2,	/* -v */
};

#define LOGN 32
#define MAXIOV 8
#define PIPE_MAX 61440		/* 15 pages: 16 pipe buffers at any alignment */
#define BLK 4096		/* fallocate's collapse/insert unit: st_blksize */

struct file {			/* a file's descriptors and their positions */
	char path[512];
	int fd, dup, app;	/* fd and dup: one description */
	off_t pos, pos_app;
	bool open;
};

struct model {			/* a file's contents: data[size..max) is zero */
	off_t size;
	char pad[56];
	unsigned char data[];
};

struct state {			/* all of a run: one memfd, MAP_SHARED */
	uint64_t seed, rng;
	long nops, opno, mmap_main_from;
	size_t maxsize, shared_max, maxlen;
	unsigned flags, unsupported, said;
	uint64_t excluded;	/* -x NAME: ops[i] left out */
	int worker, nworkers;	/* -1: not a worker */
	int own_fd, shared_fd;	/* the memfds (not close-on-exec) */
	char dir[400];
	struct file f[NFILES];
	struct { long opno; char text[200]; } log[LOGN];
	unsigned nlog;
};

#define HDR ((sizeof(struct state) + 4095) & ~(size_t)4095)

static struct state *st;
static unsigned char *own_base, *shared_base;
static unsigned char *buf, *buf2;	/* 2 * maxlen each */
static char cur[200];			/* the op being done */
static bool in_child;

/* ------------------------------------------------------------ failure */

static void log_tail(void)
{
	unsigned n = st->nlog < 20 ? st->nlog : 20;

	fprintf(stderr, "last %u ops:\n", n);
	for (unsigned i = st->nlog - n; i < st->nlog; i++)
		fprintf(stderr, "  #%ld %s\n", st->log[i % LOGN].opno,
			st->log[i % LOGN].text);
	fprintf(stderr, "  #%ld %s   <- this one\n", st->opno, cur);
}

static void prefix(FILE *to)
{
	fprintf(to, "exerciser%s", in_child ? " (fork child)" : "");
	if (st->worker >= 0)
		fprintf(to, " worker %d", st->worker);
}

static void print_excluded(FILE *to);

static _Noreturn void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	prefix(stderr);
	fprintf(stderr, ": FAIL seed %" PRIu64 " op #%ld: ", st->seed, st->opno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	log_tail();
	fprintf(stderr, "replay: exerciser -S %" PRIu64 " -N %ld -L %zu -l %zu%s%s%s",
		st->seed, st->nops, st->maxsize, st->maxlen,
		st->flags & OPT_FORK_EXEC ? " -F" : "",
		st->flags & OPT_PAST_EOF ? " -E" : "",
		st->nworkers ? " -P" : "");
	if (st->nworkers)
		fprintf(stderr, " %d", st->nworkers);
	print_excluded(stderr);
	fprintf(stderr, "\n");
	_exit(1);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	prefix(stdout);
	printf(": ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* -------------------------------------------------------------- model */

static struct model *M(int fi)
{
	if (fi == F_SHARED)
		return (struct model *)shared_base;
	return (struct model *)(own_base + HDR + (size_t)fi *
				(sizeof(struct model) + st->maxsize));
}

static size_t file_max(int fi)
{
	return fi == F_SHARED ? st->shared_max : st->maxsize;
}

static void model_write(int fi, off_t off, const void *p, size_t n)
{
	struct model *m = M(fi);

	if (n == 0)		/* nothing written: the size stays */
		return;
	memcpy(m->data + off, p, n);
	if (off + (off_t)n > m->size)
		m->size = off + (off_t)n;
}

static void model_zero(int fi, off_t off, off_t len)
{
	struct model *m = M(fi);

	if (off < m->size)
		memset(m->data + off, 0, (size_t)((off + len < m->size ? off + len : m->size) - off));
}

static void model_resize(int fi, off_t size)
{
	struct model *m = M(fi);

	if (size < m->size)
		memset(m->data + size, 0, (size_t)(m->size - size));
	m->size = size;
}

/* ------------------------------------------------------------- random */

static uint64_t rnd(void)	/* splitmix64 */
{
	uint64_t z = (st->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void fill(void *p, size_t n)
{
	unsigned char *c = p;
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(i & 7))
			v = rnd() | 0x0101010101010101ULL;	/* never 0 */
		c[i] = (unsigned char)v;
		v >>= 8;
	}
}

static size_t pick_len(void)
{
	uint64_t r = rn(100);
	size_t n;

	if (r < 45)
		n = 1 + rn(4096);
	else if (r < 75)
		n = 1 + rn(65536);
	else if (r < 92)
		n = 4096 * (1 + rn(16));
	else
		n = 1 + rn(st->maxlen);
	return n > st->maxlen ? st->maxlen : n;
}

/* An offset for @len bytes of @fi: inside the size mostly, past it
 * sometimes (a hole then), page-aligned often; @len shortened to fit. */
static off_t pick_off(int fi, size_t *len)
{
	off_t size = M(fi)->size, max = (off_t)file_max(fi), off;
	uint64_t r = rn(100);

	if (r < 55)
		off = (off_t)rn((uint64_t)size + 1);
	else if (r < 75)
		off = (off_t)rn((uint64_t)size / 4096 + 1) * 4096;
	else if (r < 95)
		off = (off_t)rn((uint64_t)size + 65536);
	else
		off = (off_t)rn((uint64_t)max);
	if (off > max)
		off = max;
	if (len && (off_t)*len > max - off)
		*len = (size_t)(max - off);
	return off;
}

/* ---------------------------------------------------------- op record */

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur, sizeof(cur), fmt, ap);
	va_end(ap);
}

static void done(long long r)
{
	size_t l = strlen(cur);

	snprintf(cur + l, sizeof(cur) - l, " = %lld", r);
}

static void record(void)
{
	size_t l = strlen(cur);
	unsigned i = st->nlog++ % LOGN;

	snprintf(cur + l, sizeof(cur) - l, " [size %jd]", (intmax_t)M(F_MAIN)->size);
	st->log[i].opno = st->opno;
	memcpy(st->log[i].text, cur, sizeof(cur));
	if (st->flags & OPT_VERBOSE) {
		prefix(stdout);
		printf(" #%ld %s\n", st->opno, cur);
	}
	cur[0] = 0;
}

/* ------------------------------------------------------------- checks */

static void compare(int fi, off_t off, const unsigned char *got, size_t n,
		    const char *what)
{
	const unsigned char *exp = M(fi)->data + off;

	if (!memcmp(exp, got, n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (exp[i] == got[i])
			continue;
		char e[64] = "", g[64] = "";
		size_t k = n - i < 16 ? n - i : 16;

		unsigned char raw[16];
		char d[64] = "";
		long rr = syscall(SYS_pread64, st->f[fi].fd, raw, k, (long)(off + (off_t)i));

		for (size_t j = 0; j < k; j++) {
			sprintf(e + 3 * j, "%02x ", exp[i + j]);
			sprintf(g + 3 * j, "%02x ", got[i + j]);
			if ((long)j < rr)
				sprintf(d + 3 * j, "%02x ", raw[j]);
		}
		/* The kernel's view too (a raw pread: no shim): under the
		 * shim, where the bad bytes are, the cache or the disk. */
		fail("%s of %s: first difference at offset %jd (0x%jx, %zu into "
		     "%zu bytes at %jd), size %jd\n  expected %s\n  got      %s\n"
		     "  kernel   %s(raw pread: %ld)",
		     what, file_name[fi], (intmax_t)(off + (off_t)i),
		     (intmax_t)(off + (off_t)i), i, n, (intmax_t)off,
		     (intmax_t)M(fi)->size, e, g, d, rr);
	}
}

static void check_size(int fi)
{
	struct stat sb;

	if (fstat(st->f[fi].fd, &sb))
		fail("fstat %s: %s", file_name[fi], strerror(errno));
	if (sb.st_size != M(fi)->size)
		fail("size of %s: expected %jd, fstat says %jd", file_name[fi],
		     (intmax_t)M(fi)->size, (intmax_t)sb.st_size);
}

/* Read [lo, hi) of @fi back with pread and compare; past the size, a
 * pread must return 0. */
static void check_range(int fi, off_t lo, off_t hi)
{
	off_t size = M(fi)->size;

	if (hi > size)
		hi = size;
	while (lo < hi) {
		size_t n = hi - lo > (off_t)st->maxlen ? st->maxlen : (size_t)(hi - lo);
		ssize_t r = pread(st->f[fi].fd, buf2, n, lo);

		if (r != (ssize_t)n)
			fail("check pread %s %jd+%zu: %zd (%s), size %jd", file_name[fi],
			     (intmax_t)lo, n, r, r < 0 ? strerror(errno) : "short",
			     (intmax_t)size);
		compare(fi, lo, buf2, n, "check pread");
		lo += (off_t)n;
	}
	if (pread(st->f[fi].fd, buf2, 1, size) != 0)
		fail("pread of %s at its size %jd returned data", file_name[fi],
		     (intmax_t)size);
}

static void check_all(int fi)
{
	check_size(fi);
	check_range(fi, 0, M(fi)->size);
}

/* ---------------------------------------------------------- the files */

static void open_file(int fi, int extra)
{
	struct file *f = &st->f[fi];

	f->fd = open(f->path, O_RDWR | O_CREAT | extra, 0644);
	f->app = open(f->path, O_RDWR | O_APPEND);
	f->dup = f->fd < 0 ? -1 : dup(f->fd);
	if (f->fd < 0 || f->app < 0 || f->dup < 0)
		fail("open %s: %s", f->path, strerror(errno));
	f->pos = f->pos_app = 0;
	f->open = true;
}

static void close_file(int fi)
{
	struct file *f = &st->f[fi];

	if (close(f->fd) || close(f->dup) || close(f->app))
		fail("close %s: %s", f->path, strerror(errno));
	f->open = false;
}

/* ---------------------------------------------------------------- ops */

/* Which of fd and its dup an op goes through (one position). */
static int pick_fd(int fi)
{
	return rn(2) ? st->f[fi].fd : st->f[fi].dup;
}

static void expect_ok(long long r, long long want, const char *what)
{
	if (r != want)
		fail("%s: returned %lld (%s), expected %lld", what, r,
		     r < 0 ? strerror(errno) : "count", want);
}

static size_t read_expect(int fi, off_t off, size_t len)
{
	off_t size = M(fi)->size;

	return off >= size ? 0 : (size_t)(size - off < (off_t)len ? size - off : (off_t)len);
}

static int make_iov(struct iovec *iov, unsigned char *p, size_t len)
{
	int cnt = 1 + (int)rn(MAXIOV);

	for (int i = 0; i < cnt; i++) {
		size_t part = i == cnt - 1 ? len : rn(len + 1);

		iov[i].iov_base = p;
		iov[i].iov_len = part;
		p += part;
		len -= part;
	}
	return cnt;
}

/* What every positional/at-offset write does: @len random bytes. */
static size_t prep_write(int fi, off_t at, size_t len)
{
	size_t max = file_max(fi);

	if (at >= (off_t)max)
		return 0;
	if ((off_t)len > (off_t)max - at)
		len = (size_t)((off_t)max - at);
	fill(buf, len);
	return len;
}

static void after_write(int fi, off_t at, size_t n)
{
	model_write(fi, at, buf, n);
	check_range(fi, at, at + (off_t)n);
}

static void op_read(int fi)
{
	struct file *f = &st->f[fi];
	size_t len = pick_len(), want = read_expect(fi, f->pos, len);
	int fd = pick_fd(fi);
	ssize_t r;

	note("read %s fd %d pos %jd len %zu", file_name[fi], fd, (intmax_t)f->pos, len);
	r = read(fd, buf, len);
	done(r);
	expect_ok(r, (long long)want, "read");
	compare(fi, f->pos, buf, want, "read");
	f->pos += r;
}

static void op_write(int fi)
{
	struct file *f = &st->f[fi];
	size_t len = prep_write(fi, f->pos, pick_len());
	int fd = pick_fd(fi);
	ssize_t r;

	note("write %s fd %d pos %jd len %zu", file_name[fi], fd, (intmax_t)f->pos, len);
	r = write(fd, buf, len);
	done(r);
	expect_ok(r, (long long)len, "write");
	after_write(fi, f->pos, len);
	f->pos += r;
}

static void op_pread(int fi)
{
	size_t len = pick_len();
	off_t off = pick_off(fi, NULL);
	size_t want = read_expect(fi, off, len);
	ssize_t r;

	note("pread %s off %jd len %zu", file_name[fi], (intmax_t)off, len);
	r = pread(pick_fd(fi), buf, len, off);
	done(r);
	expect_ok(r, (long long)want, "pread");
	compare(fi, off, buf, want, "pread");
}

static void op_pwrite(int fi)
{
	size_t len = pick_len();
	off_t off = pick_off(fi, &len);
	ssize_t r;

	len = prep_write(fi, off, len);
	note("pwrite %s off %jd len %zu", file_name[fi], (intmax_t)off, len);
	r = pwrite(pick_fd(fi), buf, len, off);
	done(r);
	expect_ok(r, (long long)len, "pwrite");
	after_write(fi, off, len);
}

static void op_readv(int fi)
{
	struct file *f = &st->f[fi];
	struct iovec iov[MAXIOV];
	size_t len = pick_len(), want = read_expect(fi, f->pos, len);
	int cnt = make_iov(iov, buf, len);
	ssize_t r;

	note("readv %s pos %jd len %zu iovs %d", file_name[fi], (intmax_t)f->pos, len, cnt);
	r = readv(pick_fd(fi), iov, cnt);
	done(r);
	expect_ok(r, (long long)want, "readv");
	compare(fi, f->pos, buf, want, "readv");
	f->pos += r;
}

static void op_writev(int fi)
{
	struct file *f = &st->f[fi];
	struct iovec iov[MAXIOV];
	size_t len = prep_write(fi, f->pos, pick_len());
	int cnt = make_iov(iov, buf, len);
	ssize_t r;

	note("writev %s pos %jd len %zu iovs %d", file_name[fi], (intmax_t)f->pos, len, cnt);
	r = writev(pick_fd(fi), iov, cnt);
	done(r);
	expect_ok(r, (long long)len, "writev");
	after_write(fi, f->pos, len);
	f->pos += r;
}

static void op_preadv(int fi)
{
	struct iovec iov[MAXIOV];
	size_t len = pick_len();
	off_t off = pick_off(fi, NULL);
	size_t want = read_expect(fi, off, len);
	int cnt = make_iov(iov, buf, len);
	ssize_t r;

	note("preadv %s off %jd len %zu iovs %d", file_name[fi], (intmax_t)off, len, cnt);
	r = preadv(pick_fd(fi), iov, cnt, off);
	done(r);
	expect_ok(r, (long long)want, "preadv");
	compare(fi, off, buf, want, "preadv");
}

static void op_pwritev(int fi)
{
	struct iovec iov[MAXIOV];
	size_t len = pick_len();
	off_t off = pick_off(fi, &len);
	int cnt;
	ssize_t r;

	len = prep_write(fi, off, len);
	cnt = make_iov(iov, buf, len);
	note("pwritev %s off %jd len %zu iovs %d", file_name[fi], (intmax_t)off, len, cnt);
	r = pwritev(pick_fd(fi), iov, cnt, off);
	done(r);
	expect_ok(r, (long long)len, "pwritev");
	after_write(fi, off, len);
}

enum { FA_ALLOC, FA_KEEP, FA_PUNCH, FA_ZERO, FA_ZERO_KEEP, FA_COLLAPSE,
       FA_INSERT, FA_POSIX, FA_NR,
       UNS_NOWAIT = FA_NR, UNS_NOWAIT_W };	/* st->unsupported's bits: these, and preadv2's */
static const struct { const char *name; int mode; } fa_modes[FA_NR] = {
	[FA_ALLOC] = { "0", 0 },
	[FA_KEEP] = { "KEEP_SIZE", FALLOC_FL_KEEP_SIZE },
	[FA_PUNCH] = { "PUNCH_HOLE", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE },
	[FA_ZERO] = { "ZERO_RANGE", FALLOC_FL_ZERO_RANGE },
	[FA_ZERO_KEEP] = { "ZERO_RANGE|KEEP_SIZE",
			   FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE },
	[FA_COLLAPSE] = { "COLLAPSE_RANGE", FALLOC_FL_COLLAPSE_RANGE },
	[FA_INSERT] = { "INSERT_RANGE", FALLOC_FL_INSERT_RANGE },
	[FA_POSIX] = { "posix_fallocate", 0 },
};

/* An op the test directory's file system refuses (EOPNOTSUPP): said once
 * (test_exerciser.sh compares what a run skipped with the plain kernel's),
 * skipped from then on. */
static bool unsupported(int mode, const char *name, int err)
{
	if (err != EOPNOTSUPP)
		return false;
	st->unsupported |= 1u << mode;
	if (!(st->said & (1u << mode))) {
		st->said |= 1u << mode;
		say("%s: not supported on %s (EOPNOTSUPP), op skipped from now on",
		    name, st->dir);
	}
	return true;
}

static void op_preadv2(int fi)
{
	static const int flag[] = { 0, RWF_HIPRI, RWF_NOWAIT };
	static const char *const fname[] = { "0", "HIPRI", "NOWAIT" };
	struct file *f = &st->f[fi];
	struct iovec iov[MAXIOV];
	size_t len = pick_len();
	bool atpos = rn(3) == 0;
	off_t off = atpos ? f->pos : pick_off(fi, NULL);
	size_t want = read_expect(fi, off, len);
	int cnt = make_iov(iov, buf, len), k = (int)rn(3);
	ssize_t r;

	if (flag[k] == RWF_NOWAIT && st->unsupported & (1u << UNS_NOWAIT))
		k = 0;
	note("preadv2 %s off %jd%s len %zu iovs %d flags %s", file_name[fi],
	     (intmax_t)off, atpos ? " (-1: pos)" : "", len, cnt, fname[k]);
	r = preadv2(pick_fd(fi), iov, cnt, atpos ? -1 : off, flag[k]);
	done(r);
	if (r < 0 && flag[k] == RWF_NOWAIT &&
	    unsupported(UNS_NOWAIT, "preadv2 RWF_NOWAIT", errno)) {
		cur[0] = 0;
		return;
	}
	if (flag[k] == RWF_NOWAIT && (r < 0 ? errno == EAGAIN : (size_t)r < want)) {
		if (r < 0)
			r = 0;	/* not cached: EAGAIN, or what was */
		if (r == 0 && want == 0)
			fail("preadv2 NOWAIT at the end: EAGAIN, expected 0");
	} else {
		expect_ok(r, (long long)want, "preadv2");
	}
	compare(fi, off, buf, (size_t)r, "preadv2");
	if (atpos)
		f->pos += r;
	if (atpos && flag[k] == RWF_NOWAIT && (size_t)r != want) {
		/* what was cached is the cache's: the position as after a
		 * full read, so that a replay's sequence goes on the same */
		if (lseek(st->f[fi].fd, off + (off_t)want, SEEK_SET) != off + (off_t)want)
			fail("lseek after preadv2 NOWAIT: %s", strerror(errno));
		f->pos = off + (off_t)want;
	}
}

static void op_pwritev2(int fi)
{
	static const int flag[] = { 0, RWF_DSYNC, RWF_SYNC, RWF_HIPRI, RWF_APPEND,
				    RWF_NOWAIT };
	static const char *const fname[] = { "0", "DSYNC", "SYNC", "HIPRI", "APPEND",
					     "NOWAIT" };
	struct file *f = &st->f[fi];
	struct iovec iov[MAXIOV];
	size_t len = pick_len();
	bool atpos = rn(3) == 0;
	off_t off = atpos ? f->pos : pick_off(fi, &len);
	int k = (int)rn(6), cnt;
	off_t at;
	ssize_t r;

	if (flag[k] == RWF_NOWAIT && st->unsupported & (1u << UNS_NOWAIT_W))
		k = 0;
	at = flag[k] == RWF_APPEND ? M(fi)->size : off;
	len = prep_write(fi, at, len);
	cnt = make_iov(iov, buf, len);
	note("pwritev2 %s off %jd%s len %zu iovs %d flags %s", file_name[fi],
	     (intmax_t)off, atpos ? " (-1: pos)" : "", len, cnt, fname[k]);
	r = pwritev2(pick_fd(fi), iov, cnt, atpos ? -1 : off, flag[k]);
	done(r);
	if (r < 0 && flag[k] == RWF_NOWAIT &&
	    unsupported(UNS_NOWAIT_W, "pwritev2 RWF_NOWAIT", errno)) {
		cur[0] = 0;
		return;
	}
	if (r < 0 && flag[k] == RWF_NOWAIT && errno == EAGAIN)
		r = 0;		/* would block: nothing written */
	if (flag[k] == RWF_NOWAIT && r >= 0 && (size_t)r < len)
		len = (size_t)r;	/* a prefix */
	expect_ok(r, (long long)len, "pwritev2");
	after_write(fi, at, len);
	if (atpos && r > 0)
		f->pos = at + r;
}

static void op_append(int fi)
{
	struct file *f = &st->f[fi];
	off_t at = M(fi)->size;
	size_t len = prep_write(fi, at, pick_len());
	int how = (int)rn(3);
	struct iovec iov[MAXIOV];
	int cnt = make_iov(iov, buf, len);
	off_t dummy = pick_off(fi, NULL);
	ssize_t r;

	note("append %s via %s len %zu (at %jd)", file_name[fi],
	     how == 0 ? "write" : how == 1 ? "writev" : "pwrite", len, (intmax_t)at);
	if (how == 0)
		r = write(f->app, buf, len);
	else if (how == 1)
		r = writev(f->app, iov, cnt);
	else	/* Linux: pwrite on O_APPEND appends, the offset ignored */
		r = pwrite(f->app, buf, len, dummy);
	done(r);
	expect_ok(r, (long long)len, "append");
	after_write(fi, at, len);
	if (how != 2 && r > 0)	/* a write of 0 leaves the position */
		f->pos_app = at + r;
}

/* The first nonzero byte of @fi at or after @off, or its size. */
static off_t next_nonzero(int fi, off_t off)
{
	struct model *m = M(fi);

	while (off < m->size && !m->data[off])
		off++;
	return off;
}

static void op_lseek(int fi)
{
	static const char *const wname[] = { "SET", "CUR", "END", "DATA", "HOLE" };
	static const int whence[] = { SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE };
	struct file *f = &st->f[fi];
	bool app = rn(4) == 0;
	off_t *pos = app ? &f->pos_app : &f->pos, size = M(fi)->size;
	int fd = app ? f->app : pick_fd(fi), k = (int)rn(5);
	off_t arg, base = 0, want, r;

	if (rn(20) == 0)
		arg = -1 - (off_t)rn(4096);	/* below 0: EINVAL */
	else
		arg = pick_off(fi, NULL);
	if (k == 1 || k == 2) {
		base = k == 1 ? *pos : size;
		arg -= base;
		if (base + arg > (off_t)file_max(fi))
			arg = (off_t)file_max(fi) - base;
	}
	note("lseek %s fd %d %jd SEEK_%s (pos %jd)", file_name[fi], fd,
	     (intmax_t)arg, wname[k], (intmax_t)*pos);
	errno = 0;
	r = lseek(fd, arg, whence[k]);
	done(r);
	if (base + arg < 0) {	/* SEEK_DATA/HOLE: ENXIO, the others EINVAL */
		if (r != -1 || errno != (k < 3 ? EINVAL : ENXIO))
			fail("lseek below 0: %jd (%s), expected %s", (intmax_t)r,
			     strerror(errno), k < 3 ? "EINVAL" : "ENXIO");
		return;
	}
	if (k < 3) {
		expect_ok(r, base + arg, "lseek");
	} else if (arg >= size) {
		if (r != -1 || errno != ENXIO)
			fail("lseek SEEK_%s at %jd, size %jd: %jd (%s), expected ENXIO",
			     wname[k], (intmax_t)arg, (intmax_t)size, (intmax_t)r,
			     strerror(errno));
		return;
	} else if (k == 3) {	/* data: no nonzero byte skipped */
		want = next_nonzero(fi, arg);
		if (r == -1 && errno == ENXIO) {
			if (want < size)
				fail("SEEK_DATA at %jd: ENXIO, but byte %jd is nonzero",
				     (intmax_t)arg, (intmax_t)want);
			r = lseek(fd, 0, SEEK_CUR);	/* unmoved; set below */
		}
		else if (r < arg || r > want)
			fail("SEEK_DATA at %jd: %jd (%s), expected %jd..%jd", (intmax_t)arg,
			     (intmax_t)r, r < 0 ? strerror(errno) : "", (intmax_t)arg,
			     (intmax_t)want);
	} else {		/* hole: within the size, and zero there */
		if (r < arg || r > size || (r < size && M(fi)->data[r]))
			fail("SEEK_HOLE at %jd: %jd (%s), size %jd: not a hole", (intmax_t)arg,
			     (intmax_t)r, r < 0 ? strerror(errno) : "", (intmax_t)size);
	}
	if (k >= 3) {
		/* Where the holes are is the file system's choice (the shim
		 * sees none): checked, then the position set to the offset
		 * asked, so that one seed runs the same ops everywhere. */
		if (lseek(fd, 0, SEEK_CUR) != r)
			fail("SEEK_%s left the position at %jd, returned %jd", wname[k],
			     (intmax_t)lseek(fd, 0, SEEK_CUR), (intmax_t)r);
		if (lseek(fd, arg, SEEK_SET) != arg)
			fail("lseek back to %jd: %s", (intmax_t)arg, strerror(errno));
		r = arg;
	}
	*pos = r;
}

static off_t pick_size(int fi)
{
	off_t size = M(fi)->size;
	uint64_t r = rn(100);
	off_t n;

	if (r < 40)
		n = (off_t)rn((uint64_t)size + 1);
	else if (r < 60)
		n = (off_t)rn((uint64_t)size / 4096 + 1) * 4096;
	else if (r < 65)
		n = 0;
	else
		n = size + (off_t)rn(262144);
	return n > (off_t)file_max(fi) ? (off_t)file_max(fi) : n;
}

static void op_ftruncate(int fi)
{
	off_t n = pick_size(fi), old = M(fi)->size;
	int r;

	note("ftruncate %s %jd", file_name[fi], (intmax_t)n);
	r = ftruncate(pick_fd(fi), n);
	done(r);
	expect_ok(r, 0, "ftruncate");
	model_resize(fi, n);
	check_range(fi, n > 4096 ? n - 4096 : 0, (n > old ? n : old) + 1);
}

static void op_truncate(int fi)
{
	off_t n = pick_size(fi), old = M(fi)->size;
	int r;

	note("truncate %s %jd", file_name[fi], (intmax_t)n);
	r = truncate(st->f[fi].path, n);
	done(r);
	expect_ok(r, 0, "truncate");
	model_resize(fi, n);
	check_range(fi, n > 4096 ? n - 4096 : 0, (n > old ? n : old) + 1);
}

static void op_fallocate(int fi)
{
	int k = (int)rn(FA_NR), err = 0, r;
	struct model *m = M(fi);
	off_t size = m->size, max = (off_t)file_max(fi), off, len;
	bool bad = false;
	size_t l;

	if (st->unsupported & (1u << k))
		return;
	if (k == FA_COLLAPSE || k == FA_INSERT) {
		off_t blocks = size / BLK;

		bad = rn(10) == 0;
		if (k == FA_COLLAPSE) {	/* off + len < size */
			if (blocks < 2 && !bad)
				return;
			off = (off_t)rn((uint64_t)(blocks > 1 ? blocks - 1 : 1)) * BLK;
			len = (1 + (off_t)rn((uint64_t)(blocks - off / BLK > 1 ?
						       blocks - off / BLK - 1 : 1))) * BLK;
			if (bad) {
				if (rn(2))
					len = size - off + (off_t)rn(3) * BLK;	/* to EOF */
				else
					off += 1 + (off_t)rn(BLK - 1);		/* unaligned */
			}
		} else {		/* off < size */
			if (blocks < 1 && !bad)
				return;
			off = (off_t)rn((uint64_t)blocks + 1) * BLK;
			len = (1 + (off_t)rn(16)) * BLK;
			if (!bad && off >= size)
				off = (blocks - 1) * BLK;
			if (size + len > max)
				return;
			if (bad) {
				if (rn(2))
					off = ((size + BLK - 1) / BLK) * BLK + (off_t)rn(3) * BLK;
				else
					len -= 1 + (off_t)rn(BLK - 1);
			}
		}
	} else {
		l = pick_len();
		off = pick_off(fi, &l);
		len = (off_t)l;
		if (len == 0)
			len = 1, off = off ? off - 1 : 0;
	}
	note("fallocate %s %s off %jd len %jd%s", file_name[fi], fa_modes[k].name,
	     (intmax_t)off, (intmax_t)len, bad ? " (bad: EINVAL expected)" : "");
	if (k == FA_POSIX) {
		err = posix_fallocate(st->f[fi].fd, off, len);
		r = err ? -1 : 0;
	} else {
		r = fallocate(pick_fd(fi), fa_modes[k].mode, off, len);
		err = r ? errno : 0;
	}
	done(r ? -err : 0);
	if (r && unsupported(k, fa_modes[k].name, err)) {
		cur[0] = 0;
		return;
	}
	if (bad) {
		if (err != EINVAL)
			fail("fallocate %s off %jd len %jd, size %jd: %s, expected EINVAL",
			     fa_modes[k].name, (intmax_t)off, (intmax_t)len, (intmax_t)size,
			     err ? strerror(err) : "success");
		return;
	}
	if (r)
		fail("fallocate %s: %s", fa_modes[k].name, strerror(err));
	switch (k) {
	case FA_ALLOC: case FA_POSIX:
		if (off + len > size)
			model_resize(fi, off + len);
		break;
	case FA_KEEP:
		break;
	case FA_PUNCH: case FA_ZERO_KEEP:
		model_zero(fi, off, len);
		break;
	case FA_ZERO:
		model_zero(fi, off, len);
		if (off + len > size)
			model_resize(fi, off + len);
		break;
	case FA_COLLAPSE:
		memmove(m->data + off, m->data + off + len, (size_t)(size - off - len));
		model_resize(fi, size - len);
		break;
	case FA_INSERT:
		memmove(m->data + off + len, m->data + off, (size_t)(size - off));
		memset(m->data + off, 0, (size_t)len);
		m->size = size + len;
		break;
	}
	if (k == FA_COLLAPSE || k == FA_INSERT)
		check_all(fi);
	else
		check_range(fi, off, off + len);
}

static void op_sync(int fi)
{
	int k = (int)rn(4), fd = pick_fd(fi), r;
	static const char *const name[] = { "fsync", "fdatasync", "sync_file_range",
					    "syncfs" };

	note("%s %s", name[k], file_name[fi]);
	if (k == 0)
		r = fsync(fd);
	else if (k == 1)
		r = fdatasync(fd);
	else if (k == 2)
		r = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				    SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	else
		r = syncfs(fd);
	done(r);
	expect_ok(r, 0, name[k]);
}

/* Two files for a copy: @fi the destination, a source of the run's own;
 * the same file half the time for copy_file_range. */
static int pick_src(int fi, bool same_ok)
{
	if (same_ok && rn(3) == 0)
		return fi;
	int s = (int)rn(NOWN);

	return s == fi ? (s + 1) % NOWN : s;
}

/* A source range of @si for up to *len bytes: below its size unless -E. */
static off_t pick_src_off(int si, size_t *len)
{
	off_t size = M(si)->size, off;

	if (st->flags & OPT_PAST_EOF)
		return pick_off(si, NULL);
	if (size == 0) {
		*len = 0;
		return 0;
	}
	off = (off_t)rn((uint64_t)size);
	if ((off_t)*len > size - off)
		*len = (size_t)(size - off);
	return off;
}

/* A copy of @n bytes of @si at @from into @fi at @to, in the model. */
static void model_copy(int fi, off_t to, int si, off_t from, size_t n)
{
	memcpy(buf, M(si)->data + from, n);
	model_write(fi, to, buf, n);
	check_range(fi, to, to + (off_t)n);
}

static void op_copy_file_range(int fi)
{
	int si = pick_src(fi, true);
	struct file *d = &st->f[fi], *s = &st->f[si];
	size_t len = pick_len();
	off_t from = pick_src_off(si, &len), to, oi, oo;
	bool use_pos = rn(4) == 0;
	size_t want;
	ssize_t r;

	to = use_pos ? d->pos : pick_off(fi, &len);
	if (to >= (off_t)file_max(fi))
		return;
	if ((off_t)len > (off_t)file_max(fi) - to)
		len = (size_t)((off_t)file_max(fi) - to);
	if (si == fi) {		/* ranges must not overlap: EINVAL */
		if (use_pos)
			return;
		if (from < to + (off_t)len && to < from + (off_t)len)
			len = (size_t)(from < to ? to - from : from - to);
	}
	want = read_expect(si, from, len);
	oi = from, oo = to;
	note("copy_file_range %s %jd -> %s %jd%s len %zu", file_name[si],
	     (intmax_t)from, file_name[fi], (intmax_t)to, use_pos ? " (pos)" : "", len);
	if (use_pos) {
		if (lseek(s->fd, from, SEEK_SET) != from)
			fail("lseek for copy_file_range: %s", strerror(errno));
		s->pos = from;
	}
	/* A short count is allowed (the kernel's same-file copy stops at a
	 * pipe's worth at times): called again for the rest, as programs do. */
	r = 0;
	for (int calls = 0; !calls || (r > 0 && (size_t)r < want); calls++) {
		size_t ask = calls ? want - (size_t)r : len;
		ssize_t n = use_pos ? copy_file_range(s->fd, NULL, d->fd, NULL, ask, 0)
				    : copy_file_range(s->fd, &oi, d->fd, &oo, ask, 0);

		if (n < 0 && !calls)
			r = n;
		if (n <= 0)
			break;
		r += n;
	}
	done(r);
	expect_ok(r, (long long)want, "copy_file_range");
	if (!use_pos && (oi != from + r || oo != to + r))
		fail("copy_file_range moved its offsets to %jd, %jd, expected %jd, %jd",
		     (intmax_t)oi, (intmax_t)oo, (intmax_t)(from + r), (intmax_t)(to + r));
	model_copy(fi, to, si, from, want);
	if (use_pos)
		s->pos += r, d->pos += r;
}

static void op_sendfile(int fi)
{
	int si = pick_src(fi, false);
	struct file *d = &st->f[fi], *s = &st->f[si];
	size_t len = pick_len();
	off_t from = pick_src_off(si, &len), to = d->pos, oi = from;
	bool use_pos = rn(3) == 0;
	size_t want;
	ssize_t r;

	if (to >= (off_t)file_max(fi))
		return;
	if ((off_t)len > (off_t)file_max(fi) - to)
		len = (size_t)((off_t)file_max(fi) - to);
	want = read_expect(si, from, len);
	note("sendfile %s %jd%s -> %s pos %jd len %zu", file_name[si], (intmax_t)from,
	     use_pos ? " (pos)" : "", file_name[fi], (intmax_t)to, len);
	if (use_pos) {
		if (lseek(s->fd, from, SEEK_SET) != from)
			fail("lseek for sendfile: %s", strerror(errno));
		s->pos = from;
	}
	r = 0;
	for (int calls = 0; !calls || (r > 0 && (size_t)r < want); calls++) {
		size_t ask = calls ? want - (size_t)r : len;	/* short: again */
		ssize_t n = sendfile(d->fd, s->fd, use_pos ? NULL : &oi, ask);

		if (n < 0 && !calls)
			r = n;
		if (n <= 0)
			break;
		r += n;
	}
	done(r);
	expect_ok(r, (long long)want, "sendfile");
	if (!use_pos && oi != from + r)
		fail("sendfile moved its offset to %jd, expected %jd", (intmax_t)oi,
		     (intmax_t)(from + r));
	model_copy(fi, to, si, from, want);
	d->pos += r;
	if (use_pos)
		s->pos += r;
}

static void op_splice(int fi)
{
	int si = pick_src(fi, false), p[2];
	struct file *d = &st->f[fi], *s = &st->f[si];
	size_t len = pick_len();
	off_t from, to, oi, oo;
	bool out_pos = rn(3) == 0;
	size_t want, moved = 0;
	ssize_t r;

	if (len > PIPE_MAX)
		len = PIPE_MAX;
	from = pick_src_off(si, &len);
	to = out_pos ? d->pos : pick_off(fi, &len);
	if (to >= (off_t)file_max(fi))
		return;
	if ((off_t)len > (off_t)file_max(fi) - to)
		len = (size_t)((off_t)file_max(fi) - to);
	want = read_expect(si, from, len);
	if (pipe(p))
		fail("pipe: %s", strerror(errno));
	oi = from, oo = to;
	note("splice %s %jd -> pipe -> %s %jd%s len %zu", file_name[si], (intmax_t)from,
	     file_name[fi], (intmax_t)to, out_pos ? " (pos)" : "", len);
	r = splice(s->fd, &oi, p[1], NULL, len, 0);
	if (r != (ssize_t)want || oi != from + r)
		fail("splice %s -> pipe: %zd (%s), offset %jd, expected %zu", file_name[si],
		     r, r < 0 ? strerror(errno) : "count", (intmax_t)oi, want);
	while (moved < want) {
		r = splice(p[0], NULL, d->fd, out_pos ? NULL : &oo, want - moved, 0);
		if (r <= 0)
			fail("splice pipe -> %s: %zd (%s) after %zu of %zu", file_name[fi], r,
			     r < 0 ? strerror(errno) : "nothing", moved, want);
		moved += (size_t)r;
	}
	close(p[0]);
	close(p[1]);
	done((long long)moved);
	if (!out_pos && oo != to + (off_t)moved)
		fail("splice moved the out offset to %jd, expected %jd", (intmax_t)oo,
		     (intmax_t)(to + (off_t)moved));
	model_copy(fi, to, si, from, want);
	if (out_pos)
		d->pos += (off_t)moved;
}

static void op_splice_read(int fi)
{
	struct file *f = &st->f[fi];
	size_t len = pick_len(), got = 0;
	bool use_pos = rn(3) == 0;
	off_t off, oi;
	size_t want;
	int p[2];
	ssize_t r;

	if (len > PIPE_MAX)
		len = PIPE_MAX;
	off = use_pos ? f->pos : ((st->flags & OPT_PAST_EOF) ? pick_off(fi, NULL)
				  : pick_src_off(fi, &len));
	want = read_expect(fi, off, len);
	if (pipe(p))
		fail("pipe: %s", strerror(errno));
	oi = off;
	note("splice_read %s %jd%s len %zu", file_name[fi], (intmax_t)off,
	     use_pos ? " (pos)" : "", len);
	r = splice(use_pos ? pick_fd(fi) : f->fd, use_pos ? NULL : &oi, p[1], NULL, len, 0);
	done(r);
	expect_ok(r, (long long)want, "splice to a pipe");
	while (got < want) {
		ssize_t n = read(p[0], buf + got, want - got);

		if (n <= 0)
			fail("read of the pipe: %zd", n);
		got += (size_t)n;
	}
	close(p[0]);
	close(p[1]);
	compare(fi, off, buf, want, "splice_read");
	if (use_pos)
		f->pos += r;
	else if (oi != off + r)
		fail("splice moved its offset to %jd, expected %jd", (intmax_t)oi,
		     (intmax_t)(off + r));
}

/* The mmap ops' file: map, or main late in the run. */
static int map_target(int fi)
{
	return fi == F_MAIN && st->opno >= st->mmap_main_from ? F_MAIN : F_MAP;
}

static void op_mmap_read(int fi)
{
	off_t size;
	unsigned char *p;

	fi = map_target(fi);
	size = M(fi)->size;
	if (size == 0)
		return;
	note("mmap_read %s whole %jd", file_name[fi], (intmax_t)size);
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, st->f[fi].fd, 0);
	if (p == MAP_FAILED)
		fail("mmap %s: %s", file_name[fi], strerror(errno));
	done(0);
	compare(fi, 0, p, (size_t)size, "mmap read");
	munmap(p, (size_t)size);
}

static void op_mmap_write(int fi)
{
	off_t size;
	size_t len = pick_len();
	off_t off;
	unsigned char *p;
	bool ms = rn(2);

	fi = map_target(fi);
	size = M(fi)->size;
	if (size == 0)
		return;
	off = (off_t)rn((uint64_t)size);
	if ((off_t)len > size - off)
		len = (size_t)(size - off);
	note("mmap_write %s off %jd len %zu%s", file_name[fi], (intmax_t)off, len,
	     ms ? " msync" : "");
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, st->f[fi].fd, 0);
	if (p == MAP_FAILED)
		fail("mmap %s: %s", file_name[fi], strerror(errno));
	fill(buf, len);
	memcpy(p + off, buf, len);
	if (ms && msync(p, (size_t)size, MS_SYNC))
		fail("msync: %s", strerror(errno));
	munmap(p, (size_t)size);
	done(0);
	after_write(fi, off, len);
}

static void op_reopen(int fi)
{
	bool trunc = rn(8) == 0;

	note("reopen %s%s", file_name[fi], trunc ? " O_TRUNC" : "");
	close_file(fi);
	open_file(fi, trunc ? O_TRUNC : 0);
	if (trunc)
		model_resize(fi, 0);
	done(st->f[fi].fd);
	check_all(fi);
}

static void op_dup(int fi)
{
	struct file *f = &st->f[fi];
	int k = (int)rn(4), nfd = 200 + fi * 3 + (int)rn(3), r;
	static const char *const name[] = { "dup", "dup2", "dup3", "F_DUPFD" };

	note("%s %s (the old dup %d closed)", name[k], file_name[fi], f->dup);
	if (close(f->dup))
		fail("close dup: %s", strerror(errno));
	if (k == 0)
		r = dup(f->fd);
	else if (k == 1)
		r = dup2(f->fd, nfd);
	else if (k == 2)
		r = dup3(f->fd, nfd, 0);
	else
		r = fcntl(f->fd, F_DUPFD, 100);
	done(r);
	if (r < 0 || (k == 1 && r != nfd) || (k == 2 && r != nfd) || (k == 3 && r < 100))
		fail("%s: %d (%s)", name[k], r, strerror(errno));
	f->dup = r;
}

static void run_one(bool child);

static void op_fork(int fi)
{
	int n = 1 + (int)rn(4), status;
	pid_t pid;

	(void)fi;
	note("fork: the child does %d ops", n);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		in_child = true;
		done(0);
		record();
		for (int i = 0; i < n; i++) {
			st->opno++;
			run_one(true);
		}
		for (int k = 0; k < NOWN; k++)
			check_all(k);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("the fork child failed (status 0x%x): its report is above", status);
	cur[0] = 0;
	for (int k = 0; k < NOWN; k++)
		check_all(k);
	note("fork: back in the parent");
	done(0);
}

static void op_exec(int fi)
{
	char fdarg[16];
	char *argv[] = { "exerciser", "-X", fdarg, NULL };

	(void)fi;
	note("exec: the process re-execs itself");
	done(0);
	record();
	st->opno++;
	snprintf(fdarg, sizeof(fdarg), "%d", st->own_fd);
	fflush(stdout);
	fflush(stderr);
	execv("/proc/self/exe", argv);
	fail("execv: %s", strerror(errno));
}

static void op_locked(int fi);

enum {	/* where an op may run */
	ON_SHARED = 1 << 0,	/* on the shared file, under the lock */
	IN_CHILD = 1 << 1,	/* in a fork child: changes no fd number */
	NEED_FE = 1 << 2,	/* -F */
	NEED_P = 1 << 3,	/* -P */
	OWN_ONLY = 1 << 4,	/* main, aux, map only */
};

static const struct op {
	const char *name;
	void (*fn)(int fi);
	unsigned weight, where;
} ops[] = {
	{ "read", op_read, 8, ON_SHARED | IN_CHILD },
	{ "write", op_write, 8, ON_SHARED | IN_CHILD },
	{ "pread", op_pread, 8, ON_SHARED | IN_CHILD },
	{ "pwrite", op_pwrite, 10, ON_SHARED | IN_CHILD },
	{ "readv", op_readv, 3, ON_SHARED | IN_CHILD },
	{ "writev", op_writev, 3, ON_SHARED | IN_CHILD },
	{ "preadv", op_preadv, 3, ON_SHARED | IN_CHILD },
	{ "pwritev", op_pwritev, 3, ON_SHARED | IN_CHILD },
	{ "preadv2", op_preadv2, 3, ON_SHARED | IN_CHILD },
	{ "pwritev2", op_pwritev2, 3, ON_SHARED | IN_CHILD },
	{ "append", op_append, 4, ON_SHARED | IN_CHILD },
	{ "lseek", op_lseek, 5, ON_SHARED | IN_CHILD },
	{ "ftruncate", op_ftruncate, 3, ON_SHARED | IN_CHILD },
	{ "truncate", op_truncate, 2, ON_SHARED | IN_CHILD },
	{ "fallocate", op_fallocate, 6, ON_SHARED | IN_CHILD },
	{ "copy_file_range", op_copy_file_range, 3, ON_SHARED | IN_CHILD },
	{ "sendfile", op_sendfile, 2, ON_SHARED | IN_CHILD },
	{ "splice", op_splice, 2, ON_SHARED | IN_CHILD },
	{ "splice_read", op_splice_read, 2, ON_SHARED | IN_CHILD },
	{ "mmap_read", op_mmap_read, 2, OWN_ONLY },
	{ "mmap_write", op_mmap_write, 2, OWN_ONLY },
	{ "sync", op_sync, 2, ON_SHARED | IN_CHILD },
	{ "reopen", op_reopen, 1, OWN_ONLY },
	{ "dup", op_dup, 1, OWN_ONLY },
	{ "fork", op_fork, 1, NEED_FE | OWN_ONLY },
	{ "exec", op_exec, 1, NEED_FE | OWN_ONLY },
	{ "locked", op_locked, 8, NEED_P | OWN_ONLY },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* An op allowed by @mask-less filter: in a child only IN_CHILD ones, on
 * the shared file only ON_SHARED ones. */
static const struct op *pick_op(unsigned need)
{
	unsigned total = 0, r;

	for (size_t i = 0; i < NOPS; i++) {
		unsigned w = ops[i].where;

		if ((w & NEED_FE && !(st->flags & OPT_FORK_EXEC)) ||
		    (w & NEED_P && st->worker < 0) || (ops[i].where & need) != need ||
		    st->excluded & (1ULL << i))
			continue;
		total += ops[i].weight;
	}
	if (!total)
		fail("every op that may run here is excluded (-x)");
	r = (unsigned)rn(total);
	for (size_t i = 0; i < NOPS; i++) {
		unsigned w = ops[i].where;

		if ((w & NEED_FE && !(st->flags & OPT_FORK_EXEC)) ||
		    (w & NEED_P && st->worker < 0) || (ops[i].where & need) != need ||
		    st->excluded & (1ULL << i))
			continue;
		if (r < ops[i].weight)
			return &ops[i];
		r -= ops[i].weight;
	}
	abort();
}

static void lock_shared(int type)
{
	struct flock l = { .l_type = (short)type, .l_whence = SEEK_SET };

	while (fcntl(st->f[F_SHARED].fd, F_SETLKW, &l))
		if (errno != EINTR)
			fail("fcntl lock of the shared file: %s", strerror(errno));
}

/* One op on the shared file, under a write lock on it whole: the model
 * is changed by whoever holds the lock, and the file is checked whole. */
static void op_locked(int fi)
{
	const struct op *o = pick_op(ON_SHARED);

	(void)fi;
	lock_shared(F_WRLCK);
	o->fn(F_SHARED);
	check_all(F_SHARED);
	if (cur[0]) {
		size_t l = strlen(cur);

		snprintf(cur + l, sizeof(cur) - l, " [locked: shared %jd]",
			 (intmax_t)M(F_SHARED)->size);
	}
	lock_shared(F_UNLCK);
}

static void run_one(bool child)
{
	const struct op *o = pick_op(child ? IN_CHILD : 0);
	uint64_t r = rn(100);
	int fi = r < 70 ? F_MAIN : r < 88 ? F_AUX : F_MAP;

	cur[0] = 0;
	o->fn(fi);
	for (int k = 0; k < NOWN; k++)
		check_size(k);
	if (cur[0])
		record();
}

/* ------------------------------------------------------------ set-up */

static void *map_memfd(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		perror("exerciser: mmap of the state");
		exit(1);
	}
	return p;
}

static size_t own_len(size_t maxsize)
{
	return HDR + NOWN * (sizeof(struct model) + maxsize);
}

static int new_memfd(const char *name, size_t len)
{
	int fd = memfd_create(name, 0);

	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		perror("exerciser: memfd");
		exit(1);
	}
	return fd;
}

static void alloc_bufs(void)
{
	buf = malloc(2 * st->maxlen + 4096);
	buf2 = malloc(2 * st->maxlen + 4096);
	if (!buf || !buf2) {
		perror("exerciser: malloc");
		exit(1);
	}
}

/* FNV-1a of the three files' models: one seed's runs, plain and under
 * the shim, do the same ops and end with the same digest. */
static uint64_t digest(void)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int k = 0; k < NOWN; k++)
		for (off_t i = 0; i < M(k)->size; i++)
			h = (h ^ M(k)->data[i]) * 0x100000001b3ULL;
	return h;
}

static void run(void)
{
	for (; st->opno < st->nops; st->opno++) {
		run_one(false);
		if (st->opno % 64 == 63)
			for (int k = 0; k < NOWN; k++)
				check_all(k);
	}
	for (int k = 0; k < NOWN; k++)
		check_all(k);
	say("seed %" PRIu64 ": %ld ops agreed with the model; sizes main %jd aux %jd "
	    "map %jd, digest %016" PRIx64, st->seed, st->nops, (intmax_t)M(F_MAIN)->size,
	    (intmax_t)M(F_AUX)->size, (intmax_t)M(F_MAP)->size, digest());
	for (int k = 0; k < NOWN; k++) {
		close_file(k);
		unlink(st->f[k].path);
	}
	if (st->worker >= 0)
		close_file(F_SHARED);
}

/* A worker (or the single process): state of its own, files of its own. */
static void start(const struct state *opt, int worker, uint64_t seed)
{
	int fd = new_memfd("exerciser-state", own_len(opt->maxsize));

	st = map_memfd(fd, own_len(opt->maxsize));
	*st = *opt;
	own_base = (unsigned char *)st;
	st->own_fd = fd;
	st->worker = worker;
	st->seed = st->rng = seed;
	st->nlog = 0;
	st->opno = 0;
	st->mmap_main_from = st->nops - st->nops / 10;
	alloc_bufs();
	for (int k = 0; k < NOWN; k++) {
		snprintf(st->f[k].path, sizeof(st->f[k].path), "%s/exerciser.%d.%d.%s",
			 st->dir, (int)getpid(), worker, file_name[k]);
		open_file(k, O_TRUNC);
	}
	if (worker >= 0)
		open_file(F_SHARED, 0);
}

static void print_excluded(FILE *to)
{
	for (size_t i = 0; i < NOPS; i++)
		if (st->excluded & (1ULL << i))
			fprintf(to, " -x %s", ops[i].name);
}

static bool exclude(struct state *opt, const char *name)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].name, name)) {
			opt->excluded |= 1ULL << i;
			return true;
		}
	fprintf(stderr, "exerciser: no op %s\n", name);
	return false;
}

static int usage(void)
{
	fprintf(stderr, "usage: exerciser [-S SEED] [-N OPS] [-L MAXSIZE] [-l MAXLEN] "
		"[-d DIR] [-P WORKERS] [-F] [-E] [-x OP]... [-v]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct state opt = { .nops = 2000, .maxsize = 1 << 20, .shared_max = 256 << 10,
			     .maxlen = 256 << 10, .worker = -1, .shared_fd = -1 };
	const char *tmp = getenv("TMPDIR");
	bool seeded = false;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(opt.dir, sizeof(opt.dir), "%s", tmp ? tmp : "/var/tmp");
	while ((c = getopt(argc, argv, "S:N:L:l:d:P:FEvx:X:")) != -1) {
		switch (c) {
		case 'S': opt.seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'N': opt.nops = atol(optarg); break;
		case 'L': opt.maxsize = strtoull(optarg, NULL, 0); break;
		case 'l': opt.maxlen = strtoull(optarg, NULL, 0); break;
		case 'd': snprintf(opt.dir, sizeof(opt.dir), "%s", optarg); break;
		case 'P': opt.nworkers = atoi(optarg); break;
		case 'F': opt.flags |= OPT_FORK_EXEC; break;
		case 'E': opt.flags |= OPT_PAST_EOF; break;
		case 'v': opt.flags |= OPT_VERBOSE; break;
		case 'x': if (!exclude(&opt, optarg)) return usage(); break;
		case 'X': {	/* an exec'd image: the state is that memfd's */
			int fd = atoi(optarg);
			struct stat sb;

			if (fstat(fd, &sb)) {
				perror("exerciser: -X");
				return 2;
			}
			st = map_memfd(fd, (size_t)sb.st_size);
			own_base = (unsigned char *)st;
			if (st->shared_fd >= 0)
				shared_base = map_memfd(st->shared_fd, sizeof(struct model) +
							st->shared_max);
			alloc_bufs();
			say("exec'd at op #%ld, going on", st->opno);
			for (int k = 0; k < NOWN; k++)
				check_all(k);
			run();
			return 0;
		}
		default: return usage();
		}
	}
	if (optind != argc || opt.nops < 1 || opt.maxsize < 65536 || opt.maxlen < 4096 ||
	    opt.maxlen > opt.maxsize || opt.nworkers < 0 || opt.nworkers > 32)
		return usage();
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
			    ((uint64_t)getpid() << 40)) % 1000000007ULL;
	}
	printf("exerciser: seed %" PRIu64 " ops %ld maxsize %zu maxlen %zu dir %s%s%s",
	       opt.seed, opt.nops, opt.maxsize, opt.maxlen, opt.dir,
	       opt.flags & OPT_FORK_EXEC ? " fork+exec" : "",
	       opt.flags & OPT_PAST_EOF ? " past-eof" : "");
	if (opt.nworkers)
		printf(" workers %d", opt.nworkers);
	printf(" (replay: -S %" PRIu64 ")\n", opt.seed);
	if (!opt.nworkers) {
		start(&opt, -1, opt.seed);
		run();
		return 0;
	}

	/* -P: the shared file and its model, then the workers. */
	char spath[512];
	int failed = 0, sfd;
	pid_t pids[32];

	opt.shared_fd = new_memfd("exerciser-shared", sizeof(struct model) + opt.shared_max);
	shared_base = map_memfd(opt.shared_fd, sizeof(struct model) + opt.shared_max);
	snprintf(spath, sizeof(spath), "%s/exerciser.%d.shared", opt.dir, (int)getpid());
	sfd = open(spath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (sfd < 0 || close(sfd)) {
		perror("exerciser: the shared file");
		return 1;
	}
	snprintf(opt.f[F_SHARED].path, sizeof(opt.f[F_SHARED].path), "%s", spath);
	for (int i = 0; i < opt.nworkers; i++) {
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("exerciser: fork");
			return 1;
		}
		if (pids[i] == 0) {
			start(&opt, i, opt.seed + (uint64_t)i + 1);
			say("seed %" PRIu64 " (replay: -S %" PRIu64 " -P %d)", st->seed,
			    opt.seed, opt.nworkers);
			run();
			exit(0);
		}
	}
	for (int i = 0; i < opt.nworkers; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "exerciser: worker %d failed (status 0x%x)\n", i, status);
			failed = 1;
		}
	}
	unlink(spath);
	if (!failed)
		printf("exerciser: seed %" PRIu64 ": %d workers agreed with the model, "
		       "shared file %jd bytes\n", opt.seed, opt.nworkers,
		       (intmax_t)((struct model *)shared_base)->size);
	return failed;
}
