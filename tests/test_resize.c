/*
 * test_resize.c - memory at scale: lazy memory and pc_cache_resize.
 *
 * Lazy memory: a cache reserves its budget and touches nothing, so the
 * resident memory of its data and descriptor ranges (/proc/self/smaps:
 * memory figures, not timings) is zero after create, and after caching N
 * bytes about N plus a 2 MiB step of descriptors and at most 8 MiB that
 * kswapd populated ahead (populate.c) - whatever the budget;
 * the process's RSS (/proc/self/statm) says the same, except under a
 * sanitizer, whose shadow memory is in it too.
 *
 * Resize: both ways while readers and writers run, every read checked
 * against a model of the file (each thread owns a stripe of pages and the
 * versions written to them) and the disk checked after fsync; the budget,
 * the watermarks and the dirty limits follow; dirty pages above a new
 * budget are written, never dropped; a shrink gives memory back (RSS falls
 * within the call); a pinned page above the new budget makes it -EBUSY
 * with the budget left just above the pin, and a later call finishes it.
 * Seeds are printed; PC_SEED=N replays.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "util.h"

#define MIB (1ull << 20)

static uint64_t vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	assert_int_equal(pc_vmstat(c, name, &v), 0);
	return v;
}

/* Is the process's RSS ours and the libc's only?  Not under ASan or
 * TSan: their shadow of what we touch is resident too. */
static bool rss_is_ours(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return false;
#else
	return true;
#endif
}

/* Resident bytes of the mappings inside [start, start + len). */
static uint64_t range_rss(const void *start, size_t len)
{
	uintptr_t lo = (uintptr_t)start, hi = lo + len, a = 0, b = 0;
	unsigned long long kb, sum = 0;
	bool in = false;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's line starts with its address (lower-case hex);
		 * its fields' lines with a capitalized name */
		if (!(line[0] >= 'A' && line[0] <= 'Z') &&
		    sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			in = a < hi && b > lo;
			continue;
		}
		if (in && sscanf(line, "Rss: %llu kB", &kb) == 1)
			sum += kb;
	}
	fclose(f);
	return sum * 1024;
}

static uint64_t data_rss(struct pc_cache *c)
{
	return range_rss(c->data, c->span_frames << PC_PAGE_SHIFT);
}

static uint64_t desc_rss(struct pc_cache *c)
{
	return range_rss(c->pages, c->span_frames * sizeof(struct pc_page));
}

static uint64_t rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu %llu", &size, &resident), 2);
	fclose(f);
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A file of @pages pages, page i holding tu_pattern(seed, i * 4096). */
static void make_file(const char *path, uint64_t pages, uint64_t seed)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char *buf = malloc(MIB);

	assert_true(fd >= 0);
	assert_non_null(buf);
	for (uint64_t off = 0; off < pages * PC_PAGE_SIZE; off += MIB) {
		size_t len = (size_t)pc_min(MIB, pages * PC_PAGE_SIZE - off);

		tu_pattern(buf, len, seed, off);
		assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	}
	assert_int_equal(fsync(fd), 0);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	free(buf);
}

/* Read all of [0, pages) through @f and check it against the pattern. */
static void read_check(pc_file *f, uint64_t pages, uint64_t seed)
{
	char *buf = malloc(MIB), *want = malloc(MIB);

	for (uint64_t off = 0; off < pages * PC_PAGE_SIZE; off += MIB) {
		size_t len = (size_t)pc_min(MIB, pages * PC_PAGE_SIZE - off);

		assert_int_equal(pc_pread(f, buf, len, (off_t)off), (ssize_t)len);
		tu_pattern(want, len, seed, off);
		if (memcmp(buf, want, len))
			fail_msg("data at %llu differs", (unsigned long long)off);
	}
	free(buf);
	free(want);
}

/* ------------------------------------------------------------------ */
/* Lazy memory.                                                        */

