/*
 * install_demo.c - a program outside the library's tree: it includes only
 * <pagecache.h>, is built with `pkg-config --cflags --libs pagecache`, and
 * calls every public function once.  tests/test_install.sh builds and runs
 * it against an installed copy.  Exit 0 when every call did what the
 * header says.
 */
#define _POSIX_C_SOURCE 200809L	/* posix_fadvise's POSIX_FADV_* */
#include <errno.h>
#include <fcntl.h>
#include <pagecache.h>
#include <stdio.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "failed: %s\n", #x); return 1; } } while (0)

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/var/tmp";
	char path[512], buf[8192];
	pc_cache *c;
	pc_file *f;
	pc_page *p;
	uint64_t v;

	snprintf(path, sizeof(path), "%s/demo.dat", dir);
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
	CHECK(pc_vmstat(c, pc_vmstat_name(0), &v) == 0);
	CHECK(pc_vmstat(c, "no_such_counter", &v) == -ENOENT);
	CHECK(pc_close(f) == 0);
	CHECK(pc_unlink(c, path) == 0);
	CHECK(pc_cache_destroy(c) == 0);
	printf("install_demo: every function works\n");
	return 0;
}
