/*
 * test_pagewait.c - page lock and page bit waits (src/pagewait.c).
 *
 * No cache: a static array of zeroed struct pc_page and one struct
 * pc_pagewait.  Worker threads assert as the test's thread does (util.h:
 * a failure in one is recorded and fails the test at tu_join), after
 * letting go of the page they hold, so that a failing thread leaves no
 * page locked for the others to hang on.  The writeback stress threads
 * count what went wrong instead, for the main thread to check: it waits
 * for every one of them at each round.  The stress tests print their
 * seed (PC_SEED=N replays the choice of pages); a lost wake-up shows as a
 * hang, which the runner's timeout turns into a failure.  Last, a pagewait
 * and its pages in a region shared by forked processes (shm.h): page locks
 * handed over between processes, a writeback bit waited for across them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "shm.h"
#include "util.h"

#define NR_PAGES 4096

static struct pc_page pages[NR_PAGES];
static struct pc_pagewait pw;

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static uint32_t flags_of(struct pc_page *p)
{
	return atomic_load(&p->flags);
}

/* Poll until PG_waiters is set on @p: a waiter has queued itself. */
static void wait_for_waiter(struct pc_page *p)
{
	for (int i = 0; i < 20000 && !page_test(p, PG_waiters); i++)
		sleep_ms(1);
	assert_true(page_test(p, PG_waiters));
}

/*
 * The one queue that holds waiters (-1 if none): the waiters' struct is
 * private to pagewait.c, but the head and tail pointers say enough.
 */
static int busy_queue(void)
{
	int found = -1;

	for (unsigned i = 0; i < PC_NR_WAITQ; i++) {
		pc__lock(&pw.q[i].lock);
		if (pw.q[i].waiters.head) {
			assert_int_equal(found, -1);
			found = (int)i;
		}
		pc__unlock(&pw.q[i].lock);
	}
	return found;
}

/* Poll until queue @qi holds at least two waiters. */
static void wait_for_two(int qi)
{
	bool two = false;

	for (int i = 0; i < 20000 && !two; i++) {
		pc__lock(&pw.q[qi].lock);
		two = pw.q[qi].waiters.head &&
		      pw.q[qi].waiters.head != pw.q[qi].waiters.tail;
		pc__unlock(&pw.q[qi].lock);
		if (!two)
			sleep_ms(1);
	}
	assert_true(two);
}

static int setup(void **state)
{
	(void)state;
	memset(pages, 0, sizeof(pages));
	pc__pagewait_init(&pw, true);
	return 0;
}

static int setup_nobit(void **state)
{
	(void)state;
	memset(pages, 0, sizeof(pages));
	pc__pagewait_init(&pw, false);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NR_PAGES; i++)
		assert_int_equal(flags_of(&pages[i]), 0);
	pc__pagewait_fini(&pw);
	return 0;
}

/* ------------------------------------------------------------------ */

static void test_lock_unlock(void **state)
{
	struct pc_page *p = &pages[0];

	(void)state;
	assert_true(pc__trylock_page(p));
	assert_true(page_test(p, PG_locked));
	assert_false(pc__trylock_page(p));
	pc__unlock_page(&pw, p);
	assert_int_equal(flags_of(p), 0);

	pc__lock_page(&pw, p);		/* uncontended: the fast path */
	assert_true(page_test(p, PG_locked));
	assert_false(pc__trylock_page(p));
	pc__unlock_page(&pw, p);
	assert_true(pc__trylock_page(p));
	pc__unlock_page(&pw, p);

	/* Other flags are left alone. */
	page_set(p, PG_dirty);
	pc__lock_page(&pw, p);
	pc__unlock_page(&pw, p);
	assert_int_equal(flags_of(p), 1u << PG_dirty);
	page_clear(p, PG_dirty);

	/* Waiting on a clear bit returns at once. */
	pc__wait_on_page_bit(&pw, p, PG_locked);
	pc__wait_on_page_bit(&pw, p, PG_writeback);
	assert_int_equal(pc__pagewait_lookups(&pw), 0);
	assert_int_equal(pc__pagewait_wakeups(&pw), 0);
}

