/*
 * tools/admin.c - the `pagecache` commands that operate the user's shared
 * caches:
 *
 *   pagecache ls [--json]                     every cache of the user
 *   pagecache stat [NAME] [-w S] [-n N] [--json]   its counters
 *   pagecache files [NAME] [--top N] [--json] the files it holds
 *   pagecache fincore [--cache NAME] [--json] FILE...
 *   pagecache resize NAME SIZE | sync NAME | drop NAME [FILE...] | stop NAME
 *
 * The library knows where caches live and how to read one: ls, stat,
 * files and fincore look through a view (pc_view_open: the cache mapped
 * read-only, this process not among its users, no lock taken), so they
 * change nothing and no program waits for them; resize, sync, drop and
 * stop attach as any user of the cache does (pc_cache_attach) and call
 * pc_cache_resize, pc_cache_sync_all, pc_cache_drop, pc_cache_stop.
 *
 * Names.  NAME is what `pagecache exec --cache NAME` took: the cache
 * "u<UID>-NAME" of the library's (exec.c's convention), or, when there is
 * none, NAME as a program gave it (pc_cache_create's name=).  Without
 * NAME, the user's default cache of this build ("default-<hash>").  ls
 * shows a cache of the user's by the name that reaches it so.
 *
 * Exit statuses: 0; 1 for no such cache (said), another user's (refused)
 * or a cache that cannot serve the request (broken, busy, a writeback
 * error); 2 for a bad option or argument.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pagecache.h"
#include "admin.h"

#ifndef PC_SRC_HASH
#define PC_SRC_HASH "unknown"	/* the Makefile passes it, as to exec.c */
#endif

/* ------------------------------------------------------------------ */
/* Names, errors, numbers.                                              */

static bool name_ok(const char *n)
{
	size_t len = strlen(n);

	if (!len || len > 64 || n[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = n[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.'))
			return false;
	}
	return true;
}

/* The user's prefix of the library's names: "u<UID>-". */
static void user_prefix(char *buf, size_t size)
{
	snprintf(buf, size, "u%u-", (unsigned)geteuid());
}

/* What ls shows for the region @region: without our prefix. */
static const char *shown_name(const char *region)
{
	char pre[32];

	user_prefix(pre, sizeof(pre));
	return strncmp(region, pre, strlen(pre)) ? region
						 : region + strlen(pre);
}

/* Say why the cache @name cannot be had (@r < 0): the exit status. */
static int cache_error(const char *cmd, const char *name, int r)
{
	switch (r) {
	case -ENOENT:
		fprintf(stderr, "pagecache %s: no cache named %s (pagecache ls "
			"lists them)\n", cmd, name);
		return 1;
	case -EACCES:
		fprintf(stderr, "pagecache %s: the cache %s is another user's: "
			"refused\n", cmd, name);
		return 1;
	case -ENOTCONN:
		fprintf(stderr, "pagecache %s: the cache %s is broken or its "
			"cache process is gone\n", cmd, name);
		return 1;
	case -EPROTO:
		fprintf(stderr, "pagecache %s: the cache %s was made by another "
			"build of pagecache\n", cmd, name);
		return 1;
	default:
		fprintf(stderr, "pagecache %s: the cache %s: %s\n", cmd, name,
			strerror(-r));
		return 1;
	}
}

/*
 * Resolve @name (NULL: the default) to a region name in @region, trying
 * the user's "u<UID>-NAME" first, then NAME itself, with @try (a view's
 * open or an attach): 0, or what the last try said.
 */
static int resolve(const char *name, char *region, size_t size,
		   int (*try)(const char *region, void *arg), void *arg)
{
	char pre[32];
	int r;

	user_prefix(pre, sizeof(pre));
	snprintf(region, size, "%s%s", pre, name ? name : "default-" PC_SRC_HASH);
	r = try(region, arg);
	if (r == -ENOENT && name && strncmp(name, pre, strlen(pre))) {
		snprintf(region, size, "%s", name);
		r = try(region, arg);
	}
	return r;
}

static int try_view(const char *region, void *arg)
{
	return pc_view_open(arg, region);
}

static int try_attach(const char *region, void *arg)
{
	return pc_cache_attach(arg, region);
}

/* A view of the cache @name for @cmd: 0, or the exit status (said). */
static int view_of(const char *cmd, const char *name, pc_view **v,
		   char *region, size_t size)
{
	int r;

	if (name && !name_ok(name)) {
		fprintf(stderr, "pagecache %s: '%s' is not a cache's name\n",
			cmd, name);
		return 2;
	}
	r = resolve(name, region, size, try_view, v);
	return r ? cache_error(cmd, name ? name : shown_name(region), r) : 0;
}

/* The cache @name attached for @cmd: 0, or the exit status (said). */
static int attach_of(const char *cmd, const char *name, pc_cache **c,
		     char *region, size_t size)
{
	int r;

	if (!name_ok(name)) {
		fprintf(stderr, "pagecache %s: '%s' is not a cache's name\n",
			cmd, name);
		return 2;
	}
	r = resolve(name, region, size, try_attach, c);
	return r ? cache_error(cmd, name, r) : 0;
}

/* @v as a size with K/M/G/T: bytes, or 0 if it is not one. */
uint64_t pc_admin_size(const char *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		return 0;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	case 't': case 'T': n <<= 40; end++; break;
	default: break;
	}
	return *end ? 0 : n;
}

/* A positive count from @v, or 0. */
unsigned long pc_admin_count(const char *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	return errno || end == v || *end || v[0] == '-' ? 0 : n;
}

/* @pages as a size a person reads: 12K, 3.5M, 4G. */
static const char *human(uint64_t pages, char *buf, size_t size)
{
	double b = (double)pages * PC_PAGE_SIZE;
	static const char units[] = "KMGT";
	int u = 0;

	if (!pages)
		return "0";
	b /= 1024;
	while (b >= 1024 && u < 3) {
		b /= 1024;
		u++;
	}
	if (b < 10 && b != (double)(uint64_t)b)
		snprintf(buf, size, "%.1f%c", b, units[u]);
	else
		snprintf(buf, size, "%.0f%c", b, units[u]);
	return buf;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* Only --json (and --help) among @argv's options: 0, or the exit status. */
static int opts_json(const char *cmd, int argc, char **argv, bool *json,
		     int *first, void (*usage)(FILE *))
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			*json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return -1;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(stderr, "pagecache %s: unknown option '%s'\n", cmd,
				argv[i]);
			usage(stderr);
			return 2;
		}
	}
	*first = i;
	return 0;
}

