/*
 * internal.h - what the library's files share, and the lock order.
 *
 * The objects (DESIGN.md, "Data structures"):
 *
 *   pc_cache ─┬─ nodes[]   budget slices: frames, free list, LRU, kswapd
 *             ├─ pages[]   one struct pc_page per frame (page.h)
 *             ├─ data      the frames themselves, 4 KiB aligned
 *             ├─ mappings  dev:ino -> pc_mapping (kept after last close)
 *             ├─ bdis      one per st_dev: dirty mappings, flusher thread
 *             ├─ io        the I/O backend (io.c: ops table)
 *             └─ wait      hashed page wait queues (pagewait.c)
 *
 *   pc_file ── pc_mapping ── tree (radix, mapping.c) ── pages / shadows
 *
 * LOCK ORDER (outermost first), checked in debug builds by pc__lock():
 *
 *   mapping i_rwsem (pthread rwlock: writers shared, truncate exclusive)
 *     → page lock (PG_locked; several only by trylock)
 *       → mapping tree lock      PC_RANK_TREE
 *         → bdi lock             PC_RANK_BDI
 *           → node lru lock      PC_RANK_LRU
 *             → node free lock   PC_RANK_FREE
 *
 *   page wait-queue locks (pagewait.c) are leaves: taken under any of the
 *   above, nothing under them.  pc__lock_page and pc__wait_on_page_bit
 *   sleep: call them with none of the ranked locks held.
 *
 *   c->mappings_lock (the open/close table) is taken with none of the above
 *   held, except i_rwsem is never taken under it.  No lock is held across
 *   I/O submission and wait, except the page lock of pages being read (the
 *   lock is the "I/O in flight" signal, as in the kernel).
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "pagecache.h"
#include "page.h"

#define PC_PAGE_SHIFT 12
#define PC_LRU_BATCH 15		/* pages in a per-thread LRU batch */
#define PC_RECLAIM_BATCH 32	/* SWAP_CLUSTER_MAX */
#define PC_MAX_NODES 64
#define PC_MAX_IO_PAGES 256	/* largest request: 1 MiB */
#define PC_DROP_BATCH 32	/* use-once pages dropped per tree-lock hold */
#define PC_RA_STREAMS 4		/* streams of one file tracked (readahead.c) */
#define PC_RA_MAX_AUTO UINT64_MAX	/* readahead.max not set (readahead.c) */

#define PC_EXPORT __attribute__((visibility("default")))

#ifdef PC_DEBUG
#include <assert.h>
#define PC_ASSERT(x) assert(x)
#else
#define PC_ASSERT(x) ((void)0)
#endif

#define pc_min(a, b) ((a) < (b) ? (a) : (b))
#define pc_max(a, b) ((a) > (b) ? (a) : (b))

struct pc_cache;
struct pc_node;
struct pc_mapping;
struct pc_bdi;

uint64_t pc__now_ns(void);
struct timespec;
/* An absolute CLOCK_REALTIME time @ns from now, for pthread_cond_timedwait. */
void pc__deadline(struct timespec *ts, uint64_t ns);

/* ------------------------------------------------------------------ */
/* Locks with statistics (cache.c).                                    */

enum pc_lock_rank {
	PC_RANK_NONE = 0,
	PC_RANK_TREE = 1,
	PC_RANK_BDI = 2,
	PC_RANK_LRU = 3,
	PC_RANK_FREE = 4,
};

struct pc_lock {
	pthread_mutex_t m;
	struct pc_cache *cache;
	int rank;
	int stat;		/* vmstat item of acquisitions; +1 contended, +2 ns */
};

void pc__lock_init(struct pc_lock *l, struct pc_cache *c, int rank, int stat);
void pc__lock_destroy(struct pc_lock *l);
void pc__lock(struct pc_lock *l);
bool pc__trylock(struct pc_lock *l);
void pc__unlock(struct pc_lock *l);
bool pc__lock_held(const struct pc_lock *l);	/* debug builds: by this thread */
#define PC_ASSERT_HELD(l) PC_ASSERT(pc__lock_held(l))

/* ------------------------------------------------------------------ */
/* vmstat.c: counters sharded per thread, per node; summed on read.    */

