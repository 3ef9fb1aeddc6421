/*
 * test_backing.c - the mappings' descriptors (backing.c): a closed file
 * does not cost the program its descriptors.
 *
 *   many_files_low_limit  under RLIMIT_NOFILE 256, 3000 files created,
 *                         written and closed one after another: every
 *                         pc_open succeeds, the library holds at most its
 *                         budget, and every file is on disk at the end;
 *   emfile_releases       the program itself takes every descriptor left:
 *                         an open(2) of the library meets EMFILE, releases
 *                         the closed mappings' descriptors and succeeds;
 *   closed_keep_pages     a closed mapping without descriptors keeps its
 *                         pages: reopened, it reads them without I/O; a
 *                         file changed behind it is revalidated instead;
 *   no_hidden_writer      a reader never holds the file open for
 *                         writing, nor a closed file once pc_cache_sync
 *                         wrote it back: a program read, or written and
 *                         closed, can be executed (no ETXTBSY); a
 *                         reader's descriptor upgraded for a writer reads
 *                         the writer's data from the disk.
 *
 * Cases that lower RLIMIT_NOFILE run in a child process (fork): it does
 * plain checks and reports by exit status, which the test asserts.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "inode.h"
#include "util.h"

#define PG 4096

/* Descriptors this process has open. */
static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

#define CHILD_FAIL(code, ...) do { \
	fprintf(stderr, "child: " __VA_ARGS__); \
	fprintf(stderr, "\n"); \
	_exit(code); \
} while (0)

struct limited {
	void (*fn)(void);
	rlim_t limit;
};

static void limited_main(void *arg)
{
	struct limited *l = arg;
	struct rlimit rl = { l->limit, l->limit };

	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		CHILD_FAIL(90, "setrlimit: %s", strerror(errno));
	l->fn();
}

/* Run @fn in a child under RLIMIT_NOFILE @limit; its exit status is 0. */
static void in_child(void (*fn)(void), rlim_t limit)
{
	struct limited l = { fn, limit };

	tu_in_child(limited_main, &l);
}

static const char *nth(unsigned i)
{
	char name[32];

	snprintf(name, sizeof(name), "many-%u", i);
	return tu_path(name);
}

#define MANY 3000
#define MANY_LEN 5000	/* a whole page and a partial one */