/* ------------------------------------------------------------------ */
/* Mutual exclusion: 8 threads, 4 pages, a plain counter per page.      */

#define MX_THREADS 8
#define MX_PAGES 4
#define MX_ITERS 150000

struct mx_arg {
	pthread_t t;
	uint64_t seed;
	struct pc_page **set;	/* the pages to pick from */
	unsigned nr;
	uint64_t *counts;	/* counts[i]: plain, under set[i]'s lock */
	uint64_t done[MX_PAGES * 4];
};

static void *mx_thread(void *arg)
{
	struct mx_arg *a = arg;
	uint64_t r = a->seed;

	for (unsigned it = 0; it < MX_ITERS; it++) {
		uint64_t x = tu_rand(&r);
		unsigned i = (unsigned)(x % a->nr);
		struct pc_page *p = a->set[i];
		unsigned how = (unsigned)(x >> 32) % 16;

		if (how == 0) {
			/* trylock, else wait for unlock without taking it */
			if (!pc__trylock_page(p)) {
				pc__wait_on_page_bit(&pw, p, PG_locked);
				continue;
			}
		} else {
			pc__lock_page(&pw, p);
		}
		bool locked = page_test(p, PG_locked);
		uint64_t c = a->counts[i];
		if (how == 1)
			sched_yield();	/* widen the window for waiters */
		a->counts[i] = c + 1;
		a->done[i]++;
		pc__unlock_page(&pw, p);
		assert_true(locked);
	}
	return NULL;
}

static void run_mutex(const char *name, struct pc_page **set, unsigned nr)
{
	struct mx_arg a[MX_THREADS];
	uint64_t counts[MX_PAGES * 4] = { 0 }, want[MX_PAGES * 4] = { 0 };
	uint64_t seed = tu_seed(name);

	assert_true(nr <= MX_PAGES * 4);
	for (int t = 0; t < MX_THREADS; t++) {
		memset(&a[t], 0, sizeof(a[t]));
		a[t].seed = seed + (uint64_t)t * 0x9E3779B97F4A7C15ull;
		if (!a[t].seed)
			a[t].seed = 1;
		a[t].set = set;
		a[t].nr = nr;
		a[t].counts = counts;
		assert_int_equal(pthread_create(&a[t].t, NULL, mx_thread, &a[t]), 0);
	}
	for (int t = 0; t < MX_THREADS; t++) {
		tu_join(a[t].t);
		for (unsigned i = 0; i < nr; i++)
			want[i] += a[t].done[i];
	}
	for (unsigned i = 0; i < nr; i++) {
		assert_int_equal(counts[i], want[i]);
		assert_int_equal(flags_of(set[i]), 0);	/* no PG_waiters left */
	}
	printf("%s: lookups %" PRIu64 " wakeups %" PRIu64 "\n", name,
	       pc__pagewait_lookups(&pw), pc__pagewait_wakeups(&pw));
}

static void test_mutex(void **state)
{
	struct pc_page *set[MX_PAGES];

	(void)state;
	for (int i = 0; i < MX_PAGES; i++)
		set[i] = &pages[i];
	run_mutex(pw.waiters_bit ? "mutex" : "mutex_nobit", set, MX_PAGES);
}

/* ------------------------------------------------------------------ */
/* Several waiters for PG_writeback, released by end_page_writeback.   */

struct wb_arg {
	pthread_t t;
	struct pc_page *p;
	_Atomic int *started, *returned;
};

static void *wb_thread(void *arg)
{
	struct wb_arg *a = arg;

	atomic_fetch_add(a->started, 1);
	pc__wait_on_page_bit(&pw, a->p, PG_writeback);
	atomic_fetch_add(a->returned, 1);
	assert_false(page_test(a->p, PG_writeback));
	return NULL;
}

