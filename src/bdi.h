/*
 * bdi.h - struct pc_bdi, one per backing device (st_dev): its dirty
 * mappings, its flusher thread, its bandwidth estimates and its throttle
 * queue (bdi.c; writeback.c decides what to write, throttle.c when to
 * throttle).
 */
#ifndef PC_BDI_H
#define PC_BDI_H

#include "internal.h"

#define PC_BDI_OWNERS (1 + 256)	/* owner ids: share.h's PC_SHARE_PROCS */

struct pc_bdi {
	dev_t dev;
	struct pc_cache *cache;
	/*
	 * The device wants pages left alone while they are written (its
	 * queue/stable_writes: checksums, mirrors, some RAID): a write to a
	 * page under writeback waits for it first (filemap.c).  Set when the
	 * bdi is made; tests set it right after; read without a lock.
	 */
	_Atomic bool stable_writes;
	/* Its file system refused RWF_DONTCACHE: staged commits drop the
	 * kernel's copy by fadvise (sync.c).  Read without a lock. */
	_Atomic bool no_dontcache;
	struct pc_lock lock;
	struct pc_list dirty;		/* lock; of pc_mapping (dirty_link),
					   oldest first */
	struct pc_lock wake_mtx;
	pthread_cond_t wake_cond;
	pthread_cond_t done_cond;	/* a writeback pass finished */
	unsigned work;			/* wake_mtx: PC_WB_* requests */
	uint64_t passes;		/* wake_mtx: passes finished */
	_Atomic bool stop;
	pthread_t thread;
	_Atomic bool started;		/* its flusher runs (in the home) */
	_Atomic uint64_t write_bw;	/* bytes per second, smoothed */
	_Atomic uint64_t read_bw;	/* dropbehind.c: bytes/s of large reads,
					   smoothed; 0 until measured */
	_Atomic uint64_t written;	/* bytes written since create */
	uint64_t bw_stamp_ns, bw_written;	/* bw_lock */
	/* Write requests in flight, by process: [its page-lock owner id]
	 * (pagewait.h; 0 in a private cache), summed on read, so a dead
	 * process's count is zeroed by its reaper (pc__bdi_reap), exactly. */
	_Atomic int in_flight[PC_BDI_OWNERS];
	struct pc_bdi *next;		/* c->bdi_lock */
	/* writeback.c, bdi.c (see their top comments): */
	struct pc_lock bw_lock;	/* the bandwidth period (trylock) */
	_Atomic int64_t nr_dirty;	/* pages dirty on this device */
	_Atomic int64_t nr_writeback;	/* pages under writeback on it */
	_Atomic uint64_t dirty_limit;	/* pages; writeback.dirty_time_ms, */
	_Atomic uint64_t dirty_bg_limit;	/* else 0 (global limits only) */
	_Atomic unsigned dirtiers;	/* threads throttled last period */
	_Atomic unsigned dirtiers_cur;	/* ... in this period */
	_Atomic uint64_t period;	/* bandwidth periods elapsed */
	_Atomic bool busy;		/* the flusher is in a pass */
	_Atomic uint64_t last_ok_ns;	/* last write that succeeded */
	_Atomic uint64_t last_err_ns;	/* last write that failed */
	unsigned backoff_ms;		/* flusher thread only */
	/* bdi.c: the throttle's queue: paced writers sleep, completions wake */
	struct pc_lock throttle_mtx;
	pthread_cond_t throttle_cond;	/* CLOCK_MONOTONIC */
	uint64_t throttle_gen;		/* throttle_mtx: bumped at each wake */
	_Atomic int throttled;		/* writers asleep in the throttle */
};

/*
 * A bandwidth's decaying average: 7/8 the old estimate, 1/8 the sample
 * (write_bw when it falls, read_bw always).
 */
static inline uint64_t pc_bw_decay(uint64_t old, uint64_t sample)
{
	return (old * 7 + sample) / 8;
}

#define PC_WB_BACKGROUND 0x1
#define PC_WB_RECLAIM 0x2
#define PC_WB_ALL 0x4

/* bdi.c */
struct pc_bdi *pc__bdi_get(struct pc_cache *c, dev_t dev);
/* Start @b's flusher if it has none (a shared cache's home, share.c). */
void pc__bdi_start(struct pc_bdi *b);
void pc__bdis_fini(struct pc_cache *c);
void pc__bdi_mark_dirty(struct pc_mapping *m);	/* put on dirty list */
void pc__bdi_remove(struct pc_mapping *m);
/* Off the dirty list if it is clean (or off already): true; dirty: false. */
bool pc__bdi_retire_if_clean(struct pc_mapping *m);
/*
 * Is @b's flusher idle: not in a pass, not woken for one it has yet to
 * start (a flusher that is not scheduled yet is not idle), nothing in
 * flight?
 */
bool pc__bdi_flusher_idle(struct pc_bdi *b);
/* Write requests in flight on @b, every process's. */
int pc__bdi_in_flight(struct pc_bdi *b);
/* Owner @id's process died: none of its requests is in flight now. */
void pc__bdi_reap(struct pc_cache *c, uint32_t id);
void pc__bdi_wakeup(struct pc_bdi *b, unsigned work);
void pc__bdi_wakeup_all(struct pc_cache *c, unsigned work);
/* Ask every flusher to write everything and wait until done. */
void pc__bdi_sync_all(struct pc_cache *c);
/* Is a device of @c failing: its last write failed (its flusher backs
 * off, its dirty pages may never come clean)?  No lock at or after
 * BDI_LIST held. */
bool pc__bdi_failing(struct pc_cache *c);
void pc__bdi_account_written(struct pc_bdi *b, uint64_t bytes);
/* Sleep on @b's throttle queue up to @ns; returns the time slept. */
int64_t pc__bdi_throttle_pause(struct pc_bdi *b, int64_t ns);
void pc__bdi_throttle_wake(struct pc_bdi *b);	/* end every pause */
/* throttle.c: end @b's pauses if dirty is back under freerun (completions) */
void pc__balance_dirty_wake(struct pc_cache *c, struct pc_bdi *b);

#endif /* PC_BDI_H */
