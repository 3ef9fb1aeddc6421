/*
 * util_assert.c - cmocka's assertions in any thread (util.h explains).
 *
 * Failures of threads other than the test's: a count and the first
 * message, under fail_lock.  The test thread is the one that started the
 * program (cmocka runs every test there), noted before main with its
 * process: in a child the test forked, a failure exits the child with
 * status 99 (the parent asserts the status).  This file alone calls
 * cmocka's own _assert_* and _fail.
 */
#define TU_NO_REDIRECT
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static pthread_t test_thread;
static pid_t test_pid;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned fail_count;		/* fail_lock */
static char fail_first[512];		/* fail_lock */

__attribute__((constructor)) static void note_test_thread(void)
{
	test_thread = pthread_self();
	test_pid = getpid();
}

static bool in_test_thread(void)
{
	return getpid() == test_pid && pthread_equal(pthread_self(), test_thread);
}

/* Another thread failed: say where, record it, and end the thread. */
__attribute__((noreturn, format(printf, 3, 4)))
static void thread_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&fail_lock);
	if (fail_count++ == 0)
		snprintf(fail_first, sizeof(fail_first), "%s:%d: %s", file,
			 line, msg);
	pthread_mutex_unlock(&fail_lock);
	if (getpid() != test_pid) {	/* a forked child: its status says it */
		printf("[  ERROR   ] in child %d: %s:%d: %s\n", (int)getpid(),
		       file, line, msg);
		fflush(stdout);
		_exit(99);
	}
	printf("[  ERROR   ] in a worker thread: %s:%d: %s\n", file, line, msg);
	fflush(stdout);
	pthread_exit(NULL);
}

void tu__assert_true(const LargestIntegralType result, const char *expr,
		     const char *file, int line)
{
	if (in_test_thread())
		_assert_true(result, expr, file, line);
	else if (!result)
		thread_fail(file, line, "%s", expr);
}

void tu__assert_int_equal(const LargestIntegralType a,
			  const LargestIntegralType b, const char *file,
			  int line)
{
	if (in_test_thread())
		_assert_int_equal(a, b, file, line);
	else if (a != b)
		thread_fail(file, line, "%#jx (%jd) != %#jx (%jd)", a,
			    (intmax_t)a, b, (intmax_t)b);
}

void tu__assert_int_not_equal(const LargestIntegralType a,
			      const LargestIntegralType b, const char *file,
			      int line)
{
	if (in_test_thread())
		_assert_int_not_equal(a, b, file, line);
	else if (a == b)
		thread_fail(file, line, "%#jx == %#jx", a, b);
}

void tu__assert_string_equal(const char *a, const char *b, const char *file,
			     int line)
{
	if (in_test_thread())
		_assert_string_equal(a, b, file, line);
	else if (!a || !b || strcmp(a, b) != 0)
		thread_fail(file, line, "\"%s\" != \"%s\"", a ? a : "(null)",
			    b ? b : "(null)");
}

void tu__assert_memory_equal(const void *a, const void *b, size_t size,
			     const char *file, int line)
{
	if (in_test_thread()) {
		_assert_memory_equal(a, b, size, file, line);
	} else if (memcmp(a, b, size) != 0) {
		const unsigned char *x = a, *y = b;
		size_t i = 0;

		while (x[i] == y[i])
			i++;
		thread_fail(file, line, "memory differs at byte %zu of %zu "
			    "(%#x != %#x)", i, size, x[i], y[i]);
	}
}

void tu__fail(const char *file, int line)
{
	if (in_test_thread())
		_fail(file, line);
	thread_fail(file, line, "fail()");
}

unsigned tu_thread_failures(void)
{
	unsigned n;

	pthread_mutex_lock(&fail_lock);
	n = fail_count;
	fail_count = 0;
	pthread_mutex_unlock(&fail_lock);
	return n;
}

void tu__check_threads(const char *file, int line)
{
	char first[sizeof(fail_first)];
	unsigned n;

	pthread_mutex_lock(&fail_lock);
	memcpy(first, fail_first, sizeof(first));
	pthread_mutex_unlock(&fail_lock);
	n = tu_thread_failures();
	if (n) {
		print_error("ERROR: %u failure(s) in other threads; the first: "
			    "%s\n", n, first);
		_fail(file, line);
	}
}

void tu__join(pthread_t t, const char *file, int line)
{
	int e = pthread_join(t, NULL);

	if (e) {
		print_error("ERROR: pthread_join: %s\n", strerror(e));
		_fail(file, line);
	}
	tu__check_threads(file, line);
}

int tu__teardown(void **state)
{
	char first[sizeof(fail_first)];
	unsigned n;

	(void)state;
	pthread_mutex_lock(&fail_lock);
	memcpy(first, fail_first, sizeof(first));
	pthread_mutex_unlock(&fail_lock);
	n = tu_thread_failures();
	if (n)
		printf("[  ERROR   ] %u failure(s) in other threads during the "
		       "test, never checked by it; the first: %s\n", n, first);
	return n ? -1 : 0;
}
