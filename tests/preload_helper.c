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
 *   preload_helper ofd FILE        a reader process B beside A: A writes,
 *                                  B reads; A forks a child that exits at
 *                                  once (then vfork, system, popen,
 *                                  posix_spawn of `true`), writes again
 *                                  through its old fd; B reads again each
 *                                  time
 *   preload_helper interleave FILE write, read, lseek, F_SETFL O_APPEND and
 *                                  pwrite in turns by a parent and its
 *                                  child on one description; then both
 *                                  write records at once, none lost
 *   preload_helper exec FILE       write, seek, exec itself (exec2) with
 *                                  the fd inherited: it reads at the
 *                                  offset, writes, says where it ended
 *   preload_helper spawn FILE      system, popen and posix_spawn of shell
 *                                  commands writing and reading the fd
 *                                  they inherit, the parent writing
 *                                  between them; a posix_spawn with file
 *                                  actions (cat, its stdout a file) reads
 *                                  what the parent wrote
 *   preload_helper killed FILE     a child writes through an inherited
 *                                  description and is killed (SIGKILL):
 *                                  the parent reads what it wrote
 * For tests/test_admin.sh (a cache's operator commands):
 *   preload_helper hold FILE       write 1 MiB (bytes i % 251), no fsync;
 *                                  FILE.ready; hold it open until FILE.go
 *   preload_helper append FILE     append "record N" lines, one write
 *                                  each; FILE.ready after 2000; once
 *                                  FILE.go exists 2000 more; print N
 */
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
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

/* FILE.@what made (empty). */
static int mark_file(const char *path, const char *what)
{
	char mark[4200];
	int m;

	snprintf(mark, sizeof(mark), "%s.%s", path, what);
	m = open(mark, O_WRONLY | O_CREAT, 0644);
	if (m < 0)
		return -1;
	close(m);
	return 0;
}

static bool go_there(const char *path)
{
	char mark[4200];

	snprintf(mark, sizeof(mark), "%s.go", path);
	return access(mark, F_OK) == 0;
}

/* 1 MiB written and held open, dirty, until FILE.go. */
static int hold(const char *path)
{
	static unsigned char buf[1 << 20];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open");
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i % 251);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return fail("write");
	if (mark_file(path, "ready"))
		return fail("ready");
	while (!go_there(path))
		usleep(10000);
	close(fd);
	return 0;
}

/* Records appended until FILE.go, and 2000 after: how many, printed. */
static int append(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	unsigned long n = 0, more = 0;
	char rec[64];

	if (fd < 0)
		return fail("open");
	while (more < 2000) {
		int len = snprintf(rec, sizeof(rec), "record %lu\n", ++n);

		if (write(fd, rec, (size_t)len) != len)
			return fail("write");
		if (n == 2000 && mark_file(path, "ready"))
			return fail("ready");
		if (n > 2000 && (more || go_there(path)))
			more++;
	}
	if (close(fd))
		return fail("close");
	printf("%lu\n", n);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Descriptions shared by fork, exec and spawn.                         */

extern char **environ;

/* One byte through a pipe, to take turns. */
static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(3);
}

static char hear(int fd)
{
	char c = 0;

	if (read(fd, &c, 1) != 1)
		_exit(4);
	return c;
}

static void b_reads(int cmd, int ans)
{
	say(cmd, 'r');
	hear(ans);
}

/* B: at each 'r', read the file's first four bytes through its own fd. */
static void reader_b(const char *path, int cmd, int ans)
{
	char buf[8] = { 0 };
	int fd = -1;

	while (hear(cmd) == 'r') {
		if (fd < 0)
			fd = open(path, O_RDONLY);	/* once: no reopen */
		printf("B reads: %.4s\n", pread(fd, buf, 4, 0) == 4 ? buf : "????");
		say(ans, 'k');
	}
	_exit(0);
}

static int spawn_true(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid;
	int status;

	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int ofd_case(const char *path)
{
	int cmd[2], ans[2], fd, status;
	pid_t b, c;
	FILE *p;

	if (pipe(cmd) || pipe(ans))
		return fail("pipe");
	fflush(stdout);
	b = fork();
	if (b == 0)
		reader_b(path, cmd[0], ans[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "AAAA", 4) != 4)
		return fail("A writes");
	b_reads(cmd[1], ans[0]);
	fflush(stdout);
	c = fork();
	if (c == 0)
		_exit(0);
	if (waitpid(c, &status, 0) != c)
		return fail("wait");
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "BBBB", 4) != 4)
		return fail("A writes after fork");
	b_reads(cmd[1], ans[0]);
	c = vfork();
	if (c == 0)
		_exit(0);
	if (c < 0 || waitpid(c, &status, 0) != c)
		return fail("vfork");
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "bbbb", 4) != 4)
		return fail("A writes after vfork");
	b_reads(cmd[1], ans[0]);
	printf("system: %d\n", system("true"));
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "CCCC", 4) != 4)
		return fail("A writes after system");
	b_reads(cmd[1], ans[0]);
	p = popen("true", "r");
	printf("popen: %d\n", p ? pclose(p) : -1);
	if (pwrite(fd, "DDDD", 4, 0) != 4)
		return fail("A writes after popen");
	b_reads(cmd[1], ans[0]);
	printf("posix_spawn: %d\n", spawn_true());
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "EEEE", 4) != 4)
		return fail("A writes after posix_spawn");
	b_reads(cmd[1], ans[0]);
	say(cmd[1], 'q');
	waitpid(b, &status, 0);
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	close(fd);
	return cat(path);
}

