/*
 * bdi.c - backing devices: the dirty mappings of each, its flusher thread,
 * its write bandwidth.
 *
 * One struct pc_bdi per st_dev of the files opened, made on first open and
 * kept until the cache goes.  Its dirty list holds the mappings with dirty
 * pages, oldest-dirtied first:
 *
 *   dirty.head -> m (dirtied 10:00:01) -> m (10:00:03) -> ... <- dirty.tail
 *
 * under b->lock.  A mapping joins at the tail when its first page is
 * dirtied (dirtied_ns = now) and leaves when the flusher finds it clean.
 * The join and the leave race without a lock on the fast path
 * (on_dirty_list, nr_dirty): the dirtier increments nr_dirty and then
 * reads on_dirty_list; the flusher clears on_dirty_list and then reads
 * nr_dirty (both sequentially consistent), so at least one of them sees
 * the other and the mapping is never left dirty and off the list.  A
 * mapping the flusher took a chunk of goes back to the tail, its
 * dirtied_ns raised to the tail's so the list stays in order.
 *
 * The flusher sleeps on wake_cond (wake_mtx) for the writeback interval
 * (5 s) or until asked: BACKGROUND (dirty over the background threshold:
 * the cache's, or with writeback.dirty_time_ms this device's own), RECLAIM
 * (reclaim met dirty pages at a tail), ALL (sync: write everything, then
 * bump `passes` and broadcast done_cond).  A pass (b->busy set while it
 * runs; the throttle looks) writes the oldest mapping first, a chunk of
 * it - half a second of bandwidth, at least 1024 pages - and moves it to
 * the tail if it is still dirty, until the reason is gone; below the
 * threshold, on the interval, it writes mappings dirty for longer than
 * dirty_expire (30 s), each of them whole.  Mappings of unlinked files are
 * passed over by background and expiry passes while dirty is below the
 * throttle's freerun point: their pages will most likely die unwritten at
 * the last close (aim7 disk_wrt); reclaim and sync passes write them.  It
 * holds a reference on the mapping it writes (taken under b->lock, unless
 * the mapping is dying).
 *
 * A failing device: writes that fail leave their pages dirty (writeback.c),
 * and a flusher that rewrote them at once would spin.  When the last write
 * of the device failed (last_err_ns after last_ok_ns), background, expiry
 * and reclaim passes stop for a back-off that doubles from 100 ms up to the
 * interval at each pass that ends that way, and resets on a success
 * (writeback_backoff counts them).  fsync and sync passes always try.
 *
 * Bandwidth: written bytes are counted at I/O completion, which also
 * closes a 200 ms period when one has passed (bw_lock, trylock: the first
 * completer does it, nobody waits).  write_bw is a decaying average of the
 * periods' rates that falls slowly (7/8 old + 1/8 new) and rises fast
 * (half-way to the new rate): an estimate too low starves the device (the
 * throttle paces writers below its rate, the flusher stops at the
 * background threshold, the queue drains), one too high only lets dirty
 * climb the position-ratio curve, which holds it below the limit.  From
 * the initial 100 MiB/s it reaches a 1.5 GB/s device in about 0.4 s.  A
 * period longer than 1 s had idle time in it and is not sampled (as the
 * kernel skips quiet periods).  The period's end also rolls the count of
 * throttled threads (dirtiers, for throttle.c) and, with
 * writeback.dirty_time_ms, recomputes the limits.
 *
 * The throttle's queue (throttle_mtx, throttle_cond, throttle_gen; a
 * leaf lock): writers paced by throttle.c sleep on it with a timeout, and
 * writeback.c's completion path ends every pause at once (a new
 * generation) when dirty is back under the freerun point.  `throttled`
 * counts the sleepers so that completions skip the lock when there are
 * none.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "dirty.h"
#include "mem.h"
#include "share.h"

/* ThreadSanitizer builds: every device stable (stable_writes_of). */
#if defined(PC_TSAN) || defined(__SANITIZE_THREAD__)
#define STABLE_ALWAYS true
#else
#define STABLE_ALWAYS false
#endif

