/*
 * util_io.c - what the I/O backend tests share (util_io.h): requests that
 * count their end_io calls and waiting for them, scratch files and
 * buffers, and the backends under test as cmocka states.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util_io.h"

/* ------------------------------------------------------------------ */
/* Requests that count their end_io calls, and waiting for them.       */

void waiter_init(struct waiter *w)
{
	pthread_mutex_init(&w->m, NULL);
	pthread_cond_init(&w->c, NULL);
	w->done = 0;
}

void waiter_fini(struct waiter *w)
{
	pthread_cond_destroy(&w->c);
	pthread_mutex_destroy(&w->m);
}

void treq_end(struct pc_io_req *req)
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
void waiter_wait(struct waiter *w, unsigned n)
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
void treq_init(struct treq *t, struct waiter *w, int fd, int op,
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

ssize_t treq_len(const struct treq *t)
{
	size_t n = 0;

	for (int i = 0; i < t->req.iovcnt; i++)
		n += t->iov[i].iov_len;
	return (ssize_t)n;
}

/* Submit @n requests in one call and wait for them all. */
void run_reqs(const struct pc_io_ops *ops, struct pc_io *io, struct treq *t,
	      unsigned n)
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
ssize_t do_one(const struct pc_io_ops *ops, struct pc_io *io, int fd, int op,
	       off_t off, void *buf, size_t len, int iovcnt, bool dontneed)
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

void *xalloc(size_t len)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, PG, len), 0);
	memset(p, 0xEE, len);
	return p;
}

bool pattern_ok(const void *buf, size_t len, uint64_t seed, uint64_t off)
{
	unsigned char *want = malloc(len ? len : 1);
	bool ok;

	assert_non_null(want);
	tu_pattern(want, len, seed, off);
	ok = memcmp(buf, want, len) == 0;
	free(want);
	return ok;
}

bool dir_direct;

void io_probe_direct(void)
{
	int fd = open(tu_path("probe"), O_RDWR | O_CREAT | O_DIRECT, 0644);

	dir_direct = fd >= 0;
	if (fd >= 0)
		close(fd);
	else
		printf("%s refuses O_DIRECT (%s): buffered files there\n",
		       tu_dir(), strerror(errno));
}

/* A fresh file in tu_dir(), O_DIRECT where the filesystem allows it. */
int open_file(const char *name)
{
	int fd = open(tu_path(name), O_RDWR | O_CREAT | O_TRUNC |
		      (dir_direct ? O_DIRECT : 0), 0644);

	assert_true(fd >= 0);
	return fd;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* The backends under test.                                            */

int be_setup(void **state)
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

int be_teardown(void **state)
{
	struct backend *b = *state;

	if (b->io)
		b->ops->destroy(b->io);
	b->io = NULL;
	return 0;
}

struct backend *be_get(void **state)
{
	struct backend *b = *state;

	if (!b->io)
		skip();
	return b;
}
