/*
 * test_lock.c - the ranked locks and the lock-order witness (src/lock.c).
 *
 * Tests are built with PC_DEBUG, so the witness is on.  A violation aborts
 * the process: each such case runs in a forked child, which must die of
 * SIGABRT with a message naming both locks on its stderr (a pipe the
 * parent reads).  The order cases take nothing that could block: the locks
 * are fresh, so a wrong order is caught before anything waits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	pc__rw_unlock(&rwsem);
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
	pc__rw_unlock(&rwsem);
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
	pc__rw_unlock(&rwsem);
	pc__pagewait_fini(&w);

	assert_true(child_aborts(lock_page_under_tree, out, sizeof(out)));
	assert_non_null(strstr(out, "PAGE"));
	assert_non_null(strstr(out, "TREE"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_kept),
		cmocka_unit_test(test_trylock_unordered),
		cmocka_unit_test(test_violations_abort),
		cmocka_unit_test(test_page_lock_rank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
