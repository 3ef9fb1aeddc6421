/*
 * test_io.c - the I/O backends (io.c, io_uring.c, io_sync.c, io_fault.c).
 *
 * The same cases run on each backend: uring (a small ring, so that batches
 * overflow it), sync, and fault with no rules.  Where io_uring cannot be
 * set up the uring cases are skipped.  Then the fault rules (EIO, ENOSPC,
 * short I/O, counts, hits, delays), and buffered fds with dontneed, on the
 * test directory and on /dev/shm (tmpfs refuses O_DIRECT).
 *
 * Files are opened with O_DIRECT (4 KiB-aligned buffers, whole pages),
 * unless the test directory is on tmpfs.  Each request's end_io counts its
 * calls: exactly one is expected.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "io.h"
#include "util.h"

#define PG 4096
#define WAIT_S 20		/* longest wait for completions */

/* ------------------------------------------------------------------ */
/* Requests that count their end_io calls, and waiting for them.       */

struct waiter {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned done;
};

struct treq {
	struct pc_io_req req;
	struct iovec iov[8];
	struct waiter *w;
	int calls;		/* w->m */
	void *chain;		/* test_chain's context */
};

static void waiter_init(struct waiter *w)
{
	pthread_mutex_init(&w->m, NULL);
	pthread_cond_init(&w->c, NULL);
	w->done = 0;
}

static void waiter_fini(struct waiter *w)
{
	pthread_cond_destroy(&w->c);
	pthread_mutex_destroy(&w->m);
}

static void treq_end(struct pc_io_req *req)
{
	struct treq *t = req->priv;
	struct waiter *w = t->w;

	pthread_mutex_lock(&w->m);
	t->calls++;
	w->done++;
	pthread_cond_broadcast(&w->c);
	pthread_mutex_unlock(&w->m);
}

/* Wait until @n requests in all have ended; fails the test on timeout. */
static void waiter_wait(struct waiter *w, unsigned n)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_S;
	pthread_mutex_lock(&w->m);
	while (w->done < n) {
		if (pthread_cond_timedwait(&w->c, &w->m, &ts) != 0) {
			unsigned done = w->done;

			pthread_mutex_unlock(&w->m);
			fail_msg("%u of %u requests ended in %d s", done, n,
				 WAIT_S);
		}
	}
	pthread_mutex_unlock(&w->m);
}

/* @len bytes at @buf as @iovcnt iovecs: whole pages each, the last the rest. */
static void treq_init(struct treq *t, struct waiter *w, int fd, int op,
		      off_t off, void *buf, size_t len, int iovcnt)
{
	size_t per = len / (size_t)iovcnt / PG * PG, at = 0;

	memset(t, 0, sizeof(*t));
	assert_true(iovcnt >= 1 && iovcnt <= 8);
	for (int i = 0; i < iovcnt; i++) {
		size_t l = i == iovcnt - 1 ? len - at : per;

		t->iov[i].iov_base = (char *)buf + at;
		t->iov[i].iov_len = l;
		at += l;
	}
	t->req.fd = fd;
	t->req.op = op;
	t->req.iov = t->iov;
	t->req.iovcnt = iovcnt;
	t->req.off = off;
	t->req.res = 12345;	/* the backend must set it */
	t->req.end_io = treq_end;
	t->req.priv = t;
	t->w = w;
}

static ssize_t treq_len(const struct treq *t)
{
	size_t n = 0;

	for (int i = 0; i < t->req.iovcnt; i++)
		n += t->iov[i].iov_len;
	return (ssize_t)n;
}

/* Submit @n requests in one call and wait for them all. */
static void run_reqs(const struct pc_io_ops *ops, struct pc_io *io,
		     struct treq *t, unsigned n)
{
	struct pc_io_req **v = calloc(n, sizeof(*v));
	struct waiter *w = t[0].w;

	assert_non_null(v);
	for (unsigned i = 0; i < n; i++)
		v[i] = &t[i].req;
	assert_int_equal(ops->submit(io, v, n), 0);
	waiter_wait(w, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(t[i].calls, 1);
	free(v);
}

/* One request, waited for; returns its res. */
static ssize_t do_one(const struct pc_io_ops *ops, struct pc_io *io, int fd,
		      int op, off_t off, void *buf, size_t len, int iovcnt,
		      bool dontneed)
{
	struct waiter w;
	struct treq t;

	waiter_init(&w);
	treq_init(&t, &w, fd, op, off, buf, len, iovcnt);
	t.req.dontneed = dontneed;
	run_reqs(ops, io, &t, 1);
	waiter_fini(&w);
	return t.req.res;
}

static void *xalloc(size_t len)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, PG, len), 0);
	memset(p, 0xEE, len);
	return p;
}

