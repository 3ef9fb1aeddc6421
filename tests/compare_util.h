/*
 * compare_util.h - what tests/test_compare.c and test_compare_verdict.c
 * share: the fixtures' folder (tests/fixtures/compare), running
 * `pagecache compare` in-process with its output in memory, result files
 * written on the fly, and checks on text and PNG files.
 */
#ifndef PC_TEST_COMPARE_UTIL_H
#define PC_TEST_COMPARE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "../tools/compare/compare.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define assert_has(hay, needle)                                              \
	do {                                                                 \
		if (!strstr((hay), (needle)))                                \
			fail_msg("missing: [%s]\nin:\n%s", (needle), (hay)); \
	} while (0)
#define assert_lacks(hay, needle)                                            \
	do {                                                                 \
		if (strstr((hay), (needle)))                                 \
			fail_msg("unexpected: [%s]\nin:\n%s", (needle),      \
				 (hay));                                     \
	} while (0)

static inline const char *fixtures(void)
{
	static char dir[1024];
	struct stat st;
	const char *build = getenv("PC_TEST_BUILD");
	const char *file = __FILE__;
	const char *slash = strrchr(file, '/');

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "%.*sfixtures/compare",
		 slash ? (int)(slash - file + 1) : 0, file);
	if (stat(dir, &st) == 0)
		return dir;
	if (build) {
		snprintf(dir, sizeof(dir), "%s/../../tests/fixtures/compare",
			 build);
		if (stat(dir, &st) == 0)
			return dir;
	}
	snprintf(dir, sizeof(dir), "tests/fixtures/compare");
	return dir;
}

static inline const char *fx(const char *name)
{
	static char buf[8][1200];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fixtures(), name);
	return buf[i];
}

struct run {
	int rc;
	char *out, *err;
};

/* Run `pagecache compare ARGS...` (NULL-terminated) in-process. */
static inline struct run compare(const char *arg, ...)
{
	char *argv[32] = { "compare" };
	int argc = 1;
	size_t olen, elen;
	struct run r = { 0 };
	FILE *out = open_memstream(&r.out, &olen);
	FILE *err = open_memstream(&r.err, &elen);
	va_list ap;

	assert_non_null(out);
	assert_non_null(err);
	va_start(ap, arg);
	for (const char *a = arg; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	r.rc = pcc_run(argc, argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}


static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A minimal result file: one metric, one value per repetition. */
static inline void write_result(const char *path, const char *label,
			 const char *task, const char *metric, bool higher,
			 const double *v, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "{\"format\": \"pagecache-result-1\", \"workload\": \"aim7\","
		" \"engine\": \"kernel\", \"label\": \"%s\", \"params\": "
		"{\"task\": \"%s\"}, \"headline\": {\"metric\": \"%s\", "
		"\"higher_is_better\": %s}, \"reps\": [", label, task, metric,
		higher ? "true" : "false");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"metrics\": {\"%s\": %.17g}}", i ? ", " : "",
			metric, v[i]);
	fputs("]}\n", f);
	assert_int_equal(fclose(f), 0);
}

static inline const char *mkdir_tmp(const char *name)
{
	const char *p = tu_path(name);

	mkdir(p, 0777);
	return p;
}

static inline bool have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static inline void assert_png(const char *path)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					      0x1a, '\n' };
	unsigned char buf[8] = { 0 };
	FILE *f = fopen(path, "rb");

	if (!f)
		fail_msg("no plot %s", path);
	assert_int_equal(fread(buf, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(buf, sig, 8);
}

static inline size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The line of out that contains needle (static buffer), or fail. */
static inline const char *line_with(const char *out, const char *needle)
{
	static char buf[512];
	const char *p = strstr(out, needle), *a, *b;

	if (!p)
		fail_msg("no line with [%s] in:\n%s", needle, out);
	for (a = p; a > out && a[-1] != '\n'; a--)
		;
	b = strchr(p, '\n');
	snprintf(buf, sizeof(buf), "%.*s", (int)(b ? b - a : (long)strlen(a)), a);
	return buf;
}

#endif
