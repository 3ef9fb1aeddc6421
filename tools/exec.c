/*
 * tools/exec.c - `pagecache exec`: run an unmodified program with its
 * regular-file I/O through the user's page cache.
 *
 *   pagecache exec [--memory SIZE] [--set KEY=VALUE]... [--stats FILE]
 *                  [--cache NAME | --private] [--] PROGRAM [ARGS]
 *
 * It checks the configuration (pc_config_check: the keys and values of
 * pc_cache_create, and the budget against its nodes), makes sure the
 * cache exists (below), puts libpagecache-preload.so at the end of
 * LD_PRELOAD, sets PAGECACHE_CONFIG, PAGECACHE_CACHE (the cache's name;
 * unset with --private) and, with --stats, PAGECACHE_STATS (to FILE,
 * made absolute and emptied), and execs the program: no fork, so the exit status, the
 * signals and the process id are the program's.
 *
 * The cache.  By default every process of every invocation of the user's
 * joins one shared cache, "default-<hash of the library's sources>" (one
 * per build: another build's layout is not ours; --cache NAME: a cache of
 * that name instead; the library's region /dev/shm/pagecache-u<UID>-NAME),
 * so that programs started separately are coherent as under the kernel.
 * The first invocation makes it: it starts the cache process
 * (pc_cache_spawn, src/daemon.c: a daemon that creates the cache, shared=on
 * name=..., with the invocation's configuration, runs its threads, and
 * once no process has been attached for a second destroys it: everything
 * written back, the name removed).  Later invocations join it as it is,
 * but a larger --memory grows it (to memory.max: 4G at least unless
 * set).  The program's shim joins by PAGECACHE_CACHE (pc_cache_attach).
 * --private gives each process a private cache of its own, coherent with
 * the others only at open (with what they wrote back: at fsync, at exit),
 * the behaviour before shared caches.  The preload library is found
 * beside this binary (the build tree: build/release/pagecache and
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pagecache.h"

#define PRELOAD_NAME "libpagecache-preload.so"
#define EXIT_USAGE 2
#define EXIT_NO_SHIM 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127
#define GROW_MAX (4ull << 30)	/* a made cache may grow to this at least */

int pc_exec_main(int argc, char **argv);

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pagecache exec [--memory SIZE] [--set KEY=VALUE]... "
		"[--stats FILE]\n"
		"                      [--cache NAME | --private] [--] "
		"PROGRAM [ARGS]\n\n"
		"Run PROGRAM with its regular-file I/O through the user's page "
		"cache\n(libpagecache-preload.so): one for every process of every "
		"invocation,\ncoherent as the kernel's.\n\n"
		"  --memory SIZE      the cache's budget (K, M, G suffixes; "
		"default 64M);\n"
		"                     a larger one grows a cache that exists\n"
		"  --set KEY=VALUE    any key of the library's configuration "
		"(README.md)\n"
		"  --stats FILE       at exit, the counters, one 'name value' "
		"line each:\n"
		"                     pc_vmstat's (a shared cache's own totals),"
		" then the\n"
		"                     shim's, summed over the processes "
		"(managed_opens,\n"
		"                     passthrough_opens, mmap_handoffs ...)\n"
		"  --cache NAME       join the shared cache NAME, made with this "
		"budget\n"
		"                     if it does not exist (default: the user's\n"
		"                     'default-...' of this build)\n"
		"  --private          a private cache per process instead, "
		"coherent with\n"
		"                     the others only at open; a killed "
		"process's data\n"
		"                     not yet written back dies with it\n\n"
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
	int first_err = ENOENT;

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
		if (i == 0)
			first_err = errno;
	}
	/* Beside the program but unreadable (a directory above it this user
	 * may not search, say) is worth saying: it is not "missing". */
	if (first_err != ENOENT)
		fprintf(stderr, "pagecache exec: %s/" PRELOAD_NAME ": %s\n", exe,
			strerror(first_err));
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

