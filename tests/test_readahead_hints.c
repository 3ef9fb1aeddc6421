/*
 * test_readahead_hints.c - what readahead is told besides the access
 * pattern: the file's holes (SEEK_DATA) and the reader's fadvise
 * (readahead.c, the read path of filemap.c).
 *
 *   holes       a sparse file of 1 GiB is read without one device read
 *               (pgpgin stays put, and a fault rule failing every read
 *               would show), a file of data and holes reads back right;
 *   fadvise     each advice moves the counters and residency it must:
 *               SEQUENTIAL, RANDOM, NORMAL, WILLNEED, DONTNEED (pinned and
 *               dirty pages too), NOREUSE (never activated; dropped behind
 *               once memory is tight).
 *
 * Counters and residency only, no timings.  Tests look inside the cache
 * (internal.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "inode.h"
#include "io.h"
#include "tctx.h"
#include "util.h"
#include "util_inside.h"
#include "vmscan.h"

#define PG 4096
#define KB 1024

/* ------------------------------------------------------------------ */
/* Holes.                                                              */

static void test_sparse_no_device_reads(void **state)
{
	const char *path = tu_path("sparse1g");
	const uint64_t size = 1ull << 30;
	struct pc_io_fault rule = { .op = PC_IO_READ, .fd = -1, .error = EIO,
				    .count = -1 };
	unsigned char *buf = malloc(128 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_sparse(path, size);
	c = tu_cache("memory=16M io=fault");
	/* Any read that reached the device would fail with EIO. */
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	f = tu_open_ro(c, path);
	for (uint64_t off = 0; off < size; off += 128 * KB) {
		assert_int_equal(pc_pread(f, buf, 128 * KB, (off_t)off), 128 * KB);
		if (off % (64 << 20) == 0)
			for (unsigned i = 0; i < 128 * KB; i += 512)
				assert_int_equal(buf[i], 0);
	}
	assert_int_equal(tu_vm(c, "pgpgin"), 0);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 0);
	/* No latency to hide: windows over holes stay small. */
	assert_true(f->ra.holes);
	assert_true(f->ra.size <= 32);
	assert_int_equal(tu_vm(c, "pgpgin_holes"), size / KB);
	assert_int_equal(tu_vm(c, "ra_pages"), size / PG);
	/* A stream: it recycled its own frames, reclaim hardly ran. */
	assert_true(tu_vm(c, "dropbehind") >= size / PG / 2);
	assert_int_equal(tu_vm(c, "pgsteal_direct"), 0);
	printf("  1 GiB sparse: pgpgin_holes %llu KiB, dropbehind %llu, "
	       "pgsteal_kswapd %llu\n", (unsigned long long)tu_vm(c, "pgpgin_holes"),
	       (unsigned long long)tu_vm(c, "dropbehind"),
	       (unsigned long long)tu_vm(c, "pgsteal_kswapd"));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* Data and holes in one file: only the data pages are read. */
static void test_data_and_holes(void **state)
{
	static const struct { uint64_t off, len; } data[] = {
		{ 1 << 20, 12 * KB },			/* three pages */
		{ (3 << 20) + 4 * KB, 1 << 20 },	/* 256 pages */
		{ (6 << 20) + 100, 5000 },		/* unaligned: 2 pages */
	};
	const char *path = tu_path("holes");
	const uint64_t size = (8 << 20) + 1000;
	unsigned char *model = calloc(1, size), *buf = malloc(size);
	uint64_t data_pages = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	for (unsigned i = 0; i < 3; i++) {
		tu_pattern(model + data[i].off, data[i].len, 7, data[i].off);
		assert_int_equal(pwrite(fd, model + data[i].off, data[i].len,
					(off_t)data[i].off), (ssize_t)data[i].len);
		data_pages += (data[i].off + data[i].len + PG - 1) / PG -
			      data[i].off / PG;
	}
	close(fd);
	c = tu_cache("memory=32M");
	f = tu_open_ro(c, path);
	for (uint64_t off = 0; off < size; off += 4000) {
		size_t n = pc_min(4000, size - off);

		assert_int_equal(pc_pread(f, buf + off, n, (off_t)off), (ssize_t)n);
	}
	assert_memory_equal(buf, model, size);
	/*
	 * Filesystems allocate in blocks, and some round a data extent out;
	 * the data pages are read, the holes (almost all) are not.
	 */
	printf("  data and holes: pgpgin %llu KiB (data pages %llu), "
	       "pgpgin_holes %llu KiB\n", (unsigned long long)tu_vm(c, "pgpgin"),
	       (unsigned long long)data_pages,
	       (unsigned long long)tu_vm(c, "pgpgin_holes"));
	assert_true(tu_vm(c, "pgpgin") >= data_pages * 4);
	assert_true(tu_vm(c, "pgpgin") <= (data_pages + 16) * 4);
	assert_int_equal(tu_vm(c, "pgpgin") + tu_vm(c, "pgpgin_holes"),
			 (size + PG - 1) / PG * 4);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(model);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* fadvise.                                                            */

static void test_fadvise_sequential_random(void **state)
{
	const char *path = tu_path("advice");
	unsigned char buf[PG];
	unsigned most = 0;
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, 2048, 8);
	c = tu_cache("memory=32M readahead.max=512K");
	f = tu_open_ro(c, path);
	assert_int_equal(pc_fadvise(f, 0, 0, 12345), -EINVAL);
	assert_int_equal(pc_fadvise(NULL, 0, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, -1, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, 0, -1, POSIX_FADV_NORMAL), -EINVAL);

	/* SEQUENTIAL: windows grow to twice readahead.max. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL), 0);
	for (uint64_t i = 0; i < 1024; i++) {
		tu_read_check(f, buf, PG, i * PG, 8);
		most = pc_max(most, f->ra.size);
	}
	assert_int_equal(most, 256);

	/* RANDOM: a sequential reader gets what it asks and no more. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_RANDOM), 0);
	{
		uint64_t pages = tu_vm(c, "ra_pages"), async = tu_vm(c, "ra_async");
		uint64_t from = f->ra.start + f->ra.size + 1;

		for (uint64_t i = from; i < from + 64; i++)
			tu_read_check(f, buf, PG, i * PG, 8);
		assert_int_equal(tu_vm(c, "ra_pages") - pages, 64);
		assert_int_equal(tu_vm(c, "ra_async"), async);
	}
	/* NORMAL: readahead again. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NORMAL), 0);
	{
		uint64_t pages = tu_vm(c, "ra_pages");

		tu_read_check(f, buf, PG, 1900 * PG, 8);
		tu_read_check(f, buf, PG, 1901 * PG, 8);
		assert_true(tu_vm(c, "ra_pages") - pages > 2);
	}
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_fadvise_willneed(void **state)
{
	const char *path = tu_path("willneed");
	unsigned char *buf = malloc(1 << 20);
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, 1024, 9);
	c = tu_cache("memory=32M");
	f = tu_open_ro(c, path);
	assert_int_equal(pc_fadvise(f, 1 << 20, 1 << 20, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(tu_vm(c, "ra_pages"), 256);
	for (uint64_t i = 256; i < 512; i++)
		assert_true(tu_resident(f, i));
	assert_false(tu_resident(f, 255));
	assert_false(tu_resident(f, 512));
	/* Reading it now misses nothing (it may wait for the I/O). */
	tu_read_check(f, buf, 1 << 20, 1 << 20, 9);
	assert_int_equal(tu_vm(c, "pgfault_miss"), 0);
	assert_int_equal(tu_vm(c, "pgpgin"), 1024);
	/* Past end of file, or a write-only handle: nothing. */
	assert_int_equal(pc_fadvise(f, 8 << 20, 0, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(tu_vm(c, "ra_pages"), 256);
	/* len 0: to end of file, at most half the budget (4096 pages). */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(tu_vm(c, "ra_pages"), 1024);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

static void test_fadvise_dontneed(void **state)
{
	const char *path = tu_path("dontneed");
	unsigned char *buf = malloc(1 << 20);
	uint64_t files, out;
	struct pc_page *pin;
	pc_page *pinned;
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, 1024, 10);
	c = tu_cache("memory=32M reclaim.kswapd=off");
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	tu_read_check(f, buf, 1 << 20, 0, 10);
	tu_read_check(f, buf, 1 << 20, 0, 10);	/* twice: active */
	pc__lru_drain(c, pc__tctx(c));
	files = tu_vm(c, "nr_file_pages");
	assert_true(files >= 256);
	/* One page pinned: it must stay. */
	assert_int_equal(pc_get_page(f, 100, 0, &pinned), 0);
	assert_int_equal(pc_fadvise(f, 0, 1 << 20, POSIX_FADV_DONTNEED), 0);
	for (uint64_t i = 0; i < 256; i++)
		assert_true(tu_resident(f, i) == (i == 100));
	assert_int_equal(tu_vm(c, "nr_file_pages"), files - 255);
	pin = (struct pc_page *)pinned;
	assert_false(page_test(pin, PG_active));	/* deactivated instead */
	pc_put_page(pinned);
	/* Reading it again reads it from disk. */
	out = tu_vm(c, "pgpgin");
	tu_read_check(f, buf, 1 << 20, 0, 10);
	assert_true(tu_vm(c, "pgpgin") - out >= 1020);

	/* Dirty pages: writeback starts, then they can be dropped. */
	tu_pattern(buf, 256 * KB, 10, 2 << 20);
	assert_int_equal(pc_pwrite(f, buf, 256 * KB, 2 << 20), 256 * KB);
	assert_int_equal(tu_vm(c, "nr_dirty"), 64);
	out = tu_vm(c, "pgpgout");
	assert_int_equal(pc_fadvise(f, 2 << 20, 256 * KB, POSIX_FADV_DONTNEED), 0);
	for (int i = 0; i < 500 && tu_vm(c, "nr_dirty") + tu_vm(c, "nr_writeback"); i++)
		tu_sleep_us(10000);
	assert_int_equal(tu_vm(c, "nr_dirty"), 0);
	assert_true(tu_vm(c, "pgpgout") - out >= 256);
	assert_int_equal(pc_fadvise(f, 2 << 20, 256 * KB, POSIX_FADV_DONTNEED), 0);
	for (uint64_t i = 512; i < 576; i++)
		assert_false(tu_resident(f, i));
	/* the data made it to disk */
	tu_read_check(f, buf, 256 * KB, 2 << 20, 10);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* NOREUSE: pages read through the handle are never activated, and go. */
static void test_fadvise_noreuse(void **state)
{
	const char *path = tu_path("noreuse");
	unsigned char *buf = malloc(64 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, 1024, 11);
	for (int noreuse = 0; noreuse < 2; noreuse++) {
		c = tu_cache("memory=32M reclaim.kswapd=off");
		f = tu_open_ro(c, path);
		if (noreuse)
			assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NOREUSE), 0);
		for (int pass = 0; pass < 2; pass++)
			for (uint64_t off = 0; off < 4 << 20; off += 64 * KB)
				tu_read_check(f, buf, 64 * KB, off, 11);
		pc__lru_drain(c, pc__tctx(c));
		printf("  %s: pgactivate %llu, active %llu, cached %llu\n",
		       noreuse ? "NOREUSE" : "NORMAL",
		       (unsigned long long)tu_vm(c, "pgactivate"),
		       (unsigned long long)tu_vm(c, "nr_active_file"),
		       (unsigned long long)tu_vm(c, "nr_file_pages"));
		if (noreuse) {
			assert_int_equal(tu_vm(c, "pgactivate"), 0);
			/* Memory is not tight: they stay, inactive. */
			assert_int_equal(tu_vm(c, "nr_file_pages"), 1024);
		} else {
			assert_true(tu_vm(c, "pgactivate") >= 1000);
		}
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	/*
	 * NOREUSE with less memory than the file: once memory is tight the
	 * pages go as they are consumed (the ones kept before are reclaimed);
	 * with cache.stickiness=always, at once.
	 */
	for (int always = 0; always < 2; always++) {
		c = tu_cache(always ? "memory=2M cache.stickiness=always" : "memory=2M");
		f = tu_open_ro(c, path);
		assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NOREUSE), 0);
		for (uint64_t off = 0; off < 4 << 20; off += 64 * KB)
			tu_read_check(f, buf, 64 * KB, off, 11);
		assert_int_equal(pc_close(f), 0);
		printf("  NOREUSE, 2M budget%s: dropbehind %llu, reclaimed %llu\n",
		       always ? ", stickiness=always" : "",
		       (unsigned long long)tu_vm(c, "dropbehind"),
		       (unsigned long long)(tu_vm(c, "pgsteal_kswapd") +
					    tu_vm(c, "pgsteal_direct")));
		assert_int_equal(tu_vm(c, "pgactivate"), 0);
		if (always)
			assert_int_equal(tu_vm(c, "dropbehind"), 1024);
		else
			assert_true(tu_vm(c, "dropbehind") >= 128);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_no_device_reads),
		cmocka_unit_test(test_data_and_holes),
		cmocka_unit_test(test_fadvise_sequential_random),
		cmocka_unit_test(test_fadvise_willneed),
		cmocka_unit_test(test_fadvise_dontneed),
		cmocka_unit_test(test_fadvise_noreuse),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