static bool pattern_ok(const void *buf, size_t len, uint64_t seed,
		       uint64_t off)
{
	unsigned char *want = malloc(len ? len : 1);
	bool ok;

	assert_non_null(want);
	tu_pattern(want, len, seed, off);
	ok = memcmp(buf, want, len) == 0;
	free(want);
	return ok;
}

static bool dir_direct;		/* tu_dir() takes O_DIRECT; set in main */

/* A fresh file in tu_dir(), O_DIRECT where the filesystem allows it. */
static int open_file(const char *name)
{
	int fd = open(tu_path(name), O_RDWR | O_CREAT | O_TRUNC |
		      (dir_direct ? O_DIRECT : 0), 0644);

	assert_true(fd >= 0);
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* The backends under test.                                            */

struct backend {
	const char *name;
	unsigned depth;
	const struct pc_io_ops *ops;
	struct pc_io *io;	/* NULL: not available here, skip */
};

static struct backend be_uring = { .name = "uring", .depth = 8 };
static struct backend be_uring256 = { .name = "uring", .depth = 0 };
static struct backend be_sync = { .name = "sync", .depth = 8 };
static struct backend be_fault = { .name = "fault", .depth = 8 };

static int be_setup(void **state)
{
	struct backend *b = *state;
	int err;

	b->ops = pc__io_ops_by_name(b->name);
	assert_non_null(b->ops);
	b->io = NULL;
	err = b->ops->create(&b->io, b->depth);
	if (err) {
		static bool told;

		/* Only io_uring may be missing (seccomp, sysctl, old kernel) */
		assert_string_equal(b->name, "uring");
		if (!told)
			printf("io_uring unavailable here (%s): its cases "
			       "skip\n", strerror(-err));
		told = true;
		b->io = NULL;
	}
	return 0;
}

static int be_teardown(void **state)
{
	struct backend *b = *state;

	if (b->io)
		b->ops->destroy(b->io);
	b->io = NULL;
	return 0;
}

static struct backend *be_get(void **state)
{
	struct backend *b = *state;

	if (!b->io)
		skip();
	return b;
}

/* ------------------------------------------------------------------ */
/* Cases every backend runs.                                           */

/* Write, then read back, requests of several pages in several iovecs. */
static void test_rw(void **state)
{
	struct backend *b = be_get(state);
	uint64_t seed = tu_seed("io rw"), rnd = seed;
	enum { N = 16 };
	struct treq t[N];
	size_t len[N];
	off_t off[N], at = 0;
	char *buf[N];
	struct waiter w;
	int fd = open_file("rw");

	waiter_init(&w);
	for (int i = 0; i < N; i++) {
		len[i] = (1 + tu_rand(&rnd) % 8) * PG;
		off[i] = at;
		at += (off_t)len[i];
		buf[i] = xalloc(len[i]);
		tu_pattern(buf[i], len[i], seed, (uint64_t)off[i]);
		treq_init(&t[i], &w, fd, PC_IO_WRITE, off[i], buf[i], len[i],
			  1 + (int)(tu_rand(&rnd) % (len[i] / PG)));
	}
	run_reqs(b->ops, b->io, t, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(t[i].req.res, (ssize_t)len[i]);

	waiter_init(&w);
	for (int i = 0; i < N; i++) {
		memset(buf[i], 0, len[i]);
		treq_init(&t[i], &w, fd, PC_IO_READ, off[i], buf[i], len[i],
			  1 + (int)(tu_rand(&rnd) % (len[i] / PG)));
	}
	run_reqs(b->ops, b->io, t, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(t[i].req.res, (ssize_t)len[i]);
		assert_true(pattern_ok(buf[i], len[i], seed, (uint64_t)off[i]));
		free(buf[i]);
	}
	waiter_fini(&w);
	close(fd);
}

/*
 * A request marked now ends in the submitting thread before submit
 * returns, on every backend; those submitted with it, not marked, end
 * too.  Data read either way is what was written.
 */
struct now_req {
	struct treq t;
	pthread_t ended_in;
};

static void now_end(struct pc_io_req *req)
{
	struct now_req *n = (struct now_req *)(void *)req->priv;

	n->ended_in = pthread_self();
	treq_end(req);
}

static void test_now(void **state)
{
	struct backend *b = be_get(state);
	enum { N = 12 };
	struct now_req r[N];
	struct pc_io_req *v[N];
	char *buf = xalloc((size_t)N * PG);
	struct waiter w;
	int fd = open_file("now");

	tu_pattern(buf, (size_t)N * PG, 11, 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				(size_t)N * PG, 4, false), N * PG);
	memset(buf, 0, (size_t)N * PG);
	waiter_init(&w);
	for (int i = 0; i < N; i++) {
		treq_init(&r[i].t, &w, fd, PC_IO_READ, (off_t)i * PG,
			  buf + (size_t)i * PG, PG, 1);
		r[i].t.req.priv = &r[i];
		r[i].t.req.end_io = now_end;
		r[i].t.req.now = i % 4 == 1;	/* 1, 5, 9 */
		v[i] = &r[i].t.req;
	}
	assert_int_equal(b->ops->submit(b->io, v, N), 0);
	pthread_mutex_lock(&w.m);
	for (int i = 1; i < N; i += 4) {
		assert_int_equal(r[i].t.calls, 1);	/* before submit returned */
		assert_true(pthread_equal(r[i].ended_in, pthread_self()));
	}
	pthread_mutex_unlock(&w.m);
	waiter_wait(&w, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(r[i].t.calls, 1);
		assert_int_equal(r[i].t.req.res, PG);
	}
	assert_true(pattern_ok(buf, (size_t)N * PG, 11, 0));
	waiter_fini(&w);
	free(buf);
	close(fd);
}

/* Far more requests in one submit than the ring holds. */
static void test_batch(void **state)
{
	struct backend *b = be_get(state);
	enum { N = 300 };
	struct treq *t = calloc(N, sizeof(*t));
	char *buf = xalloc((size_t)N * PG);
	struct waiter w;
	int fd = open_file("batch");

	assert_non_null(t);
	tu_pattern(buf, (size_t)N * PG, 7, 0);
	waiter_init(&w);
	for (int i = 0; i < N; i++)	/* in a scattered order */
		treq_init(&t[i], &w, fd, PC_IO_WRITE,
			  (off_t)((i * 7) % N) * PG,
			  buf + (size_t)((i * 7) % N) * PG, PG, 1);
	run_reqs(b->ops, b->io, t, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(t[i].req.res, PG);

	memset(buf, 0, (size_t)N * PG);
	waiter_init(&w);
	for (int i = 0; i < N; i++)
		treq_init(&t[i], &w, fd, PC_IO_READ, (off_t)i * PG,
			  buf + (size_t)i * PG, PG, 1);
	run_reqs(b->ops, b->io, t, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(t[i].req.res, PG);
	assert_true(pattern_ok(buf, (size_t)N * PG, 7, 0));
	waiter_fini(&w);
	free(buf);
	free(t);
	close(fd);
}

/* Reads that meet end of file end with what they got. */
static void test_eof(void **state)
{
	struct backend *b = be_get(state);
	enum { SIZE = 10000 };
	char *src = xalloc(SIZE), *buf = xalloc(8 * PG);
	int fd = open(tu_path("eof"), O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	tu_pattern(src, SIZE, 11, 0);
	assert_int_equal(pwrite(fd, src, SIZE, 0), SIZE);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	fd = open(tu_path("eof"), O_RDONLY | (dir_direct ? O_DIRECT : 0));
	assert_true(fd >= 0);

	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 4 * PG,
				1, false), SIZE);
	assert_true(pattern_ok(buf, SIZE, 11, 0));
	memset(buf, 0, 8 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 4 * PG,
				4, false), SIZE);
	assert_true(pattern_ok(buf, SIZE, 11, 0));
	memset(buf, 0, 8 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, PG, buf,
				3 * PG, 3, false), SIZE - PG);
	assert_true(pattern_ok(buf, SIZE - PG, 11, PG));
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 2 * PG, buf,
				2 * PG, 1, false), SIZE - 2 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 3 * PG, buf,
				PG, 1, false), 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 256 * PG, buf,
				8 * PG, 2, false), 0);
	free(src);
	free(buf);
	close(fd);
}

