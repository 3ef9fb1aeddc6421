/*
 * test_preload_handoff.c - under the shim (as test_preload.c), the cases
 * the cache hands to the kernel: mmap of a file written through the cache,
 * stdio (fopen, fdopen, dprintf), fork with writes in both processes,
 * system and posix_spawn of programs that read or write our files, and a
 * program that closes every descriptor it did not open (close loops,
 * close_range, closefrom, dup2 onto the library's fds).  Each checks the
 * data the kernel sees, and that the cache works on.  Under TSan a forked
 * child starts no threads (TSan cannot run them), so it uses inherited
 * descriptors only.
 */
#include <dirent.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "preload_util.h"

extern char **environ;

/* ------------------------------------------------------------------ */
/* Hand-offs: mmap, stdio, fork, exec.                                  */

static void test_mmap_handoff(void **state)
{
	char buf[3 * 4096], back[16];
	int fd = open_rw("mapped"), again;
	char *p;

	(void)state;
	fill(buf, sizeof(buf), 3);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(raw_size(fd), 0);	/* dirty in the cache */
	p = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_memory_equal(p, buf, sizeof(buf));	/* written back first */
	assert_int_equal(lseek(fd, 0, SEEK_CUR), sizeof(buf));	/* the offset kept */
	assert_int_equal(pwrite(fd, "WRITE", 5, 100), 5);
	assert_memory_equal(p + 100, "WRITE", 5);	/* the kernel's now */
	memcpy(p + 200, "MAPPED", 6);
	again = open(path("mapped"), O_RDONLY);	/* the kernel's for good */
	assert_int_equal(pread(again, back, 6, 200), 6);
	assert_memory_equal(back, "MAPPED", 6);
	assert_int_equal(raw_size(again), shim_size(again));
	assert_int_equal(munmap(p, sizeof(buf)), 0);
	close(again);
	close(fd);
}

static void test_stdio(void **state)
{
	char buf[5000], back[5000];
	int fd = open_rw("stdio"), fd2;
	FILE *fp;

	(void)state;
	fill(buf, sizeof(buf), 4);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	fp = fopen(path("stdio"), "r+");
	assert_non_null(fp);
	assert_int_equal(fread(back, 1, sizeof(back), fp), sizeof(back));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
	assert_true(fputs("HELLO", fp) >= 0);
	assert_int_equal(fflush(fp), 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), sizeof(buf));	/* handed off, kept */
	assert_int_equal(pread(fd, back, 5, 0), 5);
	assert_memory_equal(back, "HELLO", 5);
	assert_int_equal(fclose(fp), 0);
	close(fd);
	/* No stream and no handed-off fd: cached again. */
	fd = open(path("stdio"), O_RDWR);
	assert_int_equal(pwrite(fd, "again", 5, 5000), 5);
	assert_int_equal(raw_size(fd), 5000);
	assert_int_equal(shim_size(fd), 5005);
	/* fdopen of a managed fd: the stream continues at its offset. */
	fd2 = open_rw("fdopen");
	assert_int_equal(write(fd2, "abc", 3), 3);
	fp = fdopen(fd2, "a+");
	assert_non_null(fp);
	assert_true(fputs("def", fp) >= 0);
	assert_int_equal(fclose(fp), 0);
	fd2 = open(path("fdopen"), O_RDONLY);
	assert_int_equal(read(fd2, back, 16), 6);
	assert_memory_equal(back, "abcdef", 6);
	close(fd2);
	/* dprintf formats with glibc, writes through the cache. */
	fd2 = open_rw("dprintf");
	assert_int_equal(dprintf(fd2, "x=%d\n", 42), 5);
	assert_int_equal(shim_size(fd2), 5);
	assert_int_equal(raw_size(fd2), 0);
	assert_int_equal(pread(fd2, back, 16, 0), 5);
	assert_memory_equal(back, "x=42\n", 5);
	close(fd2);
	close(fd);
}

