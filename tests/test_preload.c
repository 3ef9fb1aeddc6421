/*
 * test_preload.c - a program under the shim: linked with
 * libpagecache-preload.so of its own build flavour (so make check runs the
 * shim under ASan and TSan), multi-threaded, checking that every call on
 * a managed file behaves as the kernel's: data, offsets, errnos, sizes.
 * The hand-offs to the kernel are test_preload_handoff.c's.
 *
 * Two oracles.  The data: a reference copy in memory, and the file on the
 * disk read with raw system calls, which also shows the cache at work:
 * data written and not yet written back is in the cache, not on the disk.
 * The errnos: the same bad call made raw on the same fd gives the
 * kernel's errno, which the shim's must equal.  The stress file is four
 * times the 2 MiB budget; random cases print their seed (PC_SEED=N).
 */
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "preload_util.h"

/* ------------------------------------------------------------------ */

static void test_managed(void **state)
{
	char buf[10000], back[10000];
	struct statx stx;
	struct stat st;
	int fd = open_rw("managed");

	(void)state;
	fill(buf, sizeof(buf), 1);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	/* In the cache, not yet on the disk. */
	assert_int_equal(shim_size(fd), sizeof(buf));
	assert_int_equal(raw_size(fd), 0);
	assert_int_equal(stat(path("managed"), &st), 0);
	assert_int_equal(st.st_size, sizeof(buf));
	assert_int_equal(lstat(path("managed"), &st), 0);
	assert_int_equal(st.st_size, sizeof(buf));
	assert_int_equal(statx(AT_FDCWD, path("managed"), 0, STATX_BASIC_STATS, &stx), 0);
	assert_int_equal(stx.stx_size, sizeof(buf));
	assert_int_equal(lseek(fd, 0, SEEK_CUR), sizeof(buf));
	assert_int_equal(lseek(fd, 100, SEEK_SET), 100);
	assert_int_equal(read(fd, back, 50), 50);
	assert_memory_equal(back, buf + 100, 50);
	assert_int_equal(lseek(fd, 0, SEEK_DATA), 0);
	assert_int_equal(lseek(fd, 0, SEEK_HOLE), sizeof(buf));
	assert_int_equal(lseek(fd, -10, SEEK_END), sizeof(buf) - 10);
	assert_int_equal(read(fd, back, 100), 10);
	assert_int_equal(read(fd, back, 100), 0);
	/* fsync: on the disk, exactly. */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(raw_size(fd), sizeof(buf));
	assert_int_equal(raw_pread(fd, back, sizeof(back), 0), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(close(fd), 0);
}

static void test_errno_as_kernel(void **state)
{
	char buf[64] = { 0 };
	struct iovec iov = { buf, 8 };
	/* Bad on purpose: hidden from the compiler's checks. */
	void *volatile null = NULL;
	volatile int minus = -1, too_many = IOV_MAX + 1;
	int rw = open_rw("errno"), ro, wo, e;

	(void)state;
	assert_int_equal(write(rw, "0123456789", 10), 10);
	assert_int_equal(fsync(rw), 0);	/* the kernel sees the same size */
	ro = open(path("errno"), O_RDONLY);
	wo = open(path("errno"), O_WRONLY);
	assert_true(ro >= 0 && wo >= 0);
	SAME_ERRNO(write(ro, "x", 1), syscall(SYS_write, ro, "x", 1));
	SAME_ERRNO(read(wo, buf, 1), syscall(SYS_read, wo, buf, 1));
	SAME_ERRNO(pread(wo, buf, 1, 0), syscall(SYS_pread64, wo, buf, 1, 0L));
	SAME_ERRNO(ftruncate(ro, 5), syscall(SYS_ftruncate, ro, 5L));
	SAME_ERRNO(ftruncate(rw, -1), syscall(SYS_ftruncate, rw, -1L));
	SAME_ERRNO(lseek(rw, 0, 99), syscall(SYS_lseek, rw, 0L, 99));
	SAME_ERRNO(lseek(rw, -5, SEEK_SET), syscall(SYS_lseek, rw, -5L, SEEK_SET));
	SAME_ERRNO(lseek(rw, 20, SEEK_DATA), syscall(SYS_lseek, rw, 20L, SEEK_DATA));
	SAME_ERRNO(lseek(rw, 20, SEEK_HOLE), syscall(SYS_lseek, rw, 20L, SEEK_HOLE));
	SAME_ERRNO(pread(rw, buf, 1, -1), syscall(SYS_pread64, rw, buf, 1, -1L));
	SAME_ERRNO(pwrite(rw, buf, 1, -1), syscall(SYS_pwrite64, rw, buf, 1, -1L));
	SAME_ERRNO(read(rw, null, 10), syscall(SYS_read, rw, NULL, 10));
	SAME_ERRNO(write(rw, null, 10), syscall(SYS_write, rw, NULL, 10));
	SAME_ERRNO(readv(rw, &iov, minus), syscall(SYS_readv, rw, &iov, -1L));
	SAME_ERRNO(readv(rw, &iov, too_many), syscall(SYS_readv, rw, &iov, IOV_MAX + 1));
	SAME_ERRNO(writev(ro, &iov, 1), syscall(SYS_writev, ro, &iov, 1));
	SAME_ERRNO(preadv2(rw, &iov, 1, 0, 0x10000), syscall(SYS_preadv2, rw, &iov, 1, 0L, 0L, 0x10000));
	SAME_ERRNO(fallocate(ro, 0, 0, 10), syscall(SYS_fallocate, ro, 0, 0L, 10L));
	SAME_ERRNO(fallocate(rw, 0, -1, 10), syscall(SYS_fallocate, rw, 0, -1L, 10L));
	SAME_ERRNO(fallocate(rw, 0, 0, 0), syscall(SYS_fallocate, rw, 0, 0L, 0L));
	SAME_ERRNO(sync_file_range(rw, -1, 0, 0), syscall(SYS_sync_file_range, rw, -1L, 0L, 0));
	SAME_ERRNO(sync_file_range(rw, 0, 0, 0x80), syscall(SYS_sync_file_range, rw, 0L, 0L, 0x80));
	SAME_ERRNO(copy_file_range(ro, NULL, ro, NULL, 5, 0),
		   kernel_syscall(SYS_copy_file_range, ro, NULL, ro, NULL, 5, 0));
	SAME_ERRNO(copy_file_range(rw, NULL, wo, NULL, 5, 1),
		   kernel_syscall(SYS_copy_file_range, rw, NULL, wo, NULL, 5, 1));
	/* posix_fadvise returns the error the system call sets. */
	e = posix_fadvise(rw, 0, 0, 99);
	assert_int_equal(syscall(SYS_fadvise64, rw, 0L, 0L, 99), -1);
	assert_int_equal(e, errno);
	e = posix_fadvise(rw, 0, -1, POSIX_FADV_NORMAL);
	assert_int_equal(syscall(SYS_fadvise64, rw, 0L, -1L, POSIX_FADV_NORMAL), -1);
	assert_int_equal(e, errno);
	/* What the shim refuses as a buffered ext4 file does, documented. */
	errno = 0;
	assert_int_equal(pwritev2(rw, &iov, 1, 0, RWF_NOWAIT), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	/* errno is left alone by calls that succeed. */
	errno = 4242;
	assert_int_equal(pread(rw, buf, 4, 0), 4);
	assert_int_equal(pwrite(rw, "ab", 2, 0), 2);
	assert_int_equal(lseek(rw, 0, SEEK_END), 10);
	assert_int_equal(shim_size(rw), 10);
	e = open(path("errno"), O_RDONLY);
	assert_true(e >= 0);
	assert_int_equal(close(e), 0);
	assert_int_equal(fdatasync(rw), 0);
	assert_int_equal(errno, 4242);
	close(ro);
	close(wo);
	close(rw);
}

/*
 * preadv2(RWF_NOWAIT), as the kernel's on a buffered file: what the cached
 * pages hold from the offset on, EAGAIN when the first is not cached, 0 at
 * the end; at offset -1 the position moves by the count.  The shim refused
 * it with EOPNOTSUPP (tests/exerciser.c's plain run reads it from ext4).
 */
static void test_preadv2_nowait(void **state)
{
	char buf[3 * 4096], back[3 * 4096];
	struct iovec iov[2] = { { back, 5000 }, { back + 5000, sizeof(back) - 5000 } };
	int fd = open_rw("nowait");

	(void)state;
	fill(buf, sizeof(buf), 9);
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(preadv2(fd, iov, 2, 0, RWF_NOWAIT), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(preadv2(fd, iov, 2, sizeof(buf), RWF_NOWAIT), 0);
	/* Pages 1 and 2 written back and dropped: a prefix, then EAGAIN. */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 4096, 2 * 4096, POSIX_FADV_DONTNEED), 0);
	memset(back, 0, sizeof(back));
	assert_int_equal(preadv2(fd, iov, 2, 100, RWF_NOWAIT), 4096 - 100);
	assert_memory_equal(back, buf + 100, 4096 - 100);
	errno = 0;
	assert_int_equal(preadv2(fd, iov, 2, 4096, RWF_NOWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	/* At the position: moved by what was read, not by an EAGAIN. */
	assert_int_equal(lseek(fd, 4000, SEEK_SET), 4000);
	assert_int_equal(preadv2(fd, iov, 2, -1, RWF_NOWAIT), 96);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 4096);
	assert_int_equal(preadv2(fd, iov, 2, -1, RWF_NOWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 4096);
	/* Read in by a plain read (page 2 too, by readahead): cached again. */
	assert_int_equal(pread(fd, back, 4096, 4096), 4096);
	assert_int_equal(preadv2(fd, iov, 2, -1, RWF_NOWAIT), 2 * 4096);
	assert_memory_equal(back, buf + 4096, 2 * 4096);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), sizeof(buf));
	assert_int_equal(close(fd), 0);
}

static void test_dup_shares_offset(void **state)
{
	char back[16] = { 0 };
	int fd = open_rw("dup"), d1, d2, d3, d4, other;

	(void)state;
	assert_int_equal(write(fd, "abcdef", 6), 6);
	d1 = dup(fd);
	d2 = dup2(fd, 60);
	d3 = fcntl(fd, F_DUPFD_CLOEXEC, 70);
	d4 = dup3(fd, 80, O_CLOEXEC);
	assert_int_equal(d2, 60);
	assert_true(d3 >= 70 && d4 == 80);
	assert_int_equal(dup2(fd, fd), fd);
	assert_int_equal(lseek(d1, 0, SEEK_CUR), 6);
	assert_int_equal(write(d2, "gh", 2), 2);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 8);
	assert_int_equal(lseek(d3, 2, SEEK_SET), 2);
	assert_int_equal(read(d4, back, 2), 2);
	assert_memory_equal(back, "cd", 2);
	assert_int_equal(lseek(d1, 0, SEEK_CUR), 4);
	assert_int_equal(fcntl(d3, F_GETFD), FD_CLOEXEC);
	assert_int_equal(fcntl(d1, F_GETFD), 0);
	/* Another open of the file has an offset of its own. */
	other = open(path("dup"), O_RDWR);
	assert_int_equal(lseek(other, 0, SEEK_CUR), 0);
	assert_int_equal(read(other, back, 8), 8);
	assert_memory_equal(back, "abcdefgh", 8);
	/* O_APPEND by F_SETFL, on the shared description. */
	assert_int_equal(fcntl(d1, F_SETFL, O_APPEND), 0);
	assert_true(fcntl(fd, F_GETFL) & O_APPEND);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(write(d2, "XY", 2), 2);	/* at the end */
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 10);
	assert_int_equal(pwrite(fd, "Z", 1, 0), 1);	/* Linux: appends too */
	assert_int_equal(fcntl(fd, F_SETFL, 0), 0);
	assert_int_equal(pwrite(fd, "A", 1, 0), 1);
	assert_int_equal(pread(other, back, 16, 0), 11);
	assert_memory_equal(back, "AbcdefghXYZ", 11);
	/* The description outlives its first fd. */
	assert_int_equal(close(fd), 0);
	assert_int_equal(pread(d1, back, 3, 8), 3);
	assert_memory_equal(back, "XYZ", 3);
	close(d1);
	close(d2);
	close(d3);
	close(d4);
	close(other);
}