struct conc {
	struct backend *b;
	int fd;
	int id;
	uint64_t seed;
	int failures;
};

enum { CONC_THREADS = 4, CONC_REGION = 256 };	/* pages per thread */

static void *conc_thread(void *arg)
{
	struct conc *c = arg;
	uint64_t rnd = c->seed + (uint64_t)c->id;
	off_t base = (off_t)c->id * CONC_REGION * PG;
	char *buf = xalloc((size_t)CONC_REGION * PG);
	struct treq t[8];
	struct waiter w;

	/* Write the region in random-sized batches, then read it back so. */
	for (int op = PC_IO_WRITE; op >= PC_IO_READ; op--) {
		unsigned page = 0;

		if (op == PC_IO_WRITE)
			tu_pattern(buf, (size_t)CONC_REGION * PG, c->seed,
				   (uint64_t)base);
		else
			memset(buf, 0, (size_t)CONC_REGION * PG);
		while (page < CONC_REGION) {
			unsigned n = 0;

			waiter_init(&w);
			while (n < 8 && page < CONC_REGION) {
				unsigned np = 1 + tu_rand(&rnd) % 8;

				np = pc_min(np, CONC_REGION - page);
				treq_init(&t[n++], &w, c->fd, op,
					  base + (off_t)page * PG,
					  buf + (size_t)page * PG,
					  (size_t)np * PG,
					  1 + (int)(tu_rand(&rnd) % np));
				page += np;
			}
			run_reqs(c->b->ops, c->b->io, t, n);
			for (unsigned i = 0; i < n; i++)
				if (t[i].req.res != treq_len(&t[i]))
					c->failures++;
			waiter_fini(&w);
		}
	}
	if (!pattern_ok(buf, (size_t)CONC_REGION * PG, c->seed,
			(uint64_t)base))
		c->failures++;
	free(buf);
	return NULL;
}

