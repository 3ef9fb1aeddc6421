/*
 * tools/admin_files.c - `pagecache files` and `pagecache fincore`: what a
 * shared cache holds of each file, read through a view (pc_view_files:
 * no lock taken, nothing changed; tools/admin.c says how a cache is
 * found).
 *
 *   pagecache files [NAME] [--top N] [--json]   largest first
 *   pagecache fincore [--cache NAME] [--json] FILE...
 *
 * A file is named by a path one of the cache's processes has it open by
 * (the library finds it in /proc/PID/fd), else by device:inode (closed
 * everywhere, or deleted).  fincore names the files given; one that
 * cannot be stat'ed is said, and the status is 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "admin.h"

struct row {
	struct pc_view_file f;
	char *path;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static int collect(const struct pc_view_file *f, void *arg)
{
	struct rows *rs = arg;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct row *more = realloc(rs->v, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		rs->v = more;
		rs->cap = cap;
	}
	rs->v[rs->n].f = *f;
	rs->v[rs->n].f.path = NULL;
	rs->v[rs->n].path = f->path ? strdup(f->path) : NULL;
	rs->n++;
	return 0;
}

static int by_cached(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->f.cached != y->f.cached)
		return x->f.cached > y->f.cached ? -1 : 1;
	return x->f.ino < y->f.ino ? -1 : x->f.ino > y->f.ino;
}

/* The rows of the files @v holds: 0, or the exit status (said). */
static int rows_of(const char *cmd, pc_view *v, struct rows *rs)
{
	int r = pc_view_files(v, collect, rs);

	if (r < 0) {
		fprintf(stderr, "pagecache %s: %s\n", cmd, strerror(-r));
		return 1;
	}
	return 0;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].path);
	free(rs->v);
}

static const char *name_of(const struct row *w, const char *given,
			   char *buf, size_t size)
{
	if (given)
		return given;
	if (w->path)
		return w->path;
	snprintf(buf, size, "%u:%u:%llu", major((dev_t)w->f.dev),
		 minor((dev_t)w->f.dev), (unsigned long long)w->f.ino);
	return buf;
}

static void print_head(bool json)
{
	if (!json)
		printf("%9s %9s %9s %9s %9s %9s  %s\n", "CACHED", "DIRTY",
		       "WBACK", "ACTIVE", "INACTIVE", "SIZE", "FILE");
}

/* One row; @first for JSON's commas. */
static void print_row(bool json, bool first, const struct row *w,
		      const char *given)
{
	char buf[64], b[16];
	const char *name = name_of(w, given, buf, sizeof(buf));

	if (json) {
		printf("%s\n  {\"file\": ", first ? "" : ",");
		pc_admin_json_str(name);
		printf(", \"known_path\": %s, \"dev\": \"%u:%u\", \"ino\": %llu, "
		       "\"size\": %lld, \"cached_pages\": %llu, "
		       "\"dirty_pages\": %llu, \"writeback_pages\": %llu, "
		       "\"active_pages\": %llu, \"inactive_pages\": %llu, "
		       "\"open\": %u, \"unlinked\": %s}",
		       given || w->path ? "true" : "false",
		       major((dev_t)w->f.dev), minor((dev_t)w->f.dev),
		       (unsigned long long)w->f.ino, (long long)w->f.size,
		       (unsigned long long)w->f.cached,
		       (unsigned long long)w->f.dirty,
		       (unsigned long long)w->f.writeback,
		       (unsigned long long)w->f.active,
		       (unsigned long long)w->f.inactive, w->f.open,
		       w->f.unlinked ? "true" : "false");
		return;
	}
	printf("%9llu %9llu %9llu %9llu %9llu %9s  %s\n",
	       (unsigned long long)w->f.cached, (unsigned long long)w->f.dirty,
	       (unsigned long long)w->f.writeback,
	       (unsigned long long)w->f.active,
	       (unsigned long long)w->f.inactive,
	       pc_admin_human(((uint64_t)w->f.size + PC_PAGE_SIZE - 1) /
			      PC_PAGE_SIZE, b, sizeof(b)), name);
}

static void files_usage(FILE *f)
{
	fprintf(f, "usage: pagecache files [NAME] [--top N] [--json]\n\n"
		"The files the cache holds, most cached first: pages cached, "
		"dirty,\nunder writeback, on the active and the inactive list, "
		"the size, and\nthe file (a path one of the cache's processes has "
		"it open by, or\nMAJOR:MINOR:INODE).\n");
}

int pc_files_main(int argc, char **argv)
{
	const char *name = NULL;
	unsigned long top = 0;
	struct rows rs = { 0 };
	bool json = false;
	size_t shown;
	pc_view *v;
	int r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			files_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--top")) {
			top = ++i < argc ? pc_admin_count(argv[i]) : 0;
			if (!top) {
				fprintf(stderr, "pagecache files: --top needs a "
					"count\n");
				return 2;
			}
		} else if (a[0] == '-' || name) {
			fprintf(stderr, "pagecache files: unexpected '%s'\n", a);
			files_usage(stderr);
			return 2;
		} else {
			name = a;
		}
	}
	r = pc_admin_view("files", name, &v);
	if (r)
		return r;
	r = rows_of("files", v, &rs);
	pc_view_close(v);
	if (r)
		return r;
	qsort(rs.v, rs.n, sizeof(*rs.v), by_cached);
	shown = top && top < rs.n ? top : rs.n;
	print_head(json);
	if (json)
		printf("[");
	for (size_t i = 0; i < shown; i++)
		print_row(json, i == 0, &rs.v[i], NULL);
	if (json)
		printf("%s]\n", shown ? "\n" : "");
	rows_free(&rs);
	return 0;
}

static void fincore_usage(FILE *f)
{
	fprintf(f, "usage: pagecache fincore [--cache NAME] [--json] FILE...\n\n"
		"What the cache (default: the user's default cache) holds of "
		"each FILE:\npages cached, dirty, under writeback, active, "
		"inactive, and the size\nthe cache holds (the file's own when it "
		"holds none).\n");
}

int pc_fincore_main(int argc, char **argv)
{
	const char *name = NULL;
	struct rows rs = { 0 };
	bool json = false;
	int i, r, status = 0;
	pc_view *v;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fincore_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
			name = argv[++i];
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(stderr, "pagecache fincore: unexpected '%s'\n",
				argv[i]);
			fincore_usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "pagecache fincore: no FILE\n");
		fincore_usage(stderr);
		return 2;
	}
	r = pc_admin_view("fincore", name, &v);
	if (r)
		return r;
	r = rows_of("fincore", v, &rs);
	pc_view_close(v);
	if (r)
		return r;
	print_head(json);
	if (json)
		printf("[");
	for (int k = 0; i < argc; i++) {
		struct row none = { .f = { 0 } }, *w = &none;
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "pagecache fincore: %s: %s\n", argv[i],
				strerror(errno));
			status = 1;
			continue;
		}
		for (size_t j = 0; j < rs.n; j++)
			if (rs.v[j].f.dev == (uint64_t)st.st_dev &&
			    rs.v[j].f.ino == (uint64_t)st.st_ino)
				w = &rs.v[j];
		if (w == &none) {
			none.f.dev = st.st_dev;
			none.f.ino = st.st_ino;
			none.f.size = st.st_size;
		}
		print_row(json, k++ == 0, w, argv[i]);
	}
	if (json)
		printf("\n]\n");
	rows_free(&rs);
	return status;
}
