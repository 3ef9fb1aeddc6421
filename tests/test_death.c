/*
 * test_death.c - a process of a shared cache (shared=on) killed at the
 * points of the code where what it holds is hardest to give back: a test
 * hook (pagewait.h: PC_PARK, test builds) parks a forked child there, the
 * test kills it, and the reaper must mend what it left.  The last six
 * cases need no hook: the child takes what it is killed holding itself
 * (locks, a file, I/O held in flight by the fault backend), as a hook
 * would.  Asserted by the counters (shared_locks_reaped,
 * shared_waiters_reaped, ...) and by the outcome: the lock free again,
 * the waiter woken, no hang.
 *
 *   lock_taken_killed  killed just after pc__lock_page took the lock:
 *                    the lock is let go (its owner went in with it)
 *   waiter_killed    killed asleep in pc__lock_page: its record is taken
 *                    out of the queue, and the holder's unlock leaves the
 *                    page unlocked (not handed to the dead)
 *   handed_killed    handed the lock by an unlock while it was stopped,
 *                    then killed: the lock, the dead one's, is let go
 *   unlock_killed    a holder killed inside its unlock, the bit cleared
 *                    and no one woken: the waiter in another process is
 *                    woken by the reaper and takes the lock
 *   wake_killed      a waker killed after telling its waiter DONE, before
 *                    the futex wake: the reaper wakes it
 *   read_ref_killed  killed in pc_pread holding the page it copies from:
 *                    its reference is given back (shared_refs_reaped),
 *                    the page held by its mapping alone, and a truncation
 *                    frees its frame
 *   isolate_killed   killed in reclaim with a batch isolated from the LRU:
 *                    each page is put back on its list and its reference
 *                    given back; a truncation frees every frame
 *   wb_tagged_killed, wb_marked_killed  a writer killed gathering a
 *                    dirty page for its fsync, its tags moved or the page
 *                    under writeback: the page is dirty again, tagged so,
 *                    not under writeback; the next fsync writes it
 *   pins_killed      killed holding 21 pins of 20 pages (one given back,
 *                    more than a thread's table): every one is given
 *                    back (shared_pins_reaped), each page its mapping's
 *   pins_threads_killed  a thread pins two pages and exits, another
 *                    thread puts one: the other is given back
 *   read_wait_killed killed asleep in pc_pread on a page another
 *                    process is reading: its reference is given back
 *   ra_new_killed    killed in readahead, its new pages in the cache
 *                    and their read not asked for: each unlocked, its
 *                    reference given back (shared_io_reaped), read again
 *   wb_got_killed    an fsync killed asleep for the lock of a page its
 *                    gang got: its reference is given back
 *   drain_killed     killed draining its LRU batch, the copies taken:
 *                    each page on its list, held by its mapping alone
 *   wb_ending_killed a write's completion killed with the counters
 *                    moved, PG_writeback on: it is ended (no waiter
 *                    hangs), the page clean, the counters right
 *   wb_queued_killed killed in wb_queue, the request counted in flight
 *                    and not yet marked: no request left in flight, the
 *                    page dirty again
 *   exec_ebr         a process inside a read section execs (test hook)
 *                    and enters again: the old image's slot is cleared
 *                    though the pid and start time are the same
 *   pid_reused       a process enters with the pid of a dead one whose
 *                    reap has not run (procs.c's test hook): the dead
 *                    one's i_rwsem hold is reaped before it enters, and
 *                    its own hold, taken after, is not
 *   killed_io        a child killed with a read and a write of its own in
 *                    flight (held by the fault backend): the reaper ends
 *                    them - the read's page unlocked for another reader,
 *                    the written page dirty again - so the creator reads
 *                    the page and writes the child's data back
 *   lock_holder_killed  a child killed while it holds the cache's
 *                    mappings lock and a node's free lock (taken by the
 *                    test, as a hook would): the creator opens, writes
 *                    and reads on (the robust locks pass to it), and the
 *                    cache says it is broken (pc_cache_broken)
 *   inherited_killed  a child opens its own file of a descriptor it
 *                    inherited (as the preload shim does after a fork),
 *                    writes and is killed: its file is reaped, the
 *                    parent's of the same descriptor goes on
 *   pos_lock_killed  a child killed holding a file's pc_file_pos_lock
 *                    (the shared file position's lock): the creator takes
 *                    it next (robust), and the cache is not broken
 *   locks_holder_killed  a child killed holding an i_rwsem shared, a page
 *                    lock and another i_rwsem exclusive: the home's watch
 *                    (a pidfd) finds it dead unasked and lets them go;
 *                    the truncation and writes waiting for them end, the
 *                    cache not broken, the page it held dirty
 *   truncate_holder_killed  a child killed inside a truncation (after the
 *                    disk's cut): no hang, and the cache says it is broken
 *
 * Under TSan a child of this multi-threaded process may not start threads
 * (die_after_fork): the caches use the sync backend, and killed_io, whose
 * child starts two, is skipped; no other child here starts one.  A hang
 * would be a failure: the waits for a woken child are bounded (WAIT_MS),
 * never a measure of anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagecache.h"
#include "util.h"
#include "internal.h"
#include "bdi.h"
#include "ebr.h"
#include "filemap.h"
#include "inode.h"
#include "io.h"
#include "node.h"
#include "share.h"
#include "tctx.h"
#include "tree.h"
#include "vmscan.h"

#define PG 4096
#ifdef PC_TSAN
#define IO " io=sync"
#else
#define IO ""
#endif
#define WAIT_MS 60000	/* a woken child that does not say so: failed */

