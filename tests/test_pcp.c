/*
 * test_pcp.c - each thread's own list of free frames (pcp.c).
 *
 *   interleaved   two threads write a file each, 16 KiB at a time, taking
 *                 turns (fsmark-4M's writers, made deterministic): with
 *                 the lists (memory.thread_frames=32) each file's frames
 *                 ascend side by side and its 1 MiB writeback request is a
 *                 few runs of memory (writeback_segments); with them off
 *                 (0) the turns interleave the frames and the request is
 *                 one run a chunk - the cause, shown on the counter;
 *   given_back    a list's frames are out of nr_free and not file pages
 *                 (nr_file_pages counts pages), and come back: when the
 *                 thread allocates on another node, when its thread
 *                 exits, and by pc__tctx_drain_all (reclaim, resize);
 *                 a small cache (under 1/1024 of a node) keeps no list;
 *   shrink        a resize below the frames a list holds retires them
 *                 (nr_retiring back to 0) and the data stays right.
 *
 * Checks are on counters and frame numbers, never on time.  Tests look
 * inside the cache (internal.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "node.h"
#include "tctx.h"
#include "util.h"
#include "vmscan.h"

#define PG 4096
#define CHUNK (16 * 1024)
#define FILE_PAGES 256		/* 1 MiB: one writeback request */

struct turns {
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	int turn;		/* the writer whose chunk is next */
	pc_file *f[2];
	int err[2];
};

struct writer {
	struct turns *tt;
	int me;
};

static void *writer(void *arg)
{
	struct writer *w = arg;
	struct turns *tt = w->tt;
	char buf[CHUNK];

	for (uint64_t off = 0; off < FILE_PAGES * PG; off += CHUNK) {
		pthread_mutex_lock(&tt->mtx);
		while (tt->turn != w->me)
			pthread_cond_wait(&tt->cond, &tt->mtx);
		pthread_mutex_unlock(&tt->mtx);
		tu_pattern(buf, CHUNK, 70 + (uint64_t)w->me, off);
		if (pc_pwrite(tt->f[w->me], buf, CHUNK, (off_t)off) != CHUNK)
			tt->err[w->me] = -1;
		pthread_mutex_lock(&tt->mtx);
		tt->turn = !w->me;
		pthread_cond_broadcast(&tt->cond);
		pthread_mutex_unlock(&tt->mtx);
	}
	return NULL;
}

/* Runs of frames side by side in @f's pages, and descents among them. */
static uint64_t frame_runs(pc_cache *c, pc_file *f, uint64_t *descents)
{
	uint64_t runs = 0;
	uint32_t prev = 0;

	*descents = 0;
	for (uint64_t i = 0; i < FILE_PAGES; i++) {
		struct pc_page *p = pc__find_get_page(f->mapping, i);
		uint32_t pfn;

		assert_non_null(p);
		pfn = page_pfn(c, p);
		pc__put_page(c, p);
		if (!i || pfn != prev + 1)
			runs++;
		if (i && pfn < prev)
			(*descents)++;
		prev = pfn;
	}
	return runs;
}

/* Two turn-taking writers under @frames; each file's fsync is one request:
 * the most segments either took. */
static uint64_t interleaved(const char *frames, uint64_t *max_runs)
{
	char cfg[200];
	struct turns tt = { .turn = 0 };
	struct writer w[2];
	pthread_t th[2];
	uint64_t most = 0;
	pc_cache *c;

	snprintf(cfg, sizeof(cfg), "memory=128M nodes=1 memory.thread_frames=%s "
		 "writeback.dirty_ratio=90 writeback.dirty_background_ratio=80 "
		 "writeback.dirty_expire_ms=600000", frames);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	pthread_mutex_init(&tt.mtx, NULL);
	pthread_cond_init(&tt.cond, NULL);
	for (int i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "il-%s-%d", frames, i);
		assert_int_equal(pc_open(c, tu_path(name), O_RDWR | O_CREAT |
					 O_TRUNC, 0644, &tt.f[i]), 0);
		w[i] = (struct writer){ .tt = &tt, .me = i };
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		tu_join(th[i]);
	*max_runs = 0;
	for (int i = 0; i < 2; i++) {
		uint64_t descents, runs, seg0, req0, segs, reqs;

		assert_int_equal(tt.err[i], 0);
		runs = frame_runs(c, tt.f[i], &descents);
		seg0 = tu_vm(c, "writeback_segments");
		req0 = tu_vm(c, "writeback_requests");
		assert_int_equal(pc_fsync(tt.f[i]), 0);
		segs = tu_vm(c, "writeback_segments") - seg0;
		reqs = tu_vm(c, "writeback_requests") - req0;
		printf("  thread_frames=%s file %d: %llu runs of frames, %llu "
		       "descents; %llu requests, %llu segments\n", frames, i,
		       (unsigned long long)runs, (unsigned long long)descents,
		       (unsigned long long)reqs, (unsigned long long)segs);
		assert_int_equal(reqs, 1);
		/* a huge page's end may end a segment between two runs */
		assert_true(segs <= runs + FILE_PAGES / 512 + 1);
		most = pc_max(most, segs);
		*max_runs = pc_max(*max_runs, runs);
		pc_close(tt.f[i]);
	}
	pthread_cond_destroy(&tt.cond);
	pthread_mutex_destroy(&tt.mtx);
	assert_int_equal(pc_cache_destroy(c), 0);
	return most;
}

