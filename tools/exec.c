/*
 * tools/exec.c - `pagecache exec`: run an unmodified program with its
 * regular-file I/O through a page cache of its own.
 *
 *   pagecache exec [--memory SIZE] [--set KEY=VALUE]... [--stats FILE]
 *                  [--] PROGRAM [ARGS]
 *
 * It checks the configuration (pc_config_check: the keys and values of
 * pc_cache_create, and the budget against its nodes), puts libpagecache-preload.so at the end of LD_PRELOAD,
 * sets PAGECACHE_CONFIG (and PAGECACHE_STATS to FILE, made absolute and
 * emptied), and execs the program: no fork, so the exit status, the
 * signals and the process id are the program's.  The preload library is
 * found beside this binary (the build tree: build/release/pagecache and
 * build/release/libpagecache-preload.so) or in ../lib beside it (an
 * install: PREFIX/bin and PREFIX/lib).  A build with a sanitizer preloads
 * the sanitizer's runtime first, which an uninstrumented program needs.
 *
 * Exit status, as env(1): 2 for a bad option or configuration (with a
 * message), 125 if the preload library is missing, 126 if PROGRAM was
 * found but could not be run, 127 if it was not found; otherwise the
 * program's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pagecache.h"

#define PRELOAD_NAME "libpagecache-preload.so"
#define EXIT_USAGE 2
#define EXIT_NO_SHIM 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

int pc_exec_main(int argc, char **argv);

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pagecache exec [--memory SIZE] [--set KEY=VALUE]... "
		"[--stats FILE] [--] PROGRAM [ARGS]\n\n"
		"Run PROGRAM with its regular-file I/O through a page cache of "
		"its own\n(libpagecache-preload.so); each process it starts gets "
		"one too.\n\n"
		"  --memory SIZE      the cache's budget (K, M, G suffixes; "
		"default 64M)\n"
		"  --set KEY=VALUE    any key of the library's configuration "
		"(README.md)\n"
		"  --stats FILE       at exit, the counters of every process, "
		"summed: one\n"
		"                     'name value' line each (pc_vmstat's names, "
		"then\n"
		"                     managed_opens, passthrough_opens, "
		"mmap_handoffs ...)\n\n"
		"Exit status: the program's; 2 bad option, 125 no preload "
		"library,\n126 PROGRAM not executable, 127 PROGRAM not found.\n");
}

/* Append " piece" to the growing configuration string. */
static int config_add(char **cfg, const char *key, const char *value)
{
	size_t old = *cfg ? strlen(*cfg) : 0;
	size_t len = old + strlen(key) + strlen(value) + 3;
	char *s = realloc(*cfg, len);

	if (!s)
		return -1;
	snprintf(s + old, len - old, "%s%s=%s", old ? " " : "", key, value);
	*cfg = s;
	return 0;
}

/* The preload library beside us or in ../lib; NULL if neither. */
static char *find_preload(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	static const char *const where[] = { "", "/../lib" };

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/" PRELOAD_NAME, exe, where[i]);
		if (access(path, R_OK) == 0)
			return realpath(path, NULL);
	}
	return NULL;
}

/* @file as an absolute path, emptied (created if need be). */
static char *stats_file(const char *file)
{
	char *abs;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "pagecache exec: --stats %s: %s\n", file,
			strerror(errno));
		return NULL;
	}
	close(fd);
	abs = realpath(file, NULL);
	if (!abs)
		fprintf(stderr, "pagecache exec: --stats %s: %s\n", file,
			strerror(errno));
	return abs;
}

static int set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	const char *rt = "";
	size_t len;
	char *v;
	int r;

#ifdef PC_SANITIZER_RUNTIME
	/* An instrumented shim needs its runtime loaded first. */
	rt = PC_SANITIZER_RUNTIME ":";
	setenv("ASAN_OPTIONS", getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") :
	       "verify_asan_link_order=0:detect_leaks=0", 1);
#endif
	len = strlen(rt) + (old ? strlen(old) + 1 : 0) + strlen(shim) + 1;
	v = malloc(len);
	if (!v)
		return -1;
	snprintf(v, len, "%s%s%s%s", rt, old && *old ? old : "",
		 old && *old ? ":" : "", shim);
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	return r;
}

/* Parse the options into *cfg and *stats; the index of PROGRAM, or -exit. */
static int parse(int argc, char **argv, char **cfg, char **stats)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strcmp(a, "--"))
			return i + 1;
		if (a[0] != '-')
			return i;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -0x100;	/* exit 0 */
		}
		if (!strncmp(a, "--memory=", 9) || !strncmp(a, "--set=", 6) ||
		    !strncmp(a, "--stats=", 8)) {
			v = strchr(a, '=') + 1;
		} else if (!strcmp(a, "--memory") || !strcmp(a, "--set") ||
			   !strcmp(a, "--stats")) {
			if (++i >= argc) {
				fprintf(stderr, "pagecache exec: %s needs a value\n", a);
				return -EXIT_USAGE;
			}
			v = argv[i];
		} else {
			fprintf(stderr, "pagecache exec: unknown option '%s' "
				"(see pagecache exec --help)\n", a);
			return -EXIT_USAGE;
		}
		if (!strncmp(a, "--memory", 8)) {
			if (config_add(cfg, "memory", v))
				return -EXIT_USAGE;
		} else if (!strncmp(a, "--set", 5)) {
			const char *eq = strchr(v, '=');
			char key[128];

			if (!eq || eq == v || (size_t)(eq - v) >= sizeof(key)) {
				fprintf(stderr, "pagecache exec: --set '%s' is not "
					"KEY=VALUE\n", v);
				return -EXIT_USAGE;
			}
			snprintf(key, sizeof(key), "%.*s", (int)(eq - v), v);
			if (config_add(cfg, key, eq + 1))
				return -EXIT_USAGE;
		} else {
			free(*stats);
			*stats = strdup(v);
		}
	}
	return i;
}

/* Everything but the exec; 0, or the exit status. */
static int prepare(char *cfg, char **stats)
{
	char *shim;
	int r = 0;

	if (pc_config_check(cfg) != 0) {
		fprintf(stderr, "pagecache exec: bad configuration '%s'\n",
			cfg ? cfg : "");
		return EXIT_USAGE;
	}
	if (*stats) {
		char *abs = stats_file(*stats);

		free(*stats);
		*stats = abs;
		if (!abs)
			return EXIT_USAGE;
	}
	shim = find_preload();
	if (!shim) {
		fprintf(stderr, "pagecache exec: " PRELOAD_NAME " is neither beside "
			"this program nor in ../lib\n");
		return EXIT_NO_SHIM;
	}
	if (set_preload(shim) || setenv("PAGECACHE_CONFIG", cfg ? cfg : "", 1) ||
	    (*stats && setenv("PAGECACHE_STATS", *stats, 1))) {
		perror("pagecache exec: setenv");
		r = EXIT_NO_SHIM;
	}
	free(shim);
	return r;
}

int pc_exec_main(int argc, char **argv)
{
	char *cfg = NULL, *stats = NULL;
	int i = parse(argc, argv, &cfg, &stats), r;

	if (i < 0) {
		r = i == -0x100 ? 0 : -i;
	} else if (i >= argc) {
		fprintf(stderr, "pagecache exec: no program to run\n");
		usage(stderr);
		r = EXIT_USAGE;
	} else if (!(r = prepare(cfg, &stats))) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "pagecache exec: %s: %s\n", argv[i], strerror(errno));
		r = errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND
							: EXIT_CANNOT_RUN;
	}
	free(cfg);
	free(stats);
	return r;
}
