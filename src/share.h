/*
 * share.h - what the core asks of share.c about a shared cache
 * (shared=on): its creation in a region, its home process, the processes
 * attached, the mappings' slots, the descriptors sent home.  internal.h
 * has the memory, lock and I/O helpers every file uses.
 */
#ifndef PC_SHARE_H
#define PC_SHARE_H

#include "internal.h"

/*
 * A cache in a new region sized for @span_frames frames: *@out is its
 * zeroed struct pc_cache there (shared, cfg set from @cfg), with this
 * process as its home.  0, or -errno.
 */
int pc__share_create(struct pc_cache **out, const struct pc_config *cfg,
		     uint64_t span_frames);
/* The home's service thread (after the rest of create): 0 or -errno. */
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

/* A new mapping's serial and slot (shared caches): 0, or -ENOMEM. */
int pc__share_slot_get(struct pc_cache *c, struct pc_mapping *m);
void pc__share_slot_put(struct pc_cache *c, struct pc_mapping *m);
/*
 * Another process than the home holds a writable descriptor of @m: send
 * it home, unless the home has one (it writes @m back).  Before the open
 * that made it returns; no lock of the cache may be held (the send may
 * wait for the home, and the home for the cache's locks).
 */
void pc__share_send_fd(struct pc_mapping *m);
/* The home: take the descriptors sent to its escrow so far (share.c). */
void pc__share_take_fds(struct pc_cache *c);

/* This process's I/O backend for @c (the fallback to sync said once). */
int pc__io_make(struct pc_cache *c, struct pc_local *l);
void pc__io_destroy(struct pc_cache *c);

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
