/*
 * test_io_fault.c - the fault-injecting backend's rules (io_fault.c): EIO
 * on reads, ENOSPC on writes, short I/O, rules that apply a number of
 * times, hits, delays, and the rule API on backends that have none.
 *
 * The fault backend runs each request the sync backend's way, in the
 * submitting thread, after the first rule that matches it.  Files are
 * opened with O_DIRECT unless the test directory is on tmpfs; each
 * request's end_io counts its calls (tests/util_io.c): exactly one is
 * expected.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "util_io.h"

static struct backend be_fault = { .name = "fault", .depth = 8 };

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		BE(test_fault_eio_read, fault),
		BE(test_fault_enospc_write, fault),
		BE(test_fault_short, fault),
		BE(test_fault_count, fault),
		BE(test_fault_delay, fault),
		BE(test_fault_api, fault),
	};

	io_probe_direct();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
