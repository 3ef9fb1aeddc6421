/*
 * util.h - what the tests share: a scratch directory, seeded randomness
 * (every random test prints its seed; PC_SEED=N replays it), and cmocka.
 */
#ifndef PC_TEST_UTIL_H
#define PC_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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
/* Is the filesystem of tu_dir() refusing O_DIRECT? (tmpfs) */
int tu_dir_is_tmpfs(void);

#endif
