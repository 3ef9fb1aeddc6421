/*
 * trace.c - LRU trace events: per-thread rings, drained to a file.
 *
 * Seed 004 added LRU insertion and activation tracepoints so that the life
 * of pages on the LRU could be modelled offline.  This file records those
 * events and a few more (enum pc_trace_event) for one cache, when its
 * config says trace=PATH; `pagecache trace report` reads the file.
 *
 *   producers (any thread)                 the drain thread
 *   ----------------------                 ----------------
 *   pc_trace(c, ev, p, arg)                every 2..8 ms, at once when a
 *     c->trace == NULL: one branch         ring was a quarter full, or when
 *     else pc__trace_emit():               kicked:
 *       ring = this thread's ring of c       for each ring on t->rings:
 *       full? count lost, return               copy [tail, head) into wbuf
 *       write rec at head, head++              as one EVENTS block, tail = head
 *       half full now? kick the drainer      write(wbuf); reap rings whose
 *                                            thread has exited
 *   pc__trace_close(): stop the drain thread, drain the rest, write the
 *   footer (events and losses per thread), close the file.
 *
 * One ring per (thread, cache): single producer (its thread), single
 * consumer (whoever holds t->drain_lock).  head is written only by the
 * producer (release: the record is filled before), tail only by the
 * consumer (release: the slots are copied out before); each reads the
 * other's index with acquire.  A full ring drops the event and counts it
 * (ring->lost, vmstat trace_lost): the caller never waits.  A ring that
 * fills to half kicks the drain thread: at most once per drain pass (the
 * t->kick flag), the producer takes t->mtx, a leaf lock held only for a
 * few instructions, and signals t->cond.
 *
 * Finding the ring: a thread-local pointer to this thread's table of
 * (trace id, ring); the last one used is checked first.  Trace ids are
 * unique in the process, so a stale entry of a closed trace never matches
 * a new one at the same address.  A new ring is pushed onto t->rings
 * lock-free (producers never take a lock the drainer holds while writing).
 *
 * Lifetime of a ring: two references, its thread's (dropped by the
 * thread-exit destructor of the table, or when the thread notices the
 * trace closed) and the trace's (dropped at close, or by the drainer when
 * it reaps the ring of an exited thread after draining it).  The last
 * reference frees it.  Only the consumer unlinks rings from t->rings.
 *
 * Callers: pc__trace_open before any thread of the cache can emit;
 * pc__trace_close after every thread that emits has stopped (kswapd,
 * flushers, I/O completions) and the LRU batches are drained.  Emitting
 * takes no lock; callers may hold any (the first event of a thread
 * allocates its ring).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "tracepoint.h"

/* A record stores p->flags as it is: the format's bits are page.h's. */
#define PC_TRACE_PG_CHECK(name) \
	_Static_assert((int)PC_TRACE_PG_##name == (int)PG_##name, \
		       "trace bit " #name);
PC_TRACE_PAGE_FLAGS(PC_TRACE_PG_CHECK)
#undef PC_TRACE_PG_CHECK
_Static_assert((int)PC_TRACE_NR_PAGE_FLAGS == (int)PG_nr_flags,
	       "every page flag traced");
_Static_assert(PC_MAX_NODES <= 256, "node fits the record's u8");

#define WBUF_SIZE (1u << 20)		/* the drain thread's write buffer */
#define DRAIN_MIN_MS 2
#define DRAIN_MAX_MS 8

_Atomic int pc__trace_on;
_Atomic unsigned pc__trace_ring_records = PC_TRACE_RING_DEFAULT;
uint64_t (*pc__trace_clock)(void);

struct pc_ring {
	/* the producer */
	_Atomic uint64_t head;		/* next slot to fill */
	_Atomic uint64_t lost;		/* producer stores; anyone loads */
	uint64_t mask;			/* read-only: slots - 1 */
	uint32_t tid;			/* read-only */
	/* the consumer (t->drain_lock) */
	_Alignas(64) _Atomic uint64_t tail;	/* next slot to read */
	uint64_t written;		/* records copied to the file */
	struct pc_ring *next;		/* set before the push, then consumer */
	/* both */
	_Atomic int refs;		/* the thread's and the trace's */
	_Atomic bool closed;		/* the trace has dropped it */
	_Alignas(64) struct pc_trace_rec buf[];
};

struct pc_trace {
	/* read-only after open */
	uint64_t id;
	int fd;
	char path[256];

	_Atomic(struct pc_ring *) rings;	/* push: anyone; unlink: drain_lock */
	_Atomic uint64_t lost_noring;		/* no ring could be made */
	_Atomic bool paused;			/* test hook */

	/* drain_lock: the consumer side, the file */
	struct pc_lock drain_lock;
	char *wbuf;
	size_t wlen;
	uint64_t wrecs;			/* records in wbuf */
	int werr;			/* first write error, errno */
	uint64_t write_dropped;		/* records lost to write errors */
	struct pc_trace_thread_stat *retired;	/* reaped rings' totals */
	size_t nr_retired, cap_retired;

	/* mtx: the drain thread's sleep */
	struct pc_lock mtx;
	pthread_cond_t cond;
	bool stop;
	bool kicked;			/* a producer asked for a pass */
	pthread_t thread;
	_Atomic bool kick;		/* a kick is pending: don't repeat it */
};

/* ------------------------------------------------------------------ */
/* Thread-local ring table.                                            */

struct tls_ent {
	uint64_t trace_id;
	struct pc_ring *ring;
};

struct trace_tls {
	uint64_t last_id;		/* the entry used last: checked first */
	struct pc_ring *last;
	unsigned n, cap;
	struct tls_ent *ent;
};

static __thread struct trace_tls *tl __attribute__((tls_model("initial-exec")));
static __thread uint32_t tl_tid;
static _Atomic uint32_t next_tid = 1;
static _Atomic uint64_t next_trace_id = 1;
static pthread_key_t tls_key;
static bool tls_key_ok;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void ring_put(struct pc_ring *r)
{
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
		free(r);
}

static void tls_destroy(void *v)
{
	struct trace_tls *s = v;

	for (unsigned i = 0; i < s->n; i++)
		ring_put(s->ent[i].ring);
	free(s->ent);
	free(s);
	tl = NULL;
}

static void tls_key_init(void)
{
	tls_key_ok = pthread_key_create(&tls_key, tls_destroy) == 0;
}

static struct trace_tls *tls_get(void)
{
	struct trace_tls *s = tl;

	if (s)
		return s;
	pthread_once(&tls_once, tls_key_init);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (tls_key_ok)
		pthread_setspecific(tls_key, s);
	if (!tl_tid)
		tl_tid = atomic_fetch_add_explicit(&next_tid, 1,
						   memory_order_relaxed);
	tl = s;
	return s;
}

static struct pc_ring *ring_new(struct pc_trace *t)
{
	unsigned n = atomic_load_explicit(&pc__trace_ring_records,
					  memory_order_relaxed);
	struct pc_ring *r, *head;
	size_t size;

	if (n < 2 || (n & (n - 1)))
		n = PC_TRACE_RING_DEFAULT;
	size = sizeof(*r) + (size_t)n * sizeof(struct pc_trace_rec);
	size = (size + 63) & ~(size_t)63;
	r = aligned_alloc(64, size);
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->mask = n - 1;
	r->tid = tl_tid;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->lost, 0);
	atomic_init(&r->refs, 2);
	atomic_init(&r->closed, false);

	head = atomic_load_explicit(&t->rings, memory_order_relaxed);
	do {
		r->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&t->rings, &head, r,
							memory_order_acq_rel,
							memory_order_relaxed));
	return r;
}

