/*
 * procs.c - a shared cache's table of processes (struct pc_share: procs[],
 * share.h), and the reaping of a dead one's state.
 *
 * The table: each process attached (pid and start time; a zombie is
 * dead) in a slot of its own; 1 + the slot is its owner id for page
 * locks (page.h: the owner bits; pagewait.c) and for the bdis' counts of
 * write requests in flight (bdi.c).  A process enters at create or
 * attach, and a fork child in its fork handler (pc__procs_enter), and
 * leaves at detach (pc__procs_leave).  The home's service thread watches
 * each through a pidfd (home.c); whoever finds a process dead in the
 * table (pc__procs_others: the service thread, pc_cache_processes, a
 * process that finds the table full) marks its slot reaping and reaps it,
 * once.
 *
 * The reap (reap), as do_exit() calls each subsystem's teardown, in this
 * order (closing its files takes the locks it held):
 *   1. its waiters on pages and the wakes it left undone (pagewait.c);
 *   2. its I/O on pages (io_pid: reads unlocked for the next reader,
 *      writes dirty again; a write completion's marks, | PC_IO_ENDED its
 *      PG_writeback to end and its reference to give back, | PC_IO_MOVING
 *      its counters half moved, the cache broken: writeback.c, readpage.c)
 *      and the page locks it held (their owner is its slot: writeback.c's
 *      pc__lock_abandon);
 *   3. its write requests in flight (each bdi's count for its owner id,
 *      zeroed: bdi.c);
 *   4. its holds on the mappings' i_rwsem (a fragile one breaks the
 *      cache: lock.c);
 *   5. its ebr slots (ebr.c; our own image before an exec by its image
 *      id);
 *   6. its threads' contexts (the references and pins they record given
 *      back: tctx.c);
 *   7. the files it left open (inode.c).
 * Its dirty pages are the cache's and stay, for the home to write back.
 * It counts as attached until the reap is over, and its slot is not
 * reused before.
 *
 * One identity for a process (proc.h: pid, start time, image), and two
 * short forms of it where a word must name it: its pid marks what it
 * holds by pid (io_pid, i_rwsem's owner and readers, its threads'
 * contexts, its open files), since pc__procs_enter reaps a dead entry of
 * our pid before we hold anything, so the pid is never two processes' at
 * once in the table; its slot here (the owner id) marks its page locks
 * and bdi requests, the slot naming the entry that holds its pid and
 * start time, not reused before its reap.  ebr slots record the whole
 * identity (an exec keeps pid and start time, not the image).
 *
 * Locks: s->lock (rank SHARE, in the region, robust) guards procs[]; a
 * reap runs after it is let go (it takes the cache's locks).
 */
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "dirty.h"
#include "ebr.h"
#include "filemap.h"
#include "inode.h"
#include "node.h"
#include "share.h"
#include "tctx.h"

void pc__procs_leave(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();

	pc__local_set_owner(c, 0);
	pc__lock(&s->lock);
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++)
		if (atomic_load(&s->procs[i].pid) == pid)
			atomic_store(&s->procs[i].pid, 0);
	pc__unlock(&s->lock);
}

unsigned pc__share_entered(struct pc_cache *c)
{
	unsigned n = 0;

	if (!c->share)
		return 0;
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
		pid_t p = atomic_load(&c->share->procs[i].pid);

		n += p && p != pc__pid;
	}
	return n;
}

/*
 * The I/O and the page locks a dead process left on pages (page.h:
 * io_pid, the lock's owner @id): every frame handed out so far is looked
 * at.  Its io_uring requests are over by now (a process's ring is
 * cancelled and drained before it becomes a zombie), so nothing else will
 * end them.  Its waiters are out of the queues by now (pc__pagewait_reap),
 * so no lock is handed to it behind the scan.
 */
static unsigned reap_pages(struct pc_cache *c, pid_t pid, uint32_t id,
			   unsigned *locks)
{
	unsigned n = 0;

	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *nd = &c->nodes[i];
		uint32_t hw = atomic_load(&nd->hw);

		for (uint32_t k = 0; k < hw; k++) {
			struct pc_page *p = &c->pages[nd->first_pfn + k];
			int32_t owner = atomic_load_explicit(&p->io_pid,
							     memory_order_relaxed);

			if (owner && PC_IO_PID(owner) == pid) {
				if (owner & (PC_IO_MOVING | PC_IO_ENDED))
					pc__write_end_abandon(c, p, owner);
				else if (page_test(p, PG_writeback))
					pc__writeback_abandon(c, p);
				else
					pc__read_abandon(c, p);
				n++;
				/* marked by a writeback gang, still locked */
				if (page_lock_owner(p) == id) {
					pc__unlock_page(&c->wait, p);
					(*locks)++;
				}
			} else if (page_lock_owner(p) == id) {
				pc__lock_abandon(c, p);
				(*locks)++;
			}
		}
	}
	return n;
}

/*
 * What the dead process of table slot @i left: its waiters on pages, its
 * I/O and page locks, what it held of the mappings' i_rwsem (a truncation
 * left half-done breaks the cache), its read sections' slots, its
 * threads' batches (pages they held), the files it had open.  Its dirty
 * pages are the cache's and stay, for the home to write back.  In this
 * order: closing its files takes the locks it held.
 */
