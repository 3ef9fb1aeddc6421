/*
 * internal.h - the object graph of the library and the prototypes its
 * core files share.
 *
 * The objects (docs/design.md, "Data structures"):
 *
 *   pc_cache ─┬─ nodes[]   budget slices: frames, free list, LRU, kswapd
 *             ├─ pages[]   one struct pc_page per frame (page.h)
 *             ├─ data      the frames themselves, 4 KiB aligned
 *             ├─ mappings  dev:ino -> pc_mapping (kept after last close)
 *             ├─ bdis      one per st_dev: dirty mappings, flusher thread
 *             ├─ io        the I/O backend (io.h: ops table)
 *             └─ wait      hashed page wait queues (pagewait.h)
 *
 *   pc_file ── pc_mapping ── tree (radix, tree.h) ── pages / shadows
 *
 * The other headers, one concept each.  internal.h includes these, whose
 * types the objects embed:
 *   base.h       PC_ASSERT, pc_min/pc_max, PC_EXPORT, the clocks
 *   lock.h       the ranked locks and the whole lock order (lock.c, a leaf)
 *   vmstat.h     the counters
 *   config.h     struct pc_config and the policies' modes
 *   list.h       the doubly linked list
 *   page.h       struct pc_page, its flags and reference count
 *   tree.h       the radix tree (tree.c, a leaf)
 *   pagewait.h   page lock and bit waits (pagewait.c, a leaf)
 * and these only the files that use them include:
 *   node.h       struct pc_node: a node's frames, LRU lists, reclaim
 *   bdi.h        struct pc_bdi: per-device dirty lists, flusher, throttle
 *   readahead.h  readahead windows, streams, use-once pages (dropbehind.c)
 *   backing.h    the mappings' descriptors, coherence with the kernel
 *   tracepoint.h the trace events the core emits (trace.c)
 *   trace_fmt.h  the trace file's format (shared with tools/trace)
 *   io.h         the I/O backends and fault rules (io*.c, leaves)
 *   arena.h      huge-page arenas of tree nodes (arena.c, a leaf)
 *   numa_topology.h  the machine's NUMA nodes (numa.c)
 * The leaves (lock.c too) include leaves' headers only: they cannot call
 * into the core, and tests/test_leaves.sh keeps it so.
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include "base.h"
#include "config.h"
#include "list.h"
#include "lock.h"
#include "mem.h"
#include "page.h"
#include "pagewait.h"
#include "tree.h"
#include "vmstat.h"

#define PC_PAGE_SHIFT 12
#define PC_LRU_BATCH 15		/* pages in a per-thread LRU batch */
#define PC_RECLAIM_BATCH 32	/* SWAP_CLUSTER_MAX */
#define PC_PCP_MAX 64		/* memory.thread_frames at most (pcp.c) */
#define PC_MAX_NODES 64
#define PC_MAX_IO_PAGES 256	/* largest request: 1 MiB */
#define PC_DROP_BATCH 32	/* use-once pages dropped per tree-lock hold */
#define PC_RA_STREAMS 4		/* streams of one file tracked (readahead.c) */

struct pc_cache;
struct pc_node;
struct pc_mapping;
struct pc_bdi;
struct pc_io;
struct pc_io_ops;


/*
 * One process's descriptors of a mapping's file (backing.c).  A private
 * cache keeps them in the mapping (m->bk); a shared cache keeps them per
 * process, in that process's own memory (pc__bk, local.c), since a
 * descriptor means nothing in another process.
 */
struct pc_backing {
	/*
	 * Changed under mappings_lock and disk_size_lock, only while the
	 * mapping is closed - but for fd's one upgrade from read-only to
	 * read-write at a writable open, which keeps the old one open in
	 * ro_fd; -1 while it holds none.  Used by holders of a reference
	 * that have it open or see it dirty (it keeps them then), by
	 * others under disk_size_lock.
	 */
	_Atomic int fd;			/* O_DIRECT where the fs takes it */
	_Atomic int tail_fd;		/* buffered twin for a partial last
					   block; -1 until one is written */
	int ro_fd;			/* fd before its upgrade, or -1 */
	bool fd_rdonly;			/* fd is O_RDONLY: no writer had it */
	uint64_t serial;		/* shared caches: the mapping's serial
					   these belong to (local.c) */
};

