/*
 * test_readahead.c - readahead windows and markers, holes, fadvise and
 * use-once pages (readahead.c and the read path of filemap.c).
 *
 *   windows     a sequential reader from offset 0, from the middle, with
 *               1 KiB and 1 MiB reads: the window after every read (f->ra)
 *               against the kernel's sizes, written out by hand, and the
 *               pages carrying PG_readahead: exactly one per window with
 *               readahead.single_marker, two without;
 *   random      a random reader reads what it asks and no more, and a
 *               miss is read by the reader itself (pc__io_fault_now);
 *               a miss after a cached run reads a first window at most;
 *   streams     two interleaved streams through one handle, and two
 *               handles streaming one file (readtwice), read each page once;
 *   holes       a sparse file of 1 GiB is read without one device read
 *               (pgpgin stays put, and a fault rule failing every read
 *               would show), a file of data and holes reads back right;
 *   fadvise     each advice moves the counters and residency it must;
 *   use-once    a stream's consumed pages are dropped behind it, a page
 *               someone else touched is kept; a hot set of half the
 *               budget keeps a hit ratio above 95% while four budgets
 *               stream past (one thread, then two);
 *   threads     readers, streams and fadvise at once on one handle
 *               (for TSan), every byte checked.
 *
 * Counters and page flags only, no timings.  Random cases print their
 * seed; PC_SEED=N replays.  Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "io.h"
#include "util.h"

#define PG 4096
#define KB 1024

/*
 * Two reader threads of one file are kept within DRIFT pages of each other
 * (the test holds the leader back), so what the scheduler does to them
 * cannot decide how much is read twice.
 */
#define DRIFT 1024

static uint64_t vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	if (pc_vmstat(c, name, &v) != 0)
		fail_msg("no counter %s", name);
	return v;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A file of @pages pages of tu_pattern(@seed) data, written with write(2). */
