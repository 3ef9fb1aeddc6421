/*
 * test_coherence.c - the cache and the kernel on one file (coherence.c,
 * and pc_open_fd in inode.c): opening a descriptor the caller opened,
 * close-to-open revalidation when "another process" (here: plain kernel
 * I/O on the same file, which is what another process does) changed the
 * file, and the hand-offs: pc_invalidate, pc_fallocate, pc_cache_stat,
 * pc_cache_unlinked, pc_cache_sync_file, pc_cache_sync.  Every check reads
 * the data back, through the cache and with plain pread(2) from the disk,
 * and counters are compared as deltas.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pagecache.h"
#include "util.h"

static uint64_t stat_of(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	assert_int_equal(pc_vmstat(c, name, &v), 0);
	return v;
}

/* The file on the disk, read with plain I/O. */
static size_t disk_read(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = pread(fd, buf, len, 0);
	assert_true(n >= 0);
	close(fd);
	return (size_t)n;
}

static off_t disk_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void kernel_write(const char *path, const void *buf, size_t len,
			 off_t off)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void test_open_fd(void **state)
{
	const char *path = tu_path("openfd");
	char buf[8192], back[8192];
	pc_cache *c;
	pc_file *f;
	struct stat st;
	int fd, ro, dir, pfd[2];

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR | O_CREAT | O_CLOEXEC, &f), 0);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, 5000, 100), 5000);
	assert_int_equal(pc_size(f), 5100);
	assert_int_equal(pc_pread(f, back, sizeof(back), 100), 5000);
	assert_memory_equal(back, buf, 5000);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(fstat(fd, &st), 0);	/* the caller's fd lives on */
	assert_int_equal(st.st_size, 5100);	/* written: its exact size */

	/* The errnos of the header. */
	assert_int_equal(pc_open_fd(NULL, fd, O_RDWR, &f), -EINVAL);
	assert_int_equal(pc_open_fd(c, -1, O_RDWR, &f), -EINVAL);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR, NULL), -EINVAL);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR | O_DIRECT, &f), -EINVAL);
	assert_int_equal(pc_open_fd(c, fd, O_ACCMODE, &f), -EINVAL);
	ro = open(path, O_RDONLY);
	assert_int_equal(pc_open_fd(c, ro, O_RDWR, &f), -EBADF);
	assert_int_equal(pc_open_fd(c, ro, O_RDONLY, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, 1, 0), -EBADF);
	assert_int_equal(pc_pread(f, back, 100, 5000), 100);
	assert_int_equal(pc_close(f), 0);
	close(ro);
	ro = open(path, O_PATH);
	assert_int_equal(pc_open_fd(c, ro, O_RDONLY, &f), -EBADF);
	close(ro);
	assert_int_equal(pc_open_fd(c, ro, O_RDONLY, &f), -EBADF);	/* closed */
	dir = open(tu_dir(), O_RDONLY | O_DIRECTORY);
	assert_int_equal(pc_open_fd(c, dir, O_RDONLY, &f), -EISDIR);
	close(dir);
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(pc_open_fd(c, pfd[0], O_RDONLY, &f), -EINVAL);
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * pc_open_fd_stat: the caller's flags and fstat taken as given - the data
 * written through it reads back, the caller's stat names the file, and
 * its errnos are pc_open_fd's (a NULL stat -EINVAL).
 */
static void test_open_fd_stat(void **state)
{
	const char *path = tu_path("openfdstat");
	char buf[6000], back[6000];
	pc_cache *c;
	pc_file *f, *g;
	struct stat st;
	int fd, ro;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(pc_open_fd_stat(NULL, fd, O_RDWR, &st, &f), -EINVAL);
	assert_int_equal(pc_open_fd_stat(c, -1, O_RDWR, &st, &f), -EINVAL);
	assert_int_equal(pc_open_fd_stat(c, fd, O_RDWR, NULL, &f), -EINVAL);
	assert_int_equal(pc_open_fd_stat(c, fd, O_RDWR, &st, NULL), -EINVAL);
	assert_int_equal(pc_open_fd_stat(c, fd, O_ACCMODE, &st, &f), -EINVAL);
	assert_int_equal(pc_open_fd_stat(c, fd, O_RDWR | O_CREAT | O_TRUNC, &st,
					 &f), 0);
	memset(buf, 's', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 10), (ssize_t)sizeof(buf));
	assert_int_equal(pc_fsync(f), 0);
	/* Another opener by pc_open_fd finds the same mapping and data. */
	ro = open(path, O_RDONLY);
	assert_int_equal(pc_open_fd(c, ro, O_RDONLY, &g), 0);
	assert_int_equal(pc_pread(g, back, sizeof(back), 10), (ssize_t)sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(pc_close(g), 0);
	close(ro);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 10 + (off_t)sizeof(buf));
	assert_int_equal(pread(fd, back, sizeof(back), 10), (ssize_t)sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	close(fd);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* open(2) with O_TRUNC truncated the file: dirty pages must not come back. */
static void test_open_fd_trunc(void **state)
{
	const char *path = tu_path("trunc");
	char buf[16384], back[16384];
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	memset(buf, 'd', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_close(f), 0);	/* dirty, not written back */
	fd = open(path, O_RDWR | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR | O_TRUNC, &f), 0);
	assert_int_equal(pc_size(f), 0);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 0);
	assert_int_equal(pc_pwrite(f, "new", 3, 0), 3);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(disk_size(path), 3);
	assert_int_equal(disk_read(path, back, sizeof(back)), 3);
	assert_memory_equal(back, "new", 3);
	close(fd);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(disk_size(path), 3);
}

