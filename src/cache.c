/*
 * cache.c - pc_cache: configuration, start and stop, the thread set, and
 * the per-thread contexts.
 *
 * A cache owns (internal.h has the picture) its frames and nodes, its I/O
 * backend, its page wait queues, its counters, its bdis with their flusher
 * threads, one kswapd per node, and the mappings of the files opened
 * through it.  Start order (pc_cache_create): config, page waits, the
 * process's table of caches, nodes (the largest budget reserved as
 * address space, nothing touched: node.c), counters, the mapping hash,
 * the descriptor budget, I/O (io_uring, else sync), dirty limits, trace,
 * kswapd, the NUMA balancing scanner (numa.balancing).  Stop order
 * (pc_cache_destroy): stop the scanner, close the files left open, write
 * each mapping back (not those of unlinked files) and free it, stop
 * kswapd, stop the flushers, destroy the I/O backend, drain the LRU
 * batches, close the trace, leave the table, free the nodes, counters and
 * waits.
 *
 * Per-thread contexts (struct pc_tctx) carry a thread's node, its vmstat
 * shard and its LRU batches.  A thread finds its context for a cache in a
 * small thread-local table keyed by the cache's unique id; the cache keeps
 * all contexts on c->tctxs (c->tctx_lock) so reclaim can drain them and
 * destroy can free them.  A thread that exits hands its context back
 * through a pthread key destructor, which checks under `live_lock` that the
 * cache still exists (a cache may be destroyed before its users' threads).
 * A context is made on first use, which may come under any lock (a
 * counter bumped under an lru lock), so making one takes no lock: it is
 * pushed on c->tctxs by compare-and-swap, and a dead cache's slot is found
 * by its id in live_id[].  Unlinking and walking the list (drains) take
 * c->tctx_lock.
 *
 * A forked child can create caches of its own (not use inherited ones):
 * pthread_atfork handlers hold live_lock and urcu-bp's state across fork.
 *
 * Locks (lock.h): `live_lock` (process-wide) → c->tctx_lock → t->lock.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "internal.h"
#include "backing.h"
#include "node.h"
#include "bdi.h"
#include "io.h"
#include "pagewait.h"
#include "tracepoint.h"

uint64_t pc__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifdef PC_DEBUG
uint64_t pc__clock(struct pc_cache *c)
{
	uint64_t t = atomic_load_explicit(&c->test_clock, memory_order_relaxed);

	return t ? t : pc__now_ns();
}

void pc__test_clock_set(struct pc_cache *c, uint64_t ns)
{
	atomic_store(&c->test_clock, ns);
}
#endif

void pc__deadline(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ns / 1000000000ull);
	ts->tv_nsec += (long)(ns % 1000000000ull);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* ------------------------------------------------------------------ */
/* Configuration.                                                       */

static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	case 't': case 'T': n <<= 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_uint(const char *v, unsigned max, unsigned *out)
{
	char *end;
	unsigned long n;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n > max)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "true") ||
	    !strcmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "false") ||
	    !strcmp(v, "no")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/*
 * A value among @names: its position (the mode's enum value), or a
 * boolean: off = 0, on = @on.  -EINVAL for anything else.
 */