#define RECORDS 2000
#define REC 16

/* @n records "<tag> nnnnnnnnnn\n" of REC bytes each, by write(2). */
static int write_records(int fd, char tag, int n)
{
	char rec[REC + 1];

	for (int i = 0; i < n; i++) {
		snprintf(rec, sizeof(rec), "%c %013d\n", tag, i);
		if (write(fd, rec, REC) != REC)
			return -1;
	}
	return 0;
}

/* Every record whole, each process's in order, all there. */
static void check_records(const char *path)
{
	char rec[REC + 1] = { 0 };
	int fd = open(path, O_RDONLY), next[2] = { 0, 0 }, bad = 0, n = 0;

	while (read(fd, rec, REC) == REC) {
		int t = rec[0] == 'p' ? 0 : rec[0] == 'c' ? 1 : -1;

		if (t < 0 || atoi(rec + 2) != next[t] || rec[REC - 1] != '\n')
			bad++;
		else
			next[t]++;
		n++;
	}
	printf("records: %d, parent's %d, child's %d, torn or lost %d\n", n,
	       next[0], next[1], bad);
	close(fd);
}

static int interleave(const char *path)
{
	int to_c[2], to_p[2], fd, status;
	char buf[32] = { 0 }, recs[4200];
	pid_t pid;

	if (pipe(to_c) || pipe(to_p))
		return fail("pipe");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "P0;", 3) != 3)
		return fail("open");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fl;

		if (write(fd, "C1;", 3) != 3)
			_exit(1);
		say(to_p[1], 'g');
		hear(to_c[0]);
		fl = fcntl(fd, F_GETFL);
		if (fcntl(fd, F_SETFL, fl | O_APPEND) || lseek(fd, 0, SEEK_SET) != 0 ||
		    write(fd, "C3;", 3) != 3)
			_exit(1);
		say(to_p[1], 'g');
		hear(to_c[0]);
		if (fcntl(fd, F_SETFL, fl & ~O_APPEND) || lseek(fd, 3, SEEK_SET) != 3 ||
		    write(fd, "c5", 2) != 2 || read(fd, buf, 4) != 4)
			_exit(1);
		printf("child reads: %.4s, offset %lld\n", buf,
		       (long long)lseek(fd, 0, SEEK_CUR));
		say(to_p[1], 'g');
		exit(0);
	}
	hear(to_p[0]);
	if (write(fd, "P2;", 3) != 3)
		return fail("P2");
	say(to_c[1], 'g');
	hear(to_p[0]);
	printf("parent offset after the child's append: %lld\n",
	       (long long)lseek(fd, 0, SEEK_CUR));
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, "P4;", 3) != 3)	/* appends */
		return fail("P4");
	printf("parent offset after its append: %lld\n",
	       (long long)lseek(fd, 0, SEEK_CUR));
	say(to_c[1], 'g');
	hear(to_p[0]);
	memset(buf, 0, sizeof(buf));
	printf("parent reads %zd: %s\n", read(fd, buf, 8), buf);
	if (pwrite(fd, "pw", 2, 0) != 2)	/* O_APPEND is off again */
		return fail("pwrite");
	printf("parent offset after pwrite: %lld\n",
	       (long long)lseek(fd, 0, SEEK_CUR));
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return fail("wait");
	printf("child exit: %d\n", WEXITSTATUS(status));
	if (cat(path))
		return 1;
	/* Both at once on one description: every record whole. */
	snprintf(recs, sizeof(recs), "%s.records", path);
	fd = open(recs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fail("records");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(write_records(fd, 'c', RECORDS) ? 1 : 0);
	if (write_records(fd, 'p', RECORDS))
		return fail("parent's records");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return fail("wait");
	printf("offset: %lld, child exit %d\n", (long long)lseek(fd, 0, SEEK_CUR),
	       WEXITSTATUS(status));
	close(fd);
	check_records(recs);
	return 0;
}

#define EXEC_BYTES 65536