#define PC_VMSTAT_ITEMS(X) \
	X(nr_free_pages) X(nr_inactive_file) X(nr_active_file) \
	X(nr_dirty) X(nr_writeback) X(nr_file_pages) X(nr_shadow_entries) \
	X(nr_dirty_threshold) X(nr_dirty_background_threshold) \
	X(pgpgin) X(pgpgout) X(pgpgin_holes) X(pgfault_hit) X(pgfault_miss) \
	X(pgactivate) X(pgdeactivate) X(pgrefill) X(pgrotated) \
	X(pgscan_kswapd) X(pgscan_direct) X(pgsteal_kswapd) X(pgsteal_direct) \
	X(pgsteal_writeback_skip) X(pgalloc) X(pgfree) X(allocstall) \
	X(allocfail) X(kswapd_wakeup) X(kswapd_throttle) X(pageoutrun) \
	X(workingset_refault_file) X(workingset_activate_file) \
	X(workingset_restore_file) X(workingset_nodereclaim) \
	X(numa_hit) X(numa_miss) X(numa_foreign) X(numa_local) X(numa_other) \
	X(pgmigrate_success) X(pgmigrate_fail) X(numa_hint_faults) \
	X(numa_hint_faults_local) X(numa_pages_migrated) X(numa_pte_updates) \
	X(numa_scan_period_ms) \
	X(tree_lock_acquired) X(tree_lock_contended) X(tree_lock_wait_ns) \
	X(lru_lock_acquired) X(lru_lock_contended) X(lru_lock_wait_ns) \
	X(free_lock_acquired) X(free_lock_contended) X(free_lock_wait_ns) \
	X(bdi_lock_acquired) X(bdi_lock_contended) X(bdi_lock_wait_ns) \
	X(waitqueue_lookups) X(waitqueue_wakeups) \
	X(nr_dirtied) X(nr_written) X(writeback_errors) \
	X(balance_dirty_pages_pauses) X(balance_dirty_pages_pause_ms) \
	X(flusher_wakeups) X(dirty_reclaim_handoff) \
	X(ra_sync) X(ra_async) X(ra_pages) X(ra_hit) X(ra_miss_random) \
	X(dropbehind) X(trace_events) X(trace_lost) \
	X(reclaim_tree_contended) X(reclaim_backoff_wait) \
	X(kswapd_contended_stall) \
	X(writeback_requests) X(balance_dirty_pages_idle) \
	X(writeback_backoff) X(writeback_lost)

enum pc_vmstat_item {
#define PC_VM_ENUM(n) PC_VM_##n,
	PC_VMSTAT_ITEMS(PC_VM_ENUM)
#undef PC_VM_ENUM
	PC_NR_VMSTAT
};

#define PC_VMSTAT_SHARDS 32

struct pc_vmstat_shard {
	_Atomic uint64_t v[PC_NR_VMSTAT];
} __attribute__((aligned(64)));

struct pc_vmstat {
	int nr_nodes;
	struct pc_vmstat_shard *shards;	/* [PC_VMSTAT_SHARDS * nr_nodes] */
};

int pc__vmstat_init(struct pc_vmstat *s, int nr_nodes);
void pc__vmstat_fini(struct pc_vmstat *s);
void pc__count(struct pc_cache *c, int node, enum pc_vmstat_item i, int64_t d);
/* The same with the caller's context (pc__tctx) already looked up. */
struct pc_tctx;
void pc__count_ctx(struct pc_cache *c, struct pc_tctx *t, int node,
		   enum pc_vmstat_item i, int64_t d);
uint64_t pc__vmstat_node(struct pc_cache *c, int node, enum pc_vmstat_item i);
uint64_t pc__vmstat_sum(struct pc_cache *c, enum pc_vmstat_item i);
/*
 * Memory is tight: free frames are under an eighth of the budget, so new
 * pages will soon come from reclaim.  Use-once stream pages are dropped
 * behind the stream only then; with memory to spare they stay cached.
 */
bool pc__memory_tight(struct pc_cache *c);
#define pc__inc(c, node, item) pc__count((c), (node), PC_VM_##item, 1)
#define pc__add(c, node, item, d) pc__count((c), (node), PC_VM_##item, (d))

/* ------------------------------------------------------------------ */
/* mapping.c: the per-file radix tree (64 slots a level, 3 tags).      */
/*
 * Items are pointers with the low bit clear (struct pc_page *) or value
 * entries with the low bit set (shadow entries of evicted pages).  Writers
 * (insert, store, delete, tag changes) hold the owner's tree lock.  Lookups
 * (lookup, gang lookups) may run concurrently with writers inside an RCU
 * read-side section (urcu-bp): they see each slot either before or after a
 * change; nodes are freed after a grace period.  Tags seen by RCU readers
 * may be stale; writers see them exact.
 */
enum { PC_TAG_DIRTY, PC_TAG_WRITEBACK, PC_TAG_TOWRITE, PC_TREE_TAGS };

struct pc_tree_node;
struct pc_tree {
	_Atomic(struct pc_tree_node *) root;
	uint64_t nr_items;		/* writer lock; pages and values */
	uint64_t nr_values;		/* writer lock; value entries */
};

static inline bool pc_tree_is_value(const void *item)
{
	return ((uintptr_t)item & 1) != 0;
}
static inline void *pc_tree_mkvalue(uint64_t v)
{
	return (void *)(uintptr_t)((v << 1) | 1);
}
static inline uint64_t pc_tree_value(const void *item)
{
	return (uint64_t)(uintptr_t)item >> 1;
}

void pc__tree_init(struct pc_tree *t);
/* Free every node at once: no reader or writer may be left. */
void pc__tree_destroy(struct pc_tree *t);
/* The item at @index or NULL.  RCU read section or writer lock. */
void *pc__tree_lookup(struct pc_tree *t, uint64_t index);
/*
 * Insert @item (a page, not a value) at @index.  An empty slot or a value
 * entry is replaced: the value is returned in *old (NULL if empty).
 * Returns 0, -EEXIST if a page is there, -ENOMEM.  Writer lock.
 */