static void test_interleaved(void **state)
{
	uint64_t runs_on, runs_off, on, off;

	(void)state;
	on = interleaved("32", &runs_on);
	off = interleaved("0", &runs_off);
	/* on: a run of 32 frames a refill (a new step's frames, in order) */
	assert_true(runs_on <= FILE_PAGES / 32 + 1);
	assert_true(on <= FILE_PAGES / 32 + 2);
	/* off: the turns' chunks alternate frames, a run each */
	assert_true(runs_off >= FILE_PAGES / (CHUNK / PG));
	assert_true(off >= FILE_PAGES / (CHUNK / PG) / 2);
}

static void *one_page(void *arg)
{
	pc_file *f = arg;
	char buf[PG];

	memset(buf, 7, sizeof(buf));
	return (void *)(intptr_t)(pc_pwrite(f, buf, PG, 0) != PG);
}

static void test_given_back(void **state)
{
	pc_cache *c;
	pc_file *f;
	pthread_t th;
	void *rv;
	char buf[PG];
	uint64_t free0, free1, ret0, batch;

	(void)state;
	/* 2 nodes of 64M: 16384 frames each, a list of 16 */
	assert_int_equal(pc_cache_create(&c, "memory=128M nodes=2 "
					 "memory.thread_frames=64"), 0);
	batch = 16384 >> 10;
	assert_int_equal(pc_open(c, tu_path("gb"), O_RDWR | O_CREAT | O_TRUNC,
				 0644, &f), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	free0 = tu_vm(c, "node0.nr_free_pages");
	memset(buf, 3, sizeof(buf));
	assert_int_equal(pc_pwrite(f, buf, PG, PG), PG);
	pc__lru_drain(c, pc__tctx(c));
	assert_int_equal(tu_vm(c, "pcp_refills"), 1);
	assert_int_equal(tu_vm(c, "node0.nr_free_pages"), free0 - batch);
	assert_int_equal(atomic_load(&c->nodes[0].nr_pcp), batch - 1);
	assert_int_equal(tu_vm(c, "nr_file_pages"), 1);
	assert_int_equal(tu_vm(c, "pgalloc"), 1);
	/* another node: the list goes back first */
	ret0 = tu_vm(c, "pcp_returned");
	assert_int_equal(pc_thread_set_node(c, 1), 0);
	assert_int_equal(pc_pwrite(f, buf, PG, 2 * PG), PG);
	assert_int_equal(tu_vm(c, "pcp_returned") - ret0, batch - 1);
	assert_int_equal(tu_vm(c, "node0.nr_free_pages"), free0 - 1);
	assert_int_equal(atomic_load(&c->nodes[0].nr_pcp), 0);
	assert_int_equal(atomic_load(&c->nodes[1].nr_pcp), batch - 1);
	/* a drain of every context (reclaim's, resize's) */
	assert_int_equal(pc__tctx_drain_all(c), batch - 1);
	assert_int_equal(atomic_load(&c->nodes[1].nr_pcp), 0);
	assert_int_equal(tu_vm(c, "nr_file_pages"), 2);
	/* a thread that exits gives its list back */
	free1 = tu_vm(c, "nr_free_pages");
	assert_int_equal(pthread_create(&th, NULL, one_page, f), 0);
	assert_int_equal(pthread_join(th, &rv), 0);
	assert_null(rv);
	assert_int_equal(atomic_load(&c->nodes[0].nr_pcp) +
			 atomic_load(&c->nodes[1].nr_pcp), 0);
	assert_int_equal(tu_vm(c, "nr_free_pages"), free1 - 1);	/* page 0 */
	assert_int_equal(tu_vm(c, "pcp_refills"), 3);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);

	/* 4 MiB: 1024 frames, under a list of 2: one at a time */
	assert_int_equal(pc_cache_create(&c, "memory=4M"), 0);
	assert_int_equal(pc_open(c, tu_path("gb"), O_RDWR, 0, &f), 0);
	assert_int_equal(pc_pwrite(f, buf, PG, 5 * PG), PG);
	assert_int_equal(tu_vm(c, "pcp_refills"), 0);
	assert_int_equal(atomic_load(&c->nodes[0].nr_pcp), 0);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_shrink(void **state)
{
	const uint64_t pages = 2048;	/* 8 MiB of a 32 MiB cache */
	uint64_t seed = tu_seed("pcp_shrink");
	const char *path = tu_path("pcp-shrink");
	pc_cache *c;
	pc_file *f;

	(void)state;
	tu_make_file(path, pages, seed);
	assert_int_equal(pc_cache_create(&c, "memory=32M"), 0);
	f = tu_open_ro(c, path);
	for (uint64_t i = 0; i < pages; i++)
		tu_read_page(f, i, seed);
	assert_true(tu_vm(c, "pcp_refills") > 0);
	/* the list's frames are above 4M: retired by the drain */
	assert_int_equal(pc_cache_resize(c, 4 << 20), 0);
	assert_int_equal(atomic_load(&c->nodes[0].nr_retiring), 0);
	assert_int_equal(atomic_load(&c->nodes[0].nr_pcp), 0);
	assert_true(tu_vm(c, "nr_file_pages") <= 1024);
	for (uint64_t i = 0; i < pages; i++)
		tu_read_page(f, i, seed);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_given_back),
		cmocka_unit_test(test_shrink),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