struct pc_mapping {
	struct pc_cache *cache;		/* read-only */
	dev_t dev;			/* read-only */
	ino_t ino;			/* read-only */
	struct pc_backing bk;		/* private caches: see pc__bk */
	uint32_t slot;			/* shared caches: read-only; its
					   index in each process's table of
					   descriptors (local.c) */
	uint64_t serial;		/* read-only: unique in the cache */
	bool direct;			/* fd has O_DIRECT; read-only */
	struct pc_bdi *bdi;		/* read-only */
	_Atomic bool home_rw;		/* shared: the home holds a writable
					   descriptor (home.c) */

	struct pc_rwlock i_rwsem;	/* see the lock order */
	struct pc_lock pos_lock;	/* fpos.c: the shared file position
					   callers' (pc_file_pos_lock) */
	_Atomic int64_t size;		/* bytes; changed under i_rwsem */
	struct pc_lock disk_size_lock;	/* ftruncate(fd), seen, fd changes */
	struct {			/* disk_size_lock: the file on the disk */
		int64_t size;		/* as the cache last wrote or saw it */
		struct timespec mtime;		/* (coherence.c) */
		bool owed;		/* our write ended since: fstat it */
	} seen;
	/* readpage.c: pages [lo, hi) last found to be data on disk (SEEK_DATA),
	   lo << 32 | hi; 0: none.  Atomic: read and written without a lock */
	_Atomic uint64_t data_extent;

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
	struct pc_link dirty_link;	/* on b->dirty */
	_Atomic bool on_dirty_list;
	uint64_t dirtied_ns;

	/* c->mappings_lock */
	struct pc_mapping *hash_next;
	struct pc_link closed_link;	/* on c->closed: closed, cached */
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
	_Atomic uint32_t err_cursor;	/* errseq seen; moved by CAS */
	struct pc_lock ra_lock;	/* ra, drop; uncontended in practice */
	struct pc_ra ra;
	struct pc_page *drop[PC_DROP_BATCH];	/* use-once pages to drop */
	uint64_t drop_index[PC_DROP_BATCH];	/* their indices (unpinned) */
	unsigned nr_drop;
	unsigned drop_skip;		/* batches before the next look for
					   stale pages (dropbehind.c) */
	_Atomic int ra_stream;		/* 0: not reading sequentially; k > 0:
					   owns mapping->stream_pos[k - 1];
					   -1: no slot was free.  ra_lock */
	_Atomic int advice;		/* POSIX_FADV_* of the whole file */
	_Atomic uint64_t wnext;		/* write stream detection */
	_Atomic uint64_t wrun;		/* pages written sequentially */
	struct pc_link link;		/* on c->files, c->mappings_lock */
	int32_t pid;			/* the opener: a shared cache closes
					   the files of a process that died
					   (pc__files_reap); mappings_lock */
};

/* struct pc_tctx's held[]: which slot records what. */
#define PC_HELD_ONE 0			/* the read or write path's page */
#define PC_HELD_ISO_AT 1		/* vmscan: its isolated batch */
#define PC_HELD_WB_AT (PC_HELD_ISO_AT + PC_RECLAIM_BATCH)
#define PC_HELD_WB 64			/* writeback.c: a gang (WB_GANG) */
#define PC_HELD_DRAIN_AT (PC_HELD_WB_AT + PC_HELD_WB)	/* lru.c: a drain's */
#define PC_HELD_SLOTS (PC_HELD_DRAIN_AT + 2 * PC_LRU_BATCH)
#define PC_PINS 16			/* pins[]: pages a thread pinned */
#define PC_HELD_ISO (1u << 31)		/* the page is off its LRU by us */