/* Four threads submitting at once, each to its own region of one file. */
static void test_concurrent(void **state)
{
	struct backend *b = be_get(state);
	uint64_t seed = tu_seed("io concurrent");
	pthread_t th[CONC_THREADS];
	struct conc c[CONC_THREADS];
	int fd = open_file("conc");

	for (int i = 0; i < CONC_THREADS; i++) {
		c[i] = (struct conc){ .b = b, .fd = fd, .id = i, .seed = seed };
		assert_int_equal(pthread_create(&th[i], NULL, conc_thread,
						&c[i]), 0);
	}
	for (int i = 0; i < CONC_THREADS; i++) {
		tu_join(th[i]);
		assert_int_equal(c[i].failures, 0);
	}
	close(fd);
}

struct chain {
	const struct pc_io_ops *ops;
	struct pc_io *io;
	struct treq *t;
	unsigned total;
	_Atomic unsigned next;	/* next request to start */
	int fd;
	char *buf;
};

/* end_io that starts two more requests: I/O submitted from end_io. */
static void chain_end(struct pc_io_req *req)
{
	struct treq *t = req->priv;
	struct chain *ch = t->chain;
	struct pc_io_req *more[2];
	unsigned n = 0;

	for (int k = 0; k < 2; k++) {
		unsigned i = atomic_fetch_add(&ch->next, 1);

		if (i < ch->total)
			more[n++] = &ch->t[i].req;
	}
	if (n)
		ch->ops->submit(ch->io, more, n);
	treq_end(req);
}

static void test_chain(void **state)
{
	struct backend *b = be_get(state);
	enum { N = 400 };
	struct chain ch = { .ops = b->ops, .io = b->io, .total = N };
	struct waiter w;
	struct pc_io_req *first = NULL;

	ch.t = calloc(N, sizeof(*ch.t));
	ch.buf = xalloc((size_t)N * PG);
	ch.fd = open_file("chain");
	assert_non_null(ch.t);
	tu_pattern(ch.buf, 16 * PG, 3, 0);
	assert_int_equal(do_one(b->ops, b->io, ch.fd, PC_IO_WRITE, 0, ch.buf,
				16 * PG, 4, false), 16 * PG);
	memset(ch.buf, 0, (size_t)N * PG);

	waiter_init(&w);
	for (unsigned i = 0; i < N; i++) {
		treq_init(&ch.t[i], &w, ch.fd, PC_IO_READ,
			  (off_t)(i % 16) * PG, ch.buf + (size_t)i * PG, PG, 1);
		ch.t[i].req.end_io = chain_end;
		ch.t[i].chain = &ch;
	}
	atomic_store(&ch.next, 1);
	first = &ch.t[0].req;
	assert_int_equal(b->ops->submit(b->io, &first, 1), 0);
	waiter_wait(&w, N);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(ch.t[i].calls, 1);
		assert_int_equal(ch.t[i].req.res, PG);
		assert_true(pattern_ok(ch.buf + (size_t)i * PG, PG, 3,
				       (uint64_t)(i % 16) * PG));
	}
	waiter_fini(&w);
	free(ch.buf);
	free(ch.t);
	close(ch.fd);
}

/* destroy waits for every request in flight. */
static void test_destroy_waits(void **state)
{
	struct backend *b = be_get(state);
	enum { N = 64 };
	struct treq t[N];
	struct pc_io_req *v[N];
	struct pc_io *io;
	char *buf = xalloc((size_t)N * PG);
	struct waiter w;
	int fd = open_file("destroy");

	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				(size_t)N * PG, 8, false), N * PG);
	assert_int_equal(b->ops->create(&io, b->depth), 0);
	waiter_init(&w);
	for (int i = 0; i < N; i++) {
		treq_init(&t[i], &w, fd, PC_IO_READ, (off_t)i * PG,
			  buf + (size_t)i * PG, PG, 1);
		v[i] = &t[i].req;
	}
	assert_int_equal(b->ops->submit(io, v, N), 0);
	b->ops->destroy(io);
	pthread_mutex_lock(&w.m);
	assert_int_equal(w.done, N);
	pthread_mutex_unlock(&w.m);
	waiter_fini(&w);
	free(buf);
	close(fd);
}