/* One byte from @fd, or fail (a child that never got there). */
static char read_byte(int fd)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	char b;

	if (poll(&pf, 1, WAIT_MS) != 1)
		fail_msg("no word from the child");
	assert_int_equal(read(fd, &b, 1), 1);
	return b;
}

/* Until a waiter of @c (a child's) sleeps on a page. */
static void wait_sleeper(pc_cache *c)
{
	while (!pc__pagewait_sleeping(&c->wait))
		tu_sleep_us(200);
}

static void exit_wait(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("child status %#x", status);
}

/* A cache and one cached, uptodate page of a file, referenced here. */
struct fix {
	pc_cache *c;
	pc_file *f;
	struct pc_page *p;
	int pipe[2];
};

static void fix_init(struct fix *x, const char *name)
{
	const char *path = tu_path(name);

	x->c = tu_cache("shared=on memory=4M" IO);
	tu_make_file(path, 4, 21);
	assert_int_equal(pc_open(x->c, path, O_RDWR, 0, &x->f), 0);
	tu_read_page(x->f, 0, 21);
	x->p = pc__find_get_page(x->f->mapping, 0);
	assert_non_null(x->p);
	assert_int_equal(pipe(x->pipe), 0);
	fflush(stdout);
}

static void fix_fini(struct fix *x)
{
	pc__put_page(x->c, x->p);
	assert_int_equal(pc_close(x->f), 0);
	assert_int_equal(pc_cache_destroy(x->c), 0);
	close(x->pipe[0]);
	close(x->pipe[1]);
}

/* In a child: park at @where, saying so on @fd. */
static void park_at(int where, int fd)
{
	pc__park_fd = fd;
	atomic_store(&pc__park_at, where);
}

/* A child that takes the page lock (waits for it), says so, unlocks. */
static pid_t lock_child(struct fix *x, int done_fd)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pc__lock_page(&x->c->wait, x->p);
		if (write(done_fd, "l", 1) != 1)
			_exit(2);
		pc__unlock_page(&x->c->wait, x->p);
		_exit(0);
	}
	return pid;
}

/* ------------------------------------------------------------------ */

static void test_lock_taken_killed(void **state)
{
	struct fix x;
	uint64_t locks0;
	pid_t pid;

	(void)state;
	fix_init(&x, "lock_taken");
	locks0 = tu_vm(x.c, "shared_locks_reaped");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		park_at(PC_PARK_LOCKED, x.pipe[1]);
		pc__lock_page(&x.c->wait, x.p);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(x.pipe[0]), PC_PARK_LOCKED);
	assert_true(page_test(x.p, PG_locked));
	tu_kill_wait(pid);
	tu_wait_processes(x.c, 1);
	assert_int_equal(tu_vm(x.c, "shared_locks_reaped") - locks0, 1);
	assert_true(pc__trylock_page(x.p));	/* let go */
	assert_true(page_test(x.p, PG_dirty));	/* it may have written */
	pc__unlock_page(&x.c->wait, x.p);
	fix_fini(&x);
}

static void test_waiter_killed(void **state)
{
	struct fix x;
	uint64_t waiters0;
	pid_t pid;

	(void)state;
	fix_init(&x, "waiter");
	waiters0 = tu_vm(x.c, "shared_waiters_reaped");
	assert_true(pc__trylock_page(x.p));
	pid = lock_child(&x, x.pipe[1]);
	wait_sleeper(x.c);
	tu_kill_wait(pid);
	tu_wait_processes(x.c, 1);
	assert_int_equal(tu_vm(x.c, "shared_waiters_reaped") - waiters0, 1);
	assert_int_equal(pc__pagewait_sleeping(&x.c->wait), 0);
	pc__unlock_page(&x.c->wait, x.p);	/* no one to hand it to */
	assert_false(page_test(x.p, PG_locked));
	assert_false(page_test(x.p, PG_waiters));
	assert_true(pc__trylock_page(x.p));
	pc__unlock_page(&x.c->wait, x.p);
	fix_fini(&x);
}

static void test_handed_killed(void **state)
{
	struct fix x;
	uint64_t locks0;
	pid_t pid;
	int status;

	(void)state;
	fix_init(&x, "handed");
	locks0 = tu_vm(x.c, "shared_locks_reaped");
	assert_true(pc__trylock_page(x.p));
	pid = lock_child(&x, x.pipe[1]);
	wait_sleeper(x.c);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	assert_true(WIFSTOPPED(status));
	pc__unlock_page(&x.c->wait, x.p);	/* handed to the stopped child */
	assert_true(page_test(x.p, PG_locked));
	assert_int_not_equal(page_lock_owner(x.p), 0);
	tu_kill_wait(pid);
	tu_wait_processes(x.c, 1);
	assert_int_equal(tu_vm(x.c, "shared_locks_reaped") - locks0, 1);
	assert_true(pc__trylock_page(x.p));
	pc__unlock_page(&x.c->wait, x.p);
	fix_fini(&x);
}

