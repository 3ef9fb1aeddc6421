/*
 * test_ebr.c - epoch-based reclamation across processes (src/ebr.c).
 *
 * The domain lives in a shared region (src/shm.c), as a shared cache's
 * will.  What is checked:
 *   - with no reader, a retired object is freed by the next reclaim;
 *   - a reader in a section in another process holds back the free of
 *     what was retired meanwhile, however often reclaim runs, and lets it
 *     go when it leaves; what was retired after it entered and before it
 *     left is freed only then, never earlier;
 *   - a reader killed inside a section holds nothing back once reaped:
 *     reclaim reaps the slot that blocks it when its process is gone;
 *   - a forked child reads with a slot of its own, not its parent's;
 *   - nested sections, the barrier, a thread's slot given back at exit;
 *   - a thread that exits after the domain's fini and unmap leaves it
 *     alone (the domain's part in the process, ebr.h, says it is gone);
 *   - 3 processes x (2 readers + 1 writer) on a shared table of objects:
 *     a reader never sees an object freed (the free function poisons it
 *     before the region reuses it).
 * Children report through pipes; no test waits on time.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ebr.h"
#include "shm.h"
#include "util.h"

#define MIB (1ull << 20)

struct obj {
	struct pc_ebr_head ebr;
	_Atomic uint64_t magic;
	uint64_t value;
};

#define LIVE_MAGIC 0x4c4956454c495645ull
#define DEAD_MAGIC 0xdeaddeaddeaddeadull

struct world {
	struct pc_ebr ebr;
	struct pc_lock lock;			/* the table's writers */
	_Atomic(struct obj *) table[64];
	_Atomic uint64_t freed;
	_Atomic uint64_t bad_reads;
};

static struct pc_shm *shm;
static int shm_fd = -1;

static struct world *world_new(void)
{
	struct world *w;

	assert_int_equal(pc__shm_create(&shm, &shm_fd, NULL, 64 * MIB, 1), 0);
	w = pc__shm_alloc(shm, sizeof(*w));
	assert_non_null(w);
	assert_int_equal(pc__ebr_init(&w->ebr), 0);
	pc__lock_init_shared(&w->lock, PC_RANK_TREE, NULL);
	return w;
}

static void world_free(struct world *w)
{
	pc__ebr_fini(&w->ebr);
	pc__shm_detach(shm, shm_fd);
	shm = NULL;
	shm_fd = -1;
}

static struct obj *obj_new(uint64_t v)
{
	struct obj *o = pc__shm_alloc(shm, sizeof(*o));

	assert_non_null(o);
	atomic_store(&o->magic, LIVE_MAGIC);
	o->value = v;
	return o;
}

/* The free function: poison, count, give back to the region. */
static void obj_free(struct pc_ebr_head *h, void *arg)
{
	struct world *w = arg;
	struct obj *o = (struct obj *)h;

	atomic_store(&o->magic, DEAD_MAGIC);
	atomic_fetch_add(&w->freed, 1);
	pc__shm_free(shm, o, sizeof(*o));
}

/* ------------------------------------------------------------------ */
/* A reader in a child process, driven through pipes.                    */

struct reader {
	pid_t pid;
	int cmd, ack;		/* parent's ends */
};

/* Child: 'e' enter, 'l' leave, 'q' exit; each acknowledged with a byte. */
static void reader_loop(struct world *w, int cmd, int ack)
{
	char c;

	while (read(cmd, &c, 1) == 1) {
		if (c == 'e')
			pc__ebr_read_lock(&w->ebr);
		else if (c == 'l')
			pc__ebr_read_unlock(&w->ebr);
		else
			_exit(0);
		(void)!write(ack, &c, 1);
	}
	_exit(0);
}

static struct reader reader_start(struct world *w)
{
	struct reader r;
	int c[2], a[2];