/* Another writer changed the file while the cache held it closed. */
static void test_close_to_open(void **state)
{
	const char *path = tu_path("cto");
	char a[8192], b[8192], back[16384];
	struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } };
	uint64_t stale, pgin;
	pc_cache *c;
	pc_file *f;

	(void)state;
	memset(a, 'A', sizeof(a));
	memset(b, 'B', sizeof(b));
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, a, sizeof(a), 0), (ssize_t)sizeof(a));
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);

	/* Unchanged: served from the cache, nothing dropped. */
	stale = stat_of(c, "stale_opens");
	pgin = stat_of(c, "pgpgin");
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_pread(f, back, sizeof(a), 0), (ssize_t)sizeof(a));
	assert_memory_equal(back, a, sizeof(a));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale);
	assert_int_equal(stat_of(c, "pgpgin"), pgin);

	/* Metadata alone changed (as SQLite's fchown of its journal at each
	 * open, run as root): not stale, nothing read again. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(chown(path, getuid(), getgid()), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_pread(f, back, sizeof(a), 0), (ssize_t)sizeof(a));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale);
	assert_int_equal(stat_of(c, "pgpgin"), pgin);

	/* Same size, new bytes, an mtime that differs for sure. */
	kernel_write(path, b, sizeof(b), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale + 1);
	assert_int_equal(pc_pread(f, back, sizeof(b), 0), (ssize_t)sizeof(b));
	assert_memory_equal(back, b, sizeof(b));
	assert_int_equal(pc_close(f), 0);

	/* Grown behind the cache: the new size, the new bytes. */
	kernel_write(path, a, 100, sizeof(b));
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_size(f), sizeof(b) + 100);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), (ssize_t)sizeof(b) + 100);
	assert_memory_equal(back, b, sizeof(b));
	assert_memory_equal(back + sizeof(b), a, 100);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * An fsync's commits owe the record of the disk to the file's close: many
 * fsyncs of a file held open, then an open beside it (which pays) and the
 * close, are never taken for another's change; after the close another's
 * change is seen.  The disk holds every commit's bytes.
 */
static void test_fsync_owes_seen(void **state)
{
	const char *path = tu_path("owes");
	char a[4096], b[8192], back[3 * 4096];
	struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } };
	uint64_t stale, pgin;
	pc_cache *c;
	pc_file *f, *g;

	(void)state;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	stale = stat_of(c, "stale_opens");
	for (int i = 0; i < 4; i++) {	/* a commit each, growing the file */
		assert_int_equal(pc_pwrite(f, a, 3000, (off_t)i * 3000), 3000);
		assert_int_equal(pc_fsync(f), 0);
	}
	assert_int_equal(disk_size(path), 12000);
	pgin = stat_of(c, "pgpgin");
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &g), 0);	/* pays */
	assert_int_equal(stat_of(c, "stale_opens"), stale);
	assert_int_equal(pc_pread(g, back, 4096, 8192), 12000 - 8192);
	assert_memory_equal(back, a, 12000 - 8192);
	assert_int_equal(stat_of(c, "pgpgin"), pgin);	/* still cached */
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(pc_pwrite(f, a, 100, 0), 100);
	assert_int_equal(pc_fdatasync(f), 0);
	assert_int_equal(pc_close(f), 0);		/* pays */
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &g), 0);
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale);
	/* Another's change after the close: seen at the next open. */
	kernel_write(path, b, sizeof(b), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &g), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale + 1);
	assert_int_equal(pc_pread(g, back, sizeof(b), 0), (ssize_t)sizeof(b));
	assert_memory_equal(back, b, sizeof(b));
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Another writer appends less than a block past our end: theirs, kept. */
static void test_small_append_behind(void **state)
{
	const char *path = tu_path("small");
	char back[16] = { 0 };
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, "abc", 3, 0), 3);
	assert_int_equal(pc_fsync(f), 0);	/* a whole block written, cut to 3 */
	assert_int_equal(pc_close(f), 0);
	kernel_write(path, "def", 3, 3);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_size(f), 6);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 6);
	assert_string_equal(back, "abcdef");
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(disk_size(path), 6);
}

