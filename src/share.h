/*
 * share.h - a shared cache (shared=on) between its modules and what the
 * core asks of them: its creation in a region (share.c), its home process
 * (home.c), the processes attached (procs.c), each process's part of it
 * (local.c), the mappings' slots, the descriptors sent home.  mem.h has
 * the memory and lock helpers private caches use too, internal.h this
 * process's part of a cache and its I/O helpers.
 */
#ifndef PC_SHARE_H
#define PC_SHARE_H

#include "internal.h"
#include "bdi.h"
#include "proc.h"

#define PC_SHARE_SLOTS (1u << 18)	/* mappings of one cache at once */
#define PC_SHARE_PROCS 256		/* processes attached at once */
_Static_assert(PC_SHARE_PROCS + 1 <= PC_BDI_OWNERS, "bdi in_flight by owner");

struct pc_shm;

/* What the processes of a shared cache have in common, in its region. */
struct pc_share {
	struct pc_lock lock;		/* rank SHARE: procs[] (procs.c) */
	_Atomic uint64_t next_serial;
	struct pc_proc_id home;		/* read-only: the home process */
	uint64_t id;			/* read-only: random; names the
					   home's sockets (home.c) */
	int sock;			/* read-only: the home's, bound */
	int escrow;			/* read-only: the home's, bound
					   (home.c: two sockets) */
	_Atomic bool closing;		/* the home is tearing it down */
	_Atomic uint64_t attaches;	/* processes entered, ever (a gauge
					   of vmstat.c: shared_attaches) */
	_Atomic uint32_t slot_hint;	/* where the last slot was found */
	_Atomic uint64_t slot_map[PC_SHARE_SLOTS / 64];	/* taken by CAS */
	/* Each process attached: its identity (proc.h) as pid and start
	 * time, the pid atomic (read without the lock; 0: a free slot). */
	struct {
		_Atomic int32_t pid;	/* 0: free */
		uint64_t start;
		bool reaping;		/* dead; its reap under way */
	} procs[PC_SHARE_PROCS];	/* lock */
};

/* This build's REGION_LAYOUT (share.c: the region's layout, declared
 * there): the number a region of a shared cache must have to be joined. */
uint64_t pc__region_layout(void);

/*
 * A cache in a new region sized for @span_frames frames: *@out is its
 * zeroed struct pc_cache there (shared, cfg set from @cfg), with this
 * process as its home.  0, or -errno.
 */
int pc__share_create(struct pc_cache **out, const struct pc_config *cfg,
		     uint64_t span_frames);
/* The home's service thread started, the cache published (after the
 * rest of create): 0 or -errno. */
int pc__share_start(struct pc_cache *c);
/* Processes that entered @c since it was made (0: a private cache). */
uint64_t pc__share_attaches(struct pc_cache *c);
/*
 * Entries of @c's table of processes other than this one's, counted as
 * they stand: no process is looked at (pc_cache_processes looks at each
 * and reaps the dead; the service thread reaps a death when its pidfd
 * says so).  Atomic loads only, no lock: for a loop that polls.
 */
unsigned pc__share_entered(struct pc_cache *c);
/* Does this process run @c's threads?  (Private caches: yes.) */
bool pc__share_is_home(struct pc_cache *c);
/* The process that does (a shared cache's home); this one if private. */
pid_t pc__share_home_pid(struct pc_cache *c);
/* Home's destroy: until every other attached process detached or died. */
void pc__share_wait_others(struct pc_cache *c);
/* The service thread stops. */
void pc__share_stop(struct pc_cache *c);
/* This process leaves @c: its descriptors closed, the region unmapped. */
void pc__share_detach(struct pc_cache *c);
/* fork(2), in the child: the parent's I/O forgotten, the child entered. */
void pc__share_fork_child(void);

/* A new mapping's serial and slot (shared caches): 0, or -ENOMEM (no
 * slot free, or no memory for its descriptors in this process). */
int pc__share_slot_get(struct pc_cache *c, struct pc_mapping *m);
void pc__share_slot_put(struct pc_cache *c, struct pc_mapping *m);
/*
 * Another process than the home holds a writable descriptor of @m: send
 * it home, unless the home has one (it writes @m back).  Before the open
 * that made it returns; no lock of the cache may be held (the send may
 * wait for the home, and the home for the cache's locks).
 */
void pc__share_send_fd(struct pc_mapping *m);
/* The home: take the descriptors sent to its escrow so far (home.c). */
void pc__share_take_fds(struct pc_cache *c);

/*
 * local.c, the process's one table of caches, private and shared: @c in
 * it with an id (0, or -ENOMEM: full); out of it (the table's lock held);
 * whole (its pages found by pc__page_cache from now on); the table's lock;
 * the cache of id @id (the lock held); is a cache of id @id alive (no
 * lock: ids are never reused)?
 */
int pc__local_register(struct pc_cache *c);
void pc__local_unregister_locked(struct pc_cache *c);
void pc__local_whole(struct pc_cache *c);
void pc__local_lock_table(void);
void pc__local_unlock_table(void);
/* fork(2)'s handlers (tctx.c): the table's lock and bk_lock taken before
 * the fork, let go after it on both sides. */
void pc__local_fork_prepare(void);
void pc__local_fork_done(void);
/* Tests: take or let go bk_lock; is a thread queued on it; is it free. */
void pc__test_bk_lock(bool take);
bool pc__test_bk_waited(void);
bool pc__test_bk_free(void);
struct pc_cache *pc__local_by_id_locked(uint64_t id);
bool pc__local_id_live(uint64_t id);
/*
 * local.c: this process's entry for @c, with @shm its mapping of the
 * region and @shm_fd its descriptor of it, both the entry's from now on
 * (NULL: none free, or no memory; the caller keeps them); its entry, or
 * NULL; out again (its descriptors closed, the region unmapped).
 */
struct pc_local *pc__local_add(struct pc_cache *c, struct pc_shm *shm,
			       int shm_fd);
struct pc_local *pc__local_find(struct pc_cache *c);	/* NULL: none */
/* This process's owner id for @c's page locks (pagewait.h), 0: none. */
void pc__local_set_owner(struct pc_cache *c, uint32_t id);
void pc__local_remove(struct pc_cache *c);
/* Tests: no memory for a new chunk of descriptors (pc__bk_ready fails). */
extern _Atomic bool pc__test_no_bk_chunk;

/*
 * procs.c: this process into @c's table (0, or -EMFILE: full), its owner
 * id for page locks set; out of it; the others attached and alive, the
 * dead found reaped.
 */
int pc__procs_enter(struct pc_cache *c);
void pc__procs_leave(struct pc_cache *c);
unsigned pc__procs_others(struct pc_cache *c);

/*
 * home.c: the home's sockets bound (create: 0 or -errno); its service
 * thread started (0 or -errno); a process that entered says so to the
 * home (which watches it from then on).
 */
int pc__home_open(struct pc_share *s);
int pc__home_start(struct pc_cache *c);
void pc__home_say_entered(struct pc_cache *c);
/* Every file of @c written back by its home, which answers: 0, the first
 * writeback error, -ENOTCONN (the home died), -errno (home.c). */
int pc__home_sync(struct pc_cache *c);

#ifdef PC_DEBUG
/*
 * Tests: this process's entry in @c's table made a dead process's of its
 * pid (another start time), then the process enters again - as a process
 * given the pid of one that died and was not reaped yet enters.  0 or
 * -errno.
 */
int pc__share_test_predecessor(struct pc_cache *c);
#endif

#endif /* PC_SHARE_H */