/* ------------------------------------------------------------------ */
/* ls                                                                    */

static void ls_usage(FILE *f)
{
	fprintf(f, "usage: pagecache ls [--json]\n\n"
		"Every shared cache of the user on this machine: its name, "
		"budget,\ncached, dirty and under-writeback memory, the processes "
		"attached,\nthe cache process's pid, its age, and its state (ok, "
		"broken,\nstopped, orphan: no cache process).\n");
}

struct ls_ctx {
	bool json;
	unsigned n;
	int status;
};

static const char *state_of(const struct pc_view_info *in)
{
	return in->stopped ? "stopped" : in->broken ? "broken" :
	       !in->home_alive ? "orphan" : in->closing ? "closing" : "ok";
}

static int ls_one(const char *region, void *arg)
{
	struct ls_ctx *x = arg;
	struct pc_view_info in;
	char b[4][16];
	pc_view *v;
	int r = pc_view_open(&v, region);
	long age;

	if (r == -EAGAIN || r == -ENOENT)	/* being made, or gone */
		return 0;
	if (r) {
		if (!x->json)
			printf("%-28s (%s)\n", shown_name(region),
			       r == -EACCES ? "refused: not the user's alone" :
			       r == -EPROTO ? "another build's" : strerror(-r));
		return 0;
	}
	pc_view_info(v, &in);
	pc_view_close(v);
	age = (long)(time(NULL) - in.created);
	if (x->json) {
		printf("%s\n  {\"name\": ", x->n ? "," : "");
		json_str(shown_name(region));
		printf(", \"region\": ");
		json_str(region);
		printf(", \"budget_bytes\": %llu, \"max_bytes\": %llu, "
		       "\"cached_bytes\": %llu, \"dirty_bytes\": %llu, "
		       "\"writeback_bytes\": %llu, \"processes\": %u, "
		       "\"pid\": %d, \"age_seconds\": %ld, \"broken\": %s, "
		       "\"state\": \"%s\"}",
		       (unsigned long long)in.budget_pages * PC_PAGE_SIZE,
		       (unsigned long long)in.max_pages * PC_PAGE_SIZE,
		       (unsigned long long)in.cached_pages * PC_PAGE_SIZE,
		       (unsigned long long)in.dirty_pages * PC_PAGE_SIZE,
		       (unsigned long long)in.writeback_pages * PC_PAGE_SIZE,
		       in.processes, (int)in.home_pid, age,
		       in.broken || in.stopped ? "true" : "false",
		       state_of(&in));
	} else {
		if (!x->n)
			printf("%-28s %7s %7s %7s %7s %5s %8s %8s %s\n", "NAME",
			       "BUDGET", "CACHED", "DIRTY", "WB", "PROCS", "PID",
			       "AGE", "STATE");
		printf("%-28s %7s %7s %7s %7s %5u %8d %7lds %s\n",
		       shown_name(region), human(in.budget_pages, b[0], 16),
		       human(in.cached_pages, b[1], 16),
		       human(in.dirty_pages, b[2], 16),
		       human(in.writeback_pages, b[3], 16), in.processes,
		       (int)in.home_pid, age, state_of(&in));
	}
	x->n++;
	return 0;
}

