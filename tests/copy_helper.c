/*
 * copy_helper.c - copy_file_range, sendfile and splice for tests/test_copy.sh,
 * which runs it once plain (the kernel's answers) and once under `pagecache
 * exec` and compares what it prints: the same calls must give the same
 * lines.
 *
 *   copy_helper run DIR SEED N   the directed calls, then N random ones
 *                                (drawn from SEED alone, never from what a
 *                                call returned), on DIR/a and DIR/b
 *   copy_helper holes FILE...    each file's size and its SEEK_DATA /
 *                                SEEK_HOLE map (run plain, on the files a
 *                                run left: the holes on the disk)
 *
 * run opens five descriptors: a, a second description of a, b, b with
 * O_APPEND and a read-only a; a pipe and a socket pair are the streams.
 * Each call prints one line: the call (which of libc or syscall(2) made
 * it), its return and errno, the offsets it was given by pointer after it,
 * every descriptor's offset, what reached the pipe or socket (length and
 * hash), both files' sizes (fstat) and their contents' hashes (pread).
 * A call that blocks is reported by an alarm with its number.  Not
 * compared: sendfile onto an overlapping range of its own file (the
 * kernel's result hangs on page boundaries: send_overlaps).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { FA, FA2, FB, FBAPP, FARO, NFD };
enum { T_FILE, T_PIPE, T_SOCK };
enum op_kind { OP_WRITE, OP_TRUNC, OP_SEEK, OP_PUNCH, OP_CFR, OP_SEND,
	       OP_SPLICE_OUT, OP_SPLICE_IN, NOPS };

static const char *const fd_name[NFD] = { "a", "a2", "b", "bapp", "aro" };
static const char *const op_name[NOPS] = { "write", "trunc", "seek", "punch",
	"cfr", "sendfile", "splice_out", "splice_in" };

struct op {
	enum op_kind kind;
	int in, out;		/* fd indexes; for OP_SEND, out < 0: -1-T_... */
	int inp, outp;		/* offsets by pointer? */
	long long inoff, outoff, len;
	unsigned flags;
	int sys;		/* made with syscall(2) */
	int fill;		/* OP_SPLICE_IN: bytes put in the pipe first */
};

static int fds[NFD], pfd[2], sfd[2];
static volatile sig_atomic_t current;
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static uint32_t hash(const unsigned char *p, size_t n, uint32_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void pattern(unsigned char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)('A' + (seed * 7 + i * 13 + i / 977) % 58);
}

static void on_alarm(int sig)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "BLOCKED in call %d\n", (int)current);

	(void)sig;
	(void)!write(1, msg, (size_t)n);
	_exit(3);
}

/* Everything waiting in a stream, as "len hash"; never waits. */
static void drain(int fd, char *out, size_t outlen)
{
	static unsigned char buf[1 << 17];
	struct pollfd p = { fd, POLLIN, 0 };
	uint32_t h = 2166136261u;
	long total = 0;
	ssize_t n;

	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	       (n = read(fd, buf, sizeof(buf))) > 0) {
		h = hash(buf, (size_t)n, h);
		total += n;
	}
	snprintf(out, outlen, "%ld %08x", total, h);
}

static void file_state(int fd, char *out, size_t outlen)
{
	static unsigned char buf[1 << 20];
	uint32_t h = 2166136261u;
	struct stat st;
	off_t at = 0;
	ssize_t n;

	if (fstat(fd, &st)) {
		snprintf(out, outlen, "fstat %d", errno);
		return;
	}
	while (at < (64 << 20) && (n = pread(fd, buf, sizeof(buf), at)) > 0) {
		h = hash(buf, (size_t)n, h);
		at += n;
	}
	snprintf(out, outlen, "%lld %lld %08x", (long long)st.st_size,
		 (long long)at, h);
}

static int stream_fd(int t, int end)
{
	return t == T_PIPE ? pfd[end] : sfd[end];
}