/* The kernel's errors reach end_io as they are. */
static void test_errors(void **state)
{
	struct backend *b = be_get(state);
	char *buf = xalloc(2 * PG);
	int fd = open_file("errors"), wr, rd;

	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				2 * PG, 1, false), 2 * PG);
	wr = open(tu_path("errors"), O_WRONLY);
	rd = open(tu_path("errors"), O_RDONLY);
	assert_true(wr >= 0 && rd >= 0);
	assert_int_equal(do_one(b->ops, b->io, wr, PC_IO_READ, 0, buf, PG, 1,
				false), -EBADF);
	assert_int_equal(do_one(b->ops, b->io, rd, PC_IO_WRITE, 0, buf, PG, 1,
				false), -EBADF);
	assert_int_equal(do_one(b->ops, b->io, -1, PC_IO_READ, 0, buf, PG, 1,
				false), -EBADF);
	if (dir_direct && !tu_dir_is_tmpfs())	/* aligned memory, or EINVAL */
		assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0,
					buf + 1, PG, 1, false), -EINVAL);
	/* A zero-length request ends at once, with 0. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 0, 1,
				false), 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf, 0, 1,
				false), 0);
	close(wr);
	close(rd);
	close(fd);
	free(buf);
}

/* Pages of [0, len) of @fd in the kernel's page cache. */
static size_t resident_pages(int fd, size_t len)
{
	unsigned char vec[256];
	size_t n = 0, pages = len / PG;
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	assert_true(p != MAP_FAILED);
	assert_true(pages <= sizeof(vec));
	assert_int_equal(mincore(p, len, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	return n;
}

/* A buffered fd, the kernel's copy dropped after each transfer. */
static void dontneed_case(struct backend *b, const char *path, bool tmpfs)
{
	enum { NP = 64 };
	char *buf = xalloc(NP * PG);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	tu_pattern(buf, NP * PG, 5, 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				NP * PG, 4, true), NP * PG);
	if (!tmpfs)	/* tmpfs pages are the file: they cannot go */
		assert_int_equal(resident_pages(fd, NP * PG), 0);
	memset(buf, 0, NP * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf,
				NP * PG, 3, true), NP * PG);
	assert_true(pattern_ok(buf, NP * PG, 5, 0));
	if (!tmpfs)
		assert_int_equal(resident_pages(fd, NP * PG), 0);
	/* At end of file: the bytes there, and nothing past them dropped. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, (NP - 1) * PG,
				buf, 4 * PG, 2, true), PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, NP * PG, buf,
				PG, 1, true), 0);
	close(fd);
	unlink(path);
	free(buf);
}

static void test_dontneed(void **state)
{
	struct backend *b = be_get(state);

	dontneed_case(b, tu_path("dontneed"), tu_dir_is_tmpfs());
}

/*
 * tmpfs before Linux 6.6 refuses O_DIRECT with EINVAL: the case the library
 * handles with a buffered fd and dontneed.  Newer tmpfs takes O_DIRECT (and
 * ignores it); the buffered path must work there all the same.
 */
static void test_shm(void **state)
{
	struct backend *b = be_get(state);
	static bool told;
	char path[64];
	struct stat st;
	int fd;

	if (stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode))
		skip();
	snprintf(path, sizeof(path), "/dev/shm/pctest-io-%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0600);
	if (fd >= 0) {
		if (!told)
			printf("/dev/shm takes O_DIRECT (Linux 6.6+ tmpfs)\n");
		told = true;
		close(fd);
	} else {
		assert_int_equal(errno, EINVAL);
	}
	dontneed_case(b, path, true);
}

/* ------------------------------------------------------------------ */
/* io_uring only: transfers cut short are continued.                   */

struct feeder {
	int fd;
	const char *data;
	size_t parts[4];
};

static void *feeder_thread(void *arg)
{
	struct feeder *f = arg;
	size_t at = 0;

	for (int i = 0; i < 4 && f->parts[i]; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		if (write(f->fd, f->data + at, f->parts[i]) !=
		    (ssize_t)f->parts[i])
			abort();
		at += f->parts[i];
	}
	return NULL;
}

/* A pipe delivers a read in pieces: each piece is a short transfer. */
static void test_uring_short(void **state)
{
	struct backend *b = be_get(state);
	enum { LEN = 12288 };
	char *src = xalloc(LEN), *buf = xalloc(LEN);
	struct feeder f = { .data = src, .parts = { 1000, 5000, 6288 } };
	struct iovec iov[3] = {
		{ buf, 5000 }, { buf + 5000, 3000 }, { buf + 8000, 4288 },
	};
	struct waiter w;
	struct treq t;
	pthread_t th;
	int p[2];

	assert_int_equal(pipe(p), 0);
	tu_pattern(src, LEN, 9, 0);
	f.fd = p[1];
	waiter_init(&w);
	treq_init(&t, &w, p[0], PC_IO_READ, 0, buf, LEN, 1);
	memcpy(t.iov, iov, sizeof(iov));
	t.req.iovcnt = 3;
	assert_int_equal(pthread_create(&th, NULL, feeder_thread, &f), 0);
	run_reqs(b->ops, b->io, &t, 1);
	tu_join(th);
	assert_int_equal(t.req.res, LEN);
	assert_true(pattern_ok(buf, LEN, 9, 0));

	/* The writer goes away early: the read ends with what it got. */
	f.parts[0] = 3000;
	f.parts[1] = 0;
	waiter_init(&w);
	treq_init(&t, &w, p[0], PC_IO_READ, 0, buf, LEN, 1);
	memcpy(t.iov, iov, sizeof(iov));
	t.req.iovcnt = 3;
	assert_int_equal(pthread_create(&th, NULL, feeder_thread, &f), 0);
	tu_join(th);
	close(p[1]);
	run_reqs(b->ops, b->io, &t, 1);
	assert_int_equal(t.req.res, 3000);
	assert_true(pattern_ok(buf, 3000, 9, 0));
	close(p[0]);
	waiter_fini(&w);
	free(src);
	free(buf);
}

struct drainer {
	int fd;
	char *buf;
	size_t len;
};

static void *drainer_thread(void *arg)
{
	struct drainer *d = arg;
	size_t at = 0;

	while (at < d->len) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		ssize_t r;

		nanosleep(&ts, NULL);
		r = read(d->fd, d->buf + at, pc_min(d->len - at, 16384));
		if (r <= 0)
			abort();
		at += (size_t)r;
	}
	return NULL;
}