int pc__tree_insert(struct pc_tree *t, uint64_t index, void *item, void **old);
/*
 * Store @item at an occupied or empty @index and return what was there.
 * NULL deletes (and frees emptied nodes after a grace period).  Storing a
 * page over a page keeps the slot's tags; storing a value or NULL clears
 * them.  -ENOMEM is impossible when the slot was occupied; for an empty
 * slot and a non-NULL item the return is (void *)-1 on allocation failure.
 * Writer lock.
 */
void *pc__tree_store(struct pc_tree *t, uint64_t index, void *item);
/* tag_get and tagged: RCU read section or writer lock, like lookups. */
bool pc__tree_tag_get(struct pc_tree *t, uint64_t index, int tag);
void pc__tree_tag_set(struct pc_tree *t, uint64_t index, int tag);	/* slot must hold a page */
void pc__tree_tag_clear(struct pc_tree *t, uint64_t index, int tag);
bool pc__tree_tagged(struct pc_tree *t, int tag);	/* any item tagged */
/*
 * Gang lookups: up to @max items with index in [first, last], in index
 * order, into items[] and indices[] (indices may be NULL).  Returns the
 * count.  The plain one returns pages and values; the tagged one only pages
 * carrying @tag.  RCU read section or writer lock.
 */
unsigned pc__tree_gang(struct pc_tree *t, uint64_t first, uint64_t last,
		       void **items, uint64_t *indices, unsigned max);
unsigned pc__tree_gang_tag(struct pc_tree *t, uint64_t first, uint64_t last,
			   int tag, void **items, uint64_t *indices,
			   unsigned max);
/*
 * Set @to on up to @max items in [first, last] that carry @from; returns how
 * many were tagged (the kernel's tag_tagged_items).  Writer lock.
 */
unsigned pc__tree_tag_range(struct pc_tree *t, uint64_t first, uint64_t last,
			    int from, int to, unsigned max);
/* Tests: fail the nth node allocation from now, once; -1: off. */
void pc__tree_fail_alloc(long nth);
/* Value entries stay below 2^62 (workingset packs 55 bits of age), so
 * none equals store's (void *)-1 failure. */

/* ------------------------------------------------------------------ */
/* pagewait.c: page lock and bit waits on hashed wait queues.          */
/*
 * 256 queues per cache, hashed by page address.  PG_waiters is set on a
 * page while a waiter for it is queued; with the waiters bit policy on,
 * unlock_page and end_page_writeback look at a queue only when it is set.
 * Waiters sleep on a futex of their own; unlock hands the lock directly to
 * the first exclusive waiter.
 */
#define PC_WAITQ_BITS 8
#define PC_NR_WAITQ (1u << PC_WAITQ_BITS)

struct pc_waiter;
struct pc_waitq {
	pthread_mutex_t lock;
	struct pc_waiter *head, *tail;
	_Atomic uint64_t lookups;	/* times this queue was searched */
	_Atomic uint64_t wakeups;	/* waiters woken */
} __attribute__((aligned(64)));

struct pc_pagewait {
	bool waiters_bit;	/* read-only after init */
	struct pc_waitq q[PC_NR_WAITQ];
};

void pc__pagewait_init(struct pc_pagewait *w, bool waiters_bit);
void pc__pagewait_fini(struct pc_pagewait *w);
void pc__lock_page(struct pc_pagewait *w, struct pc_page *p);
bool pc__trylock_page(struct pc_page *p);
void pc__unlock_page(struct pc_pagewait *w, struct pc_page *p);
/*
 * Sleep until @bit has been cleared since the call: for PG_locked the lock
 * may already be handed to its next owner when this returns (look at
 * PG_uptodate, not at the lock); for PG_writeback it loops while set.
 * Only PG_locked and PG_writeback can be waited on.
 */
void pc__wait_on_page_bit(struct pc_pagewait *w, struct pc_page *p, int bit);
/* Clear PG_writeback and wake its waiters. */
void pc__end_page_writeback_bit(struct pc_pagewait *w, struct pc_page *p);
uint64_t pc__pagewait_lookups(struct pc_pagewait *w);
uint64_t pc__pagewait_wakeups(struct pc_pagewait *w);

/* ------------------------------------------------------------------ */
/* io.c, io_uring.c, io_sync.c, io_fault.c: the I/O backends.          */

enum pc_io_op { PC_IO_READ, PC_IO_WRITE };

struct pc_io_req {
	int fd;
	int op;			/* enum pc_io_op */
	struct iovec *iov;	/* O_DIRECT fds: 4 KiB-aligned, whole blocks */
	int iovcnt;
	off_t off;
	bool dontneed;		/* buffered fallback fd: drop the kernel's copy */
	ssize_t res;		/* at end_io: bytes done, or -errno */
	void (*end_io)(struct pc_io_req *req);	/* once, from any thread */
	void *priv;
	struct pc_io_req *next;	/* free for the submitter's use */
};