	assert_int_equal(pipe(c), 0);
	assert_int_equal(pipe(a), 0);
	fflush(stdout);
	r.pid = fork();
	assert_true(r.pid >= 0);
	if (r.pid == 0) {
		close(c[1]);
		close(a[0]);
		reader_loop(w, c[0], a[1]);
	}
	close(c[0]);
	close(a[1]);
	r.cmd = c[1];
	r.ack = a[0];
	return r;
}

static void reader_do(struct reader *r, char c)
{
	char got;

	assert_int_equal(write(r->cmd, &c, 1), 1);
	assert_int_equal(read(r->ack, &got, 1), 1);
	assert_int_equal(got, c);
}

static void reader_end(struct reader *r, bool kill9)
{
	int status;

	if (kill9)
		kill(r->pid, SIGKILL);
	else
		assert_int_equal(write(r->cmd, "q", 1), 1);
	assert_int_equal(waitpid(r->pid, &status, 0), r->pid);
	close(r->cmd);
	close(r->ack);
}

static uint64_t reclaim(struct world *w)
{
	return pc__ebr_reclaim(&w->ebr, obj_free, w);
}

/* ------------------------------------------------------------------ */

static void test_no_reader(void **state)
{
	struct world *w = world_new();

	(void)state;
	printf("readers fence: %s\n", w->ebr.membarrier ? "no (membarrier)" :
	       "yes (no membarrier)");
	assert_int_equal(reclaim(w), 0);	/* nothing retired */
	pc__ebr_retire(&w->ebr, &obj_new(1)->ebr);
	pc__ebr_retire(&w->ebr, &obj_new(2)->ebr);
	assert_int_equal(reclaim(w), 2);
	assert_int_equal(atomic_load(&w->freed), 2);
	/* Our own section (nested) holds the free back. */
	pc__ebr_read_lock(&w->ebr);
	pc__ebr_read_lock(&w->ebr);
	pc__ebr_retire(&w->ebr, &obj_new(3)->ebr);
	pc__ebr_read_unlock(&w->ebr);
	for (int i = 0; i < 10; i++)
		assert_int_equal(reclaim(w), 0);
	pc__ebr_read_unlock(&w->ebr);
	assert_int_equal(reclaim(w), 1);
	world_free(w);
}

static void test_reader_in_other_process(void **state)
{
	struct world *w = world_new();
	struct reader r = reader_start(w);

	(void)state;
	reader_do(&r, 'e');
	pc__ebr_retire(&w->ebr, &obj_new(1)->ebr);
	for (int i = 0; i < 20; i++)
		assert_int_equal(reclaim(w), 0);
	reader_do(&r, 'l');
	assert_int_equal(reclaim(w), 1);

	/* Retired while a reader entered after it: that reader cannot see
	 * it, but the epoch waits for the reader all the same; once it
	 * leaves, both go. */
	pc__ebr_retire(&w->ebr, &obj_new(2)->ebr);
	reader_do(&r, 'e');
	pc__ebr_retire(&w->ebr, &obj_new(3)->ebr);
	assert_true(reclaim(w) <= 1);
	assert_true(atomic_load(&w->freed) <= 2);
	reader_do(&r, 'l');
	reclaim(w);
	assert_int_equal(atomic_load(&w->freed), 3);
	reader_end(&r, false);
	world_free(w);
}

static void test_reader_killed(void **state)
{
	struct world *w = world_new();
	struct reader r = reader_start(w);
	uint64_t n = 0;

	(void)state;
	reader_do(&r, 'e');
	pc__ebr_retire(&w->ebr, &obj_new(1)->ebr);
	assert_int_equal(reclaim(w), 0);
	assert_int_equal(pc__ebr_reap(&w->ebr, 0), 0);	/* alive: kept */
	reader_end(&r, true);
	/* The first reclaim finds the dead blocker and reaps it. */
	for (int i = 0; i < 3 && !n; i++)
		n = reclaim(w);
	assert_int_equal(n, 1);
	assert_int_equal(atomic_load(&w->ebr.nr_reaped), 1);
	world_free(w);
}

