/*
 * test_inode.c - mappings and open files (inode.c), truncation
 * (truncate.c): what happens to a file's pages and errors between its
 * opens.
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
 *                        leave the cache as it was, dirty pages included;
 *   empty_trunc          with the same filter, O_TRUNC of an empty file
 *                        whose mapping holds nothing succeeds (it calls no
 *                        ftruncate: aim7 creat-clo), and of one holding a
 *                        byte fails;
 *   fsync_errors_once    four threads fsync one open file without pause
 *                        while errors happen one after another: each is
 *                        reported exactly once (the per-open cursor); and
 *                        the cursor's check itself, called by two threads
 *                        released together after each error, 20000 times;
 *   fallocate_writeback_ending
 *                        a punch hole while a write of the page is ending
 *                        (a hook parks wb_finish where PC_PARK_WB_ENDING
 *                        does: written, its tag and the counters moved,
 *                        PG_writeback still on): pc_fallocate waits for
 *                        the page and drops it, so the cache reads the
 *                        hole's zeros as the disk does.  Kept, the page
 *                        gave its old bytes (tests/exerciser.c: a
 *                        collapse range, the disk right and the cache
 *                        not);
 *   starvation           an fsync, an ftruncate and an O_APPEND write each
 *                        complete while four threads write the same file
 *                        flat out: the writers stop only when all three are
 *                        done, so the case ends by construction.
 *
 * Faults come from the fault backend (io=fault), by the backing fd of the
 * file that must fail.  Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <pthread.h>
#include <sched.h>
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
#include "backing.h"
#include "dirty.h"
#include "inode.h"
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

/*
 * Writes of @m fail with EIO until the rules are cleared: through both its
 * descriptors, the O_DIRECT one and the buffered one (a commit's few pages
 * are staged through the buffered one, writeback.c).
 */
static void fail_writes_of(pc_cache *c, struct pc_mapping *m)
{
	int fds[2] = { pc__bk(m)->fd, pc__backing_tail_fd(m, true) };

	for (int i = 0; i < 2; i++) {
		struct pc_io_fault rule = { .op = PC_IO_WRITE, .fd = fds[i],
					    .error = EIO, .count = -1 };

		assert_true(fds[i] >= 0);
		assert_int_equal(pc__io_fault_add(pc__local(c)->io, &rule), 0);
	}
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
	fail_writes_of(c, a.f->mapping);
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
	pc__io_fault_clear(pc__local(c)->io);
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
	fail_writes_of(c, a.f->mapping);
	assert_int_equal(pc_cache_sync(c), -EIO);
	assert_int_equal(atomic_load(&a.f->mapping->nr_dirty), 2);
	assert_int_equal(tu_vm(c, "writeback_lost"), 0);	/* kept */
	pc__io_fault_clear(pc__local(c)->io);
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

/*
 * aim7 creat-clo: O_TRUNC of a file empty on the disk whose mapping holds
 * nothing has nothing to cut and calls no ftruncate(2) - here it fails
 * with EIO, and a thousand such opens succeed all the same; once the file
 * holds a byte, O_TRUNC cuts again (and fails).
 */
static void *empty_trunc(void *arg)
{
	const char *path = tu_path("creatclo");
	pc_cache *c;
	pc_file *f, *g;

	(void)arg;
	assert_int_equal(pc_cache_create(&c, "memory=4M io=sync"), 0);
	unlink(path);
	assert_int_equal(pc_open(c, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_close(f), 0);
	ftruncate_fails();
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(pc_open(c, path, O_WRONLY | O_CREAT | O_TRUNC,
					 0644, &f), 0);
		assert_int_equal(pc_close(f), 0);
	}
	assert_int_equal(pc_open(c, path, O_WRONLY, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, "x", 1, 0), 1);	/* cached, dirty */
	assert_int_equal(pc_open(c, path, O_WRONLY | O_TRUNC, 0, &g), -EIO);
	assert_int_equal(pc_size(f), 1);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
	return NULL;
}

static void test_empty_trunc(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, empty_trunc, NULL), 0);
	tu_join(t);
}

#define ERRORS 2000

struct fsyncer {
	pc_file *f;
	_Atomic bool *stop;
	_Atomic unsigned *reported;
	pthread_t t;
};

static void *fsyncer_main(void *arg)
{
	struct fsyncer *s = arg;

	while (!atomic_load(s->stop)) {
		int e = pc_fsync(s->f);

		if (e == -EIO)
			atomic_fetch_add(s->reported, 1);
		else
			assert_int_equal(e, 0);
	}
	return NULL;
}