/* ------------------------------------------------------------------ */
/* Threads: stripes of one file four times the budget, appenders.      */

#define STRIPE (2 << 20)
#define THREADS 4

struct stripe {
	int fd;
	int id;
	uint64_t seed;
	char *model;
};

static void *stripe_worker(void *arg)
{
	struct stripe *s = arg;
	uint64_t rs = s->seed * 31 + (uint64_t)s->id + 1;
	char *buf = malloc(65536), *back = malloc(65536);
	off_t base = (off_t)s->id * STRIPE;

	for (int op = 0; op < 300; op++) {
		size_t len = 1 + rnd(&rs) % 65535, off = rnd(&rs) % (STRIPE - len);
		unsigned k = (unsigned)(rnd(&rs) % 10);

		if (k < 4) {
			struct iovec iov[2] = { { buf, len / 3 }, { buf + len / 3, len - len / 3 } };

			fill(buf, len, rnd(&rs));
			if (k < 2)
				assert_int_equal(pwrite(s->fd, buf, len, base + (off_t)off), (ssize_t)len);
			else
				assert_int_equal(pwritev(s->fd, iov, 2, base + (off_t)off), (ssize_t)len);
			memcpy(s->model + off, buf, len);
		} else if (k < 9) {
			struct iovec iov[2] = { { back, len / 2 }, { back + len / 2, len - len / 2 } };

			if (k < 7)
				assert_int_equal(pread(s->fd, back, len, base + (off_t)off), (ssize_t)len);
			else
				assert_int_equal(preadv(s->fd, iov, 2, base + (off_t)off), (ssize_t)len);
			assert_memory_equal(back, s->model + off, len);
		} else {
			assert_int_equal(fdatasync(s->fd), 0);
			assert_int_equal(raw_pread(s->fd, back, len, base + (off_t)off), (ssize_t)len);
			assert_memory_equal(back, s->model + off, len);
		}
	}
	free(buf);
	free(back);
	return NULL;
}

