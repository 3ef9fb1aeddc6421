/*
 * test_inode.c - mappings and open files (inode.c): what happens to a
 * file's pages and errors between its opens.
 *
 *   evicted_dirty_kept   past MAX_CLOSED closed mappings, a dirty one whose
 *                        device fails is not freed: the next open finds
 *                        its pages, and its fsync reports the error;
 *   sync_keeps_dirty     pc_cache_sync on a failing device reports the
 *                        error and keeps the pages: nothing is counted as
 *                        lost while the pages are still there;
 *   truncate_fails       ftruncate(2) failing (a seccomp filter makes it
 *                        return EIO in one thread): pc_ftruncate, shrinking
 *                        or growing, and pc_open(O_TRUNC) return -EIO and
 *                        leave the cache as it was, dirty pages included.
 *
 * Faults come from the fault backend (io=fault), by the backing fd of the
 * file that must fail.  Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "io.h"
#include "util.h"

#define PG 4096
#define MAX_CLOSED 512	/* inode.c */

static struct pc_mapping *mapping_of(pc_cache *c, const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return pc__mapping_lookup(c, st.st_dev, st.st_ino);
}

/* Writes through @fd fail with EIO until the rules are cleared. */
static void fail_writes_of(pc_cache *c, int fd)
{
	struct pc_io_fault rule = { .op = PC_IO_WRITE, .fd = fd, .error = EIO,
				    .count = -1 };

	assert_int_equal(pc__io_fault_add(c->io, &rule), 0);
}

static void test_evicted_dirty_kept(void **state)
{
	struct tu_model a;
	struct pc_mapping *m;
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=8M io=fault"), 0);
	tu_model_init(&a, tu_path("evicted"), 4 * PG);
	tu_model_open(&a, c, O_RDWR | O_CREAT | O_TRUNC);
	tu_model_write(&a, 0, 3 * PG, 1);
	fail_writes_of(c, a.f->mapping->fd);
	tu_model_close(&a);		/* dirty, closed, its device failing */
	for (unsigned i = 0; i < MAX_CLOSED + 8; i++) {
		char name[32];
		pc_file *f;

		snprintf(name, sizeof(name), "other-%u", i);
		assert_int_equal(pc_open(c, tu_path(name), O_RDWR | O_CREAT | O_TRUNC,
					 0644, &f), 0);
		assert_int_equal(pc_pwrite(f, "x", 1, 0), 1);
		assert_int_equal(pc_close(f), 0);
	}
	/* It was the oldest: the eviction wrote it back, and failed. */
	m = mapping_of(c, a.path);
	assert_non_null(m);
	assert_int_equal(atomic_load(&m->nr_dirty), 3);
	pc__mapping_put(m);
	assert_true(tu_vm(c, "writeback_errors") > 0);
	assert_int_equal(tu_vm(c, "writeback_lost"), 0);
	/* The next opener's fsync is told, as the kernel keeps it on the inode. */
	tu_model_open(&a, c, O_RDWR);
	assert_int_equal(pc_fsync(a.f), -EIO);
	tu_model_read(&a, 0, 3 * PG);	/* the data is still there */
	pc__io_fault_clear(c->io);
	assert_int_equal(pc_fsync(a.f), 0);
	tu_model_check_disk(&a);
	tu_model_fini(&a);
	assert_int_equal(pc_cache_destroy(c), 0);
	for (unsigned i = 0; i < MAX_CLOSED + 8; i++) {
		char name[32];

		snprintf(name, sizeof(name), "other-%u", i);
		unlink(tu_path(name));
	}
}

static void test_sync_keeps_dirty(void **state)
{
	struct tu_model a;
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=8M io=fault"), 0);
	tu_model_init(&a, tu_path("syncfail"), 4 * PG);
	tu_model_open(&a, c, O_RDWR | O_CREAT | O_TRUNC);
	tu_model_write(&a, 0, 2 * PG, 2);
	fail_writes_of(c, a.f->mapping->fd);
	assert_int_equal(pc_cache_sync(c), -EIO);
	assert_int_equal(atomic_load(&a.f->mapping->nr_dirty), 2);
	assert_int_equal(tu_vm(c, "writeback_lost"), 0);	/* kept */
	pc__io_fault_clear(c->io);
	assert_int_equal(pc_cache_sync(c), 0);
	tu_model_check_disk(&a);
	assert_int_equal(pc_fsync(a.f), -EIO);	/* this open was not told */
	assert_int_equal(pc_fsync(a.f), 0);
	tu_model_fini(&a);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * From now on ftruncate(2) fails with EIO in the calling thread (a seccomp
 * filter, and no_new_privs, are the thread's own; they die with it).
 */
static void ftruncate_fails(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ftruncate, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	assert_int_equal(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	assert_int_equal(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

static void *truncate_fails(void *arg)
{
	struct tu_model a;
	pc_cache *c;
	pc_file *f;

	(void)arg;
	assert_int_equal(pc_cache_create(&c, "memory=4M"), 0);
	tu_model_init(&a, tu_path("truncfail"), 8 * PG);
	tu_model_open(&a, c, O_RDWR | O_CREAT | O_TRUNC);
	tu_model_write(&a, 0, 3 * PG + 100, 3);	/* dirty, a partial last page */
	ftruncate_fails();
	assert_int_equal(pc_ftruncate(a.f, 5000), -EIO);
	assert_int_equal(pc_size(a.f), 3 * PG + 100);
	tu_model_read(&a, 0, 4 * PG);
	assert_int_equal(pc_ftruncate(a.f, 7 * PG), -EIO);
	assert_int_equal(pc_size(a.f), 3 * PG + 100);
	assert_int_equal(pc_open(c, a.path, O_RDWR | O_TRUNC, 0, &f), -EIO);
	assert_int_equal(pc_size(a.f), 3 * PG + 100);
	tu_model_read(&a, 0, 4 * PG);
	assert_int_equal(atomic_load(&a.f->mapping->nr_dirty), 4);
	assert_int_equal(pc_fsync(a.f), 0);	/* nothing was dropped */
	tu_model_check_disk(&a);
	tu_model_fini(&a);
	assert_int_equal(pc_cache_destroy(c), 0);
	return NULL;
}

static void test_truncate_fails(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, truncate_fails, NULL), 0);
	tu_join(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evicted_dirty_kept),
		cmocka_unit_test(test_sync_keeps_dirty),
		cmocka_unit_test(test_truncate_fails),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