static void test_writeback_waiters(void **state)
{
	enum { N = 6 };
	struct pc_page *p = &pages[7];
	struct wb_arg a[N];
	_Atomic int started = 0, returned = 0;

	(void)state;
	page_set(p, PG_writeback);
	for (int i = 0; i < N; i++) {
		a[i] = (struct wb_arg){ .p = p, .started = &started,
					.returned = &returned };
		assert_int_equal(pthread_create(&a[i].t, NULL, wb_thread, &a[i]), 0);
	}
	while (atomic_load(&started) < N)
		sleep_ms(1);
	wait_for_waiter(p);
	sleep_ms(100);			/* let the others queue too */
	assert_int_equal(atomic_load(&returned), 0);
	/* The page lock is another bit: unlocking does not release them. */
	pc__lock_page(&pw, p);
	pc__unlock_page(&pw, p);
	sleep_ms(20);
	assert_int_equal(atomic_load(&returned), 0);
	assert_true(page_test(p, PG_waiters));

	uint64_t w0 = pc__pagewait_wakeups(&pw);
	pc__end_page_writeback_bit(&pw, p);
	for (int i = 0; i < N; i++)
		tu_join(a[i].t);
	assert_int_equal(returned, N);
	assert_int_equal(flags_of(p), 0);	/* PG_waiters cleared */
	uint64_t woken = pc__pagewait_wakeups(&pw) - w0;
	assert_true(woken >= 1 && woken <= N);
	printf("writeback: %" PRIu64 " of %d waiters were asleep\n", woken, N);
}

/* ------------------------------------------------------------------ */
/* The waiters bit: no lookup when no one waits.                        */

struct lk_arg {
	pthread_t t;
	struct pc_page *p;
	bool exclusive;
	_Atomic int owned;	/* 1: returned owning the lock */
	_Atomic int release;	/* main says: unlock now */
	_Atomic int returned;
};

static void *lk_thread(void *arg)
{
	struct lk_arg *a = arg;

	if (a->exclusive) {
		pc__lock_page(&pw, a->p);
		atomic_store(&a->owned, page_test(a->p, PG_locked) ? 1 : -1);
		while (!atomic_load(&a->release))
			sleep_ms(1);
		pc__unlock_page(&pw, a->p);
	} else {
		pc__wait_on_page_bit(&pw, a->p, PG_locked);
	}
	atomic_store(&a->returned, 1);
	return NULL;
}

static void test_waiters_bit(void **state)
{
	struct pc_page *p = &pages[3];
	struct lk_arg a = { .p = p, .exclusive = true };
	uint64_t l0;

	(void)state;
	assert_true(pw.waiters_bit);
	for (int i = 0; i < 1000; i++) {
		pc__lock_page(&pw, p);
		pc__unlock_page(&pw, p);
		page_set(p, PG_writeback);
		pc__end_page_writeback_bit(&pw, p);
	}
	assert_int_equal(pc__pagewait_lookups(&pw), 0);

	/* A waiter: one lookup at unlock, which hands it the lock. */
	pc__lock_page(&pw, p);
	assert_int_equal(pthread_create(&a.t, NULL, lk_thread, &a), 0);
	wait_for_waiter(p);
	l0 = pc__pagewait_lookups(&pw);
	pc__unlock_page(&pw, p);
	assert_int_equal(pc__pagewait_lookups(&pw), l0 + 1);
	assert_true(page_test(p, PG_locked));	/* the waiter's now */
	while (!atomic_load(&a.owned))
		sleep_ms(1);
	assert_int_equal(atomic_load(&a.owned), 1);
	assert_false(page_test(p, PG_waiters));	/* no one else waits */
	atomic_store(&a.release, 1);
	tu_join(a.t);
	/* Its unlock found PG_waiters clear: no lookup. */
	assert_int_equal(pc__pagewait_lookups(&pw), l0 + 1);
	assert_int_equal(flags_of(p), 0);
}