/* The calling thread's ring of @t, made on first use; NULL if no memory. */
static struct pc_ring *ring_get_slow(struct pc_trace *t)
{
	struct trace_tls *s = tls_get();
	struct pc_ring *r = NULL;

	if (!s)
		return NULL;
	s->last_id = 0;
	s->last = NULL;
	for (unsigned i = 0; i < s->n;) {
		struct tls_ent *e = &s->ent[i];

		if (e->trace_id == t->id) {
			r = e->ring;
			i++;
		} else if (atomic_load_explicit(&e->ring->closed,
						memory_order_acquire)) {
			ring_put(e->ring);	/* its trace is gone */
			*e = s->ent[--s->n];
		} else {
			i++;
		}
	}
	if (!r) {
		if (s->n == s->cap) {
			unsigned cap = s->cap ? 2 * s->cap : 4;
			struct tls_ent *ne = realloc(s->ent, cap * sizeof(*ne));

			if (!ne)
				return NULL;
			s->ent = ne;
			s->cap = cap;
		}
		r = ring_new(t);
		if (!r)
			return NULL;
		s->ent[s->n++] = (struct tls_ent){ t->id, r };
	}
	s->last_id = t->id;
	s->last = r;
	return r;
}

/* ------------------------------------------------------------------ */
/* The producer.                                                       */