/* A child A holds the lock, B waits; A is killed at @where in its unlock. */
static void waker_killed(const char *name, int where)
{
	struct fix x;
	uint64_t procs0;
	pid_t a, b;
	int go[2], done[2];
	char c;

	fix_init(&x, name);
	procs0 = tu_vm(x.c, "shared_procs_reaped");
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		if (!pc__trylock_page(x.p) || write(x.pipe[1], "t", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(2);
		park_at(where, x.pipe[1]);
		pc__unlock_page(&x.c->wait, x.p);	/* parks */
		_exit(3);
	}
	assert_int_equal(read_byte(x.pipe[0]), 't');
	b = lock_child(&x, done[1]);
	wait_sleeper(x.c);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read_byte(x.pipe[0]), where);
	tu_kill_wait(a);
	assert_int_equal(read_byte(done[0]), 'l');	/* B was woken */
	exit_wait(b);
	tu_wait_processes(x.c, 1);
	assert_int_equal(tu_vm(x.c, "shared_procs_reaped") - procs0, 2);
	assert_true(pc__trylock_page(x.p));
	pc__unlock_page(&x.c->wait, x.p);
	fix_fini(&x);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

static void test_unlock_killed(void **state)
{
	(void)state;
	waker_killed("unlock", PC_PARK_UNLOCKED);
}

static void test_wake_killed(void **state)
{
	(void)state;
	waker_killed("wake", PC_PARK_WAKE);
}

/* ------------------------------------------------------------------ */

/* @pages pages of a new file, cached, each on its LRU list. */
static pc_file *cached_file(pc_cache *c, const char *name, unsigned pages,
			    struct pc_page **p)
{
	pc_file *f;

	tu_make_file(tu_path(name), pages, 23);
	assert_int_equal(pc_open(c, tu_path(name), O_RDWR, 0, &f), 0);
	for (unsigned i = 0; i < pages; i++) {
		tu_read_page(f, i, 23);
		p[i] = pc__find_get_page(f->mapping, i);
		assert_non_null(p[i]);
		pc__put_page(c, p[i]);	/* its address is all we keep */
	}
	pc__tctx_drain_all(c);	/* our LRU batches hold none */
	for (unsigned i = 0; i < pages; i++) {
		assert_true(page_test(p[i], PG_lru));
		assert_int_equal(page_count(p[i]), 1);	/* the mapping's */
	}
	fflush(stdout);
	return f;
}

/*
 * A writer killed gathering a dirty page for its fsync (writeback.c):
 * @where is after the gang's tags moved (DIRTY off, WRITEBACK on, the page
 * locked) or after the page went under writeback (locked, marked as its
 * write in flight).  Either way the page is dirty again, tagged so, not
 * under writeback and unlocked; the cache is not broken, and the
 * creator's fsync writes it (no wait for a writeback no one will end).
 */
static void wb_killed(const char *name, int where)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[1];
	pc_file *f = cached_file(c, name, 1, p);
	uint64_t io0 = tu_vm(c, "shared_io_reaped");
	uint64_t locks0 = tu_vm(c, "shared_locks_reaped");
	unsigned char want[PG], got[PG];
	int ready[2], fd;
	pid_t pid;

	memset(want, 'w', sizeof(want));
	assert_int_equal(pc_pwrite(f, want, PG, 0), PG);
	assert_true(page_test(p[0], PG_dirty));
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		park_at(where, ready[1]);
		pc_fsync(f);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), where);
	assert_true(page_test(p[0], PG_locked));
	assert_int_equal(page_test(p[0], PG_writeback),
			 where == PC_PARK_WB_MARKED);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_false(pc_cache_broken(c));
	assert_false(page_test(p[0], PG_locked));
	assert_false(page_test(p[0], PG_writeback));
	assert_true(page_test(p[0], PG_dirty));
	assert_true(pc__tree_tag_get(&f->mapping->tree, 0, PC_TAG_DIRTY));
	assert_false(pc__tree_tag_get(&f->mapping->tree, 0, PC_TAG_WRITEBACK));
	assert_int_equal(tu_vm(c, "shared_io_reaped") - io0,
			 where == PC_PARK_WB_MARKED ? 1 : 0);
	assert_int_equal(tu_vm(c, "shared_locks_reaped") - locks0, 1);
	assert_int_equal(pc_fsync(f), 0);	/* no hang */
	assert_false(page_test(p[0], PG_dirty));
	fd = open(tu_path(name), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, PG, 0), PG);
	close(fd);
	assert_memory_equal(got, want, PG);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

static void test_wb_tagged_killed(void **state)
{
	(void)state;
	wb_killed("wb_tagged", PC_PARK_WB_TAGGED);
}

static void test_wb_marked_killed(void **state)
{
	(void)state;
	wb_killed("wb_marked", PC_PARK_WB_MARKED);
}

/* Truncated to nothing, @f's pages are freed: no one held one. */
static void truncate_frees(pc_file *f, struct pc_page **p, unsigned pages)
{
	assert_int_equal(pc_ftruncate(f, 0), 0);
	assert_int_equal(atomic_load(&f->mapping->nr_pages), 0);
	for (unsigned i = 0; i < pages; i++)
		assert_int_equal(page_count(p[i]), 0);
}

static void test_read_ref_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[1];
	pc_file *f = cached_file(c, "read_ref", 1, p);
	uint64_t refs0 = tu_vm(c, "shared_refs_reaped");
	char buf[PG];
	int ready[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		park_at(PC_PARK_REF, ready[1]);
		pc_pread(f, buf, PG, 0);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), PC_PARK_REF);
	assert_int_equal(page_count(p[0]), 2);	/* the child's */
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_int_equal(page_count(p[0]), 1);
	assert_int_equal(tu_vm(c, "shared_refs_reaped") - refs0, 1);
	truncate_frees(f, p, 1);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

#define ISO_PAGES 8