#define WB_CHUNK_MIN 1024	/* pages per mapping per turn, at least */
#define BW_PERIOD_NS (200ull * 1000 * 1000)
#define BW_IDLE_NS (5 * BW_PERIOD_NS)	/* a longer period is not sampled */
#define INIT_BW (100ull << 20)	/* bytes/s before anything is measured */
#define BACKOFF_MIN_MS 100

#define dirty_first(b) pc_list_first_entry(&(b)->dirty, struct pc_mapping, \
					   dirty_link)
#define dirty_next(m) pc_list_next_entry(m, struct pc_mapping, dirty_link)

void pc__bdi_mark_dirty(struct pc_mapping *m)
{
	struct pc_bdi *b = m->bdi;

	pc__lock_counted(&b->lock);
	if (!atomic_load(&m->on_dirty_list)) {
		m->dirtied_ns = pc__now_ns();
		pc_list_add_tail(&b->dirty, &m->dirty_link);
		atomic_store(&m->on_dirty_list, true);
	}
	pc__unlock(&b->lock);
}

void pc__bdi_remove(struct pc_mapping *m)
{
	struct pc_bdi *b = m->bdi;

	if (!b)
		return;
	pc__lock_counted(&b->lock);
	if (atomic_load(&m->on_dirty_list)) {
		pc_list_del(&b->dirty, &m->dirty_link);
		atomic_store(&m->on_dirty_list, false);
	}
	pc__unlock(&b->lock);
}

/* Off the list if clean; b->lock held. */
static bool retire_if_clean_locked(struct pc_bdi *b, struct pc_mapping *m)
{
	PC_ASSERT_HELD(&b->lock);
	atomic_store(&m->on_dirty_list, false);
	if (atomic_load(&m->nr_dirty) != 0) {
		atomic_store(&m->on_dirty_list, true);
		return false;
	}
	pc_list_del(&b->dirty, &m->dirty_link);
	return true;
}

bool pc__bdi_retire_if_clean(struct pc_mapping *m)
{
	struct pc_bdi *b = m->bdi;
	bool off = true;

	if (!atomic_load(&m->on_dirty_list))
		return true;
	pc__lock_counted(&b->lock);
	if (atomic_load(&m->on_dirty_list))
		off = retire_if_clean_locked(b, m);
	pc__unlock(&b->lock);
	return off;
}

/* Close the bandwidth period if 200 ms have passed; nobody waits for it. */
static void update_bandwidth(struct pc_bdi *b)
{
	struct pc_cache *c = b->cache;
	uint64_t now, elapsed, written, old, bw = 0;
	unsigned n;

	if (!pc__trylock(&b->bw_lock))
		return;
	now = pc__now_ns();
	elapsed = now - b->bw_stamp_ns;
	if (elapsed < BW_PERIOD_NS) {
		pc__unlock(&b->bw_lock);
		return;
	}
	written = atomic_load(&b->written);
	if (written > b->bw_written && elapsed <= BW_IDLE_NS) {
		bw = (written - b->bw_written) * 1000000000ull / elapsed;
		old = atomic_load(&b->write_bw);
		bw = bw > old ? (old + bw) / 2 : pc_bw_decay(old, bw);
		atomic_store(&b->write_bw, bw);
	}
	b->bw_stamp_ns = now;
	b->bw_written = written;
	n = atomic_exchange_explicit(&b->dirtiers_cur, 0, memory_order_relaxed);
	atomic_store_explicit(&b->dirtiers, pc_max(n, 1u), memory_order_relaxed);
	atomic_fetch_add_explicit(&b->period, 1, memory_order_relaxed);
	pc__unlock(&b->bw_lock);
	if (bw && c->cfg.dirty_time_ms)
		pc__update_dirty_limits(c);
}

void pc__bdi_account_written(struct pc_bdi *b, uint64_t bytes)
{
	atomic_fetch_add_explicit(&b->written, bytes, memory_order_relaxed);
	update_bandwidth(b);
}