/* Per-thread, per-cache context (tctx.c): node, LRU batches. */
struct pc_tctx {
	struct pc_cache *cache;
	uint64_t cache_id;
	int node;
	unsigned shard;
	struct pc_lock lock;		/* batches; remote drains take it */
	struct pc_page *add[PC_LRU_BATCH];
	unsigned nr_add;
	struct pc_page *act[PC_LRU_BATCH];
	unsigned nr_act;
	unsigned dirty_ratelimit;	/* pages dirtied since last throttle */
	unsigned nr_dirtied_pause;	/* throttle.c: check after this many */
	int64_t bdp_owed_ns;		/* throttle.c: pause owed (paced) */
	uint64_t bdp_period;		/* throttle.c: counted as a dirtier */
	struct pc_bdi *bdp_bdi;		/* ... of this bdi, in this period */
	bool in_reclaim;		/* direct reclaim recursion guard */
	/*
	 * pcp.c: free frames of node pcp_node taken off its free list
	 * together, handed to this thread's allocations from the end (the
	 * lowest frame last in, first out: ascending); t->lock (its owner
	 * and remote drains).  Count 0, out of the node's nr_free.
	 */
	uint32_t pcp[PC_PCP_MAX];
	_Atomic unsigned nr_pcp;	/* written under t->lock */
	int pcp_node;
	int32_t pid;			/* the thread's process (shared caches
					   hold every process's contexts) */
	struct pc_tctx *next;		/* c->tctx_lock */
	/*
	 * Shared caches: the pages this thread holds a reference on across
	 * code where its process may die, each as pfn + 1 (| PC_HELD_ISO:
	 * off its LRU list by this thread), 0 for none.  Written by the
	 * thread alone - recorded after its get (a release store: the get
	 * comes first), cleared before its put or before the reference goes
	 * to another holder (the put's RMW orders it) - so a death between
	 * the two can only leak a reference, never give one back twice.
	 * Read by the reaper of its process (pc__tctx_reap), who gives back
	 * what is recorded.  A line of its own: the read path writes it on
	 * every page.  Slots: PC_HELD_ONE, then vmscan's isolated batch, a
	 * writeback gang's pages (from the get to the io_pid mark), the
	 * copies a drain of LRU batches took (PC_HELD_ISO until on a list).
	 */
	_Atomic uint32_t held[PC_HELD_SLOTS] __attribute__((aligned(64)));
	/*
	 * Shared caches: the pins (pc_get_page) this thread took or gave
	 * back, each as (pfn + 1) << 32 | its net count (int32: a put from
	 * a thread other than the getter's is -1 here, +1 in the getter's);
	 * 0 for none.  Written by the thread alone with plain stores (a
	 * spare context, below: under c->tctx_lock), summed over the
	 * process's contexts by its reaper, which gives back what is left
	 * (tctx.c).  After the get, before the put: a death between can
	 * only leak.
	 */
	_Atomic uint64_t pins[PC_PINS] __attribute__((aligned(64)));
	bool spare;			/* no thread's: a process's overflow
					   and exited threads' pins */
};

struct pc_trace;
struct pc_numab;		/* migrate.c */
struct pc_shm;
struct pc_share;

/*
 * What one process keeps of a cache for itself, never in the cache's
 * memory: its I/O backend (a ring, a completion thread), and for a shared
 * cache its handle of the region, its descriptors of the mappings, its
 * socket to the home and (the home) the service thread.  A private cache
 * embeds it (c->local); a shared cache's is found in the process's table
 * (pc__local, local.c).
 */
struct pc_local {
	const struct pc_io_ops *io_ops;	/* NULL until this process's I/O is
					   made (io_local.c: at first use) */
	struct pc_io *io;
	struct pc_shm *shm;		/* shared: the region, as mapped here */
	bool home;			/* shared: this process runs the
					   cache's threads (home.c) */
	struct pc_backing *_Atomic *bk_dir;	/* shared: by m->slot (local.c) */
	_Atomic int sock;		/* shared: to send the home descriptors;
					   -1: not made yet (home.c) */
	pthread_t service;		/* the home: its service thread */
	bool service_started;
};

