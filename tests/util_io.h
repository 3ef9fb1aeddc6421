/*
 * util_io.h - what the I/O backend tests share (test_io.c, test_io_fault.c;
 * util_io.c): requests that count their end_io calls (exactly one is
 * expected) and waiting for them, 4 KiB-aligned buffers and files of
 * tu_dir() opened with O_DIRECT where the filesystem allows it, and the
 * backends under test as cmocka states (BE: one case on one backend).
 */
#ifndef TESTS_UTIL_IO_H
#define TESTS_UTIL_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"
#include "io.h"
#include "util.h"

#define PG 4096
#define WAIT_S 20		/* longest wait for completions */

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

void waiter_init(struct waiter *w);
void waiter_fini(struct waiter *w);
/* Wait until @n requests in all have ended; fails the test on timeout. */
void waiter_wait(struct waiter *w, unsigned n);
/* A treq's end_io: counts the call, wakes the waiter. */
void treq_end(struct pc_io_req *req);
/* @len bytes at @buf as @iovcnt iovecs: whole pages each, the last the rest. */
void treq_init(struct treq *t, struct waiter *w, int fd, int op,
	       off_t off, void *buf, size_t len, int iovcnt);
ssize_t treq_len(const struct treq *t);
/* Submit @n requests in one call and wait for them all. */
void run_reqs(const struct pc_io_ops *ops, struct pc_io *io, struct treq *t,
	      unsigned n);
/* One request, waited for; returns its res. */
ssize_t do_one(const struct pc_io_ops *ops, struct pc_io *io, int fd, int op,
	       off_t off, void *buf, size_t len, int iovcnt, bool dontneed);
/* @len bytes, 4 KiB aligned, filled with 0xEE. */
void *xalloc(size_t len);
bool pattern_ok(const void *buf, size_t len, uint64_t seed, uint64_t off);

/* tu_dir() takes O_DIRECT: set by main (io_probe_direct). */
extern bool dir_direct;
/* Set dir_direct, saying so when tu_dir() refuses O_DIRECT. */
void io_probe_direct(void);
/* A fresh file in tu_dir(), O_DIRECT where the filesystem allows it. */
int open_file(const char *name);
double now_s(void);

/* A backend under test: a cmocka state, set up by be_setup. */
struct backend {
	const char *name;
	unsigned depth;
	const struct pc_io_ops *ops;
	struct pc_io *io;	/* NULL: not available here, skip */
};

int be_setup(void **state);
int be_teardown(void **state);
/* The state's backend; skips the case where it is not available. */
struct backend *be_get(void **state);

#define BE(fn, be) \
	{ #fn "/" #be, fn, be_setup, be_teardown, &be_##be }

#endif /* TESTS_UTIL_IO_H */
