/*
 * test_errseq.c - errors on writeback (src/errseq.c, and the completion
 * that keeps failed pages dirty, src/writeback_io.c): a flusher's error
 * reaches every open file once, one failed request of many keeps only its
 * pages dirty, O_SYNC and O_DSYNC writes return the error, and a real
 * ENOSPC (a small file system, tmpfs and ext4) is returned by every fsync
 * until space is freed.  util_wb.h has the helpers.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "inode.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "util_wb.h"

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* An error of the flusher's (no fsync running) reaches every handle. */
static void test_background_error(void **state)
{
	const char *path = tu_path("bgerr");
	pc_cache *c = mk("memory=16M io=fault writeback.dirty_expire_ms=50 "
			 "writeback.interval_ms=20");
	struct pc_io_fault fail = write_rule(EIO, 0, 1);
	pc_file *a, *b, *d, *late;

	(void)state;
	a = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	b = op(c, path, O_RDWR);
	d = op(c, path, O_RDONLY);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	write_pat(a, 0, 8 * PAGE, 14);
	/* The flusher's expiry pass meets the error. */
	assert_true(wait_vm(c, "writeback_errors", 1, true, 20000));
	/* Then writes the pages again, after its back-off. */
	assert_true(wait_vm(c, "nr_dirty", 0, false, 20000));
	assert_true(vm(c, "writeback_backoff") > 0);
	assert_int_equal(pc_fsync(a), -EIO);
	assert_int_equal(pc_fsync(a), 0);
	/* Seen once by a: a handle opened now is not told. */
	late = op(c, path, O_RDWR);
	assert_int_equal(pc_fsync(late), 0);
	/* b hears of it at fsync, once; d (read-only) at close. */
	assert_int_equal(pc_fdatasync(b), -EIO);
	assert_int_equal(pc_fdatasync(b), 0);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_close(d), -EIO);
	assert_int_equal(pc_close(late), 0);
	assert_int_equal(pc_close(a), 0);
	check_disk(path, 0, 8 * PAGE, 14);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* One failed request of many: its pages, and only they, stay dirty. */
static void test_partial_failure(void **state)
{
	const char *path = tu_path("partial");
	pc_cache *c = mk("memory=64M io=fault");
	struct pc_io_fault fail = { .op = PC_IO_WRITE, .fd = -1,
				    .off_lo = MIB, .off_hi = 2 * MIB,
				    .error = ENOSPC, .short_io = true,
				    .count = 1 };
	pc_file *f;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 4 * MIB, 15);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	assert_int_equal(pc_fsync(f), -ENOSPC);
	assert_int_equal(vm(c, "nr_dirty"), 256);
	assert_int_equal(atomic_load(&f->mapping->nr_dirty), 256);
	assert_int_equal(vm(c, "pgpgout"), 3 * 1024);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 0, 4 * MIB, 15);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* O_SYNC and O_DSYNC writes return the error; the data stays dirty. */
static void test_sync_open_errors(void **state)
{
	static const int modes[] = { O_SYNC, O_DSYNC };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		const char *path = tu_path(i ? "dsync" : "osync");
		pc_cache *c = mk("memory=16M io=fault");
		struct pc_io_fault fail = write_rule(EIO, 0, 1);
		unsigned char buf[PAGE];
		pc_file *f, *other;
		uint64_t out0;

		f = op(c, path, O_RDWR | O_CREAT | O_TRUNC | modes[i]);
		other = op(c, path, O_RDONLY);
		/* Written through: on disk when pwrite returns. */
		write_pat(f, 0, 2 * PAGE, 16);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		check_disk(path, 0, 2 * PAGE, 16);
		assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
		tu_pattern(buf, PAGE, 17, 2 * PAGE);
		assert_int_equal(pc_pwrite(f, buf, PAGE, 2 * PAGE), -EIO);
		assert_int_equal(vm(c, "nr_dirty"), 1);
		/* The next sync write succeeds; the failed page is fsync's. */
		out0 = vm(c, "pgpgout");
		tu_pattern(buf, PAGE, 17, 3 * PAGE);
		assert_int_equal(pc_pwrite(f, buf, PAGE, 3 * PAGE), PAGE);
		assert_int_equal(vm(c, "pgpgout") - out0, 4);
		assert_int_equal(vm(c, "nr_dirty"), 1);
		assert_int_equal(pc_fsync(f), 0);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		check_disk(path, 2 * PAGE, 2 * PAGE, 17);
		assert_int_equal(pc_close(other), -EIO);
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
}

/*
 * A real ENOSPC: a small filesystem, mostly full.  fsync returns -ENOSPC
 * (not 0) every time until space is freed; then it writes the data.
 */
static bool try_mount(const char *dir, const char *img, bool ext4)
{
	char cmd[4096];

	mkdir(dir, 0755);
	if (!ext4)
		return mount("tmpfs", dir, "tmpfs", 0, "size=2m") == 0;
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 8M '%s' && mkfs.ext4 -q -F '%s' >/dev/null 2>&1 && "
		 "mount -o loop '%s' '%s' >/dev/null 2>&1", img, img, img, dir);
	return system(cmd) == 0;
}

static void enospc_case(bool ext4)
{
	const char *dir = tu_path(ext4 ? "mnt-ext4" : "mnt-tmpfs");
	char img[600], filler[700], path[700];
	struct statvfs sv;
	pc_cache *c;
	pc_file *f;
	uint64_t avail;
	int fd, r;

	snprintf(img, sizeof(img), "%s.img", dir);
	if (!try_mount(dir, img, ext4)) {
		printf("cannot mount %s here: skipped\n", ext4 ? "ext4 (loop)" : "tmpfs");
		unlink(img);
		skip();
	}
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	snprintf(path, sizeof(path), "%s/data", dir);
	/* Leave about 256 KiB free. */
	assert_int_equal(statvfs(dir, &sv), 0);
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	{
		static char zero[64 * 1024];
		uint64_t want = avail > 256 * 1024 ? avail - 256 * 1024 : 0;

		for (uint64_t done = 0; done < want;) {
			ssize_t n = write(fd, zero, pc_min(sizeof(zero), want - done));

			if (n <= 0)
				break;
			done += (uint64_t)n;
		}
		fsync(fd);
	}
	close(fd);

	c = mk("memory=16M");
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, MIB, 20);	/* four times what is left */
	r = pc_fsync(f);
	printf("%s: fsync of 1 MiB with ~256 KiB free: %d (%s), %" PRIu64
	       " pages still dirty\n", ext4 ? "ext4" : "tmpfs", r,
	       strerror(-r), vm(c, "nr_dirty"));
	assert_int_equal(r, -ENOSPC);
	assert_true(vm(c, "nr_dirty") > 0);
	assert_int_equal(pc_fsync(f), -ENOSPC);	/* tried again, still full */
	/* Space freed: the same data goes out. */
	unlink(filler);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 0, MIB, 20);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	r = umount2(dir, MNT_DETACH);
	assert_int_equal(r, 0);
	unlink(img);
}

static void test_enospc_tmpfs(void **state)
{
	(void)state;
	enospc_case(false);
}

static void test_enospc_ext4(void **state)
{
	(void)state;
	enospc_case(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_background_error),
		cmocka_unit_test(test_partial_failure),
		cmocka_unit_test(test_sync_open_errors),
		cmocka_unit_test(test_enospc_tmpfs),
		cmocka_unit_test(test_enospc_ext4),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
