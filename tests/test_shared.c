/*
 * test_shared.c - one cache for many processes (shared=on, share.c): a
 * forked child goes on using the parent's cache and files, and the
 * processes see one cache as threads do.
 *
 *   fork_coherence   writes of each process read by the other at once,
 *                    through handles opened before and after the fork
 *   random_model     3 processes x 2 threads of random byte writes and
 *                    reads on two files larger than the 2M budget, each
 *                    worker on its own pages interleaved with the
 *                    others' (one tree, one LRU, refaults across
 *                    processes), checked against each worker's model
 *                    during the run and all of them on the disk after
 *   one_budget       children read files three times the budget: the
 *                    cache's pages never pass it, and the counters a
 *                    child moved are the parent's to read
 *   killed_writer    a child writes a file only it opened and is killed
 *                    with SIGKILL: every byte is on the disk after the
 *                    creator's sync (the child had sent its descriptor);
 *                    the dead child is reaped once, its file closed
 *   killed_escrow    the same for three files on a device whose flusher
 *                    the home runs already: their descriptors went to the
 *                    escrow (no wake-up of the home), and every byte is
 *                    on the disk after the home's sync all the same
 *   errors_once      a write error met by a child's fsync is reported
 *                    once to each open file, in either process: the
 *                    child's file and the creator's, then no more
 *   spawn            pc_cache_spawn's cache process serves a named cache
 *                    while anyone uses it: the caller leaves, a child it
 *                    forked is killed, and its data still reaches the
 *                    disk when the cache process ends the cache
 *   send_unlocked    a child's open waits in sendmsg (the cache process
 *                    stopped, its queue full) holding no lock of the
 *                    cache: every mapping's disk_size_lock can be taken
 *   detach           a child's pc_cache_destroy leaves the cache working;
 *                    pc_cache_processes counts who is attached
 *   attach_exec      a program exec'd joins a named cache by its name
 *                    (this test program again, with arguments): it reads
 *                    what the creator wrote and writes what the creator
 *                    reads at once, and a file only it opened is written
 *                    back by the creator after the child was killed; a
 *                    program with something of its own at the cache's
 *                    address is refused (-EEXIST), and so is a name that
 *                    is gone (-ENOENT)
 *   remove           pc_cache_remove: a bad name, none, one in use (here,
 *                    and served by a live home in another process), and
 *                    a stale one whose home was killed, removed so that
 *                    a new cache takes the name
 *   no_memory        no memory for this process's descriptors of a new
 *                    mapping (local.c, injected): the open says -ENOMEM,
 *                    the next one works
 *   table            the process's one table of caches (local.c): a
 *                    page of a private and of a shared cache finds its
 *                    cache
 *   other_layout     a region whose layout number is not this build's
 *                    REGION_LAYOUT (share.c) is refused by attach and
 *                    remove (-EPROTO) and left alone; this build's is
 *                    taken (here: -EBUSY, mapped already)
 *
 * A model lives in an anonymous shared mapping so the parent can check
 * what the children wrote.  Each random test prints its seed.  Under TSan
 * a child of this multi-threaded process may not start threads
 * (die_after_fork): the caches use the sync backend (no completion
 * thread), and the cases whose children start threads of their own
 * (random_model; errors_once's fault rules need none) are skipped;
 * test_ebr and test_pagewait cover the shared structures' races.
 *
 * A process killed holding what the reaper must give back (its I/O, its
 * locks, its files) is test_death's; the kills here are of processes
 * whose files the home writes back (killed_writer, killed_escrow, spawn,
 * attach_exec).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagecache.h"
#include "util.h"
#include "internal.h"
#include "io.h"
#include "share.h"
#include "shm.h"

#define PG 4096
#ifdef PC_TSAN
#define IO " io=sync"
#else
#define IO ""
#endif

static void *shared_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* ------------------------------------------------------------------ */

