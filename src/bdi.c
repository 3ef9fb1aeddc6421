/*
 * bdi.c - backing devices: the dirty mappings of each, its flusher thread,
 * its write bandwidth.
 *
 * One struct pc_bdi per st_dev of the files opened, made on first open and
 * kept until the cache goes.  Its dirty list holds the mappings with dirty
 * pages, oldest-dirtied first:
 *
 *   dirty_head -> m (dirtied 10:00:01) -> m (10:00:03) -> ... <- dirty_tail
 *
 * under b->lock.  A mapping joins when its first page is dirtied and
 * leaves when the flusher finds it clean.  The join and the leave race
 * without a lock on the fast path (on_dirty_list, nr_dirty): the dirtier
 * increments nr_dirty and then reads on_dirty_list; the flusher clears
 * on_dirty_list and then reads nr_dirty (both sequentially consistent), so
 * at least one of them sees the other and the mapping is never left dirty
 * and off the list.
 *
 * The flusher sleeps on wake_cond (wake_mtx) for the writeback interval
 * or until asked: BACKGROUND (dirty over the background threshold), RECLAIM
 * (reclaim met dirty pages at a tail), ALL (sync: write everything, then
 * bump `passes` and broadcast done_cond).  Each pass writes the oldest
 * mapping first, up to 1024 pages of it, and moves it to the tail if it is
 * still dirty; mappings dirty for longer than dirty_expire are written on
 * the interval wake-up even below the threshold.  It holds a reference on
 * the mapping it writes (taken under b->lock, unless the mapping is dying).
 *
 * Bandwidth: written bytes are counted at I/O completion; every 200 ms of
 * activity the flusher folds the rate into write_bw (7/8 old + 1/8 new).
 */
#include <stdlib.h>
#include <time.h>

#include "internal.h"

#define WB_CHUNK 1024		/* pages per mapping per turn */
#define BW_PERIOD_NS (200ull * 1000 * 1000)
#define INIT_BW (100ull << 20)	/* bytes/s before anything is measured */

static void list_del_locked(struct pc_bdi *b, struct pc_mapping *m)
{
	if (m->dirty_prev)
		m->dirty_prev->dirty_next = m->dirty_next;
	else
		b->dirty_head = m->dirty_next;
	if (m->dirty_next)
		m->dirty_next->dirty_prev = m->dirty_prev;
	else
		b->dirty_tail = m->dirty_prev;
	m->dirty_prev = m->dirty_next = NULL;
}

static void list_add_tail_locked(struct pc_bdi *b, struct pc_mapping *m)
{
	m->dirty_next = NULL;
	m->dirty_prev = b->dirty_tail;
	if (b->dirty_tail)
		b->dirty_tail->dirty_next = m;
	else
		b->dirty_head = m;
	b->dirty_tail = m;
}

void pc__bdi_mark_dirty(struct pc_mapping *m)
{
	struct pc_bdi *b = m->bdi;

	pc__lock(&b->lock);
	if (!atomic_load(&m->on_dirty_list)) {
		m->dirtied_ns = pc__now_ns();
		list_add_tail_locked(b, m);
		atomic_store(&m->on_dirty_list, true);
	}
	pc__unlock(&b->lock);
}

void pc__bdi_remove(struct pc_mapping *m)
{
	struct pc_bdi *b = m->bdi;

	if (!b)
		return;
	pc__lock(&b->lock);
	if (atomic_load(&m->on_dirty_list)) {
		list_del_locked(b, m);
		atomic_store(&m->on_dirty_list, false);
	}
	pc__unlock(&b->lock);
}

/* Off the list if clean; b->lock held. */
static bool retire_if_clean_locked(struct pc_bdi *b, struct pc_mapping *m)
{
	atomic_store(&m->on_dirty_list, false);
	if (atomic_load(&m->nr_dirty) != 0) {
		atomic_store(&m->on_dirty_list, true);
		return false;
	}
	list_del_locked(b, m);
	return true;
}

void pc__bdi_account_written(struct pc_bdi *b, uint64_t bytes)
{
	atomic_fetch_add_explicit(&b->written, bytes, memory_order_relaxed);
}

static void update_bandwidth(struct pc_bdi *b)
{
	uint64_t now = pc__now_ns();
	uint64_t written = atomic_load(&b->written);
	uint64_t elapsed = now - b->bw_stamp_ns;

	if (elapsed < BW_PERIOD_NS)
		return;
	if (written > b->bw_written && (atomic_load(&b->in_flight) ||
					 elapsed < 4 * BW_PERIOD_NS)) {
		uint64_t bw = (written - b->bw_written) * 1000000000ull / elapsed;
		uint64_t old = atomic_load(&b->write_bw);

		atomic_store(&b->write_bw, (old * 7 + bw) / 8);
		pc__update_dirty_limits(b->cache);
	}
	b->bw_stamp_ns = now;
	b->bw_written = written;
}

/* The oldest dirty mapping, referenced, moved to the tail; or NULL. */
static struct pc_mapping *next_dirty(struct pc_bdi *b, uint64_t older_than)
{
	struct pc_mapping *m, *found = NULL;

	pc__lock(&b->lock);
	for (m = b->dirty_head; m;) {
		struct pc_mapping *next = m->dirty_next;

		if (older_than && m->dirtied_ns > older_than)
			break;
		if (retire_if_clean_locked(b, m)) {
			m = next;
			continue;
		}
		if (pc__mapping_tryget(m)) {
			found = m;
			list_del_locked(b, m);
			list_add_tail_locked(b, m);
			m->dirtied_ns = pc__now_ns();
			break;
		}
		m = next;
	}
	pc__unlock(&b->lock);
	return found;
}

