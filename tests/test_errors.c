/*
 * test_errors.c - bad input gets its documented errno and never a crash;
 * I/O errors from the fault-injecting backend: a failed read returns -EIO
 * and leaves no page uptodate; a write that fails part way is short, as
 * pwrite(2), and the rest fails on the next call; a failed writeback is returned by the next
 * fsync of every open file, once, and the data stays dirty until a later
 * fsync writes it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "io.h"
#include "util.h"

static void test_bad_config(void **state)
{
	pc_cache *c = (pc_cache *)0x1;

	(void)state;
	assert_int_equal(pc_cache_create(NULL, NULL), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "bogus=1"), -EINVAL);
	assert_null(c);
	assert_int_equal(pc_cache_create(&c, "memory"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "memory=12Q"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "memory=-5M"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "nodes=0"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "reclaim.batch_remove=maybe"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "reclaim.contention_backoff=nap"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "io=floppy"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "writeback.dirty_ratio=101"), -EINVAL);
	/* A budget too small for its nodes is refused with a message. */
	assert_int_equal(pc_cache_create(&c, "memory=64K nodes=2"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "memory=4K"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=4 "
					 "reclaim.batch_remove=sorted "
					 "reclaim.contention_backoff=blunt"), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_destroy(NULL), -EINVAL);
}