struct pc_io;
struct pc_io_ops {
	const char *name;
	int (*create)(struct pc_io **out, unsigned depth);
	/* Waits for every request in flight, then frees. */
	void (*destroy)(struct pc_io *io);
	/*
	 * Queue @n requests and start them.  end_io is called exactly once
	 * for each, possibly before submit returns, possibly in another
	 * thread.  A transfer cut short with progress is continued; a read
	 * that meets end of file ends with the bytes it got.  Returns 0 (all
	 * requests accepted); never fails a request by its return value.
	 */
	int (*submit)(struct pc_io *io, struct pc_io_req **reqs, unsigned n);
};

extern const struct pc_io_ops pc__io_uring_ops;
extern const struct pc_io_ops pc__io_sync_ops;
extern const struct pc_io_ops pc__io_fault_ops;

/* Look an ops table up by name ("uring", "sync", "fault"); NULL if none. */
const struct pc_io_ops *pc__io_ops_by_name(const char *name);

/* io.c: what the backends share. */
size_t pc__io_req_bytes(const struct pc_io_req *req);
int pc__io_iov_slice(struct iovec *dst, int max, const struct iovec *src,
		     int cnt, size_t skip, size_t len);
bool pc__io_eof_einval(const struct pc_io_req *req, size_t done, ssize_t err);
ssize_t pc__io_transfer(const struct pc_io_req *req, size_t limit);
int pc__io_dontneed(const struct pc_io_req *req, size_t len);
int pc__io_sync_range_err(int err);
void pc__io_sleep_us(unsigned us);

/*
 * The fault backend (for tests) wraps the sync backend.  Rules are matched
 * in order on each request; the first that matches applies.
 */
struct pc_io_fault {
	int op;			/* PC_IO_READ, PC_IO_WRITE, or -1 for both */
	int fd;			/* -1: any */
	off_t off_lo, off_hi;	/* request must overlap [off_lo, off_hi) */
	int error;		/* errno to fail with (EIO, ENOSPC); 0: none */
	bool short_io;		/* do half the transfer, then fail w/ @error */
	unsigned delay_us;	/* sleep before doing the request */
	int count;		/* times it applies; -1 forever */
};
/*
 * A rule with off_hi == 0 has no upper bound (a zeroed rule matches every
 * offset).  hits: requests any rule applied to; clear resets it too.  On a
 * backend that is not the fault one, add returns -EINVAL, the others do
 * nothing.  An error after some bytes ends a request with -errno.
 */
int pc__io_fault_add(struct pc_io *io, const struct pc_io_fault *rule);
void pc__io_fault_clear(struct pc_io *io);
uint64_t pc__io_fault_hits(struct pc_io *io);

/* ------------------------------------------------------------------ */
/* The objects.                                                        */

struct pc_config {
	uint64_t memory;		/* bytes */
	int nodes;			/* 0 = auto */
	char io[16];
	uint64_t ra_max_pages;		/* readahead.max; PC_RA_MAX_AUTO: unset */
	int batch_remove;		/* 0 off, 1 on, 2 sorted */
	int contention_backoff;		/* 0 off, 1 sleepy, 2 blunt */
	bool node_reclaim;
	bool mapping_sticky;
	bool dirty_spread;
	bool deferred_activation;
	bool single_marker;
	bool waiters_bit;
	bool numa_balancing;
	bool kswapd;			/* reclaim.kswapd: background reclaim */
	int stickiness;			/* cache.stickiness: 0 off, 1 auto, 2 always */
	unsigned dirty_ratio;		/* percent of dirtyable memory */
	unsigned dirty_background_ratio;
	uint64_t dirty_bytes;		/* overrides the ratio when set */
	uint64_t dirty_background_bytes;
	unsigned dirty_time_ms;		/* 0: off */
	unsigned dirty_expire_ms;
	unsigned writeback_interval_ms;
	unsigned watermark_scale;	/* per 10000 of a node's frames */
	unsigned numa_scan_ms;		/* numa.scan_period_ms: initial */
	unsigned numa_migrate_rate;	/* pages per second */
	char trace[256];		/* trace=PATH; empty: off */
};

int pc__config_parse(struct pc_config *cfg, const char *s);

enum pc_lru_list { PC_LRU_INACTIVE, PC_LRU_ACTIVE, PC_NR_LRU };

struct pc_lru {
	uint32_t head, tail;		/* frame numbers; head = most recent */
	_Atomic uint64_t nr;		/* written under lru_lock */
};

struct pc_node {
	int id;
	struct pc_cache *cache;
	uint32_t first_pfn, nr_frames;	/* read-only after create */
	uint64_t wmark_min, wmark_low, wmark_high;	/* read-only */

	struct pc_lock free_lock;
	uint32_t free_head;		/* free_lock; linked through lru_next */
	_Atomic uint64_t nr_free;	/* written under free_lock */

	struct pc_lock lru_lock;
	struct pc_lru lru[PC_NR_LRU];	/* lru_lock */