static void make_file(const char *path, size_t pages, uint64_t seed)
{
	size_t chunk = 256 * PG;
	unsigned char *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	for (size_t off = 0; off < pages * PG; off += chunk) {
		size_t n = pc_min(chunk, pages * PG - off);

		tu_pattern(buf, n, seed, off);
		assert_int_equal(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
	}
	close(fd);
	free(buf);
}

/* A file of @bytes with no data at all (ftruncate: one hole). */
static void make_sparse(const char *path, uint64_t bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	close(fd);
}

static pc_cache *cache(const char *cfg)
{
	pc_cache *c;

	if (pc_cache_create(&c, cfg) != 0)
		fail_msg("cannot create a cache with \"%s\"", cfg);
	return c;
}

static pc_file *open_ro(pc_cache *c, const char *path)
{
	pc_file *f;

	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	return f;
}

/* pc_pread that must return all of @len, checked against the pattern. */
static void rd(pc_file *f, void *buf, size_t len, uint64_t off, uint64_t seed)
{
	unsigned char *want;
	ssize_t got = pc_pread(f, buf, len, (off_t)off);

	if (got != (ssize_t)len)
		fail_msg("pread %zu at %llu: %zd", len, (unsigned long long)off, got);
	want = malloc(len);
	tu_pattern(want, len, seed, off);
	if (memcmp(buf, want, len) != 0)
		fail_msg("pread %zu at %llu: wrong data", len, (unsigned long long)off);
	free(want);
}

static bool resident(pc_file *f, uint64_t index)
{
	struct pc_page *p = pc__find_get_page(f->mapping, index);

	if (p)
		pc__put_page(f->cache, p);
	return p != NULL;
}

/* Pages of [first, first + nr) that carry PG_readahead; *where: the last. */
static unsigned markers(pc_file *f, uint64_t first, uint64_t nr,
			uint64_t *where)
{
	unsigned n = 0;

	for (uint64_t i = first; i < first + nr; i++) {
		struct pc_page *p = pc__find_get_page(f->mapping, i);

		if (!p)
			continue;
		if (page_test(p, PG_readahead)) {
			n++;
			*where = i;
		}
		pc__put_page(f->cache, p);
	}
	return n;
}

/* Open files streaming @f's file (slots taken in mapping->stream_pos). */
static int streams(pc_file *f)
{
	int n = 0;

	for (int k = 0; k < PC_RA_STREAMS; k++)
		n += atomic_load(&f->mapping->stream_pos[k]) != 0;
	return n;
}

/* ------------------------------------------------------------------ */
/* Windows and markers.                                                */

struct win {
	uint64_t start;
	unsigned size, async;
};

/*
 * Read [from, to) in reads of @rlen bytes and check, after each read that
 * moved the window, that it is the next of @want[] and that its pages
 * carry @nmark markers, the first at start + size - async.  Returns the
 * windows seen.
 */
static unsigned follow(pc_file *f, uint64_t from, uint64_t to, size_t rlen,
		       uint64_t seed, const struct win *want, unsigned nwant,
		       unsigned nmark)
{
	unsigned char *buf = malloc(rlen);
	struct win cur = { f->ra.start, f->ra.size, f->ra.async_size };
	uint64_t eof = ((uint64_t)atomic_load(&f->mapping->size) + PG - 1) / PG;
	unsigned seen = 0;

	for (uint64_t off = from; off < to; off += rlen) {
		struct win w;
		uint64_t where = 0;
		unsigned n;

		rd(f, buf, rlen, off, seed);
		w = (struct win){ f->ra.start, f->ra.size, f->ra.async_size };
		if (w.start == cur.start && w.size == cur.size &&
		    w.async == cur.async)
			continue;
		cur = w;
		if (seen < nwant &&
		    (w.start != want[seen].start || w.size != want[seen].size ||
		     w.async != want[seen].async))
			fail_msg("window %u after the read at %llu: {%llu, %u, %u}, "
				 "want {%llu, %u, %u}", seen, (unsigned long long)off,
				 (unsigned long long)w.start, w.size, w.async,
				 (unsigned long long)want[seen].start,
				 want[seen].size, want[seen].async);
		n = markers(f, w.start, w.size, &where);
		/* The window's own marker may be behind the reader already. */
		if (w.start + w.size - w.async > (off + rlen - 1) / PG &&
		    w.start + w.size <= eof) {
			if (n != nmark)
				fail_msg("window {%llu, %u, %u}: %u marked pages, want %u",
					 (unsigned long long)w.start, w.size, w.async,
					 n, nmark);
			if (nmark == 1 && where != w.start + w.size - w.async)
				fail_msg("window {%llu, %u, %u}: marker at %llu",
					 (unsigned long long)w.start, w.size, w.async,
					 (unsigned long long)where);
		}
		seen++;
	}
	free(buf);
	return seen;
}

/* The kernel's windows for 4 KiB reads from page @s, readahead.max=512K. */
static const struct win seq512k[] = {
	{ 0, 4, 3 }, { 4, 16, 16 }, { 20, 32, 32 }, { 52, 64, 64 },
	{ 116, 128, 128 }, { 244, 128, 128 }, { 372, 128, 128 },
	{ 500, 128, 128 }, { 628, 128, 128 },
};
#define NSEQ (sizeof(seq512k) / sizeof(seq512k[0]))

static void test_windows_from_start(void **state)
{
	const char *path = tu_path("win0");
	pc_cache *c;
	pc_file *f;
	unsigned seen;

	(void)state;
	make_file(path, 1024, 1);
	c = cache("memory=16M readahead.max=512K");
	f = open_ro(c, path);
	seen = follow(f, 0, 600 * PG, PG, 1, seq512k, NSEQ, 1);
	assert_int_equal(seen, NSEQ);
	assert_int_equal(vm(c, "ra_sync"), 1);		/* the first read only */
	assert_int_equal(vm(c, "ra_async"), NSEQ - 1);
	assert_int_equal(vm(c, "ra_pages"), 756);	/* 628 + 128 */
	assert_int_equal(vm(c, "ra_miss_random"), 0);
	assert_int_equal(vm(c, "pgfault_miss"), 1);
	assert_int_equal(vm(c, "pgfault_hit"), 599);
	assert_int_equal(vm(c, "ra_hit"), 599);		/* all but the first */
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_windows_from_middle(void **state)
{
	const char *path = tu_path("winmid");
	struct win want[NSEQ];
	pc_cache *c;
	pc_file *f;
	unsigned char buf[PG];

	(void)state;
	for (unsigned i = 0; i < NSEQ; i++)
		want[i] = (struct win){ seq512k[i].start + 1001, seq512k[i].size,
					seq512k[i].async };
	make_file(path, 2048, 2);
	c = cache("memory=16M readahead.max=512K");
	f = open_ro(c, path);
	/* The first read of a handle is not known to be sequential: 1 page. */
	rd(f, buf, PG, 1000 * PG, 2);
	assert_int_equal(vm(c, "ra_miss_random"), 1);
	assert_int_equal(vm(c, "ra_pages"), 1);
	assert_int_equal(f->ra.size, 0);
	/* The next one is: windows as from the start, 1001 pages on. */
	assert_int_equal(follow(f, 1001 * PG, 1601 * PG, PG, 2, want, NSEQ, 1),
			 NSEQ);
	assert_int_equal(vm(c, "ra_sync"), 2);
	assert_int_equal(vm(c, "ra_async"), NSEQ - 1);
	assert_int_equal(vm(c, "ra_miss_random"), 1);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* 1 KiB reads: the same windows; each page marked accessed once. */
static void test_windows_1k_reads(void **state)
{
	const char *path = tu_path("win1k");
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 1024, 3);
	c = cache("memory=16M readahead.max=512K cache.stickiness=off");
	f = open_ro(c, path);
	assert_int_equal(follow(f, 0, 600 * PG, KB, 3, seq512k, NSEQ, 1), NSEQ);
	assert_int_equal(vm(c, "ra_sync"), 1);
	assert_int_equal(vm(c, "ra_pages"), 756);
	pc__lru_drain(c, pc__tctx(c));
	/* Four reads of a page are one access: nothing became active. */
	assert_int_equal(vm(c, "pgactivate"), 0);
	assert_int_equal(vm(c, "nr_active_file"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * 1 MiB reads, readahead.max=1M: the first read makes the window {0, 256,
 * 128} and reaches its marker at once, so after it the window is {256,
 * 256, 256}; then one full window per read, always one read ahead.
 */
static void test_windows_1m_reads(void **state)
{
	static const struct win want[] = {
		{ 256, 256, 256 }, { 512, 256, 256 }, { 768, 256, 256 },
		{ 1024, 256, 256 }, { 1280, 256, 256 }, { 1536, 256, 256 },
	};
	const char *path = tu_path("win1m");
	uint64_t pages;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 2048, 4);
	c = cache("memory=32M readahead.max=1M");
	f = open_ro(c, path);
	assert_int_equal(follow(f, 0, 6 << 20, 1 << 20, 4, want, 6, 1), 6);
	assert_int_equal(vm(c, "ra_sync"), 1);
	assert_int_equal(vm(c, "ra_async"), 6);
	assert_int_equal(vm(c, "ra_pages"), 1792);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);

	/*
	 * A request over readahead.max may read up to the largest I/O, as
	 * the kernel's io_pages: windows alternate between 1 MiB (the read's
	 * remaining size) and 512 KiB; still one miss, one read per page.
	 */
	c = cache("memory=32M readahead.max=512K");
	f = open_ro(c, path);
	follow(f, 0, 8 << 20, 1 << 20, 4, NULL, 0, 1);
	assert_int_equal(vm(c, "ra_sync"), 1);
	assert_int_equal(vm(c, "pgfault_miss"), 1);
	pages = vm(c, "ra_pages");
	assert_int_equal(pages, 2048);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * single_marker off: the last page of a window is marked as well, and a
 * reader reaching it starts a window further on: more is read ahead of
 * the reader, sooner (seed 002: where the marker sits decides how much a
 * stream holds in flight).
 */
static void test_single_marker(void **state)
{
	const char *path = tu_path("marker");
	uint64_t async[2], ahead[2];
	unsigned char buf[PG];
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 1024, 5);
	for (int on = 1; on >= 0; on--) {
		char cfg[128];

		snprintf(cfg, sizeof(cfg),
			 "memory=16M readahead.max=512K readahead.single_marker=%s",
			 on ? "on" : "off");
		c = cache(cfg);
		f = open_ro(c, path);
		/* The first two windows: one marker each, or two. */
		assert_int_equal(follow(f, 0, 2 * PG, PG, 5, seq512k, 2,
					on ? 1 : 2), 2);
		/* Pages read ahead of the reader, summed over the ramp-up. */
		ahead[on] = 0;
		for (uint64_t i = 2; i < 1024; i++) {
			rd(f, buf, PG, i * PG, 5);
			if (i < 300)
				ahead[on] += f->ra.start + f->ra.size - i;
		}
		async[on] = vm(c, "ra_async");
		printf("  single_marker=%s: ra_async %llu, ra_pages %llu, "
		       "%.1f pages ahead of the reader on average\n",
		       on ? "on" : "off", (unsigned long long)async[on],
		       (unsigned long long)vm(c, "ra_pages"),
		       (double)ahead[on] / 298);
		assert_int_equal(vm(c, "ra_sync"), 1);
		assert_int_equal(vm(c, "ra_pages"), 1024);
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	assert_true(async[0] > async[1]);
	assert_true(ahead[0] > ahead[1]);
}

/* ------------------------------------------------------------------ */
/* Random readers, interleaved streams, several readers of one file.   */

static void test_random_reader(void **state)
{
	uint64_t seed = tu_seed("random_reader");
	const char *path = tu_path("random");
	const unsigned pages = 16384, reads = 2000;
	unsigned char *seen = calloc(pages / 4, 1);
	unsigned char buf[PG];
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_sparse(path, (uint64_t)pages * PG);
	c = cache("memory=64M");
	f = open_ro(c, path);
	/*
	 * Distinct pages 4k (k > 0): no read is the next page of the one
	 * before, and no page just before a read is ever cached, so neither
	 * sequential nor context readahead may start.
	 */
	for (unsigned i = 0; i < reads;) {
		uint64_t k = 1 + tu_rand(&seed) % (pages / 4 - 1);

		if (seen[k])
			continue;
		seen[k] = 1;
		assert_int_equal(pc_pread(f, buf, PG, (off_t)(k * 4 * PG)), PG);
		i++;
	}
	assert_int_equal(vm(c, "ra_sync"), reads);
	assert_int_equal(vm(c, "ra_miss_random"), reads);
	assert_int_equal(vm(c, "ra_pages"), reads);
	assert_int_equal(vm(c, "ra_async"), 0);
	assert_int_equal(f->ra.size, 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(seen);
}

/*
 * A random read just past a run cached by an earlier pass (tiobench's
 * random phase after its sequential one) reads a new stream's first
 * window at most (4 pages for one), not the length of the run.
 */
static void test_context_after_cached_run(void **state)
{
	const char *path = tu_path("context");
	unsigned char buf[PG];
	uint64_t first_missing = 1024, pages0;
	pc_cache *c;
	pc_file *a, *b;

	(void)state;
	make_file(path, 4096, 7);
	c = cache("memory=64M readahead.max=2M");
	a = open_ro(c, path);
	for (uint64_t i = 0; i < 1024; i++)
		rd(a, buf, PG, i * PG, 7);
	assert_int_equal(pc_close(a), 0);
	b = open_ro(c, path);
	rd(b, buf, PG, 3000 * PG, 7);		/* b's last read: far away */
	while (resident(b, first_missing))	/* a's readahead went on */
		first_missing++;
	pages0 = vm(c, "ra_pages");
	rd(b, buf, PG, first_missing * PG, 7);
	printf("  a miss after %llu cached pages read %llu\n",
	       (unsigned long long)first_missing,
	       (unsigned long long)(vm(c, "ra_pages") - pages0));
	assert_true(vm(c, "ra_pages") - pages0 <= 4);
	assert_true(vm(c, "ra_pages") - pages0 >= 2);	/* context, not random */
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * The page a reader waits for is read by the reader (pc_io_req.now): a
 * random miss is one request of its page; the first read of a stream is
 * one request of at most 16 pages, its window's rest queued behind it; a
 * reader that finds its pages read ahead reads nothing itself.
 */
static void test_reader_reads_its_page(void **state)
{
	const char *path = tu_path("nowread");
	unsigned char *buf = malloc(1 << 20);
	uint64_t pages;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 4096, 9);
	c = cache("memory=64M io=fault readahead.max=2M");
	f = open_ro(c, path);
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_RANDOM), 0);
	rd(f, buf, PG, 1000 * PG, 9);
	assert_int_equal(pc__io_fault_now(c->io, &pages), 1);
	assert_int_equal(pages, 1);
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NORMAL), 0);
	pc__io_fault_clear(c->io);
	rd(f, buf, 1 << 20, 0, 9);		/* a window of 512 pages */
	assert_int_equal(pc__io_fault_now(c->io, &pages), 1);
	assert_int_equal(pages, 16);
	assert_true(vm(c, "ra_pages") >= 256);
	pc__io_fault_clear(c->io);
	for (uint64_t off = 1 << 20; off < 2 << 20; off += PG)
		rd(f, buf, PG, off, 9);		/* read ahead already */
	assert_int_equal(pc__io_fault_now(c->io, NULL), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* Two streams through one handle, 4 KiB reads taking turns. */
static void test_interleaved_streams(void **state)
{
	const char *path = tu_path("interleaved");
	const uint64_t half = 2048;	/* pages */
	unsigned char buf[PG];
	uint64_t misses, pages;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 2 * half, 6);
	c = cache("memory=64M readahead.max=512K");
	f = open_ro(c, path);
	for (uint64_t i = 1; i < half; i++) {
		rd(f, buf, PG, i * PG, 6);
		rd(f, buf, PG, (half + i) * PG, 6);
	}
	misses = vm(c, "pgfault_miss");
	pages = vm(c, "ra_pages");
	printf("  two streams, one handle: %llu misses in %llu reads, "
	       "%llu pages read, ra_async %llu\n", (unsigned long long)misses,
	       (unsigned long long)(2 * (half - 1)), (unsigned long long)pages,
	       (unsigned long long)vm(c, "ra_async"));
	/* Each stream is found after a few misses, then read ahead. */
	assert_true(misses <= 16);
	assert_true(vm(c, "ra_async") >= 2 * (half / 128) - 4);
	assert_true(pages <= 2 * half);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * readtwice: two handles read one file sequentially; the pages are read
 * once, consumed twice, and dropped by the second reader when memory is
 * tight.  Taking turns in one thread, the counts are exact.
 */
static void test_two_readers_one_file(void **state)
{
	const char *path = tu_path("readtwice");
	const uint64_t pages = 4 * 4096;	/* four budgets */
	unsigned char *buf = malloc(64 * KB);
	pc_cache *c;
	pc_file *a, *b;

	(void)state;
	make_sparse(path, pages * PG);
	c = cache("memory=16M readahead.max=512K");
	a = open_ro(c, path);
	b = open_ro(c, path);
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB) {
		assert_int_equal(pc_pread(a, buf, 64 * KB, (off_t)off), 64 * KB);
		assert_int_equal(pc_pread(b, buf, 64 * KB, (off_t)off), 64 * KB);
	}
	printf("  readtwice: %llu pages read for %llu, dropped behind %llu, "
	       "reclaimed %llu, streams %d\n",
	       (unsigned long long)vm(c, "ra_pages"), (unsigned long long)pages,
	       (unsigned long long)vm(c, "dropbehind"),
	       (unsigned long long)(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct")),
	       streams(a));
	assert_int_equal(streams(a), 2);
	assert_int_equal(vm(c, "ra_pages"), pages);	/* each page once */
	assert_int_equal(vm(c, "pgpgin"), 0);
	assert_int_equal(vm(c, "pgpgin_holes"), pages * PG / KB);
	/*
	 * The second reader dropped them all but the first window (32 pages,
	 * not use-once) and its last batch: no reclaim.
	 */
	assert_true(vm(c, "dropbehind") >= pages - 32 - PC_DROP_BATCH);
	assert_int_equal(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct"), 0);
	assert_int_equal(pc_close(a), 0);
	assert_int_equal(streams(b), 1);
	assert_int_equal(pc_close(b), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/*
 * The same with two threads, never more than DRIFT pages apart: each page
 * is read once.
 */
struct twice {
	pc_file *f;
	uint64_t pages;
	pthread_barrier_t *start;
	_Atomic uint64_t done;		/* pages read */
	struct twice *other;
	int err;
};

static void *twice_reader(void *arg)
{
	struct twice *t = arg;
	unsigned char buf[PG];

	pthread_barrier_wait(t->start);	/* "start together" */
	for (uint64_t i = 0; i < t->pages; i++) {
		while (i >= atomic_load(&t->other->done) + DRIFT)
			tu_sleep_us(100);	/* the other is behind */
		if (pc_pread(t->f, buf, PG, (off_t)(i * PG)) != PG ||
		    buf[0] || buf[PG - 1])
			t->err = 1;
		atomic_store(&t->done, i + 1);
	}
	return NULL;
}

static void test_two_reader_threads(void **state)
{
	const char *path = tu_path("readtwice2");
	const uint64_t pages = 4 * 16384;	/* four budgets */
	pthread_barrier_t start;
	struct twice t[2];
	pthread_t tid[2];
	uint64_t read_in;
	pc_cache *c;

	(void)state;
	make_sparse(path, pages * PG);
	c = cache("memory=64M");
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct twice){ .f = open_ro(c, path), .pages = pages,
				       .start = &start, .other = &t[!i] };
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, twice_reader, &t[i]);
	for (int i = 0; i < 2; i++) {
		tu_join(tid[i]);
		assert_int_equal(t[i].err, 0);
		assert_int_equal(pc_close(t[i].f), 0);
	}
	pthread_barrier_destroy(&start);
	read_in = vm(c, "pgpgin_holes") / 4;
	printf("  readtwice, two threads: %llu pages read for %llu, dropped "
	       "behind %llu, reclaimed %llu (direct %llu), misses %llu, "
	       "allocstall %llu\n",
	       (unsigned long long)read_in, (unsigned long long)pages,
	       (unsigned long long)vm(c, "dropbehind"),
	       (unsigned long long)(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct")),
	       (unsigned long long)vm(c, "pgsteal_direct"),
	       (unsigned long long)vm(c, "pgfault_miss"),
	       (unsigned long long)vm(c, "allocstall"));
	/*
	 * The pages between the two readers (DRIFT at most, a sixteenth of
	 * the budget) are kept for the one behind: each page is read once.
	 * Whether a reader reclaimed directly is printed, not asserted: it
	 * waits for kswapd a while (GIVE_WAY_NS of real time) and then may.
	 */
	assert_int_equal(read_in, pages);
	assert_int_equal(vm(c, "pgpgin"), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Holes.                                                              */

static void test_sparse_no_device_reads(void **state)
{
	const char *path = tu_path("sparse1g");
	const uint64_t size = 1ull << 30;
	struct pc_io_fault rule = { .op = PC_IO_READ, .fd = -1, .error = EIO,
				    .count = -1 };
	unsigned char *buf = malloc(128 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_sparse(path, size);
	c = cache("memory=16M io=fault");
	/* Any read that reached the device would fail with EIO. */
	assert_int_equal(pc__io_fault_add(c->io, &rule), 0);
	f = open_ro(c, path);
	for (uint64_t off = 0; off < size; off += 128 * KB) {
		assert_int_equal(pc_pread(f, buf, 128 * KB, (off_t)off), 128 * KB);
		if (off % (64 << 20) == 0)
			for (unsigned i = 0; i < 128 * KB; i += 512)
				assert_int_equal(buf[i], 0);
	}
	assert_int_equal(vm(c, "pgpgin"), 0);
	assert_int_equal(pc__io_fault_hits(c->io), 0);
	/* No latency to hide: windows over holes stay small. */
	assert_true(f->ra.holes);
	assert_true(f->ra.size <= 32);
	assert_int_equal(vm(c, "pgpgin_holes"), size / KB);
	assert_int_equal(vm(c, "ra_pages"), size / PG);
	/* A stream: it recycled its own frames, reclaim hardly ran. */
	assert_true(vm(c, "dropbehind") >= size / PG / 2);
	assert_int_equal(vm(c, "pgsteal_direct"), 0);
	printf("  1 GiB sparse: pgpgin_holes %llu KiB, dropbehind %llu, "
	       "pgsteal_kswapd %llu\n", (unsigned long long)vm(c, "pgpgin_holes"),
	       (unsigned long long)vm(c, "dropbehind"),
	       (unsigned long long)vm(c, "pgsteal_kswapd"));
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/*
 * Streams on a cache of four nodes: each node fills and is tight on its
 * own (numa.node_reclaim keeps a thread's pages on its node) while the
 * cache as a whole still has room - drop-behind must work per node.
 */
static void test_stream_nodes(void **state)
{
	const char *path = tu_path("nodes");
	const uint64_t pages = 4 * 4096;	/* four budgets */
	unsigned char *buf = malloc(64 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_sparse(path, pages * PG);
	c = cache("memory=16M nodes=4");
	f = open_ro(c, path);
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB)
		assert_int_equal(pc_pread(f, buf, 64 * KB, (off_t)off), 64 * KB);
	printf("  four nodes: dropbehind %llu of %llu, reclaimed %llu (direct %llu)\n",
	       (unsigned long long)vm(c, "dropbehind"), (unsigned long long)pages,
	       (unsigned long long)(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct")),
	       (unsigned long long)vm(c, "pgsteal_direct"));
	assert_true(vm(c, "dropbehind") >= pages / 2);
	assert_int_equal(vm(c, "pgsteal_direct"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* Data and holes in one file: only the data pages are read. */
static void test_data_and_holes(void **state)
{
	static const struct { uint64_t off, len; } data[] = {
		{ 1 << 20, 12 * KB },			/* three pages */
		{ (3 << 20) + 4 * KB, 1 << 20 },	/* 256 pages */
		{ (6 << 20) + 100, 5000 },		/* unaligned: 2 pages */
	};
	const char *path = tu_path("holes");
	const uint64_t size = (8 << 20) + 1000;
	unsigned char *model = calloc(1, size), *buf = malloc(size);
	uint64_t data_pages = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	for (unsigned i = 0; i < 3; i++) {
		tu_pattern(model + data[i].off, data[i].len, 7, data[i].off);
		assert_int_equal(pwrite(fd, model + data[i].off, data[i].len,
					(off_t)data[i].off), (ssize_t)data[i].len);
		data_pages += (data[i].off + data[i].len + PG - 1) / PG -
			      data[i].off / PG;
	}
	close(fd);
	c = cache("memory=32M");
	f = open_ro(c, path);
	for (uint64_t off = 0; off < size; off += 4000) {
		size_t n = pc_min(4000, size - off);

		assert_int_equal(pc_pread(f, buf + off, n, (off_t)off), (ssize_t)n);
	}
	assert_memory_equal(buf, model, size);
	/*
	 * Filesystems allocate in blocks, and some round a data extent out;
	 * the data pages are read, the holes (almost all) are not.
	 */
	printf("  data and holes: pgpgin %llu KiB (data pages %llu), "
	       "pgpgin_holes %llu KiB\n", (unsigned long long)vm(c, "pgpgin"),
	       (unsigned long long)data_pages,
	       (unsigned long long)vm(c, "pgpgin_holes"));
	assert_true(vm(c, "pgpgin") >= data_pages * 4);
	assert_true(vm(c, "pgpgin") <= (data_pages + 16) * 4);
	assert_int_equal(vm(c, "pgpgin") + vm(c, "pgpgin_holes"),
			 (size + PG - 1) / PG * 4);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(model);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* fadvise.                                                            */

static void test_fadvise_sequential_random(void **state)
{
	const char *path = tu_path("advice");
	unsigned char buf[PG];
	unsigned most = 0;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 2048, 8);
	c = cache("memory=32M readahead.max=512K");
	f = open_ro(c, path);
	assert_int_equal(pc_fadvise(f, 0, 0, 12345), -EINVAL);
	assert_int_equal(pc_fadvise(NULL, 0, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, -1, 0, POSIX_FADV_NORMAL), -EINVAL);
	assert_int_equal(pc_fadvise(f, 0, -1, POSIX_FADV_NORMAL), -EINVAL);

	/* SEQUENTIAL: windows grow to twice readahead.max. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL), 0);
	for (uint64_t i = 0; i < 1024; i++) {
		rd(f, buf, PG, i * PG, 8);
		most = pc_max(most, f->ra.size);
	}
	assert_int_equal(most, 256);

	/* RANDOM: a sequential reader gets what it asks and no more. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_RANDOM), 0);
	{
		uint64_t pages = vm(c, "ra_pages"), async = vm(c, "ra_async");
		uint64_t from = f->ra.start + f->ra.size + 1;

		for (uint64_t i = from; i < from + 64; i++)
			rd(f, buf, PG, i * PG, 8);
		assert_int_equal(vm(c, "ra_pages") - pages, 64);
		assert_int_equal(vm(c, "ra_async"), async);
	}
	/* NORMAL: readahead again. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NORMAL), 0);
	{
		uint64_t pages = vm(c, "ra_pages");

		rd(f, buf, PG, 1900 * PG, 8);
		rd(f, buf, PG, 1901 * PG, 8);
		assert_true(vm(c, "ra_pages") - pages > 2);
	}
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_fadvise_willneed(void **state)
{
	const char *path = tu_path("willneed");
	unsigned char *buf = malloc(1 << 20);
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 1024, 9);
	c = cache("memory=32M");
	f = open_ro(c, path);
	assert_int_equal(pc_fadvise(f, 1 << 20, 1 << 20, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(vm(c, "ra_pages"), 256);
	for (uint64_t i = 256; i < 512; i++)
		assert_true(resident(f, i));
	assert_false(resident(f, 255));
	assert_false(resident(f, 512));
	/* Reading it now misses nothing (it may wait for the I/O). */
	rd(f, buf, 1 << 20, 1 << 20, 9);
	assert_int_equal(vm(c, "pgfault_miss"), 0);
	assert_int_equal(vm(c, "pgpgin"), 1024);
	/* Past end of file, or a write-only handle: nothing. */
	assert_int_equal(pc_fadvise(f, 8 << 20, 0, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(vm(c, "ra_pages"), 256);
	/* len 0: to end of file, at most half the budget (4096 pages). */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_WILLNEED), 0);
	assert_int_equal(vm(c, "ra_pages"), 1024);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

static void test_fadvise_dontneed(void **state)
{
	const char *path = tu_path("dontneed");
	unsigned char *buf = malloc(1 << 20);
	uint64_t files, out;
	struct pc_page *pin;
	pc_page *pinned;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 1024, 10);
	c = cache("memory=32M reclaim.kswapd=off");
	assert_int_equal(pc_open(c, path, O_RDWR, 0, &f), 0);
	rd(f, buf, 1 << 20, 0, 10);
	rd(f, buf, 1 << 20, 0, 10);	/* twice: active */
	pc__lru_drain(c, pc__tctx(c));
	files = vm(c, "nr_file_pages");
	assert_true(files >= 256);
	/* One page pinned: it must stay. */
	assert_int_equal(pc_get_page(f, 100, 0, &pinned), 0);
	assert_int_equal(pc_fadvise(f, 0, 1 << 20, POSIX_FADV_DONTNEED), 0);
	for (uint64_t i = 0; i < 256; i++)
		assert_true(resident(f, i) == (i == 100));
	assert_int_equal(vm(c, "nr_file_pages"), files - 255);
	pin = (struct pc_page *)pinned;
	assert_false(page_test(pin, PG_active));	/* deactivated instead */
	pc_put_page(pinned);
	/* Reading it again reads it from disk. */
	out = vm(c, "pgpgin");
	rd(f, buf, 1 << 20, 0, 10);
	assert_true(vm(c, "pgpgin") - out >= 1020);

	/* Dirty pages: writeback starts, then they can be dropped. */
	tu_pattern(buf, 256 * KB, 10, 2 << 20);
	assert_int_equal(pc_pwrite(f, buf, 256 * KB, 2 << 20), 256 * KB);
	assert_int_equal(vm(c, "nr_dirty"), 64);
	out = vm(c, "pgpgout");
	assert_int_equal(pc_fadvise(f, 2 << 20, 256 * KB, POSIX_FADV_DONTNEED), 0);
	for (int i = 0; i < 500 && vm(c, "nr_dirty") + vm(c, "nr_writeback"); i++)
		sleep_ms(10);
	assert_int_equal(vm(c, "nr_dirty"), 0);
	assert_true(vm(c, "pgpgout") - out >= 256);
	assert_int_equal(pc_fadvise(f, 2 << 20, 256 * KB, POSIX_FADV_DONTNEED), 0);
	for (uint64_t i = 512; i < 576; i++)
		assert_false(resident(f, i));
	rd(f, buf, 256 * KB, 2 << 20, 10);	/* the data made it to disk */
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* NOREUSE: pages read through the handle are never activated, and go. */
static void test_fadvise_noreuse(void **state)
{
	const char *path = tu_path("noreuse");
	unsigned char *buf = malloc(64 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 1024, 11);
	for (int noreuse = 0; noreuse < 2; noreuse++) {
		c = cache("memory=32M reclaim.kswapd=off");
		f = open_ro(c, path);
		if (noreuse)
			assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NOREUSE), 0);
		for (int pass = 0; pass < 2; pass++)
			for (uint64_t off = 0; off < 4 << 20; off += 64 * KB)
				rd(f, buf, 64 * KB, off, 11);
		pc__lru_drain(c, pc__tctx(c));
		printf("  %s: pgactivate %llu, active %llu, cached %llu\n",
		       noreuse ? "NOREUSE" : "NORMAL",
		       (unsigned long long)vm(c, "pgactivate"),
		       (unsigned long long)vm(c, "nr_active_file"),
		       (unsigned long long)vm(c, "nr_file_pages"));
		if (noreuse) {
			assert_int_equal(vm(c, "pgactivate"), 0);
			/* Memory is not tight: they stay, inactive. */
			assert_int_equal(vm(c, "nr_file_pages"), 1024);
		} else {
			assert_true(vm(c, "pgactivate") >= 1000);
		}
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	/*
	 * NOREUSE with less memory than the file: once memory is tight the
	 * pages go as they are consumed (the ones kept before are reclaimed);
	 * with cache.stickiness=always, at once.
	 */
	for (int always = 0; always < 2; always++) {
		c = cache(always ? "memory=2M cache.stickiness=always" : "memory=2M");
		f = open_ro(c, path);
		assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_NOREUSE), 0);
		for (uint64_t off = 0; off < 4 << 20; off += 64 * KB)
			rd(f, buf, 64 * KB, off, 11);
		assert_int_equal(pc_close(f), 0);
		printf("  NOREUSE, 2M budget%s: dropbehind %llu, reclaimed %llu\n",
		       always ? ", stickiness=always" : "",
		       (unsigned long long)vm(c, "dropbehind"),
		       (unsigned long long)(vm(c, "pgsteal_kswapd") +
					    vm(c, "pgsteal_direct")));
		assert_int_equal(vm(c, "pgactivate"), 0);
		if (always)
			assert_int_equal(vm(c, "dropbehind"), 1024);
		else
			assert_true(vm(c, "dropbehind") >= 128);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Use-once pages.                                                     */

/* A consumed stream page touched before its batch is dropped stays. */
static void test_use_once_touched_kept(void **state)
{
	const char *path = tu_path("touched");
	unsigned char buf[PG];
	pc_cache *c;
	pc_file *s, *r;

	(void)state;
	make_file(path, 1024, 12);
	c = cache("memory=32M cache.stickiness=always reclaim.kswapd=off");
	s = open_ro(c, path);
	r = open_ro(c, path);
	assert_int_equal(pc_fadvise(r, 0, 0, POSIX_FADV_RANDOM), 0);
	/*
	 * Pages 0-3 are the first window (not use-once); 4-35 fill the batch,
	 * dropped when page 36 finds it full.
	 */
	for (uint64_t i = 0; i < 51; i++)
		rd(s, buf, PG, i * PG, 12);
	for (uint64_t i = 4; i < 36; i++)
		assert_false(resident(s, i));
	assert_int_equal(vm(c, "dropbehind"), 32);
	rd(r, buf, PG, 40 * PG, 12);	/* consumed, waiting in the batch */
	rd(r, buf, PG, 80 * PG, 12);	/* read ahead, not consumed yet */
	for (uint64_t i = 51; i < 100; i++)
		rd(s, buf, PG, i * PG, 12);
	assert_true(resident(s, 40));
	assert_true(resident(s, 80));
	assert_false(resident(s, 39));		/* the batch 36-67 went */
	assert_false(resident(s, 41));
	assert_true(resident(s, 79));		/* in the batch 68-99 */
	assert_int_equal(pc_close(s), 0);	/* drops the batch */
	assert_false(resident(r, 79));
	assert_false(resident(r, 99));
	assert_true(resident(r, 80));
	assert_true(resident(r, 0));		/* the first window stays */
	assert_int_equal(pc_close(r), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Scan resistance (hotcold): a hot set of half the budget, read at random,
 * and a stream of four budgets read once.  The hot set's hit ratio stays
 * above 95% (hits counted with pc_get_page(PC_GET_NOWAIT)).
 */
struct hot {
	pc_file *f;
	uint64_t pages, seed;
	_Atomic bool *stop;
	uint64_t hits, misses;
};

static void hot_read(struct hot *h)
{
	uint64_t idx = tu_rand(&h->seed) % h->pages;
	unsigned char buf[PG];
	pc_page *p;

	if (pc_get_page(h->f, idx, PC_GET_NOWAIT, &p) == 0) {
		pc_put_page(p);
		h->hits++;
		return;
	}
	h->misses++;
	rd(h->f, buf, PG, idx * PG, 13);
}

static void *hot_thread(void *arg)
{
	struct hot *h = arg;

	while (!atomic_load(h->stop))
		hot_read(h);
	return NULL;
}

static double hotcold(const char *cfg, bool threads, uint64_t seed)
{
	const uint64_t budget = 4096, hot_pages = budget / 2;
	const char *hot = tu_path("hot"), *cold = tu_path("cold");
	unsigned char *buf = malloc(64 * KB);
	_Atomic bool stop = false;
	struct hot h = { .pages = hot_pages, .seed = seed, .stop = &stop };
	pthread_t tid;
	pc_file *s;
	pc_cache *c;
	double ratio;

	c = cache(cfg);
	h.f = open_ro(c, hot);
	s = open_ro(c, cold);
	for (int pass = 0; pass < 2; pass++)	/* warm: each page read twice */
		for (uint64_t off = 0; off < hot_pages * PG; off += 64 * KB)
			rd(h.f, buf, 64 * KB, off, 13);
	if (threads)
		pthread_create(&tid, NULL, hot_thread, &h);
	for (uint64_t off = 0; off < 4 * budget * PG; off += 64 * KB) {
		rd(s, buf, 64 * KB, off, 14);
		if (!threads)
			for (int i = 0; i < 16; i++)
				hot_read(&h);
	}
	if (threads) {
		atomic_store(&stop, true);
		tu_join(tid);
	}
	ratio = (double)h.hits / (double)(h.hits + h.misses);
	printf("  hotcold %s (%s): hit ratio %.2f%% (%llu reads), dropbehind %llu, "
	       "reclaimed %llu (direct %llu), active %llu, inactive %llu\n", cfg,
	       threads ? "two threads" : "one thread", 100 * ratio,
	       (unsigned long long)(h.hits + h.misses),
	       (unsigned long long)vm(c, "dropbehind"),
	       (unsigned long long)(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct")),
	       (unsigned long long)vm(c, "pgsteal_direct"),
	       (unsigned long long)vm(c, "nr_active_file"),
	       (unsigned long long)vm(c, "nr_inactive_file"));
	assert_int_equal(pc_close(s), 0);
	assert_int_equal(pc_close(h.f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
	return ratio;
}

static void test_scan_resistance(void **state)
{
	uint64_t seed = tu_seed("scan_resistance");

	(void)state;
	make_file(tu_path("hot"), 2048, 13);
	make_file(tu_path("cold"), 4 * 4096, 14);
	assert_true(hotcold("memory=16M", false, seed) > 0.95);
	assert_true(hotcold("memory=16M", true, seed) > 0.95);
	/* Without drop-behind it is the LRU's doing alone: shown, not held. */
	hotcold("memory=16M cache.stickiness=off", false, seed);
}

/* ------------------------------------------------------------------ */
/* Configuration, bandwidth.                                           */

static void test_config_and_bandwidth(void **state)
{
	const char *path = tu_path("config");
	unsigned char *buf = malloc(256 * KB);
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "readahead.max=65M"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "readahead.max=x"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "readahead.single_marker=2"), -EINVAL);
	assert_int_equal(pc_cache_create(&c, "cache.stickiness=sometimes"), -EINVAL);
	make_file(path, 512, 15);

	/* readahead.max=0: no readahead at all. */
	c = cache("memory=16M readahead.max=0");
	f = open_ro(c, path);
	for (uint64_t i = 0; i < 100; i++)
		rd(f, buf, PG, i * PG, 15);
	assert_int_equal(vm(c, "ra_pages"), 100);
	assert_int_equal(vm(c, "pgfault_miss"), 100);
	assert_int_equal(vm(c, "ra_async"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);

	/* The default window, and the device's read bandwidth measured. */
	c = cache("memory=16M");
	f = open_ro(c, path);
	assert_int_equal(f->ra.max, 64);	/* 2M, at most a 64th of 16M */
	{
		pc_cache *big = cache("memory=256M");
		pc_file *g = open_ro(big, path);

		assert_int_equal(g->ra.max, 512);	/* 2 MiB */
		assert_int_equal(pc_close(g), 0);
		assert_int_equal(pc_cache_destroy(big), 0);
	}
	for (uint64_t off = 0; off < 512 * PG; off += 256 * KB)
		rd(f, buf, 256 * KB, off, 15);
	printf("  default readahead.max %u pages; read bandwidth %llu MB/s\n",
	       f->ra.max,
	       (unsigned long long)(atomic_load(&f->mapping->bdi->read_bw) >> 20));
	assert_true(atomic_load(&f->mapping->bdi->read_bw) > 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Threads on one handle (TSan).                                       */

struct mixed {
	pc_file *f;
	uint64_t pages, seed;
	int id;
};

static void *mixed_worker(void *arg)
{
	struct mixed *m = arg;
	unsigned char *buf = malloc(128 * KB);
	uint64_t rs = m->seed + (uint64_t)m->id;

	for (int op = 0; op < 400; op++) {
		uint64_t r = tu_rand(&rs);
		uint64_t page = r % m->pages;

		switch (m->id % 4) {
		case 0:		/* a stream */
			page = ((uint64_t)op * 16) % m->pages;
			rd(m->f, buf, pc_min(64 * KB, (m->pages - page) * PG),
			   page * PG, 16);
			break;
		case 1:		/* random 1 KiB reads */
			rd(m->f, buf, KB, page * PG + (r >> 40) % 3 * KB, 16);
			break;
		case 2:		/* random larger reads, pins */
			if (op & 1) {
				pc_page *p;

				if (pc_get_page(m->f, page, 0, &p) == 0)
					pc_put_page(p);
			} else {
				rd(m->f, buf, pc_min(100000, (m->pages - page) * PG),
				   page * PG, 16);
			}
			break;
		default:	/* advice */
			pc_fadvise(m->f, (off_t)(page * PG), 64 * KB,
				   (int)(r >> 32) % 6);
			break;
		}
	}
	free(buf);
	return NULL;
}

static void test_threads_one_handle(void **state)
{
	uint64_t seed = tu_seed("threads_one_handle");
	const char *path = tu_path("mixed");
	struct mixed m[8];
	pthread_t tid[8];
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, 2048, 16);
	c = cache("memory=2M");		/* a quarter of the file */
	f = open_ro(c, path);
	for (int i = 0; i < 8; i++) {
		m[i] = (struct mixed){ .f = f, .pages = 2048, .seed = seed, .id = i };
		pthread_create(&tid[i], NULL, mixed_worker, &m[i]);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(tid[i], NULL);
	tu_check_threads();
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows_from_start),
		cmocka_unit_test(test_windows_from_middle),
		cmocka_unit_test(test_windows_1k_reads),
		cmocka_unit_test(test_windows_1m_reads),
		cmocka_unit_test(test_single_marker),
		cmocka_unit_test(test_random_reader),
		cmocka_unit_test(test_interleaved_streams),
		cmocka_unit_test(test_context_after_cached_run),
		cmocka_unit_test(test_reader_reads_its_page),
		cmocka_unit_test(test_two_readers_one_file),
		cmocka_unit_test(test_two_reader_threads),
		cmocka_unit_test(test_sparse_no_device_reads),
		cmocka_unit_test(test_stream_nodes),
		cmocka_unit_test(test_data_and_holes),
		cmocka_unit_test(test_fadvise_sequential_random),
		cmocka_unit_test(test_fadvise_willneed),
		cmocka_unit_test(test_fadvise_dontneed),
		cmocka_unit_test(test_fadvise_noreuse),
		cmocka_unit_test(test_use_once_touched_kept),
		cmocka_unit_test(test_scan_resistance),
		cmocka_unit_test(test_config_and_bandwidth),
		cmocka_unit_test(test_threads_one_handle),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