static void many_files(void)
{
	static unsigned char buf[MANY_LEN];
	unsigned most = 0;
	pc_cache *c;
	uint64_t v;
	int e;

	if ((e = pc_cache_create(&c, "memory=8M")) != 0)
		CHILD_FAIL(2, "create: %d", e);
	if (c->fd_budget != 256 / 4)
		CHILD_FAIL(3, "fd budget %u, want 64", c->fd_budget);
	for (unsigned i = 0; i < MANY; i++) {
		pc_file *f;

		tu_pattern(buf, sizeof(buf), i, 0);
		if ((e = pc_open(c, nth(i), O_RDWR | O_CREAT | O_TRUNC, 0644, &f)))
			CHILD_FAIL(4, "pc_open of file %u: %s", i, strerror(-e));
		if (pc_pwrite(f, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			CHILD_FAIL(5, "pc_pwrite of file %u", i);
		if ((e = pc_close(f)))
			CHILD_FAIL(6, "pc_close of file %u: %d", i, e);
		most = pc_max(most, open_fds());
	}
	pc_vmstat(c, "backing_fd_release", &v);
	printf("  %u files under RLIMIT_NOFILE 256: at most %u descriptors "
	       "open, %llu released by closed mappings\n", MANY, most,
	       (unsigned long long)v);
	/* stdio, the ring, the budget, and one open's own */
	if (most > 3 + 2 + c->fd_budget + 4)
		CHILD_FAIL(7, "%u descriptors open", most);
	if (v < MANY - c->fd_budget)
		CHILD_FAIL(8, "%llu released", (unsigned long long)v);
	if ((e = pc_cache_destroy(c)))
		CHILD_FAIL(9, "destroy: %d", e);
}

static void test_many_files_low_limit(void **state)
{
	unsigned char want[MANY_LEN], got[MANY_LEN + 1];

	(void)state;
	in_child(many_files, 256);
	for (unsigned i = 0; i < MANY; i++) {
		int fd = open(nth(i), O_RDONLY);

		assert_true(fd >= 0);
		tu_pattern(want, sizeof(want), i, 0);
		assert_int_equal(read(fd, got, sizeof(got)), MANY_LEN);
		assert_memory_equal(got, want, MANY_LEN);
		close(fd);
		unlink(nth(i));
	}
}

#define FEW 40

static void emfile(void)
{
	unsigned char buf[PG];
	int mine[256], nmine = 0;
	uint64_t emfiles;
	pc_cache *c;
	pc_file *f;
	int e;

	if ((e = pc_cache_create(&c, "memory=4M")) != 0)
		CHILD_FAIL(2, "create: %d", e);
	memset(buf, 'e', sizeof(buf));
	for (unsigned i = 0; i < FEW; i++) {	/* closed, clean, holding fds */
		if ((e = pc_open(c, nth(i), O_RDWR | O_CREAT | O_TRUNC, 0644, &f)) ||
		    pc_pwrite(f, buf, PG, 0) != PG || pc_fsync(f) || pc_close(f))
			CHILD_FAIL(3, "file %u: %d", i, e);
	}
	if (c->nr_closed_fds != c->fd_budget)
		CHILD_FAIL(4, "%u closed mappings hold fds, budget %u",
			   c->nr_closed_fds, c->fd_budget);
	/* The program takes every descriptor there is. */
	while (nmine < 256 && (mine[nmine] = open("/dev/null", O_RDONLY)) >= 0)
		nmine++;
	if (nmine == 256 || errno != EMFILE)
		CHILD_FAIL(5, "could not run out of descriptors");
	close(mine[--nmine]);	/* one left for the open(2) of the path */
	if ((e = pc_open(c, nth(FEW), O_RDWR | O_CREAT | O_TRUNC, 0644, &f)))
		CHILD_FAIL(6, "pc_open at EMFILE: %s", strerror(-e));
	pc_vmstat(c, "backing_fd_emfile", &emfiles);
	if (emfiles < 1 || c->nr_closed_fds != 0)
		CHILD_FAIL(7, "emfile %llu, %u closed mappings hold fds",
			   (unsigned long long)emfiles, c->nr_closed_fds);
	if (pc_pwrite(f, buf, 100, 0) != 100 || (e = pc_fsync(f)) || pc_close(f))
		CHILD_FAIL(8, "write at EMFILE: %d", e);
	while (nmine)
		close(mine[--nmine]);
	if ((e = pc_cache_destroy(c)))
		CHILD_FAIL(9, "destroy: %d", e);
}

static void test_emfile_releases(void **state)
{
	struct stat st;

	(void)state;
	in_child(emfile, 64);	/* budget 16, under FEW */
	assert_int_equal(stat(nth(FEW), &st), 0);
	assert_int_equal(st.st_size, 100);
	for (unsigned i = 0; i <= FEW; i++)
		unlink(nth(i));
}

/*
 * Budget 16 (RLIMIT_NOFILE 64, in a child): file 0 is written, fsynced and
 * closed, then 16 more: file 0's mapping lets its fd go.  Reopened, it
 * reads its pages from the cache (no pgpgin); changed behind the cache's
 * back while closed, it is revalidated (stale_opens) and reads the change.
 */
static void closed_pages(void)
{
	unsigned char buf[4 * PG], back[4 * PG];
	uint64_t in0, in1, stale;
	struct pc_mapping *m;
	pc_cache *c;
	pc_file *f;
	int e, fd;

	if ((e = pc_cache_create(&c, "memory=4M")) != 0)
		CHILD_FAIL(2, "create: %d", e);
	tu_pattern(buf, sizeof(buf), 77, 0);
	if (pc_open(c, nth(0), O_RDWR | O_CREAT | O_TRUNC, 0644, &f) ||
	    pc_pwrite(f, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    pc_fsync(f))
		CHILD_FAIL(3, "file 0");
	m = f->mapping;
	pc_close(f);
	for (unsigned i = 1; i <= c->fd_budget; i++) {
		if (pc_open(c, nth(i), O_RDWR | O_CREAT | O_TRUNC, 0644, &f) ||
		    pc_pwrite(f, buf, 10, 0) != 10 || pc_close(f))
			CHILD_FAIL(4, "file %u", i);
	}
	if (pc__bk(m)->fd != -1 || atomic_load(&m->nr_pages) != 4)
		CHILD_FAIL(5, "file 0: fd %d, %llu pages", pc__bk(m)->fd,
			   (unsigned long long)atomic_load(&m->nr_pages));
	pc_vmstat(c, "pgpgin", &in0);
	if (pc_open(c, nth(0), O_RDONLY, 0, &f) ||
	    pc_pread(f, back, sizeof(back), 0) != (ssize_t)sizeof(back) ||
	    memcmp(back, buf, sizeof(buf)) != 0)
		CHILD_FAIL(6, "reopened file 0 reads wrong");
	pc_vmstat(c, "pgpgin", &in1);
	if (f->mapping != m || pc__bk(m)->fd < 0 || in1 != in0)
		CHILD_FAIL(7, "file 0 reopened: same mapping %d, fd %d, "
			   "pgpgin +%llu", f->mapping == m, pc__bk(m)->fd,
			   (unsigned long long)(in1 - in0));
	pc_close(f);
	for (unsigned i = 1; i <= c->fd_budget; i++) {	/* file 0 lets go */
		if (pc_open(c, nth(i), O_RDWR, 0, &f) || pc_close(f))
			CHILD_FAIL(8, "file %u again", i);
	}
	if (pc__bk(m)->fd != -1)
		CHILD_FAIL(9, "file 0 kept fd %d", pc__bk(m)->fd);
	/* Another writer changes file 0 while the cache holds no fd of it. */
	fd = open(nth(0), O_WRONLY);
	if (fd < 0 || pwrite(fd, "other", 5, 100) != 5 || close(fd))
		CHILD_FAIL(10, "write around the cache");
	memcpy(buf + 100, "other", 5);
	pc_vmstat(c, "stale_opens", &stale);
	if (pc_open(c, nth(0), O_RDONLY, 0, &f) ||
	    pc_pread(f, back, sizeof(back), 0) != (ssize_t)sizeof(back) ||
	    memcmp(back, buf, sizeof(buf)) != 0)
		CHILD_FAIL(11, "file 0 changed: reads the old data");
	pc_vmstat(c, "stale_opens", &in0);
	if (in0 != stale + 1)
		CHILD_FAIL(12, "stale_opens %llu -> %llu",
			   (unsigned long long)stale, (unsigned long long)in0);
	pc_close(f);
	if ((e = pc_cache_destroy(c)))
		CHILD_FAIL(13, "destroy: %d", e);
}

static void test_closed_keep_pages(void **state)
{
	(void)state;
	in_child(closed_pages, 64);
	for (unsigned i = 0; i <= 16; i++)
		unlink(nth(i));
}

/* Descriptors of this process open for writing on the file of @st. */
static unsigned writers_of(const struct stat *st)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char info[64], line[128];
		struct stat fst;
		unsigned flags = 0;
		FILE *fi;
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fstat(fd, &fst) != 0 ||
		    fst.st_dev != st->st_dev || fst.st_ino != st->st_ino)
			continue;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%d", fd);
		fi = fopen(info, "r");
		if (!fi)
			continue;
		while (fgets(line, sizeof(line), fi))
			if (sscanf(line, "flags: %o", &flags) == 1)
				break;
		fclose(fi);
		n += (flags & O_ACCMODE) != O_RDONLY;
	}
	closedir(d);
	return n;
}