static void test_no_waiters_bit(void **state)
{
	struct pc_page *p = &pages[3];

	(void)state;
	assert_false(pw.waiters_bit);
	for (int i = 0; i < 100; i++) {
		pc__lock_page(&pw, p);
		pc__unlock_page(&pw, p);
	}
	assert_int_equal(pc__pagewait_lookups(&pw), 100);
	page_set(p, PG_writeback);
	pc__end_page_writeback_bit(&pw, p);
	assert_int_equal(pc__pagewait_lookups(&pw), 101);
	assert_int_equal(pc__pagewait_wakeups(&pw), 0);
	assert_int_equal(flags_of(p), 0);
}

/* ------------------------------------------------------------------ */
/* Hand-off: the queued waiter gets the lock, not a later trylock.      */

static void test_handoff(void **state)
{
	struct pc_page *p = &pages[11];
	struct lk_arg ex = { .p = p, .exclusive = true };
	struct lk_arg sh = { .p = p, .exclusive = false };

	(void)state;
	pc__lock_page(&pw, p);
	assert_int_equal(pthread_create(&ex.t, NULL, lk_thread, &ex), 0);
	wait_for_waiter(p);
	assert_int_equal(pthread_create(&sh.t, NULL, lk_thread, &sh), 0);
	wait_for_two(busy_queue());
	assert_int_equal(atomic_load(&ex.owned), 0);
	assert_int_equal(atomic_load(&sh.returned), 0);

	pc__unlock_page(&pw, p);
	/* The exclusive waiter owns it from the moment unlock returns. */
	assert_true(page_test(p, PG_locked));
	assert_false(pc__trylock_page(p));
	while (!atomic_load(&ex.owned))
		sleep_ms(1);
	assert_int_equal(atomic_load(&ex.owned), 1);
	/* The shared waiter returns without the lock (it was unlocked). */
	tu_join(sh.t);
	assert_true(page_test(p, PG_locked));
	assert_false(pc__trylock_page(p));
	atomic_store(&ex.release, 1);
	tu_join(ex.t);
	assert_int_equal(flags_of(p), 0);
	assert_true(pc__trylock_page(p));
	pc__unlock_page(&pw, p);
}

/* A line of exclusive waiters: each unlock hands off to exactly one. */
static void test_handoff_chain(void **state)
{
	enum { N = 5 };
	struct pc_page *p = &pages[12];
	struct lk_arg a[N];

	(void)state;
	pc__lock_page(&pw, p);
	for (int i = 0; i < N; i++) {
		a[i] = (struct lk_arg){ .p = p, .exclusive = true };
		assert_int_equal(pthread_create(&a[i].t, NULL, lk_thread, &a[i]), 0);
	}
	wait_for_waiter(p);
	sleep_ms(100);	/* the others most likely queued; if not, they will */
	pc__unlock_page(&pw, p);
	for (int round = 0; round < N; round++) {
		int owner = -1, nr = 0;

		/* Exactly one owner at a time, and the lock is never free. */
		for (int spin = 0; spin < 20000 && owner < 0; spin++) {
			for (int i = 0; i < N; i++)
				if (atomic_load(&a[i].owned) == 1 &&
				    !atomic_load(&a[i].release))
					owner = i;
			if (owner < 0)
				sleep_ms(1);
		}
		assert_true(owner >= 0);
		for (int i = 0; i < N; i++)
			nr += atomic_load(&a[i].owned) == 1 &&
			      !atomic_load(&a[i].release);
		assert_int_equal(nr, 1);
		assert_true(page_test(p, PG_locked));
		atomic_store(&a[owner].release, 1);
		tu_join(a[owner].t);
	}
	assert_int_equal(flags_of(p), 0);
}

/* ------------------------------------------------------------------ */
/* Pages sharing a queue.                                               */

/*
 * Which queue does @p hash to?  Ask the implementation: with the waiters
 * bit off, an unlock searches exactly its page's queue once.
 */