static void test_isolate_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[ISO_PAGES];
	pc_file *f = cached_file(c, "isolate", ISO_PAGES, p);
	uint64_t refs0 = tu_vm(c, "shared_refs_reaped");
	unsigned off = 0;
	int ready[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		park_at(PC_PARK_ISOLATED, ready[1]);
		pc__reclaim_tail(c, page_node(c, p[0]), ISO_PAGES);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), PC_PARK_ISOLATED);
	for (unsigned i = 0; i < ISO_PAGES; i++)
		if (!page_test(p[i], PG_lru)) {
			assert_int_equal(page_count(p[i]), 2);
			off++;
		}
	assert_true(off > 0);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	for (unsigned i = 0; i < ISO_PAGES; i++) {
		assert_true(page_test(p[i], PG_lru));	/* back on its list */
		assert_int_equal(page_count(p[i]), 1);
	}
	assert_int_equal(tu_vm(c, "shared_refs_reaped") - refs0, off);
	truncate_frees(f, p, ISO_PAGES);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

static void test_pid_reused(void **state)
{
	struct fix x;
	struct pc_rwlock *l;
	uint64_t locks0, procs0;
	int go[2];
	pid_t pid;
	char c;

	(void)state;
	fix_init(&x, "pid_reused");
	l = &x.f->mapping->i_rwsem;
	locks0 = tu_vm(x.c, "shared_locks_reaped");
	procs0 = tu_vm(x.c, "shared_procs_reaped");
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* What a dead process of our pid left: a shared hold. */
		for (int k = 0; k < PC_RW_SLOTS; k++)
			if (!(uint32_t)atomic_load(&l->readers[k])) {
				atomic_store(&l->readers[k],
					     (uint64_t)getpid() << 32 | 1);
				break;
			}
		if (pc__share_test_predecessor(x.c))
			_exit(2);
		pc__read_lock(l);	/* ours */
		if (write(x.pipe[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		pc__read_unlock(l);
		_exit(0);
	}
	assert_int_equal(read_byte(x.pipe[0]), 'r');
	assert_int_equal(pc_cache_processes(x.c), 2);	/* reaps the dead */
	assert_int_equal(tu_vm(x.c, "shared_locks_reaped") - locks0, 1);
	assert_int_equal(tu_vm(x.c, "shared_procs_reaped") - procs0, 1);
	assert_false(pc__write_trylock(l));	/* the child's hold stands */
	assert_int_equal(write(go[1], "g", 1), 1);
	exit_wait(pid);
	tu_wait_processes(x.c, 1);
	assert_true(pc__write_trylock(l));
	pc__write_unlock(l);
	fix_fini(&x);
	close(go[0]);
	close(go[1]);
}

/* ------------------------------------------------------------------ */
/* References no one recorded before (issue 22, part 4).               */

/* Pages of @f at [0, @n): each present one's count, less ours. */
static void counts_of(pc_cache *c, pc_file *f, unsigned n, int *count)
{
	for (unsigned i = 0; i < n; i++) {
		struct pc_page *p = pc__find_get_page(f->mapping, i);

		count[i] = p ? page_count(p) - 1 : -1;
		if (p)
			pc__put_page(c, p);
	}
}

#define PIN_PAGES 20	/* more than a thread's table (PC_PINS) */

static void test_pins_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[PIN_PAGES];
	pc_file *f = cached_file(c, "pins", PIN_PAGES, p);
	uint64_t pins0 = tu_vm(c, "shared_pins_reaped");
	int ready[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_page *q[PIN_PAGES], *again;

		for (unsigned i = 0; i < PIN_PAGES; i++)
			if (pc_get_page(f, i, 0, &q[i]))
				_exit(2);
		if (pc_get_page(f, 0, 0, &again))
			_exit(3);
		pc_put_page(q[1]);
		park_at(PC_PARK_PINNED, ready[1]);
		(void)pc_get_page(f, 2, 0, &again);	/* parks */
		_exit(4);
	}
	assert_int_equal(read_byte(ready[0]), PC_PARK_PINNED);
	assert_int_equal(page_count(p[0]), 3);
	assert_int_equal(page_count(p[1]), 1);
	assert_int_equal(page_count(p[2]), 3);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	for (unsigned i = 0; i < PIN_PAGES; i++)
		assert_int_equal(page_count(p[i]), 1);	/* the mapping's */
	assert_int_equal(tu_vm(c, "shared_pins_reaped") - pins0,
			 PIN_PAGES + 2 - 1);
	truncate_frees(f, p, PIN_PAGES);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

#ifndef PC_TSAN
struct pin_arg {
	pc_file *f;
	pc_page *q[2];
	int r;
};

static void *pin_two(void *arg)
{
	struct pin_arg *a = arg;

	a->r = pc_get_page(a->f, 0, 0, &a->q[0]) ||
	       pc_get_page(a->f, 1, 0, &a->q[1]);
	return NULL;	/* exits holding both: to its process's spare */
}
#endif

/*
 * Pins are the process's: a thread pins two pages and exits, another
 * puts one of them back, the process is killed: the other is given back.
 * (Under TSan a child may not start threads: skipped.)
 */
static void test_pins_threads_killed(void **state)
{
#ifdef PC_TSAN
	(void)state;
	skip();
#else
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[2];
	pc_file *f = cached_file(c, "pins_threads", 2, p);
	uint64_t pins0 = tu_vm(c, "shared_pins_reaped");
	int ready[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pin_arg a = { .f = f };
		pthread_t th;

		if (pthread_create(&th, NULL, pin_two, &a) ||
		    pthread_join(th, NULL) || a.r)
			_exit(2);
		pc_put_page(a.q[1]);	/* not the getter's thread */
		if (write(ready[1], "p", 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	assert_int_equal(read_byte(ready[0]), 'p');
	assert_int_equal(page_count(p[0]), 2);
	assert_int_equal(page_count(p[1]), 1);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_int_equal(page_count(p[0]), 1);
	assert_int_equal(page_count(p[1]), 1);
	assert_int_equal(tu_vm(c, "shared_pins_reaped") - pins0, 1);
	truncate_frees(f, p, 2);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
#endif
}

/* Killed asleep in pc_pread for a page another process is reading. */
static void test_read_wait_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[1];
	pc_file *f = cached_file(c, "read_wait", 1, p);
	uint64_t refs0 = tu_vm(c, "shared_refs_reaped");
	char buf[PG];
	pid_t pid;

	(void)state;
	/* As a reader of ours would leave it: locked, not uptodate. */
	assert_true(pc__trylock_page(p[0]));
	page_clear(p[0], PG_uptodate);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_pread(f, buf, PG, 0);	/* sleeps on the lock */
		_exit(2);
	}
	wait_sleeper(c);
	assert_int_equal(page_count(p[0]), 2);	/* the child's */
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_int_equal(page_count(p[0]), 1);
	assert_int_equal(tu_vm(c, "shared_refs_reaped") - refs0, 1);
	page_set(p[0], PG_uptodate);
	pc__unlock_page(&c->wait, p[0]);
	tu_read_page(f, 0, 23);
	truncate_frees(f, p, 1);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

#define RA_PAGES 16

/* Killed in readahead with its new pages in the cache, their read not
 * yet asked for: each unlocked, its reference given back, read again. */
static void test_ra_new_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	const char *path = tu_path("ra_new");
	uint64_t io0;
	int count[RA_PAGES], ready[2];
	unsigned added = 0;
	pc_file *f;
	pid_t pid;

	(void)state;
	tu_make_file(path, RA_PAGES, 29);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	io0 = tu_vm(c, "shared_io_reaped");
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[PG];

		park_at(PC_PARK_RA_NEW, ready[1]);
		pc_pread(f, buf, PG, 0);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), PC_PARK_RA_NEW);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	counts_of(c, f, RA_PAGES, count);
	for (unsigned i = 0; i < RA_PAGES; i++) {
		struct pc_page *q;

		if (count[i] < 0)
			continue;
		added++;
		assert_int_equal(count[i], 1);	/* the mapping's alone */
		q = pc__find_get_page(f->mapping, i);
		assert_false(page_test(q, PG_locked));
		assert_false(page_test(q, PG_uptodate));
		pc__put_page(c, q);
	}
	assert_true(added > 0);
	assert_int_equal(tu_vm(c, "shared_io_reaped") - io0, added);
	for (unsigned i = 0; i < RA_PAGES; i++)
		tu_read_page(f, i, 29);	/* read again, right */
	assert_int_equal(pc_ftruncate(f, 0), 0);
	assert_int_equal(atomic_load(&f->mapping->nr_pages), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

/* A dirty page of a new one-page file: the creator's write. */
static pc_file *dirty_file(pc_cache *c, const char *name, struct pc_page **p,
			   unsigned char *want)
{
	pc_file *f = cached_file(c, name, 1, p);

	memset(want, 'd', PG);
	assert_int_equal(pc_pwrite(f, want, PG, 0), PG);
	pc__tctx_drain_all(c);
	assert_true(page_test(p[0], PG_dirty));
	assert_int_equal(page_count(p[0]), 1);
	fflush(stdout);
	return f;
}

/* After a writer's death: @f's page written by our fsync, no hang. */
static void fsync_writes(pc_cache *c, pc_file *f, const char *name,
			 struct pc_page *p, const unsigned char *want)
{
	unsigned char got[PG];
	int fd;

	assert_false(pc_cache_broken(c));
	assert_int_equal(pc_fsync(f), 0);
	assert_false(page_test(p, PG_dirty));
	assert_false(page_test(p, PG_writeback));
	fd = open(tu_path(name), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, PG, 0), PG);
	close(fd);
	assert_memory_equal(got, want, PG);
}

/* An fsync killed asleep for the lock of a page its gang got. */
static void test_wb_got_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[1];
	unsigned char want[PG];
	pc_file *f = dirty_file(c, "wb_got", p, want);
	uint64_t refs0 = tu_vm(c, "shared_refs_reaped");
	pid_t pid;

	(void)state;
	assert_true(pc__trylock_page(p[0]));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_fsync(f);	/* sleeps on the page lock */
		_exit(2);
	}
	wait_sleeper(c);
	assert_int_equal(page_count(p[0]), 2);	/* the gang's */
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_int_equal(page_count(p[0]), 1);
	assert_int_equal(tu_vm(c, "shared_refs_reaped") - refs0, 1);
	pc__unlock_page(&c->wait, p[0]);
	fsync_writes(c, f, "wb_got", p[0], want);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* A drain of LRU batches killed with its copies taken: each page on its
 * list and its reference given back. */
static void test_drain_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	const char *path = tu_path("drain");
	uint64_t refs0;
	int count[ISO_PAGES], ready[2];
	pc_file *f;
	pid_t pid;

	(void)state;
	tu_make_file(path, ISO_PAGES, 31);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	refs0 = tu_vm(c, "shared_refs_reaped");
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (unsigned i = 0; i < ISO_PAGES; i++)
			tu_read_page(f, i, 31);	/* new pages: batched */
		park_at(PC_PARK_DRAIN, ready[1]);
		pc__lru_drain(c, pc__tctx(c));	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), PC_PARK_DRAIN);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	counts_of(c, f, ISO_PAGES, count);
	for (unsigned i = 0; i < ISO_PAGES; i++) {
		struct pc_page *q = pc__find_get_page(f->mapping, i);

		assert_non_null(q);
		assert_true(page_test(q, PG_lru));	/* on its list */
		assert_int_equal(count[i], 1);
		pc__put_page(c, q);
	}
	assert_true(tu_vm(c, "shared_refs_reaped") - refs0 > 0);
	assert_int_equal(pc_ftruncate(f, 0), 0);
	assert_int_equal(atomic_load(&f->mapping->nr_pages), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

/* ------------------------------------------------------------------ */
/* A write's completion and submission (issue 22, part 4).            */

/*
 * A writer killed at @where of its fsync's write: in wb_finish with the
 * counters moved and PG_writeback still on (its write reached the disk),
 * or in wb_queue with the request counted in flight and not yet marked.
 */
static void wb_end_killed(const char *name, int where)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	struct pc_page *p[1];
	unsigned char want[PG];
	pc_file *f = dirty_file(c, name, p, want);
	struct pc_bdi *b = f->mapping->bdi;
	uint64_t io0 = tu_vm(c, "shared_io_reaped");
	int ready[2];
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		park_at(where, ready[1]);
		pc_fsync(f);	/* parks */
		_exit(2);
	}
	assert_int_equal(read_byte(ready[0]), where);
	assert_true(page_test(p[0], PG_writeback));
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);
	assert_false(page_test(p[0], PG_writeback));	/* no one waits */
	assert_false(page_test(p[0], PG_locked));
	assert_int_equal(page_count(p[0]), 1);
	assert_int_equal(pc__bdi_in_flight(b), 0);
	assert_int_equal(atomic_load(&f->mapping->nr_writeback), 0);
	assert_false(pc__tree_tag_get(&f->mapping->tree, 0, PC_TAG_WRITEBACK));
	/* Written (ended), or dirty again (queued): the next fsync's. */
	assert_int_equal(page_test(p[0], PG_dirty), where == PC_PARK_WB_QUEUED);
	assert_int_equal(tu_vm(c, "shared_io_reaped") - io0, 1);
	fsync_writes(c, f, name, p[0], want);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