/* execv(@path) in a child: its exit status, or 128 + errno of execv. */
static int run_program(const char *path)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		_exit(128 + errno);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* A copy of /bin/true at @path, written behind the cache. */
static void copy_true(const char *path)
{
	char buf[65536];
	int in = open("/bin/true", O_RDONLY), out;
	ssize_t n;

	assert_true(in >= 0);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

static void test_no_hidden_writer(void **state)
{
	const char *prog = tu_path("prog"), *data = tu_path("data");
	char page[PG], got[PG];
	pc_cache *c = tu_cache("memory=4M");
	pc_file *r, *w;
	struct stat st;

	(void)state;
	copy_true(prog);
	assert_int_equal(stat(prog, &st), 0);
	/* read: a read-only descriptor, and the program still runs */
	assert_int_equal(pc_open(c, prog, O_RDONLY, 0, &r), 0);
	assert_int_equal(pc_pread(r, page, PG, 0), PG);
	assert_true(st.st_size % PG != 0);	/* a tail: no writer for it */
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(writers_of(&st), 0);
	assert_int_equal(run_program(prog), 0);
	/* a writer of the same bytes: the descriptor is upgraded ... */
	assert_int_equal(pc_open(c, prog, O_RDWR, 0, &w), 0);
	assert_true(writers_of(&st) >= 1);
	assert_int_equal(pc_pwrite(w, page, PG, 0), PG);
	assert_int_equal(pc_close(w), 0);
	assert_int_equal(pc_close(r), 0);
	/* ... and let go once the closed file is written back */
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(writers_of(&st), 0);
	assert_int_equal(run_program(prog), 0);
	/* a writer alone, its pages dirty at its close: the same */
	assert_int_equal(pc_open(c, prog, O_WRONLY, 0, &w), 0);
	assert_int_equal(pc_pwrite(w, page, PG, 0), PG);
	assert_int_equal(pc_close(w), 0);
	assert_int_equal(pc_cache_sync(c), 0);
	assert_int_equal(writers_of(&st), 0);
	assert_int_equal(run_program(prog), 0);

	/* the reader's old descriptor retired, the new one reads the disk */
	tu_make_file(data, 4, 1);
	assert_int_equal(pc_open(c, data, O_RDONLY, 0, &r), 0);
	assert_int_equal(pc_pread(r, got, PG, PG), PG);
	assert_int_equal(pc_open(c, data, O_RDWR, 0, &w), 0);
	tu_pattern(page, PG, 7, PG);
	assert_int_equal(pc_pwrite(w, page, PG, PG), PG);
	assert_int_equal(pc_fsync(w), 0);
	assert_int_equal(pc_fadvise(r, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(pc_pread(r, got, PG, PG), PG);
	assert_memory_equal(got, page, PG);
	assert_int_equal(pc_close(w), 0);
	assert_int_equal(pc_close(r), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(prog);
	unlink(data);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_keep_pages),
		cmocka_unit_test(test_emfile_releases),
		cmocka_unit_test(test_many_files_low_limit),
		cmocka_unit_test(test_no_hidden_writer),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