struct pc_cache {
	struct pc_config cfg;		/* read-only after create */
	uint64_t id;			/* unique in the process */
	/* Reserved at create for memory.max, never moved (node.c); all
	 * read-only after create. */
	struct pc_page *pages;		/* span_frames descriptors */
	char *data;			/* span_frames frames */
	uint64_t span_frames;		/* nr_nodes * frames_per_node */
	uint32_t frames_per_node;	/* every node's span (its stride) */
	int nr_nodes;
	struct pc_node *nodes;
	void *data_map, *pages_map;	/* what mmap returned, to unmap */
	size_t data_map_len, pages_map_len;
	size_t hugetlb_bytes;		/* data on hugetlbfs pages from c->data */
	/* The budget in frames, the sum of the nodes' shares: written by
	 * create and resize (c->resize_lock), read without a lock. */
	_Atomic uint64_t nr_frames;
	struct pc_lock resize_lock;	/* one pc_cache_resize at a time */

	bool shared;			/* read-only: in a region that many
					   processes map (share.c) */
	struct pc_share *share;		/* shared: the processes' common
					   state (share.c); NULL: private */
	_Atomic int *broken;		/* shared: the region's broken flag
					   (read-only; the same address in
					   every process); NULL: private */
	struct pc_local *local;		/* private: this process's part, in
					   its table (local.c), from
					   pc__cache_register on */
	bool io_fallback;		/* read-only: io=uring, none at create */
	struct pc_pagewait wait;
	struct pc_vmstat stat;
	struct pc_trace *trace;
	struct pc_numab *numab;		/* numa.balancing; NULL when off: set at
					   create, cleared at destroy */

	struct pc_lock mappings_lock;
	struct pc_mapping **hash;	/* mappings_lock */
	unsigned hash_size;
	struct pc_list closed;		/* mappings_lock: of pc_mapping
					   (closed_link), oldest first */
	struct pc_list files;		/* mappings_lock: open pc_files */
	unsigned nr_closed;		/* mappings_lock */
	unsigned nr_closed_fds;		/* mappings_lock: closed, holding fds */
	unsigned nr_mappings;		/* mappings_lock */
	unsigned fd_budget;		/* read-only: closed mappings' fds */

	struct pc_lock bdi_lock;
	struct pc_bdi *bdis;		/* bdi_lock */

	struct pc_lock tctx_lock;
	_Atomic(struct pc_tctx *) tctxs;	/* push: lock-free; unlink, walk:
					   tctx_lock (tctx.c) */
	_Atomic unsigned next_node;	/* round-robin for new threads */
	_Atomic unsigned next_shard;

	_Atomic uint64_t dirty_limit;	/* pages, refreshed by throttle.c */
	_Atomic uint64_t dirty_bg_limit;
	_Atomic uint64_t nr_shadows;	/* all mappings */
	_Atomic uint64_t max_shadows;	/* from the budget: resize_lock */
	_Atomic bool stopping;
	_Atomic uint64_t test_clock;	/* debug builds: pc__clock's value when
					   not 0 (pc__test_clock_set) */
	_Atomic int tree_contended;	/* contention_backoff: seen by kswapd */
	_Atomic int blunt_owner;	/* =blunt: node of the one kswapd */
	_Atomic uint64_t tree_contended_ns;	/* =blunt: last contention seen */
	_Atomic int shadow_trim;	/* workingset.c: a trim is wanted/running */
	struct pc_ebr *ebr;		/* read-only: every tree's reclamation
					   domain (ebr.h) */
};