static int ls_main(int argc, char **argv)
{
	struct ls_ctx x = { 0 };
	int first, r = opts_json("ls", argc, argv, &x.json, &first, ls_usage);

	if (r)
		return r < 0 ? 0 : r;
	if (first < argc) {
		fprintf(stderr, "pagecache ls: no arguments\n");
		return 2;
	}
	if (x.json)
		printf("[");
	r = pc_cache_list(ls_one, &x);
	if (x.json)
		printf("%s]\n", x.n ? "\n" : "");
	else if (!x.n && r >= 0)
		printf("no shared caches\n");
	if (r < 0) {
		fprintf(stderr, "pagecache ls: %s\n", strerror(-r));
		return 1;
	}
	return x.status;
}

/* ------------------------------------------------------------------ */
/* stat                                                                  */

static void stat_usage(FILE *f)
{
	fprintf(f, "usage: pagecache stat [NAME] [-w SECONDS] [-n COUNT] "
		"[--json]\n\n"
		"Without -w, every counter of the cache once, 'name value' "
		"(pc_vmstat's\nnames).  With -w, one line every SECONDS (COUNT "
		"lines, default\nwithout end): free, cached, dirty, writeback "
		"memory, then per\nsecond: pages looked up that were cached "
		"(hit) and not (miss),\npages written to (dirtied) and written "
		"back (written), KiB read\nfrom and written to the disk (bi, "
		"bo), pages reclaimed by kswapd\nand directly, refaults; a header "
		"every screenful.\n");
}

/* The counters a line of stat -w shows: name, header, gauge or rate. */
static const struct col {
	const char *counter, *head;
	bool gauge;
} cols[] = {
	{ "nr_free_pages", "free", true },
	{ "nr_file_pages", "cached", true },
	{ "nr_dirty", "dirty", true },
	{ "nr_writeback", "wback", true },
	{ "pgfault_hit", "hit", false },
	{ "pgfault_miss", "miss", false },
	{ "nr_dirtied", "dirtied", false },
	{ "nr_written", "written", false },
	{ "pgpgin", "bi", false },
	{ "pgpgout", "bo", false },
	{ "pgsteal_kswapd", "kswapd", false },
	{ "pgsteal_direct", "direct", false },
	{ "workingset_refault_file", "refault", false },
};
#define NR_COLS (sizeof(cols) / sizeof(cols[0]))

/* The index of counter @name (pc_vmstat_name), or -1. */
static int counter_index(const char *name)
{
	const char *n;

	for (unsigned i = 0; (n = pc_vmstat_name(i)); i++)
		if (!strcmp(n, name))
			return (int)i;
	return -1;
}

static void read_cols(pc_view *v, const int *idx, uint64_t *val)
{
	for (unsigned k = 0; k < NR_COLS; k++)
		if (idx[k] < 0 || pc_view_counter(v, (unsigned)idx[k], &val[k]))
			val[k] = 0;
}

static unsigned screen_rows(void)
{
	struct winsize ws;

	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 3)
		return ws.ws_row - 1;
	return 20;
}

static void stat_header(void)
{
	for (unsigned k = 0; k < NR_COLS; k++)
		printf("%s%7s", k ? " " : "", cols[k].head);
	printf("\n");
}

