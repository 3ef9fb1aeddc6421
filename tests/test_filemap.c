/*
 * test_filemap.c - the read and write paths against a reference model.
 *
 * Random pread/pwrite/ftruncate/fsync/close/reopen/fadvise sequences over
 * several files and threads, every read checked against the reference
 * model of each file (tests/util); after each fsync the file read with plain read(2) must
 * equal the model, with the exact size.  Budgets as small as 64 pages keep
 * reclaim running all the time.  Stable pages: a write waits for the
 * page's writeback when the device asks (a write held in flight by the
 * fault backend's gate).  Each thread owns its files (the model is
 * per file); a separate case has many threads on one file, in disjoint
 * stripes.  Seeds are printed; PC_SEED=N replays.  A page a write
 * creates that loses its insertion race wakes the thread queued on its
 * lock meanwhile (issue 36, by a test hook: util_inside.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "filemap.h"
#include "inode.h"
#include "io.h"
#include "util.h"
#include "util_inside.h"

#define MAX_FILE (768 * 1024)

struct run {
	pc_cache *c;
	uint64_t seed;
	int id;
	int nfiles;
	int ops;
	uint64_t frames;
};

/* No frame counted twice (a double free, a page on two lists). */
static void check_pool(pc_cache *c, uint64_t frames)
{
	assert_true(tu_vm(c, "nr_free_pages") <= frames);
	assert_true(tu_vm(c, "nr_inactive_file") + tu_vm(c, "nr_active_file") <=
		    frames);
}

static void do_read(struct tu_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % (MAX_FILE + 4096);
	size_t len = 1 + tu_rand(rs) % 40000;

	tu_model_read(md, off, len);
}

static void do_write(struct tu_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % MAX_FILE;
	size_t len = 1 + tu_rand(rs) % pc_min(30000, MAX_FILE - off);

	tu_model_write(md, off, len, tu_rand(rs));
}

static void *random_worker(void *arg)
{
	struct run *r = arg;
	uint64_t rs = r->seed * 7919 + (uint64_t)r->id + 1;
	struct tu_model *files = calloc((size_t)r->nfiles, sizeof(*files));

	for (int i = 0; i < r->nfiles; i++) {
		char name[64];

		snprintf(name, sizeof(name), "model-%d-%d", r->id, i);
		tu_model_init(&files[i], tu_path(name), MAX_FILE + 4096);
		tu_model_open(&files[i], r->c, O_RDWR | O_CREAT | O_TRUNC);
	}
	for (int op = 0; op < r->ops; op++) {
		struct tu_model *md = &files[tu_rand(&rs) % (uint64_t)r->nfiles];
		unsigned k = (unsigned)(tu_rand(&rs) % 100);

		if (k < 40) {
			do_read(md, &rs);
		} else if (k < 80) {
			do_write(md, &rs);
		} else if (k < 85) {
			tu_model_truncate(md, tu_rand(&rs) % MAX_FILE);
		} else if (k < 90) {
			assert_int_equal(pc_fsync(md->f), 0);
			tu_model_check_disk(md);
		} else if (k < 95) {
			tu_model_close(md);
			tu_model_open(md, r->c, O_RDWR);
		} else {
			off_t off = (off_t)(tu_rand(&rs) % MAX_FILE);

			assert_int_equal(pc_fadvise(md->f, off, 65536,
						    POSIX_FADV_DONTNEED), 0);
		}
		if (op % 64 == 0)
			check_pool(r->c, r->frames);
	}
	for (int i = 0; i < r->nfiles; i++) {
		assert_int_equal(pc_fsync(files[i].f), 0);
		tu_model_check_disk(&files[i]);
		do_read(&files[i], &rs);
		tu_model_fini(&files[i]);
	}
	free(files);
	return NULL;
}