	_Atomic uint64_t nonresident_age;	/* workingset clock */
	_Atomic uint64_t dirty_pages;	/* pages dirty on this node */

	/* kswapd: kswapd_mtx */
	pthread_t kswapd;
	bool kswapd_started;
	pthread_mutex_t kswapd_mtx;
	pthread_cond_t kswapd_cond;	/* kswapd sleeps here */
	pthread_cond_t alloc_cond;	/* allocators wait for progress */
	bool kswapd_wake;
	_Atomic bool stop;
	_Atomic uint64_t reclaim_progress;	/* bumped when pages are freed */
	_Atomic int kswapd_active;
	/*
	 * Pages added to low (twice that to high) while direct reclaim keeps
	 * happening (vmscan.c): kswapd starts earlier and stops later.
	 * Atomic, read without a lock.
	 */
	_Atomic uint64_t wmark_boost;
};

struct pc_bdi {
	dev_t dev;
	struct pc_cache *cache;
	struct pc_lock lock;
	struct pc_mapping *dirty_head, *dirty_tail;	/* lock; oldest first */
	pthread_mutex_t wake_mtx;
	pthread_cond_t wake_cond;
	pthread_cond_t done_cond;	/* a writeback pass finished */
	unsigned work;			/* wake_mtx: PC_WB_* requests */
	uint64_t passes;		/* wake_mtx: passes finished */
	_Atomic bool stop;
	pthread_t thread;
	bool started;
	_Atomic uint64_t write_bw;	/* bytes per second, smoothed */
	_Atomic uint64_t read_bw;	/* dropbehind.c: bytes/s of large reads,
					   smoothed; 0 until measured */
	_Atomic uint64_t written;	/* bytes written since create */
	uint64_t bw_stamp_ns, bw_written;	/* bw_lock */
	_Atomic int in_flight;		/* write requests in flight */
	struct pc_bdi *next;		/* c->bdi_lock */
	/* writeback.c, bdi.c (see their top comments): */
	pthread_mutex_t bw_lock;	/* the bandwidth period (trylock) */
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
	pthread_mutex_t throttle_mtx;
	pthread_cond_t throttle_cond;	/* CLOCK_MONOTONIC */
	uint64_t throttle_gen;		/* throttle_mtx: bumped at each wake */
	_Atomic int throttled;		/* writers asleep in the throttle */
};

#define PC_WB_BACKGROUND 0x1
#define PC_WB_RECLAIM 0x2
#define PC_WB_ALL 0x4

struct pc_mapping {
	struct pc_cache *cache;		/* read-only */
	dev_t dev;			/* read-only */
	ino_t ino;			/* read-only */
	int fd;				/* backing fd, read-only until free */
	bool direct;			/* fd has O_DIRECT */
	struct pc_bdi *bdi;		/* read-only */

	pthread_rwlock_t i_rwsem;	/* see the lock order */
	_Atomic int64_t size;		/* bytes; changed under i_rwsem */
	pthread_mutex_t disk_size_lock;	/* serializes ftruncate(fd) */
	int64_t disk_size;		/* disk_size_lock */

	struct pc_lock tree_lock;
	struct pc_tree tree;		/* tree_lock for writers; RCU readers */
	_Atomic uint64_t nr_pages;
	_Atomic uint64_t nr_dirty;
	_Atomic uint64_t nr_writeback;
	_Atomic uint32_t wb_err;	/* errseq */
	_Atomic int first_node;		/* numa.mapping_sticky; -1 unset */
	/* readahead.c: 1 + the last page read by each open file reading it
	   sequentially (f->ra_stream); 0: a free slot */
	_Atomic uint64_t stream_pos[PC_RA_STREAMS];

	/* bdi->lock */
	struct pc_mapping *dirty_prev, *dirty_next;
	_Atomic bool on_dirty_list;
	uint64_t dirtied_ns;

	/* c->mappings_lock */
	struct pc_mapping *hash_next;
	struct pc_mapping *closed_prev, *closed_next;	/* closed, cached */
	bool on_closed_list;
	int nr_open;
	_Atomic int refs;		/* table + files + transient (flusher) */
	bool unlinked;
	bool dead;			/* being torn down */
};

/* Readahead state of one open file (the kernel's file_ra_state). */
struct pc_ra {
	uint64_t start;		/* first page of the current window */
	unsigned size;		/* pages in it */
	unsigned async_size;	/* marker at start + size - async_size */
	uint64_t prev_index;	/* last page read, for sequential detection */
	unsigned max;		/* largest window, pages */
	bool holes;		/* the last window was all holes (no I/O) */
};

