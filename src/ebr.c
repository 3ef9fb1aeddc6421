/*
 * ebr.c - epoch-based reclamation across processes (ebr.h).
 *
 * What it owns: a domain (struct pc_ebr, in memory shared between the
 * processes that read it), its reader slots and its list of retired
 * objects; per thread, the table pc__ebr_tls of the slots it holds.  It
 * keeps no table of the domains a process may touch: each domain's part
 * in this process (struct pc_ebr_local: may it still be touched here?)
 * is its caller's, found through pc__ebr_local_hook (local.c keeps it in
 * the process's entry for the cache, ebr.h).
 *
 * The epoch.  e->epoch starts at 1 and only grows.  A reader entering a
 * section stores the epoch it saw in its slot and clears the slot when it
 * leaves.  The epoch moves from g to g + 1 only when no slot holds an
 * epoch other than g (try_advance): every reader in a section then
 * entered at g.  An object retired while the epoch was t was unlinked
 * before the retire, so only readers that entered at t or earlier can
 * hold it; once the epoch is t + 2 it has moved past t + 1, which needed
 * every reader to have entered at t + 1, after the unlink: none of them
 * can reach the object, and it is freed.
 *
 *   epoch:        t            t + 1           t + 2
 *   retire(x) ────┤                              ├──── free(x)
 *   readers:  [ at t ... ] left        [ at t+1 ]  (cannot see x)
 *
 * The fence.  A reader's store to its slot must be seen by the scan, or
 * else its later loads must see the unlink.  Either the reader fences
 * after its store (t->fence), or the writer fences every thread of every
 * joined process between the unlink and the scan: membarrier(2)'s
 * MEMBARRIER_CMD_GLOBAL_EXPEDITED, for which each process registers once
 * (self_info).  A process that cannot register has its threads fence
 * themselves (the slot's store is then an exchange, a full barrier); the
 * writer fences too (a locked RMW), so both sides hold.  TSan builds
 * always fence on the reader's side: TSan does not see membarrier.
 *
 * Slots.  A thread claims a free slot of a domain by compare-and-swap of
 * its pid (0: free) the first time it reads that domain, and gives it
 * back at thread exit (a pthread key destructor, which touches only
 * domains whose part here still has their id: pc__ebr_fini clears it
 * before the domain's memory goes) or pc__ebr_thread_leave.  A process's death
 * gives nothing back: its slots stay claimed, perhaps inside a section,
 * until reaped (pc__ebr_reap): a slot whose pid is gone, or now belongs
 * to a process started at another time, is cleared.  A live process is
 * never reaped, so a reaped slot can hide no reader.  A slot records its
 * owner by the process's one identity (proc.h: pid, start time, image);
 * an exec keeps the pid and the start time but not the image, so the
 * process, entering a cache after an exec, clears the slots of its pid
 * that another image claimed (pc__ebr_reap_image).  After fork the
 * child's thread has none of the parent's slots (fork_child clears its
 * table; a fork inside a read section is a bug).
 *
 * Locks: e->lock (rank EBR, shared and robust; each update is one store
 * that keeps the list whole, so a holder's death needs no repair) guards
 * limbo and nr_limbo, and the epoch's advance (the epoch is atomic: read
 * without it).  Slots are atomics, and so is a part's id.
 */
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ebr.h"
#include "proc.h"

#ifdef PC_TSAN
static const bool tsan = true;
#else
static const bool tsan = false;
#endif

__thread struct pc_ebr_tls pc__ebr_tls[PC_EBR_TLS]
	__attribute__((tls_model("initial-exec")));

_Atomic(pc_ebr_local_fn) pc__ebr_local_hook;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;		/* set once: a thread holds slots */

/* Whether this process is registered for MEMBARRIER_CMD_GLOBAL_EXPEDITED,
 * for the pid registered_pid (0: not yet asked; a fork child asks again).
 * Registering twice does no harm, so two first readers may both ask:
 * the answer is stored before the pid it is for (release). */
static _Atomic pid_t registered_pid;
static _Atomic bool registered;

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

