/*
 * preload_helper.c - small programs for tests/test_exec.sh, run once
 * plain and once under `pagecache exec`: their output (contents read back,
 * errnos, fd numbers) must be the same.  Each mode is a case a cache has
 * to hand to the kernel, or a corner of the descriptor space.
 *
 *   preload_helper mmap FILE       write, mmap it, change it both ways
 *   preload_helper fork FILE       write in both processes after a fork
 *   preload_helper fdlimit FILE    fds at and past RLIMIT_NOFILE
 *   preload_helper cat FILE        print the file (read(2) only)
 *   preload_helper creds FILE      write, then setresuid to its own uid
 *                                  (credentials "change"), then read it:
 *                                  what it wrote is on the disk, and no
 *                                  shared region is mapped any more
 *   preload_helper broken FILE     write; wait for FILE.go while the test
 *                                  breaks the shared cache; write and read
 *                                  on the same fd (the kernel's by then)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("FAILED %s: %s\n", what, strerror(errno));
	return 1;
}

static void show(const char *label, int r)
{
	printf("%s: %d (%s)\n", label, r, r < 0 ? strerror(errno) : "ok");
}

static int cat(const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fail("open");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return n < 0 ? fail("read") : 0;
}

static int do_mmap(const char *path)
{
	char page[3 * 4096], back[32] = { 0 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *p;

	if (fd < 0)
		return fail("open");
	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (char)('a' + i % 26);
	if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
		return fail("write");
	p = mmap(NULL, sizeof(page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap");
	printf("mapped equals written: %d\n", !memcmp(p, page, sizeof(page)));
	memcpy(p + 100, "through the map", 15);
	if (msync(p, sizeof(page), MS_SYNC))
		return fail("msync");
	if (pwrite(fd, "through the fd", 14, 200) != 14)
		return fail("pwrite");
	printf("map sees the fd: %.14s\n", p + 200);
	if (pread(fd, back, 15, 100) != 15)
		return fail("pread");
	printf("fd sees the map: %s\n", back);
	printf("offset after: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	munmap(p, sizeof(page));
	close(fd);
	return cat(path);
}

static int do_fork(const char *path)
{
	char other[4200];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), status;
	pid_t pid;

	if (fd < 0)
		return fail("open");
	if (write(fd, "parent before\n", 14) != 14)
		return fail("write");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		int f2;

		snprintf(other, sizeof(other), "%s.child", path);
		f2 = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (write(fd, "child\n", 6) != 6 || f2 < 0 ||
		    write(f2, "written by the child\n", 21) != 21)
			_exit(1);
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return fail("wait");
	printf("child exit: %d\n", WEXITSTATUS(status));
	if (write(fd, "parent after\n", 13) != 13)
		return fail("write");
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	close(fd);
	snprintf(other, sizeof(other), "%s.child", path);
	return cat(path) || cat(other);
}

static int do_fdlimit(const char *path)
{
	struct rlimit old, low;
	char buf[16] = { 0 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), high;

	if (fd < 0)
		return fail("open");
	printf("first fd: %d\n", fd);
	if (write(fd, "0123456789", 10) != 10)
		return fail("write");
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = 64;
	setrlimit(RLIMIT_NOFILE, &low);
	show("read(100)", (int)read(100, buf, 1));
	show("dup2(fd, 64)", dup2(fd, 64));
	show("dup2(fd, 63)", dup2(fd, 63));
	show("fcntl(F_DUPFD, 70)", fcntl(fd, F_DUPFD, 70));
	show("close(100)", close(100));
	show("lseek(63, 2)", (int)lseek(63, 2, SEEK_SET));
	show("read(fd, 3)", (int)read(fd, buf, 3));
	printf("read: %s\n", buf);
	setrlimit(RLIMIT_NOFILE, &old);
	high = old.rlim_cur > 5000 ? 5000 : (int)old.rlim_cur - 1;
	show("dup2(fd, high) == high", dup2(fd, high) == high ? 0 : -1);
	show("write(high)", (int)write(high, "ab", 2));
	show("close_range(63, ~0)", close_range(63, ~0u, 0));
	show("read(63)", (int)read(63, buf, 1));
	show("next fd", open(path, O_RDONLY));
	close(fd);
	return cat(path);
}

/* Is a region of a shared cache mapped here? */
static int region_mapped(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/shm/pagecache-"))
			found = 1;
	fclose(f);
	return found;
}

static int creds(const char *path)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), disk;
	uid_t u = getuid();
	gid_t g = getgid();

	if (fd < 0)
		return fail("open");
	if (write(fd, "before the change\n", 18) != 18)
		return fail("write");
	if (setresgid(g, g, g) != 0 || setresuid(u, u, u) != 0)
		return fail("setresuid");
	printf("region mapped after: %d\n", region_mapped());
	/* The kernel's view: what was written is there. */
	disk = open(path, O_RDONLY | O_DIRECT);
	if (disk >= 0) {
		static char al[4096] __attribute__((aligned(4096)));

		printf("on the disk: %zd\n", pread(disk, al, sizeof(al), 0));
		close(disk);
	}
	if (pread(fd, buf, sizeof(buf) - 1, 0) != 18)
		return fail("pread");
	printf("read back: %s", buf);
	if (write(fd, "after\n", 6) != 6)
		return fail("write after");
	close(fd);
	return 0;
}

/*
 * Write, then wait (FILE.ready made, until FILE.go exists) while the test
 * may break the shared cache, then write and read on the same descriptor:
 * the shim must go on through the kernel at that call, with what it had
 * written first on the disk.
 */
static int broken(const char *path)
{
	char buf[64] = { 0 }, mark[4200];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), m, disk;

	if (fd < 0)
		return fail("open");
	if (write(fd, "before\n", 7) != 7)
		return fail("write");
	snprintf(mark, sizeof(mark), "%s.ready", path);
	m = open(mark, O_WRONLY | O_CREAT, 0644);
	if (m < 0)
		return fail("ready");
	close(m);
	snprintf(mark, sizeof(mark), "%s.go", path);
	while (access(mark, F_OK) != 0)
		usleep(10000);
	if (write(fd, "after\n", 6) != 6)
		return fail("write after");
	if (pread(fd, buf, sizeof(buf) - 1, 0) != 13)
		return fail("pread");
	printf("read back: %s", buf);
	disk = open(path, O_RDONLY | O_DIRECT);
	if (disk >= 0) {
		static char al[4096] __attribute__((aligned(4096)));

		printf("on the disk: %zd\n", pread(disk, al, sizeof(al), 0));
		close(disk);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: preload_helper mmap|fork|fdlimit|cat|creds|broken FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "mmap"))
		return do_mmap(argv[2]);
	if (!strcmp(argv[1], "fork"))
		return do_fork(argv[2]);
	if (!strcmp(argv[1], "fdlimit"))
		return do_fdlimit(argv[2]);
	if (!strcmp(argv[1], "creds"))
		return creds(argv[2]);
	if (!strcmp(argv[1], "cat"))
		return cat(argv[2]);
	if (!strcmp(argv[1], "broken"))
		return broken(argv[2]);
	fprintf(stderr, "preload_helper: unknown mode %s\n", argv[1]);
	return 2;
}