static void test_fork_coherence(void **state)
{
	const char *path = tu_path("coherent");
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	unsigned char buf[PG], want[2 * PG];
	pc_file *f;
	pid_t pid;
	int status, go[2], done[2];

	(void)state;
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 &f), 0);
	memset(want, 'p', PG);
	memset(want + PG, 'c', PG);
	assert_int_equal(pc_pwrite(f, want, PG, 0), PG);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	assert_int_equal(pc_cache_processes(c), 1);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_file *g;
		char b;

		/* The parent's handle, and one of its own. */
		if (pc_pread(f, buf, PG, 0) != PG || memcmp(buf, want, PG))
			_exit(2);
		if (pc_open(c, path, O_RDWR, 0, &g) != 0)
			_exit(3);
		if (pc_pwrite(g, want + PG, PG, PG) != PG)
			_exit(4);
		if (write(done[1], "w", 1) != 1)
			_exit(5);
		/* The parent's second write, seen without a reopen. */
		if (read(go[0], &b, 1) != 1)
			_exit(6);
		if (pc_pread(g, buf, 16, 100) != 16 ||
		    memcmp(buf, "second write ...", 16))
			_exit(7);
		pc_close(g);
		_exit(0);
	}
	{
		char b;

		assert_int_equal(read(done[0], &b, 1), 1);
	}
	assert_int_equal(pc_cache_processes(c), 2);
	assert_int_equal(pc_pread(f, buf, PG, PG), PG);	/* the child's */
	assert_memory_equal(buf, want + PG, PG);
	assert_int_equal(pc_pwrite(f, "second write ...", 16, 100), 16);
	memcpy(want + 100, "second write ...", 16);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	tu_wait_processes(c, 1);
	assert_int_equal(pc_cache_sync(c), 0);
	tu_disk_check(path, want, sizeof(want));
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/* ------------------------------------------------------------------ */

#define RM_PROCS 3
#define RM_THREADS 2
#define RM_WORKERS (RM_PROCS * RM_THREADS)
#define RM_FILES 2
#define RM_PAGES 1536		/* 6 MiB a file: three budgets of two */
#define RM_OPS 3000

struct rm {
	pc_cache *c;
	uint64_t seed;
	char path[RM_FILES][512];
	pc_file *f[RM_FILES];		/* opened by the parent before fork */
	unsigned char *model[RM_FILES];	/* shared mapping: RM_PAGES pages */
};

struct rm_worker {
	struct rm *x;
	unsigned w;			/* worker 0 .. RM_WORKERS-1 */
	pc_file *own[RM_FILES];		/* opened by the child */
};

/* Worker @w owns the pages p with p % RM_WORKERS == w. */
static uint64_t rm_page(unsigned w, uint64_t k)
{
	return k * RM_WORKERS + w;
}

static void *rm_thread(void *arg)
{
	struct rm_worker *wk = arg;
	struct rm *x = wk->x;
	uint64_t rs = x->seed ^ (0x9e3779b97f4a7c15ull * (wk->w + 1));
	unsigned char buf[2 * PG];

	for (unsigned op = 0; op < RM_OPS; op++) {
		unsigned fi = (unsigned)(tu_rand(&rs) % RM_FILES);
		uint64_t page = rm_page(wk->w, tu_rand(&rs) %
					(RM_PAGES / RM_WORKERS));
		size_t off = (size_t)(tu_rand(&rs) % PG);
		size_t len = 1 + (size_t)(tu_rand(&rs) % (PG - off));
		off_t at = (off_t)(page * PG + off);
		/* Half through the parent's handle, half through ours. */
		pc_file *f = tu_rand(&rs) & 1 ? x->f[fi] : wk->own[fi];
		unsigned char *m = x->model[fi] + at;

		if (tu_rand(&rs) % 3 == 0) {	/* a write */
			for (size_t i = 0; i < len; i++)
				buf[i] = (unsigned char)tu_rand(&rs);
			assert_int_equal(pc_pwrite(f, buf, len, at),
					 (ssize_t)len);
			memcpy(m, buf, len);
		} else {			/* a read */
			assert_int_equal(pc_pread(f, buf, len, at),
					 (ssize_t)len);
			if (memcmp(buf, m, len))
				fail_msg("worker %u: file %u page %" PRIu64
					 " +%zu: read differs from the model",
					 wk->w, fi, page, off);
		}
	}
	return NULL;
}

static void rm_child(unsigned i, void *arg)
{
	struct rm *x = arg;
	struct rm_worker wk[RM_THREADS];
	pthread_t t[RM_THREADS];

	for (unsigned k = 0; k < RM_THREADS; k++) {
		wk[k].x = x;
		wk[k].w = i * RM_THREADS + k;
		for (unsigned fi = 0; fi < RM_FILES; fi++)
			assert_int_equal(pc_open(x->c, x->path[fi], O_RDWR, 0,
						 &wk[k].own[fi]), 0);
		assert_int_equal(pthread_create(&t[k], NULL, rm_thread,
						&wk[k]), 0);
	}
	for (unsigned k = 0; k < RM_THREADS; k++) {
		tu_join(t[k]);
		for (unsigned fi = 0; fi < RM_FILES; fi++)
			assert_int_equal(pc_close(wk[k].own[fi]), 0);
	}
}

