/*
 * test_sync.c - data integrity (src/sync.c): an O_SYNC or O_DSYNC write's
 * few pages written by the writer itself, a commit's pages staged through
 * the buffered descriptor and made durable by one sync (the file's
 * fdatasync under fsync), and the program's fcntl locks outliving its
 * commits.  util_wb.h has the helpers; the crash-safety case is in
 * test_crash.c.
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
/* Commits: written by the caller, staged                             */

/*
 * An O_SYNC or O_DSYNC write's pages are written by the writer itself
 * (pc_io_req.now: no completion thread between the device and it), and
 * only its pages: a 1 KiB write, one request of one page; an fsync of
 * 64 dirty pages is queued as ever (no request marked now).
 */
static void test_sync_write_by_writer(void **state)
{
	const char *path = tu_path("syncnow");
	pc_cache *c = mk("memory=16M io=fault");
	unsigned char kb[1024];
	uint64_t pages;
	pc_file *f;

	(void)state;
	memset(kb, 's', sizeof(kb));
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 64 * PAGE, 31);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc__io_fault_now(pc__local(c)->io, NULL), 0);
	assert_int_equal(pc_close(f), 0);
	for (int mode = 0; mode < 2; mode++) {
		f = op(c, path, O_WRONLY | (mode ? O_DSYNC : O_SYNC));
		pc__io_fault_clear(pc__local(c)->io);
		assert_int_equal(pc_pwrite(f, kb, sizeof(kb), 5 * PAGE + 100),
				 (ssize_t)sizeof(kb));
		assert_int_equal(pc__io_fault_now(pc__local(c)->io, &pages), 1);
		assert_int_equal(pages, 1);
		assert_int_equal(vm(c, "nr_dirty"), 0);
		assert_int_equal(pc_close(f), 0);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/*
 * A commit's few scattered pages are staged: written through the buffered
 * descriptor, none through the O_DIRECT one - the device takes them at
 * once, not one round trip each - and, under fsync, made durable by the
 * file's fdatasync through that descriptor, with no second sync after
 * it (a pass of many pages: one sync after it, no commit).  A staged
 * write that fails keeps its pages dirty.
 */
static void test_commit_staged(void **state)
{
	const char *path = tu_path("staged");
	pc_cache *c = mk("memory=16M io=fault");
	struct pc_io_fault direct = write_rule(0, 0, -1), fail = write_rule(EIO, 0, -1);
	uint64_t st0, cm0, now0, cs0, fs0;
	pc_file *f;
	int tail;

	(void)state;
	f = op(c, path, O_RDWR | O_CREAT | O_TRUNC);
	write_pat(f, 0, 64 * PAGE, 41);
	cs0 = vm(c, "writeback_commit_syncs");
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fsync(f), 0);	/* 64 pages: O_DIRECT, ring */
	assert_int_equal(vm(c, "writeback_commit_syncs") - cs0, 0);
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 1);
	/* Four pages apart and the file's short last page: five requests. */
	write_pat(f, 3 * PAGE, PAGE, 42);
	write_pat(f, 9 * PAGE, PAGE, 42);
	write_pat(f, 20 * PAGE, PAGE, 42);
	write_pat(f, 40 * PAGE, PAGE, 42);
	write_pat(f, 64 * PAGE, 100, 42);
	direct.fd = pc__bk(f->mapping)->fd;
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &direct), 0);
	st0 = vm(c, "writeback_requests_staged");
	cm0 = vm(c, "writeback_commits");
	now0 = vm(c, "writeback_requests_now");
	cs0 = vm(c, "writeback_commit_syncs");
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fdatasync(f), 0);
	assert_int_equal(vm(c, "writeback_requests_now") - now0, 5);
	assert_int_equal(vm(c, "writeback_requests_staged") - st0, 5);
	assert_int_equal(vm(c, "writeback_commits") - cm0, 1);
	assert_int_equal(vm(c, "writeback_commit_syncs") - cs0, 1);
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 0);
	assert_int_equal(pc__io_fault_hits(pc__local(c)->io), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	tail = atomic_load(&pc__bk(f->mapping)->tail_fd);
	assert_true(tail >= 0);
	for (int i = 0; i < 64; i++)
		if (i == 3 || i == 9 || i == 20 || i == 40)
			check_disk(path, (uint64_t)i * PAGE, PAGE, 42);
		else
			check_disk(path, (uint64_t)i * PAGE, PAGE, 41);
	check_disk(path, 64 * PAGE, 100, 42);

	/* The staged writes fail: the pages stay dirty, fsync says so once. */
	write_pat(f, 5 * PAGE, 2 * PAGE, 43);
	fail.fd = tail;
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &fail), 0);
	fs0 = vm(c, "writeback_file_syncs");
	assert_int_equal(pc_fsync(f), -EIO);
	assert_int_equal(vm(c, "nr_dirty"), 2);
	/* The transfers failed, not the commit's sync: no sync after it
	 * (the pages say the error, once, through errseq). */
	assert_int_equal(vm(c, "writeback_file_syncs") - fs0, 0);
	pc__io_fault_clear(pc__local(c)->io);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	check_disk(path, 5 * PAGE, 2 * PAGE, 43);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/* Is [0, 100) of @path write-locked by another process? (asked from a child) */
static bool locked_by_parent(const char *path)
{
	pid_t pid = fork();
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 0, .l_len = 100 };
		int fd = open(path, O_RDWR);

		if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
	return WEXITSTATUS(status) == 0;
}

/*
 * The program's fcntl locks outlive its commits: a staged commit (and a
 * short last block) goes through the buffered descriptor, opened by
 * pc_lock_prepare before the lock - opening it at the commit would close
 * a descriptor of the file, and any close drops the process's locks on it
 * (SQLite's, lost between its commit and its unlock: "disk I/O error").
 */
static void test_commit_keeps_locks(void **state)
{
	const char *path = tu_path("locks");
	pc_cache *c = mk("memory=16M");
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 100 };
	pc_file *f;
	int fd;

	(void)state;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR, &f), 0);
	assert_int_equal(pc_lock_prepare(f), 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_true(locked_by_parent(path));
	write_pat(f, 0, 2 * PAGE, 51);
	write_pat(f, 2 * PAGE, 100, 51);
	assert_int_equal(pc_fsync(f), 0);
	assert_true(vm(c, "writeback_commits") > 0);
	assert_true(locked_by_parent(path));
	check_disk(path, 0, 2 * PAGE + 100, 51);
	assert_int_equal(pc_close(f), 0);
	close(fd);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_write_by_writer),
		cmocka_unit_test(test_commit_staged),
		cmocka_unit_test(test_commit_keeps_locks),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