static inline uint32_t page_pfn(struct pc_cache *c, const struct pc_page *p)
{
	return (uint32_t)(p - c->pages);
}
static inline struct pc_page *pfn_page(struct pc_cache *c, uint32_t pfn)
{
	return &c->pages[pfn];
}
/* A frame's data, found from its number alone (without its descriptor). */
static inline void *pfn_data(struct pc_cache *c, uint32_t pfn)
{
	return c->data + ((size_t)pfn << PC_PAGE_SHIFT);
}
static inline void *page_data(struct pc_cache *c, const struct pc_page *p)
{
	(void)c;
	return p->data;
}
/* local.c: shared caches (docs/design.md, "One cache for many processes") */
struct pc_local *pc__local_shared(struct pc_cache *c);
struct pc_backing *pc__bk_shared(const struct pc_mapping *m);
/* @m's descriptors can be kept in this process (a shared cache's: a chunk
 * of entries made): 0, or -ENOMEM.  Before an open gives @m one. */
int pc__bk_ready(const struct pc_mapping *m);
/* This process's pid (local.c keeps it, the fork handler renews it). */
extern pid_t pc__pid;
/* The io_pid to mark @c's pages under this process's I/O with (page.h). */
static inline int32_t pc__io_owner(const struct pc_cache *c, bool first)
{
	return c->shared ? (int32_t)pc__pid | (first ? PC_IO_FIRST : 0) : 0;
}
/* A dead process's I/O on @p: its write redirtied and ended, its read
 * unlocked for another reader to do (writeback.c, readpage.c). */
void pc__writeback_abandon(struct pc_cache *c, struct pc_page *p);
void pc__read_abandon(struct pc_cache *c, struct pc_page *p);
/* A dead process's page lock on @p, and its write completion's @mark left
 * on @p (PC_IO_ENDED, PC_IO_MOVING), put right (writeback.c; procs.c). */
void pc__lock_abandon(struct pc_cache *c, struct pc_page *p);
void pc__write_end_abandon(struct pc_cache *c, struct pc_page *p,
			   int32_t mark);
/* This process's part of @c (its entry in the table: local.c). */
static inline struct pc_local *pc__local(struct pc_cache *c)
{
	return c->shared ? pc__local_shared(c) : c->local;
}
/* This process's descriptors of @m (backing.c says who may use them). */
static inline struct pc_backing *pc__bk(const struct pc_mapping *m)
{
	return m->cache->shared ? pc__bk_shared(m) : (struct pc_backing *)&m->bk;
}
/*
 * Memory for the cache's objects: zeroed, 64-byte aligned; in the region
 * for a shared cache (at most 1 MiB an object), from malloc else.  NULL
 * when there is none.  pc__cache_free takes the size given.
 */
void *pc__cache_zalloc(struct pc_cache *c, size_t size);
void pc__cache_free(struct pc_cache *c, void *p, size_t size);
/* The cache's locks and condition variables: process-shared and robust in
 * a shared cache (lock.h), as pc__lock_init else. */
void pc__cache_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			 int stat);
void pc__cache_rwlock_init(struct pc_cache *c, struct pc_rwlock *l, int rank);
void pc__cache_cond_init(struct pc_cache *c, pthread_cond_t *cv,
			 bool monotonic);
/* This process's I/O backend for @c, made at its first use here. */
struct pc_io_req;
int pc__io_submit(struct pc_cache *c, struct pc_io_req **reqs, unsigned n);
/* Has this process's io_uring backend lost its ring (sync does the I/O)? */
bool pc__io_lost(struct pc_cache *c);
/* This process's backend for @c made (0 or -errno; the fallback to sync
 * said once), and ended (io_local.c). */
int pc__io_make(struct pc_cache *c, struct pc_local *l);
void pc__io_destroy(struct pc_cache *c);

/* c->closed, oldest first: the first closed mapping, the next one. */
static inline struct pc_mapping *closed_first(struct pc_cache *c)
{
	return pc_list_first_entry(&c->closed, struct pc_mapping, closed_link);
}
static inline struct pc_mapping *closed_next(struct pc_mapping *m)
{
	return pc_list_next_entry(m, struct pc_mapping, closed_link);
}