static void test_random_model(void **state)
{
	struct rm *x;
	size_t bytes = (size_t)RM_PAGES * PG;

	(void)state;
#ifdef PC_TSAN
	skip();		/* the children start threads (see the top) */
#endif
	x = shared_buf(sizeof(*x));
	x->seed = tu_seed("shared random_model");
	x->c = tu_cache("shared=on memory=2M" IO);
	for (unsigned fi = 0; fi < RM_FILES; fi++) {
		snprintf(x->path[fi], sizeof(x->path[fi]), "%s",
			 tu_path(fi ? "rm1" : "rm0"));
		tu_make_file(x->path[fi], RM_PAGES, x->seed + fi);
		x->model[fi] = shared_buf(bytes);
		tu_pattern(x->model[fi], bytes, x->seed + fi, 0);
		assert_int_equal(pc_open(x->c, x->path[fi], O_RDWR, 0,
					 &x->f[fi]), 0);
	}
	tu_in_children(RM_PROCS, rm_child, x);
	/* The children's writes, read here, then on the disk. */
	for (unsigned fi = 0; fi < RM_FILES; fi++) {
		unsigned char *got = malloc(bytes);

		assert_non_null(got);
		for (size_t at = 0; at < bytes; at += 64 * 1024)
			assert_int_equal(pc_pread(x->f[fi], got + at, 64 * 1024,
						  (off_t)at), 64 * 1024);
		assert_memory_equal(got, x->model[fi], bytes);
		free(got);
	}
	assert_true(tu_vm(x->c, "nr_file_pages") <= 512);
	assert_int_equal(pc_cache_sync(x->c), 0);
	for (unsigned fi = 0; fi < RM_FILES; fi++) {
		tu_disk_check(x->path[fi], x->model[fi], bytes);
		assert_int_equal(pc_close(x->f[fi]), 0);
		munmap(x->model[fi], bytes);
	}
	assert_int_equal(pc_cache_destroy(x->c), 0);
	munmap(x, sizeof(*x));
}

/* ------------------------------------------------------------------ */

#define OB_PAGES 512		/* 2 MiB a file; the budget is 2M */
#define OB_CHILDREN 3

struct ob {
	pc_cache *c;
	char path[OB_CHILDREN][512];
	uint64_t seed;
	_Atomic uint64_t max_seen;
};

static void ob_child(unsigned i, void *arg)
{
	struct ob *x = arg;
	pc_file *f = tu_open_ro(x->c, x->path[i]);

	for (uint64_t p = 0; p < OB_PAGES; p++) {
		uint64_t now;

		tu_read_page(f, p, x->seed + i);
		now = tu_vm(x->c, "nr_file_pages");
		if (now > atomic_load(&x->max_seen))
			atomic_store(&x->max_seen, now);
	}
	assert_int_equal(pc_close(f), 0);
}

static void test_one_budget(void **state)
{
	struct ob *x = shared_buf(sizeof(*x));
	uint64_t in0;

	(void)state;
	x->seed = tu_seed("shared one_budget");
	x->c = tu_cache("shared=on memory=2M" IO);
	for (unsigned i = 0; i < OB_CHILDREN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ob%u", i);
		snprintf(x->path[i], sizeof(x->path[i]), "%s", tu_path(name));
		tu_make_file(x->path[i], OB_PAGES, x->seed + i);
	}
	in0 = tu_vm(x->c, "pgpgin");
	tu_in_children(OB_CHILDREN, ob_child, x);
	/* 512 frames in all, whoever reads. */
	assert_true(atomic_load(&x->max_seen) <= 512);
	assert_true(tu_vm(x->c, "nr_file_pages") <= 512);
	assert_true(tu_vm(x->c, "nr_file_pages") +
		    tu_vm(x->c, "nr_free_pages") <= 512);
	/* Every page a child read came in once at least, counted here. */
	assert_true(tu_vm(x->c, "pgpgin") - in0 >= OB_CHILDREN * OB_PAGES);
	assert_int_equal(pc_cache_destroy(x->c), 0);
	munmap(x, sizeof(*x));
}

/* ------------------------------------------------------------------ */

#define KW_PAGES 256