static int parse_choice(const char *v, const char *const *names, int on)
{
	bool b;

	for (int i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return i;
	if (parse_bool(v, &b) == 0)
		return b ? on : 0;
	return -EINVAL;
}

static void config_defaults(struct pc_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->memory = 64ull << 20;
	cfg->nodes = 1;
	strcpy(cfg->io, "uring");
	cfg->ra_max_pages = PC_RA_MAX_AUTO;	/* 2 MiB or less: see readahead.c */
	cfg->batch_remove = PC_REMOVE_SORTED;
	cfg->contention_backoff = PC_BACKOFF_OFF;
	cfg->node_reclaim = true;
	cfg->mapping_sticky = false;
	cfg->dirty_spread = false;
	cfg->deferred_activation = true;
	cfg->single_marker = true;
	cfg->waiters_bit = true;
	cfg->kswapd = true;
	cfg->stickiness = PC_STICKY_AUTO;
	cfg->dirty_ratio = 20;
	cfg->dirty_background_ratio = 10;
	cfg->dirty_expire_ms = 30000;
	cfg->writeback_interval_ms = 5000;
	cfg->watermark_scale = 100;
	cfg->numa_scan_ms = 100;
	cfg->numa_migrate_rate = 65536;
}

static int config_set(struct pc_config *cfg, const char *k, const char *v)
{
	static const char *const removal[] = {
		[PC_REMOVE_OFF] = "off", [PC_REMOVE_ON] = "on",
		[PC_REMOVE_SORTED] = "sorted", NULL };
	static const char *const backoff[] = {
		[PC_BACKOFF_OFF] = "off", [PC_BACKOFF_SLEEPY] = "sleepy",
		[PC_BACKOFF_BLUNT] = "blunt", NULL };
	static const char *const sticky[] = {
		[PC_STICKY_OFF] = "off", [PC_STICKY_AUTO] = "auto",
		[PC_STICKY_ALWAYS] = "always", NULL };
	uint64_t sz;
	unsigned u;
	int r = 0;

	if (!strcmp(k, "memory")) {
		if ((r = parse_size(v, &sz)))
			return r;
		cfg->memory = sz;
	} else if (!strcmp(k, "memory.max")) {
		if ((r = parse_size(v, &sz)) || sz == 0)
			return -EINVAL;
		cfg->memory_max = sz;
	} else if (!strcmp(k, "nodes")) {
		if (!strcmp(v, "auto")) {
			cfg->nodes = 0;
			return 0;
		}
		if ((r = parse_uint(v, PC_MAX_NODES, &u)) || u == 0)
			return -EINVAL;
		cfg->nodes = (int)u;
	} else if (!strcmp(k, "io")) {
		if (!pc__io_ops_by_name(v))
			return -EINVAL;
		snprintf(cfg->io, sizeof(cfg->io), "%s", v);
	} else if (!strcmp(k, "readahead.max")) {
		if ((r = parse_size(v, &sz)) || sz > (64ull << 20))
			return -EINVAL;
		cfg->ra_max_pages = sz >> PC_PAGE_SHIFT;
	} else if (!strcmp(k, "reclaim.batch_remove")) {
		if ((r = parse_choice(v, removal, PC_REMOVE_ON)) < 0)
			return r;
		cfg->batch_remove = (enum pc_batch_remove)r;
		return 0;
	} else if (!strcmp(k, "reclaim.contention_backoff")) {
		if ((r = parse_choice(v, backoff, PC_BACKOFF_SLEEPY)) < 0)
			return r;
		cfg->contention_backoff = (enum pc_contention_backoff)r;
		return 0;
	} else if (!strcmp(k, "reclaim.kswapd")) {
		return parse_bool(v, &cfg->kswapd);
	} else if (!strcmp(k, "numa.node_reclaim")) {
		return parse_bool(v, &cfg->node_reclaim);
	} else if (!strcmp(k, "numa.mapping_sticky")) {
		return parse_bool(v, &cfg->mapping_sticky);
	} else if (!strcmp(k, "numa.dirty_spread")) {
		return parse_bool(v, &cfg->dirty_spread);
	} else if (!strcmp(k, "numa.balancing")) {
		return parse_bool(v, &cfg->numa_balancing);
	} else if (!strcmp(k, "numa.scan_period_ms")) {
		if ((r = parse_uint(v, 60000, &u)) || u == 0)
			return -EINVAL;
		cfg->numa_scan_ms = u;
	} else if (!strcmp(k, "numa.migrate_rate")) {
		if ((r = parse_uint(v, 1u << 30, &u)) || u == 0)
			return -EINVAL;
		cfg->numa_migrate_rate = u;
	} else if (!strcmp(k, "lru.deferred_activation")) {
		return parse_bool(v, &cfg->deferred_activation);
	} else if (!strcmp(k, "readahead.single_marker")) {
		return parse_bool(v, &cfg->single_marker);
	} else if (!strcmp(k, "page.waiters_bit")) {
		return parse_bool(v, &cfg->waiters_bit);
	} else if (!strcmp(k, "cache.stickiness")) {
		if ((r = parse_choice(v, sticky, PC_STICKY_AUTO)) < 0)
			return r;
		cfg->stickiness = (enum pc_stickiness)r;
		return 0;
	} else if (!strcmp(k, "writeback.dirty_ratio")) {
		if ((r = parse_uint(v, 100, &u)) || u == 0)
			return -EINVAL;
		cfg->dirty_ratio = u;
	} else if (!strcmp(k, "writeback.dirty_background_ratio")) {
		if ((r = parse_uint(v, 100, &u)) || u == 0)
			return -EINVAL;
		cfg->dirty_background_ratio = u;
	} else if (!strcmp(k, "writeback.dirty_bytes")) {
		return parse_size(v, &cfg->dirty_bytes);
	} else if (!strcmp(k, "writeback.dirty_background_bytes")) {
		return parse_size(v, &cfg->dirty_background_bytes);
	} else if (!strcmp(k, "writeback.dirty_time_ms")) {
		return parse_uint(v, 3600000, &cfg->dirty_time_ms);
	} else if (!strcmp(k, "writeback.dirty_expire_ms")) {
		return parse_uint(v, 3600000, &cfg->dirty_expire_ms);
	} else if (!strcmp(k, "writeback.interval_ms")) {
		if ((r = parse_uint(v, 3600000, &u)) || u == 0)
			return -EINVAL;
		cfg->writeback_interval_ms = u;
	} else if (!strcmp(k, "reclaim.watermark_scale")) {
		if ((r = parse_uint(v, 3000, &u)) || u == 0)
			return -EINVAL;
		cfg->watermark_scale = u;
	} else if (!strcmp(k, "trace")) {
		if (!*v || strlen(v) >= sizeof(cfg->trace))
			return -EINVAL;
		strcpy(cfg->trace, v);
	} else {
		return -EINVAL;
	}
	return r;
}

int pc__config_parse(struct pc_config *cfg, const char *s)
{
	char buf[512];

	config_defaults(cfg);
	if (!s)
		return 0;
	while (*s) {
		size_t len;
		char *eq;
		int r;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " \t\n");
		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, len);
		buf[len] = 0;
		s += len;
		eq = strchr(buf, '=');
		if (!eq || eq == buf) {
			fprintf(stderr, "pagecache: config: '%s' is not key=value\n", buf);
			return -EINVAL;
		}
		*eq = 0;
		r = config_set(cfg, buf, eq + 1);
		if (r) {
			fprintf(stderr, "pagecache: config: bad key or value '%s=%s'\n",
				buf, eq + 1);
			return r;
		}
	}
	if (cfg->dirty_background_ratio > cfg->dirty_ratio)
		cfg->dirty_background_ratio = cfg->dirty_ratio;
	return 0;
}