/* tctx.c: the process's caches and the threads' contexts in them. */
int pc__cache_register(struct pc_cache *c);
void pc__cache_unregister(struct pc_cache *c);
struct pc_tctx *pc__tctx(struct pc_cache *c);
/* Every context's LRU batches onto the lists and its frames (pcp.c)
 * back on the free lists: reclaim, resize, invalidation, destroy. */
unsigned pc__tctx_drain_all(struct pc_cache *c);	/* frames given back */
/* The contexts of process @pid's threads (it died): drained, freed. */
void pc__tctx_reap(struct pc_cache *c, pid_t pid);
/* The cache of this process's table that @p is a page of, or NULL: no
 * lock, no atomic read-modify-write (local.c). */
struct pc_cache *pc__page_cache(const struct pc_page *p);
/*
 * The references this thread holds (struct pc_tctx: held[]).  The
 * context to record them in: a shared cache's only (NULL: a private
 * cache records nothing, and every helper does nothing with NULL).
 */
static inline struct pc_tctx *pc__held_ctx(struct pc_cache *c)
{
	return c->shared ? pc__tctx(c) : NULL;
}
/* After the get: slot @i holds a reference on @p (@kind 0 or PC_HELD_ISO). */
static inline void pc__held_set(struct pc_tctx *t, int i, struct pc_cache *c,
				const struct pc_page *p, uint32_t kind)
{
	if (t && i >= 0)
		atomic_store_explicit(&t->held[i], (page_pfn(c, p) + 1) | kind,
				      memory_order_release);
}
/* Before the put (or the hand-off): slot @i holds nothing. */
static inline void pc__held_clear(struct pc_tctx *t, int i)
{
	if (t && i >= 0)
		atomic_store_explicit(&t->held[i], 0, memory_order_relaxed);
}
/*
 * A pin of @p taken (@delta 1, after the get) or given back (-1, before
 * the put) by this process, in a shared cache (@t: pc__held_ctx): no
 * atomic read-modify-write in the common case (the thread's own table).
 */
void pc__pin_note(struct pc_cache *c, struct pc_tctx *t,
		  const struct pc_page *p, int delta);
/* The slot of [@from, @from + @n) that records @p, or -1. */
int pc__held_find(struct pc_tctx *t, unsigned from, unsigned n,
		  struct pc_cache *c, const struct pc_page *p);

/* node.c: pages (node.h has the nodes). */
struct pc_arena;
/* The tree-node arena of the calling thread's node. */
struct pc_arena *pc__node_arena(struct pc_cache *c);
/* page_alloc.c: allocating and freeing pages */
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
/*
 * pcp.c: a frame of node @nid from @t's own list, refilled from the
 * node's free list while the node is above low (memory.thread_frames at
 * a time): consecutive allocations of one thread get frames side by side
 * however many threads allocate.  NULL: none (the caller takes one from
 * the free list as before).
 */
struct pc_page *pc__pcp_alloc(struct pc_cache *c, struct pc_tctx *t, int nid);
/* @t's frames back on their free list: frames given back. */
unsigned pc__pcp_drain(struct pc_cache *c, struct pc_tctx *t);
/* Tests: writeback's fallocate(2) fails as on a file system without it
 * (backing.c, pc__backing_extend).  Atomic: set by a test, read without
 * a lock. */
extern _Atomic bool pc__test_no_fallocate;
/* The same for @nr frames: one free-lock hold per run of one node. */
void pc__free_pages(struct pc_cache *c, struct pc_page **pages, unsigned nr);
/* pc__free_pages of a batch sorted so that it is handed out lowest frame
 * first (vmscan.c; @pages reordered): reclaim's and drop-behind's. */
void pc__free_batch(struct pc_cache *c, struct pc_page **pages, unsigned nr);
/* Drop a reference; the last one frees the frame (off the LRU first). */
void pc__put_page(struct pc_cache *c, struct pc_page *p);
/* The last reference is gone: off the LRU, back to the free list. */
void pc__page_release(struct pc_cache *c, struct pc_page *p);
/*
 * Debug builds: assert that @p's state hangs together (called where pages
 * change state: LRU add and delete, dirtying, writeback start and end,
 * free).  The caller holds a reference, or @p is being freed; @locked: the
 * caller holds its page lock, which dirtying and cleaning take, so the
 * dirty bit and the tags cannot move.  Release builds: nothing.
 */