static int queue_of(struct pc_page *p)
{
	uint64_t before[PC_NR_WAITQ];
	int found = -1;

	assert_false(pw.waiters_bit);
	for (unsigned i = 0; i < PC_NR_WAITQ; i++)
		before[i] = atomic_load(&pw.q[i].lookups);
	assert_true(pc__trylock_page(p));
	pc__unlock_page(&pw, p);
	for (unsigned i = 0; i < PC_NR_WAITQ; i++)
		if (atomic_load(&pw.q[i].lookups) != before[i]) {
			assert_int_equal(found, -1);
			found = (int)i;
		}
	assert_true(found >= 0);
	return found;
}

/* Fill @set with @n pages of one queue (the fullest); returns the queue. */
static int same_queue_pages(struct pc_page **set, unsigned n)
{
	static int qof[NR_PAGES];
	unsigned nr[PC_NR_WAITQ] = { 0 }, k = 0;
	int best = 0;

	for (int i = 0; i < NR_PAGES; i++) {
		qof[i] = queue_of(&pages[i]);
		if (++nr[qof[i]] > nr[best])
			best = qof[i];
	}
	for (int i = 0; i < NR_PAGES && k < n; i++)
		if (qof[i] == best)
			set[k++] = &pages[i];
	assert_int_equal(k, n);
	return best;
}

static void test_shared_queue(void **state)
{
	struct pc_page *set[3];
	struct lk_arg a = { .exclusive = true }, b = { .exclusive = true };
	struct wb_arg c;
	_Atomic int started = 0, returned = 0;

	(void)state;
	same_queue_pages(set, 3);
	a.p = set[0];
	b.p = set[1];
	c = (struct wb_arg){ .p = set[1], .started = &started,
			     .returned = &returned };

	/* A waits for page 0's lock, B for page 1's, C for page 1's
	 * writeback: all in one queue. */
	pc__lock_page(&pw, set[0]);
	pc__lock_page(&pw, set[1]);
	page_set(set[1], PG_writeback);
	assert_int_equal(pthread_create(&a.t, NULL, lk_thread, &a), 0);
	assert_int_equal(pthread_create(&c.t, NULL, wb_thread, &c), 0);
	wait_for_waiter(set[0]);
	wait_for_waiter(set[1]);	/* C is queued */
	assert_int_equal(pthread_create(&b.t, NULL, lk_thread, &b), 0);
	sleep_ms(50);	/* B most likely queued; if not, it locks later */

	/* Page 2 shares the queue, no one waits on it. */
	pc__lock_page(&pw, set[2]);
	pc__unlock_page(&pw, set[2]);
	assert_false(page_test(set[2], PG_waiters));

	/* Unlocking page 0 wakes A only; page 1 keeps PG_waiters. */
	pc__unlock_page(&pw, set[0]);
	while (!atomic_load(&a.owned))
		sleep_ms(1);
	assert_false(page_test(set[0], PG_waiters));
	assert_true(page_test(set[1], PG_waiters));
	atomic_store(&a.release, 1);
	tu_join(a.t);
	assert_int_equal(flags_of(set[0]), 0);

	/* Unlocking page 1 hands it to B; C still waits for writeback. */
	pc__unlock_page(&pw, set[1]);
	while (!atomic_load(&b.owned))
		sleep_ms(1);
	assert_true(page_test(set[1], PG_waiters));
	assert_int_equal(atomic_load(&returned), 0);
	atomic_store(&b.release, 1);
	tu_join(b.t);
	assert_true(page_test(set[1], PG_waiters));	/* C is still there */
	pc__end_page_writeback_bit(&pw, set[1]);
	tu_join(c.t);
	assert_int_equal(returned, 1);
	assert_int_equal(flags_of(set[1]), 0);
}