static void test_killed_writer(void **state)
{
	const char *path = tu_path("killed");
	pc_cache *c = tu_cache("shared=on memory=8M" IO);
	uint64_t seed = tu_seed("shared killed_writer");
	size_t bytes = (size_t)KW_PAGES * PG + 123;	/* a partial tail */
	unsigned char *want = malloc(bytes);
	uint64_t sent0 = tu_vm(c, "shared_fds_sent");
	uint64_t escrowed0 = tu_vm(c, "shared_fds_escrowed");
	uint64_t reaped0 = tu_vm(c, "shared_procs_reaped");
	uint64_t files0 = tu_vm(c, "shared_files_reaped");
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	assert_non_null(want);
	tu_pattern(want, bytes, seed, 0);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_file *f;

		if (pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f))
			_exit(2);
		if (pc_pwrite(f, want, bytes, 0) != (ssize_t)bytes)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pause();	/* killed here, the file never closed */
		_exit(5);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	tu_kill_wait(pid);
	assert_true(tu_vm(c, "shared_fds_sent") - sent0 >= 1);
	/* The child made the device's bdi: the home had to start its
	 * flusher, so the descriptor went to its socket, not the escrow. */
	assert_int_equal(tu_vm(c, "shared_fds_escrowed") - escrowed0, 0);
	tu_wait_processes(c, 1);	/* reaped it */
	assert_int_equal(tu_vm(c, "shared_procs_reaped") - reaped0, 1);
	assert_int_equal(tu_vm(c, "shared_files_reaped") - files0, 1);
	/* Nothing written yet needs to be: the creator writes it all. */
	assert_int_equal(pc_cache_sync(c), 0);
	tu_disk_check(path, want, bytes);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(want);
	close(ready[0]);
	close(ready[1]);
}

#define KE_FILES 3

static void test_killed_escrow(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=8M" IO);
	uint64_t seed = tu_seed("shared killed_escrow");
	size_t bytes = 37 * PG + 5;
	unsigned char *want[KE_FILES];
	char path[KE_FILES][256];
	uint64_t sent0, escrowed0;
	pc_file *f;
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	/* The home opens a file on the device first: its flusher runs. */
	assert_int_equal(pc_open(c, tu_path("escrow-home"), O_RDWR | O_CREAT |
				 O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_close(f), 0);
	for (int i = 0; i < KE_FILES; i++) {
		want[i] = malloc(bytes);
		assert_non_null(want[i]);
		tu_pattern(want[i], bytes, seed + (uint64_t)i, 0);
		snprintf(path[i], sizeof(path[i]), "%s%d", tu_path("escrow"), i);
	}
	sent0 = tu_vm(c, "shared_fds_sent");
	escrowed0 = tu_vm(c, "shared_fds_escrowed");
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < KE_FILES; i++) {
			pc_file *g;

			if (pc_open(c, path[i], O_RDWR | O_CREAT | O_TRUNC,
				    0644, &g))
				_exit(2);
			if (pc_pwrite(g, want[i], bytes, 0) != (ssize_t)bytes)
				_exit(3);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pause();	/* killed here, the files never closed */
		_exit(5);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	tu_kill_wait(pid);
	assert_int_equal(tu_vm(c, "shared_fds_sent") - sent0, KE_FILES);
	assert_int_equal(tu_vm(c, "shared_fds_escrowed") - escrowed0, KE_FILES);
	tu_wait_processes(c, 1);
	/* The home's sync takes what the escrow still holds. */
	assert_int_equal(pc_cache_sync(c), 0);
	for (int i = 0; i < KE_FILES; i++) {
		tu_disk_check(path[i], want[i], bytes);
		free(want[i]);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

/* ------------------------------------------------------------------ */

static void test_errors_once(void **state)
{
	const char *path = tu_path("errors");
	pc_cache *c = tu_cache("shared=on memory=4M io=fault");
	unsigned char buf[PG];
	pc_file *f;
	pid_t pid;
	int status;

	(void)state;
	tu_make_file(path, 4, 7);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pc_io_fault eio = { .op = PC_IO_WRITE, .fd = -1,
					   .error = EIO, .count = 1 };
		pc_file *g;

		memset(buf, 'e', sizeof(buf));
		if (pc_open(c, path, O_RDWR, 0, &g) ||
		    pc_pread(g, buf, PG, 3 * PG) != PG)	/* our I/O made */
			_exit(2);
		if (pc__io_fault_add(pc__local(c)->io, &eio))
			_exit(3);
		if (pc_pwrite(g, buf, PG, 0) != PG)
			_exit(4);
		if (pc_fsync(g) != -EIO)	/* the error, once */
			_exit(5);
		if (pc_fsync(g) != 0)		/* rewritten: fine now */
			_exit(6);
		pc_close(g);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The creator's file saw it too: once. */
	assert_int_equal(pc_fsync(f), -EIO);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */

/*
 * pc_cache_spawn: a cache process of its own serves the named cache.  The
 * caller joins it, a child writes a file only it opened and is killed;
 * the caller leaves before the child dies.  The cache process outlives
 * both, reaps the child, and when no one is left writes everything back
 * and removes the name.  Bad calls are refused.
 */
static void test_spawn(void **state)
{
#ifdef PC_TSAN
	skip();		/* the cache process starts threads (see the top) */
#endif
	const char *path = tu_path("spawned");
	uint64_t seed = tu_seed("shared spawn");
	size_t bytes = 5 * PG + 77;
	unsigned char *want = malloc(bytes), *got = malloc(bytes + 1);
	char name[64], cfg[128], shm[128];
	int ready[2], fd;
	pc_cache *c;
	pid_t pid;
	char b;

	(void)state;
	assert_non_null(want);
	assert_non_null(got);
	tu_pattern(want, bytes, seed, 0);
	snprintf(name, sizeof(name), "spawn-%d", (int)getpid());
	snprintf(shm, sizeof(shm), "/dev/shm/pagecache-%s", name);
	snprintf(cfg, sizeof(cfg), "shared=on memory=4M name=%s", name);
	assert_int_equal(pc_cache_spawn(NULL), -EINVAL);
	assert_int_equal(pc_cache_spawn("shared=on memory=4M"), -EINVAL);
	assert_int_equal(pc_cache_spawn("memory=4M name=x"), -EINVAL);
	assert_int_equal(pc_cache_spawn(cfg), 0);
	assert_int_equal(pc_cache_spawn(cfg), -EEXIST);
	assert_int_equal(pc_cache_attach(&c, name), 0);
	assert_int_equal(pc_cache_processes(c), 2);	/* it and us */
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_file *f;

		if (pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f))
			_exit(2);
		if (pc_pwrite(f, want, bytes, 0) != (ssize_t)bytes)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pause();	/* killed here, nothing written back */
		_exit(5);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &b, 1), 1);
	assert_int_equal(pc_cache_destroy(c), 0);	/* we only leave */
	assert_int_equal(access(shm, F_OK), 0);		/* it serves on */
	tu_kill_wait(pid);
	while (access(shm, F_OK) == 0)	/* until its cache process ends it */
		tu_sleep_us(10000);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, bytes + 1, 0), (ssize_t)bytes);
	close(fd);
	assert_memory_equal(got, want, bytes);
	assert_int_equal(pc_cache_attach(&c, name), -ENOENT);
	close(ready[0]);
	free(want);
	free(got);
}