static void test_wb_ending_killed(void **state)
{
	(void)state;
	wb_end_killed("wb_ending", PC_PARK_WB_ENDING);
}

static void test_wb_queued_killed(void **state)
{
	(void)state;
	wb_end_killed("wb_queued", PC_PARK_WB_QUEUED);
}

/* ------------------------------------------------------------------ */
/* An exec'd image (issue 22, part 4).                                 */

/* Read sections of @pid's slots in @e. */
static unsigned ebr_sections(struct pc_ebr *e, pid_t pid)
{
	unsigned n = 0;

	for (int i = 0; i < PC_EBR_SLOTS; i++)
		if (atomic_load(&e->slot[i].pid) == pid &&
		    atomic_load(&e->slot[i].epoch))
			n++;
	return n;
}

/*
 * A process inside a read section execs (test hook: its slots forgotten,
 * a new image id) and enters the cache again: the old image's slot is
 * cleared, though its pid and start time are the new image's.
 */
static void test_exec_ebr(void **state)
{
	struct fix x;
	uint64_t reaped0;
	int go[2];
	pid_t pid;
	char ch;

	(void)state;
	fix_init(&x, "exec_ebr");
	reaped0 = atomic_load(&x.c->ebr->nr_reaped);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc__ebr_read_lock(x.c->ebr);	/* never left: exec */
		if (write(x.pipe[1], "s", 1) != 1 || read(go[0], &ch, 1) != 1)
			_exit(2);
		pc__ebr_test_new_image();
		if (pc__share_test_predecessor(x.c))
			_exit(3);
		if (write(x.pipe[1], "e", 1) != 1 || read(go[0], &ch, 1) != 1)
			_exit(4);
		_exit(0);
	}
	assert_int_equal(read_byte(x.pipe[0]), 's');
	assert_int_equal(ebr_sections(x.c->ebr, pid), 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read_byte(x.pipe[0]), 'e');
	assert_int_equal(ebr_sections(x.c->ebr, pid), 0);	/* alive */
	assert_true(atomic_load(&x.c->ebr->nr_reaped) - reaped0 >= 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	exit_wait(pid);
	tu_wait_processes(x.c, 1);
	fix_fini(&x);
	close(go[0]);
	close(go[1]);
}

