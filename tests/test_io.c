/*
 * test_io.c - the I/O backends (io.c, io_uring.c, io_sync.c, io_fault.c).
 *
 * The same cases run on each backend: uring (a small ring, so that batches
 * overflow it), sync, and fault with no rules.  Where io_uring cannot be
 * set up the uring cases are skipped.  Then buffered fds with dontneed, on
 * the test directory and on /dev/shm (tmpfs refuses O_DIRECT), and
 * io_uring's short transfers.  The fault rules are test_io_fault.c's; the
 * helpers both use are tests/util_io.c's.
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
#include "util_io.h"

static struct backend be_uring = { .name = "uring", .depth = 8 };
static struct backend be_uring256 = { .name = "uring", .depth = 0 };
static struct backend be_sync = { .name = "sync", .depth = 8 };
static struct backend be_fault = { .name = "fault", .depth = 8 };	/* no rules */

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
	};

	io_probe_direct();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