/* ------------------------------------------------------------------ */

#define SEND_FILES 64

/* Is @pid blocked in sendmsg(2)?  (/proc/PID/syscall: its number first.) */
static bool in_sendmsg(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return atoi(buf) == SYS_sendmsg && buf[0] != 'r';
}

/*
 * Until every thread of @pid is stopped: kill(SIGSTOP) returns before
 * they are (one thread of the process starts the stop when it next runs,
 * and the others stop after it), so a thread of a loaded machine's home
 * could still take a message meanwhile, holding its locks as it stops.
 */
static void wait_stopped(pid_t pid)
{
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;
		bool all = true;

		assert_non_null(d);
		while ((e = readdir(d))) {
			char path[384], buf[512], *p;
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f) &&
			    (p = strrchr(buf, ')')) && p[1] && p[2] != 'T')
				all = false;
			fclose(f);
		}
		closedir(d);
		if (all)
			return;
		tu_sleep_us(500);
	}
}

/*
 * A process sending a descriptor home holds no lock of the cache while the
 * send may wait.  The cache process is stopped, so its socket's queue
 * fills and a child's open blocks in sendmsg; meanwhile every mapping's
 * disk_size_lock is free (with mappings_lock held, as a last close holds
 * it).  A sender that held its mapping's disk_size_lock across the send
 * hung PostgreSQL: a backend's last close waited for it under
 * mappings_lock, which the home's service thread waited for.  Once the
 * cache process goes on, every open ends and every descriptor was sent.
 */