/* A write larger than a pipe holds, drained slowly on the other side. */
static void test_uring_short_write(void **state)
{
	struct backend *b = be_get(state);
	enum { LEN = 256 * 1024 };
	char *src = xalloc(LEN), *dst = xalloc(LEN);
	struct drainer d = { .buf = dst, .len = LEN };
	pthread_t th;
	int p[2];

	assert_int_equal(pipe(p), 0);
	tu_pattern(src, LEN, 10, 0);
	d.fd = p[0];
	assert_int_equal(pthread_create(&th, NULL, drainer_thread, &d), 0);
	assert_int_equal(do_one(b->ops, b->io, p[1], PC_IO_WRITE, 0, src, LEN,
				7, false), LEN);
	tu_join(th);
	assert_true(pattern_ok(dst, LEN, 10, 0));
	close(p[0]);
	close(p[1]);
	free(src);
	free(dst);
}

/* ------------------------------------------------------------------ */
/* The fault rules.                                                    */

static struct pc_io_fault rule(int op, int fd, off_t lo, off_t hi, int error,
			       int count)
{
	return (struct pc_io_fault){ .op = op, .fd = fd, .off_lo = lo,
				     .off_hi = hi, .error = error,
				     .count = count };
}

/* A file of @np pages of pattern @seed, through the backend. */
static int fault_file(struct backend *b, const char *name, int np,
		      uint64_t seed)
{
	char *buf = xalloc((size_t)np * PG);
	int fd = open_file(name);

	tu_pattern(buf, (size_t)np * PG, seed, 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				(size_t)np * PG, 4, false), np * PG);
	free(buf);
	return fd;
}

static void test_fault_eio_read(void **state)
{
	struct backend *b = be_get(state);
	char *buf = xalloc(4 * PG);
	int fd = fault_file(b, "eio", 8, 21);
	struct pc_io_fault r = rule(PC_IO_READ, -1, 0, 0, EIO, -1);

	assert_int_equal(pc__io_fault_add(b->io, &r), 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 4 * PG,
				2, false), -EIO);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 4 * PG, buf,
				PG, 1, false), -EIO);
	/* Failed without being done: the buffer is untouched. */
	assert_int_equal((unsigned char)buf[0], 0xEE);
	/* Writes go through. */
	tu_pattern(buf, 4 * PG, 21, 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				4 * PG, 1, false), 4 * PG);
	assert_int_equal(pc__io_fault_hits(b->io), 2);
	pc__io_fault_clear(b->io);
	assert_int_equal(pc__io_fault_hits(b->io), 0);
	memset(buf, 0, 4 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 4 * PG,
				2, false), 4 * PG);
	assert_true(pattern_ok(buf, 4 * PG, 21, 0));
	free(buf);
	close(fd);
}