static void test_bad_calls(void **state)
{
	const char *path = tu_path("bad");
	char buf[16];
	pc_cache *c;
	pc_file *f, *ro, *wo;
	pc_page *p;
	uint64_t v;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(NULL, path, O_RDWR, 0, &f), -EINVAL);
	assert_int_equal(pc_open(c, NULL, O_RDWR, 0, &f), -EINVAL);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, NULL), -EINVAL);
	assert_int_equal(pc_open(c, path, O_RDWR | O_DIRECTORY, 0, &f), -EINVAL);
	assert_int_equal(pc_open(c, path, O_ACCMODE, 0, &f), -EINVAL);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), -ENOENT);
	assert_int_equal(pc_open(c, tu_dir(), O_RDONLY, 0, &f), -EISDIR);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT, 0644, &f), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_EXCL, 0644, &ro), -EEXIST);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &ro), 0);
	assert_int_equal(pc_open(c, path, O_WRONLY, 0, &wo), 0);
	{	/* accepted, and nothing changes (the header says why) */
		pc_file *g;

		assert_int_equal(pc_open(c, path, O_RDONLY | O_CLOEXEC |
					 O_NOATIME, 0, &g), 0);
		assert_int_equal(pc_pread(g, buf, 1, 0), 0);
		assert_int_equal(pc_close(g), 0);
	}

	assert_int_equal(pc_pread(NULL, buf, 1, 0), -EINVAL);
	assert_int_equal(pc_pread(f, NULL, 1, 0), -EINVAL);
	assert_int_equal(pc_pread(f, buf, 1, -1), -EINVAL);
	assert_int_equal(pc_pread(f, buf, (size_t)SSIZE_MAX + 1, 0), -EINVAL);
	assert_int_equal(pc_pwrite(NULL, buf, 1, 0), -EINVAL);
	assert_int_equal(pc_pwrite(f, NULL, 1, 0), -EINVAL);
	assert_int_equal(pc_pwrite(f, buf, 1, -4096), -EINVAL);
	assert_int_equal(pc_pwrite(f, buf, (size_t)SSIZE_MAX + 1, 0), -EINVAL);
	assert_int_equal(pc_pwrite(f, buf, 1, INT64_MAX - 10), -EFBIG);
	assert_int_equal(pc_pwrite(ro, "x", 1, 0), -EBADF);
	assert_int_equal(pc_ftruncate(ro, 0), -EBADF);
	assert_int_equal(pc_pread(wo, buf, 1, 0), -EBADF);
	assert_int_equal(pc_get_page(wo, 0, 0, &p), -EBADF);
	assert_int_equal(pc_get_page(NULL, 0, 0, &p), -EINVAL);
	assert_int_equal(pc_get_page(f, 0, 0, NULL), -EINVAL);
	assert_int_equal(pc_ftruncate(NULL, 0), -EINVAL);
	assert_int_equal(pc_ftruncate(f, -1), -EINVAL);
	assert_int_equal(pc_fsync(NULL), -EINVAL);
	assert_int_equal(pc_fdatasync(NULL), -EINVAL);
	assert_int_equal(pc_size(NULL), -EINVAL);
	assert_int_equal(pc_close(NULL), -EINVAL);
	assert_int_equal(pc_fadvise(NULL, 0, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, -1, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, 0, -1, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, 0, 0, 99), -EINVAL);
	assert_int_equal(pc_unlink(NULL, path), -EINVAL);
	assert_int_equal(pc_unlink(c, NULL), -EINVAL);
	assert_int_equal(pc_unlink(c, tu_path("nonexistent")), -ENOENT);
	assert_int_equal(pc_vmstat(NULL, "pgpgin", &v), -EINVAL);
	assert_int_equal(pc_vmstat(c, NULL, &v), -EINVAL);
	assert_int_equal(pc_vmstat(c, "pgpgin", NULL), -EINVAL);
	assert_int_equal(pc_vmstat(c, "no_such_counter", &v), -ENOENT);
	assert_int_equal(pc_vmstat(c, "node7.pgpgin", &v), -ENOENT);
	assert_int_equal(pc_vmstat(c, "node0.pgpgin", &v), 0);
	assert_int_equal(pc_thread_set_node(c, 1), -EINVAL);
	assert_int_equal(pc_thread_set_node(NULL, 0), -EINVAL);
	assert_null(pc_page_data(NULL));
	pc_put_page(NULL);
	assert_non_null(pc_vmstat_name(0));
	assert_null(pc_vmstat_name(100000));
	assert_int_equal(pc_pread(f, buf, 0, 0), 0);
	assert_int_equal(pc_pwrite(f, buf, 0, 0), 0);
	assert_int_equal(pc_pread(f, buf, 1, 1 << 20), 0);	/* past EOF */

	assert_int_equal(pc_close(ro), 0);
	assert_int_equal(pc_close(wo), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static pc_cache *fault_cache(const char *extra)
{
	char cfg[128];
	pc_cache *c;

	snprintf(cfg, sizeof(cfg), "memory=512K io=fault %s", extra);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	return c;
}

static void write_file(const char *path, size_t len, uint64_t seed)
{
	unsigned char *buf = malloc(len);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	tu_pattern(buf, len, seed, 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

static void test_read_error(void **state)
{
	const char *path = tu_path("readerr");
	struct pc_io_fault rule = { .op = PC_IO_READ, .fd = -1, .off_lo = 8192,
				    .off_hi = 12288, .error = EIO, .count = -1 };
	unsigned char buf[16384], want[16384];
	pc_cache *c = fault_cache("");
	pc_file *f;
	pc_page *p;

	(void)state;
	write_file(path, sizeof(buf), 9);
	tu_pattern(want, sizeof(want), 9, 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_pread(f, buf, 4096, 8192), -EIO);
	assert_int_equal(pc_get_page(f, 2, 0, &p), -EIO);
	/* A read that reaches the bad page returns what it got before it. */
	assert_int_equal(pc_pread(f, buf, sizeof(buf), 0), 8192);
	assert_memory_equal(buf, want, 8192);
	/* No page of the failed range became uptodate. */
	{
		struct pc_page *pg = pc__find_get_page(f->mapping, 2);

		if (pg) {
			assert_false(page_test(pg, PG_uptodate));
			pc__put_page(c, pg);
		}
	}
	assert_true(pc__io_fault_hits(pc__local(c)->io) >= 2);
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_memory_equal(buf, want, sizeof(buf));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * A write that meets an error part way is short, as pwrite(2): the bytes
 * before it are written and counted, and the rest fails on the next call.
 * The partial last page of this write cannot be read (its old bytes are
 * needed around the new ones).
 */
static void test_short_write(void **state)
{
	const char *path = tu_path("shortwrite");
	struct pc_io_fault rule = { .op = PC_IO_READ, .fd = -1, .off_lo = 8192,
				    .off_hi = 12288, .error = EIO, .count = -1 };
	unsigned char buf[16384], want[16384], data[4096 + 100];
	pc_cache *c = fault_cache("");
	pc_file *f;

	(void)state;
	write_file(path, sizeof(want), 21);
	tu_pattern(want, sizeof(want), 21, 0);
	tu_pattern(data, sizeof(data), 22, 0);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	/* Page 1 whole, then 100 bytes into page 2, whose read fails. */
	assert_int_equal(pc_pwrite(f, data, sizeof(data), 4096), 4096);
	assert_int_equal(pc_pwrite(f, data + 4096, 100, 8192), -EIO);
	assert_int_equal(pc_size(f), (int64_t)sizeof(want));
	memcpy(want + 4096, data, 4096);
	assert_int_equal(pc_pread(f, buf, 8192, 0), 8192);
	assert_memory_equal(buf, want, 8192);
	/* The device mended: the rest goes in, and all of it to the disk. */
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc_pwrite(f, data + 4096, 100, 8192), 100);
	memcpy(want + 8192, data + 4096, 100);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	{
		int fd = open(path, O_RDONLY);

		assert_int_equal(pread(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
		assert_memory_equal(buf, want, sizeof(buf));
		close(fd);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void writeback_error_case(int err, bool short_io)
{
	const char *path = tu_path(short_io ? "wberr-short" : "wberr");
	struct pc_io_fault rule = { .op = PC_IO_WRITE, .fd = -1, .off_lo = 0,
				    .off_hi = INT64_MAX, .error = err,
				    .short_io = short_io, .count = 1 };
	static unsigned char buf[65536], back[65536];
	pc_cache *c = fault_cache("");
	pc_file *a, *b, *late;
	uint64_t dirty;
	int fd;

	tu_pattern(buf, sizeof(buf), 77, 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &a), 0);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &b), 0);
	assert_int_equal(pc_pwrite(a, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	/* The one request of this fsync fails. */
	assert_int_equal(pc_fsync(a), -err);
	/* The data was not dropped: still dirty, still readable. */
	assert_int_equal(pc_vmstat(c, "nr_dirty", &dirty), 0);
	assert_int_equal(dirty, 16);
	assert_int_equal(pc_pread(a, back, sizeof(back), 0), (ssize_t)sizeof(back));
	assert_memory_equal(back, buf, sizeof(buf));
	/* Opened after the error was seen: not reported to it. */
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &late), 0);
	/* Every handle open at the time sees it once; the retry succeeds. */
	assert_int_equal(pc_fdatasync(b), -err);
	assert_int_equal(pc_fsync(b), 0);
	assert_int_equal(pc_fsync(a), 0);
	assert_int_equal(pc_fsync(late), 0);
	assert_int_equal(pc_vmstat(c, "nr_dirty", &dirty), 0);
	assert_int_equal(dirty, 0);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, back, sizeof(back)), (ssize_t)sizeof(back));
	close(fd);
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(pc_close(late), 0);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_close(a), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* A device that keeps failing: each fsync retries, and fails again. */
static void test_writeback_persistent(void **state)
{
	const char *path = tu_path("wbpersist");
	struct pc_io_fault rule = { .op = PC_IO_WRITE, .fd = -1,
				    .off_hi = INT64_MAX, .error = EIO, .count = -1 };
	pc_cache *c = fault_cache("");
	uint64_t dirty;
	pc_file *a;

	(void)state;
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &a), 0);
	assert_int_equal(pc_pwrite(a, "data", 4, 0), 4);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	assert_int_equal(pc_fsync(a), -EIO);
	assert_int_equal(pc_fsync(a), -EIO);
	assert_int_equal(pc_vmstat(c, "nr_dirty", &dirty), 0);
	assert_int_equal(dirty, 1);
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc_fsync(a), 0);
	assert_int_equal(pc_close(a), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_writeback_eio(void **state)
{
	(void)state;
	writeback_error_case(EIO, false);
}

static void test_writeback_enospc(void **state)
{
	(void)state;
	writeback_error_case(ENOSPC, false);
}

static void test_writeback_short(void **state)
{
	(void)state;
	writeback_error_case(EIO, true);
}

/* An error at writeback reaches close when fsync never came. */
static void test_error_at_close(void **state)
{
	const char *path = tu_path("closeerr");
	struct pc_io_fault rule = { .op = PC_IO_WRITE, .fd = -1, .off_hi = INT64_MAX,
				    .error = EIO, .count = 1 };
	pc_cache *c = fault_cache("");
	pc_file *a, *b;

	(void)state;
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &a), 0);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &b), 0);
	assert_int_equal(pc_pwrite(a, "hello", 5, 0), 5);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	assert_int_equal(pc_fsync(b), -EIO);
	assert_int_equal(pc_close(a), -EIO);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	{
		char back[8] = { 0 };
		int fd = open(path, O_RDONLY);

		assert_int_equal(read(fd, back, 8), 5);	/* destroy wrote it */
		assert_string_equal(back, "hello");
		close(fd);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_bad_calls),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_writeback_eio),
		cmocka_unit_test(test_writeback_enospc),
		cmocka_unit_test(test_writeback_short),
		cmocka_unit_test(test_short_write),
		cmocka_unit_test(test_writeback_persistent),
		cmocka_unit_test(test_error_at_close),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
