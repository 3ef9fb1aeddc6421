/*
 * cache.c - pc_cache: start and stop.
 *
 * A cache owns (internal.h has the picture) its frames and nodes, its I/O
 * backend, its page wait queues, its counters, its bdis with their flusher
 * threads, one kswapd per node, and the mappings of the files opened
 * through it.  Start order (pc_cache_create): config (config.c), the
 * cache's memory (a region for shared=on: share.c; else malloc), the tree
 * nodes' reclamation domain (ebr.c), page waits, the process's table of
 * caches (tctx.c), nodes (the largest budget reserved as address space,
 * nothing touched: node.c), counters, the mapping hash, the descriptor
 * budget, I/O (io_uring, else sync), dirty limits, trace, kswapd, the NUMA
 * balancing scanner (numa.balancing), a shared cache's service thread.
 * Stop order (pc_cache_destroy): a shared cache's home waits for the other
 * processes to leave, stops its service thread; stop the scanner, close
 * the files left open, write each mapping back (not those of unlinked
 * files) and free it, stop kswapd, stop the flushers, destroy the I/O
 * backend, drain the LRU batches, close the trace, leave the table, free
 * the nodes (the retired tree nodes first), the domain, counters and
 * waits; a shared cache's region is unmapped last.  In a process other
 * than a shared cache's home, destroy detaches (share.c).
 *
 * Nothing here is shared after create but what the objects' own locks
 * protect: create runs before any other thread sees the cache, destroy
 * after the last call into it.  Locks made here (lock.h): the cache's
 * mappings_lock, bdi_lock, tctx_lock and resize_lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "dirty.h"
#include "inode.h"
#include "mem.h"
#include "migrate.h"
#include "tctx.h"
#include "vmscan.h"
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "share.h"
#include "shm.h"
#include "tracepoint.h"

#define WAITERS_SHARED 1024	/* threads asleep on pages at once */

/* Undo what create did, in reverse; what it did not do is NULL or 0. */
static void cache_free(struct pc_cache *c)
{
	bool shared = c->shared;

	pc__numa_balancing_stop(c);	/* before kswapd: it migrates */
	pc__kswapd_stop(c);
	pc__bdis_fini(c);
	pc__io_destroy(c);
	pc__tctx_drain_all(c);
	pc__trace_close(c);	/* after every thread that emits */
	pc__cache_unregister(c);
	pc__nodes_fini(c);	/* after the tree nodes' barrier (c->ebr) */
	if (c->ebr)
		pc__ebr_fini(c->ebr);
	pc__cache_free(c, c->ebr, sizeof(*c->ebr));
	if (c->stat.shards)
		pc__vmstat_fini(c);
	pc__pagewait_fini(&c->wait);
	pc__cache_free(c, c->hash, c->hash_size * sizeof(*c->hash));
	pc__lock_destroy(&c->mappings_lock);
	pc__lock_destroy(&c->bdi_lock);
	pc__lock_destroy(&c->tctx_lock);
	pc__lock_destroy(&c->resize_lock);
	if (shared)
		pc__share_detach(c);	/* the region goes: c with it */
	else
		free(c);
}

/* What a shared cache cannot do (yet): said on stderr, -EINVAL. */
static int shared_check(const struct pc_config *cfg)
{
	const char *no = cfg->trace[0] ? "trace" :
			 cfg->numa_balancing ? "numa.balancing" : NULL;

	if (!no)
		return 0;
	fprintf(stderr, "pagecache: %s is not supported with shared=on\n", no);
	return -EINVAL;
}

PC_EXPORT int pc_cache_create(pc_cache **out, const char *config)
{
	struct pc_config cfg;
	struct pc_cache *c;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	r = pc__config_parse(&cfg, config);
	if (r)
		return r;
	if (cfg.shared) {
		r = shared_check(&cfg);
		if (!r)
			r = pc__config_check_budget(&cfg);
		if (!r)
			r = pc__share_create(&c, &cfg,
					     pc__config_span_frames(&cfg));
		if (r)
			return r;
	} else {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->cfg = cfg;
	}
	pc__cache_lock_init(c, &c->mappings_lock, PC_RANK_MAPPINGS, -1);
	pc__cache_lock_init(c, &c->bdi_lock, PC_RANK_BDI_LIST, -1);
	pc__cache_lock_init(c, &c->tctx_lock, PC_RANK_TCTX_LIST, -1);
	pc__cache_lock_init(c, &c->resize_lock, PC_RANK_RESIZE, -1);
	atomic_init(&c->blunt_owner, -1);
	if (c->shared) {
		void *pool = pc__cache_zalloc(c, WAITERS_SHARED *
					      pc__pagewait_waiter_size());

		if (!pool) {
			pc__share_detach(c);
			return -ENOMEM;
		}
		pc__pagewait_init_shared(&c->wait, c->cfg.waiters_bit, pool,
					 WAITERS_SHARED,
					 pc__shm_broken_flag(pc__local(c)->shm));
	} else {
		pc__pagewait_init(&c->wait, c->cfg.waiters_bit);
	}
	r = -ENOMEM;
	c->ebr = pc__cache_zalloc(c, sizeof(*c->ebr));
	if (!c->ebr)
		goto fail;
	pc__ebr_init(c->ebr);
	r = pc__cache_register(c);
	if (r)
		goto fail;
	r = pc__nodes_init(c);	/* sets nr_nodes, checks the budget */
	if (r)
		goto fail;
	r = pc__vmstat_init(c);
	if (r)
		goto fail;
	c->hash_size = 1024;
	c->hash = pc__cache_zalloc(c, c->hash_size * sizeof(*c->hash));
	if (!c->hash) {
		r = -ENOMEM;
		goto fail;
	}
	c->max_shadows = c->nr_frames * 2 + 1024;
	pc__backing_init(c);
	r = pc__io_make(c, pc__local(c));
	if (r)
		goto fail;
	pc__update_dirty_limits(c);
	if (c->cfg.trace[0]) {
		r = pc__trace_open(c, c->cfg.trace);
		if (r)
			goto fail;
	}
	r = pc__kswapd_start(c);
	if (r)
		goto fail;
	r = pc__numa_balancing_start(c);
	if (r)
		goto fail;
	if (c->shared) {
		r = pc__share_start(c);
		if (r)
			goto fail;
	} else {
		pc__local_whole(c);	/* pc__page_cache finds its pages */
	}
	*out = c;
	return 0;
fail:
	cache_free(c);
	return r;
}

int pc__mappings_shutdown(struct pc_cache *c);

PC_EXPORT int pc_cache_destroy(pc_cache *c)
{
	int r;

	if (!c)
		return -EINVAL;
	if (!pc__share_is_home(c)) {	/* the others go on using it */
		pc__io_destroy(c);
		pc__cache_unregister(c);	/* our threads' batches drained */
		pc__ebr_fini(c->ebr);
		pc__share_detach(c);
		return 0;
	}
	if (c->shared) {
		pc__share_wait_others(c);
		pc__share_stop(c);
	}
	atomic_store(&c->stopping, true);
	pc__numa_balancing_stop(c);	/* no migration into a dying mapping */
	r = pc__mappings_shutdown(c);	/* write back, close, free all */
	cache_free(c);
	return r;
}
