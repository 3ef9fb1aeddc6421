/*
 * ebr.h - epoch-based reclamation whose readers may be in any process
 * (ebr.c).  A leaf: it knows nothing of caches or trees.
 *
 * liburcu's grace periods see the readers of one process.  A structure in
 * memory shared between processes (shm.h) that is read without a lock -
 * the radix tree of a shared cache - needs a free to wait for the readers
 * of every process.  A struct pc_ebr lives in that shared memory: a global
 * epoch and a table of reader slots, one per thread that reads.
 *
 *   reader:  pc__ebr_read_lock(e) ... loads of shared nodes ...
 *            pc__ebr_read_unlock(e)
 *   writer:  unlink node from the structure (under its own lock), then
 *            pc__ebr_retire(e, &node->ebr)       - freed once no reader
 *            pc__ebr_reclaim(e, free_fn, arg)      can still hold it
 *
 * The object is freed by whichever process runs reclaim when it is safe;
 * @free_fn is that process's own (a function pointer is never stored in
 * the shared domain: code lives at other addresses in other processes).
 *
 * A read section costs a load and a store to the thread's own slot (the
 * writer side pays the fence, through membarrier(2), when the kernel has
 * it); sections nest.  A read section must not sleep for long: it holds
 * back every free.  A process that dies inside one holds back frees until
 * its slots are reaped (pc__ebr_reap, and reclaim and barrier reap a slot
 * that blocks them when its process is gone).
 */
#ifndef PC_EBR_H
#define PC_EBR_H

#include "base.h"
#include "lock.h"

#define PC_EBR_SLOTS 1024	/* reading threads at once, all processes */
#define PC_EBR_TLS 4		/* domains a thread reads at once */

/* Embedded in every object that is retired. */
struct pc_ebr_head {
	struct pc_ebr_head *next;
	uint64_t epoch;		/* the global epoch when it was retired */
};

/* A reader's slot: its owner a struct pc_proc_id (proc.h) kept field by
 * field, each atomic (the claim is a compare-and-swap of the pid). */
struct pc_ebr_slot {
	_Atomic uint64_t epoch;	/* 0: not reading; else the epoch entered */
	_Atomic int32_t pid;	/* owner process; 0: a free slot */
	int32_t tid;		/* owner thread: diagnostics */
	_Atomic uint64_t start;	/* the owner process's start time */
	_Atomic uint64_t image;	/* the owner's image (a random id, new at
				   each exec); 0 while claimed or given */
} __attribute__((aligned(64)));

struct pc_ebr {
	_Atomic uint64_t epoch;		/* from 1; 0 means "not reading" */
	uint64_t id;			/* read-only: random */
	bool membarrier;		/* read-only: writers fence for readers */
	struct pc_lock lock;		/* rank EBR: limbo, and nr_limbo's
					   changes */
	struct pc_ebr_head *limbo;	/* retired, not yet freed */
	_Atomic uint64_t nr_limbo;	/* read without the lock: a hint */
	_Atomic uint64_t nr_retired, nr_freed, nr_reaped;	/* statistics */
	struct pc_ebr_slot slot[PC_EBR_SLOTS];
};

/*
 * A domain's part in one process: may this process still touch it?  @id
 * is the domain's id from a thread's first read of it here until
 * pc__ebr_fini, 0 after: a thread's exit gives back its slot of a domain
 * only while its part says so (the domain's memory may be gone since).
 * Kept by the caller, in memory that outlives the domain's use here
 * (local.c: in the process's entry for the cache; it is zeroed when the
 * entry ends), and found through pc__ebr_local_hook, which the caller
 * sets.  A domain the hook gives no part for (NULL, or no hook set:
 * tree.c's own domain, a test's) is taken to stay mapped while the
 * process lives.
 */
struct pc_ebr_local {
	_Atomic uint64_t id;
};
typedef struct pc_ebr_local *(*pc_ebr_local_fn)(const struct pc_ebr *e);
extern _Atomic(pc_ebr_local_fn) pc__ebr_local_hook;

/* A thread's slot for one domain (thread-local). */
struct pc_ebr_tls {
	struct pc_ebr *e;
	uint64_t id;			/* e->id when claimed */
	struct pc_ebr_local *local;	/* e's part here, or NULL: none */
	struct pc_ebr_slot *slot;
	unsigned depth;			/* nesting */
	bool fence;			/* this process has no membarrier */
};

