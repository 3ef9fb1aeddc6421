/*
 * cache.c - pc_cache: start and stop.
 *
 * A cache owns (internal.h has the picture) its frames and nodes, its I/O
 * backend, its page wait queues, its counters, its bdis with their flusher
 * threads, one kswapd per node, and the mappings of the files opened
 * through it.  Start order (pc_cache_create): the tree nodes'
 * reclamation domain (ebr.c), config (config.c), page waits, the process's table of caches (tctx.c), nodes (the largest budget
 * reserved as address space, nothing touched: node.c), counters, the
 * mapping hash, the descriptor budget, I/O (io_uring, else sync), dirty
 * limits, trace, kswapd, the NUMA balancing scanner (numa.balancing).
 * Stop order (pc_cache_destroy): stop the scanner, close the files left
 * open, write each mapping back (not those of unlinked files) and free it,
 * stop kswapd, stop the flushers, destroy the I/O backend, drain the LRU
 * batches, close the trace, leave the table, free the nodes (the retired
 * tree nodes first), the domain, counters and waits.
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
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "tracepoint.h"

static void cache_free(struct pc_cache *c)
{
	pc__numa_balancing_stop(c);	/* before kswapd: it migrates */
	pc__kswapd_stop(c);
	pc__bdis_fini(c);
	if (c->io)
		c->io_ops->destroy(c->io);
	pc__tctx_drain_all(c);
	pc__trace_close(c);	/* after every thread that emits */
	pc__cache_unregister(c);
	pc__nodes_fini(c);	/* after the tree nodes' barrier (c->ebr) */
	if (c->ebr)
		pc__ebr_fini(c->ebr);
	free(c->ebr);
	if (c->stat.shards)
		pc__vmstat_fini(&c->stat);
	pc__pagewait_fini(&c->wait);
	free(c->hash);
	pc__lock_destroy(&c->mappings_lock);
	pc__lock_destroy(&c->bdi_lock);
	pc__lock_destroy(&c->tctx_lock);
	pc__lock_destroy(&c->resize_lock);
	free(c);
}

/*
 * io=uring could not be set up (no io_uring in this kernel, or forbidden):
 * the sync backend does the I/O.  Said once a process on stderr; the
 * io_uring_fallback counter says it for each cache.
 */
static void io_fallback_say(int err)
{
	static _Atomic bool said;

	if (!atomic_exchange(&said, true))
		fprintf(stderr, "pagecache: io_uring unavailable (%s): I/O goes "
			"through the sync backend (pread/pwrite)\n",
			strerror(-err));
}

PC_EXPORT int pc_cache_create(pc_cache **out, const char *config)
{
	struct pc_cache *c;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ebr = aligned_alloc(64, sizeof(*c->ebr));
	if (!c->ebr) {
		free(c);
		return -ENOMEM;
	}
	memset(c->ebr, 0, sizeof(*c->ebr));
	pc__ebr_init(c->ebr);
	pc__lock_init(&c->mappings_lock, NULL, PC_RANK_MAPPINGS, -1);
	pc__lock_init(&c->bdi_lock, NULL, PC_RANK_BDI_LIST, -1);
	pc__lock_init(&c->tctx_lock, NULL, PC_RANK_TCTX_LIST, -1);
	pc__lock_init(&c->resize_lock, NULL, PC_RANK_RESIZE, -1);
	atomic_init(&c->blunt_owner, -1);
	r = pc__config_parse(&c->cfg, config);
	if (r)
		goto fail_early;
	pc__pagewait_init(&c->wait, c->cfg.waiters_bit);
	r = pc__cache_register(c);
	if (r)
		goto fail_wait;
	r = pc__nodes_init(c);	/* sets nr_nodes, checks the budget */
	if (r)
		goto fail;
	r = pc__vmstat_init(&c->stat, c->nr_nodes);
	if (r)
		goto fail;
	c->hash_size = 1024;
	c->hash = calloc(c->hash_size, sizeof(*c->hash));
	if (!c->hash) {
		r = -ENOMEM;
		goto fail;
	}
	c->max_shadows = c->nr_frames * 2 + 1024;
	pc__backing_init(c);
	c->io_ops = pc__io_ops_by_name(c->cfg.io);
	r = c->io_ops->create(&c->io, 256);
	if (r && c->io_ops == &pc__io_uring_ops) {
		io_fallback_say(r);	/* no io_uring here */
		c->io_ops = &pc__io_sync_ops;
		c->io_fallback = true;
		r = c->io_ops->create(&c->io, 256);
	}
	if (r) {
		c->io = NULL;
		goto fail;
	}
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
	*out = c;
	return 0;
fail:
	cache_free(c);
	return r;
fail_wait:
	pc__pagewait_fini(&c->wait);
fail_early:
	pc__lock_destroy(&c->mappings_lock);
	pc__lock_destroy(&c->bdi_lock);
	pc__lock_destroy(&c->tctx_lock);
	pc__lock_destroy(&c->resize_lock);
	if (c->ebr)
		pc__ebr_fini(c->ebr);
	free(c->ebr);
	free(c);
	return r;
}

int pc__mappings_shutdown(struct pc_cache *c);

PC_EXPORT int pc_cache_destroy(pc_cache *c)
{
	int r;

	if (!c)
		return -EINVAL;
	atomic_store(&c->stopping, true);
	pc__numa_balancing_stop(c);	/* no migration into a dying mapping */
	r = pc__mappings_shutdown(c);	/* write back, close, free all */
	cache_free(c);
	return r;
}