static long run_op(const struct op *o, long long *inoff, long long *outoff,
		   char *got, size_t gotlen)
{
	static unsigned char buf[1 << 18];
	off64_t *ip = o->inp ? (off64_t *)inoff : NULL;
	off64_t *op = o->outp ? (off64_t *)outoff : NULL;
	int in = o->in >= 0 ? fds[o->in] : -1, out = o->out >= 0 ? fds[o->out] : -1;
	long r = 0;

	got[0] = 0;
	switch (o->kind) {
	case OP_WRITE:
		pattern(buf, (size_t)o->len, (unsigned)current);
		return pwrite(out, buf, (size_t)o->len, o->outoff);
	case OP_TRUNC:
		return ftruncate(out, o->len);
	case OP_SEEK:
		return lseek(out, o->outoff, SEEK_SET);
	case OP_PUNCH:
		return fallocate(out, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 o->outoff, o->len);
	case OP_CFR:
		if (o->in == -1 - T_PIPE)
			in = pfd[0];
		return o->sys ? syscall(SYS_copy_file_range, in, ip, out, op,
					(size_t)o->len, o->flags)
			      : copy_file_range(in, ip, out, op, (size_t)o->len,
						o->flags);
	case OP_SEND:
		if (o->out < 0)
			out = stream_fd(-1 - o->out, 1);
		r = o->sys ? syscall(SYS_sendfile, out, in, ip, (size_t)o->len)
			   : sendfile(out, in, ip, (size_t)o->len);
		if (o->out < 0)
			drain(stream_fd(-1 - o->out, 0), got, gotlen);
		return r;
	case OP_SPLICE_OUT:	/* file to pipe; outp: an offset for the pipe */
		r = o->sys ? syscall(SYS_splice, in, ip, pfd[1], op,
				     (size_t)o->len, o->flags)
			   : splice(in, ip, pfd[1], op, (size_t)o->len, o->flags);
		drain(pfd[0], got, gotlen);
		return r;
	case OP_SPLICE_IN:	/* pipe to file: o->fill bytes in the pipe */
		pattern(buf, (size_t)o->fill, (unsigned)current + 1000);
		if (write(pfd[1], buf, (size_t)o->fill) != o->fill)
			return -1000;
		r = o->sys ? syscall(SYS_splice, pfd[0], ip, out, op,
				     (size_t)o->len, o->flags)
			   : splice(pfd[0], ip, out, op, (size_t)o->len, o->flags);
		drain(pfd[0], got, gotlen);	/* what was left in the pipe */
		return r;
	case NOPS:
		break;
	}
	return -1000;
}

/* Which file a descriptor is of: a or b. */
static int file_of(int fd)
{
	return fd == FB || fd == FBAPP;
}

/*
 * sendfile from a file onto an overlapping range of itself: the kernel's
 * zero-copy pipe holds references to the source's pages, so what lands
 * depends on page boundaries and memcpy's overlap; the shim's bounce
 * buffer copies as memmove does.  Not compared (decided on the offsets,
 * the same in both runs while their lines are).
 */
static bool send_overlaps(const struct op *o)
{
	long long pin, pout;

	if (o->kind != OP_SEND || o->out < 0 || o->len == 0 ||
	    file_of(o->in) != file_of(o->out))
		return false;
	pin = o->inp ? o->inoff : (long long)lseek(fds[o->in], 0, SEEK_CUR);
	pout = lseek(fds[o->out], 0, SEEK_CUR);
	return pin < pout + o->len && pout < pin + o->len;
}