static void test_send_unlocked(void **state)
{
#ifdef PC_TSAN
	skip();		/* the cache process starts threads (see the top) */
#endif
	char name[64], cfg[128];
	int status, done[2];
	unsigned opened = 0, locked = 0, free_locks = 0;
	uint64_t sent0;
	pc_cache *c;
	pid_t home, pid;
	char b;

	(void)state;
	snprintf(name, sizeof(name), "send-%d", (int)getpid());
	snprintf(cfg, sizeof(cfg), "shared=on memory=4M name=%s", name);
	assert_int_equal(pc_cache_spawn(cfg), 0);
	assert_int_equal(pc_cache_attach(&c, name), 0);
	home = pc__share_home_pid(c);
	assert_true(home > 0 && home != getpid());
	sent0 = tu_vm(c, "shared_fds_sent");
	assert_int_equal(pipe(done), 0);
	assert_int_equal(kill(home, SIGSTOP), 0);
	wait_stopped(home);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(done[0]);
		for (unsigned i = 0; i < SEND_FILES; i++) {
			char file[32];
			pc_file *f;

			snprintf(file, sizeof(file), "send%02u", i);
			if (pc_open(c, tu_path(file), O_RDWR | O_CREAT, 0644, &f))
				_exit(2);
			if (write(done[1], "o", 1) != 1)
				_exit(3);
		}
		_exit(0);	/* its files closed for it by the reaper */
	}
	close(done[1]);
	/* Until the child waits in sendmsg (the queue is full), or has
	 * opened them all (a queue longer than SEND_FILES: said below). */
	while (!in_sendmsg(pid) && opened < SEND_FILES) {
		struct pollfd p = { done[0], POLLIN, 0 };

		if (poll(&p, 1, 1) == 1 && read(done[0], &b, 1) == 1)
			opened++;
	}
	if (opened == SEND_FILES)
		printf("   the home's queue held %u messages: nothing waited\n",
		       opened);
	pc__lock(&c->mappings_lock);
	for (unsigned i = 0; i < c->hash_size; i++)
		for (struct pc_mapping *m = c->hash[i]; m; m = m->hash_next) {
			if (pc__trylock(&m->disk_size_lock)) {
				pc__unlock(&m->disk_size_lock);
				free_locks++;
			}
			locked++;
		}
	pc__unlock(&c->mappings_lock);
	if (free_locks < locked) {	/* the home and child go, then fail */
		kill(pid, SIGKILL);
		kill(home, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("%u of %u mappings' disk_size_lock held while the "
			 "child waited in sendmsg", locked - free_locks, locked);
	}
	assert_true(locked >= 1);
	assert_int_equal(kill(home, SIGCONT), 0);
	while (read(done[0], &b, 1) == 1)
		opened++;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(opened, SEND_FILES);
	assert_true(tu_vm(c, "shared_fds_sent") - sent0 >= SEND_FILES);
	assert_int_equal(pc_cache_destroy(c), 0);	/* we leave; it ends */
	close(done[0]);
}

static void detach_child(unsigned i, void *arg)
{
	pc_cache *c = arg;
	pc_file *f;
	char buf[8];

	(void)i;
	assert_int_equal(pc_open(c, tu_path("detach"), O_RDWR, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, "child!!!", 8, 0), 8);
	assert_int_equal(pc_pread(f, buf, 8, 0), 8);
	assert_memory_equal(buf, "child!!!", 8);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);	/* detaches */
}

static void test_detach(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	pc_file *f;
	char buf[8];

	(void)state;
	tu_make_file(tu_path("detach"), 4, 1);
	tu_in_children(2, detach_child, c);
	tu_wait_processes(c, 1);
	assert_int_equal(pc_open(c, tu_path("detach"), O_RDWR, 0, &f), 0);
	assert_int_equal(pc_pread(f, buf, 8, 0), 8);
	assert_memory_equal(buf, "child!!!", 8);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	{
		char disk[8];
		int fd = open(tu_path("detach"), O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, disk, 8, 0), 8);
		close(fd);
		assert_memory_equal(disk, "child!!!", 8);
	}
}

/*
 * A fork while another thread holds bk_lock (the flusher or an opener
 * making a chunk of descriptors): the fork waits for it (tctx.c's
 * handlers take it), so the child does not inherit it locked - before,
 * the child hung at its first open of a file in a new chunk (test_detach
 * did, now and then).  The holder lets go once the fork queues on the
 * lock, or once the fork is over (the bug: it did not wait).
 */
static atomic_int bk_forked;

static void *bk_holder(void *arg)
{
	atomic_int *ready = arg;

	pc__test_bk_lock(true);
	atomic_store(ready, 1);
	while (!pc__test_bk_waited() && !atomic_load(&bk_forked))
		sched_yield();
	pc__test_bk_lock(false);
	return NULL;
}

static void test_fork_bk_lock(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	atomic_int ready = 0;
	pthread_t t;
	int status;
	pid_t pid;

	(void)state;
	atomic_store(&bk_forked, 0);
	assert_int_equal(pthread_create(&t, NULL, bk_holder, &ready), 0);
	while (!atomic_load(&ready))
		sched_yield();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pc__test_bk_free() ? 0 : 1);
	atomic_store(&bk_forked, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);	/* bk_lock free */
	assert_int_equal(pc_cache_destroy(c), 0);
}

static char self_exe[4096];

