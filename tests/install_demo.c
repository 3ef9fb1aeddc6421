/*
 * install_demo.c - a program outside the library's tree: it includes only
 * <pagecache.h>, is built with `pkg-config --cflags --libs pagecache`, and
 * calls every public function once.  tests/test_install.sh builds and runs
 * it against an installed copy.  Exit 0 when every call did what the
 * header says.
 */
#define _GNU_SOURCE	/* POSIX_FADV_*, FALLOC_FL_KEEP_SIZE */
#include <errno.h>
#include <fcntl.h>
#include <pagecache.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "failed: %s\n", #x); return 1; } } while (0)

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/var/tmp";
	char path[512], buf[8192];
	pc_cache *c;
	pc_file *f, *g;
	pc_page *p;
	struct stat st;
	uint64_t v;
	int fd;

	snprintf(path, sizeof(path), "%s/demo.dat", dir);
	CHECK(pc_config_check("memory=1M") == 0);
	CHECK(pc_config_check("no_such_key=1") == -EINVAL);
	CHECK(pc_cache_create(&c, "memory=1M") == 0);
	CHECK(pc_thread_set_node(c, 0) == 0);
	CHECK(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f) == 0);
	memset(buf, 'x', sizeof(buf));
	CHECK(pc_pwrite(f, buf, 5000, 100) == 5000);
	CHECK(pc_size(f) == 5100);
	CHECK(pc_fdatasync(f) == 0);
	CHECK(pc_fsync(f) == 0);
	CHECK(pc_pread(f, buf, sizeof(buf), 0) == 5100);
	CHECK(pc_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL) == 0);
	CHECK(pc_get_page(f, 1, 0, &p) == 0);
	CHECK(((char *)pc_page_data(p))[0] == 'x');
	pc_put_page(p);
	CHECK(pc_ftruncate(f, 4096) == 0);
	CHECK(pc_fallocate(f, FALLOC_FL_KEEP_SIZE, 0, 8192) == 0);
	CHECK(stat(path, &st) == 0 && pc_cache_stat(c, &st) == 0 && st.st_size == 4096);
	CHECK(pc_cache_sync_file(c, &st) == 0);
	CHECK(pc_cache_sync(c) == 0);
	CHECK(pc_invalidate(f) == 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pc_open_fd(c, fd, O_RDONLY, &g) == 0);
	CHECK(pc_pread(g, buf, sizeof(buf), 0) == 4096 && buf[100] == 'x');
	{
		struct iovec iov = { buf, 8 };
		off_t pos = 100;

		CHECK(pc_readv(g, &iov, 1, &pos) == 8 && pos == 108);
		CHECK(pc_writev(f, &iov, 1, &pos, PC_RW_APPEND) == 8 && pos == 4104);
	}
	CHECK(pc_close(g) == 0 && close(fd) == 0);
	CHECK(pc_vmstat(c, pc_vmstat_name(0), &v) == 0);
	CHECK(pc_vmstat(c, "no_such_counter", &v) == -ENOENT);
	CHECK(pc_cache_resize(c, 2 << 20) == 0);
	CHECK(pc_vmstat(c, "nr_budget_pages", &v) == 0 && v == 512);
	CHECK(pc_cache_resize(c, 1) == -EINVAL);
	CHECK(pc_close(f) == 0);
	CHECK(pc_unlink(c, path) == 0);
	CHECK(pc_cache_unlinked(c, &st) == 0);
	CHECK(pc_cache_destroy(c) == 0);
	printf("install_demo: every function works\n");
	return 0;
}