/* ------------------------------------------------------------------ */
/* The throttle's queue: writers pause here, completions end pauses.    */

static void throttle_init(struct pc_bdi *b)
{
	pc__cache_lock_init(b->cache, &b->throttle_mtx, PC_RANK_THROTTLE, -1);
	pc__cache_cond_init(b->cache, &b->throttle_cond, true);
}

static void throttle_fini(struct pc_bdi *b)
{
	pthread_cond_destroy(&b->throttle_cond);
	pc__lock_destroy(&b->throttle_mtx);
}

int64_t pc__bdi_throttle_pause(struct pc_bdi *b, int64_t ns)
{
	uint64_t t0 = pc__now_ns(), gen;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000ll);
	ts.tv_nsec += (long)(ns % 1000000000ll);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pc__lock(&b->throttle_mtx);
	gen = b->throttle_gen;
	atomic_fetch_add(&b->throttled, 1);
	while (b->throttle_gen == gen &&
	       pc__cond_timedwait(&b->throttle_cond, &b->throttle_mtx,
				      &ts) != ETIMEDOUT)
		;
	atomic_fetch_sub(&b->throttled, 1);
	pc__unlock(&b->throttle_mtx);
	return (int64_t)(pc__now_ns() - t0);
}

void pc__bdi_throttle_wake(struct pc_bdi *b)
{
	pc__lock(&b->throttle_mtx);
	b->throttle_gen++;
	pthread_cond_broadcast(&b->throttle_cond);
	pc__unlock(&b->throttle_mtx);
}

/* ------------------------------------------------------------------ */
/* The flusher.                                                         */

/*
 * The oldest dirty mapping (dirtied before @older_than, if not 0),
 * referenced, moved to the tail; or NULL.
 */
static struct pc_mapping *next_dirty(struct pc_bdi *b, uint64_t older_than)
{
	struct pc_mapping *m, *found = NULL;

	pc__lock_counted(&b->lock);
	for (m = dirty_first(b); m;) {
		struct pc_mapping *next = dirty_next(m);

		if (older_than && m->dirtied_ns > older_than)
			break;
		if (retire_if_clean_locked(b, m)) {
			m = next;
			continue;
		}
		if (pc__mapping_tryget(m)) {
			struct pc_mapping *tail = pc_list_last_entry(
				&b->dirty, struct pc_mapping, dirty_link);

			found = m;
			if (tail != m) {
				if (tail->dirtied_ns > m->dirtied_ns)
					m->dirtied_ns = tail->dirtied_ns;
				pc_list_del(&b->dirty, &m->dirty_link);
				pc_list_add_tail(&b->dirty, &m->dirty_link);
			}
			break;
		}
		m = next;
	}
	pc__unlock(&b->lock);
	return found;
}

/* Dirty above the background threshold, for this device's flusher? */
static bool over_bg(struct pc_bdi *b)
{
	struct pc_cache *c = b->cache;
	uint64_t bbg = atomic_load(&b->dirty_bg_limit);

	if (bbg && atomic_load(&b->nr_dirty) > (int64_t)bbg)
		return true;
	return pc__vmstat_sum(c, PC_VM_nr_dirty) > atomic_load(&c->dirty_bg_limit);
}

/* An unlinked file's pages, while writers run free: leave them. */
static bool leave_unlinked(struct pc_mapping *m)
{
	struct pc_cache *c = m->cache;
	uint64_t dirty, freerun;
	bool unlinked;

	pc__lock(&c->mappings_lock);
	unlinked = m->unlinked;
	pc__unlock(&c->mappings_lock);
	if (!unlinked)
		return false;
	dirty = pc__vmstat_sum(c, PC_VM_nr_dirty) +
		pc__vmstat_sum(c, PC_VM_nr_writeback);
	freerun = (atomic_load(&c->dirty_bg_limit) + atomic_load(&c->dirty_limit)) / 2;
	return dirty < freerun;
}