/* ------------------------------------------------------------------ */
/* Killed holding what it took itself, no hook: I/O, locks, a file.    */

struct ki {
	pc_file *f;
	char buf[PG];
};

static void *ki_fsync(void *arg)
{
	struct ki *k = arg;

	pc_fsync(k->f);		/* held: never returns */
	return NULL;
}

static void *ki_read(void *arg)
{
	struct ki *k = arg;

	pc_pread(k->f, k->buf, PG, 0);	/* held: never returns */
	return NULL;
}

static void test_killed_io(void **state)
{
#ifdef PC_TSAN
	skip();		/* the child starts threads (see the top) */
#endif
	const char *path = tu_path("killed_io");
	pc_cache *c = tu_cache("shared=on memory=4M io=fault");
	uint64_t seed = tu_seed("death killed_io");
	unsigned char want[PG], buf[PG];
	uint64_t io0;
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	tu_make_file(path, 4, seed);
	memset(want, 'k', sizeof(want));
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static _Atomic bool never;
		struct pc_io_fault hold_w = { .op = PC_IO_WRITE, .fd = -1,
					      .count = -1, .gate = &never };
		struct pc_io_fault hold_r = { .op = PC_IO_READ, .fd = -1,
					      .off_lo = 0, .off_hi = PG,
					      .count = -1, .gate = &never };
		static struct ki k;
		pthread_t t1, t2;

		if (pc_open(c, path, O_RDWR, 0, &k.f) ||
		    pc_pread(k.f, buf, PG, 3 * PG) != PG)	/* our I/O made */
			_exit(2);
		if (pc__io_fault_add(pc__local(c)->io, &hold_w) ||
		    pc__io_fault_add(pc__local(c)->io, &hold_r))
			_exit(3);
		if (pc_pwrite(k.f, want, PG, PG) != PG)
			_exit(4);
		if (pthread_create(&t1, NULL, ki_fsync, &k) ||
		    pthread_create(&t2, NULL, ki_read, &k))
			_exit(5);
		while (pc__io_fault_hits(pc__local(c)->io) < 2)
			tu_sleep_us(200);	/* both held in flight */
		if (write(ready[1], "r", 1) != 1)
			_exit(6);
		pause();
		_exit(7);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	io0 = tu_vm(c, "shared_io_reaped");
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);	/* reaped now */
	assert_int_equal(tu_vm(c, "shared_io_reaped") - io0, 2);
	assert_int_equal(tu_vm(c, "nr_writeback"), 0);
	{
		pc_file *f;

		assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
		tu_read_page(f, 0, seed);	/* read here, after all */
		assert_int_equal(pc_pread(f, buf, PG, PG), PG);
		assert_memory_equal(buf, want, PG);
		assert_int_equal(pc_close(f), 0);
	}
	assert_int_equal(pc_cache_sync(c), 0);
	{
		int fd = open(path, O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, buf, PG, PG), PG);
		close(fd);
		assert_memory_equal(buf, want, PG);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