static void test_fsync_errors_once(void **state)
{
	_Atomic unsigned reported = 0;
	_Atomic bool stop = false;
	struct fsyncer s[4];
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=4M"), 0);
	assert_int_equal(pc_open(c, tu_path("errsonce"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	for (int i = 0; i < 4; i++) {
		s[i] = (struct fsyncer){ f, &stop, &reported, 0 };
		assert_int_equal(pthread_create(&s[i].t, NULL, fsyncer_main, &s[i]), 0);
	}
	for (unsigned e = 1; e <= ERRORS; e++) {
		/* A new error (errseq: after the last one was seen). */
		pc__errseq_set(f->mapping, -EIO);
		while (atomic_load(&reported) < e)
			sched_yield();
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(s[i].t, NULL);
	tu_check_threads();
	printf("  %u errors, reported %u times by fsync\n", ERRORS,
	       atomic_load(&reported));
	assert_int_equal(atomic_load(&reported), ERRORS);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * The check itself: after each new error, two callers (one a core) are let
 * go at once.  Without the compare-and-swap both can see the error unseen
 * and report it.
 */
#define ROUNDS 20000
#define CHECKERS 2

struct checker {
	pc_file *f;
	_Atomic unsigned *round, *arrived, *reported;
	pthread_t t;
};

static void *checker_main(void *arg)
{
	struct checker *k = arg;

	for (unsigned r = 1; r <= ROUNDS; r++) {
		while (atomic_load(k->round) < r)
			sched_yield();	/* released together, near enough */
		if (pc__errseq_check_advance(k->f->mapping, &k->f->err_cursor))
			atomic_fetch_add(k->reported, 1);
		atomic_fetch_add(k->arrived, 1);
	}
	return NULL;
}

static void test_cursor_race(void **state)
{
	_Atomic unsigned round = 0, arrived = 0, reported = 0;
	struct checker k[CHECKERS];
	unsigned twice = 0;
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=4M"), 0);
	assert_int_equal(pc_open(c, tu_path("cursor"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	for (int i = 0; i < CHECKERS; i++) {
		k[i] = (struct checker){ f, &round, &arrived, &reported, 0 };
		assert_int_equal(pthread_create(&k[i].t, NULL, checker_main, &k[i]), 0);
	}
	for (unsigned r = 1; r <= ROUNDS; r++) {
		unsigned before = atomic_load(&reported);

		pc__errseq_set(f->mapping, -EIO);
		atomic_store(&round, r);
		while (atomic_load(&arrived) < CHECKERS * r)
			sched_yield();
		twice += atomic_load(&reported) - before > 1;
	}
	for (int i = 0; i < CHECKERS; i++)
		pthread_join(k[i].t, NULL);
	tu_check_threads();
	printf("  %u errors, reported %u times, %u of them more than once\n",
	       ROUNDS, atomic_load(&reported), twice);
	assert_int_equal(atomic_load(&reported), ROUNDS);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Four writers write one file flat out (its first MiB, rewritten whole
 * each time: no throttle pause between writes) while the test thread
 * fsyncs it, extends it with ftruncate and appends to it through an
 * O_APPEND handle; the writers stop when those three are done.  A reader-preferring i_rwsem lets the writers' shared holds
 * overlap for ever and the exclusive ones (ftruncate, append) never get
 * in; the case then never ends, and the runner's timeout fails it.
 */
struct flatout {
	pc_file *f;
	_Atomic bool *stop;
	unsigned long writes;
	pthread_t t;
};

static void *flatout_main(void *arg)
{
	struct flatout *w = arg;
	unsigned char *buf = malloc(1 << 20);

	assert_non_null(buf);
	memset(buf, 'w', 1 << 20);
	while (!atomic_load(w->stop)) {
		assert_int_equal(pc_pwrite(w->f, buf, 1 << 20, 0), 1 << 20);
		w->writes++;
	}
	free(buf);
	return NULL;
}

static void test_starvation(void **state)
{
	const char *path = tu_path("flatout");
	_Atomic bool stop = false;
	struct flatout w[4];
	unsigned long writes = 0;
	pc_cache *c;
	pc_file *f, *g;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=64M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_open(c, path, O_WRONLY | O_APPEND, 0, &g), 0);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct flatout){ f, &stop, 0, 0 };
		assert_int_equal(pthread_create(&w[i].t, NULL, flatout_main, &w[i]), 0);
	}
	while (pc_size(f) == 0)		/* the writers are at it */
		sched_yield();
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_ftruncate(f, 2 << 20), 0);
	assert_int_equal(pc_pwrite(g, "appended", 8, 0), 8);
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(w[i].t, NULL);
		writes += w[i].writes;
	}
	tu_check_threads();
	printf("  fsync, ftruncate and append done among %lu writes\n", writes);
	assert_int_equal(pc_size(f), (2 << 20) + 8);
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static struct {
	_Atomic bool parked, release;
} wb_ending;

static void wb_ending_park(struct pc_page *p)
{
	(void)p;
	atomic_store(&pc__test_wb_ending_hook, NULL);	/* once */
	atomic_store(&wb_ending.parked, true);
	while (!atomic_load(&wb_ending.release))
		sched_yield();
}

struct falloc_arg {
	pc_file *f;
	int mode, r;
	off_t off, len;
	_Atomic bool done;
};

static void *fsync_thread(void *arg)
{
	assert_int_equal(pc_fsync(arg), 0);
	return NULL;
}

static void *falloc_thread(void *arg)
{
	struct falloc_arg *a = arg;

	a->r = pc_fallocate(a->f, a->mode, a->off, a->len);
	atomic_store(&a->done, true);
	return NULL;
}

static void test_fallocate_writeback_ending(void **state)
{
	const char *path = tu_path("wb_ending");
	char buf[4 * PG], back[4 * PG], zero[PG];
	struct falloc_arg a = { .mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				.off = PG, .len = PG };
	struct pc_page *p0;
	pthread_t wb, fa;
	bool slept = false;
	pc_cache *c;
	int fd;

	(void)state;
	for (int i = 0; i < 4; i++)
		memset(buf + i * PG, 'a' + i, PG);
	memset(zero, 0, sizeof(zero));
	assert_int_equal(pc_cache_create(&c, "memory=4M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &a.f), 0);
	assert_int_equal(pc_pwrite(a.f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	/* The write of the four pages parks at its end. */
	atomic_store(&wb_ending.parked, false);
	atomic_store(&wb_ending.release, false);
	atomic_store(&pc__test_wb_ending_hook, wb_ending_park);
	assert_int_equal(pthread_create(&wb, NULL, fsync_thread, a.f), 0);
	while (!atomic_load(&wb_ending.parked))
		sched_yield();
	assert_int_equal(atomic_load(&a.f->mapping->nr_writeback), 0);
	assert_int_equal(atomic_load(&a.f->mapping->nr_dirty), 0);
	pc__tree_read_lock(&a.f->mapping->tree);
	p0 = pc__tree_lookup(&a.f->mapping->tree, 0);	/* the mapping keeps it */
	pc__tree_read_unlock(&a.f->mapping->tree);
	assert_true(p0 && !pc_tree_is_value(p0));
	assert_true(page_test(p0, PG_writeback));
	/* The hole punched meanwhile: it waits for the page, or (the bug)
	 * ends at once with the page kept. */
	assert_int_equal(pthread_create(&fa, NULL, falloc_thread, &a), 0);
	while (!atomic_load(&a.done) && !(slept = page_test(p0, PG_waiters)))
		sched_yield();
	atomic_store(&wb_ending.release, true);
	assert_int_equal(pthread_join(fa, NULL), 0);
	assert_int_equal(pthread_join(wb, NULL), 0);
	assert_int_equal(a.r, 0);
	/* The disk has the hole; the cache must too. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	close(fd);
	assert_memory_equal(back + PG, zero, PG);
	assert_int_equal(pc_pread(a.f, back, sizeof(back), 0), (ssize_t)sizeof(back));
	assert_memory_equal(back, buf, PG);
	assert_memory_equal(back + PG, zero, PG);
	assert_memory_equal(back + 2 * PG, buf + 2 * PG, 2 * PG);
	assert_true(slept);	/* it waited for the write's end */
	assert_int_equal(pc_close(a.f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evicted_dirty_kept),
		cmocka_unit_test(test_sync_keeps_dirty),
		cmocka_unit_test(test_truncate_fails),
		cmocka_unit_test(test_empty_trunc),
		cmocka_unit_test(test_fsync_errors_once),
		cmocka_unit_test(test_cursor_race),
		cmocka_unit_test(test_fallocate_writeback_ending),
		cmocka_unit_test(test_starvation),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