static void stat_line(bool json, const uint64_t *now, const uint64_t *then,
		      double secs)
{
	char b[16];

	if (json)
		printf("{");
	for (unsigned k = 0; k < NR_COLS; k++) {
		uint64_t d = now[k] >= then[k] ? now[k] - then[k] : 0;
		double rate = secs > 0 ? (double)d / secs : 0;

		if (json && cols[k].gauge)
			printf("%s\"%s\": %llu", k ? ", " : "", cols[k].counter,
			       (unsigned long long)now[k]);
		else if (json)
			printf(", \"%s_per_s\": %.1f", cols[k].counter, rate);
		else if (cols[k].gauge)
			printf("%s%7s", k ? " " : "", human(now[k], b, sizeof(b)));
		else
			printf(" %7.0f", rate);
	}
	printf(json ? "}\n" : "\n");
	fflush(stdout);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int stat_watch(pc_view *v, bool json, double wait, unsigned long count)
{
	uint64_t then[NR_COLS], now[NR_COLS];
	int idx[NR_COLS];
	unsigned rows = screen_rows();
	double t0, t1;

	for (unsigned k = 0; k < NR_COLS; k++)
		idx[k] = counter_index(cols[k].counter);
	read_cols(v, idx, then);
	t0 = mono();
	for (unsigned long line = 0; !count || line < count; line++) {
		struct timespec ts = { (time_t)wait,
				       (long)((wait - (double)(time_t)wait) * 1e9) };

		if (!json && line % rows == 0)
			stat_header();
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		read_cols(v, idx, now);
		t1 = mono();
		stat_line(json, now, then, t1 - t0);
		memcpy(then, now, sizeof(then));
		t0 = t1;
	}
	return 0;
}

static int stat_main(int argc, char **argv)
{
	const char *name = NULL;
	unsigned long count = 0;
	double wait = 0;
	bool json = false;
	char region[128];
	pc_view *v;
	int r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			stat_usage(stdout);
			return 0;
		} else if (!strcmp(a, "-w") || !strcmp(a, "-n")) {
			char *end;

			if (++i >= argc) {
				fprintf(stderr, "pagecache stat: %s needs a "
					"value\n", a);
				return 2;
			}
			if (a[1] == 'w') {
				wait = strtod(argv[i], &end);
				if (*end || end == argv[i] || !(wait > 0) ||
				    wait > 86400) {
					fprintf(stderr, "pagecache stat: -w %s: "
						"not a number of seconds\n",
						argv[i]);
					return 2;
				}
			} else if (!(count = pc_admin_count(argv[i]))) {
				fprintf(stderr, "pagecache stat: -n %s: not a "
					"count\n", argv[i]);
				return 2;
			}
		} else if (a[0] == '-' || name) {
			fprintf(stderr, "pagecache stat: unexpected '%s'\n", a);
			stat_usage(stderr);
			return 2;
		} else {
			name = a;
		}
	}
	if (count && !wait) {
		fprintf(stderr, "pagecache stat: -n needs -w\n");
		return 2;
	}
	r = view_of("stat", name, &v, region, sizeof(region));
	if (r)
		return r;
	if (wait) {
		r = stat_watch(v, json, wait, count);
	} else {
		const char *n;
		uint64_t val;

		printf(json ? "{" : "");
		for (unsigned i = 0; (n = pc_vmstat_name(i)); i++) {
			if (pc_view_counter(v, i, &val))
				continue;
			if (json)
				printf("%s\n  \"%s\": %llu", i ? "," : "", n,
				       (unsigned long long)val);
			else
				printf("%s %llu\n", n, (unsigned long long)val);
		}
		printf(json ? "\n}\n" : "");
	}
	pc_view_close(v);
	return r;
}

/* ------------------------------------------------------------------ */
/* The dispatcher's entries (tools/pagecache.c).                         */

int pc_ls_main(int argc, char **argv) { return ls_main(argc, argv); }
int pc_stat_main(int argc, char **argv) { return stat_main(argc, argv); }

/* Shared with admin_files.c and admin_ctl.c. */
int pc_admin_view(const char *cmd, const char *name, pc_view **v)
{
	char region[128];

	return view_of(cmd, name, v, region, sizeof(region));
}

int pc_admin_attach(const char *cmd, const char *name, pc_cache **c,
		    char *region, size_t size)
{
	return attach_of(cmd, name, c, region, size);
}

int pc_admin_error(const char *cmd, const char *name, int r)
{
	return cache_error(cmd, name, r);
}

bool pc_admin_name_ok(const char *name)
{
	return name_ok(name);
}

const char *pc_admin_human(uint64_t pages, char *buf, size_t size)
{
	return human(pages, buf, size);
}

void pc_admin_json_str(const char *s)
{
	json_str(s);
}
