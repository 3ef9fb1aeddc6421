/*
 * test_writeback_stress.c - page locks and PG_writeback waits through a
 * whole cache (src/pagewait.c under src/writeback.c and src/filemap.c):
 * what the waiters bit saves (seed 001), and no wake-up lost when many
 * threads lock, write, sync and wait on a few pages, with the bit and
 * without.
 *
 * Checks are made on counters and on the data read back, not on
 * timings; the one time limit (a thread still running after 120 s: a
 * lost wake-up) is generous.  The stress prints its seed; PC_SEED=N
 * replays.  Worker threads count what went wrong and the main thread
 * checks it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "filemap.h"
#include "inode.h"
#include "util.h"

#define PAGE 4096

static pc_file *op(pc_cache *c, const char *path)
{
	pc_file *f = NULL;

	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f),
			 0);
	return f;
}

static uint64_t now_ms(void)
{
	return pc__now_ns() / 1000000;
}

/* @n pages of pattern @seed from offset 0, in 4 KiB pwrites. */
static void write_pages(pc_file *f, unsigned n, uint64_t seed)
{
	unsigned char buf[PAGE];

	for (unsigned i = 0; i < n; i++) {
		tu_pattern(buf, PAGE, seed, (uint64_t)i * PAGE);
		assert_int_equal(pc_pwrite(f, buf, PAGE, (off_t)i * PAGE), PAGE);
	}
}

/*
 * PG_waiters (seed 001): with the bit, unlock and end of writeback look
 * at no wait queue when no one waits; without it, every one does.
 */
static void test_waiters_bit_counts(void **state)
{
	uint64_t on = 0, off = 0;

	(void)state;
	for (int bit = 1; bit >= 0; bit--) {
		const char *path = tu_path("wbit");
		pc_cache *c = tu_cache(bit ? "memory=16M io=sync page.waiters_bit=on"
					   : "memory=16M io=sync page.waiters_bit=off");
		pc_file *f = op(c, path);

		write_pages(f, 256, 25);
		assert_int_equal(pc_fsync(f), 0);
		if (bit)
			on = tu_vm(c, "waitqueue_lookups");
		else
			off = tu_vm(c, "waitqueue_lookups");
		/* One thread: no one ever waited. */
		assert_int_equal(tu_vm(c, "waitqueue_wakeups"), 0);
		assert_int_equal(pc_close(f), 0);
		assert_int_equal(pc_cache_destroy(c), 0);
	}
	printf("256 pages written and synced: %" PRIu64 " wait-queue lookups "
	       "with the waiters bit, %" PRIu64 " without\n", on, off);
	assert_int_equal(on, 0);
	/* Per page: unlock after the write, after writeback started, end. */
	assert_true(off >= 3 * 256);
}

struct locker {
	pc_cache *c;
	pc_file *f;
	uint64_t seed;
	int id;
	int iters;
	int errors;
	_Atomic bool *done;
};

#define LOCK_PAGES 6

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	uint64_t rng = l->seed;
	unsigned char buf[PAGE];

	for (int i = 0; i < l->iters; i++) {
		uint64_t r = tu_rand(&rng);
		uint64_t index = r % LOCK_PAGES;

		switch ((r >> 8) % 16) {
		case 0:	/* lock the page itself, as fsync and truncate do */
		{
			struct pc_page *p = pc__find_get_page(l->f->mapping, index);

			if (p) {
				pc__lock_page(&l->c->wait, p);
				pc__unlock_page(&l->c->wait, p);
				pc__put_page(l->c, p);
			}
			break;
		}
		case 1:
			if (pc_fsync(l->f) != 0)
				l->errors++;
			break;
		case 2:
		case 3:	/* wait for writeback of a page */
		{
			struct pc_page *p = pc__find_get_page(l->f->mapping, index);

			if (p) {
				pc__wait_on_page_bit(&l->c->wait, p, PG_writeback);
				pc__put_page(l->c, p);
			}
			break;
		}
		case 4:
		case 5:
			if (pc_pread(l->f, buf, PAGE, (off_t)(index * PAGE)) != PAGE)
				l->errors++;
			break;
		default:	/* a whole page of this thread's, tagged */
			memset(buf, l->id + 1, PAGE);
			memcpy(buf, &i, sizeof(i));
			if (pc_pwrite(l->f, buf, PAGE, (off_t)(index * PAGE)) != PAGE)
				l->errors++;
			break;
		}
	}
	atomic_store(l->done, true);
	return NULL;
}

/*
 * No lost wake-up: many threads lock, write, sync and wait on a few pages
 * (page locks handed over, writeback waits woken by the io_uring
 * completion thread).  A lost wake-up hangs a thread: the main thread
 * gives up after a generous deadline and fails.  Every page must hold one
 * whole write of one thread.
 */
static void lock_stress(bool waiters_bit)
{
	enum { T = 8 };
	const char *path = tu_path(waiters_bit ? "lockstress-on" : "lockstress-off");
	uint64_t seed = tu_seed(waiters_bit ? "lock_stress(waiters_bit=on)"
					    : "lock_stress(waiters_bit=off)");
	pc_cache *c = tu_cache(waiters_bit ? "memory=8M page.waiters_bit=on"
					   : "memory=8M page.waiters_bit=off");
	struct locker l[T];
	_Atomic bool done[T];
	pthread_t th[T];
	unsigned char buf[PAGE], page[PAGE];
	uint64_t t0 = now_ms();
	pc_file *f = op(c, path);

	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < LOCK_PAGES; i++)
		assert_int_equal(pc_pwrite(f, buf, PAGE, i * PAGE), PAGE);
	for (int i = 0; i < T; i++) {
		atomic_init(&done[i], false);
		l[i] = (struct locker){ .c = c, .f = f, .seed = seed + (uint64_t)i * 7919,
					.id = i, .iters = 3000, .done = &done[i] };
		pthread_create(&th[i], NULL, locker_main, &l[i]);
	}
	for (int i = 0; i < T; i++) {
		while (!atomic_load(&done[i])) {
			if (now_ms() - t0 > 120000) {
				fprintf(stderr, "thread %d still running after 120 s: "
					"a lost wake-up? seed %" PRIu64 "\n", i, seed);
				fail();
			}
			tu_sleep_us(10000);
		}
		tu_join(th[i]);
		assert_int_equal(l[i].errors, 0);
	}
	printf("waiters_bit=%s: %" PRIu64 " ms, %" PRIu64 " lookups, %" PRIu64
	       " wake-ups\n", waiters_bit ? "on" : "off", now_ms() - t0,
	       tu_vm(c, "waitqueue_lookups"), tu_vm(c, "waitqueue_wakeups"));
	if (!waiters_bit)	/* every unlock and end of writeback looked */
		assert_true(tu_vm(c, "waitqueue_lookups") >= 3000);
	assert_int_equal(pc_fsync(f), 0);
	/* Each page: one thread's byte throughout, after its iteration tag. */
	for (int i = 0; i < LOCK_PAGES; i++) {
		assert_int_equal(pc_pread(f, page, PAGE, i * PAGE), PAGE);
		for (int k = (int)sizeof(int); k < PAGE; k++)
			assert_int_equal(page[k], page[PAGE - 1]);
	}
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_lock_stress_waiters_bit(void **state)
{
	(void)state;
	lock_stress(true);
}

static void test_lock_stress_no_waiters_bit(void **state)
{
	(void)state;
	lock_stress(false);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiters_bit_counts),
		cmocka_unit_test(test_lock_stress_waiters_bit),
		cmocka_unit_test(test_lock_stress_no_waiters_bit),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
