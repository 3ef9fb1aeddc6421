/*
 * util.h - what the tests share: a scratch directory, seeded randomness
 * (every random test prints its seed; PC_SEED=N replays it), cmocka
 * assertions that work in any thread and in forked children, children
 * killed and reaped, the reference model of a file, and small helpers
 * (counters, files made and checked around the cache).
 *
 * Assertions in threads.  cmocka fails a test by longjmp to the test's
 * start, which is only defined in the thread that runs the test.  This
 * header sends cmocka's assertion functions (_assert_true,
 * _assert_int_equal, ..., _fail: every assert_* macro, fail() and
 * fail_msg() end in one of them) through tu__*: in the thread running the
 * test they are cmocka's own; in any other thread a failure is printed,
 * recorded, and the thread exits (pthread_exit: it holds nothing cmocka
 * needs); in a child process the test forked, the child exits with status
 * 99, which the test asserts (tu_in_child).  The test thread fails on a recorded failure when it joins the
 * thread with tu_join (or calls tu_thread_failures), and at the latest when
 * the test ends: cmocka_unit_test() here adds a teardown that fails the
 * test if another thread failed during it.  So worker code uses the usual
 * asserts and stays short.
 */
#ifndef PC_TEST_UTIL_H
#define PC_TEST_UTIL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pagecache.h"

/* ------------------------------------------------------------------ */
/* Assertions in any thread.                                            */

void tu__assert_true(const LargestIntegralType result, const char *expr,
		     const char *file, int line);
void tu__assert_int_equal(const LargestIntegralType a,
			  const LargestIntegralType b, const char *file,
			  int line);
void tu__assert_int_not_equal(const LargestIntegralType a,
			      const LargestIntegralType b, const char *file,
			      int line);
void tu__assert_string_equal(const char *a, const char *b, const char *file,
			     int line);
void tu__assert_memory_equal(const void *a, const void *b, size_t size,
			     const char *file, int line);
void tu__fail(const char *file, int line);
int tu__teardown(void **state);

#ifndef TU_NO_REDIRECT
#define _assert_true tu__assert_true
#define _assert_int_equal tu__assert_int_equal
#define _assert_int_not_equal tu__assert_int_not_equal
#define _assert_string_equal tu__assert_string_equal
#define _assert_memory_equal tu__assert_memory_equal
#define _fail tu__fail
#undef cmocka_unit_test
#define cmocka_unit_test(f) cmocka_unit_test_teardown(f, tu__teardown)
#endif

/* pthread_join, then fail if that or any other thread failed. */
#define tu_join(t) tu__join((t), __FILE__, __LINE__)
/* Fail if a thread other than the test's failed since the last check. */
#define tu_check_threads() tu__check_threads(__FILE__, __LINE__)
/* Run @fn in a forked child and fail unless it exits with status 0. */
void tu_in_child(void (*fn)(void *), void *arg);
/*
 * Run @fn(i, @arg) in @n forked children at once (i = 0 .. n-1): a child
 * fails when an assertion failed in it, in any of its threads; fail
 * unless every child exits with status 0.
 */
void tu_in_children(unsigned n, void (*fn)(unsigned i, void *arg), void *arg);
/* SIGKILL to the child @pid, then reap it: it must have died of a signal. */
void tu_kill_wait(pid_t pid);
/*
 * Until shared cache @c has @n processes attached, then fail unless it
 * has exactly @n: a dead process counts until its reap is over, by this
 * call (pc_cache_processes reaps) or by the home's watch of it.
 */
void tu_wait_processes(pc_cache *c, unsigned n);
/* Failures other threads recorded since the last call; forgets them. */
unsigned tu_thread_failures(void);
void tu__join(pthread_t t, const char *file, int line);
void tu__check_threads(const char *file, int line);

/* ------------------------------------------------------------------ */
/* Scratch files, seeds, patterns.                                      */