struct pc_file {
	struct pc_cache *cache;
	struct pc_mapping *mapping;
	int flags;			/* open flags */
	uint32_t err_cursor;		/* errseq seen */
	pthread_mutex_t ra_lock;	/* ra, drop; uncontended in practice */
	struct pc_ra ra;
	struct pc_page *drop[PC_DROP_BATCH];	/* use-once pages to drop */
	uint64_t drop_index[PC_DROP_BATCH];	/* their indices (unpinned) */
	unsigned nr_drop;
	_Atomic int ra_stream;		/* 0: not reading sequentially; k > 0:
					   owns mapping->stream_pos[k - 1];
					   -1: no slot was free.  ra_lock */
	_Atomic int advice;		/* POSIX_FADV_* of the whole file */
	_Atomic uint64_t wnext;		/* write stream detection */
	_Atomic uint64_t wrun;		/* pages written sequentially */
	struct pc_file *prev, *next;	/* c->files, c->mappings_lock */
};

/* Per-thread, per-cache context (cache.c): node, LRU batches. */
struct pc_tctx {
	struct pc_cache *cache;
	uint64_t cache_id;
	int node;
	unsigned shard;
	pthread_mutex_t lock;		/* batches; remote drains take it */
	struct pc_page *add[PC_LRU_BATCH];
	unsigned nr_add;
	struct pc_page *act[PC_LRU_BATCH];
	unsigned nr_act;
	unsigned dirty_ratelimit;	/* pages dirtied since last throttle */
	unsigned nr_dirtied_pause;	/* writeback.c: check after this many */
	int64_t bdp_owed_ns;		/* writeback.c: pause owed (paced) */
	uint64_t bdp_period;		/* writeback.c: counted as a dirtier */
	struct pc_bdi *bdp_bdi;		/* ... of this bdi, in this period */
	bool in_reclaim;		/* direct reclaim recursion guard */
	struct pc_tctx *next;		/* c->tctx_lock */
};

struct pc_trace;
struct pc_numab;		/* migrate.c */

struct pc_cache {
	struct pc_config cfg;		/* read-only after create */
	uint64_t id;			/* unique in the process */
	struct pc_page *pages;		/* read-only after create */
	char *data;
	uint64_t nr_frames;
	uint32_t frames_per_node;	/* every node has as many */
	int nr_nodes;
	struct pc_node *nodes;

	const struct pc_io_ops *io_ops;
	struct pc_io *io;
	struct pc_pagewait wait;
	struct pc_vmstat stat;
	struct pc_trace *trace;
	struct pc_numab *numab;		/* numa.balancing; NULL when off: set at
					   create, cleared at destroy */

	pthread_mutex_t mappings_lock;
	struct pc_mapping **hash;	/* mappings_lock */
	unsigned hash_size;
	struct pc_mapping *closed_head, *closed_tail;	/* mappings_lock */
	struct pc_file *files;		/* mappings_lock: open files */
	unsigned nr_closed;
	unsigned nr_mappings;

	pthread_mutex_t bdi_lock;
	struct pc_bdi *bdis;		/* bdi_lock */

	pthread_mutex_t tctx_lock;
	struct pc_tctx *tctxs;		/* tctx_lock */
	_Atomic unsigned next_node;	/* round-robin for new threads */
	_Atomic unsigned next_shard;

	_Atomic uint64_t dirty_limit;	/* pages, refreshed by writeback.c */
	_Atomic uint64_t dirty_bg_limit;
	_Atomic uint64_t nr_shadows;	/* all mappings */
	uint64_t max_shadows;		/* read-only */
	_Atomic bool stopping;
	_Atomic int tree_contended;	/* contention_backoff: seen by kswapd */
	_Atomic int blunt_owner;	/* =blunt: node of the one kswapd */
	_Atomic uint64_t tree_contended_ns;	/* =blunt: last contention seen */
	_Atomic int shadow_trim;	/* workingset.c: a trim is wanted/running */
};

static inline uint32_t page_pfn(struct pc_cache *c, const struct pc_page *p)
{
	return (uint32_t)(p - c->pages);
}
static inline struct pc_page *pfn_page(struct pc_cache *c, uint32_t pfn)
{
	return &c->pages[pfn];
}
static inline void *page_data(struct pc_cache *c, const struct pc_page *p)
{
	(void)c;
	return p->data;
}
static inline struct pc_node *page_node(struct pc_cache *c,
					const struct pc_page *p)
{
	return &c->nodes[page_pfn(c, p) / c->frames_per_node];
}
/* The low and high marks in force: the fixed ones plus the boost. */
static inline uint64_t node_wmark_low(struct pc_node *n)
{
	return n->wmark_low + atomic_load_explicit(&n->wmark_boost,
						   memory_order_relaxed);
}
static inline uint64_t node_wmark_high(struct pc_node *n)
{
	return n->wmark_high + 2 * atomic_load_explicit(&n->wmark_boost,
							memory_order_relaxed);
}

/* cache.c */
struct pc_tctx *pc__tctx(struct pc_cache *c);
void pc__tctx_drain_all(struct pc_cache *c);
struct pc_cache *pc__page_cache(const struct pc_page *p);	/* by address */

/* node.c: frames, free lists, watermarks, allocation. */
int pc__nodes_init(struct pc_cache *c);
void pc__nodes_fini(struct pc_cache *c);
/*
 * A free frame, refcount 1, flags clear, from @nid (or the policy's choice
 * when -1), reclaiming as needed.  NULL after the bounded wait when nothing
 * can be freed.  @m guides mapping_sticky; @for_write guides dirty_spread.
 */