/* A ring is half full: ask the drain thread for a pass now. */
static void trace_kick(struct pc_trace *t)
{
	if (atomic_exchange_explicit(&t->kick, true, memory_order_relaxed))
		return;
	pc__lock(&t->mtx);
	t->kicked = true;
	pthread_cond_signal(&t->cond);
	pc__unlock(&t->mtx);
}

static inline uint64_t trace_now(void)
{
	struct timespec ts;

	if (pc__trace_clock)
		return pc__trace_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pc__trace_emit(struct pc_cache *c, int event, struct pc_page *p,
		    uint32_t arg)
{
	struct pc_trace *t = c->trace;
	struct trace_tls *s = tl;
	struct pc_mapping *m;
	struct pc_trace_rec *rec;
	struct pc_ring *r;
	uint64_t h, tail;
	int node;

	PC_ASSERT(event >= 0 && event < PC_TRACE_NR_EVENTS);
	if (!t)
		return;
	node = page_node(c, p)->id;
	if (__builtin_expect(s != NULL && s->last_id == t->id, 1))
		r = s->last;
	else
		r = ring_get_slow(t);
	if (__builtin_expect(r == NULL, 0)) {
		atomic_fetch_add_explicit(&t->lost_noring, 1,
					  memory_order_relaxed);
		pc__count(c, node, PC_VM_trace_lost, 1);
		return;
	}

	h = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (h - tail > r->mask) {
		atomic_store_explicit(&r->lost,
			atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
			memory_order_relaxed);
		pc__count(c, node, PC_VM_trace_lost, 1);
		return;
	}
	m = page_mapping(p);
	rec = &r->buf[h & r->mask];
	rec->ts = trace_now();
	rec->index = page_index(p);
	rec->pfn = page_pfn(c, p);
	rec->mapping = m ? pc_trace_fold_ino((uint64_t)m->ino) : 0;
	rec->arg = arg;
	rec->flags = (uint16_t)atomic_load_explicit(&p->flags,
						    memory_order_relaxed);
	rec->event = (uint8_t)event;
	rec->node = (uint8_t)node;
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	pc__count(c, node, PC_VM_trace_events, 1);
	if (__builtin_expect(h + 1 - tail == (r->mask + 1) / 2, 0))
		trace_kick(t);
}

/* ------------------------------------------------------------------ */
/* The consumer: everything below runs under t->drain_lock.            */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len) {
		ssize_t n = write(fd, b, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static void wbuf_flush_locked(struct pc_trace *t)
{
	PC_ASSERT_HELD(&t->drain_lock);
	if (t->wlen && !t->werr) {
		int err = write_all(t->fd, t->wbuf, t->wlen);

		if (err)
			t->werr = -err;
	}
	if (t->werr)
		t->write_dropped += t->wrecs;
	t->wlen = 0;
	t->wrecs = 0;
}

static void wbuf_add(struct pc_trace *t, const void *p, size_t len)
{
	memcpy(t->wbuf + t->wlen, p, len);
	t->wlen += len;
}

/* Copy what @r holds into EVENTS blocks; returns the records copied. */
static uint64_t drain_ring_locked(struct pc_trace *t, struct pc_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t total = head - tail;
	const size_t rs = sizeof(struct pc_trace_rec);

	PC_ASSERT_HELD(&t->drain_lock);
	while (tail != head) {
		struct pc_trace_block b = { PC_TRACE_BLOCK_MAGIC,
					    PC_TRACE_BLK_EVENTS, 0, r->tid, 0 };
		uint64_t n, first, k;

		if (WBUF_SIZE - t->wlen < sizeof(b) + rs)
			wbuf_flush_locked(t);
		n = pc_min(head - tail, (WBUF_SIZE - t->wlen - sizeof(b)) / rs);
		b.count = (uint32_t)n;
		wbuf_add(t, &b, sizeof(b));
		first = tail & r->mask;
		k = pc_min(n, r->mask + 1 - first);
		wbuf_add(t, &r->buf[first], k * rs);
		if (k < n)
			wbuf_add(t, &r->buf[0], (n - k) * rs);
		tail += n;
		t->wrecs += n;
		r->written += n;
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return total;
}

static void retire_locked(struct pc_trace *t, struct pc_ring *r)
{
	PC_ASSERT_HELD(&t->drain_lock);
	if (t->nr_retired == t->cap_retired) {
		size_t cap = t->cap_retired ? 2 * t->cap_retired : 16;
		void *n = realloc(t->retired, cap * sizeof(*t->retired));

		if (!n)
			return;		/* the footer misses one thread */
		t->retired = n;
		t->cap_retired = cap;
	}
	t->retired[t->nr_retired++] = (struct pc_trace_thread_stat){
		.tid = r->tid, .events = r->written,
		.lost = atomic_load_explicit(&r->lost, memory_order_relaxed),
	};
}

/* Take @r out of t->rings; @prev is its predecessor seen by the walk. */
static void unlink_locked(struct pc_trace *t, struct pc_ring *prev,
			  struct pc_ring *r)
{
	struct pc_ring *expect = r;

	PC_ASSERT_HELD(&t->drain_lock);
	if (prev) {
		prev->next = r->next;
		return;
	}
	if (atomic_compare_exchange_strong_explicit(&t->rings, &expect, r->next,
						    memory_order_acq_rel,
						    memory_order_acquire))
		return;
	/* New rings were pushed in front: r is deeper now. */
	for (prev = expect; prev->next != r; prev = prev->next)
		;
	prev->next = r->next;
}

/*
 * One pass over every ring.  Rings whose thread has exited (only the
 * trace's reference left) are drained a last time and freed.  Returns the
 * records copied; *busy says some ring was over a quarter full.
 */
static uint64_t drain_pass_locked(struct pc_trace *t, bool *busy)
{
	struct pc_ring *prev = NULL, *r, *next;
	uint64_t total = 0;

	PC_ASSERT_HELD(&t->drain_lock);
	r = atomic_load_explicit(&t->rings, memory_order_acquire);
	for (; r; r = next) {
		bool orphan = atomic_load_explicit(&r->refs,
						   memory_order_acquire) == 1;
		uint64_t n = drain_ring_locked(t, r);

		next = r->next;
		total += n;
		if (busy && n > (r->mask + 1) / 4)
			*busy = true;
		if (orphan) {
			retire_locked(t, r);
			unlink_locked(t, prev, r);
			ring_put(r);
		} else {
			prev = r;
		}
	}
	wbuf_flush_locked(t);
	return total;
}

static void *drain_main(void *arg)
{
	struct pc_trace *t = arg;
	unsigned ms = DRAIN_MIN_MS;

	pc__lock(&t->mtx);
	while (!t->stop) {
		bool busy = false;
		uint64_t n = 0;
		struct timespec ts;

		t->kicked = false;
		pc__unlock(&t->mtx);
		atomic_store_explicit(&t->kick, false, memory_order_relaxed);
		pc__lock(&t->drain_lock);	/* paused under it: see pause */
		if (!atomic_load_explicit(&t->paused, memory_order_relaxed))
			n = drain_pass_locked(t, &busy);
		pc__unlock(&t->drain_lock);
		pc__lock(&t->mtx);
		if (t->stop || t->kicked || busy)
			continue;
		ms = n ? DRAIN_MIN_MS : pc_min(ms * 2, DRAIN_MAX_MS);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)ms * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (!t->stop && !t->kicked &&
		       pc__cond_timedwait(&t->cond, &t->mtx, &ts) == 0)
			;	/* woken without a kick: sleep on */
	}
	pc__unlock(&t->mtx);
	return NULL;
}

static void write_footer_locked(struct pc_trace *t)
{
	struct pc_trace_footer f = { 0 };
	struct pc_trace_block b = { PC_TRACE_BLOCK_MAGIC, PC_TRACE_BLK_FOOTER,
				    0, 0, 0 };
	size_t n = t->nr_retired, i = 0;
	struct pc_trace_thread_stat *st;
	struct pc_ring *r;

	PC_ASSERT_HELD(&t->drain_lock);
	for (r = atomic_load(&t->rings); r; r = r->next)
		n++;
	st = calloc(n ? n : 1, sizeof(*st));
	if (!st) {
		t->werr = ENOMEM;
		return;
	}
	for (; i < t->nr_retired; i++)
		st[i] = t->retired[i];
	for (r = atomic_load(&t->rings); r; r = r->next, i++)
		st[i] = (struct pc_trace_thread_stat){
			.tid = r->tid, .events = r->written,
			.lost = atomic_load_explicit(&r->lost,
						     memory_order_relaxed),
		};
	for (i = 0; i < n; i++) {
		f.events += st[i].events;
		f.lost += st[i].lost;
	}
	f.lost_unattributed = atomic_load(&t->lost_noring);
	f.lost += f.lost_unattributed;
	f.end_ns = trace_now();
	b.count = (uint32_t)n;
	wbuf_flush_locked(t);
	if (!t->werr) {
		int err = write_all(t->fd, &b, sizeof(b));

		if (!err)
			err = write_all(t->fd, &f, sizeof(f));
		if (!err)
			err = write_all(t->fd, st, n * sizeof(*st));
		if (err)
			t->werr = -err;
	}
	free(st);
}

/* ------------------------------------------------------------------ */
/* Open and close.                                                     */

static void header_note(struct pc_cache *c, char *buf, size_t len)
{
	const struct pc_config *g = &c->cfg;

	snprintf(buf, len,
		 "memory=%llu nodes=%d io=%s lru.deferred_activation=%d "
		 "reclaim.batch_remove=%d cache.stickiness=%d "
		 "readahead.single_marker=%d page.waiters_bit=%d",
		 (unsigned long long)g->memory, c->nr_nodes,
		 g->io[0] ? g->io : "default", g->deferred_activation,
		 (int)g->batch_remove, (int)g->stickiness, g->single_marker,
		 g->waiters_bit);
}

static void trace_free(struct pc_trace *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->retired);
	free(t->wbuf);
	free(t);
}

int pc__trace_open(struct pc_cache *c, const char *path)
{
	struct pc_trace_file_header h;
	struct pc_trace *t;
	struct timespec rt;
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!path || !path[0] || strlen(path) >= sizeof(t->path))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fd = -1;
	t->wbuf = malloc(WBUF_SIZE);
	if (!t->wbuf) {
		trace_free(t);
		return -ENOMEM;
	}
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		err = -errno;
		trace_free(t);
		return err;
	}

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PC_TRACE_MAGIC, sizeof(h.magic));
	h.version = PC_TRACE_VERSION;
	h.header_size = sizeof(h);
	h.record_size = sizeof(struct pc_trace_rec);
	h.page_size = 1u << PC_PAGE_SHIFT;
	h.nr_nodes = (uint32_t)c->nr_nodes;
	h.frames_per_node = c->nodes[0].nr_frames;	/* the share, not the span */
	h.nr_frames = c->nr_frames;
	h.start_ns = trace_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	h.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u +
			      (uint64_t)rt.tv_nsec;
	h.pid = (uint32_t)getpid();
	h.nr_page_flags = PC_TRACE_NR_PAGE_FLAGS;
	header_note(c, h.note, sizeof(h.note));
	err = write_all(t->fd, &h, sizeof(h));
	if (err) {
		trace_free(t);
		return err;
	}

	t->id = atomic_fetch_add_explicit(&next_trace_id, 1,
					  memory_order_relaxed);
	pc__lock_init(&t->drain_lock, NULL, PC_RANK_TRACE_DRAIN, -1);
	pc__lock_init(&t->mtx, NULL, PC_RANK_TRACE_KICK, -1);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t->thread, NULL, drain_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&t->cond);
		pc__lock_destroy(&t->mtx);
		pc__lock_destroy(&t->drain_lock);
		trace_free(t);
		return err;
	}
	c->trace = t;
	atomic_fetch_add(&pc__trace_on, 1);
	return 0;
}