static void fork_child_slot(void *arg)
{
	struct world *w = arg;
	struct pc_ebr_slot *parent = pc__ebr_tls[0].slot;

	pc__ebr_read_lock(&w->ebr);
	assert_true(pc__ebr_tls[0].slot != parent);
	assert_int_equal(atomic_load(&pc__ebr_tls[0].slot->pid), getpid());
	pc__ebr_read_unlock(&w->ebr);
}

static void test_fork_own_slot(void **state)
{
	struct world *w = world_new();

	(void)state;
	pc__ebr_read_lock(&w->ebr);
	pc__ebr_read_unlock(&w->ebr);
	assert_int_equal(atomic_load(&pc__ebr_tls[0].slot->pid), getpid());
	tu_in_child(fork_child_slot, w);
	pc__ebr_thread_leave(&w->ebr);
	world_free(w);
}

static void *reader_thread_once(void *arg)
{
	struct world *w = arg;

	pc__ebr_read_lock(&w->ebr);
	pc__ebr_read_unlock(&w->ebr);
	return NULL;
}

static void test_barrier_and_exit(void **state)
{
	struct world *w = world_new();
	pthread_t t;
	int claimed = 0;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, reader_thread_once, w), 0);
	tu_join(t);
	/* The thread's slot went back at its exit. */
	for (int i = 0; i < PC_EBR_SLOTS; i++)
		claimed += atomic_load(&w->ebr.slot[i].pid) != 0;
	assert_int_equal(claimed, 0);
	for (int i = 0; i < 100; i++)
		pc__ebr_retire(&w->ebr, &obj_new((uint64_t)i)->ebr);
	assert_int_equal(pc__ebr_barrier(&w->ebr, obj_free, w), 100);
	assert_int_equal(atomic_load(&w->freed), 100);
	world_free(w);
}

/*
 * A thread that exits after its process is done with a domain (fini, the
 * region unmapped) leaves the domain's memory alone: the domain's part
 * in this process (ebr.h, as local.c keeps one per cache) says it is gone.
 * With the part's word not cleared the exit would store into the
 * unmapped slot and fault.
 */
static struct pc_ebr_local part;
static const struct pc_ebr *part_of;

static struct pc_ebr_local *part_hook(const struct pc_ebr *e)
{
	return e == part_of ? &part : NULL;
}

struct exiter {
	struct world *w;
	int ready[2], go[2];
};

static void *reader_exits_late(void *arg)
{
	struct exiter *x = arg;
	char c = 'r';

	pc__ebr_read_lock(&x->w->ebr);
	pc__ebr_read_unlock(&x->w->ebr);
	if (write(x->ready[1], &c, 1) != 1 || read(x->go[0], &c, 1) != 1)
		abort();
	return NULL;
}

static void test_exit_after_fini(void **state)
{
	pc_ebr_local_fn old = atomic_load(&pc__ebr_local_hook);
	struct exiter x = { .w = world_new() };
	pthread_t t;
	char c = 'g';

	(void)state;
	part_of = &x.w->ebr;
	atomic_store(&pc__ebr_local_hook, part_hook);
	assert_int_equal(pipe(x.ready), 0);
	assert_int_equal(pipe(x.go), 0);
	assert_int_equal(pthread_create(&t, NULL, reader_exits_late, &x), 0);
	assert_int_equal(read(x.ready[0], &c, 1), 1);
	assert_true(atomic_load(&part.id) == x.w->ebr.id);	/* touched */
	world_free(x.w);			/* fini, then unmapped */
	assert_true(atomic_load(&part.id) == 0);
	assert_int_equal(write(x.go[1], &c, 1), 1);
	tu_join(t);				/* its exit: no fault */
	atomic_store(&pc__ebr_local_hook, old);
	part_of = NULL;
	for (int i = 0; i < 2; i++) {
		close(x.ready[i]);
		close(x.go[i]);
	}
}