struct opts {
	char *cfg;		/* the configuration string */
	char *stats;		/* --stats FILE */
	const char *cache;	/* --cache NAME; NULL: --private */
	const char *memory;	/* the budget asked (--memory, --set memory=) */
	bool cache_default;	/* no --cache, no --private */
	bool memory_max;	/* memory.max was set */
};

/* Parse the options into @o; the index of PROGRAM, or -exit. */
static int parse(int argc, char **argv, struct opts *o)
{
	char **cfg = &o->cfg, **stats = &o->stats;
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
		if (!strcmp(a, "--private")) {
			o->cache = NULL;
			o->cache_default = false;
			continue;
		}
		if (!strncmp(a, "--memory=", 9) || !strncmp(a, "--set=", 6) ||
		    !strncmp(a, "--stats=", 8) || !strncmp(a, "--cache=", 8)) {
			v = strchr(a, '=') + 1;
		} else if (!strcmp(a, "--memory") || !strcmp(a, "--set") ||
			   !strcmp(a, "--stats") || !strcmp(a, "--cache")) {
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
		if (!strncmp(a, "--cache", 7)) {
			o->cache = v;
			o->cache_default = false;
		} else if (!strncmp(a, "--memory", 8)) {
			if (config_add(cfg, "memory", v))
				return -EXIT_USAGE;
			o->memory = v;
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
			if (!strcmp(key, "memory"))
				o->memory = eq + 1;
			if (!strcmp(key, "memory.max"))
				o->memory_max = true;
		} else {
			free(*stats);
			*stats = strdup(v);
		}
	}
	return i;
}

/* SIZE as the configuration writes it (pc_config_check took it): bytes. */
static uint64_t size_of(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 10);

	switch (*end) {
	case 'k': case 'K': return n << 10;
	case 'm': case 'M': return n << 20;
	case 'g': case 'G': return n << 30;
	case 't': case 'T': return n << 40;
	default: return n;
	}
}

/* A later invocation asks for more than the cache @c has: it grows. */
static void cache_grow(pc_cache *c, const char *name, const char *memory)
{
	uint64_t pages = 0, want = memory ? size_of(memory) : 0;
	int r;

	if (!want || pc_vmstat(c, "nr_budget_pages", &pages) ||
	    want <= pages * 4096)
		return;
	r = pc_cache_resize(c, want);
	if (r)
		fprintf(stderr, "pagecache exec: the cache %s keeps its budget of "
			"%llu MiB: it cannot grow to %s (%s)\n", name,
			(unsigned long long)(pages >> 8), memory, strerror(-r));
}

/*
 * Make sure the cache @name exists, started with @cfg if not (with room to
 * grow: memory.max, unless set, is at least GROW_MAX), at least @memory
 * large if that is given: 0, or the exit status (said on stderr).
 */
static int cache_ensure(const char *name, const char *cfg, const char *memory,
			bool memory_max)
{
	char *full = NULL;
	int r = EXIT_USAGE;

	for (int tries = 0; tries < 50; tries++) {
		pc_cache *c;
		int a = pc_cache_attach(&c, name);

		if (a == 0) {		/* it serves: we only looked */
			cache_grow(c, name, memory);
			pc_cache_destroy(c);
			r = 0;
			break;
		}
		if (a == -EAGAIN) {	/* being made */
			struct timespec ts = { 0, 10 * 1000000L };

			nanosleep(&ts, NULL);
			continue;
		}
		if (a == -EPROTO) {	/* another build's: the caller may pick */
			r = -EPROTO;
			break;
		}
		if (a == -ENOTCONN) {	/* its cache process died: a stale name */
			(void)pc_cache_remove(name);
		} else if (a != -ENOENT) {
			fprintf(stderr, "pagecache exec: cannot join the cache %s: "
				"%s\n", name, strerror(-a));
			break;
		}
		if (!full) {
			size_t len = strlen(cfg ? cfg : "") + strlen(name) + 64;
			uint64_t max = memory ? size_of(memory) : 0;
			char grow[40] = "";

			full = malloc(len);
			if (!full)
				break;
			if (!memory_max)
				snprintf(grow, sizeof(grow), " memory.max=%llu",
					 (unsigned long long)(max > GROW_MAX ?
							      max : GROW_MAX));
			snprintf(full, len, "%s%sshared=on name=%s%s",
				 cfg ? cfg : "", cfg && *cfg ? " " : "", name,
				 grow);
		}
		a = pc_cache_spawn(full);	/* the cache process */
		if (a == 0) {
			r = 0;
			break;
		}
		if (a != -EEXIST) {	/* not another invocation's race */
			fprintf(stderr, "pagecache exec: cannot make the cache %s: "
				"%s\n", name, strerror(-a));
			break;
		}
	}
	free(full);
	return r;
}