static void test_fault_enospc_write(void **state)
{
	struct backend *b = be_get(state);
	char *buf = xalloc(4 * PG);
	int fd = fault_file(b, "enospc", 8, 22), other = open_file("enospc2");
	struct pc_io_fault r = rule(PC_IO_WRITE, fd, 2 * PG, 3 * PG, ENOSPC,
				    -1);

	assert_int_equal(pc__io_fault_add(b->io, &r), 0);
	/* Outside the range, another fd, a read: untouched by the rule. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				2 * PG, 1, false), 2 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 3 * PG, buf,
				PG, 1, false), PG);
	assert_int_equal(do_one(b->ops, b->io, other, PC_IO_WRITE, 2 * PG,
				buf, PG, 1, false), PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 2 * PG, buf,
				PG, 1, false), PG);
	assert_int_equal(pc__io_fault_hits(b->io), 0);
	/* Inside, and overlapping either end. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 2 * PG, buf,
				PG, 1, false), -ENOSPC);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, PG, buf,
				2 * PG, 2, false), -ENOSPC);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 2 * PG, buf,
				4 * PG, 1, false), -ENOSPC);
	assert_int_equal(pc__io_fault_hits(b->io), 3);
	pc__io_fault_clear(b->io);
	free(buf);
	close(fd);
	close(other);
}

static void test_fault_short(void **state)
{
	struct backend *b = be_get(state);
	char *buf = xalloc(5 * PG), *want = xalloc(5 * PG);
	int fd = fault_file(b, "short", 5, 23);
	struct pc_io_fault r = rule(-1, fd, 0, 0, EIO, -1);

	r.short_io = true;
	assert_int_equal(pc__io_fault_add(b->io, &r), 0);
	/* Read of 5 pages: the first 2 (half, rounded down) arrive. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 5 * PG,
				3, false), -EIO);
	assert_true(pattern_ok(buf, 2 * PG, 23, 0));
	assert_int_equal((unsigned char)buf[2 * PG], 0xEE);
	/* Write of 5 pages: the first 2 reach the file. */
	tu_pattern(buf, 5 * PG, 24, 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 0, buf,
				5 * PG, 5, false), -EIO);
	/* One page: half rounds down to nothing. */
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_WRITE, 4 * PG, buf,
				PG, 1, false), -EIO);
	assert_int_equal(pc__io_fault_hits(b->io), 3);
	pc__io_fault_clear(b->io);
	memset(buf, 0, 5 * PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, 5 * PG,
				1, false), 5 * PG);
	tu_pattern(want, 2 * PG, 24, 0);
	tu_pattern(want + 2 * PG, 3 * PG, 23, 2 * PG);
	assert_memory_equal(buf, want, 5 * PG);
	free(buf);
	free(want);
	close(fd);
}

static void test_fault_count(void **state)
{
	struct backend *b = be_get(state);
	char *buf = xalloc(PG);
	int fd = fault_file(b, "count", 4, 25);
	struct pc_io_fault inert = rule(-1, -1, 0, 0, EBADF, 0);
	struct pc_io_fault first = rule(PC_IO_READ, -1, 0, 0, EIO, 2);
	struct pc_io_fault then = rule(PC_IO_READ, -1, 0, 0, ENOSPC, 1);

	assert_int_equal(pc__io_fault_add(b->io, &inert), 0);
	assert_int_equal(pc__io_fault_add(b->io, &first), 0);
	assert_int_equal(pc__io_fault_add(b->io, &then), 0);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, PG, 1,
				false), -EIO);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, PG, 1,
				false), -EIO);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, PG, 1,
				false), -ENOSPC);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, 0, buf, PG, 1,
				false), PG);
	assert_int_equal(do_one(b->ops, b->io, fd, PC_IO_READ, PG, buf, PG, 1,
				false), PG);
	assert_int_equal(pc__io_fault_hits(b->io), 3);

	/* In one batch: the rule applies to exactly @count requests. */
	enum { N = 10 };
	struct treq t[N];
	struct waiter w;
	char *big = xalloc(N * PG);
	int failed = 0;

	pc__io_fault_clear(b->io);
	first.count = 4;
	assert_int_equal(pc__io_fault_add(b->io, &first), 0);
	waiter_init(&w);
	for (int i = 0; i < N; i++)
		treq_init(&t[i], &w, fd, PC_IO_READ, (i % 4) * PG,
			  big + (size_t)i * PG, PG, 1);
	run_reqs(b->ops, b->io, t, N);
	for (int i = 0; i < N; i++) {
		if (t[i].req.res == -EIO)
			failed++;
		else
			assert_int_equal(t[i].req.res, PG);
	}
	assert_int_equal(failed, 4);
	assert_int_equal(pc__io_fault_hits(b->io), 4);
	pc__io_fault_clear(b->io);
	waiter_fini(&w);
	free(big);
	free(buf);
	close(fd);
}

struct slow {
	struct backend *b;
	int fd;
	double took;
	ssize_t res;
	_Atomic bool done;	/* res and took are set */
};

static void *slow_thread(void *arg)
{
	struct slow *s = arg;
	char *buf = xalloc(PG);
	double t0 = now_s();

	s->res = do_one(s->b->ops, s->b->io, s->fd, PC_IO_READ, 0, buf, PG, 1,
			false);
	s->took = now_s() - t0;
	atomic_store(&s->done, true);
	free(buf);
	return NULL;
}