static uint64_t dirty_pages(struct pc_cache *c)
{
	return pc__vmstat_sum(c, PC_VM_nr_dirty);
}

/* Write mappings oldest first while @more says so; pages written. */
static uint64_t write_some(struct pc_bdi *b, unsigned work)
{
	struct pc_cache *c = b->cache;
	uint64_t total = 0;
	unsigned idle_turns = 0;
	uint64_t expire = (uint64_t)c->cfg.dirty_expire_ms * 1000000ull;
	uint64_t now = pc__now_ns();

	for (;;) {
		bool bg = dirty_pages(c) > atomic_load(&c->dirty_bg_limit);
		uint64_t older = 0;
		struct pc_mapping *m;
		long budget = WB_CHUNK;
		int n;

		if (atomic_load(&b->stop) && !(work & PC_WB_ALL))
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
		n = pc__writeback_range(m, 0, UINT64_MAX, work & PC_WB_ALL,
					(work & PC_WB_ALL) ? NULL : &budget);
		pc__fix_disk_size(m);
		pc__mapping_put(m);
		total += (uint64_t)n;
		if (n == 0 && ++idle_turns > 8)
			break;
		if (n)
			idle_turns = 0;
		if ((work & PC_WB_RECLAIM) && total >= WB_CHUNK && !bg)
			work &= ~PC_WB_RECLAIM;
		update_bandwidth(b);
	}
	return total;
}

static void *flusher(void *arg)
{
	struct pc_bdi *b = arg;
	struct pc_cache *c = b->cache;

	pthread_mutex_lock(&b->wake_mtx);
	while (!atomic_load(&b->stop) || b->work) {
		unsigned work;

		if (!b->work && !atomic_load(&b->stop)) {
			struct timespec ts;
			uint64_t ms = c->cfg.writeback_interval_ms;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(ms / 1000);
			ts.tv_nsec += (long)(ms % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&b->wake_cond, &b->wake_mtx, &ts);
		}
		work = b->work;
		b->work = 0;
		pthread_mutex_unlock(&b->wake_mtx);
		pc__inc(c, 0, flusher_wakeups);
		write_some(b, work);
		update_bandwidth(b);
		pthread_mutex_lock(&b->wake_mtx);
		if (work & PC_WB_ALL) {
			b->passes++;
			pthread_cond_broadcast(&b->done_cond);
		}
	}
	pthread_mutex_unlock(&b->wake_mtx);
	return NULL;
}

void pc__bdi_wakeup(struct pc_bdi *b, unsigned work)
{
	pthread_mutex_lock(&b->wake_mtx);
	if ((b->work & work) != work) {
		b->work |= work;
		pthread_cond_signal(&b->wake_cond);
	}
	pthread_mutex_unlock(&b->wake_mtx);
}

struct pc_bdi *pc__bdi_get(struct pc_cache *c, dev_t dev)
{
	struct pc_bdi *b;

	pthread_mutex_lock(&c->bdi_lock);
	for (b = c->bdis; b; b = b->next)
		if (b->dev == dev)
			goto out;
	b = calloc(1, sizeof(*b));
	if (!b)
		goto out;
	b->dev = dev;
	b->cache = c;
	pc__lock_init(&b->lock, c, PC_RANK_BDI, PC_VM_bdi_lock_acquired);
	pthread_mutex_init(&b->wake_mtx, NULL);
	pthread_cond_init(&b->wake_cond, NULL);
	pthread_cond_init(&b->done_cond, NULL);
	atomic_store(&b->write_bw, INIT_BW);
	b->bw_stamp_ns = pc__now_ns();
	if (pthread_create(&b->thread, NULL, flusher, b) != 0) {
		pc__lock_destroy(&b->lock);
		free(b);
		b = NULL;
		goto out;
	}
	b->started = true;
	b->next = c->bdis;
	c->bdis = b;
out:
	pthread_mutex_unlock(&c->bdi_lock);
	return b;
}

void pc__bdi_wakeup_all(struct pc_cache *c, unsigned work)
{
	pthread_mutex_lock(&c->bdi_lock);
	for (struct pc_bdi *b = c->bdis; b; b = b->next)
		pc__bdi_wakeup(b, work);
	pthread_mutex_unlock(&c->bdi_lock);
}

void pc__bdi_sync_all(struct pc_cache *c)
{
	struct pc_bdi *b, *first;

	/* bdis are only added (at the head) until the cache goes. */
	pthread_mutex_lock(&c->bdi_lock);
	first = c->bdis;
	pthread_mutex_unlock(&c->bdi_lock);
	for (b = first; b; b = b->next) {
		uint64_t target;

		pthread_mutex_lock(&b->wake_mtx);
		target = b->passes + 1;
		if (b->work & PC_WB_ALL)
			target++;	/* a pass already asked may have begun */
		b->work |= PC_WB_ALL;
		pthread_cond_signal(&b->wake_cond);
		while (b->passes < target)
			pthread_cond_wait(&b->done_cond, &b->wake_mtx);
		pthread_mutex_unlock(&b->wake_mtx);
	}
}

void pc__bdis_fini(struct pc_cache *c)
{
	while (c->bdis) {
		struct pc_bdi *b = c->bdis;

		c->bdis = b->next;
		pthread_mutex_lock(&b->wake_mtx);
		atomic_store(&b->stop, true);
		pthread_cond_signal(&b->wake_cond);
		pthread_mutex_unlock(&b->wake_mtx);
		if (b->started)
			pthread_join(b->thread, NULL);
		pc__lock_destroy(&b->lock);
		pthread_mutex_destroy(&b->wake_mtx);
		pthread_cond_destroy(&b->wake_cond);
		pthread_cond_destroy(&b->done_cond);
		free(b);
	}
}