/* This process (proc.h), and whether membarrier fences its threads. */
static void self_info(struct pc_proc_id *me, bool *reg)
{
	pc__proc_self(me);
	if (atomic_load_explicit(&registered_pid, memory_order_acquire) !=
	    me->pid) {
		atomic_store(&registered, membarrier(
			MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0);
		atomic_store_explicit(&registered_pid, me->pid,
				      memory_order_release);
	}
	*reg = atomic_load(&registered);
}

/* @e's part in this process (ebr.h), or NULL: it has none. */
static struct pc_ebr_local *local_of(const struct pc_ebr *e)
{
	pc_ebr_local_fn fn = atomic_load(&pc__ebr_local_hook);

	return fn ? fn(e) : NULL;
}

/* May @t's slot still be touched: its domain still mapped here? */
static bool tls_live(const struct pc_ebr_tls *t)
{
	return t->e && (!t->local || atomic_load(&t->local->id) == t->id);
}

/*
 * Give a slot back: out of any section, then no owner.  The start time is
 * cleared before the pid, so a reaper that sees an owner with no start
 * time takes it for alive (process_alive) and never reaps a claim in
 * progress.
 */
static void slot_release(struct pc_ebr_slot *s)
{
	atomic_store_explicit(&s->epoch, 0, memory_order_release);
	atomic_store_explicit(&s->start, 0, memory_order_release);
	atomic_store_explicit(&s->image, 0, memory_order_release);
	atomic_store_explicit(&s->pid, 0, memory_order_release);
}

/* Thread exit: give back the slots of the domains still mapped here. */
static void thread_exit(void *unused)
{
	(void)unused;
	for (int i = 0; i < PC_EBR_TLS; i++) {
		struct pc_ebr_tls *t = &pc__ebr_tls[i];

		if (tls_live(t))
			slot_release(t->slot);
		memset(t, 0, sizeof(*t));
	}
}

static void fork_child(void)
{
	/* The parent's slots stay the parent's. */
	memset(pc__ebr_tls, 0, sizeof(pc__ebr_tls));
}

static void init_once(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(NULL, NULL, fork_child);
}

int pc__ebr_init(struct pc_ebr *e)
{
	struct pc_proc_id me;
	bool reg;

	pthread_once(&once, init_once);
	self_info(&me, &reg);
	atomic_store(&e->epoch, 1);
	e->id = ((uint64_t)me.pid << 32 | (uint64_t)pc__now_ns()) ^
		(uint64_t)(uintptr_t)e;
	e->membarrier = reg && !tsan;
	pc__lock_init_shared(&e->lock, PC_RANK_EBR, NULL);
	return 0;
}

/* A free slot, claimed for this thread; spins (reaping) while none is. */
static struct pc_ebr_slot *slot_claim(struct pc_ebr *e,
				      const struct pc_proc_id *me)
{
	for (;;) {
		for (int i = 0; i < PC_EBR_SLOTS; i++) {
			struct pc_ebr_slot *s = &e->slot[i];
			int32_t zero = 0;

			if (atomic_load_explicit(&s->pid,
						 memory_order_relaxed) != 0)
				continue;
			if (!atomic_compare_exchange_strong(&s->pid, &zero,
							    (int32_t)me->pid))
				continue;
			s->tid = (int32_t)gettid();
			atomic_store(&s->image, me->image);
			atomic_store(&s->start, me->start);
			atomic_store(&s->epoch, 0);
			return s;
		}
		/* Every slot taken: some may be of dead processes. */
		if (!pc__ebr_reap(e, 0)) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
	}
}

struct pc_ebr_tls *pc__ebr_tls_slow(struct pc_ebr *e)
{
	struct pc_ebr_tls tmp, *t;
	struct pc_proc_id me;
	bool reg;
	int i, victim = -1;

	for (i = 1; i < PC_EBR_TLS; i++)
		if (pc__ebr_tls[i].e == e && pc__ebr_tls[i].id == e->id)
			goto front;
	/* Not held: take an unused entry, or one not in a section. */
	for (i = PC_EBR_TLS - 1; i >= 0; i--) {
		if (!pc__ebr_tls[i].e) {
			victim = i;
			break;
		}
		if (victim < 0 && pc__ebr_tls[i].depth == 0)
			victim = i;
	}
	if (victim < 0) {
		fprintf(stderr, "pagecache: a thread reads more than %d "
			"shared domains at once\n", PC_EBR_TLS);
		abort();
	}
	t = &pc__ebr_tls[victim];
	if (tls_live(t))
		slot_release(t->slot);
	pthread_once(&once, init_once);
	pthread_setspecific(exit_key, (void *)1);
	self_info(&me, &reg);
	t->slot = slot_claim(e, &me);
	t->e = e;
	t->id = e->id;
	t->local = local_of(e);
	if (t->local)	/* may be touched here until pc__ebr_fini */
		atomic_store(&t->local->id, e->id);
	t->depth = 0;
	t->fence = !(e->membarrier && reg);
	i = victim;
front:
	if (i != 0) {
		tmp = pc__ebr_tls[0];
		pc__ebr_tls[0] = pc__ebr_tls[i];
		pc__ebr_tls[i] = tmp;
	}
	return &pc__ebr_tls[0];
}

void pc__ebr_fini(struct pc_ebr *e)
{
	struct pc_ebr_local *l = local_of(e);

	pc__ebr_thread_leave(e);
	if (l)	/* other threads' exits leave @e alone from now on */
		atomic_store(&l->id, 0);
}

void pc__ebr_thread_leave(struct pc_ebr *e)
{
	for (int i = 0; i < PC_EBR_TLS; i++) {
		struct pc_ebr_tls *t = &pc__ebr_tls[i];

		if (t->e == e && t->id == e->id) {
			PC_ASSERT(t->depth == 0);
			slot_release(t->slot);
			memset(t, 0, sizeof(*t));
		}
	}
}

/*
 * Move the epoch on by one if every reader in a section entered at the
 * current epoch.  @blocker: the slot that kept it, when one did.  Lock held.
 */
static bool try_advance_locked(struct pc_ebr *e, struct pc_ebr_slot **blocker)
{
	uint64_t g = atomic_load(&e->epoch);

	PC_ASSERT_HELD(&e->lock);
	if (e->membarrier)
		membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
	/* A full barrier of ours between the caller's unlink and the scan
	 * (a locked RMW; atomic_thread_fence is not TSan's). */
	atomic_fetch_add_explicit(&e->epoch, 0, memory_order_seq_cst);
	for (int i = 0; i < PC_EBR_SLOTS; i++) {
		struct pc_ebr_slot *s = &e->slot[i];
		uint64_t v;

		if (atomic_load_explicit(&s->pid, memory_order_acquire) == 0)
			continue;
		v = atomic_load_explicit(&s->epoch, memory_order_acquire);
		if (v && v != g) {
			*blocker = s;
			return false;
		}
	}
	atomic_store(&e->epoch, g + 1);
	return true;
}

void pc__ebr_retire(struct pc_ebr *e, struct pc_ebr_head *h)
{
	pc__lock(&e->lock);
	h->epoch = atomic_load(&e->epoch);
	h->next = e->limbo;
	e->limbo = h;
	atomic_fetch_add_explicit(&e->nr_limbo, 1, memory_order_relaxed);
	pc__unlock(&e->lock);
	atomic_fetch_add_explicit(&e->nr_retired, 1, memory_order_relaxed);
}

/* Unlink from limbo what the epoch lets go; lock held. */
static struct pc_ebr_head *take_safe_locked(struct pc_ebr *e)
{
	uint64_t g = atomic_load(&e->epoch);
	struct pc_ebr_head *safe = NULL, **pp = &e->limbo;

	PC_ASSERT_HELD(&e->lock);
	while (*pp) {
		struct pc_ebr_head *h = *pp;

		if (h->epoch + 2 <= g) {
			*pp = h->next;
			h->next = safe;
			safe = h;
			atomic_fetch_sub_explicit(&e->nr_limbo, 1,
						  memory_order_relaxed);
		} else {
			pp = &h->next;
		}
	}
	return safe;
}

static uint64_t free_list(struct pc_ebr *e, struct pc_ebr_head *h,
			  void (*fn)(struct pc_ebr_head *, void *), void *arg)
{
	uint64_t n = 0;

	while (h) {
		struct pc_ebr_head *next = h->next;

		fn(h, arg);
		h = next;
		n++;
	}
	atomic_fetch_add_explicit(&e->nr_freed, n, memory_order_relaxed);
	return n;
}

/* A slot that blocked the epoch: reap it if its process is gone. */
static void reap_blocker(struct pc_ebr *e, struct pc_ebr_slot *s)
{
	pid_t pid = atomic_load(&s->pid);

	if (pid > 0 && !pc__process_alive(pid, atomic_load(&s->start)))
		pc__ebr_reap(e, pid);
}

uint64_t pc__ebr_reclaim(struct pc_ebr *e,
			 void (*fn)(struct pc_ebr_head *, void *), void *arg)
{
	struct pc_ebr_slot *blocker = NULL;
	struct pc_ebr_head *safe;

	if (!pc__trylock(&e->lock))
		return 0;
	if (!e->limbo) {
		pc__unlock(&e->lock);
		return 0;
	}
	for (int i = 0; i < 2 && try_advance_locked(e, &blocker); i++)
		;
	safe = take_safe_locked(e);
	pc__unlock(&e->lock);
	if (blocker && !safe)
		reap_blocker(e, blocker);
	return free_list(e, safe, fn, arg);
}

uint64_t pc__ebr_barrier(struct pc_ebr *e,
			 void (*fn)(struct pc_ebr_head *, void *), void *arg)
{
	uint64_t target = atomic_load(&e->epoch) + 2, n = 0;

	for (;;) {
		struct pc_ebr_slot *blocker = NULL;
		struct pc_ebr_head *safe;
		bool done;

		pc__lock(&e->lock);
		while (atomic_load(&e->epoch) < target &&
		       try_advance_locked(e, &blocker))
			;
		done = atomic_load(&e->epoch) >= target;
		safe = take_safe_locked(e);
		pc__unlock(&e->lock);
		n += free_list(e, safe, fn, arg);
		if (done)
			return n;
		if (blocker)
			reap_blocker(e, blocker);
		{
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

/*
 * Clear every slot @gone says has no reader left (given the slot's pid,
 * loaded), holding it (-1: neither free nor anyone's) while it is
 * cleared, so no new claim's epoch is overwritten.
 */
static unsigned reap_slots(struct pc_ebr *e,
			   bool (*gone)(struct pc_ebr_slot *s, pid_t pid,
					const void *arg), const void *arg)
{
	unsigned n = 0;

	for (int i = 0; i < PC_EBR_SLOTS; i++) {
		struct pc_ebr_slot *s = &e->slot[i];
		pid_t pid = atomic_load(&s->pid);

		if (pid <= 0 || !gone(s, pid, arg))
			continue;
		if (!atomic_compare_exchange_strong(&s->pid, &pid, -1))
			continue;
		slot_release(s);
		n++;
	}
	atomic_fetch_add_explicit(&e->nr_reaped, n, memory_order_relaxed);
	return n;
}

/* pc__ebr_reap's: @pid (or only @arg's, if not 0) is not alive. */
static bool pid_gone(struct pc_ebr_slot *s, pid_t pid, const void *arg)
{
	pid_t only = *(const pid_t *)arg;

	return (!only || pid == only) &&
	       !pc__process_alive(pid, atomic_load(&s->start));
}

unsigned pc__ebr_reap(struct pc_ebr *e, pid_t only)
{
	return reap_slots(e, pid_gone, &only);
}

/* pc__ebr_reap_image's: our pid, another image's (image 0: a claim in
 * progress, ours, or given back). */
static bool image_gone(struct pc_ebr_slot *s, pid_t pid, const void *arg)
{
	const struct pc_proc_id *me = arg;
	uint64_t img = atomic_load(&s->image);

	return pid == me->pid && img && img != me->image;
}

unsigned pc__ebr_reap_image(struct pc_ebr *e)
{
	struct pc_proc_id me;

	pc__proc_self(&me);
	return reap_slots(e, image_gone, &me);
}

#ifdef PC_DEBUG
void pc__ebr_test_new_image(void)
{
	memset(pc__ebr_tls, 0, sizeof(pc__ebr_tls));	/* as exec loses it */
	pc__proc_test_new_image();
}
#endif