static void test_threads_stripes(void **state)
{
	uint64_t seed = seed_of("threads_stripes");
	struct stripe s[THREADS];
	pthread_t t[THREADS];
	char *back = malloc(STRIPE);
	int fd = open_rw("stripes");

	(void)state;
	assert_int_equal(ftruncate(fd, (off_t)THREADS * STRIPE), 0);
	for (int i = 0; i < THREADS; i++) {
		s[i] = (struct stripe){ fd, i, seed, calloc(1, STRIPE) };
		pthread_create(&t[i], NULL, stripe_worker, &s[i]);
	}
	for (int i = 0; i < THREADS; i++)
		tu_join(t[i]);
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(raw_size(fd), (off_t)THREADS * STRIPE);
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(raw_pread(fd, back, STRIPE, (off_t)i * STRIPE), STRIPE);
		assert_memory_equal(back, s[i].model, STRIPE);
		free(s[i].model);
	}
	free(back);
	close(fd);
}

#define RECORDS 200
#define REC 100

struct appender {
	int shared, own, id;
};

static void *append_worker(void *arg)
{
	struct appender *a = arg;
	char rec[REC];

	for (int i = 0; i < RECORDS; i++) {
		memset(rec, 'a' + a->id, REC);
		snprintf(rec, 16, "<%d:%05d", a->id, i);
		rec[REC - 1] = '\n';
		assert_int_equal(write(i % 2 ? a->shared : a->own, rec, REC), REC);
	}
	return NULL;
}