/* The stress test again, on 16 pages that all share one queue. */
static void test_shared_queue_stress(void **state)
{
	struct pc_page *set[MX_PAGES * 4];
	bool bit = pw.waiters_bit;

	(void)state;
	/* Find the pages with the bit off (queue_of needs it), then run
	 * with the waiters bit on: the case where sharing matters. */
	same_queue_pages(set, MX_PAGES * 4);
	assert_false(bit);
	pc__pagewait_fini(&pw);
	pc__pagewait_init(&pw, true);
	run_mutex("shared_queue_stress", set, MX_PAGES * 4);
}

/* ------------------------------------------------------------------ */
/* Writeback and lock on many pages at once: no wake-up lost.           */

#define WB_PAGES 64
#define WB_ROUNDS 300

struct wbs_arg {
	pthread_t t;
	uint64_t seed;
	_Atomic int *round;	/* round being waited on */
	_Atomic int *waited;	/* waiters done with the round */
	_Atomic unsigned *bad;
};

static void *wbs_thread(void *arg)
{
	struct wbs_arg *a = arg;
	uint64_t r = a->seed;

	for (int round = 0; round < WB_ROUNDS; round++) {
		while (atomic_load(a->round) < round)
			sched_yield();
		for (int k = 0; k < 4; k++) {
			struct pc_page *p = &pages[tu_rand(&r) % WB_PAGES];

			pc__wait_on_page_bit(&pw, p, PG_writeback);
			/* The next round starts after all of us are done. */
			if (page_test(p, PG_writeback))
				atomic_fetch_add(a->bad, 1);
		}
		atomic_fetch_add(a->waited, 1);
	}
	return NULL;
}

static void test_writeback_stress(void **state)
{
	enum { N = 6 };
	struct wbs_arg a[N];
	_Atomic int round = -1, waited = 0;
	_Atomic unsigned bad = 0;
	uint64_t seed = tu_seed("writeback_stress");

	(void)state;
	for (int i = 0; i < N; i++) {
		a[i] = (struct wbs_arg){ .seed = seed ^ (uint64_t)(i + 1) *
						 0x9E3779B97F4A7C15ull,
					 .round = &round, .waited = &waited,
					 .bad = &bad };
		assert_int_equal(pthread_create(&a[i].t, NULL, wbs_thread, &a[i]), 0);
	}
	for (int r = 0; r < WB_ROUNDS; r++) {
		for (int i = 0; i < WB_PAGES; i++)
			page_set(&pages[i], PG_writeback);
		atomic_store(&round, r);
		if (r % 2)
			sched_yield();
		/* End writeback page by page while the waiters come in; if
		 * one wake-up were lost the waiters would never finish. */
		for (int i = 0; i < WB_PAGES; i++)
			pc__end_page_writeback_bit(&pw, &pages[i]);
		while (atomic_load(&waited) < (r + 1) * N)
			sched_yield();
	}
	for (int i = 0; i < N; i++)
		pthread_join(a[i].t, NULL);
	tu_check_threads();
	assert_int_equal(bad, 0);
	for (int i = 0; i < WB_PAGES; i++)
		assert_int_equal(flags_of(&pages[i]), 0);
}

/* ------------------------------------------------------------------ */
/* A pagewait shared between processes (pc__pagewait_init_shared).      */

#define XP_PAGES 4
#define XP_OPS 3000
/* TSan sees one process's synchronization only: a lock handed over by
 * another process would look to it like a race.  It runs one. */
#ifdef PC_TSAN
static const unsigned xp_processes = 1;
#else
static const unsigned xp_processes = 3;
#endif

struct xp {				/* all of it in the shared region */
	struct pc_pagewait w;
	struct pc_page page[XP_PAGES + 1];	/* the last: the writeback case */
	uint64_t count[XP_PAGES];	/* each under its page's lock */
	_Atomic uint64_t overlap;	/* two holders of one page lock seen */
	uint64_t seed;
};

struct xp_arg {
	struct xp *x;
	uint64_t seed;
	pthread_t t;
};

