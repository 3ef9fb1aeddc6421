/*
 * test_proc.c - one identity for a process (src/proc.c).
 *
 * What is checked:
 *   - this process's identity: its pid, its start time as /proc says it,
 *     an image id that is not 0, the same at every look and in every
 *     thread;
 *   - a forked child's identity is its own: its pid, its start time, an
 *     image other than its parent's; the parent's stays as it was;
 *   - liveness: a running process of that pid and start time is alive; of
 *     another start time it is not (a reused pid); a zombie is not; a pid
 *     reaped is not; start time 0 (unknown) takes any running process of
 *     the pid for it;
 *   - a new image (what an exec makes; pc__proc_test_new_image) keeps pid
 *     and start time and draws another image id.
 * Children report through pipes; no test waits on time.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

static void same_id(const struct pc_proc_id *a, const struct pc_proc_id *b)
{
	assert_int_equal(a->pid, b->pid);
	assert_true(a->start == b->start);
	assert_true(a->image == b->image);
}

static void *look(void *arg)
{
	pc__proc_self(arg);
	return NULL;
}

static void test_self(void **state)
{
	struct pc_proc_id me, again, there;
	pthread_t t;

	(void)state;
	pc__proc_self(&me);
	assert_int_equal(me.pid, getpid());
	assert_true(me.start != 0);
	assert_true(me.start == pc__process_start(getpid()));
	assert_true(me.image != 0);
	pc__proc_self(&again);
	same_id(&me, &again);
	assert_int_equal(pthread_create(&t, NULL, look, &there), 0);
	tu_join(t);
	same_id(&me, &there);
	assert_true(pc__proc_alive(&me));
}

/*
 * A child that sends its identity on @out, then waits for a byte on @in
 * and exits.
 */
static pid_t child_says(int out[2], int in[2])
{
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(in), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pc_proc_id me;
		char c;

		pc__proc_self(&me);
		if (write(out[1], &me, sizeof(me)) != sizeof(me))
			_exit(1);
		_exit(read(in[0], &c, 1) == 1 ? 0 : 2);
	}
	close(out[1]);
	close(in[0]);
	return pid;
}

static void test_fork_child_and_liveness(void **state)
{
	struct pc_proc_id me, before, kid, other;
	int out[2], in[2], status;
	siginfo_t si;
	pid_t pid;

	(void)state;
	pc__proc_self(&before);
	pid = child_says(out, in);
	assert_int_equal(read(out[0], &kid, sizeof(kid)), sizeof(kid));
	assert_int_equal(kid.pid, pid);
	assert_true(kid.start == pc__process_start(pid));
	assert_true(kid.image != 0 && kid.image != before.image);
	pc__proc_self(&me);
	same_id(&me, &before);			/* the parent's is its own */

	assert_true(pc__proc_alive(&kid));	/* running, asleep in read */
	other = kid;
	other.start++;				/* the pid, reused */
	assert_false(pc__proc_alive(&other));
	assert_true(pc__process_alive(pid, 0));	/* start unknown: any */

	assert_int_equal(write(in[1], "x", 1), 1);
	/* Exited, not yet waited for: a zombie is not alive. */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_false(pc__proc_alive(&kid));
	assert_false(pc__process_alive(pid, 0));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(pc__proc_alive(&kid));	/* reaped: no such pid */
	assert_true(pc__process_start(pid) == 0 ||
		    pc__process_start(pid) != kid.start);
	close(out[0]);
	close(in[1]);
}

static void test_new_image(void **state)
{
	struct pc_proc_id before, after;

	(void)state;
	pc__proc_self(&before);
	pc__proc_test_new_image();
	pc__proc_self(&after);
	assert_int_equal(after.pid, before.pid);
	assert_true(after.start == before.start);
	assert_true(after.image != 0 && after.image != before.image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_fork_child_and_liveness),
		cmocka_unit_test(test_new_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