static void test_append_threads(void **state)
{
	int shared = open(path("appends"), O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644);
	struct appender a[THREADS];
	pthread_t t[THREADS];
	int seen[THREADS] = { 0 };
	char *all = malloc(THREADS * RECORDS * REC);

	(void)state;
	for (int i = 0; i < THREADS; i++) {
		a[i] = (struct appender){ shared, open(path("appends"), O_WRONLY | O_APPEND), i };
		pthread_create(&t[i], NULL, append_worker, &a[i]);
	}
	for (int i = 0; i < THREADS; i++)
		tu_join(t[i]);
	assert_int_equal(lseek(shared, 0, SEEK_CUR), THREADS * RECORDS * REC);
	assert_int_equal(pread(shared, all, THREADS * RECORDS * REC, 0), THREADS * RECORDS * REC);
	for (int r = 0; r < THREADS * RECORDS; r++) {
		int id, i;

		assert_int_equal(sscanf(all + (size_t)r * REC, "<%d:%5d", &id, &i), 2);
		assert_true(id >= 0 && id < THREADS);
		assert_int_equal(all[(size_t)r * REC + REC - 1], '\n');
		assert_int_equal(all[(size_t)r * REC + 50], 'a' + id);
		seen[id]++;
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(seen[i], RECORDS);
		close(a[i].own);
	}
	free(all);
	close(shared);
}

/* ------------------------------------------------------------------ */
/* Descriptors: past the limit, and a program closing everything.      */

