/*
 * test_lock.c - the ranked locks and the lock-order witness (src/lock.c).
 *
 * Tests are built with PC_DEBUG, so the witness is on.  A violation aborts
 * the process: each such case runs in a forked child, which must die of
 * SIGABRT with a message naming both locks on its stderr (a pipe the
 * parent reads).  The order cases take nothing that could block: the locks
 * are fresh, so a wrong order is caught before anything waits.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

/*
 * Run @fn in a child with stderr on a pipe; true if it died of SIGABRT.
 * What it wrote is left in @out.
 */
static bool child_aborts(void (*fn)(void), char *out, size_t len)
{
	int fds[2];
	pid_t pid;
	int status;
	size_t got = 0;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDERR_FILENO);
		signal(SIGABRT, SIG_DFL);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < len && (n = read(fds[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static struct pc_lock tree_a, tree_b, lru, freel;
static struct pc_rwlock rwsem;

static void init_locks(void)
{
	pc__lock_init(&tree_a, NULL, PC_RANK_TREE, -1);
	pc__lock_init(&tree_b, NULL, PC_RANK_TREE, -1);
	pc__lock_init(&lru, NULL, PC_RANK_LRU, -1);
	pc__lock_init(&freel, NULL, PC_RANK_FREE, -1);
	pc__rwlock_init(&rwsem, PC_RANK_I_RWSEM);
}

static void test_order_kept(void **state)
{
	(void)state;
	init_locks();
	pc__read_lock(&rwsem);
	pc__lock(&tree_a);
	pc__lock(&lru);
	pc__lock(&freel);
	assert_true(pc__rwlock_held(&rwsem));
	assert_true(pc__lock_held(&tree_a));
	assert_true(pc__lock_held(&lru));
	/* Held is per instance, not per rank. */
	assert_false(pc__lock_held(&tree_b));
	/* Released in any order. */
	pc__unlock(&lru);
	assert_false(pc__lock_held(&lru));
	assert_true(pc__lock_held(&freel));
	pc__unlock(&tree_a);
	pc__unlock(&freel);
	pc__read_unlock(&rwsem);
	assert_false(pc__lock_held(&tree_a));
	assert_false(pc__rwlock_held(&rwsem));
}

/* A trylock is never against the order; it is recorded as held. */
static void test_trylock_unordered(void **state)
{
	(void)state;
	init_locks();
	pc__lock(&freel);
	assert_true(pc__trylock(&tree_a));
	assert_true(pc__lock_held(&tree_a));
	assert_true(pc__write_trylock(&rwsem));
	assert_true(pc__rwlock_held(&rwsem));
	pc__write_unlock(&rwsem);
	pc__unlock(&tree_a);
	pc__unlock(&freel);
}

static void inverted(void)
{
	init_locks();
	pc__lock(&lru);
	pc__lock(&tree_a);	/* tree ranks before lru */
}

static void same_rank(void)
{
	init_locks();
	pc__lock(&tree_a);
	pc__lock(&tree_b);	/* two tree locks, blocking */
}

static void rwsem_under_tree(void)
{
	init_locks();
	pc__lock(&tree_a);
	pc__write_lock(&rwsem);
}

static void unlock_not_held(void)
{
	init_locks();
	pc__unlock(&tree_a);
}

static void sleep_on_page_under_lru(void)
{
	init_locks();
	pc__lock(&lru);
	pc__lock_check_sleep(PC_RANK_PAGE, &lru);
}

static void test_violations_abort(void **state)
{
	char out[4096];
	char a[64], b[64];

	(void)state;
	assert_true(child_aborts(inverted, out, sizeof(out)));
	snprintf(a, sizeof(a), "TREE %p", (void *)&tree_a);
	snprintf(b, sizeof(b), "LRU %p", (void *)&lru);
	assert_non_null(strstr(out, a));
	assert_non_null(strstr(out, b));

	assert_true(child_aborts(same_rank, out, sizeof(out)));
	snprintf(a, sizeof(a), "TREE %p", (void *)&tree_b);
	snprintf(b, sizeof(b), "TREE %p", (void *)&tree_a);
	assert_non_null(strstr(out, a));
	assert_non_null(strstr(out, b));

	assert_true(child_aborts(rwsem_under_tree, out, sizeof(out)));
	assert_non_null(strstr(out, "I_RWSEM"));
	assert_non_null(strstr(out, "TREE"));

	assert_true(child_aborts(unlock_not_held, out, sizeof(out)));
	assert_non_null(strstr(out, "not held"));

	assert_true(child_aborts(sleep_on_page_under_lru, out, sizeof(out)));
	assert_non_null(strstr(out, "PAGE"));
	assert_non_null(strstr(out, "LRU"));
}

static void lock_page_under_tree(void)
{
	static struct pc_page page;
	static struct pc_pagewait w;

	init_locks();
	pc__pagewait_init(&w, true);
	pc__lock(&tree_a);
	pc__lock_page(&w, &page);	/* free, yet sleeping is not allowed */
}

static void test_page_lock_rank(void **state)
{
	static struct pc_page page;
	static struct pc_pagewait w;
	char out[4096];

	(void)state;
	init_locks();
	pc__pagewait_init(&w, true);
	/* i_rwsem ranks before the page lock, the tree lock after it. */
	pc__read_lock(&rwsem);
	pc__lock_page(&w, &page);
	pc__lock(&tree_a);
	pc__unlock(&tree_a);
	pc__unlock_page(&w, &page);
	pc__read_unlock(&rwsem);
	pc__pagewait_fini(&w);

	assert_true(child_aborts(lock_page_under_tree, out, sizeof(out)));
	assert_non_null(strstr(out, "PAGE"));
	assert_non_null(strstr(out, "TREE"));
}

/* ------------------------------------------------------------------ */
/* The shared rwlock (lock.h: the kind that knows its holders).        */

#define SRW_ROUNDS 3000

struct srw {
	struct pc_rwlock l;
	_Atomic int writers_in, readers_in;
	uint64_t counter;		/* under the exclusive lock */
	_Atomic bool bad;
};

static void *srw_worker(void *arg)
{
	struct srw *x = arg;

	for (int i = 0; i < SRW_ROUNDS; i++) {
		if (i % 4 == 0) {
			pc__write_lock(&x->l);
			if (atomic_fetch_add(&x->writers_in, 1) ||
			    atomic_load(&x->readers_in))
				atomic_store(&x->bad, true);
			x->counter++;
			atomic_fetch_sub(&x->writers_in, 1);
			pc__write_unlock(&x->l);
		} else {
			pc__read_lock(&x->l);
			atomic_fetch_add(&x->readers_in, 1);
			if (atomic_load(&x->writers_in))
				atomic_store(&x->bad, true);
			atomic_fetch_sub(&x->readers_in, 1);
			pc__read_unlock(&x->l);
		}
	}
	return NULL;
}

/* Threads of one process: writers alone, readers together, none lost. */
static void test_shared_rwlock_threads(void **state)
{
	static struct srw x;
	pthread_t t[4];

	(void)state;
	pc__pid = getpid();
	pc__rwlock_init_shared(&x.l, PC_RANK_I_RWSEM);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, srw_worker, &x), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_false(atomic_load(&x.bad));
	assert_int_equal(x.counter, 4 * SRW_ROUNDS / 4);
	assert_true(pc__write_trylock(&x.l));
	pc__write_unlock(&x.l);
	pc__rwlock_destroy(&x.l);
}

struct srw_hold {
	struct pc_rwlock *l;
	bool fragile;
};

/* As process 1 would: exclusive, then gone (its thread ends holding it). */
static void *srw_hold_as_1(void *arg)
{
	struct srw_hold *h = arg;

	pc__pid = 1;
	pc__write_lock(h->l);
	pc__rwlock_fragile(h->l, h->fragile);
	pc__pid = getpid();
	return NULL;
}

static void *srw_take_write(void *arg)
{
	pc__write_lock(arg);
	pc__write_unlock(arg);
	return NULL;
}

/*
 * A process killed holding it shared, or exclusive: the reap lets it go
 * (the first in another process's memory, killed for real), a fragile
 * exclusive hold says so, and a live process's holds are never let go.
 */
static void test_shared_rwlock_reap(void **state)
{
	struct pc_rwlock *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2];
	pthread_t t;
	pid_t pid;
	char b;

	(void)state;
	assert_true(l != MAP_FAILED);
	pc__pid = getpid();
	pc__rwlock_init_shared(l, PC_RANK_I_RWSEM);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pc__pid = getpid();
		pc__read_lock(l);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		pause();	/* killed holding it */
		_exit(3);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	assert_false(pc__write_trylock(l));	/* the child reads */
	assert_int_equal(pc__rwlock_reap(l, getpid(), NULL), 0);	/* not ours */
	tu_kill_wait(pid);
	/* A writer waits for it (or comes after the reap: the same). */
	assert_int_equal(pthread_create(&t, NULL, srw_take_write, l), 0);
	assert_int_equal(pc__rwlock_reap(l, pid, NULL), PC_RW_REAPED);
	pthread_join(t, NULL);
	assert_int_equal(pc__rwlock_reap(l, pid, NULL), 0);	/* once */

	/* Exclusive, fragile, then not: "process" 1 held it, is dead. */
	for (int fragile = 1; fragile >= 0; fragile--) {
		struct srw_hold h = { l, fragile };

		assert_int_equal(pthread_create(&t, NULL, srw_hold_as_1, &h), 0);
		pthread_join(t, NULL);
		assert_false(pc__write_trylock(l));
		_Atomic int broken = 0;

		assert_int_equal(pc__rwlock_reap(l, 1, &broken),
				 PC_RW_REAPED | (fragile ? PC_RW_FRAGILE : 0));
		assert_int_equal(broken, fragile);
	}
	pc__read_lock(l);
	pc__read_unlock(l);
	pc__rwlock_destroy(l);
	munmap(l, sizeof(*l));
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_kept),
		cmocka_unit_test(test_trylock_unordered),
		cmocka_unit_test(test_violations_abort),
		cmocka_unit_test(test_page_lock_rank),
		cmocka_unit_test(test_shared_rwlock_threads),
		cmocka_unit_test(test_shared_rwlock_reap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