PC_EXPORT int pc_config_check(const char *config)
{
	struct pc_config cfg;
	int r = pc__config_parse(&cfg, config);

	return r ? r : pc__config_check_budget(&cfg);
}

/* ------------------------------------------------------------------ */
/* Per-thread contexts.                                                 */

#define TCTX_SLOTS 8

struct tctx_slot {
	uint64_t id;
	struct pc_tctx *t;
};

#define MAX_CACHES 64

static struct pc_lock live_lock = PC_LOCK_INITIALIZER(PC_RANK_LIVE);
static struct pc_cache *live[MAX_CACHES];	/* live_lock */
/* live[i]->id, or 0: written under live_lock, read without it */
static _Atomic uint64_t live_id[MAX_CACHES];
static uint64_t next_cache_id = 1;	/* live_lock */
static pthread_key_t tctx_key;
static pthread_once_t tctx_once = PTHREAD_ONCE_INIT;
static __thread struct tctx_slot slots[TCTX_SLOTS];

static struct pc_cache *live_find(uint64_t id)
{
	for (unsigned i = 0; i < MAX_CACHES; i++)
		if (live[i] && live[i]->id == id)
			return live[i];
	return NULL;
}

/* Is a cache of id @id alive?  Without a lock: ids are never reused. */
static bool live_id_present(uint64_t id)
{
	for (unsigned i = 0; i < MAX_CACHES; i++)
		if (atomic_load_explicit(&live_id[i], memory_order_acquire) == id)
			return true;
	return false;
}