/* The cache's own background writeback is not another writer. */
static void test_own_writeback_not_stale(void **state)
{
	const char *path = tu_path("own");
	char buf[40000], back[40000];
	uint64_t stale, pgin, dirty, wb;
	pc_cache *c;
	pc_file *f;

	(void)state;
	memset(buf, 'o', sizeof(buf));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=10 "
					 "writeback.dirty_expire_ms=1"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_close(f), 0);	/* dirty: the flusher writes it */
	do {
		usleep(1000);
		dirty = stat_of(c, "nr_dirty");
		wb = stat_of(c, "nr_writeback");
	} while (dirty || wb);
	stale = stat_of(c, "stale_opens");
	pgin = stat_of(c, "pgpgin");
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(stat_of(c, "stale_opens"), stale);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), (ssize_t)sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(stat_of(c, "pgpgin"), pgin);	/* still cached */
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Our dirty pages and another writer's append: neither is lost. */
static void test_stale_with_dirty(void **state)
{
	const char *path = tu_path("dirty");
	char a[4096], b[8192], back[16384];
	pc_cache *c;
	pc_file *f, *g;

	(void)state;
	memset(a, 'A', sizeof(a));
	memset(b, 'B', sizeof(b));
	kernel_write(path, b, sizeof(b), 0);	/* 8 KiB of B on the disk */
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, a, sizeof(a), 0), (ssize_t)sizeof(a));
	/* Meanwhile another process appends 4 KiB of A at 8 KiB. */
	kernel_write(path, a, sizeof(a), sizeof(b));
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &g), 0);
	assert_int_equal(pc_size(g), 12288);
	assert_int_equal(pc_pread(g, back, sizeof(back), 0), 12288);
	assert_memory_equal(back, a, 4096);		/* ours */
	assert_memory_equal(back + 4096, b, 4096);	/* untouched */
	assert_memory_equal(back + 8192, a, 4096);	/* theirs */
	assert_int_equal(disk_read(path, back, sizeof(back)), 12288);
	assert_memory_equal(back, a, 4096);	/* ours went first */
	assert_int_equal(pc_close(g), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(disk_size(path), 12288);
}

