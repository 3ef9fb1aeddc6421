/*
 * tools/bench/util.c - small helpers the benchmark lab's files share.
 *
 * Owns: size parsing and printing, the clock, seeded randomness, aligned
 * pre-touched buffers, the process's resident set size, the
 * start-together thread runner, and the test
 * files themselves (made, dropped from the kernel's cache, removed).
 *
 * Test files are made with O_DIRECT in 1 MiB writes, so making them puts
 * nothing in the kernel's page cache and costs the device's bandwidth,
 * not the budget; where O_DIRECT is refused (tmpfs) they are written
 * buffered and dropped.  Nothing here keeps state between calls, except
 * the thread runner's barrier, which lives on its caller's stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAKE_CHUNK (1u << 20)

int pcb_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

uint64_t pcb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t pcb_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

void *pcb_buf(size_t len)
{
	void *p = NULL;

	if (len == 0)
		len = 1;
	if (posix_memalign(&p, 4096, (len + 4095) & ~(size_t)4095))
		return NULL;
	/* pre-touched, and not all zeros: a cache must not be able to
	 * tell our data from a hole */
	for (size_t i = 0; i < len; i++)
		((unsigned char *)p)[i] = (unsigned char)(i * 131 + 7);
	return p;
}

uint64_t pcb_rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

int pcb_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	case 't': case 'T': mul = 1ull << 40; end++; break;
	default: break;
	}
	if (mul > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

const char *pcb_fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i = -1;

	while (i < 3 && v && (v & 1023) == 0) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		pcb_fmt(buf, len, "%" PRIu64, v);
	else
		pcb_fmt(buf, len, "%" PRIu64 "%c", v, suffix[i]);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Threads that start together.                                        */

struct pcb_threads_ctx {
	struct pcb_run *r;
	pcb_thread_fn fn;
	void *arg;
	pthread_barrier_t start;
	int err;			/* first error; under lock */
	pthread_mutex_t lock;
};

struct pcb_thread_arg {
	struct pcb_threads_ctx *ctx;
	int i;
};

static void *thread_main(void *p)
{
	struct pcb_thread_arg *a = p;
	struct pcb_threads_ctx *ctx = a->ctx;
	int err;

	pthread_barrier_wait(&ctx->start);
	err = ctx->fn(ctx->r, a->i, ctx->arg);
	if (err < 0) {
		pthread_mutex_lock(&ctx->lock);
		if (!ctx->err)
			ctx->err = err;
		pthread_mutex_unlock(&ctx->lock);
	}
	return NULL;
}

int pcb_threads(struct pcb_run *r, int n, pcb_thread_fn fn, void *arg)
{
	struct pcb_threads_ctx ctx = { .r = r, .fn = fn, .arg = arg };
	struct pcb_thread_arg *args;
	pthread_t *tids;
	int started = 0, err = 0;

	if (n < 1)
		return -EINVAL;
	args = calloc((size_t)n, sizeof(*args));
	tids = calloc((size_t)n, sizeof(*tids));
	if (!args || !tids) {
		free(args);
		free(tids);
		return -ENOMEM;
	}
	pthread_mutex_init(&ctx.lock, NULL);
	pthread_barrier_init(&ctx.start, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		args[i] = (struct pcb_thread_arg){ .ctx = &ctx, .i = i };
		err = -pthread_create(&tids[i], NULL, thread_main, &args[i]);
		if (err)
			break;
		started++;
	}
	if (started < n) {
		/* cannot meet at the barrier: fail the run, but let those
		 * started finish (they see the stop flag soon enough) */
		pcb_stop = 1;
		pthread_barrier_destroy(&ctx.start);
		pthread_barrier_init(&ctx.start, NULL, 1);
	}
	pthread_barrier_wait(&ctx.start);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&ctx.start);
	pthread_mutex_destroy(&ctx.lock);
	free(args);
	free(tids);
	if (err)
		return pcb_fail(r, err, "cannot start %d threads: %s", n,
				strerror(-err));
	return ctx.err;
}

/* ------------------------------------------------------------------ */
/* Test files.                                                         */

int pcb_mkdir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf = (const char *)buf + n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int pcb_make_file(const char *path, uint64_t size, bool sparse)
{
	static void *chunk;
	bool direct = true;
	int fd, err = 0;

	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT | O_CLOEXEC,
		  0644);
	if (fd < 0 && errno == EINVAL) {	/* tmpfs */
		direct = false;
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return -errno;
	if (sparse) {
		if (ftruncate(fd, (off_t)size) < 0)
			err = -errno;
		close(fd);
		return err;
	}
	if (!chunk && !(chunk = pcb_buf(MAKE_CHUNK))) {
		close(fd);
		return -ENOMEM;
	}
	for (uint64_t off = 0; off < size && !err; off += MAKE_CHUNK) {
		uint64_t n = size - off < MAKE_CHUNK ? size - off : MAKE_CHUNK;

		/* a different first word per chunk: no two chunks alike */
		memcpy(chunk, &off, sizeof(off));
		if (direct && (n & 4095)) {
			/* O_DIRECT needs whole blocks: write the block, cut */
			err = write_all(fd, chunk, (n + 4095) & ~4095ull,
					(off_t)off);
			if (!err && ftruncate(fd, (off_t)size) < 0)
				err = -errno;
		} else {
			err = write_all(fd, chunk, n, (off_t)off);
		}
		if (pcb_stop)
			err = -EINTR;
	}
	if (!err && fdatasync(fd) < 0)
		err = -errno;
	if (!direct)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return err;
}

static int drop_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	int fd;

	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	return 0;
}

void pcb_drop_cache(const char *dir)
{
	nftw(dir, drop_one, 16, FTW_PHYS);
}

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

int pcb_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (lstat(path, &st) == 0)
		return -ENOTEMPTY;
	return 0;
}
