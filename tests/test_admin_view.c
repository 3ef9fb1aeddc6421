/*
 * test_admin_view.c - src/admin.c's calls: the list of a user's caches, a
 * view (a read-only look) and what an operator changes (drop, sync_all,
 * stop), against the counters and the files.  tests/test_admin.sh runs
 * the `pagecache` commands built on them against a live cache.
 *
 *   errnos        every documented refusal of bad arguments and of a
 *                 cache that is not there
 *   drop_private  pc_cache_drop on a private cache: the clean pages of
 *                 one file dropped, exactly, dirty ones kept; of every
 *                 file; -ENOENT for a file the cache does not hold;
 *                 pc_cache_sync_all there is pc_cache_sync
 *   view_shared   a named shared cache made here: listed; a view of it
 *                 here refused (-EBUSY: attached); in a child that left
 *                 it, the view's budget, dirty pages and processes, every
 *                 counter the parent's pc_vmstat (read while nothing
 *                 moves), and each file with its path, pages cached and
 *                 dirty, active + inactive within them; the view enters
 *                 no table (shared_attaches unchanged)
 *   stop_shared   pc_cache_stop from a child: the parent's handle sees
 *                 the cache stopped and broken, everything it wrote is on
 *                 the disk, the name is gone (attach: -ENOENT)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define PG PC_PAGE_SIZE

static void test_errnos(void **state)
{
	struct pc_view_info info;
	pc_view *v = (pc_view *)&info;
	uint64_t val;
	struct stat st;

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(pc_cache_list(NULL, NULL), -EINVAL);
	assert_int_equal(pc_view_open(NULL, "x"), -EINVAL);
	assert_int_equal(pc_view_open(&v, NULL), -EINVAL);
	assert_int_equal(pc_view_open(&v, "a/b"), -EINVAL);
	assert_null(v);
	assert_int_equal(pc_view_open(&v, "tview-none-of-this-name"), -ENOENT);
	assert_int_equal(pc_view_info(NULL, &info), -EINVAL);
	assert_int_equal(pc_view_counter(NULL, 0, &val), -EINVAL);
	assert_int_equal(pc_view_files(NULL, NULL, NULL), -EINVAL);
	pc_view_close(NULL);
	assert_int_equal(pc_cache_sync_all(NULL), -EINVAL);
	assert_int_equal(pc_cache_drop(NULL, &st), -EINVAL);
	assert_int_equal(pc_cache_stop(NULL), -EINVAL);
	assert_int_equal(pc_cache_stop("tview-none-of-this-name"), -ENOENT);
	assert_false(pc_cache_stopped(NULL));
}

/* @pages pages of @byte written to @path through @c, closed. */
static void write_file(pc_cache *c, const char *path, unsigned pages, int byte)
{
	char buf[PG];
	pc_file *f;

	memset(buf, byte, sizeof(buf));
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 &f), 0);
	for (unsigned i = 0; i < pages; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)i * PG), PG);
	assert_int_equal(pc_close(f), 0);
}

static void test_drop_private(void **state)
{
	pc_cache *c = tu_cache("memory=8M");
	const char *a = tu_path("drop-a"), *b = tu_path("drop-b");
	struct stat sa, sb, none;

	(void)state;
	tu_make_file(a, 16, 1);
	write_file(c, b, 8, 'b');		/* dirty */
	for (unsigned i = 0; i < 16; i++) {
		pc_file *f = tu_open_ro(c, a);

		tu_read_page(f, i, 1);
		pc_close(f);
	}
	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	none = sa;
	none.st_ino ^= 0x5a5a5a;
	assert_int_equal(pc_cache_drop(c, &none), -ENOENT);
	assert_int_equal(pc_cache_drop(c, &sa), 16);
	assert_int_equal(pc_cache_drop(c, &sa), 0);
	assert_int_equal(tu_vm(c, "nr_dirty"), 8);
	assert_int_equal(pc_cache_drop(c, NULL), 0);	/* b: dirty, kept */
	assert_int_equal(pc_cache_sync_all(c), 0);
	assert_int_equal(tu_vm(c, "nr_dirty"), 0);
	assert_int_equal(pc_cache_drop(c, NULL), 8);
	assert_int_equal(pc_cache_drop(c, NULL), 0);	/* none left */
	assert_false(pc_cache_stopped(c));
	assert_int_equal(pc_cache_destroy(c), 0);
}

struct shared_case {
	char name[64];
	char a[4096], b[4096];		/* 8 dirty pages; 4 clean (as
					   /proc/PID/fd names them) */
	uint64_t budget, dirty, attaches;
	uint64_t counters[512];
	unsigned nr_counters;
	pc_cache *c;
};

static int find_name(const char *name, void *arg)
{
	return strcmp(name, arg) == 0 ? 1 : 0;
}

struct seen {
	const struct shared_case *sc;
	unsigned a, b;
};

static int check_file(const struct pc_view_file *f, void *arg)
{
	struct seen *s = arg;

	assert_true(f->active + f->inactive <= f->cached);
	if (f->path && !strcmp(f->path, s->sc->a)) {
		assert_int_equal(f->cached, 8);
		assert_int_equal(f->dirty, 8);
		assert_int_equal(f->size, 8 * PG);
		s->a++;
	} else if (f->path && !strcmp(f->path, s->sc->b)) {
		assert_int_equal(f->cached, 4);
		assert_int_equal(f->dirty, 0);
		assert_true(f->open >= 1);	/* the parent's */
		s->b++;
	}
	return 0;
}

/* Counters nothing moves while the parent waits and its child forks,
 * leaves and looks. */