#ifdef PC_DEBUG
void pc__page_sanity(struct pc_cache *c, struct pc_page *p, bool locked);
#else
static inline void pc__page_sanity(struct pc_cache *c, struct pc_page *p,
				   bool locked)
{
	(void)c;
	(void)p;
	(void)locked;
}
#endif

/* lru.c (the _locked list operations: node.h) */
void pc__lru_add(struct pc_cache *c, struct pc_page *p);	/* takes a ref */
void pc__mark_accessed(struct pc_cache *c, struct pc_page *p);
void pc__lru_drain(struct pc_cache *c, struct pc_tctx *t);
/* Put a page under writeback with PG_reclaim at its inactive list's tail. */
void pc__lru_rotate_reclaimable(struct pc_cache *c, struct pc_page *p);
void pc__deactivate_page(struct pc_cache *c, struct pc_page *p);

/* kswapd.c (reclaim of one node: vmscan.c, node.h) */
int pc__kswapd_start(struct pc_cache *c);
void pc__kswapd_stop(struct pc_cache *c);

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
/*
 * Insert @p (new, locked by pc__page_lock_new, one reference) at @index:
 * 0, -EEXIST (a page is there: another thread won the race) or -ENOMEM
 * (no tree node).  On failure the page is out of the tree but was seen:
 * its mapping was set before the insertion, so a thread that found the
 * frame by its number (resize.c's evict) may have queued on its lock.
 * The caller lets the lock go with pc__unlock_page, never a plain clear
 * of PG_locked: that waiter must be woken (issue 36).
 */
int pc__add_to_page_cache(struct pc_mapping *m, struct pc_page *p,
			  uint64_t index);
/*
 * Tests (debug builds): called by pc__add_to_page_cache with @p locked and
 * its mapping set, before the tree insertion - the window above.  NULL:
 * none.  Atomic: set by a test, read without a lock.  Release builds
 * never call it.
 */
typedef void pc__test_insert_fn(struct pc_mapping *m, struct pc_page *p,
				uint64_t index);
extern pc__test_insert_fn *_Atomic pc__test_insert_hook;
/*
 * Tests (debug builds): called by pc__wb_finish (writeback_io.c) for each
 * write that ended, with its first page, where PC_PARK_WB_ENDING parks:
 * the tag and the counters moved, PG_writeback still on.  NULL: none.
 */
typedef void pc__test_wb_ending_fn(struct pc_page *p);
extern pc__test_wb_ending_fn *_Atomic pc__test_wb_ending_hook;
#ifdef PC_DEBUG
static inline void pc__test_wb_ending(struct pc_page *p)
{
	pc__test_wb_ending_fn *fn = atomic_load_explicit(&pc__test_wb_ending_hook,
							 memory_order_acquire);

	if (fn)
		fn(p);
}
#else
static inline void pc__test_wb_ending(struct pc_page *p)
{
	(void)p;
}
#endif
#ifdef PC_DEBUG
static inline void pc__test_before_insert(struct pc_mapping *m,
					  struct pc_page *p, uint64_t index)
{
	pc__test_insert_fn *fn = atomic_load_explicit(&pc__test_insert_hook,
						      memory_order_acquire);

	if (fn)
		fn(m, p, index);
}
#else
static inline void pc__test_before_insert(struct pc_mapping *m,
					  struct pc_page *p, uint64_t index)
{
	(void)m;
	(void)p;
	(void)index;
}
#endif
void pc__delete_from_page_cache_locked(struct pc_mapping *m,
				       struct pc_page *p, void *shadow);
