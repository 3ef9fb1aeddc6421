/*
 * kswapd.c - each node's reclaim thread (the kernel's kswapd, in
 * mm/vmscan.c there): woken when an allocation leaves its node at low, it
 * reclaims (vmscan.c, pc__shrink_node) until the node is above high, and
 * with nothing to reclaim faults memory in ahead of the allocator
 * (populate.c).  An allocation at min gives way to it first.
 *
 * kswapd (balance_node) shrinks its node in batches of 32 until it is above
 * high, lowering the priority only when a pass frees nothing, and sleeps
 * when balanced or after a pass at priority 0 freed nothing (if the node
 * is at low again by then and the pass freed something, it goes on: the
 * wakes sent while it was busy were dropped).  A pass whose batch was at
 * least half dirty or under writeback throttles it for 1 ms (the flusher
 * has been told).  When it starts it raises the node's watermark boost
 * for the latency of its wake (pc__boost_for_latency, vmscan.c); every
 * balancing run that ends balanced with no direct reclaim on the node
 * meanwhile takes 1/32 of the boost back.  An allocation that reaches min
 * while kswapd is woken or running gives way to it first
 * (pc__kswapd_give_way: until it frees pages, 1 ms at most) and reclaims
 * directly only then.  After a run, kswapd also trims stale shadow
 * entries when an eviction asked for it (workingset.c).  With nothing to
 * reclaim it faults never-used memory in ahead of the allocator when
 * asked (populate.c, populate_wake), a step at a time, a reclaim wake
 * always first.
 *
 * reclaim.contention_backoff=blunt (seed 000): at the top of each
 * balancing pass a kswapd that is not c->blunt_owner stalls while tree-lock
 * contention was seen in the last 10 ms, at most 100 ms (HZ/10) at a time
 * (kswapd_contended_stall) - "all but one kswapd stall"; vmscan.c notes
 * the contention and the claim.  The owner gives the claim up when it
 * stops balancing.
 *
 * Locks: kswapd_mtx guards kswapd_wake, wake_free and populate_wake and is
 * the mutex of kswapd_cond and alloc_cond; kswapd_active is set and
 * cleared under it (a wake that reads it clear is never lost), read
 * without it too.  Nothing is held while kswapd reclaims or sleeps.
 */
#include <time.h>

#include "internal.h"
#include "node.h"
#include "vmscan.h"

#define GIVE_WAY_NS (1000ull * 1000)	/* an allocation waits for kswapd */
#define BLUNT_QUIET_NS (10ull * 1000 * 1000)	/* contention "now" */
#define BLUNT_MAX_STALL_NS (100ull * 1000 * 1000)	/* HZ/10 */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * An allocation found @n at min while its kswapd was woken and has not
 * run yet, or is running: the wake-up put kswapd in a run queue, most
 * likely this thread's CPU's, and this thread reclaiming instead would
 * keep it from running (a stream over holes with cache.stickiness=off on
 * this loaded 2-core machine: 65-99% of the direct reclaims in six runs
 * came while kswapd was woken and not yet running).  Give way: wait until
 * kswapd frees pages, at most GIVE_WAY_NS (pgscan_direct_throttle counts
 * the waits).  True if it did.
 */
bool pc__kswapd_give_way(struct pc_cache *c, struct pc_node *n)
{
	uint64_t p0 = atomic_load(&n->reclaim_progress);
	struct timespec ts;
	bool waited = false;

	if (!c->cfg.kswapd || !n->kswapd_started)
		return false;
	pc__deadline(&ts, GIVE_WAY_NS);
	pc__lock(&n->kswapd_mtx);
	while ((n->kswapd_wake || atomic_load(&n->kswapd_active)) && !n->stop &&
	       atomic_load(&n->reclaim_progress) == p0) {
		waited = true;
		if (pc__cond_timedwait(&n->alloc_cond, &n->kswapd_mtx, &ts))
			break;
	}
	pc__unlock(&n->kswapd_mtx);
	if (waited)
		pc__inc(c, n->id, pgscan_direct_throttle);
	return atomic_load(&n->reclaim_progress) != p0;
}

static bool node_balanced(struct pc_node *n)
{
	return atomic_load(&n->nr_free) > node_wmark_high(n);
}

/*
 * =blunt: a kswapd that is not the owner stalls while a tree lock was
 * found contended lately, at most BLUNT_MAX_STALL_NS.  Returns whether it
 * stalled.  With no owner (the owner stopped balancing) no one stalls until
 * a kswapd meets contention again and claims the ownership.
 */
static bool blunt_stall(struct pc_cache *c, struct pc_node *n)
{
	uint64_t start, now;
	int owner;
	bool stalled = false;

	if (c->cfg.contention_backoff != PC_BACKOFF_BLUNT)
		return false;
	start = now = pc__clock(c);
	for (;;) {
		owner = atomic_load(&c->blunt_owner);
		if (owner < 0 || owner == n->id || n->stop ||
		    (int64_t)(now - atomic_load(&c->tree_contended_ns)) >
			    (int64_t)BLUNT_QUIET_NS ||
		    now - start > BLUNT_MAX_STALL_NS)
			break;
		if (!stalled)
			pc__inc(c, n->id, kswapd_contended_stall);
		stalled = true;
		sleep_ms(1);
		now = pc__clock(c);
	}
	return stalled;
}