static int do_exec(const char *path, const char *self)
{
	static char data[EXEC_BYTES];
	char fdarg[16];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open");
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	if (write(fd, data, sizeof(data)) != (ssize_t)sizeof(data) ||
	    lseek(fd, 10, SEEK_SET) != 10)
		return fail("write");
	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	fflush(stdout);
	execl(self, self, "exec2", path, fdarg, (char *)NULL);
	return fail("exec");
}

/* The exec'd image: the inherited fd at its offset. */
static int exec2(const char *path, int fd)
{
	char buf[EXEC_BYTES];
	ssize_t n, total = 0;

	printf("inherited offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	if (read(fd, buf, 20) != 20)
		return fail("read");
	printf("read: %.20s\n", buf);
	if (write(fd, "EXEC", 4) != 4)
		return fail("write");
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	if (lseek(fd, 0, SEEK_SET) != 0)
		return fail("lseek");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	printf("read again: %zd\n", total);
	close(fd);
	(void)path;
	return 0;
}

static int spawn_case(const char *path)
{
	char cmd[256], out[64] = { 0 };
	char *argv[] = { "sh", "-c", cmd, NULL };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), status;
	pid_t pid;
	FILE *p;
	size_t n;

	if (fd < 0 || write(fd, "abc", 3) != 3)
		return fail("open");
	snprintf(cmd, sizeof(cmd), "printf X >&%d", fd);	/* at the offset */
	printf("system: %d\n", system(cmd));
	if (write(fd, "d", 1) != 1)
		return fail("write");
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	if (lseek(fd, 1, SEEK_SET) != 1)
		return fail("lseek");
	snprintf(cmd, sizeof(cmd), "cat <&%d", fd);	/* reads on from 1 */
	p = popen(cmd, "r");
	if (!p)
		return fail("popen");
	n = fread(out, 1, sizeof(out) - 1, p);
	printf("popen read %zu: %s, status %d\n", n, out, pclose(p));
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	snprintf(cmd, sizeof(cmd), "printf Y >&%d; "
		 "head -c 2 <&%d", fd, fd);
	fflush(stdout);
	if (lseek(fd, 2, SEEK_SET) != 2 ||
	    posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return fail("posix_spawn");
	printf("\nposix_spawn: %d, offset %lld\n", status,
	       (long long)lseek(fd, 0, SEEK_CUR));
	if (write(fd, "e", 1) != 1)
		return fail("write");
	/* File actions: handed off, so a program reading through the kernel
	 * (cat, its stdout our file) sees what we wrote. */
	{
		char *cargv[] = { "cat", (char *)path, NULL }, outp[4200];
		posix_spawn_file_actions_t fa;
		int ofd;

		snprintf(outp, sizeof(outp), "%s.out", path);
		ofd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (ofd < 0 || write(fd, "f", 1) != 1)
			return fail("open out");
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, ofd, 1);
		if (posix_spawnp(&pid, "cat", &fa, NULL, cargv, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid)
			return fail("posix_spawn with file actions");
		posix_spawn_file_actions_destroy(&fa);
		close(ofd);
		printf("posix_spawn with file actions: %d, cat wrote: ", status);
		fflush(stdout);
		if (cat(outp))
			return 1;
		printf("\n");
	}
	close(fd);
	return cat(path);
}

/* A child writes through the description it inherited and is killed. */
static int killed(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), ready[2], status;
	char buf[64] = { 0 };
	pid_t pid;

	if (fd < 0 || write(fd, "parent;", 7) != 7 || pipe(ready))
		return fail("open");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (write(fd, "child before the kill;", 22) != 22)
			_exit(1);
		say(ready[1], 'w');
		for (;;)
			pause();
	}
	hear(ready[0]);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return fail("wait");
	printf("child killed: %d\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	printf("offset: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	if (write(fd, "parent after;", 13) != 13)
		return fail("write");
	if (pread(fd, buf, sizeof(buf) - 1, 0) != 42)
		return fail("pread");
	printf("read: %s\n", buf);
	close(fd);
	return cat(path);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "exec2")) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		return exec2(argv[2], atoi(argv[3]));
	}
	if (argc != 3) {
		fprintf(stderr, "usage: preload_helper mmap|fork|fdlimit|cat|creds|broken|ofd|interleave|exec|spawn|killed|hold|append FILE\n");
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
	if (!strcmp(argv[1], "ofd"))
		return ofd_case(argv[2]);
	if (!strcmp(argv[1], "interleave"))
		return interleave(argv[2]);
	if (!strcmp(argv[1], "exec"))
		return do_exec(argv[2], "/proc/self/exe");
	if (!strcmp(argv[1], "spawn"))
		return spawn_case(argv[2]);
	if (!strcmp(argv[1], "killed"))
		return killed(argv[2]);
	if (!strcmp(argv[1], "hold"))
		return hold(argv[2]);
	if (!strcmp(argv[1], "append"))
		return append(argv[2]);
	fprintf(stderr, "preload_helper: unknown mode %s\n", argv[1]);
	return 2;
}