static const char *const still[] = {
	"nr_budget_pages", "nr_file_pages", "nr_dirty", "nr_writeback",
	"pgpgin", "pgpgout", "nr_dirtied", "nr_written", "pgfault_hit",
	"pgfault_miss", "workingset_refault_file", "pgsteal_kswapd",
	"pgsteal_direct", "writeback_errors",
};

/* In a child of the home that left the cache: what a view sees. */
static void view_child(void *arg)
{
	struct shared_case *sc = arg;
	struct pc_view_info info;
	struct seen seen = { .sc = sc };
	uint64_t val;
	pc_view *v;

	assert_int_equal(pc_cache_destroy(sc->c), 0);	/* detached */
	assert_int_equal(pc_view_open(&v, sc->name), 0);
	assert_int_equal(pc_view_info(v, &info), 0);
	assert_int_equal(info.budget_pages, sc->budget);
	assert_int_equal(info.dirty_pages, sc->dirty);
	assert_int_equal(info.processes, 0);	/* the home is not counted */
	assert_int_equal(info.home_pid, getppid());
	assert_true(info.home_alive);
	assert_false(info.broken);
	assert_false(info.stopped);
	for (unsigned i = 0; i < sc->nr_counters; i++) {
		assert_int_equal(pc_view_counter(v, i, &val), 0);
		for (unsigned k = 0; k < sizeof(still) / sizeof(still[0]); k++)
			if (!strcmp(pc_vmstat_name(i), still[k]))
				assert_int_equal(val, sc->counters[i]);
		if (!strcmp(pc_vmstat_name(i), "shared_attaches"))
			assert_int_equal(val, sc->counters[i] + 1);	/* ours */
	}
	assert_int_equal(pc_view_counter(v, sc->nr_counters, &val), -ENOENT);
	assert_true(pc_view_files(v, check_file, &seen) >= 2);
	assert_int_equal(seen.a, 1);
	assert_int_equal(seen.b, 1);
	pc_view_close(v);
}

static void test_view_shared(void **state)
{
	static struct shared_case sc;
	char cfg[160];
	const char *n;
	pc_file *fb;

	(void)state;
	snprintf(sc.name, sizeof(sc.name), "tview-%d", (int)getpid());
	snprintf(cfg, sizeof(cfg), "shared=on name=%s memory=8M "
		 "writeback.dirty_expire_ms=600000", sc.name);
	sc.c = tu_cache(cfg);
	write_file(sc.c, tu_path("view-a"), 8, 'a');
	tu_make_file(tu_path("view-b"), 4, 2);
	assert_non_null(realpath(tu_path("view-a"), sc.a));
	assert_non_null(realpath(tu_path("view-b"), sc.b));
	fb = tu_open_ro(sc.c, sc.b);
	for (unsigned i = 0; i < 4; i++)
		tu_read_page(fb, i, 2);
	{	/* a path for a: the home holds it open */
		pc_file *fa;

		assert_int_equal(pc_open(sc.c, sc.a, O_RDONLY, 0, &fa), 0);
		assert_int_equal(pc_cache_list(find_name, sc.name), 1);
		{
			pc_view *v;

			assert_int_equal(pc_view_open(&v, sc.name), -EBUSY);
		}
		sc.budget = tu_vm(sc.c, "nr_budget_pages");
		sc.dirty = tu_vm(sc.c, "nr_dirty");
		assert_int_equal(sc.dirty, 8);
		/* the child's fork and leave move only these */
		for (sc.nr_counters = 0; (n = pc_vmstat_name(sc.nr_counters));
		     sc.nr_counters++)
			sc.counters[sc.nr_counters] = tu_vm(sc.c, n);
		sc.attaches = tu_vm(sc.c, "shared_attaches");
		tu_in_child(view_child, &sc);
		/* the child entered at its fork; its view did not */
		assert_int_equal(tu_vm(sc.c, "shared_attaches"), sc.attaches + 1);
		pc_close(fa);
	}
	pc_close(fb);
	assert_int_equal(pc_cache_destroy(sc.c), 0);
}

static void stop_child(void *arg)
{
	struct shared_case *sc = arg;

	assert_int_equal(pc_cache_destroy(sc->c), 0);	/* detached */
	assert_int_equal(pc_cache_stop(sc->name), 0);
}

static void test_stop_shared(void **state)
{
	static struct shared_case sc;
	char cfg[160], want[8 * PG];
	pc_cache *again;

	(void)state;
	snprintf(sc.name, sizeof(sc.name), "tview-stop-%d", (int)getpid());
	snprintf(cfg, sizeof(cfg), "shared=on name=%s memory=8M "
		 "writeback.dirty_expire_ms=600000", sc.name);
	sc.c = tu_cache(cfg);
	snprintf(sc.a, sizeof(sc.a), "%s", tu_path("stop-a"));
	write_file(sc.c, sc.a, 8, 's');
	assert_int_equal(tu_vm(sc.c, "nr_dirty"), 8);
	tu_in_child(stop_child, &sc);
	assert_true(pc_cache_stopped(sc.c));
	assert_true(pc_cache_broken(sc.c));
	assert_int_equal(tu_vm(sc.c, "nr_dirty"), 0);
	memset(want, 's', sizeof(want));
	tu_disk_check(sc.a, want, sizeof(want));
	assert_int_equal(pc_cache_attach(&again, sc.name), -ENOENT);
	assert_int_equal(pc_cache_destroy(sc.c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errnos),
		cmocka_unit_test(test_drop_private),
		cmocka_unit_test(test_view_shared),
		cmocka_unit_test(test_stop_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