/* A fresh directory for this test program; removed at exit. */
const char *tu_dir(void);
/* tu_dir()/name, in a static rotating buffer. */
const char *tu_path(const char *name);
/* The seed: PC_SEED from the environment, or the clock; printed once. */
uint64_t tu_seed(const char *test);
/* xorshift64* */
uint64_t tu_rand(uint64_t *state);
/* Fill with bytes derived from (seed, offset): checkable without a copy. */
void tu_pattern(void *buf, size_t len, uint64_t seed, uint64_t off);
/*
 * A file of the source tree by its path from the top (@rel: "README.md"),
 * into @buf: found from where this file was compiled, else from
 * PC_TEST_BUILD (the build directory, two levels down).
 */
void tu_source(char *buf, size_t size, const char *rel);
/* Is the filesystem of tu_dir() refusing O_DIRECT? (tmpfs) */
int tu_dir_is_tmpfs(void);
/* A file of @pages pages of tu_pattern(@seed) written with pwrite(2). */
void tu_make_file(const char *path, size_t pages, uint64_t seed);
/* A file of @bytes with no data at all (ftruncate: one hole). */
void tu_make_sparse(const char *path, uint64_t bytes);
/* The first @len bytes of @path, read around the cache, must be @want. */
void tu_disk_check(const char *path, const void *want, size_t len);
/* pc_cache_create(@cfg), failing the test if it refuses. */
pc_cache *tu_cache(const char *cfg);
/* pc_open(@path, O_RDONLY), failing the test if it refuses. */
pc_file *tu_open_ro(pc_cache *c, const char *path);
/* pc_open with POSIX_FADV_RANDOM: one page per miss, no readahead. */
pc_file *tu_open_random(pc_cache *c, const char *path, int flags);
/* Read page @idx of a tu_make_file(@seed) file through @f and check it. */
void tu_read_page(pc_file *f, uint64_t idx, uint64_t seed);
/* pc_pread that must return all of @len, checked against the pattern. */
void tu_read_check(pc_file *f, void *buf, size_t len, uint64_t off,
		   uint64_t seed);
/* Counter @name of @c (fails the test if there is none). */
uint64_t tu_vm(pc_cache *c, const char *name);
void tu_sleep_us(unsigned us);

/* ------------------------------------------------------------------ */
/* The reference model of a file.                                       */
/*
 * What a file must hold after the writes and truncations a test made
 * through the cache: data[0, size) its bytes, zeros from size to cap (so
 * an extension reads zeros, as a hole does).  Each helper does the
 * operation through m->f and to the model, and checks what came back;
 * failures go through the assertions above, so workers may use them.
 */
struct tu_model {
	char path[600];
	unsigned char *data;	/* [cap] */
	size_t size, cap;
	pc_file *f;		/* open handle, or NULL */
};

void tu_model_init(struct tu_model *m, const char *path, size_t cap);
void tu_model_fini(struct tu_model *m);	/* closes m->f if open */
/* pc_open(@flags) into m->f; O_TRUNC empties the model. */
void tu_model_open(struct tu_model *m, pc_cache *c, int flags);
void tu_model_close(struct tu_model *m);
/* pc_pwrite @len bytes of tu_pattern(@pat) at @off; must return @len. */
void tu_model_write(struct tu_model *m, size_t off, size_t len, uint64_t pat);
/* The model's side of a write the caller made itself. */
void tu_model_apply(struct tu_model *m, size_t off, const void *buf,
		    size_t len);
/* pc_ftruncate to @len; must succeed. */
void tu_model_truncate(struct tu_model *m, size_t len);
/* pc_pread @len at @off: the count and bytes the model says. */
void tu_model_read(struct tu_model *m, size_t off, size_t len);
/* @got[0, len) must be the model's bytes at @off; @what names the source. */
void tu_model_check(const struct tu_model *m, const void *got, size_t off,
		    size_t len, const char *what);
/* The file read with read(2), around the cache: exact size and bytes. */
void tu_model_check_disk(const struct tu_model *m);

#endif