#define PC_GFP_WRITE 0x1	/* page will be dirtied: numa.dirty_spread */
#define PC_GFP_NORETRY 0x2	/* readahead: no direct reclaim, fail fast */
struct pc_page *pc__alloc_page(struct pc_cache *c, struct pc_mapping *m,
			       unsigned gfp);
void pc__free_page(struct pc_cache *c, struct pc_page *p);
/* A frame of node @nid only if it stays above its low mark; never reclaims. */
struct pc_page *pc__alloc_page_on(struct pc_cache *c, int nid);
/* Drop a reference; the last one frees the frame (off the LRU first). */
void pc__put_page(struct pc_cache *c, struct pc_page *p);
/* The last reference is gone: off the LRU, back to the free list. */
void pc__page_release(struct pc_cache *c, struct pc_page *p);
void pc__page_sanity(struct pc_cache *c, struct pc_page *p);

/* lru.c */
void pc__lru_add(struct pc_cache *c, struct pc_page *p);	/* takes a ref */
void pc__mark_accessed(struct pc_cache *c, struct pc_page *p);
void pc__lru_drain(struct pc_cache *c, struct pc_tctx *t);
void pc__lru_del_locked(struct pc_node *n, struct pc_page *p);
void pc__lru_add_locked(struct pc_node *n, struct pc_page *p, bool tail);
/* Put a page under writeback with PG_reclaim at its inactive list's tail. */
void pc__lru_rotate_reclaimable(struct pc_cache *c, struct pc_page *p);
void pc__deactivate_page(struct pc_cache *c, struct pc_page *p);

/* vmscan.c */
int pc__kswapd_start(struct pc_cache *c);
void pc__kswapd_stop(struct pc_cache *c);
void pc__wakeup_kswapd(struct pc_cache *c, struct pc_node *n);
/* Direct reclaim on @n; returns pages freed. */
unsigned long pc__try_to_free_pages(struct pc_cache *c, struct pc_node *n);
/*
 * The same, and *busy gets how many of the pages it looked at will become
 * reclaimable without their users' help (dirty, under writeback, locked
 * for I/O) as opposed to pinned: the allocator waits longer for those.
 */
unsigned long pc__direct_reclaim(struct pc_cache *c, struct pc_node *n,
				 unsigned long *busy);
/* Remove a clean, locked page from its mapping, leaving a shadow. */
bool pc__remove_mapping(struct pc_cache *c, struct pc_page *p, bool shadow);

/* workingset.c */
void *pc__workingset_eviction(struct pc_cache *c, struct pc_page *p);
void pc__workingset_refault(struct pc_cache *c, struct pc_page *p, void *shadow);
void pc__workingset_activation(struct pc_cache *c, struct pc_page *p);
/*
 * Delete stale shadow entries of every mapping until the count is at most
 * 3/4 of c->max_shadows; returns how many.  kswapd calls it when an
 * eviction asked (c->shadow_trim); no lock held.
 */
uint64_t pc__workingset_trim(struct pc_cache *c);

/* filemap.c */
struct pc_page *pc__find_get_page(struct pc_mapping *m, uint64_t index);
int pc__add_to_page_cache(struct pc_mapping *m, struct pc_page *p,
			  uint64_t index);
void pc__delete_from_page_cache_locked(struct pc_mapping *m,
				       struct pc_page *p, void *shadow);
/* Read a locked page and wait; it stays locked.  0 or -EIO. */
int pc__read_page_sync(struct pc_mapping *m, struct pc_page *p);
struct read_wait;
/* Returns the pages zero-filled without I/O (holes, past the disk's EOF). */
unsigned pc__read_pages(struct pc_mapping *m, struct pc_page **pages,
			unsigned nr, struct read_wait *wait);
void pc__truncate_pages(struct pc_mapping *m, uint64_t from_index);
int pc__fix_disk_size(struct pc_mapping *m, bool wait);

/* readahead.c */
void pc__ra_init(struct pc_file *f);
/* Read @nr pages from @index into the cache, not waiting (window I/O). */
unsigned pc__do_page_cache_ra(struct pc_file *f, uint64_t index, unsigned nr,
			      unsigned lookahead);
void pc__sync_readahead(struct pc_file *f, uint64_t index, unsigned req);
void pc__async_readahead(struct pc_file *f, struct pc_page *p,
			 uint64_t index, unsigned req);
/* The last page a read through @f touched (sequential detection). */
void pc__ra_note_read(struct pc_file *f, uint64_t index);
uint64_t pc__ra_last_read(struct pc_file *f);	/* UINT64_MAX: none yet */
/* A read continued the previous one, to page @last: @f is a stream. */
void pc__ra_stream_note(struct pc_file *f, uint64_t last);
/* @f reads sequentially no more: its m->stream_pos slot is freed. */
void pc__ra_stream_end_locked(struct pc_file *f);

