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
 *   tree.h       the radix tree (tree.c, a leaf; its readers' ebr.h)
 *   pagewait.h   page lock and bit waits (pagewait.c, a leaf)
 * and these each file that uses them includes itself:
 *   mem.h        the memory and lock provider, the cache's constructors
 *   tctx.h       struct pc_tctx: a thread's context in a cache, the
 *                references and pins it records (the held/pins ledger)
 *   node.h       struct pc_node: a node's frames, free lists, LRU, reclaim
 *   vmscan.h     the LRU and reclaim from outside a node: batches,
 *                activation, kswapd started, the workingset's shadows
 *   inode.h      struct pc_file, the mappings' table and life, truncation
 *   filemap.h    a mapping's pages found, inserted, deleted, read
 *   readahead.h  readahead windows, streams, use-once pages (dropbehind.c)
 *   dirty.h      dirtying and its throttle, writeback of a range, fsync,
 *                writeback errors
 *   writeback.h  one writeback pass's requests (writeback*.c, sync.c)
 *   bdi.h        struct pc_bdi: per-device dirty lists, flusher, throttle
 *   backing.h    the mappings' descriptors, coherence with the kernel
 *   migrate.h    NUMA balancing
 *   share.h      a cache many processes use: its modules' interfaces
 *   tracepoint.h the trace events the core emits (trace.c)
 *   trace_fmt.h  the trace file's format (shared with tools/trace)
 *   io.h         the I/O backends and fault rules (io*.c, leaves)
 *   uring.h      the io_uring backend's ring (io_uring.c, io_uring_cq.c)
 *   shm.h        regions shared between processes (shm.c, a leaf)
 *   ebr.h        epoch reclamation across processes (ebr.c, a leaf)
 *   arena.h      huge-page arenas of tree nodes (arena.c, a leaf)
 *   numa_topology.h  the machine's NUMA nodes (numa.c)
 * What stays here is what nearly every core file uses - struct pc_cache
 * and struct pc_mapping, a frame's page and data, pages allocated and
 * put - and, until it has a header of its own, this process's part of a
 * cache (struct pc_local: its descriptors, its I/O; local.c, io_local.c).
 * The leaves (lock.c too) include leaves' headers only: they cannot call
 * into the core, and tests/test_leaves.sh keeps it so.
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include "base.h"
#include "config.h"
#include "list.h"
#include "lock.h"
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
#define PC_RA_STREAMS 4		/* streams of one file tracked (readahead.c) */

struct pc_cache;
struct pc_node;
struct pc_mapping;
struct pc_bdi;
struct pc_tctx;
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
/* This process's part of @c (its entry in the table: local.c). */
static inline struct pc_local *pc__local(struct pc_cache *c)
{
	return c->shared ? pc__local_shared(c) : c->local;
}
/* The cache of this process's table that @p is a page of, or NULL: no
 * lock, no atomic read-modify-write (local.c). */
struct pc_cache *pc__page_cache(const struct pc_page *p);
/* This process's descriptors of @m (backing.c says who may use them). */
static inline struct pc_backing *pc__bk(const struct pc_mapping *m)
{
	return m->cache->shared ? pc__bk_shared(m) : (struct pc_backing *)&m->bk;
}
/* This process's I/O backend for @c, made at its first use here. */
struct pc_io_req;
int pc__io_submit(struct pc_cache *c, struct pc_io_req **reqs, unsigned n);
/* Has this process's io_uring backend lost its ring (sync does the I/O)? */
bool pc__io_lost(struct pc_cache *c);
/* This process's backend for @c made (0 or -errno; the fallback to sync
 * said once), and ended (io_local.c). */
int pc__io_make(struct pc_cache *c, struct pc_local *l);
void pc__io_destroy(struct pc_cache *c);

/* page_alloc.c: allocating and freeing pages (node.h has the nodes) */
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

/* inode.c: a mapping's references (the table's, files', transient) */
bool pc__mapping_tryget(struct pc_mapping *m);
void pc__mapping_put(struct pc_mapping *m);

#endif /* PC_INTERNAL_H */