/*
 * A delay-only rule slows its requests and no one else's.  The slow read
 * is also held by a gate after its delay, so "no one else's" needs no
 * clock: the fast reads finish while it is still held.
 */
static void test_fault_delay(void **state)
{
	struct backend *b = be_get(state);
	int slow_fd = fault_file(b, "slow", 1, 26);
	int fast_fd = fault_file(b, "fast", 4, 27);
	struct pc_io_fault r = rule(PC_IO_READ, slow_fd, 0, 0, 0, -1);
	struct slow s = { .b = b, .fd = slow_fd };
	_Atomic bool gate = false;
	char *buf = xalloc(4 * PG);
	pthread_t th;

	r.delay_us = 300 * 1000;
	r.gate = &gate;
	assert_int_equal(pc__io_fault_add(b->io, &r), 0);
	assert_int_equal(pthread_create(&th, NULL, slow_thread, &s), 0);
	while (pc__io_fault_hits(b->io) == 0)	/* it is in its rule */
		tu_sleep_us(1000);
	for (int i = 0; i < 4; i++)
		assert_int_equal(do_one(b->ops, b->io, fast_fd, PC_IO_READ,
					i * PG, buf, PG, 1, false), PG);
	assert_false(atomic_load(&s.done));	/* not behind the slow one */
	atomic_store(&gate, true);
	tu_join(th);
	assert_int_equal(s.res, PG);	/* slowed, not failed */
	assert_true(s.took >= 0.3);	/* the delay: a lower bound only */
	assert_int_equal(pc__io_fault_hits(b->io), 1);
	pc__io_fault_clear(b->io);
	free(buf);
	close(slow_fd);
	close(fast_fd);
}

static void test_fault_api(void **state)
{
	struct backend *b = be_get(state);
	struct pc_io_fault ok = rule(-1, -1, 0, 0, EIO, 1), bad;
	struct pc_io *sync;

	bad = ok;
	bad.op = 7;
	assert_int_equal(pc__io_fault_add(b->io, &bad), -EINVAL);
	bad = ok;
	bad.count = -2;
	assert_int_equal(pc__io_fault_add(b->io, &bad), -EINVAL);
	bad = ok;
	bad.error = -EIO;
	assert_int_equal(pc__io_fault_add(b->io, &bad), -EINVAL);
	for (int i = 0; i < 100; i++)	/* grows past the first allocation */
		assert_int_equal(pc__io_fault_add(b->io, &ok), 0);
	pc__io_fault_clear(b->io);

	/* On an io of another backend: refused, harmless. */
	assert_int_equal(pc__io_sync_ops.create(&sync, 4), 0);
	assert_int_equal(pc__io_fault_add(sync, &ok), -EINVAL);
	assert_int_equal(pc__io_fault_hits(sync), 0);
	pc__io_fault_clear(sync);
	pc__io_sync_ops.destroy(sync);
}

static void test_ops_by_name(void **state)
{
	(void)state;
	assert_ptr_equal(pc__io_ops_by_name("uring"), &pc__io_uring_ops);
	assert_ptr_equal(pc__io_ops_by_name("sync"), &pc__io_sync_ops);
	assert_ptr_equal(pc__io_ops_by_name("fault"), &pc__io_fault_ops);
	assert_null(pc__io_ops_by_name("aio"));
	assert_null(pc__io_ops_by_name(""));
	assert_null(pc__io_ops_by_name(NULL));
}

#define BE(fn, be) \
	{ #fn "/" #be, fn, be_setup, be_teardown, &be_##be }
#define EVERY(fn) BE(fn, uring), BE(fn, sync), BE(fn, fault)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_by_name),
		EVERY(test_rw),
		EVERY(test_errors),
		EVERY(test_batch),
		EVERY(test_now),
		BE(test_batch, uring256),
		EVERY(test_eof),
		EVERY(test_concurrent),
		BE(test_concurrent, uring256),
		EVERY(test_chain),
		EVERY(test_destroy_waits),
		EVERY(test_dontneed),
		EVERY(test_shm),
		BE(test_uring_short, uring),
		BE(test_uring_short_write, uring),
		BE(test_fault_eio_read, fault),
		BE(test_fault_enospc_write, fault),
		BE(test_fault_short, fault),
		BE(test_fault_count, fault),
		BE(test_fault_delay, fault),
		BE(test_fault_api, fault),
	};

	int fd = open(tu_path("probe"), O_RDWR | O_CREAT | O_DIRECT, 0644);

	dir_direct = fd >= 0;
	if (fd >= 0)
		close(fd);
	else
		printf("%s refuses O_DIRECT (%s): buffered files there\n",
		       tu_dir(), strerror(errno));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