/* Balance @n to its high mark; returns the pages reclaimed. */
static unsigned long balance_node(struct pc_cache *c, struct pc_node *n)
{
	struct pc_scan_control sc = { .node = n, .kswapd = true };
	uint64_t stalls = pc__vmstat_node(c, n->id, PC_VM_allocstall);
	uint64_t b;

	pc__inc(c, n->id, pageoutrun);
	for (sc.priority = PC_DEF_PRIORITY; sc.priority >= 0 && !n->stop;) {
		unsigned long before = sc.nr_reclaimed;

		if (node_balanced(n))
			break;
		/* A stall ends in a pass: at the cap too, contention or not. */
		if (blunt_stall(c, n) && node_balanced(n))
			break;
		sc.contended = false;
		sc.nr_writeback_tail = 0;
		sc.nr_dirty = 0;
		sc.nr_scanned = 0;
		pc__shrink_node(c, n, &sc);
		if (sc.nr_scanned &&
		    (sc.nr_writeback_tail + sc.nr_dirty) * 2 >= sc.nr_scanned) {
			/*
			 * The tail is mostly dirty or under writeback: the
			 * flusher has been told; give it time to write.
			 */
			pc__inc(c, n->id, kswapd_throttle);
			sleep_ms(1);
		}
		if (sc.nr_reclaimed == before)
			sc.priority--;
	}
	if (atomic_load(&c->blunt_owner) == n->id)
		atomic_store(&c->blunt_owner, -1);
	/* Balanced with no direct reclaim meanwhile: let the boost decay. */
	b = atomic_load_explicit(&n->wmark_boost, memory_order_relaxed);
	if (b && node_balanced(n) &&
	    pc__vmstat_node(c, n->id, PC_VM_allocstall) == stalls)
		atomic_store_explicit(&n->wmark_boost, b - (b / 32 + 1),
				      memory_order_relaxed);
	pc__lock(&n->kswapd_mtx);
	pthread_cond_broadcast(&n->alloc_cond);
	pc__unlock(&n->kswapd_mtx);
	return sc.nr_reclaimed;
}

static void *kswapd(void *arg)
{
	struct pc_node *n = arg;
	struct pc_cache *c = n->cache;
	unsigned long progress;
	uint64_t woken_at;

	pc_thread_set_node(c, n->id);
	pc__lock(&n->kswapd_mtx);
	while (!n->stop) {
		if (!n->kswapd_wake && n->populate_wake) {
			/* Nothing to reclaim: a step ahead (populate.c); a
			 * reclaim wake is looked at again before the next. */
			pc__unlock(&n->kswapd_mtx);
			progress = pc__populate_step(c, n);
			pc__lock(&n->kswapd_mtx);
			if (!progress)
				n->populate_wake = false;
			continue;
		}
		if (!n->kswapd_wake) {
			pc__cond_wait(&n->kswapd_cond, &n->kswapd_mtx);
			continue;
		}
		n->kswapd_wake = false;
		woken_at = n->wake_free;
		atomic_store(&n->kswapd_active, 1);
		pc__unlock(&n->kswapd_mtx);
		pc__boost_for_latency(c, n, woken_at);
		progress = balance_node(c, n);
		if (atomic_load(&c->shadow_trim) && !atomic_load(&c->stopping)) {
			pc__workingset_trim(c);
			atomic_store(&c->shadow_trim, 0);
		}
		pc__lock(&n->kswapd_mtx);
		atomic_store(&n->kswapd_active, 0);
		/*
		 * Wakes while we were active were not sent: if the node is
		 * at low again and reclaim works, go on instead of sleeping.
		 */
		if (progress &&
		    atomic_load(&n->nr_free) <= node_wmark_low(n))
			n->kswapd_wake = true;
	}
	pc__unlock(&n->kswapd_mtx);
	return NULL;
}

/*
 * Wake @n's kswapd.  While it is balancing, a wake is not needed: it
 * stops only above high.  kswapd_active is set and cleared under
 * kswapd_mtx, so a wake that reads it clear always sets kswapd_wake in
 * time for kswapd's next look.
 */
void pc__wakeup_kswapd(struct pc_cache *c, struct pc_node *n)
{
	if (!c->cfg.kswapd || !n->kswapd_started ||
	    atomic_load_explicit(&n->kswapd_active, memory_order_relaxed))
		return;
	pc__lock(&n->kswapd_mtx);
	if (!n->kswapd_wake && !atomic_load(&n->kswapd_active)) {
		n->kswapd_wake = true;
		n->wake_free = atomic_load(&n->nr_free);
		pc__inc(c, n->id, kswapd_wakeup);
		pthread_cond_signal(&n->kswapd_cond);
	}
	pc__unlock(&n->kswapd_mtx);
}

bool pc__wakeup_populate(struct pc_cache *c, struct pc_node *n)
{
	if (!c->cfg.kswapd || !n->kswapd_started)
		return false;
	pc__lock(&n->kswapd_mtx);
	if (!n->populate_wake) {
		n->populate_wake = true;
		pthread_cond_signal(&n->kswapd_cond);
	}
	pc__unlock(&n->kswapd_mtx);
	return true;
}

int pc__kswapd_start(struct pc_cache *c)
{
	if (!c->cfg.kswapd)
		return 0;
	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		if (pthread_create(&n->kswapd, NULL, kswapd, n) != 0)
			return -EAGAIN;
		n->kswapd_started = true;
	}
	return 0;
}

void pc__kswapd_stop(struct pc_cache *c)
{
	if (!c->nodes)
		return;
	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *n = &c->nodes[i];

		if (!n->kswapd_started)
			continue;
		pc__lock(&n->kswapd_mtx);
		n->stop = true;
		pthread_cond_signal(&n->kswapd_cond);
		pthread_cond_broadcast(&n->alloc_cond);
		pc__unlock(&n->kswapd_mtx);
		pthread_join(n->kswapd, NULL);
		n->kswapd_started = false;
	}
}