/* ------------------------------------------------------------------ */

static void test_lock_holder_killed(void **state)
{
	const char *path = tu_path("holder");
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	unsigned char buf[PG];
	pc_file *f;
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc__lock(&c->mappings_lock);
		pc__lock_counted(&c->nodes[0].free_lock);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		pause();	/* killed holding both */
		_exit(3);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	assert_false(pc_cache_broken(c));
	tu_kill_wait(pid);
	/* Both locks are taken here next: no hang. */
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 &f), 0);
	memset(buf, 'h', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, PG, 0), PG);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(pc_pread(f, buf, PG, 0), PG);
	assert_int_equal(buf[0], 'h');
	assert_true(pc_cache_broken(c));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	tu_disk_check(path, (unsigned char[PG]){ [0 ... PG - 1] = 'h' }, PG);
	assert_false(pc_cache_broken(NULL));
	close(ready[0]);
	close(ready[1]);
}

/*
 * What the preload shim does with a description a fork shared: the child
 * opens its own pc_file of the inherited descriptor (pc_open_fd) and
 * writes through it; killed, the child's file is reaped (its pid), the
 * parent's, of the same descriptor, is not: it reads the child's write,
 * writes on, closes, and everything reaches the disk.
 */
static void test_inherited_killed(void **state)
{
	const char *path = tu_path("inherited");
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	uint64_t files0 = tu_vm(c, "shared_files_reaped");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), ready[2];
	unsigned char back[16] = { 0 };
	pc_file *f;
	pid_t pid;
	char b;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(pc_open_fd(c, fd, O_RDWR, &f), 0);
	assert_int_equal(pc_pwrite(f, "parent;", 7, 0), 7);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc_file *mine;

		if (pc_open_fd(c, fd, O_RDWR, &mine) || pc_pwrite(mine, "child;", 6, 7) != 6 ||
		    write(ready[1], "r", 1) != 1)
			_exit(2);
		pause();	/* killed, its file open */
		_exit(3);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	tu_kill_wait(pid);
	tu_wait_processes(c, 1);	/* reaped it */
	assert_int_equal(tu_vm(c, "shared_files_reaped") - files0, 1);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 13);
	assert_memory_equal(back, "parent;child;", 13);
	assert_int_equal(pc_pwrite(f, "again", 5, 13), 5);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_sync(c), 0);
	tu_disk_check(path, "parent;child;again", 18);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(fd);
	close(ready[0]);
	close(ready[1]);
}

/*
 * pc_file_pos_lock guards no state of the cache, only its callers' read,
 * call and set of the kernel's offset: a child killed holding it hands it
 * to the next taker without breaking the cache.
 */