void pc__trace_close(struct pc_cache *c)
{
	struct pc_trace *t = c->trace;
	struct pc_ring *r, *next;
	uint64_t dropped;

	if (!t)
		return;
	c->trace = NULL;
	pc__lock(&t->mtx);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pc__unlock(&t->mtx);
	pthread_join(t->thread, NULL);

	pc__lock(&t->drain_lock);
	drain_pass_locked(t, NULL);
	write_footer_locked(t);
	dropped = t->write_dropped;
	pc__unlock(&t->drain_lock);

	if (close(t->fd) < 0 && !t->werr)
		t->werr = errno;
	t->fd = -1;
	if (t->werr)
		fprintf(stderr, "pagecache: trace %s: write failed: %s; "
			"%llu events dropped, the file is incomplete\n",
			t->path, strerror(t->werr),
			(unsigned long long)dropped);

	for (r = atomic_load(&t->rings); r; r = next) {
		next = r->next;
		atomic_store_explicit(&r->closed, true, memory_order_release);
		ring_put(r);
	}
	pthread_cond_destroy(&t->cond);
	pc__lock_destroy(&t->mtx);
	pc__lock_destroy(&t->drain_lock);
	trace_free(t);
	atomic_fetch_sub(&pc__trace_on, 1);
}

/* ------------------------------------------------------------------ */
/* Test hooks (tracepoint.h).                                          */

void pc__trace_pause(struct pc_cache *c, bool paused)
{
	struct pc_trace *t = c->trace;

	if (!t)
		return;
	/* Under drain_lock: once paused, no pass runs or starts. */
	pc__lock(&t->drain_lock);
	atomic_store(&t->paused, paused);
	pc__unlock(&t->drain_lock);
}

uint64_t pc__trace_flush(struct pc_cache *c)
{
	struct pc_trace *t = c->trace;
	uint64_t n;

	if (!t)
		return 0;
	pc__lock(&t->drain_lock);
	n = drain_pass_locked(t, NULL);
	pc__unlock(&t->drain_lock);
	return n;
}

unsigned pc__trace_ring_fill(struct pc_cache *c)
{
	struct trace_tls *s = tl;

	if (!c->trace || !s)
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct pc_ring *r = s->ent[i].ring;

		if (s->ent[i].trace_id == c->trace->id)
			return (unsigned)(atomic_load(&r->head) -
					  atomic_load(&r->tail));
	}
	return 0;
}