static void test_stat_sync(void **state)
{
	const char *path = tu_path("stat");
	char buf[10000], back[10000];
	pc_cache *c;
	pc_file *f;
	struct stat st, before;

	(void)state;
	memset(buf, 's', sizeof(buf));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);	/* nothing written back yet */
	assert_int_equal(pc_cache_stat(c, &st), 0);
	assert_int_equal(st.st_size, sizeof(buf));
	assert_int_equal(pc_cache_sync_file(c, &st), 0);
	assert_int_equal(disk_read(path, back, sizeof(back)), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(pc_pwrite(f, "x", 1, 0), 1);
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(disk_read(path, back, 1), 1);
	assert_int_equal(back[0], 'x');
	assert_int_equal(pc_close(f), 0);
	/* Closed and clean: the disk tells the size. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(pc_cache_stat(c, &st), -ENOENT);
	assert_int_equal(stat(tu_dir(), &before), 0);
	assert_int_equal(pc_cache_stat(c, &before), -ENOENT);
	assert_int_equal(pc_cache_sync_file(c, &before), -ENOENT);
	assert_int_equal(pc_cache_stat(NULL, &st), -EINVAL);
	assert_int_equal(pc_cache_stat(c, NULL), -EINVAL);
	assert_int_equal(pc_cache_sync(NULL), -EINVAL);
	assert_int_equal(pc_cache_unlinked(c, NULL), -EINVAL);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* unlink(2) done by the caller: the pages die unwritten, a new file at the
 * same path (perhaps the same inode number) starts clean. */
static void test_unlinked(void **state)
{
	const char *path = tu_path("gone");
	char buf[65536], back[65536];
	uint64_t out;
	pc_cache *c;
	pc_file *f;
	struct stat st;

	(void)state;
	memset(buf, 'u', sizeof(buf));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(pc_cache_unlinked(c, &st), 0);
	out = stat_of(c, "pgpgout");
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_close(f), 0);	/* last close: dropped */
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(stat_of(c, "pgpgout"), out);
	kernel_write(path, "fresh", 5, 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	assert_int_equal(pc_size(f), 5);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 5);
	assert_memory_equal(back, "fresh", 5);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * An unlinked file still open is still read through its descriptors (a
 * child's after fork or exec, a dup on fd 0: the kernel serves those), so
 * pc_cache_sync and pc_cache_sync_file write it back while it is open;
 * only at its last close are its pages dropped unwritten.
 */
static void test_unlinked_open_synced(void **state)
{
	const char *path = tu_path("heredoc");
	char buf[20000], back[20000];
	pc_cache *c;
	pc_file *f;
	struct stat st;
	int kfd;

	(void)state;
	memset(buf, 'h', sizeof(buf));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	kfd = open(path, O_RDONLY);	/* as a child's inherited descriptor */
	assert_true(kfd >= 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(pc_cache_unlinked(c, &st), 0);
	assert_int_equal(pread(kfd, back, sizeof(back), 0), 0);	/* not yet */
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(pread(kfd, back, sizeof(back), 0), (ssize_t)sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(pc_pwrite(f, "x", 1, 0), 1);
	assert_int_equal(pc_cache_sync_file(c, &st), 0);
	assert_int_equal(pread(kfd, back, 1, 0), 1);
	assert_int_equal(back[0], 'x');
	assert_int_equal(pc_close(f), 0);
	close(kfd);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_invalidate(void **state)
{
	const char *path = tu_path("inval");
	char buf[32768], back[32768];
	uint64_t pgin;
	pc_cache *c;
	pc_file *f;
	pc_page *p;

	(void)state;
	memset(buf, 'i', sizeof(buf));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, 30000, 0), 30000);
	assert_int_equal(pc_get_page(f, 7, PC_GET_NOWAIT, &p), 0);
	pc_put_page(p);
	assert_int_equal(pc_invalidate(f), 0);
	for (uint64_t i = 0; i < 8; i++)	/* no page of it cached */
		assert_int_equal(pc_get_page(f, i, PC_GET_NOWAIT, &p), -EAGAIN);
	assert_int_equal(stat_of(c, "nr_dirty"), 0);
	assert_int_equal(disk_size(path), 30000);
	assert_int_equal(disk_read(path, back, sizeof(back)), 30000);
	assert_memory_equal(back, buf, 30000);
	pgin = stat_of(c, "pgpgin");
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 30000);
	assert_memory_equal(back, buf, 30000);
	assert_true(stat_of(c, "pgpgin") > pgin);	/* read from the disk */
	assert_int_equal(pc_invalidate(NULL), -EINVAL);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_fallocate(void **state)
{
	const char *path = tu_path("falloc");
	char buf[16384], back[32768], zero[8192];
	pc_cache *c;
	pc_file *f, *ro;

	(void)state;
	memset(buf, 'f', sizeof(buf));
	memset(zero, 0, sizeof(zero));
	assert_int_equal(pc_cache_create(&c, "memory=1M writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, 10000, 0), 10000);
	/* Allocation: the size moves only without KEEP_SIZE. */
	assert_int_equal(pc_fallocate(f, FALLOC_FL_KEEP_SIZE, 0, 65536), 0);
	assert_int_equal(pc_size(f), 10000);
	assert_int_equal(pc_fallocate(f, 0, 8192, 8192), 0);
	assert_int_equal(pc_size(f), 16384);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 16384);
	assert_memory_equal(back, buf, 10000);
	assert_memory_equal(back + 10000, zero, 16384 - 10000);
	/* A hole punched through dirty data. */
	assert_int_equal(pc_pwrite(f, buf, 16384, 0), 16384);
	assert_int_equal(pc_fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      4096, 8192), 0);
	assert_int_equal(pc_size(f), 16384);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 16384);
	assert_memory_equal(back, buf, 4096);
	assert_memory_equal(back + 4096, zero, 8192);
	assert_memory_equal(back + 12288, buf, 4096);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(disk_read(path, back, sizeof(back)), 16384);
	assert_memory_equal(back + 4096, zero, 8192);
	assert_memory_equal(back + 12288, buf, 4096);
	/* Errors. */
	assert_int_equal(pc_fallocate(NULL, 0, 0, 1), -EINVAL);
	assert_int_equal(pc_fallocate(f, 0, -1, 1), -EINVAL);
	assert_int_equal(pc_fallocate(f, 0, 0, 0), -EINVAL);
	assert_int_equal(pc_fallocate(f, 0, INT64_MAX - 10, 100), -EFBIG);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &ro), 0);
	assert_int_equal(pc_fallocate(ro, 0, 0, 1), -EBADF);
	assert_int_equal(pc_close(ro), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(disk_size(path), 16384);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_fd),
		cmocka_unit_test(test_open_fd_stat),
		cmocka_unit_test(test_open_fd_trunc),
		cmocka_unit_test(test_close_to_open),
		cmocka_unit_test(test_fsync_owes_seen),
		cmocka_unit_test(test_small_append_behind),
		cmocka_unit_test(test_own_writeback_not_stale),
		cmocka_unit_test(test_stale_with_dirty),
		cmocka_unit_test(test_stat_sync),
		cmocka_unit_test(test_unlinked),
		cmocka_unit_test(test_unlinked_open_synced),
		cmocka_unit_test(test_invalidate),
		cmocka_unit_test(test_fallocate),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