static void test_fork(void **state)
{
	char back[16] = { 0 };
	int fd = open_rw("fork"), status;
	pid_t pid;

	(void)state;
	assert_int_equal(write(fd, "P1", 2), 2);	/* dirty at the fork */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char b[2];
		int ok = pread(fd, b, 2, 0) == 2 && !memcmp(b, "P1", 2) &&
			 write(fd, "C", 1) == 1;	/* the shared offset */
#ifndef PC_TSAN
		int nfd = open(path("fork-child"), O_RDWR | O_CREAT | O_TRUNC, 0644);

		ok = ok && nfd >= 0 && write(nfd, "child", 5) == 5;
#endif
		_exit(ok ? 0 : 1);	/* _exit writes back too */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(write(fd, "P2", 2), 2);
	assert_int_equal(pread(fd, back, 16, 0), 5);
	assert_memory_equal(back, "P1CP2", 5);
#ifndef PC_TSAN
	{
		int cfd = open(path("fork-child"), O_RDONLY);

		assert_int_equal(read(cfd, back, 16), 5);
		assert_memory_equal(back, "child", 5);
		close(cfd);
	}
#endif
	close(fd);
}

static void test_spawn_exec(void **state)
{
	char cmd[512], back[64] = { 0 };
	char *argv[] = { "cat", NULL, NULL };
	int fd = open(path("spawn"), O_RDWR | O_CREAT | O_TRUNC, 0644), out, status;
	posix_spawn_file_actions_t fa;
	pid_t pid;

	(void)state;
	assert_int_equal(write(fd, "abc", 3), 3);	/* dirty, inheritable */
	snprintf(cmd, sizeof(cmd), "printf X >&%d", fd);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(write(fd, "d", 1), 1);	/* after the child's X */
	assert_int_equal(pread(fd, back, 16, 0), 5);
	assert_memory_equal(back, "abcXd", 5);
	/* A dirty file read by a spawned program. */
	close(fd);
	fd = open_rw("spawn2");
	assert_int_equal(write(fd, "for cat", 7), 7);
	out = open(path("spawn2.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	argv[1] = (char *)path("spawn2");
	assert_int_equal(posix_spawnp(&pid, "cat", &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(out);
	out = open(path("spawn2.out"), O_RDONLY);
	memset(back, 0, sizeof(back));
	assert_int_equal(read(out, back, sizeof(back)), 7);
	assert_string_equal(back, "for cat");
	close(out);
	close(fd);
}

/* The library's descriptors: links into our directory, or the ring. */
static int library_fds(int *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < max) {
		char p[300], link[512];
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		len = readlink(p, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if ((!strncmp(link, dir, strlen(dir)) && fd >= 64) ||
		    strstr(link, "io_uring"))
			out[n++] = fd;
	}
	closedir(d);
	return n;
}

static void test_closing_everything(void **state)
{
	char buf[3][5000], back[5000];
	int fds[3], lib[64], n, low, spare;

	(void)state;
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "close%d", i);
		fds[i] = open_rw(name);
		fill(buf[i], sizeof(buf[i]), 10 + (uint64_t)i);
		assert_int_equal(write(fds[i], buf[i], sizeof(buf[i])), sizeof(buf[i]));
	}
	n = library_fds(lib, 64);
	assert_true(n >= 1);
	low = lib[0];
	for (int i = 0; i < n; i++) {
		if (lib[i] < low)
			low = lib[i];
		errno = 0;	/* a daemon's close loop meets them */
		assert_int_equal(close(lib[i]), -1);
		assert_int_equal(errno, EBADF);
		assert_int_equal(dup2(0, lib[i]), -1);
		assert_int_equal(errno, EBUSY);
	}
	spare = dup2(fds[0], low - 1);	/* one of ours just below them */
	assert_int_equal(spare, low - 1);
	assert_int_equal(close_range((unsigned)low - 1, ~0u, 0), 0);
	SAME_ERRNO(fcntl(spare, F_GETFD), syscall(SYS_fcntl, spare, F_GETFD));
	closefrom(low);
	for (int i = 0; i < n; i++)
		assert_true(fcntl(lib[i], F_GETFD) >= 0);	/* all still open */
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	/* The cache works on: the dirty data is still there, then on disk. */
	for (int i = 0; i < 3; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "close%d", i);
		fd = open(path(name), O_RDWR);
		assert_int_equal(read(fd, back, sizeof(back)), sizeof(back));
		assert_memory_equal(back, buf[i], sizeof(back));
		assert_int_equal(fsync(fd), 0);
		assert_int_equal(raw_pread(fd, back, sizeof(back), 0), sizeof(back));
		assert_memory_equal(back, buf[i], sizeof(back));
		close(fd);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_handoff),
		cmocka_unit_test(test_stdio),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_spawn_exec),
		cmocka_unit_test(test_closing_everything),
	};

	return preload_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
