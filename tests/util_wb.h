/*
 * util_wb.h - what the writeback tests share (test_writeback.c,
 * test_throttle.c, test_bdi.c, test_errseq.c, test_sync.c,
 * test_backing_extend.c): counters read, caches and files made, patterns
 * written and checked on the disk, and the fault backend's write rules.
 * Inline, so that each test uses what it needs.
 *
 * Checks are made on counters, not on timings: a slow or busy machine may
 * make a case slower, never wrong.  The few time limits are generous upper
 * bounds (a stall is minutes, not seconds) or lower bounds that only a bug
 * can break.  The fault backend (io=fault) slows writes down (a slow
 * device) or fails them (EIO, ENOSPC, short writes); it runs requests in
 * the submitting thread, so with it one flusher has one request in flight.
 */
#ifndef TESTS_UTIL_WB_H
#define TESTS_UTIL_WB_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "io.h"
#include "util.h"

#define PAGE 4096
#define MIB (1024 * 1024)

static inline uint64_t vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	assert_int_equal(pc_vmstat(c, name, &v), 0);
	return v;
}

/* Thread-safe: no assert. */
static inline uint64_t vm_t(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	pc_vmstat(c, name, &v);
	return v;
}

static inline pc_cache *mk(const char *cfg)
{
	pc_cache *c = NULL;

	assert_int_equal(pc_cache_create(&c, cfg), 0);
	return c;
}

static inline pc_file *op(pc_cache *c, const char *path, int flags)
{
	pc_file *f = NULL;

	assert_int_equal(pc_open(c, path, flags, 0644, &f), 0);
	return f;
}

static inline uint64_t now_ms(void)
{
	return pc__now_ns() / 1000000;
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll @name until it is <= @want (or >= when @up), at most @ms. */
static inline bool wait_vm(pc_cache *c, const char *name, uint64_t want,
			   bool up, unsigned ms)
{
	uint64_t end = now_ms() + ms;

	for (;;) {
		uint64_t v = vm_t(c, name);

		if (up ? v >= want : v <= want)
			return true;
		if (now_ms() > end)
			return false;
		sleep_ms(5);
	}
}

/* Write @len bytes of pattern @seed at @off in 4 KiB pwrites. */
static inline void write_pat(pc_file *f, uint64_t off, size_t len,
			     uint64_t seed)
{
	unsigned char buf[PAGE];

	for (size_t done = 0; done < len; done += PAGE) {
		size_t n = pc_min((size_t)PAGE, len - done);

		tu_pattern(buf, n, seed, off + done);
		assert_int_equal(pc_pwrite(f, buf, n, (off_t)(off + done)),
				 (ssize_t)n);
	}
}

/* The file on disk, read with read(2), equals the pattern. */
static inline void check_disk(const char *path, uint64_t off, size_t len,
			      uint64_t seed)
{
	unsigned char *want = malloc(len), *got = malloc(len);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	tu_pattern(want, len, seed, off);
	assert_int_equal(pread(fd, got, len, (off_t)off), (ssize_t)len);
	assert_memory_equal(got, want, len);
	close(fd);
	free(want);
	free(got);
}

static inline struct pc_io_fault write_rule(int error, unsigned delay_us,
					    int count)
{
	struct pc_io_fault r = { .op = PC_IO_WRITE, .fd = -1, .off_lo = 0,
				 .off_hi = 0, .error = error,
				 .delay_us = delay_us, .count = count };
	return r;
}

#endif /* TESTS_UTIL_WB_H */