static void test_fd_limits(void **state)
{
	struct rlimit old, low;
	char buf[8];
	int fd = open_rw("limits"), high;

	(void)state;
	assert_int_equal(write(fd, "limits!!", 8), 8);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 128;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	SAME_ERRNO(read(200, buf, 1), syscall(SYS_read, 200, buf, 1));
	SAME_ERRNO(close(200), syscall(SYS_close, 200));
	SAME_ERRNO(dup2(fd, 200), syscall(SYS_dup2, fd, 200));
	SAME_ERRNO(fcntl(fd, F_DUPFD, 200), syscall(SYS_fcntl, fd, F_DUPFD, 200));
	SAME_ERRNO(read(-1, buf, 1), syscall(SYS_read, -1, buf, 1));
	SAME_ERRNO(read(INT_MAX, buf, 1), syscall(SYS_read, INT_MAX, buf, 1));
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* A raised limit: an fd far up shares the description. */
	high = (int)(old.rlim_cur > 10001 ? 10000 : old.rlim_cur - 1);
	assert_int_equal(dup2(fd, high), high);
	assert_int_equal(lseek(high, 2, SEEK_SET), 2);
	assert_int_equal(read(fd, buf, 3), 3);
	assert_memory_equal(buf, "mit", 3);
	assert_int_equal(close(high), 0);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Names, sizes, times, copies.                                         */

static void test_names(void **state)
{
	char buf[20000], back[20000];
	struct stat st;
	int fd = open_rw("gone"), f2;

	(void)state;
	fill(buf, sizeof(buf), 5);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	close(fd);
	assert_int_equal(unlink(path("gone")), 0);	/* dirty pages die */
	fd = open(path("gone"), O_RDWR | O_CREAT, 0644);	/* maybe its inode */
	assert_int_equal(shim_size(fd), 0);
	assert_int_equal(read(fd, back, sizeof(back)), 0);
	close(fd);
	/* Replace by rename: the new name has the new data. */
	fd = open_rw("target");
	assert_int_equal(write(fd, "old", 3), 3);
	close(fd);
	fd = open_rw("tmp");
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	close(fd);
	assert_int_equal(rename(path("tmp"), path("target")), 0);
	f2 = open(path("target"), O_RDONLY);
	assert_int_equal(read(f2, back, sizeof(back)), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(stat(path("target"), &st), 0);
	assert_int_equal(st.st_size, sizeof(buf));
	close(f2);
}

static void test_truncate_times(void **state)
{
	struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	char buf[10000], back[200];
	struct stat st;
	int fd = open_rw("trunc");

	(void)state;
	fill(buf, sizeof(buf), 6);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(truncate(path("trunc"), 100), 0);	/* by path */
	assert_int_equal(shim_size(fd), 100);
	assert_int_equal(pread(fd, back, sizeof(back), 0), 100);
	assert_memory_equal(back, buf, 100);
	assert_int_equal(pwrite(fd, "tail", 4, 96), 4);
	assert_int_equal(utimensat(AT_FDCWD, path("trunc"), t, 0), 0);
	assert_int_equal(fsync(fd), 0);	/* nothing left to move the times */
	assert_int_equal(stat(path("trunc"), &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, 1000000000);
	assert_int_equal(raw_size(fd), 100);
	assert_int_equal(raw_pread(fd, back, 4, 96), 4);
	assert_memory_equal(back, "tail", 4);
	close(fd);
}

static void test_copies(void **state)
{
	static char buf[300000], back[300000];
	int src = open_rw("copy-src"), dst = open_rw("copy-dst"), p[2];
	off_t off = 1000;

	(void)state;
	fill(buf, sizeof(buf), 7);
	assert_int_equal(write(src, buf, sizeof(buf)), sizeof(buf));	/* dirty */
	assert_int_equal(lseek(src, 0, SEEK_SET), 0);
	assert_int_equal(copy_file_range(src, NULL, dst, NULL, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(lseek(src, 0, SEEK_CUR), sizeof(buf));
	assert_int_equal(lseek(dst, 0, SEEK_CUR), sizeof(buf));
	assert_int_equal(pread(dst, back, sizeof(back), 0), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	/* sendfile from the cache into a pipe, at an offset of ours. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(sendfile(p[1], src, &off, 4000), 4000);
	assert_int_equal(off, 5000);
	assert_int_equal(read(p[0], back, 4000), 4000);
	assert_memory_equal(back, buf + 1000, 4000);
	/* splice both ways. */
	assert_int_equal(write(p[1], "spliced", 7), 7);
	assert_int_equal(splice(p[0], NULL, dst, NULL, 7, 0), 7);
	assert_int_equal(pread(dst, back, 7, sizeof(buf)), 7);
	assert_memory_equal(back, "spliced", 7);
	assert_int_equal(lseek(dst, 0, SEEK_SET), 0);
	assert_int_equal(splice(dst, NULL, p[1], NULL, 10, 0), 10);
	assert_int_equal(read(p[0], back, 10), 10);
	assert_memory_equal(back, buf, 10);
	close(p[0]);
	close(p[1]);
	close(src);
	close(dst);
}

/*
 * The copies made with syscall(2), as fsx makes them: served by the shim
 * (the data is in the cache, not on the disk), not by the kernel behind
 * it - which copied the disk's stale file and left the cache's size.
 */
static void test_copies_by_syscall(void **state)
{
	static char buf[50000], back[50000];
	int fd = open_rw("copy-sys"), p[2];
	off64_t in = 1000, out = 70001, off = 3;

	(void)state;
	fill(buf, sizeof(buf), 9);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));	/* dirty */
	assert_int_equal(raw_size(fd), 0);
	/* Past the end of the same file: extends it, a hole in between. */
	assert_int_equal(syscall(SYS_copy_file_range, fd, &in, fd, &out, 20000, 0), 20000);
	assert_int_equal(in, 21000);
	assert_int_equal(out, 90001);
	assert_int_equal(shim_size(fd), 90001);
	assert_int_equal(lseek(fd, 0, SEEK_END), 90001);
	assert_int_equal(pread(fd, back, 20000, 70001), 20000);
	assert_memory_equal(back, buf + 1000, 20000);
	assert_int_equal(pread(fd, back, 20001, sizeof(buf)), 20001);
	for (int i = 0; i < 20001; i++)
		assert_int_equal(back[i], 0);
	assert_int_equal(raw_size(fd), 0);	/* the cache's, not yet the disk's */
	/* The same checks as the libc call's: overlap in one file. */
	in = 0, out = 10;
	SAME_ERRNO(syscall(SYS_copy_file_range, fd, &in, fd, &out, 100, 0),
		   copy_file_range(fd, &in, fd, &out, 100, 0));
	/* sendfile and splice by number, into a pipe and back. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(syscall(SYS_sendfile, p[1], fd, &off, 10), 10);
	assert_int_equal(off, 13);
	assert_int_equal(read(p[0], back, 10), 10);
	assert_memory_equal(back, buf + 3, 10);
	assert_int_equal(write(p[1], "by number", 9), 9);
	off = 95000;
	assert_int_equal(syscall(SYS_splice, p[0], NULL, fd, &off, 9, 0), 9);
	assert_int_equal(shim_size(fd), 95009);
	assert_int_equal(pread(fd, back, 9, 95000), 9);
	assert_memory_equal(back, "by number", 9);
	assert_int_equal(raw_size(fd), 0);
	/* Any other number is the kernel's, as it was. */
	assert_int_equal(syscall(SYS_getpid), getpid());
	errno = 0;
	assert_int_equal(syscall(SYS_close, -1), -1);
	assert_int_equal(errno, EBADF);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/* Opens, dups, reads and closes from several threads at once. */
static void *churn_worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[32], buf[100], back[100];

	snprintf(name, sizeof(name), "churn%d", id);
	for (int i = 0; i < 100; i++) {
		int fd = open(path(name), O_RDWR | O_CREAT, 0644), d;

		assert_true(fd >= 0);
		memset(buf, 'a' + (i % 26), sizeof(buf));
		assert_int_equal(pwrite(fd, buf, sizeof(buf), i * 100), 100);
		d = dup(fd);
		assert_int_equal(close(fd), 0);
		assert_int_equal(pread(d, back, sizeof(back), i * 100), 100);
		assert_memory_equal(back, buf, sizeof(buf));
		assert_int_equal(shim_size(d), (i + 1) * 100);
		assert_int_equal(close(d), 0);
	}
	return NULL;
}

/*
 * From a child, with raw calls: is [0, 100) of @name write-locked?  A raw
 * clone, not fork(3): the shim hands managed files to the kernel at fork,
 * which is not what is tested here.
 */
static bool locked_elsewhere(const char *name)
{
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 0, .l_len = 100 };
		long fd = syscall(SYS_openat, AT_FDCWD, path(name), O_RDWR);

		if (fd < 0 || syscall(SYS_fcntl, (int)fd, F_GETLK, &fl) != 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
	return WEXITSTATUS(status) == 0;
}

/*
 * The program's record locks outlive its commits (SQLite's across each
 * transaction): the shim's F_SETLK has the library open its descriptors
 * of the file first, so a commit opens none - an open closes one, and any
 * close drops the process's locks on the file.
 */
static void test_record_locks_kept(void **state)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 100 };
	char buf[10000];
	int fd = open_rw("locks");

	(void)state;
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_true(locked_elsewhere("locks"));
	fill(buf, sizeof(buf), 7);
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 0), sizeof(buf));	/* short last page */
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(pwrite(fd, buf, 100, 4096), 100);
	assert_int_equal(fsync(fd), 0);
	assert_true(locked_elsewhere("locks"));
	assert_int_equal(raw_size(fd), sizeof(buf));
	assert_int_equal(close(fd), 0);
}