/* The device's last write failed, a short while ago. */
static bool failing(struct pc_bdi *b, uint64_t now)
{
	uint64_t err = atomic_load(&b->last_err_ns);
	unsigned ms = pc_max(b->backoff_ms, (unsigned)BACKOFF_MIN_MS);

	return err > atomic_load(&b->last_ok_ns) &&
	       now - err < (uint64_t)ms * 1000000ull;
}

static unsigned list_length(struct pc_bdi *b)
{
	unsigned n = 0;

	pc__lock_counted(&b->lock);
	for (struct pc_mapping *m = dirty_first(b); m; m = dirty_next(m))
		n++;
	pc__unlock(&b->lock);
	return n;
}

/* Pages per mapping per turn: half a second of bandwidth, whole requests. */
static long chunk_pages(struct pc_bdi *b)
{
	uint64_t half = (atomic_load(&b->write_bw) / 2) >> PC_PAGE_SHIFT;

	half -= half % PC_MAX_IO_PAGES;
	return (long)pc_max(half, (uint64_t)WB_CHUNK_MIN);
}

/* Write mappings oldest first while @work says so; pages written. */
static uint64_t write_some(struct pc_bdi *b, unsigned work)
{
	struct pc_cache *c = b->cache;
	uint64_t total = 0;
	unsigned idle_turns = 0, skips = 0, listed = list_length(b);
	uint64_t expire = (uint64_t)c->cfg.dirty_expire_ms * 1000000ull;
	bool all = work & PC_WB_ALL;

	for (;;) {
		uint64_t now = pc__now_ns(), older = 0;
		bool bg = over_bg(b);
		struct pc_mapping *m;
		long budget;
		int n;

		if (atomic_load(&b->stop) && !all)
			break;
		if (!all && failing(b, now))
			break;
		if (!(work & (PC_WB_ALL | PC_WB_RECLAIM)) && !bg) {
			/* Below the threshold: only what has expired. */
			if (now < expire)
				break;
			older = now - expire;
		}
		m = next_dirty(b, older);
		if (!m)
			break;
		if (!all && !(work & PC_WB_RECLAIM) && leave_unlinked(m)) {
			pc__mapping_put(m);	/* it went to the tail */
			if (++skips > listed)
				break;	/* round the list: nothing else */
			continue;
		}
		budget = chunk_pages(b);
		if (older)	/* expired: all of it, not a chunk */
			budget += (long)atomic_load(&m->nr_dirty);
		n = pc__writeback_range(m, 0, UINT64_MAX, all, all ? NULL : &budget);
		pc__mapping_put(m);
		total += (uint64_t)n;
		if (n == 0 && ++idle_turns > 8)
			break;
		if (n)
			idle_turns = 0;
		if ((work & PC_WB_RECLAIM) && total >= WB_CHUNK_MIN && !bg)
			work &= ~PC_WB_RECLAIM;
		update_bandwidth(b);
	}
	return total;
}

/*
 * After a pass that wrote @written pages: a device whose last write failed
 * is left alone longer each time; one that wrote is tried at once.
 */
static void adjust_backoff(struct pc_bdi *b, uint64_t written)
{
	struct pc_cache *c = b->cache;

	if (atomic_load(&b->last_err_ns) <= atomic_load(&b->last_ok_ns)) {
		b->backoff_ms = 0;
	} else if (written) {
		b->backoff_ms = b->backoff_ms
			? pc_min(b->backoff_ms * 2, c->cfg.writeback_interval_ms)
			: BACKOFF_MIN_MS;
		pc__inc(c, 0, writeback_backoff);
	}
}