static void test_pos_lock_killed(void **state)
{
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	pc_file *f;
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	assert_int_equal(pc_open(c, tu_path("fpos"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (pc_file_pos_lock(f) != 0 || write(ready[1], "r", 1) != 1)
			_exit(2);
		pause();	/* killed holding it */
		_exit(3);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	tu_kill_wait(pid);
	assert_int_equal(pc_file_pos_lock(f), 0);	/* no hang */
	assert_int_equal(pc_pwrite(f, "x", 1, 0), 1);	/* held: the file's calls */
	assert_int_equal(pc_file_pos_unlock(f), 0);
	assert_int_equal(pc_file_pos_lock(f), 0);	/* consistent again */
	assert_int_equal(pc_file_pos_unlock(f), 0);
	assert_false(pc_cache_broken(c));
	assert_int_equal(pc_file_pos_lock(NULL), -EINVAL);
	assert_int_equal(pc_file_pos_unlock(NULL), -EINVAL);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

/* ------------------------------------------------------------------ */

/*
 * A child killed holding what the lock-order table has above the mutexes
 * (taken by the test, as a hook would): one file's i_rwsem shared and a
 * page lock of it, another's i_rwsem exclusive.  Nobody asks the table of
 * processes: the home's watch of the child finds it dead and lets go, so
 * the truncation, the write to the locked page and the write under the
 * other i_rwsem end; the locked page, uptodate, is dirty from then on
 * (its writer may have changed it), and the cache is not broken.
 */
static void test_locks_holder_killed(void **state)
{
	const char *pa = tu_path("locks_a"), *pb = tu_path("locks_b");
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	uint64_t locks0 = tu_vm(c, "shared_locks_reaped");
	uint64_t procs0 = tu_vm(c, "shared_procs_reaped");
	unsigned char buf[PG];
	pc_file *fa, *fb;
	pid_t pid;
	int status, ready[2];
	char b;

	(void)state;
	tu_make_file(pa, 4, 11);
	tu_make_file(pb, 4, 12);
	assert_int_equal(pc_open(c, pa, O_RDWR, 0, &fa), 0);
	assert_int_equal(pc_open(c, pb, O_RDWR, 0, &fb), 0);
	tu_read_page(fa, 0, 11);	/* page 0 cached, uptodate */
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pc_page *p = pc__find_get_page(fa->mapping, 0);

		if (!p)
			_exit(2);
		pc__read_lock(&fa->mapping->i_rwsem);
		pc__lock_page(&c->wait, p);
		/* (a trylock: two i_rwsems are never both waited for) */
		if (!pc__write_trylock(&fb->mapping->i_rwsem))
			_exit(5);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		pause();	/* killed holding the three */
		_exit(4);
	}
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1) {
		assert_int_equal(waitpid(pid, &status, 0), pid);
		fail_msg("child status %#x", status);
	}
	tu_kill_wait(pid);
	assert_int_equal(pc_ftruncate(fa, 3 * PG), 0);	/* i_rwsem */
	assert_int_equal(pc_pwrite(fa, "k", 1, 0), 1);	/* the page lock */
	assert_int_equal(pc_pwrite(fb, "m", 1, 0), 1);	/* the other one */
	tu_wait_processes(c, 1);	/* its reap over: counted at its end */
	assert_int_equal(tu_vm(c, "shared_locks_reaped") - locks0, 3);
	assert_int_equal(tu_vm(c, "shared_procs_reaped") - procs0, 1);
	assert_false(pc_cache_broken(c));
	assert_int_equal(pc_pread(fa, buf, PG, 0), PG);
	assert_int_equal(buf[0], 'k');
	assert_int_equal(pc_fsync(fa), 0);
	assert_int_equal(pc_close(fa), 0);
	assert_int_equal(pc_close(fb), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	{
		int fd = open(pa, O_RDONLY);
		struct stat st;

		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_size, 3 * PG);
		assert_int_equal(pread(fd, buf, 1, 0), 1);
		assert_int_equal(buf[0], 'k');
		close(fd);
	}
	close(ready[0]);
}

/*
 * A child dies in the middle of a truncation, after the disk was cut
 * (held there by the test, as a hook would: i_rwsem exclusive, marked as
 * the truncation marks it): the cache cannot mend what it left, so the
 * reaper says it is broken.
 */
static void test_truncate_holder_killed(void **state)
{
	const char *path = tu_path("trunc_killed");
	pc_cache *c = tu_cache("shared=on memory=4M" IO);
	pc_file *f;
	pid_t pid;
	int ready[2];
	char b;

	(void)state;
	tu_make_file(path, 4, 13);
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc__write_lock(&f->mapping->i_rwsem);
		pc__rwlock_fragile(&f->mapping->i_rwsem, true);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	tu_kill_wait(pid);
	assert_int_equal(pc_ftruncate(f, PG), 0);	/* no hang */
	assert_true(pc_cache_broken(c));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_taken_killed),
		cmocka_unit_test(test_waiter_killed),
		cmocka_unit_test(test_handed_killed),
		cmocka_unit_test(test_unlock_killed),
		cmocka_unit_test(test_wake_killed),
		cmocka_unit_test(test_read_ref_killed),
		cmocka_unit_test(test_isolate_killed),
		cmocka_unit_test(test_pid_reused),
		cmocka_unit_test(test_wb_tagged_killed),
		cmocka_unit_test(test_wb_marked_killed),
		cmocka_unit_test(test_pins_killed),
		cmocka_unit_test(test_pins_threads_killed),
		cmocka_unit_test(test_read_wait_killed),
		cmocka_unit_test(test_ra_new_killed),
		cmocka_unit_test(test_wb_got_killed),
		cmocka_unit_test(test_drain_killed),
		cmocka_unit_test(test_wb_ending_killed),
		cmocka_unit_test(test_wb_queued_killed),
		cmocka_unit_test(test_exec_ebr),
		cmocka_unit_test(test_killed_io),
		cmocka_unit_test(test_lock_holder_killed),
		cmocka_unit_test(test_inherited_killed),
		cmocka_unit_test(test_pos_lock_killed),
		cmocka_unit_test(test_locks_holder_killed),
		cmocka_unit_test(test_truncate_holder_killed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