/*
 * Off c->tctxs.  New contexts are pushed at the head without the lock
 * (tctx_get), so the head is changed by compare-and-swap; the links behind
 * it change only under c->tctx_lock.
 */
static void tctx_unlink(struct pc_cache *c, struct pc_tctx *t)
{
	struct pc_tctx *head = t;

	pc__lock(&c->tctx_lock);
	if (!atomic_compare_exchange_strong(&c->tctxs, &head, t->next)) {
		for (struct pc_tctx *p = head; p; p = p->next)
			if (p->next == t) {
				p->next = t->next;
				break;
			}
	}
	pc__unlock(&c->tctx_lock);
}

/* Thread exit: give back the contexts of the caches still alive. */
static void tctx_exit(void *arg)
{
	(void)arg;
	pc__lock(&live_lock);
	for (int i = 0; i < TCTX_SLOTS; i++) {
		struct pc_cache *c;
		struct pc_tctx *t = slots[i].t;

		if (!t)
			continue;
		c = live_find(slots[i].id);
		if (c && c == t->cache) {
			pc__lru_drain(c, t);
			tctx_unlink(c, t);
			pc__lock_destroy(&t->lock);
			free(t);
		}
		slots[i].t = NULL;
		slots[i].id = 0;
	}
	pc__unlock(&live_lock);
}

static void tctx_key_init(void)
{
	pthread_key_create(&tctx_key, tctx_exit);
}

/*
 * This thread's context for @c, made on first use.  Making one may happen
 * under any lock (a counter bumped under an lru lock is a first use), so
 * it takes none: dead caches' slots are found by id (live_id), and the new
 * context is pushed on c->tctxs by compare-and-swap.
 */
struct pc_tctx *pc__tctx(struct pc_cache *c)
{
	struct pc_tctx *t;
	int free_slot = -1;

	for (int i = 0; i < TCTX_SLOTS; i++) {
		if (slots[i].id == c->id)
			return slots[i].t;
		if (free_slot < 0 && !slots[i].t)
			free_slot = i;
	}
	if (free_slot < 0) {
		/* Slots taken by caches since destroyed can be reused. */
		for (int i = 0; i < TCTX_SLOTS && free_slot < 0; i++)
			if (!live_id_present(slots[i].id))
				free_slot = i;
		if (free_slot < 0)
			return NULL;	/* 9th cache in one thread: no batching */
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cache = c;
	t->cache_id = c->id;
	t->node = (int)(atomic_fetch_add(&c->next_node, 1) % (unsigned)c->nr_nodes);
	t->shard = atomic_fetch_add(&c->next_shard, 1) % PC_VMSTAT_SHARDS;
	pc__lock_init(&t->lock, NULL, PC_RANK_TCTX, -1);
	t->next = atomic_load_explicit(&c->tctxs, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&c->tctxs, &t->next, t,
						      memory_order_release,
						      memory_order_relaxed))
		;
	pthread_once(&tctx_once, tctx_key_init);
	pthread_setspecific(tctx_key, (void *)1);
	slots[free_slot].id = c->id;
	slots[free_slot].t = t;
	return t;
}

void pc__tctx_drain_all(struct pc_cache *c)
{
	pc__lock(&c->tctx_lock);
	for (struct pc_tctx *t = atomic_load_explicit(&c->tctxs,
						      memory_order_acquire);
	     t; t = t->next)
		pc__lru_drain(c, t);
	pc__unlock(&c->tctx_lock);
}

PC_EXPORT int pc_thread_set_node(pc_cache *c, int node)
{
	struct pc_tctx *t;

	if (!c || node < 0 || node >= c->nr_nodes)
		return -EINVAL;
	t = pc__tctx(c);
	if (!t)
		return -ENOMEM;
	t->node = node;
	return 0;
}

struct pc_cache *pc__page_cache(const struct pc_page *p)
{
	struct pc_cache *found = NULL;