/* ------------------------------------------------------------------ */
/* Stress: readers and writers in 3 processes.                           */

#define STRESS_READS 200000
#define STRESS_WRITES 20000

struct sarg {
	struct world *w;
	uint64_t seed;
};

static void *stress_reader(void *arg)
{
	struct sarg *a = arg;
	uint64_t rs = a->seed;

	for (int i = 0; i < STRESS_READS; i++) {
		unsigned k = (unsigned)(tu_rand(&rs) % 64);
		struct obj *o;

		pc__ebr_read_lock(&a->w->ebr);
		o = atomic_load_explicit(&a->w->table[k], memory_order_acquire);
		/* Look at it for a while: a free too early shows here. */
		for (int j = 0; o && j < 32; j++)
			if (atomic_load(&o->magic) != LIVE_MAGIC ||
			    o->value % 64 != k) {
				atomic_fetch_add(&a->w->bad_reads, 1);
				break;
			}
		pc__ebr_read_unlock(&a->w->ebr);
	}
	return NULL;
}

static void *stress_writer(void *arg)
{
	struct sarg *a = arg;
	uint64_t rs = a->seed;

	for (int i = 0; i < STRESS_WRITES; i++) {
		unsigned k = (unsigned)(tu_rand(&rs) % 64);
		struct obj *n = obj_new(k + 64 * (tu_rand(&rs) % 1000)), *old;

		pc__lock(&a->w->lock);
		old = atomic_exchange(&a->w->table[k], n);
		pc__unlock(&a->w->lock);
		if (old)
			pc__ebr_retire(&a->w->ebr, &old->ebr);
		if (i % 4 == 0)
			reclaim(a->w);
	}
	return NULL;
}

static void stress_process(struct world *w, uint64_t seed)
{
	struct sarg a[3];
	pthread_t t[3];

	for (int i = 0; i < 3; i++) {
		a[i].w = w;
		a[i].seed = seed * 3 + (uint64_t)i + 1;
		assert_int_equal(pthread_create(&t[i], NULL,
						i ? stress_reader : stress_writer,
						&a[i]), 0);
	}
	for (int i = 0; i < 3; i++)
		tu_join(t[i]);
}

static uint64_t stress_seed;
/*
 * Under TSan one process: TSan sees the synchronization of one process
 * only, so a node freed by a reclaimer in another process (after that
 * process read this one's slot) looks to it like a race with this one's
 * reader.  The other builds run three.
 */
#ifdef PC_TSAN
static const unsigned stress_processes = 1;
#else
static const unsigned stress_processes = 3;
#endif

static void stress_child(unsigned i, void *w)
{
	stress_process(w, stress_seed + i);
}

static void test_stress(void **state)
{
	uint64_t seed = tu_seed("ebr stress");
	struct world *w = world_new();
	uint64_t in_table = 0;

	(void)state;
	stress_seed = seed;
	tu_in_children(stress_processes, stress_child, w);
	assert_int_equal(atomic_load(&w->bad_reads), 0);
	pc__ebr_barrier(&w->ebr, obj_free, w);
	/* Every object replaced was freed, none twice: all written but
	 * those still in the table. */
	for (int k = 0; k < 64; k++)
		in_table += atomic_load(&w->table[k]) != NULL;
	assert_int_equal(atomic_load(&w->freed),
			 stress_processes * STRESS_WRITES - in_table);
	assert_int_equal(atomic_load(&w->ebr.nr_retired),
			 atomic_load(&w->ebr.nr_freed));
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_reader),
		cmocka_unit_test(test_reader_in_other_process),
		cmocka_unit_test(test_reader_killed),
		cmocka_unit_test(test_fork_own_slot),
		cmocka_unit_test(test_barrier_and_exit),
		cmocka_unit_test(test_exit_after_fini),
		cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