/* Exec'd: argv[1] what, argv[2] the cache's name, then its arguments. */
static int exec_child(int argc, char **argv)
{
	pc_cache *c;
	pc_file *f;
	char buf[16];
	int r;

	if (!strcmp(argv[1], "--occupied")) {	/* argv[3]: the address */
		void *at = (void *)(uintptr_t)strtoull(argv[3], NULL, 10);

		if (mmap(at, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED_NOREPLACE, -1, 0) != at)
			return 20;
		r = pc_cache_attach(&c, argv[2]);
		return r == -EEXIST ? 0 : 21;
	}
	if (!strcmp(argv[1], "--remove"))	/* its errno as the status */
		return -pc_cache_remove(argv[2]);
	if (!strcmp(argv[1], "--create")) {	/* made, then killed */
		char cfg[128];

		snprintf(cfg, sizeof(cfg), "shared=on memory=4M name=%s" IO,
			 argv[2]);
		if (pc_cache_create(&c, cfg))
			return 40;
		printf("ready\n");
		fflush(stdout);
		pause();
		return 41;
	}
	if (argc != 5)
		return 30;
	r = pc_cache_attach(&c, argv[2]);
	if (r) {
		fprintf(stderr, "attach: %s\n", strerror(-r));
		return 31;
	}
	if (pc_cache_processes(c) != 2)
		return 32;
	if (pc_open(c, argv[3], O_RDWR, 0, &f) ||
	    pc_pread(f, buf, 6, 0) != 6 || memcmp(buf, "parent", 6))
		return 33;
	if (pc_pwrite(f, "exec'd child", 12, 4096) != 12)
		return 34;
	pc_close(f);
	/* A file only this process opens: then killed, never closed. */
	if (pc_open(c, argv[4], O_RDWR | O_CREAT | O_TRUNC, 0644, &f) ||
	    pc_pwrite(f, "written, then killed", 20, 0) != 20)
		return 35;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 36;
}

static void test_attach_exec(void **state)
{
	const char *path = tu_path("attach"), *path2 = tu_path("attach2");
	char name[64], cfg[128], addr[32], line[16];
	pc_cache *c, *c2;
	pc_file *f;
	char buf[12];
	int status, out[2];
	pid_t pid;

	(void)state;
	snprintf(name, sizeof(name), "test-%d", (int)getpid());
	snprintf(cfg, sizeof(cfg), "shared=on memory=4M name=%s", name);
	c = tu_cache(cfg);
	assert_int_equal(pc_cache_create(&c2, cfg), -EEXIST);
	assert_int_equal(pc_cache_attach(&c2, name), -EBUSY);	/* here */
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 &f), 0);
	assert_int_equal(pc_pwrite(f, "parent", 6, 0), 6);
	assert_int_equal(pipe(out), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		execl(self_exe, self_exe, "--attach", name, path, path2,
		      (char *)NULL);
		_exit(127);
	}
	{
		FILE *in = fdopen(out[0], "r");

		close(out[1]);
		assert_non_null(in);
		assert_non_null(fgets(line, sizeof(line), in));
		assert_string_equal(line, "ready\n");
		fclose(in);
	}
	/* The exec'd child's write, seen without a reopen. */
	assert_int_equal(pc_pread(f, buf, 12, 4096), 12);
	assert_memory_equal(buf, "exec'd child", 12);
	tu_kill_wait(pid);
	assert_int_equal(pc_cache_sync(c), 0);
	{
		char disk[20];
		int fd = open(path2, O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, disk, 20, 0), 20);
		close(fd);
		assert_memory_equal(disk, "written, then killed", 20);
	}
	/* Something at the cache's address in the joiner: refused. */
	snprintf(addr, sizeof(addr), "%llu", (unsigned long long)(uintptr_t)
		 pc__shm_base(pc__local(c)->shm));
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(self_exe, self_exe, "--occupied", name, addr,
		      (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_attach(&c2, name), -ENOENT);	/* gone */
	close(out[0]);
}