extern __thread struct pc_ebr_tls pc__ebr_tls[PC_EBR_TLS]
	__attribute__((tls_model("initial-exec")));

/*
 * Set up @e in zeroed shared memory.  0, or -errno from the lock.  The
 * domain's readers need no fence when membarrier(2) can fence every
 * process that joins (MEMBARRIER_CMD_GLOBAL_EXPEDITED).
 */
int pc__ebr_init(struct pc_ebr *e);
/*
 * This process is done with @e (the cache is destroyed, the region about
 * to be unmapped): no thread of it may be in a section.  The calling
 * thread's slot is given back; other threads' exits no longer touch @e
 * (its part here, if it has one, cleared).
 */
void pc__ebr_fini(struct pc_ebr *e);
/* The thread's entry for @e, claiming a slot (slow path of read_lock). */
struct pc_ebr_tls *pc__ebr_tls_slow(struct pc_ebr *e);

static inline void pc__ebr_read_lock(struct pc_ebr *e)
{
	struct pc_ebr_tls *t = &pc__ebr_tls[0];
	uint64_t g;

	if (__builtin_expect(t->e != e || t->id != e->id, 0))
		t = pc__ebr_tls_slow(e);
	if (t->depth++)
		return;
	g = atomic_load_explicit(&e->epoch, memory_order_relaxed);
	if (t->fence) {		/* the store, then a full barrier: one xchg */
		atomic_exchange_explicit(&t->slot->epoch, g,
					 memory_order_seq_cst);
	} else {		/* the writer's membarrier is the barrier */
		atomic_store_explicit(&t->slot->epoch, g,
				      memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
	}
}

static inline void pc__ebr_read_unlock(struct pc_ebr *e)
{
	struct pc_ebr_tls *t = &pc__ebr_tls[0];

	if (__builtin_expect(t->e != e || t->id != e->id, 0))
		t = pc__ebr_tls_slow(e);
	PC_ASSERT(t->depth > 0);
	if (--t->depth == 0)
		atomic_store_explicit(&t->slot->epoch, 0, memory_order_release);
}

/* Objects retired and not freed yet (a hint: no lock taken). */
static inline uint64_t pc__ebr_pending(const struct pc_ebr *e)
{
	return atomic_load_explicit(&e->nr_limbo, memory_order_relaxed);
}

/*
 * @h's object is unreachable for new readers (the caller unlinked it):
 * free it once every reader that may still see it has left.  Any lock may
 * be held but EBR's successors (lock.h); it takes the EBR lock.
 */
void pc__ebr_retire(struct pc_ebr *e, struct pc_ebr_head *h);
/*
 * Free what is safe now (moving the epoch on if every reader allows),
 * without waiting: @fn(head, arg) for each, with no lock of ebr's held.
 * Returns how many.  Takes the EBR lock (trylock: 0 if another process is
 * at it).
 */
uint64_t pc__ebr_reclaim(struct pc_ebr *e,
			 void (*fn)(struct pc_ebr_head *, void *), void *arg);
/*
 * Wait until everything retired before the call is freed (reaping slots
 * of dead processes on the way).  Must not be called inside a read
 * section.  Returns how many it freed.
 */
uint64_t pc__ebr_barrier(struct pc_ebr *e,
			 void (*fn)(struct pc_ebr_head *, void *), void *arg);
/*
 * Clear the slots of processes that are gone (or of @pid only, when it is
 * not 0: the cache process saw it die).  Returns how many.
 */
unsigned pc__ebr_reap(struct pc_ebr *e, pid_t pid);
/*
 * Clear the slots of this process's pid claimed by another image of it:
 * one before an exec (same pid, same start time, so pc__ebr_reap takes
 * them for alive), or a dead process whose pid this one reuses.  Called
 * by the process itself (procs.c, as it enters a cache).  Returns how many.
 */
unsigned pc__ebr_reap_image(struct pc_ebr *e);
#ifdef PC_DEBUG
/* Test builds: this process forgets its slots and takes a new image id,
 * as an exec would (the old slots stay claimed, for a reap). */
void pc__ebr_test_new_image(void);
#endif
/*
 * This thread will not read @e again (its slot is given back); every
 * thread's slots are given back at its exit too.  Not inside a section.
 */
void pc__ebr_thread_leave(struct pc_ebr *e);

#endif /* PC_EBR_H */