/*
 * truncate(2) by path keeps the program's record locks, as the kernel's
 * does: the shim truncates through the program's own writable description
 * instead of opening and closing one (a close drops every record lock of
 * the process on the file).  Found by tests/exerciser.c -P: its workers
 * lost the write lock on their shared file at a truncate.
 */
static void test_truncate_path_locks_kept(void **state)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 100 };
	char buf[10000], back[10000];
	int fd = open_rw("trunclocks");
	struct stat st;

	(void)state;
	fill(buf, sizeof(buf), 5);
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_true(locked_elsewhere("trunclocks"));
	assert_int_equal(truncate(path("trunclocks"), 5000), 0);
	assert_true(locked_elsewhere("trunclocks"));
	assert_int_equal(shim_size(fd), 5000);
	assert_int_equal(raw_size(fd), 5000);
	assert_int_equal(pread(fd, back, sizeof(back), 0), 5000);
	assert_memory_equal(back, buf, 5000);
	assert_int_equal(truncate(path("trunclocks"), 9000), 0);	/* grown: zeros */
	assert_int_equal(pread(fd, back, sizeof(back), 0), 9000);
	assert_memory_equal(back, buf, 5000);
	memset(buf, 0, 4000);
	assert_memory_equal(back + 5000, buf, 4000);
	assert_true(locked_elsewhere("trunclocks"));
	/* The kernel's errnos still: a missing file, a negative length. */
	assert_int_equal(truncate(path("trunclocks-none"), 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(truncate(path("trunclocks"), -1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 9000);
	assert_int_equal(close(fd), 0);
}

/*
 * A child made by a bare clone(2) (no fork handler runs) that exits
 * through the shim's _exit leaves the parent's cache alone: its copy is
 * mid-flight, without the threads that finish its I/O (a flush there hung
 * waiting on a page the parent had under writeback), and the dirty pages
 * are the parent's to write back.
 */
static void test_bare_clone_exit(void **state)
{
	char buf[4096], back[4096];
	int fd = open_rw("bareclone"), status = 0;
	pid_t pid;

	(void)state;
	fill(buf, sizeof(buf), 11);
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 0), sizeof(buf));
	pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);	/* the shim's */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(raw_size(fd), 0);	/* still only in our cache */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(raw_pread(fd, back, sizeof(back), 0), sizeof(back));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(close(fd), 0);
}

static void test_threads_churn(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn_worker, (void *)(intptr_t)i);
	for (int i = 0; i < THREADS; i++)
		tu_join(t[i]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_managed),
		cmocka_unit_test(test_errno_as_kernel),
		cmocka_unit_test(test_dup_shares_offset),
		cmocka_unit_test(test_threads_stripes),
		cmocka_unit_test(test_append_threads),
		cmocka_unit_test(test_fd_limits),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_truncate_times),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_copies_by_syscall),
		cmocka_unit_test(test_threads_churn),
		cmocka_unit_test(test_record_locks_kept),
		cmocka_unit_test(test_truncate_path_locks_kept),
		cmocka_unit_test(test_preadv2_nowait),
		cmocka_unit_test(test_bare_clone_exit),
	};

	return preload_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