/* This test program exec'd with @what @name: its exit status. */
static int exec_status(const char *what, const char *name)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(self_exe, self_exe, what, name, "-", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_remove(void **state)
{
	char name[64], cfg[128], line[16];
	pc_cache *c;
	int status, out[2];
	pid_t pid;
	FILE *in;

	(void)state;
	snprintf(name, sizeof(name), "test-remove-%d", (int)getpid());
	assert_int_equal(pc_cache_remove(NULL), -EINVAL);
	assert_int_equal(pc_cache_remove(""), -EINVAL);
	assert_int_equal(pc_cache_remove("a/b"), -EINVAL);
	assert_int_equal(pc_cache_remove(".hidden"), -EINVAL);
	assert_int_equal(pc_cache_remove(name), -ENOENT);
	/* In use: attached here, and served by a live home elsewhere. */
	snprintf(cfg, sizeof(cfg), "shared=on memory=4M name=%s" IO, name);
	c = tu_cache(cfg);
	assert_int_equal(pc_cache_remove(name), -EBUSY);
	assert_int_equal(exec_status("--remove", name), EBUSY);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_remove(name), -ENOENT);	/* gone */
	/* Its home killed: a stale name, which remove takes away. */
	assert_int_equal(pipe(out), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		execl(self_exe, self_exe, "--create", name, "-", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	in = fdopen(out[0], "r");
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	assert_string_equal(line, "ready\n");
	fclose(in);
	assert_int_equal(exec_status("--remove", name), EBUSY);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(pc_cache_attach(&c, name), -ENOTCONN);
	assert_int_equal(pc_cache_remove(name), 0);
	assert_int_equal(pc_cache_attach(&c, name), -ENOENT);
	assert_int_equal(pc_cache_remove(name), -ENOENT);
	/* The name is free: a new cache takes it. */
	c = tu_cache(cfg);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * No memory for this process's descriptors of a new mapping (local.c's
 * chunk of them): the open fails with -ENOMEM, nothing is left half made,
 * and the next open, with memory, works.
 */
static void test_no_memory(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	pc_file *f;
	char buf[4];

	(void)state;
	tu_make_file(tu_path("nomem"), 4, 1);
	atomic_store(&pc__test_no_bk_chunk, true);
	assert_int_equal(pc_open(c, tu_path("nomem"), O_RDWR, 0, &f),
			 -ENOMEM);
	atomic_store(&pc__test_no_bk_chunk, false);
	assert_int_equal(pc_open(c, tu_path("nomem"), O_RDWR, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, "nmem", 4, 0), 4);
	assert_int_equal(pc_pread(f, buf, 4, 0), 4);
	assert_memory_equal(buf, "nmem", 4);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * One table of caches in the process, private and shared alike: a page
 * finds its cache by its address.
 */
static void test_table(void **state)
{
	pc_cache *p = tu_cache("memory=4M");
	pc_cache *s = tu_cache("shared=on memory=4M" IO);

	(void)state;
	assert_false(pc_cache_shared(p));
	assert_true(pc_cache_shared(s));
	assert_false(pc_cache_shared(NULL));
	assert_ptr_equal(pc__page_cache(&p->pages[0]), p);
	assert_ptr_equal(pc__page_cache(&p->pages[p->span_frames - 1]), p);
	assert_ptr_equal(pc__page_cache(&s->pages[0]), s);
	assert_ptr_equal(pc__page_cache(&s->pages[s->span_frames - 1]), s);
	assert_ptr_equal(pc__local(p), p->local);
	assert_non_null(pc__local(s)->shm);
	assert_int_equal(pc_cache_destroy(s), 0);
	assert_int_equal(pc_cache_destroy(p), 0);
}

static void test_other_layout(void **state)
{
	char name[64], path[128];
	struct pc_shm *shm;
	pc_cache *c;
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "test-layout-%d", (int)getpid());
	snprintf(path, sizeof(path), "/dev/shm/pagecache-%s", name);
	assert_int_equal(pc__shm_create(&shm, &fd, name, 4 << 20,
					pc__region_layout() ^ 1), 0);
	assert_int_equal(pc_cache_attach(&c, name), -EPROTO);
	assert_int_equal(pc_cache_remove(name), -EPROTO);
	assert_int_equal(access(path, F_OK), 0);	/* left alone */
	assert_int_equal(pc__shm_unlink(name), 0);
	pc__shm_detach(shm, fd);

	assert_int_equal(pc__shm_create(&shm, &fd, name, 4 << 20,
					pc__region_layout()), 0);
	assert_int_equal(pc_cache_attach(&c, name), -EBUSY);
	assert_int_equal(pc__shm_unlink(name), 0);
	pc__shm_detach(shm, fd);
}

static void test_refused(void **state)
{
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "shared=on trace=/dev/null"),
			 -EINVAL);
	assert_int_equal(pc_cache_create(&c, "shared=on numa.balancing=on"),
			 -EINVAL);
	assert_int_equal(pc_cache_create(&c, "shared=maybe"), -EINVAL);
	assert_int_equal(pc_cache_processes(NULL), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_coherence),
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_one_budget),
		cmocka_unit_test(test_killed_writer),
		cmocka_unit_test(test_killed_escrow),
		cmocka_unit_test(test_errors_once),
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_send_unlocked),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_fork_bk_lock),
		cmocka_unit_test(test_attach_exec),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_no_memory),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_other_layout),
		cmocka_unit_test(test_refused),
	};
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--break")) {
		/* For test_exec.sh: the cache named argv[2] broken, as a
		 * process's death inside one of its locks would leave it. */
		pc_cache *c;

		if (pc_cache_attach(&c, argv[2]))
			return 1;
		atomic_store(c->broken, 1);
		return pc_cache_destroy(c) ? 1 : 0;
	}
	if (argc >= 4 && strncmp(argv[1], "--", 2) == 0)
		return exec_child(argc, argv);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
