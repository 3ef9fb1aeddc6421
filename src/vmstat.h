/*
 * vmstat.h - the counters (vmstat.c): sharded per thread, per node;
 * summed on read.  Names as in /proc/vmstat where the kernel has one.
 */
#ifndef PC_VMSTAT_H
#define PC_VMSTAT_H

#include "base.h"

struct pc_cache;
struct pc_tctx;

#define PC_VMSTAT_ITEMS(X) \
	X(nr_free_pages) X(nr_budget_pages) X(nr_inactive_file) X(nr_active_file) \
	X(nr_dirty) X(nr_writeback) X(nr_file_pages) X(nr_shadow_entries) \
	X(nr_dirty_threshold) X(nr_dirty_background_threshold) \
	X(pgpgin) X(pgpgout) X(pgpgin_holes) X(pgfault_hit) X(pgfault_miss) \
	X(pgactivate) X(pgdeactivate) X(pgrefill) X(pgrotated) \
	X(pgscan_kswapd) X(pgscan_direct) X(pgsteal_kswapd) X(pgsteal_direct) \
	X(pgsteal_writeback_skip) X(pgsteal_resize) X(pgalloc) X(pgfree) \
	X(pgpopulate_kswapd) X(pggrow_cold) \
	X(thp_collapse_alloc) X(thp_collapse_alloc_failed) \
	X(allocstall) X(pgscan_direct_throttle) \
	X(allocfail) X(alloc_retries) X(alloc_busy_waits) X(kswapd_wakeup) X(kswapd_throttle) X(pageoutrun) \
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
	X(balance_dirty_pages_pause_asked_ms) \
	X(flusher_wakeups) X(dirty_reclaim_handoff) \
	X(ra_sync) X(ra_async) X(ra_pages) X(ra_hit) X(ra_miss_random) \
	X(dropbehind) X(trace_events) X(trace_lost) \
	X(reclaim_tree_contended) X(reclaim_backoff_wait) \
	X(kswapd_contended_stall) \
	X(writeback_requests) X(balance_dirty_pages_idle) \
	X(writeback_backoff) X(writeback_lost) X(stale_opens) \
	X(backing_fd_release) X(backing_fd_emfile) X(io_uring_fallback) \
	X(shared_fds_sent) X(shared_fds_escrowed) X(shared_procs_reaped) X(shared_files_reaped) \
	X(shared_io_reaped) X(shared_attaches) X(shared_locks_reaped) \
	X(shared_waiters_reaped) X(shared_refs_reaped) \
	X(shared_pins_reaped) X(shared_pins_unrecorded) \
	X(writeback_requests_now) X(writeback_requests_staged) \
	X(writeback_commits) X(writeback_commit_syncs) \
	X(writeback_file_syncs) X(writeback_extends) X(writeback_extend_truncates) \
	X(writeback_segments) X(pcp_refills) X(pcp_returned) \
	X(sieve_hand_cleared) X(s3fifo_promote) X(s3fifo_main_reinsert) \
	X(s3fifo_ghost_admit) X(mglru_promote) X(mglru_min_seq) X(mglru_max_seq)

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


/* c->stat's shards for c->nr_nodes (the cache's memory): 0, -ENOMEM. */
int pc__vmstat_init(struct pc_cache *c);
void pc__vmstat_fini(struct pc_cache *c);
void pc__count(struct pc_cache *c, int node, enum pc_vmstat_item i, int64_t d);
/* The same with the caller's context (pc__tctx) already looked up. */
void pc__count_ctx(struct pc_cache *c, struct pc_tctx *t, int node,
		   enum pc_vmstat_item i, int64_t d);
uint64_t pc__vmstat_node(struct pc_cache *c, int node, enum pc_vmstat_item i);
uint64_t pc__vmstat_sum(struct pc_cache *c, enum pc_vmstat_item i);
/*
 * Take, or try, one of the four locks with statistics (lock.h): the lock,
 * then its acquisition counted into its cache (l->stat; +1 contended; +2
 * the ns waited) with one context lookup.
 */
struct pc_lock;
void pc__lock_counted(struct pc_lock *l);
bool pc__trylock_counted(struct pc_lock *l);
#define pc__inc(c, node, item) pc__count((c), (node), PC_VM_##item, 1)
#define pc__add(c, node, item, d) pc__count((c), (node), PC_VM_##item, (d))

#endif /* PC_VMSTAT_H */