static void *flusher(void *arg)
{
	struct pc_bdi *b = arg;
	struct pc_cache *c = b->cache;

	pc__lock(&b->wake_mtx);
	while (!atomic_load(&b->stop) || b->work) {
		unsigned work;

		if (!b->work && !atomic_load(&b->stop)) {
			struct timespec ts;
			uint64_t ms = c->cfg.writeback_interval_ms;

			/* A failing device is tried again after its back-off. */
			if (b->backoff_ms && atomic_load(&b->nr_dirty) > 0)
				ms = pc_min(ms, (uint64_t)b->backoff_ms);

			pc__deadline(&ts, ms * 1000000ull);
			pc__cond_timedwait(&b->wake_cond, &b->wake_mtx, &ts);
		}
		work = b->work;
		atomic_store(&b->busy, true);	/* before the work is seen gone */
		b->work = 0;
		pc__unlock(&b->wake_mtx);
		pc__inc(c, 0, flusher_wakeups);
		adjust_backoff(b, write_some(b, work));
		atomic_store(&b->busy, false);
		update_bandwidth(b);
		pc__lock(&b->wake_mtx);
		if (work & PC_WB_ALL) {
			b->passes++;
			pthread_cond_broadcast(&b->done_cond);
		}
	}
	pc__unlock(&b->wake_mtx);
	return NULL;
}

bool pc__bdi_flusher_idle(struct pc_bdi *b)
{
	bool idle;

	pc__lock(&b->wake_mtx);
	idle = !b->work && !atomic_load(&b->busy);
	pc__unlock(&b->wake_mtx);
	return idle && pc__bdi_in_flight(b) == 0;
}

int pc__bdi_in_flight(struct pc_bdi *b)
{
	int n = 0;

	for (unsigned i = 0; i < PC_BDI_OWNERS; i++)
		n += atomic_load_explicit(&b->in_flight[i],
					  memory_order_relaxed);
	return n;
}

void pc__bdi_reap(struct pc_cache *c, uint32_t id)
{
	pc__lock(&c->bdi_lock);
	for (struct pc_bdi *b = c->bdis; b; b = b->next)
		atomic_store(&b->in_flight[id], 0);
	pc__unlock(&c->bdi_lock);
}

void pc__bdi_wakeup(struct pc_bdi *b, unsigned work)
{
	pc__lock(&b->wake_mtx);
	if ((b->work & work) != work) {
		b->work |= work;
		pthread_cond_signal(&b->wake_cond);
	}
	pc__unlock(&b->wake_mtx);
}

/*
 * Does block device @dev ask for stable pages?  Its queue says, or for a
 * partition its disk's queue.  Not a block device (tmpfs, overlay, NFS):
 * no.  ThreadSanitizer builds say yes everywhere: the kernel reading a
 * page that a writer changes is a race TSan sees (and on plain ext4 a
 * harmless one: the page is dirty again and written again), so those runs
 * take the stable path.
 */
static bool stable_writes_of(dev_t dev)
{
	char path[128], v = '0';
	int fd;

	if (STABLE_ALWAYS)
		return true;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/stable_writes",
		 major(dev), minor(dev));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path),
			 "/sys/dev/block/%u:%u/../queue/stable_writes",
			 major(dev), minor(dev));
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return false;
	if (read(fd, &v, 1) != 1)
		v = '0';
	close(fd);
	return v == '1';
}

/* Stop @b's flusher if it runs (it finishes the work asked), free @b. */
static void bdi_free(struct pc_bdi *b)
{
	if (atomic_load(&b->started)) {
		pc__lock(&b->wake_mtx);
		atomic_store(&b->stop, true);
		pthread_cond_signal(&b->wake_cond);
		pc__unlock(&b->wake_mtx);
		pthread_join(b->thread, NULL);
	}
	pc__lock_destroy(&b->lock);
	pc__lock_destroy(&b->wake_mtx);
	pthread_cond_destroy(&b->wake_cond);
	pthread_cond_destroy(&b->done_cond);
	pc__lock_destroy(&b->bw_lock);
	throttle_fini(b);
	pc__cache_free(b->cache, b, sizeof(*b));
}

/* @b's flusher thread, if it has none yet; bdi_lock held. */
static int flusher_start_locked(struct pc_bdi *b)
{
	PC_ASSERT_HELD(&b->cache->bdi_lock);
	if (atomic_load(&b->started))
		return 0;
	if (pthread_create(&b->thread, NULL, flusher, b) != 0)
		return -EAGAIN;
	atomic_store(&b->started, true);
	return 0;
}