static void show(int n, const struct op *o)
{
	long long inoff = o->inoff, outoff = o->outoff;
	char got[64], sa[64], sb[64];
	long r;
	int e;

	current = n;
	if (send_overlaps(o)) {
		printf("%d sendfile in=%d out=%d len=%lld: skipped, overlapping"
		       " ranges of one file\n", n, o->in, o->out, o->len);
		return;
	}
	alarm(20);
	errno = 0;
	r = run_op(o, &inoff, &outoff, got, sizeof(got));
	e = r < 0 ? errno : 0;
	alarm(0);
	printf("%d %s%s in=%d%s%lld out=%d%s%lld len=%lld fl=%u fill=%d = %ld e%d",
	       n, op_name[o->kind], o->sys ? "(sys)" : "", o->in,
	       o->inp ? "@" : "~", o->inoff, o->out, o->outp ? "@" : "~",
	       o->outoff, o->len, o->flags, o->fill, r, e);
	printf(" | offp %lld %lld | pos", o->inp ? inoff : -1LL,
	       o->outp ? outoff : -1LL);
	for (int i = 0; i < NFD; i++)
		printf(" %lld", (long long)lseek(fds[i], 0, SEEK_CUR));
	file_state(fds[FA], sa, sizeof(sa));
	file_state(fds[FB], sb, sizeof(sb));
	printf(" | got %s | a %s | b %s\n", got[0] ? got : "-", sa, sb);
	fflush(stdout);
}

#define PG 4096LL
#define MAXOFF (320 * 1024LL)

/* An offset or a length of every alignment: aligned, near a page, any. */
static long long any(long long max)
{
	long long v = (long long)(rnd() % (uint64_t)(max + 1));

	switch (rnd() % 4) {
	case 0:
		return v & ~(PG - 1);
	case 1:
		v = (v & ~(PG - 1)) + (long long)(rnd() % 3) - 1;
		return v < 0 ? 0 : v;
	default:
		return v;
	}
}

static struct op random_op(void)
{
	struct op o = { .kind = (enum op_kind)(rnd() % NOPS) };
	int file_fds[] = { FA, FA2, FB, FBAPP, FARO };

	o.in = file_fds[rnd() % 5];
	o.out = file_fds[rnd() % 5];
	o.inp = (int)(rnd() % 2);
	o.outp = (int)(rnd() % 2);
	o.inoff = any(MAXOFF);
	o.outoff = any(MAXOFF);
	o.sys = (int)(rnd() % 2);
	switch (o.kind) {
	case OP_WRITE:
		o.out = rnd() % 2 ? FA : FB;
		o.len = any(40000);
		break;
	case OP_TRUNC:
		o.out = rnd() % 2 ? FA : FB;
		o.len = any(MAXOFF);
		break;
	case OP_SEEK:
		o.out = file_fds[rnd() % 5];
		break;
	case OP_PUNCH:
		o.out = rnd() % 2 ? FA : FB;
		o.len = any(60000) + 1;
		break;
	case OP_CFR:
		o.len = rnd() % 16 == 0 ? (long long)(rnd() % 2 ? 0 : 1LL << 30)
					: any(120000);
		o.flags = rnd() % 32 == 0;
		break;
	case OP_SEND:
		if (rnd() % 2)
			o.out = -1 - (int)(1 + rnd() % 2);	/* pipe, socket */
		o.len = rnd() % 16 == 0 ? 0 : any(15 * PG);
		break;
	case OP_SPLICE_OUT:
		o.outp = rnd() % 16 == 0;	/* an offset for the pipe: ESPIPE */
		o.len = rnd() % 16 == 0 ? 0 : any(15 * PG);
		break;
	case OP_SPLICE_IN:
		o.inp = rnd() % 16 == 0;
		o.fill = 1 + (int)any(15 * PG - 1);
		o.len = rnd() % 3 == 0 ? o.fill + any(PG) : any(15 * PG);
		break;
	case NOPS:
		break;
	}
	if (o.kind == OP_SPLICE_IN && o.len == 0)
		o.len = 1;
	return o;
}

#define P -1 - T_PIPE
#define S -1 - T_SOCK
/*
 * The directed calls: past either end, at every alignment, in one file
 * and across two, overlaps, len 0, offsets by pointer and not, O_APPEND,
 * read-only ends, a pipe or a socket at the other end.
 * { kind, in, out, inp, outp, inoff, outoff, len, flags, sys, fill }
 */