/* truncate.c */
void pc__truncate_pages(struct pc_mapping *m, uint64_t from_index);
/* Drop every clean page, waiting for those under writeback (dirty pages,
 * and those whose write failed, stay); i_rwsem held. */
void pc__invalidate_pages(struct pc_mapping *m);
/* Truncate to @len: ftruncate(2), then the cache; 0 or -errno (the cache
 * as it was).  i_rwsem held exclusively. */
int pc__truncate_locked(struct pc_mapping *m, off_t len);

/* readpage.c */
/*
 * Read @nr locked, not uptodate pages of consecutive indices, one
 * reference each, both given back at completion.  Returns the pages
 * zero-filled without I/O (holes, past the disk's EOF).  @now: pages[0]
 * is needed at once (its request is the caller's own).
 */
unsigned pc__read_pages(struct pc_mapping *m, struct pc_page **pages,
			unsigned nr, bool now);
/* Read a locked page and wait; it stays locked.  0 or -EIO. */
int pc__read_page_sync(struct pc_mapping *m, struct pc_page *p);

/* writeback.c */
/* Write dirty pages of [start, end]; @sync waits for locks, tags TOWRITE. */
int pc__writeback_range(struct pc_mapping *m, uint64_t start, uint64_t end,
			bool sync, long *budget);
/*
 * Write all of @m back and wait; pages whose write failed are tried again,
 * at most a bounded number of times (a device that keeps failing must not
 * hold up destroy forever).  Returns the pages left dirty.
 */
uint64_t pc__writeback_mapping_retry(struct pc_mapping *m);
/* writeback_io.c: writeback's requests and their completion */
void pc__end_page_writeback(struct pc_cache *c, struct pc_page *p);
/* sync.c: waiting for writeback, fsync */
int pc__wait_writeback_range(struct pc_mapping *m, uint64_t start,
			     uint64_t end);
int pc__fsync_range(struct pc_file *f, uint64_t start, uint64_t end,
		    bool datasync);
/* throttle.c: dirty accounting, the dirty limits, the writers' throttle */
void pc__set_page_dirty(struct pc_mapping *m, struct pc_page *p);
void pc__account_page_dirtied(struct pc_mapping *m, struct pc_page *p);
void pc__account_page_cleaned(struct pc_mapping *m, struct pc_page *p);
void pc__balance_dirty_pages(struct pc_mapping *m, unsigned nr_dirtied);
void pc__update_dirty_limits(struct pc_cache *c);
/* errseq.c: writeback errors, reported once to each open file */
uint32_t pc__errseq_sample(struct pc_mapping *m);
int pc__errseq_check_advance(struct pc_mapping *m, _Atomic uint32_t *cursor);
void pc__errseq_set(struct pc_mapping *m, int err);

/* fpos.c: m->pos_lock, made with the mapping and destroyed with it. */
void pc__fpos_init(struct pc_cache *c, struct pc_mapping *m);

/* inode.c: mappings, open files */
bool pc__mapping_tryget(struct pc_mapping *m);
void pc__mapping_put(struct pc_mapping *m);
int pc__mappings_shutdown(struct pc_cache *c);
/* Close the files process @pid opened and left open (it died). */
void pc__files_reap(struct pc_cache *c, pid_t pid);
/* The mapping of (@dev, @ino), with a reference; NULL if none. */
struct pc_mapping *pc__mapping_lookup(struct pc_cache *c, dev_t dev, ino_t ino);
/* One writeback pass of all of @m, waited for. */
void pc__mapping_writeback_once(struct pc_mapping *m);
/* Write all of @m back (bounded retries); its new errors. */
int pc__mapping_sync(struct pc_mapping *m);

/* migrate.c: NUMA balancing (numa.balancing) */
int pc__numa_balancing_start(struct pc_cache *c);
void pc__numa_balancing_stop(struct pc_cache *c);
/* A reader touched a page the scanner marked (PG_hint): count, decide. */
void pc__numa_hint_fault(struct pc_cache *c, struct pc_page *p);

#endif /* PC_INTERNAL_H */