static void random_run(const char *name, const char *config, int threads,
		       int nfiles, int ops)
{
	uint64_t seed = tu_seed(name);
	pthread_t tid[16];
	struct run runs[16];
	pc_cache *c;

	assert_int_equal(pc_cache_create(&c, config), 0);
	for (int t = 0; t < threads; t++) {
		runs[t] = (struct run){ .c = c, .seed = seed, .id = t,
					.nfiles = nfiles, .ops = ops,
					.frames = c->nr_frames };
		pthread_create(&tid[t], NULL, random_worker, &runs[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	tu_check_threads();
	check_pool(c, c->nr_frames);
	{
		static const char *const show[] = {
			"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd",
			"pgsteal_direct", "allocstall", "pgpgin", "pgpgout",
			"balance_dirty_pages_pauses", "balance_dirty_pages_pause_ms",
			"workingset_refault_file", "kswapd_throttle", NULL };

		for (int i = 0; show[i]; i++) {
			uint64_t v;

			pc_vmstat(c, show[i], &v);
			printf("  %s %llu", show[i], (unsigned long long)v);
		}
		printf("\n");
	}
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_random_tiny_budget(void **state)
{
	(void)state;
	random_run("random_tiny_budget", "memory=256K", 1, 3, 3000);
}

static void test_random_threads(void **state)
{
	(void)state;
	random_run("random_threads", "memory=512K", 4, 2, 1500);
}

static void test_random_nodes(void **state)
{
	(void)state;
	random_run("random_nodes", "memory=1M nodes=4", 3, 2, 1500);
}

static void test_random_sync_io(void **state)
{
	(void)state;
	random_run("random_sync_io", "memory=256K io=sync", 2, 2, 1500);
}

static void test_random_policies_off(void **state)
{
	(void)state;
	random_run("random_policies_off",
		   "memory=512K reclaim.batch_remove=off lru.deferred_activation=off "
		   "page.waiters_bit=off readahead.single_marker=off cache.stickiness=off "
		   "reclaim.kswapd=off", 2, 2, 1500);
}

/* Many threads, one file, disjoint stripes: each checks its own. */
struct stripe {
	pc_file *f;
	int id;
	uint64_t seed;
};

#define STRIPE 20000
#define NSTRIPES 6

static void *stripe_worker(void *arg)
{
	struct stripe *s = arg;
	uint64_t rs = s->seed + (uint64_t)s->id;
	unsigned char model[STRIPE] = { 0 }, buf[STRIPE];
	off_t base = (off_t)s->id * STRIPE;

	for (int i = 0; i < 800; i++) {
		size_t off = tu_rand(&rs) % STRIPE;
		size_t len = 1 + tu_rand(&rs) % (STRIPE - off);

		if (tu_rand(&rs) & 1) {
			tu_pattern(buf, len, tu_rand(&rs), off);
			assert_int_equal(pc_pwrite(s->f, buf, len, base + (off_t)off),
					 (ssize_t)len);
			memcpy(model + off, buf, len);
		} else {
			ssize_t got = pc_pread(s->f, buf, len, base + (off_t)off);

			/* Bytes past EOF: the file may not reach us yet. */
			if (got > 0 && memcmp(buf, model + off, (size_t)got) != 0)
				fail_msg("stripe %d: content differs at %zu", s->id, off);
		}
	}
	return NULL;
}

static void test_one_file_many_threads(void **state)
{
	uint64_t seed = tu_seed("one_file_many_threads");
	pthread_t tid[NSTRIPES];
	struct stripe s[NSTRIPES];
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=256K"), 0);
	assert_int_equal(pc_open(c, tu_path("stripes"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	for (int i = 0; i < NSTRIPES; i++) {
		s[i] = (struct stripe){ .f = f, .id = i, .seed = seed };
		pthread_create(&tid[i], NULL, stripe_worker, &s[i]);
	}
	for (int i = 0; i < NSTRIPES; i++)
		pthread_join(tid[i], NULL);
	tu_check_threads();
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Small unaligned writes, exact sizes, appends, sync opens. */
static void test_exact_sizes(void **state)
{
	const char *path = tu_path("sizes");
	unsigned char buf[5000];
	pc_cache *c;
	pc_file *f;
	struct stat st;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, 1024, 3000), 1024);
	assert_int_equal(pc_size(f), 4024);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4024);
	assert_int_equal(pc_pread(f, buf, sizeof(buf), 0), 4024);
	for (int i = 0; i < 3000; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(buf[3000], 'a');
	assert_int_equal(pc_close(f), 0);

	assert_int_equal(pc_open(c, path, O_WRONLY | O_APPEND, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, "xyz", 3, 0), 3);	/* appends */
	assert_int_equal(pc_size(f), 4027);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4024);	/* the disk: not written yet */
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4027);	/* exact once written */

	assert_int_equal(pc_open(c, path, O_RDWR | O_DSYNC, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, "Q", 1, 10000), 1);
	{	/* O_DSYNC: on disk before pwrite returned */
		int fd = open(path, O_RDONLY);
		char q = 0;

		assert_int_equal(pread(fd, &q, 1, 10000), 1);
		assert_int_equal(q, 'Q');
		close(fd);
	}
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 10001);
}

/* Destroy writes everything back; a reopened cache reads it. */
static void test_destroy_writes_back(void **state)
{
	const char *path = tu_path("destroy");
	static unsigned char buf[300000], back[300000];
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	tu_pattern(buf, sizeof(buf), 42, 0);
	assert_int_equal(pc_cache_create(&c, "memory=4M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_close(f), 0);	/* pages stay cached, dirty */
	assert_int_equal(pc_cache_destroy(c), 0);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, back, sizeof(back)), (ssize_t)sizeof(buf));
	close(fd);
	assert_memory_equal(buf, back, sizeof(buf));
}

/* Zero copy: pinned pages hold the data and survive reclaim. */
static void test_get_page(void **state)
{
	const char *path = tu_path("zerocopy");
	static unsigned char buf[64 * 4096];
	pc_cache *c;
	pc_file *f;
	pc_page *pin, *p;
	uint64_t allocfail0, allocfail1;

	(void)state;
	tu_pattern(buf, sizeof(buf), 7, 0);
	assert_int_equal(pc_cache_create(&c, "memory=128K"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_get_page(f, 5, 0, &pin), 0);
	assert_memory_equal(pc_page_data(pin), buf + 5 * 4096, 4096);
	/* Stream the whole file twice: the pinned page must stay put. */
	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < 64; i++) {
			assert_int_equal(pc_get_page(f, i, 0, &p), 0);
			assert_memory_equal(pc_page_data(p), buf + i * 4096, 4096);
			pc_put_page(p);
		}
	assert_memory_equal(pc_page_data(pin), buf + 5 * 4096, 4096);
	pc_put_page(pin);
	assert_int_equal(pc_get_page(f, 64, 0, &p), -ENXIO);
	assert_int_equal(pc_get_page(f, 0, 0x80, &p), -EINVAL);
	assert_int_equal(pc_vmstat(c, "allocfail", &allocfail0), 0);
	/* NOWAIT on a page not cached: -EAGAIN, nothing read. */
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(pc_get_page(f, 3, PC_GET_NOWAIT, &p), -EAGAIN);
	assert_int_equal(pc_vmstat(c, "allocfail", &allocfail1), 0);
	assert_int_equal(allocfail0, allocfail1);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Stable pages (a device whose queue says stable_writes; the test sets the
 * flag).  An fsync's write of page 0 is held in flight by a fault-backend
 * gate; a pc_pwrite of the page meanwhile must wait for that write, so the
 * disk gets the page as it was when its writeback began.  The gate opens
 * once the writer is seen waiting on the page (PG_waiters) - or done,
 * which is the failure.
 */
struct stable_io {
	pc_file *f;
	const unsigned char *buf;
	ssize_t r;
	_Atomic bool done;
};

static void *stable_fsync(void *arg)
{
	struct stable_io *s = arg;

	s->r = pc_fsync(s->f);
	atomic_store(&s->done, true);
	return NULL;
}

static void *stable_write(void *arg)
{
	struct stable_io *s = arg;

	s->r = pc_pwrite(s->f, s->buf, 4096, 0);
	atomic_store(&s->done, true);
	return NULL;
}

static void test_stable_pages(void **state)
{
	const char *path = tu_path("stable");
	static unsigned char a[4096], b[4096], disk[4096];
	_Atomic bool gate = false;
	struct pc_io_fault hold = { .op = PC_IO_WRITE, .fd = -1, .count = 1,
				    .gate = &gate };
	struct stable_io s1 = { 0 }, s2 = { 0 };
	struct pc_page *p;
	pthread_t t1, t2;
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	assert_int_equal(pc_cache_create(&c, "memory=4M io=fault"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	atomic_store(&f->mapping->bdi->stable_writes, true);
	assert_int_equal(pc_pwrite(f, a, sizeof(a), 0), 4096);
	p = pc__find_get_page(f->mapping, 0);
	assert_non_null(p);
	assert_int_equal(pc__io_fault_add(pc__local(c)->io, &hold), 0);
	s1.f = s2.f = f;
	s2.buf = b;
	assert_int_equal(pthread_create(&t1, NULL, stable_fsync, &s1), 0);
	while (pc__io_fault_hits(pc__local(c)->io) < 1)	/* page 0 held in flight */
		tu_sleep_us(200);
	assert_true(page_test(p, PG_writeback));
	assert_int_equal(pthread_create(&t2, NULL, stable_write, &s2), 0);
	while (!atomic_load(&s2.done) && !page_test(p, PG_waiters))
		tu_sleep_us(200);
	assert_false(atomic_load(&s2.done));	/* it waits for the write */
	atomic_store(&gate, true);
	tu_join(t1);
	tu_join(t2);
	assert_int_equal(s1.r, 0);
	assert_int_equal(s2.r, 4096);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, disk, sizeof(disk), 0), 4096);
	assert_memory_equal(disk, a, sizeof(a));	/* as it was at writeback */
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pread(fd, disk, sizeof(disk), 0), 4096);
	assert_memory_equal(disk, b, sizeof(b));
	close(fd);
	pc__put_page(c, p);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Every frame pinned: allocation fails with -ENOMEM, after the counted
 * rounds without progress (page_alloc.c). */
static void test_all_pinned_enomem(void **state)
{
	const char *path = tu_path("pinned");
	static unsigned char buf[40 * 4096];
	pc_page *pins[40];
	pc_cache *c;
	pc_file *f;
	unsigned n = 0;
	ssize_t r;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=64K"), 0);	/* 16 frames */
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(pc_fsync(f), 0);
	for (uint64_t i = 0; i < 40 && n < 40; i++) {
		int e = pc_get_page(f, i, 0, &pins[n]);

		if (e == -ENOMEM)
			break;
		assert_int_equal(e, 0);
		n++;
	}
	assert_int_equal(n, 16);	/* every frame, not one more */
	r = pc_pread(f, buf, 4096, 39 * 4096);
	assert_int_equal(r, -ENOMEM);
	while (n)
		pc_put_page(pins[--n]);
	assert_int_equal(pc_pread(f, buf, 4096, 39 * 4096), 4096);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* Seed 000: small sequential writes are one use of each page, not four. */
static void test_small_writes_not_hot(void **state)
{
	const char *path = tu_path("smallwrites");
	char kb[1024];
	uint64_t act0, act1, act2;
	pc_cache *c;
	pc_file *f;

	(void)state;
	memset(kb, 'w', sizeof(kb));
	assert_int_equal(pc_cache_create(&c, "memory=8M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_vmstat(c, "pgactivate", &act0), 0);
	for (int i = 0; i < 256 * 4; i++)	/* 256 pages, 1 KiB at a time */
		assert_int_equal(pc_pwrite(f, kb, sizeof(kb), (off_t)i * 1024), 1024);
	pc_fadvise(f, 0, 0, POSIX_FADV_NORMAL);
	assert_int_equal(pc_fsync(f), 0);
	assert_int_equal(pc_vmstat(c, "pgactivate", &act1), 0);
	assert_int_equal(act1 - act0, 0);
	/* Rewriting cached pages twice, out of order, makes them hot. */
	for (int round = 0; round < 2; round++)
		for (int i = 255; i >= 0; i -= 2)
			assert_int_equal(pc_pwrite(f, kb, 100, (off_t)i * 4096 + 7), 100);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_vmstat(c, "pgactivate", &act2), 0);
	if (act2 - act1 < 100)
		fail_msg("pgactivate moved %llu", (unsigned long long)(act2 - act1));
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * Where the data is on disk: a file of data costs one SEEK_DATA/SEEK_HOLE
 * pair (the extent is remembered: m->data_extent), holes of a sparse file
 * are still zero-filled without I/O, and an extent gone stale (a hole
 * punched behind the cache's back) reads the hole as zeros from the disk.
 */
static void test_data_extent(void **state)
{
	const char *path = tu_path("extent");
	unsigned char buf[PC_PAGE_SIZE], zero[PC_PAGE_SIZE] = { 0 };
	struct pc_mapping *m;
	uint64_t in, holes;
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	tu_make_file(path, 64, 5);
	assert_int_equal(pc_cache_create(&c, "memory=8M io=sync"), 0);
	f = tu_open_random(c, path, O_RDONLY);
	m = ((struct pc_file *)f)->mapping;
	tu_read_page(f, 10, 5);
	assert_int_equal(atomic_load(&m->data_extent), 10ull << 32 | 64);
	tu_read_page(f, 40, 5);		/* inside: asked nothing */
	assert_int_equal(atomic_load(&m->data_extent), 10ull << 32 | 64);
	tu_read_page(f, 3, 5);		/* outside: asked again */
	assert_int_equal(atomic_load(&m->data_extent), 3ull << 32 | 64);
	assert_int_equal(tu_vm(c, "pgpgin"), 3 * 4);
	assert_int_equal(tu_vm(c, "pgpgin_holes"), 0);

	/* A hole punched at page 20, inside the extent, by someone else. */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   20 * PC_PAGE_SIZE, PC_PAGE_SIZE), 0);
	close(fd);
	assert_int_equal(pc_pread(f, buf, PC_PAGE_SIZE, 20 * PC_PAGE_SIZE),
			 PC_PAGE_SIZE);
	assert_memory_equal(buf, zero, PC_PAGE_SIZE);
	assert_int_equal(tu_vm(c, "pgpgin"), 4 * 4);	/* read as data */
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);

	/* Sparse: data at pages [0, 4) and [32, 36) of 64. */
	fd = open(path, O_RDWR | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64 * PC_PAGE_SIZE), 0);
	for (int i = 0; i < 4; i++) {
		tu_pattern(buf, PC_PAGE_SIZE, 5, (uint64_t)i * PC_PAGE_SIZE);
		assert_int_equal(pwrite(fd, buf, PC_PAGE_SIZE, i * PC_PAGE_SIZE),
				 PC_PAGE_SIZE);
		tu_pattern(buf, PC_PAGE_SIZE, 5, (uint64_t)(32 + i) * PC_PAGE_SIZE);
		assert_int_equal(pwrite(fd, buf, PC_PAGE_SIZE, (32 + i) * PC_PAGE_SIZE),
				 PC_PAGE_SIZE);
	}
	assert_int_equal(fsync(fd), 0);
	close(fd);
	assert_int_equal(pc_cache_create(&c, "memory=8M io=sync"), 0);
	f = tu_open_random(c, path, O_RDONLY);
	m = ((struct pc_file *)f)->mapping;
	tu_read_page(f, 1, 5);
	assert_int_equal(atomic_load(&m->data_extent), 1ull << 32 | 4);
	assert_int_equal(pc_pread(f, buf, PC_PAGE_SIZE, 10 * PC_PAGE_SIZE),
			 PC_PAGE_SIZE);
	assert_memory_equal(buf, zero, PC_PAGE_SIZE);
	tu_read_page(f, 33, 5);
	assert_int_equal(atomic_load(&m->data_extent), 33ull << 32 | 36);
	in = tu_vm(c, "pgpgin");
	holes = tu_vm(c, "pgpgin_holes");
	assert_int_equal(in, 2 * 4);
	assert_int_equal(holes, 4);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
}

/*
 * Issue 36, the write path's side (new_locked_page): a page a write
 * creates loses its insertion race while a waiter that found its frame is
 * queued on its lock (util_inside.h plays the race); the waiter must be
 * woken, and the write goes into the winner.  Fails with the plain clear
 * of PG_locked it replaced (the waiter stays queued, the lock free).
 */
static void test_lost_race_wakes(void **state)
{
	struct tu_model md;
	struct tu_race r;
	pc_cache *c;

	(void)state;
	c = tu_cache("memory=16M");
	tu_model_init(&md, tu_path("lostrace"), 8 * 4096);
	tu_model_open(&md, c, O_RDWR | O_CREAT | O_TRUNC);
	tu_model_write(&md, 0, 4 * 4096, 1);
	tu_race_arm(&r, c, 0, 1u << PG_rapage);
	tu_model_write(&md, 5 * 4096 + 100, 200, 2);	/* a new page 5 */
	assert_non_null(r.loser);
	assert_int_equal(r.index, 5);
	if (!tu_race_check(&r))
		fail_msg("the waiter on the page that lost the race was not woken");
	tu_model_read(&md, 0, 6 * 4096);
	assert_int_equal(pc_fsync(md.f), 0);
	tu_model_check_disk(&md);
	tu_model_fini(&md);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_sizes),
		cmocka_unit_test(test_destroy_writes_back),
		cmocka_unit_test(test_get_page),
		cmocka_unit_test(test_all_pinned_enomem),
		cmocka_unit_test(test_stable_pages),
		cmocka_unit_test(test_small_writes_not_hot),
		cmocka_unit_test(test_data_extent),
		cmocka_unit_test(test_random_tiny_budget),
		cmocka_unit_test(test_random_threads),
		cmocka_unit_test(test_random_nodes),
		cmocka_unit_test(test_random_sync_io),
		cmocka_unit_test(test_random_policies_off),
		cmocka_unit_test(test_one_file_many_threads),
		cmocka_unit_test(test_lost_race_wakes),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