/* dropbehind.c: use-once pages */
/* How a read touched a page, for pc__mark_read. */
#define PC_READ_FIRST 0x1	/* not the page the previous read ended in */
#define PC_READ_SEQ 0x2		/* the previous read's page or the next one */
#define PC_READ_CONSUMED 0x4	/* read through its last byte (or EOF) */
/* A page was read through @f (PC_READ_*); true: a readahead hit. */
bool pc__mark_read(struct pc_file *f, struct pc_page *p, unsigned how);
/* A read of @bytes took @ns from submission to completion (read_bw). */
void pc__ra_account_read(struct pc_mapping *m, uint64_t bytes, uint64_t ns);
/* At close: drop the use-once pages @f gathered, end its stream. */
void pc__dropbehind_flush(struct pc_file *f);
/*
 * Drop a clean page if only @expected refs remain (@force: even if it was
 * referenced or is active); the page is not locked by the caller, @wait:
 * sleep for its lock rather than give up.
 */
bool pc__drop_page(struct pc_cache *c, struct pc_page *p, int expected,
		   bool force, bool wait);
/* Drop locked clean pages of @m (caller's ref + the mapping's) in one batch. */
unsigned pc__drop_pages_locked(struct pc_cache *c, struct pc_mapping *m,
			       struct pc_page **pages, unsigned nr);
/* Are stream pages on @m's device use-once (cache.stickiness), @read or write? */
bool pc__stream_use_once(struct pc_mapping *m, bool read);
/* Does cache.stickiness drop use-once stream pages on @m's device now? */
bool pc__stream_dropbehind(struct pc_mapping *m);

/* writeback.c */
void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p);
/* Write dirty pages of [start, end]; @sync waits for locks, tags TOWRITE. */
int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget);
int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end);
int pc__fsync_range(struct pc_file *f, uint64_t start, uint64_t end,
		    bool datasync);
void pc__end_page_writeback(struct pc_cache *c, struct pc_page *p);
void pc__balance_dirty_pages(struct pc_mapping *m, unsigned nr_dirtied);
void pc__update_dirty_limits(struct pc_cache *c);
void pc__account_page_cleaned(struct pc_mapping *m, struct pc_page *p);
/*
 * Write all of @m back and wait; pages whose write failed are tried again,
 * at most a bounded number of times (a device that keeps failing must not
 * hold up destroy forever).  Returns the pages left dirty.
 */
uint64_t pc__writeback_mapping_retry(struct pc_mapping *m);
uint32_t pc__errseq_sample(struct pc_mapping *m);
int pc__errseq_check_advance(struct pc_mapping *m, uint32_t *cursor);
void pc__errseq_set(struct pc_mapping *m, int err);

/* bdi.c */
struct pc_bdi *pc__bdi_get(struct pc_cache *c, dev_t dev);
void pc__bdis_fini(struct pc_cache *c);
void pc__bdi_mark_dirty(struct pc_mapping *m);	/* put on dirty list */
void pc__bdi_remove(struct pc_mapping *m);
void pc__bdi_wakeup(struct pc_bdi *b, unsigned work);
void pc__bdi_wakeup_all(struct pc_cache *c, unsigned work);
/* Ask every flusher to write everything and wait until done. */
void pc__bdi_sync_all(struct pc_cache *c);
void pc__bdi_account_written(struct pc_bdi *b, uint64_t bytes);
/* Sleep on @b's throttle queue up to @ns; returns the time slept. */
int64_t pc__bdi_throttle_pause(struct pc_bdi *b, int64_t ns);
void pc__bdi_throttle_wake(struct pc_bdi *b);	/* end every pause */

/* inode.c: mappings, open files */
bool pc__mapping_tryget(struct pc_mapping *m);
void pc__mapping_put(struct pc_mapping *m);
int pc__mappings_shutdown(struct pc_cache *c);

/* migrate.c: NUMA balancing (numa.balancing) */
int pc__numa_balancing_start(struct pc_cache *c);
void pc__numa_balancing_stop(struct pc_cache *c);
/* A reader touched a page the scanner marked (PG_hint): count, decide. */
void pc__numa_hint_fault(struct pc_cache *c, struct pc_page *p);

/* trace.c */
enum pc_trace_event {
	PC_TR_LRU_INSERT, PC_TR_ACTIVATE, PC_TR_DEACTIVATE, PC_TR_ROTATE,
	PC_TR_EVICT, PC_TR_REFAULT, PC_TR_WB_START, PC_TR_WB_END, PC_TR_DIRTY,
	PC_TR_NR_EVENTS
};
extern _Atomic int pc__trace_on;	/* caches with tracing on */
int pc__trace_open(struct pc_cache *c, const char *path);
void pc__trace_close(struct pc_cache *c);
void pc__trace_emit(struct pc_cache *c, int event, struct pc_page *p,
		    uint32_t arg);
#define pc_trace(c, ev, p, arg) \
	do { \
		if (__builtin_expect((c)->trace != NULL, 0)) \
			pc__trace_emit((c), (ev), (p), (arg)); \
	} while (0)

#endif /* PC_INTERNAL_H */
