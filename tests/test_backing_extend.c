/*
 * test_backing_extend.c - the file's end on the disk moved out ahead of a
 * writeback pass's O_DIRECT requests (src/backing.c, pc__backing_extend):
 * once a run with fallocate(2), or with ftruncate(2) on a file system
 * without it (the pc__test_no_fallocate hook); the size exact, a hole a
 * hole of zeros, the data read back through the kernel.  util_wb.h has
 * the helpers.
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
#include "backing.h"
#include "inode.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "util_wb.h"

/*
 * Writes past the file's end on the disk: the pass allocates what it
 * writes there first (writeback_extends: once a run, not once a request),
 * so its O_DIRECT requests are overwrites within the file's size.  The
 * size stays exactly the program's, a hole stays a hole reading zeros,
 * and the data read through the kernel is what was written.  @nofalloc:
 * as on a file system without fallocate(2) (EOPNOTSUPP): ftruncate(2) to
 * the file's size instead (writeback_extend_truncates).
 */
static void extend_case(bool nofalloc)
{
	const char *path = tu_path(nofalloc ? "extend-trunc" : "extend");
	const char *done = nofalloc ? "writeback_extend_truncates"
				    : "writeback_extends";
	const char *not = nofalloc ? "writeback_extends"
				   : "writeback_extend_truncates";
	/* Nothing written behind the test's back: no background pass. */
	pc_cache *c = mk("memory=64M writeback.dirty_ratio=90 "
			 "writeback.dirty_background_ratio=80 "
			 "writeback.dirty_expire_ms=600000");
	uint64_t ext0, not0, req0;
	char *zero = calloc(1, MIB), *got = malloc(MIB);
	struct stat st;
	pc_file *f;
	int fd;

	atomic_store(&pc__test_no_fallocate, nofalloc);
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	if (!f->mapping->direct) {
		pc_close(f);
		pc_cache_destroy(c);
		printf("no O_DIRECT here: nothing to extend\n");
		skip();
	}
	/* A new file, written in order past its end, a partial last page:
	 * one extension for the pass (7 requests), the size exact. */
	write_pat(f, 0, 6 * MIB + 100, 11);
	ext0 = vm(c, done);
	not0 = vm(c, not);
	req0 = vm(c, "writeback_requests");
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 1);
	assert_int_equal(vm(c, not) - not0, 0);
	assert_int_equal(vm(c, "writeback_requests") - req0, 7);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 6 * MIB + 100);
	check_disk(path, 0, 6 * MIB + 100, 11);

	/* Overwrites within the disk's end: nothing to extend. */
	ext0 = vm(c, done);
	write_pat(f, MIB, 3 * MIB, 12);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 0);
	check_disk(path, MIB, 3 * MIB, 12);

	/* One request's worth past the end: it runs alone anyway. */
	write_pat(f, 6 * MIB + 100, 512 * 1024, 13);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, 0);
	check_disk(path, 6 * MIB + 100, 512 * 1024, 13);

	/* Far past the end, a hole before: the runs are allocated (the
	 * fallback: the size set), the hole stays one and reads zeros. */
	write_pat(f, 8 * MIB, 2 * MIB, 14);
	write_pat(f, 64 * MIB, MIB + 5, 15);
	ext0 = vm(c, done);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, done) - ext0, nofalloc ? 1 : 2);
	assert_int_equal(pc_size(f), 65 * MIB + 5);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 65 * MIB + 5);
	/* The writes' blocks and the first file's, not the hole's. */
	assert_true(st.st_blocks * 512 < 16 * MIB);
	check_disk(path, 8 * MIB, 2 * MIB, 14);
	check_disk(path, 64 * MIB, MIB + 5, 15);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 10 * MIB, SEEK_DATA), 64 * MIB);
	for (uint64_t off = 10 * MIB; off < 64 * MIB; off += MIB) {
		assert_int_equal(pread(fd, got, MIB, (off_t)off), MIB);
		assert_memory_equal(got, zero, MIB);
	}
	close(fd);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	atomic_store(&pc__test_no_fallocate, false);
	free(zero);
	free(got);
}

static void test_extend_once(void **state)
{
	(void)state;
	extend_case(false);
}

static void test_extend_no_fallocate(void **state)
{
	(void)state;
	extend_case(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extend_once),
		cmocka_unit_test(test_extend_no_fallocate),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