static const struct op directed[] = {
	{ OP_WRITE, -1, FA, 0, 0, 0, 0, 100000, 0, 0, 0 },
	{ OP_WRITE, -1, FB, 0, 0, 0, 0, 30000, 0, 0, 0 },
	/* One file, past its end: extends, a hole between (fsx's COPY). */
	{ OP_CFR, FA, FA, 1, 1, 1000, 150001, 20000, 0, 0, 0 },
	{ OP_CFR, FA, FA, 1, 1, 4096, 200704, 8192, 0, 1, 0 },
	/* Overlap in one file, with a second description of it too. */
	{ OP_CFR, FA, FA, 1, 1, 0, 10, 100, 0, 0, 0 },
	{ OP_CFR, FA, FA2, 1, 1, 500, 400, 200, 0, 1, 0 },
	{ OP_CFR, FA, FA, 1, 1, 400, 300, 101, 0, 0, 0 },
	{ OP_CFR, FA, FA, 1, 1, 400, 300, 100, 0, 0, 0 },
	/* The source's end cuts the copy before the overlap is judged. */
	{ OP_CFR, FA, FA, 1, 1, 208000, 208896 + 5, 50000, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, 208000, 40000, 1LL << 30, 0, 0, 0 },
	/* Past the source's end, len 0, at a huge offset. */
	{ OP_CFR, FA, FB, 1, 1, 300000, 0, 100, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, 10, 10, 0, 0, 0, 0 },
	{ OP_CFR, FA, FA, 1, 1, 10, 10, 0, 0, 1, 0 },
	{ OP_CFR, FA, FB, 1, 1, 1, -1LL >> 1, 100, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, -200, 0, 100, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, -1, 0, 0, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, -1, 0, 100, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, 0, -5, 100, 0, 0, 0 },
	/* The descriptors' offsets: one description, then two. */
	{ OP_SEEK, -1, FA, 0, 0, 0, 5000, 0, 0, 0, 0 },
	{ OP_CFR, FA, FA, 0, 0, 0, 0, 300, 0, 0, 0 },
	{ OP_CFR, FA, FA, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ OP_SEEK, -1, FA, 0, 0, 0, 250000, 0, 0, 0, 0 },
	{ OP_CFR, FA, FA, 0, 0, 0, 0, 300, 0, 1, 0 },
	{ OP_SEEK, -1, FA, 0, 0, 0, 5000, 0, 0, 0, 0 },
	{ OP_SEEK, -1, FB, 0, 0, 0, 40003, 0, 0, 0, 0 },
	{ OP_CFR, FA, FB, 0, 0, 0, 0, 7001, 0, 0, 0 },
	{ OP_SEEK, -1, FA2, 0, 0, 0, 60000, 0, 0, 0, 0 },
	{ OP_CFR, FA, FA2, 0, 0, 0, 0, 1000, 0, 1, 0 },
	{ OP_CFR, FA2, FA, 1, 0, 100, 0, 1000, 0, 0, 0 },
	/* Access modes, O_APPEND, flags, a pipe. */
	{ OP_CFR, FA, FBAPP, 1, 1, 0, 0, 100, 0, 0, 0 },
	{ OP_CFR, FA, FARO, 1, 1, 0, 0, 100, 0, 0, 0 },
	{ OP_CFR, FARO, FB, 1, 1, 0, 70000, 100, 0, 1, 0 },
	{ OP_CFR, FBAPP, FA, 1, 1, 0, 0, 100, 0, 0, 0 },
	{ OP_CFR, FA, FB, 1, 1, 0, 0, 100, 1, 0, 0 },
	{ OP_CFR, P, FB, 1, 1, 0, 0, 100, 0, 0, 0 },
	/* sendfile: into a pipe, a socket, a file, at every offset. */
	{ OP_SEND, FA, P, 1, 0, 12345, 0, 40000, 0, 0, 0 },
	{ OP_SEND, FA, S, 0, 0, 0, 0, 10000, 0, 1, 0 },
	{ OP_SEND, FA, FB, 1, 0, 207000, 0, 30000, 0, 0, 0 },
	{ OP_SEEK, -1, FB, 0, 0, 0, 90001, 0, 0, 0, 0 },
	{ OP_SEND, FA, FB, 0, 0, 0, 0, 20000, 0, 0, 0 },
	{ OP_SEND, FA, FA2, 1, 0, 0, 0, 1000, 0, 0, 0 },
	{ OP_SEND, FA, FBAPP, 1, 0, 0, 0, 100, 0, 0, 0 },
	{ OP_SEND, FA, FB, 1, 0, 300000, 0, 100, 0, 1, 0 },
	{ OP_SEND, FA, FB, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ OP_SEND, FA, P, 1, 0, -1, 0, 100, 0, 0, 0 },
	{ OP_SEND, FBAPP, P, 1, 0, 0, 0, 100, 0, 0, 0 },
	/* splice: a file into the pipe and the pipe into a file. */
	{ OP_SPLICE_OUT, FA, -1, 1, 0, 4095, 0, 30000, 0, 0, 0 },
	{ OP_SPLICE_OUT, FA, -1, 0, 0, 0, 0, 5000, 0, 1, 0 },
	{ OP_SPLICE_OUT, FA, -1, 1, 1, 0, 0, 100, 0, 0, 0 },
	{ OP_SPLICE_OUT, FA, -1, 1, 0, 400000, 0, 100, 0, 0, 0 },
	{ OP_SPLICE_IN, -1, FB, 0, 1, 0, 200001, 5000, 0, 0, 5000 },
	{ OP_SPLICE_IN, -1, FB, 0, 1, 0, 300000, 5000, 0, 1, 300 },
	{ OP_SPLICE_IN, -1, FB, 0, 0, 0, 0, 100, 0, 0, 4000 },
	{ OP_SPLICE_IN, -1, FB, 0, 1, 0, 8191, 0, 0, 0, 10 },
	{ OP_SPLICE_IN, -1, FBAPP, 0, 0, 0, 0, 100, 0, 0, 100 },
	{ OP_SPLICE_IN, -1, FB, 1, 1, 0, 0, 100, 0, 0, 100 },
	{ OP_SPLICE_IN, -1, FARO, 0, 1, 0, 0, 100, 0, 0, 100 },
};
#undef P
#undef S