static void *xp_locker(void *arg)
{
	struct xp_arg *a = arg;
	uint64_t rs = a->seed;

	for (int i = 0; i < XP_OPS; i++) {
		unsigned k = (unsigned)(tu_rand(&rs) % XP_PAGES);
		uint64_t v;

		pc__lock_page(&a->x->w, &a->x->page[k]);
		v = a->x->count[k];
		if (i % 7 == 0)
			sched_yield();	/* others queue up meanwhile */
		if (a->x->count[k] != v)
			atomic_fetch_add(&a->x->overlap, 1);
		a->x->count[k] = v + 1;
		pc__unlock_page(&a->x->w, &a->x->page[k]);
	}
	return NULL;
}

/*
 * 3 processes (1 under TSan) x 2 threads take and hand over the locks of
 * 4 pages that live, with the queues and the waiters' records, in one
 * shared region:
 * every increment made under a page lock is there at the end, and no two
 * holders ever overlapped.  Then a process sleeps on PG_writeback of a
 * page another process ends.
 */
static void xp_child(unsigned p, void *arg)
{
	struct xp *x = arg;
	struct xp_arg a[2];

	for (int i = 0; i < 2; i++) {
		a[i].x = x;
		a[i].seed = x->seed + p * 2 + (uint64_t)i;
		pthread_create(&a[i].t, NULL, xp_locker, &a[i]);
	}
	for (int i = 0; i < 2; i++)
		tu_join(a[i].t);
}

static void test_processes(void **state)
{
	uint64_t seed = tu_seed("pagewait processes");
	struct pc_shm *s;
	int sfd;
	struct xp *x;
	void *pool;
	pid_t pid[1];
	uint64_t sum = 0;
	int status;

	(void)state;
	assert_int_equal(pc__shm_create(&s, &sfd, NULL, 16 << 20, 1), 0);
	x = pc__shm_alloc(s, sizeof(*x));
	pool = pc__shm_alloc(s, 8 * pc__pagewait_waiter_size());
	assert_non_null(x);
	assert_non_null(pool);
	pc__pagewait_init_shared(&x->w, true, pool, 8, pc__shm_broken_flag(s));
	x->seed = seed;
	tu_in_children(xp_processes, xp_child, x);
	for (int k = 0; k < XP_PAGES; k++) {
		sum += x->count[k];
		assert_int_equal(flags_of(&x->page[k]), 0);
	}
	assert_int_equal(sum, xp_processes * 2 * XP_OPS);
	assert_int_equal(atomic_load(&x->overlap), 0);
	printf("cross-process wake-ups: %" PRIu64 "\n",
	       pc__pagewait_wakeups(&x->w));

	/* PG_writeback set here, waited for in a child, ended here. */
	page_set(&x->page[XP_PAGES], PG_writeback);
	fflush(stdout);
	pid[0] = fork();
	assert_true(pid[0] >= 0);
	if (pid[0] == 0) {
		pc__wait_on_page_bit(&x->w, &x->page[XP_PAGES], PG_writeback);
		_exit(page_test(&x->page[XP_PAGES], PG_writeback) ? 1 : 0);
	}
	wait_for_waiter(&x->page[XP_PAGES]);
	pc__end_page_writeback_bit(&x->w, &x->page[XP_PAGES]);
	assert_int_equal(waitpid(pid[0], &status, 0), pid[0]);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(pc__shm_broken(s));
	pc__shm_detach(s, sfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lock_unlock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiters_bit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_waiters_bit, setup_nobit, teardown),
		cmocka_unit_test_setup_teardown(test_handoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handoff_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writeback_waiters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writeback_stress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mutex, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mutex, setup_nobit, teardown),
		cmocka_unit_test_setup_teardown(test_shared_queue, setup_nobit, teardown),
		cmocka_unit_test_setup_teardown(test_shared_queue_stress, setup_nobit, teardown),
		cmocka_unit_test(test_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