static void reap(struct pc_cache *c, unsigned i)
{
	pid_t pid = atomic_load(&c->share->procs[i].pid);
	unsigned locks = 0;

	pc__add(c, 0, shared_waiters_reaped, pc__pagewait_reap(&c->wait, i + 1));
	pc__add(c, 0, shared_io_reaped, reap_pages(c, pid, i + 1, &locks));
	pc__bdi_reap(c, i + 1);	/* its requests are over */
	pc__lock(&c->mappings_lock);
	for (unsigned h = 0; h < c->hash_size; h++)
		for (struct pc_mapping *m = c->hash[h]; m; m = m->hash_next)
			if (pc__rwlock_reap(&m->i_rwsem, pid, c->broken) &
			    PC_RW_REAPED)
				locks++;
	pc__unlock(&c->mappings_lock);
	pc__add(c, 0, shared_locks_reaped, locks);
	/* Our own pid: our image before an exec (alive to pc__ebr_reap: same
	 * pid and start time), or a dead one's whose pid we reuse. */
	if (pid == getpid())
		pc__ebr_reap_image(c->ebr);
	else
		pc__ebr_reap(c->ebr, pid);
	pc__tctx_reap(c, pid);
	pc__files_reap(c, pid);
	pc__inc(c, 0, shared_procs_reaped);
}

/* Reap the process of slot @i (marked reaping by the caller), then free
 * the slot: until then no one takes its pid or its owner id. */
static void reap_slot(struct pc_cache *c, unsigned i)
{
	struct pc_share *s = c->share;

	reap(c, i);
	pc__lock(&s->lock);
	s->procs[i].reaping = false;
	atomic_store(&s->procs[i].pid, 0);
	pc__unlock(&s->lock);
}

/* Processes attached but this one and alive; the dead ones reaped. */
unsigned pc__procs_others(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();
	unsigned n = 0, nr_dead = 0, dead[PC_SHARE_PROCS];

	pc__lock(&s->lock);
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
		pid_t p = atomic_load(&s->procs[i].pid);

		if (!p || p == pid)
			continue;
		n++;	/* a dead one counts until its reap is over */
		if (!s->procs[i].reaping &&
		    !pc__process_alive(p, s->procs[i].start)) {
			s->procs[i].reaping = true;	/* ours, once */
			dead[nr_dead++] = i;
		}
	}
	pc__unlock(&s->lock);
	for (unsigned k = 0; k < nr_dead; k++) {
		reap_slot(c, dead[k]);
		n--;
	}
	return n;
}

PC_EXPORT unsigned pc_cache_processes(pc_cache *c)
{
	if (!c)
		return 0;
	return c->shared ? pc__procs_others(c) + 1 : 1;
}

/*
 * Into the table of processes: 0, or -EMFILE (PC_SHARE_PROCS alive); this
 * process's owner id for page locks set (pagewait.h).
 *
 * Pids are reused.  Whatever a process holds that is marked with its pid
 * (i_rwsem's owner and reader slots, io_pid, its threads' contexts, its
 * open files) is reaped by pid, so a process with the pid of a dead one
 * whose reap has not ended must not hold anything yet: its holds would
 * be reaped with the dead one's.  So an entry with our pid - a dead
 * process's, since a live process enters a cache once (attach refuses a
 * second mapping of its region), or our own image before an exec (which
 * ended every thread it had wherever it was) - is reaped here before we
 * enter, by us or by whoever marked it first (then we wait for it to
 * end), and this runs before the process takes any of the cache's locks
 * (attach, the fork child's handler).  Page locks are not by pid: their
 * owner is the slot, not reused before its reap is over.  Our image
 * before an exec has our start time too, so its read sections' slots
 * look alive to pc__ebr_reap: they are told by their image id (ebr.c)
 * and cleared by pc__ebr_reap_image.
 */
int pc__procs_enter(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	/* Our identity's pid and start time read here, not pc__proc_self's
	 * copy: this runs in the fork child's handler, and the lock of that
	 * copy may have been forked held. */
	pid_t pid = getpid();
	uint64_t start = pc__process_start(pid);

	for (int pass = 0; pass < 2;) {
		int mine = -1, free_at = -1;
		bool reap_it = false;

		pc__lock(&s->lock);
		for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
			pid_t p = atomic_load(&s->procs[i].pid);

			if (p == pid)
				mine = (int)i;
			else if (!p && free_at < 0)
				free_at = (int)i;
		}
		if (mine >= 0) {	/* a dead one's: reaped first */
			reap_it = !s->procs[mine].reaping;
			s->procs[mine].reaping = true;
			pc__unlock(&s->lock);
			if (reap_it)
				reap_slot(c, (unsigned)mine);
			else	/* another's reap of it: until it ends */
				usleep(1000);
			continue;
		}
		if (free_at >= 0) {
			s->procs[free_at].start = start;
			atomic_store(&s->procs[free_at].pid, pid);
			atomic_fetch_add(&s->attaches, 1);
			pc__unlock(&s->lock);
			pc__local_set_owner(c, (uint32_t)free_at + 1);
			pc__home_say_entered(c);
			return 0;
		}
		pc__unlock(&s->lock);
		(void)pc__procs_others(c);	/* the dead leave room */
		pass++;
	}
	return -EMFILE;
}

#ifdef PC_DEBUG
int pc__share_test_predecessor(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();

	pc__lock(&s->lock);
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++)
		if (atomic_load(&s->procs[i].pid) == pid)
			s->procs[i].start ^= 1;
	pc__unlock(&s->lock);
	return pc__procs_enter(c);
}
#endif