/* The region's name of the user's cache @cache: "u<UID>-<cache>". */
static int cache_name(const char *cache, char *buf, size_t size)
{
	size_t n = strlen(cache);

	for (size_t i = 0; i < n; i++) {
		char ch = cache[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.'))
			n = 0;
	}
	if (!n || n > 48) {
		fprintf(stderr, "pagecache exec: --cache '%s': a name is 1 to 48 "
			"letters, digits, '.', '_' or '-'\n", cache);
		return EXIT_USAGE;
	}
	snprintf(buf, size, "u%u-%s", (unsigned)geteuid(), cache);
	return 0;
}

/* Everything but the exec; 0, or the exit status. */
static int prepare(struct opts *o)
{
	char *shim, name[64];
	int r = 0;

	if (pc_config_check(o->cfg) != 0) {
		fprintf(stderr, "pagecache exec: bad configuration '%s'\n",
			o->cfg ? o->cfg : "");
		return EXIT_USAGE;
	}
	if (o->stats) {
		char *abs = stats_file(o->stats);

		free(o->stats);
		o->stats = abs;
		if (!abs)
			return EXIT_USAGE;
	}
	shim = find_preload();
	if (!shim) {
		fprintf(stderr, "pagecache exec: " PRELOAD_NAME " is neither beside "
			"this program nor in ../lib\n");
		return EXIT_NO_SHIM;
	}
	if (o->cache) {
		r = cache_name(o->cache, name, sizeof(name));
		if (!r)
			r = cache_ensure(name, o->cfg, o->memory, o->memory_max);
		/* The default's name is another build's (same sources, other
		 * flags): the next of a few names every invocation tries in
		 * the same order. */
		for (int k = 1; r == -EPROTO && o->cache_default && k < 10; k++) {
			char base[48];

			cache_name(o->cache, base, sizeof(base));
			snprintf(name, sizeof(name), "%.40s.%d", base, k);
			r = cache_ensure(name, o->cfg, o->memory, o->memory_max);
		}
		if (r == -EPROTO) {
			fprintf(stderr, "pagecache exec: the cache %s is another "
				"build's: use --cache OTHER\n", name);
			r = EXIT_USAGE;
		}
		if (r) {
			free(shim);
			return r;
		}
	}
	if (set_preload(shim) ||
	    setenv("PAGECACHE_CONFIG", o->cfg ? o->cfg : "", 1) ||
	    (o->stats && setenv("PAGECACHE_STATS", o->stats, 1)) ||
	    (o->cache ? setenv("PAGECACHE_CACHE", name, 1)
		      : unsetenv("PAGECACHE_CACHE"))) {
		perror("pagecache exec: setenv");
		r = EXIT_NO_SHIM;
	}
	free(shim);
	return r;
}

int pc_exec_main(int argc, char **argv)
{
	struct opts o = { .cache = "default-" PC_SRC_HASH,
			  .cache_default = true };
	int i = parse(argc, argv, &o), r;

	if (i < 0) {
		r = i == -0x100 ? 0 : -i;
	} else if (i >= argc) {
		fprintf(stderr, "pagecache exec: no program to run\n");
		usage(stderr);
		r = EXIT_USAGE;
	} else if (!(r = prepare(&o))) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "pagecache exec: %s: %s\n", argv[i], strerror(errno));
		r = errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND
							: EXIT_CANNOT_RUN;
	}
	free(o.cfg);
	free(o.stats);
	return r;
}