	pc__lock(&live_lock);
	for (unsigned i = 0; i < MAX_CACHES; i++) {
		struct pc_cache *c = live[i];

		if (c && p >= c->pages && p < c->pages + c->span_frames) {
			found = c;
			break;
		}
	}
	pc__unlock(&live_lock);
	return found;
}

/* ------------------------------------------------------------------ */
/* Create and destroy.                                                  */

static int cache_register(struct pc_cache *c)
{
	int r = -ENOMEM;

	pc__lock(&live_lock);
	for (unsigned i = 0; i < MAX_CACHES; i++)
		if (!live[i]) {
			live[i] = c;
			c->id = next_cache_id++;
			atomic_store_explicit(&live_id[i], c->id,
					      memory_order_release);
			r = 0;
			break;
		}
	pc__unlock(&live_lock);
	if (r)
		fprintf(stderr, "pagecache: too many caches in one process\n");
	return r;
}

/*
 * fork(2): a child may make caches of its own (the ones it inherited are
 * dead: their threads stayed in the parent).  What a new cache needs that
 * another thread could hold at the fork - live_lock, and urcu-bp's
 * registry and call_rcu workers - is taken before and released (or
 * restarted, for the workers) on both sides.  Registered once, by the
 * first pc_cache_create.
 */
#ifdef PC_TSAN
/* TSan cannot run threads in a forked child: its restart of the call_rcu
 * worker would kill it, and a TSan child makes no cache of its own. */
static void rcu_workers_prepare(void) {}
static void rcu_workers_parent(void) {}
static void rcu_workers_child(void) {}
#else
static void rcu_workers_prepare(void)
{
	urcu_bp_call_rcu_before_fork();
}

static void rcu_workers_parent(void)
{
	urcu_bp_call_rcu_after_fork_parent();
}

static void rcu_workers_child(void)
{
	urcu_bp_call_rcu_after_fork_child();
}
#endif

static void fork_prepare(void)
{
	pc__lock(&live_lock);
	rcu_workers_prepare();
	urcu_bp_before_fork();
}

static void fork_parent(void)
{
	urcu_bp_after_fork_parent();
	rcu_workers_parent();
	pc__unlock(&live_lock);
}

static void fork_child(void)
{
	urcu_bp_after_fork_child();
	rcu_workers_child();
	pc__unlock(&live_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_handlers_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void cache_unregister(struct pc_cache *c)
{
	pc__lock(&live_lock);
	for (unsigned i = 0; i < MAX_CACHES; i++)
		if (live[i] == c) {
			live[i] = NULL;
			atomic_store_explicit(&live_id[i], 0,
					      memory_order_release);
		}
	/* Contexts of threads still running die with the cache. */
	for (struct pc_tctx *t = atomic_exchange(&c->tctxs, NULL), *next; t;
	     t = next) {
		next = t->next;
		pc__lock_destroy(&t->lock);
		free(t);
	}
	pc__unlock(&live_lock);
}

static void cache_free(struct pc_cache *c)
{
	pc__numa_balancing_stop(c);	/* before kswapd: it migrates */
	pc__kswapd_stop(c);
	pc__bdis_fini(c);
	if (c->io)
		c->io_ops->destroy(c->io);
	pc__tctx_drain_all(c);
	pc__trace_close(c);	/* after every thread that emits */
	cache_unregister(c);
	pc__nodes_fini(c);
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
	pc__lock_init(&c->mappings_lock, NULL, PC_RANK_MAPPINGS, -1);
	pc__lock_init(&c->bdi_lock, NULL, PC_RANK_BDI_LIST, -1);
	pc__lock_init(&c->tctx_lock, NULL, PC_RANK_TCTX_LIST, -1);
	pc__lock_init(&c->resize_lock, NULL, PC_RANK_RESIZE, -1);
	atomic_init(&c->blunt_owner, -1);
	r = pc__config_parse(&c->cfg, config);
	if (r)
		goto fail_early;
	pthread_once(&fork_once, fork_handlers_init);
	pc__pagewait_init(&c->wait, c->cfg.waiters_bit);
	r = cache_register(c);
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