static int run(const char *dir, uint64_t seed, int n)
{
	char path[3][512];
	int k = 0;

	snprintf(path[0], sizeof(path[0]), "%s/a", dir);
	snprintf(path[1], sizeof(path[1]), "%s/b", dir);
	fds[FA] = open(path[0], O_RDWR | O_CREAT | O_TRUNC, 0644);
	fds[FA2] = open(path[0], O_RDWR);
	fds[FB] = open(path[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	fds[FBAPP] = open(path[1], O_WRONLY | O_APPEND);
	fds[FARO] = open(path[0], O_RDONLY);
	for (int i = 0; i < NFD; i++)
		if (fds[i] < 0) {
			printf("open %s: %s\n", fd_name[i], strerror(errno));
			return 1;
		}
	if (pipe(pfd) || socketpair(AF_UNIX, SOCK_STREAM, 0, sfd)) {
		printf("pipe: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGALRM, on_alarm);
	for (size_t i = 0; i < sizeof(directed) / sizeof(directed[0]); i++)
		show(k++, &directed[i]);
	rng = seed ^ 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < n; i++) {
		struct op o = random_op();

		show(k++, &o);
	}
	current = -1;	/* the closes: "call -1" */
	alarm(20);
	for (int i = 0; i < NFD; i++)
		close(fds[i]);
	alarm(0);
	return 0;
}

static int holes(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	off_t at = 0, d, h;

	if (fd < 0 || fstat(fd, &st)) {
		printf("%s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("size %lld:", (long long)st.st_size);
	while ((d = lseek(fd, at, SEEK_DATA)) >= 0) {
		h = lseek(fd, d, SEEK_HOLE);
		printf(" data %lld-%lld", (long long)d, (long long)h);
		if (h <= d)
			break;
		at = h;
	}
	printf("\n");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "run"))
		return run(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "holes")) {
		int r = 0;

		for (int i = 2; i < argc; i++)
			r |= holes(argv[i]);
		return r;
	}
	fprintf(stderr, "usage: copy_helper run DIR SEED N | holes FILE...\n");
	return 2;
}