static void test_create_touches_nothing(void **state)
{
	static const char *const budgets[] = { "memory=256M", "memory=8G",
					       "memory=16G", "memory=16G nodes=4" };

	(void)state;
	for (unsigned i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		uint64_t before = rss_bytes(), after, budget;
		pc_cache *c;

		assert_int_equal(pc_cache_create(&c, budgets[i]), 0);
		after = rss_bytes();
		budget = vm(c, "nr_budget_pages");
		printf("  %s: RSS %+.1f MiB at create, %llu pages of budget, "
		       "all free\n", budgets[i],
		       ((double)after - (double)before) / MIB,
		       (unsigned long long)budget);
		/* Nothing of the budget: a few threads' and tables' worth. */
		assert_int_equal(data_rss(c), 0);
		assert_int_equal(desc_rss(c), 0);
		if (rss_is_ours())
			assert_true(after < before + 8 * MIB);
		assert_int_equal(vm(c, "nr_free_pages"), budget);
		assert_int_equal(vm(c, "nr_file_pages"), 0);
		for (int n = 0; n < c->nr_nodes; n++)
			assert_int_equal(atomic_load(&c->nodes[n].hw), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
}

static void test_rss_follows_cached(void **state)
{
	const char *path = tu_path("lazy");
	const uint64_t pages = 48 * MIB / PC_PAGE_SIZE;	/* N = 48 MiB */
	uint64_t before, after, seed = tu_seed("rss_follows_cached");
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, pages, seed);
	before = rss_bytes();
	assert_int_equal(pc_cache_create(&c, "memory=16G"), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	read_check(f, pages, seed);
	after = rss_bytes();
	printf("  48 MiB cached in a 16 GiB budget: RSS %+.1f MiB (data %.1f, "
	       "descriptors %.1f), %u frames initialized, %llu cached\n",
	       ((double)after - (double)before) / MIB, (double)data_rss(c) / MIB,
	       (double)desc_rss(c) / MIB, (unsigned)atomic_load(&c->nodes[0].hw),
	       (unsigned long long)vm(c, "nr_file_pages"));
	/* The data cached, and what kswapd faulted in ahead of it (at most
	 * PC_POPULATE_AHEAD_MAX frames, populate.c); the descriptors of one
	 * 2 MiB step of them. */
	assert_true(data_rss(c) <= (pages + PC_POPULATE_AHEAD_MAX) * PC_PAGE_SIZE +
				   2 * MIB);
	assert_true(data_rss(c) >= pages * PC_PAGE_SIZE);
	assert_true(desc_rss(c) <= 2 * MIB);
	/* N, plus metadata in 2 MiB steps (descriptors, tree nodes), memory
	 * populated ahead, the read buffers and threads: far from 3% of the
	 * budget. */
	if (rss_is_ours())
		assert_true(after <= before + (pages + PC_POPULATE_AHEAD_MAX) *
					      PC_PAGE_SIZE + 16 * MIB);
	/* Frames were taken in 2 MiB steps, as the pages needed them. */
	assert_true(atomic_load(&c->nodes[0].hw) <=
		    vm(c, "nr_file_pages") + PC_FRAME_STEP);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* The process's address space in use, bytes (VmSize). */
static uint64_t vm_size(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * Where address space is scarce (strict overcommit counts it as memory;
 * here an RLIMIT_AS a little above what the process has), create still
 * works: without memory.max it gives up the room to grow, not the budget;
 * with a memory.max it cannot reserve, it says so.
 */
static void test_create_without_room_to_grow(void **state)
{
	struct rlimit old, tight;
	pc_cache *c;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	tight = old;
	tight.rlim_cur = vm_size() + 2048 * MIB;
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	assert_int_equal(pc_cache_create(&c, "memory=64M"), 0);
	assert_int_equal(vm(c, "nr_budget_pages"), 64 * MIB / PC_PAGE_SIZE);
	assert_int_equal(pc_cache_resize(c, 128 * MIB), -EINVAL);
	assert_int_equal(pc_cache_resize(c, 32 * MIB), 0);
	assert_int_equal(pc_cache_resize(c, 64 * MIB), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_create(&c, "memory=64M memory.max=64G"), -ENOMEM);
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
}

/* ------------------------------------------------------------------ */
/* Arguments.                                                          */

static void test_resize_einval(void **state)
{
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_resize(NULL, 8 * MIB), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "memory=8M memory.max=32M nodes=2"), 0);
	/* 16 pages a node at least */
	assert_int_equal(pc_cache_resize(c, 2 * 16 * PC_PAGE_SIZE - 1), -EINVAL);
	assert_int_equal(pc_cache_resize(c, 2 * 16 * PC_PAGE_SIZE), 0);
	assert_int_equal(vm(c, "nr_budget_pages"), 32);
	/* memory.max is the ceiling */
	assert_int_equal(pc_cache_resize(c, 33 * MIB), -EINVAL);
	assert_int_equal(vm(c, "nr_budget_pages"), 32);
	assert_int_equal(pc_cache_resize(c, 32 * MIB), 0);
	assert_int_equal(vm(c, "nr_budget_pages"), 32 * MIB / PC_PAGE_SIZE);
	assert_int_equal(vm(c, "nr_free_pages"), 32 * MIB / PC_PAGE_SIZE);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(pc_cache_create(&c, "memory=64M memory.max=32M"), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* What follows the budget.                                            */

static void test_limits_follow(void **state)
{
	const char *path = tu_path("limits");
	const uint64_t pages = 3000;
	uint64_t seed = tu_seed("limits_follow"), dirty_big, dirty_small;
	uint64_t low_big, low_small;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, pages, seed);
	assert_int_equal(pc_cache_create(&c, "memory=16M"), 0);
	dirty_big = vm(c, "nr_dirty_threshold");
	low_big = c->nodes[0].wmark_low;
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	read_check(f, pages, seed);
	assert_int_equal(pc_cache_resize(c, 4 * MIB), 0);
	dirty_small = vm(c, "nr_dirty_threshold");
	low_small = c->nodes[0].wmark_low;
	printf("  16M -> 4M: dirty threshold %llu -> %llu pages, low mark "
	       "%llu -> %llu, %llu pages evicted by the shrink\n",
	       (unsigned long long)dirty_big, (unsigned long long)dirty_small,
	       (unsigned long long)low_big, (unsigned long long)low_small,
	       (unsigned long long)vm(c, "pgsteal_resize"));
	assert_true(dirty_small * 3 < dirty_big);
	assert_true(low_small < low_big);
	assert_int_equal(vm(c, "nr_budget_pages"), 1024);
	assert_true(vm(c, "nr_file_pages") <= 1024);
	assert_true(vm(c, "pgsteal_resize") > 0);
	assert_int_equal(atomic_load(&c->nodes[0].nr_retiring), 0);
	assert_true(atomic_load(&c->nodes[0].hw) <= 1024);
	/* Still a working cache, smaller; and then larger again. */
	read_check(f, pages, seed);
	assert_int_equal(pc_cache_resize(c, 32 * MIB), 0);
	assert_true(vm(c, "nr_dirty_threshold") > dirty_big);
	read_check(f, pages, seed);
	assert_int_equal(vm(c, "nr_file_pages"), pages);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Dirty pages above the new budget are written back, never dropped. */
static void test_shrink_writes_dirty(void **state)
{
	const char *path = tu_path("dirty");
	const uint64_t pages = 1500;
	uint64_t seed = tu_seed("shrink_writes_dirty");
	char *buf = malloc(pages * PC_PAGE_SIZE), *disk = malloc(pages * PC_PAGE_SIZE);
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=8M writeback.dirty_ratio=90 "
					 "writeback.dirty_background_ratio=90 "
					 "writeback.interval_ms=3600000"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	tu_pattern(buf, pages * PC_PAGE_SIZE, seed, 0);
	assert_int_equal(pc_pwrite(f, buf, pages * PC_PAGE_SIZE, 0),
			 (ssize_t)(pages * PC_PAGE_SIZE));
	printf("  %llu pages dirty before the shrink\n",
	       (unsigned long long)vm(c, "nr_dirty"));
	assert_true(vm(c, "nr_dirty") > 1000);
	assert_int_equal(pc_cache_resize(c, 1 * MIB), 0);
	assert_true(vm(c, "nr_file_pages") <= 256);
	/* On the disk, whole, without an fsync. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, disk, pages * PC_PAGE_SIZE, 0),
			 (ssize_t)(pages * PC_PAGE_SIZE));
	close(fd);
	assert_memory_equal(disk, buf, pages * PC_PAGE_SIZE);
	read_check(f, pages, seed);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
	free(disk);
}

/* A shrink gives the memory above the new budget back, within the call. */
static void test_shrink_gives_memory_back(void **state)
{
	const char *path = tu_path("big");
	const uint64_t pages = 192 * MIB / PC_PAGE_SIZE;
	uint64_t seed = tu_seed("shrink_gives_memory_back"), full, shrunk;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, pages, seed);
	assert_int_equal(pc_cache_create(&c, "memory=256M"), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	read_check(f, pages, seed);
	full = rss_bytes();
	assert_true(data_rss(c) >= pages * PC_PAGE_SIZE);
	assert_int_equal(pc_cache_resize(c, 16 * MIB), 0);
	shrunk = rss_bytes();
	printf("  192 MiB cached, 256M -> 16M: RSS %.0f -> %.0f MiB, data "
	       "%.1f MiB resident\n", (double)full / MIB, (double)shrunk / MIB,
	       (double)data_rss(c) / MIB);
	assert_true(data_rss(c) <= 16 * MIB);
	if (rss_is_ours())
		assert_true(shrunk + 160 * MIB <= full);
	assert_true(vm(c, "nr_file_pages") <= 16 * MIB / PC_PAGE_SIZE);
	/* Back up, and every byte is still the file's. */
	assert_int_equal(pc_cache_resize(c, 256 * MIB), 0);
	read_check(f, pages, seed);
	assert_int_equal(vm(c, "nr_file_pages"), pages);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Pinned pages: -EBUSY, the budget left just above them.              */

static void test_pinned_ebusy(void **state)
{
	const char *path = tu_path("pinned");
	const uint64_t pages = 1800;
	uint64_t seed = tu_seed("pinned_ebusy"), budget;
	pc_cache *c;
	pc_file *f;
	pc_page *pin;
	uint32_t pfn;

	(void)state;
	make_file(path, pages, seed);
	assert_int_equal(pc_cache_create(&c, "memory=8M"), 0);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	read_check(f, pages, seed);
	assert_int_equal(pc_get_page(f, 1700, 0, &pin), 0);
	pfn = page_pfn(c, (struct pc_page *)pin);
	printf("  page 1700 pinned in frame %u; shrink to 512 frames\n", pfn);
	assert_true(pfn >= 512);
	assert_int_equal(pc_cache_resize(c, 2 * MIB), -EBUSY);
	budget = vm(c, "nr_budget_pages");
	printf("  -EBUSY, budget left at %llu frames, %llu pages cached\n",
	       (unsigned long long)budget, (unsigned long long)vm(c, "nr_file_pages"));
	assert_int_equal(budget, pfn + 1);
	assert_true(vm(c, "nr_file_pages") <= budget);
	/* The pinned page is whole and in place; the rest reads back. */
	{
		char *want = malloc(PC_PAGE_SIZE);

		tu_pattern(want, PC_PAGE_SIZE, seed, 1700 * PC_PAGE_SIZE);
		assert_memory_equal(pc_page_data(pin), want, PC_PAGE_SIZE);
		free(want);
	}
	read_check(f, pages, seed);
	pc_put_page(pin);
	/* Unpinned: the same call now finishes. */
	assert_int_equal(pc_cache_resize(c, 2 * MIB), 0);
	assert_int_equal(vm(c, "nr_budget_pages"), 512);
	assert_true(vm(c, "nr_file_pages") <= 512);
	read_check(f, pages, seed);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Both ways, under readers and writers, against a model.              */

#define THREADS 4
#define FILE_PAGES 6000
#define OPS_BETWEEN 3000	/* reads and writes between two resizes */

struct shared {
	pc_cache *c;
	const char *path;
	uint64_t seed;
	_Atomic bool stop;
	_Atomic uint64_t done;		/* operations so far, all threads */
	_Atomic int running;		/* workers not ended yet */
	uint32_t version[FILE_PAGES];	/* page i: owned by thread i % THREADS */
	uint64_t ops[THREADS];
};

struct worker {
	struct shared *s;
	int id;
};

/* Page @i at version @v: the pattern of a seed made of both. */
static void page_fill(char *buf, const struct shared *s, uint64_t i, uint32_t v)
{
	tu_pattern(buf, PC_PAGE_SIZE, s->seed ^ ((uint64_t)v << 40),
		   i * PC_PAGE_SIZE);
}

/* A worker ends: at its return, or where a failed assertion ends it. */
static void worker_ended(void *arg)
{
	struct shared *s = arg;

	atomic_fetch_sub(&s->running, 1);
}

static void *worker_body(struct worker *w)
{
	struct shared *s = w->s;
	uint64_t rs = s->seed + (uint64_t)w->id, n = 0;
	char *buf = malloc(PC_PAGE_SIZE), *want = malloc(PC_PAGE_SIZE);
	pc_file *f;

	assert_int_equal(pc_open(s->c, s->path, O_RDWR, 0, &f), 0);
	while (!atomic_load(&s->stop)) {
		uint64_t i = tu_rand(&rs) % (FILE_PAGES / THREADS) * THREADS +
			     (uint64_t)w->id;
		unsigned what = (unsigned)(tu_rand(&rs) % 8);

		if (what == 0) {		/* write a new version */
			page_fill(buf, s, i, ++s->version[i]);
			assert_int_equal(pc_pwrite(f, buf, PC_PAGE_SIZE,
						   (off_t)(i * PC_PAGE_SIZE)),
					 PC_PAGE_SIZE);
		} else if (what == 1) {		/* zero copy */
			pc_page *p;

			assert_int_equal(pc_get_page(f, i, 0, &p), 0);
			page_fill(want, s, i, s->version[i]);
			if (memcmp(pc_page_data(p), want, PC_PAGE_SIZE))
				fail_msg("thread %d: page %llu (pinned) is not "
					 "version %u", w->id,
					 (unsigned long long)i, s->version[i]);
			pc_put_page(p);
		} else {			/* read it */
			assert_int_equal(pc_pread(f, buf, PC_PAGE_SIZE,
						  (off_t)(i * PC_PAGE_SIZE)),
					 PC_PAGE_SIZE);
			page_fill(want, s, i, s->version[i]);
			if (memcmp(buf, want, PC_PAGE_SIZE))
				fail_msg("thread %d: page %llu is not version %u",
					 w->id, (unsigned long long)i,
					 s->version[i]);
		}
		n++;
		atomic_fetch_add(&s->done, 1);
	}
	s->ops[w->id] = n;
	assert_int_equal(pc_close(f), 0);
	free(buf);
	free(want);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	void *r;

	pthread_cleanup_push(worker_ended, w->s);
	r = worker_body(w);
	pthread_cleanup_pop(1);
	return r;
}

static void resize_under_load(const char *config, const char *name)
{
	struct shared *s = calloc(1, sizeof(*s));
	struct worker w[THREADS];
	pthread_t th[THREADS];
	/* in MiB: the file is 23.4 MiB */
	static const unsigned steps[] = { 4, 1, 32, 2, 12, 1, 24, 3, 8 };
	char *buf = malloc(PC_PAGE_SIZE), *disk = malloc(PC_PAGE_SIZE);
	uint64_t ops = 0, busy = 0;
	pc_file *f;
	int fd;

	s->path = tu_path(name);
	s->seed = tu_seed(name);
	{	/* every page at version 0 */
		fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		for (uint64_t i = 0; i < FILE_PAGES; i++) {
			page_fill(buf, s, i, 0);
			assert_int_equal(pwrite(fd, buf, PC_PAGE_SIZE,
						(off_t)(i * PC_PAGE_SIZE)), PC_PAGE_SIZE);
		}
		close(fd);
	}
	assert_int_equal(pc_cache_create(&s->c, config), 0);
	atomic_store(&s->running, THREADS);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ s, i };
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int round = 0; round < 3; round++)
		for (unsigned k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			uint64_t bytes = (uint64_t)steps[k] * MIB;
			uint64_t until = atomic_load(&s->done) + OPS_BETWEEN;
			int r;

			/* Let the workers fill the cache some between resizes:
			 * counted in operations, not in time - while they all
			 * run: one that failed does no more. */
			while (atomic_load(&s->done) < until &&
			       atomic_load(&s->running) == THREADS)
				usleep(200);
			if (atomic_load(&s->running) != THREADS)
				goto stop;
			r = pc_cache_resize(s->c, bytes);

			/* Readers pin pages for a moment: a shrink may find
			 * one still held after its wait, never anything else. */
			if (r == -EBUSY)
				busy++;
			else
				assert_int_equal(r, 0);
			if (r == 0)
				assert_int_equal(vm(s->c, "nr_budget_pages"),
						 bytes / PC_PAGE_SIZE /
						 (uint64_t)s->c->nr_nodes *
						 (uint64_t)s->c->nr_nodes);
			assert_true(vm(s->c, "nr_budget_pages") >=
				    bytes / PC_PAGE_SIZE / (uint64_t)s->c->nr_nodes *
				    (uint64_t)s->c->nr_nodes);
		}
stop:
	atomic_store(&s->stop, true);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ops += s->ops[i];
	}
	tu_check_threads();	/* a worker's failure fails the test here */
	/* Everything the model says, through the cache and on the disk. */
	assert_int_equal(pc_open(s->c, s->path, O_RDWR, 0, &f), 0);
	assert_int_equal(pc_fsync(f), 0);
	fd = open(s->path, O_RDONLY);
	assert_true(fd >= 0);
	for (uint64_t i = 0; i < FILE_PAGES; i++) {
		page_fill(buf, s, i, s->version[i]);
		assert_int_equal(pc_pread(f, disk, PC_PAGE_SIZE,
					  (off_t)(i * PC_PAGE_SIZE)), PC_PAGE_SIZE);
		if (memcmp(buf, disk, PC_PAGE_SIZE))
			fail_msg("page %llu: cache is not version %u",
				 (unsigned long long)i, s->version[i]);
		assert_int_equal(pread(fd, disk, PC_PAGE_SIZE,
				       (off_t)(i * PC_PAGE_SIZE)), PC_PAGE_SIZE);
		if (memcmp(buf, disk, PC_PAGE_SIZE))
			fail_msg("page %llu: disk is not version %u",
				 (unsigned long long)i, s->version[i]);
	}
	close(fd);
	printf("  %s: %llu reads and writes by %d threads across 27 resizes "
	       "(%llu -EBUSY), %llu pages evicted by shrinks, all data as the "
	       "model says\n", config, (unsigned long long)ops, THREADS,
	       (unsigned long long)busy,
	       (unsigned long long)vm(s->c, "pgsteal_resize"));
	assert_true(vm(s->c, "pgsteal_resize") > 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(s->c), 0);
	free(buf);
	free(disk);
	free(s);
}

static void test_resize_under_load(void **state)
{
	(void)state;
	resize_under_load("memory=8M memory.max=64M", "under_load");
}

static void test_resize_under_load_nodes(void **state)
{
	(void)state;
	resize_under_load("memory=8M memory.max=64M nodes=2", "under_load_nodes");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_touches_nothing),
		cmocka_unit_test(test_rss_follows_cached),
		cmocka_unit_test(test_create_without_room_to_grow),
		cmocka_unit_test(test_resize_einval),
		cmocka_unit_test(test_limits_follow),
		cmocka_unit_test(test_shrink_writes_dirty),
		cmocka_unit_test(test_shrink_gives_memory_back),
		cmocka_unit_test(test_pinned_ebusy),
		cmocka_unit_test(test_resize_under_load),
		cmocka_unit_test(test_resize_under_load_nodes),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