void pc__bdi_start(struct pc_bdi *b)
{
	struct pc_cache *c = b->cache;

	pc__lock(&c->bdi_lock);
	(void)flusher_start_locked(b);	/* EAGAIN: the next send tries */
	pc__unlock(&c->bdi_lock);
}

struct pc_bdi *pc__bdi_get(struct pc_cache *c, dev_t dev)
{
	bool created = false;
	struct pc_bdi *b;

	pc__lock(&c->bdi_lock);
	for (b = c->bdis; b; b = b->next)
		if (b->dev == dev)
			goto out;
	b = pc__cache_zalloc(c, sizeof(*b));
	if (!b)
		goto out;
	b->dev = dev;
	b->cache = c;
	atomic_init(&b->stable_writes, stable_writes_of(dev));
	pc__cache_lock_init(c, &b->lock, PC_RANK_BDI, PC_VM_bdi_lock_acquired);
	pc__cache_lock_init(c, &b->wake_mtx, PC_RANK_BDI_WAKE, -1);
	pc__cache_cond_init(c, &b->wake_cond, false);
	pc__cache_cond_init(c, &b->done_cond, false);
	pc__cache_lock_init(c, &b->bw_lock, PC_RANK_BDI_BW, -1);
	throttle_init(b);
	atomic_store(&b->write_bw, INIT_BW);
	atomic_store(&b->dirtiers, 1);
	b->bw_stamp_ns = pc__now_ns();
	/* A shared cache's flushers run in its home (home.c starts one
	 * for a bdi made elsewhere when a writer sends its descriptor). */
	if (pc__share_is_home(c) && flusher_start_locked(b)) {
		bdi_free(b);
		b = NULL;
		goto out;
	}
	b->next = c->bdis;
	c->bdis = b;
	created = true;
out:
	pc__unlock(&c->bdi_lock);
	if (created && c->cfg.dirty_time_ms)
		pc__update_dirty_limits(c);	/* its share of the limit */
	return b;
}

void pc__bdi_wakeup_all(struct pc_cache *c, unsigned work)
{
	pc__lock(&c->bdi_lock);
	for (struct pc_bdi *b = c->bdis; b; b = b->next)
		pc__bdi_wakeup(b, work);
	pc__unlock(&c->bdi_lock);
}

bool pc__bdi_failing(struct pc_cache *c)
{
	struct pc_bdi *first;

	/* bdis are only added (at the head) until the cache goes. */
	pc__lock(&c->bdi_lock);
	first = c->bdis;
	pc__unlock(&c->bdi_lock);
	for (struct pc_bdi *b = first; b; b = b->next)
		if (atomic_load(&b->last_err_ns) > atomic_load(&b->last_ok_ns))
			return true;
	return false;
}

void pc__bdi_sync_all(struct pc_cache *c)
{
	struct pc_bdi *b, *first;

	/* bdis are only added (at the head) until the cache goes. */
	pc__lock(&c->bdi_lock);
	first = c->bdis;
	pc__unlock(&c->bdi_lock);
	for (b = first; b; b = b->next) {
		uint64_t target;

		if (!atomic_load(&b->started))
			continue;	/* no flusher: nothing was written */
		pc__lock(&b->wake_mtx);
		target = b->passes + 1;
		if (b->work & PC_WB_ALL)
			target++;	/* a pass already asked may have begun */
		b->work |= PC_WB_ALL;
		pthread_cond_signal(&b->wake_cond);
		while (b->passes < target)
			pc__cond_wait(&b->done_cond, &b->wake_mtx);
		pc__unlock(&b->wake_mtx);
	}
}

void pc__bdis_fini(struct pc_cache *c)
{
	while (c->bdis) {
		struct pc_bdi *b = c->bdis;

		c->bdis = b->next;
		bdi_free(b);
	}
}
