/*
 * stats.c - the shim's counters and the stats file (--stats FILE, or
 * PAGECACHE_STATS=FILE).
 *
 * Counters (SHIM_COUNTERS in shim.h) are sharded 32 ways, a shard per
 * thread chosen at its first count, so that threads reading one file do
 * not share a counter line; a flush sums them.
 *
 * The file holds one `name value` line per counter: every pc_vmstat
 * counter of the cache (pc_vmstat_name's names), then the shim's, then
 * `processes`.  Every process of the program's tree adds to it (children
 * inherit the environment): at exit, and before an exec (the new image is
 * a new process for the counters), each adds what it counted since its
 * last flush, under flock(LOCK_EX): read the file, add, write it back.  So
 * the file ends with the tree's sums (gauges such as nr_free_pages are
 * summed too: read them as totals over processes).  A shared cache's
 * counters are already every process's: for one, each process writes the
 * cache's own values and the file keeps the largest seen (its totals since
 * the cache was made: a cache of the run's own, --cache NAME, gives the
 * run's), while the shim's counters are still summed.  A process with nothing
 * counted leaves the file alone; `pagecache exec` empties it before it
 * runs the program.  The file is opened with shim_internal set: the cache
 * never caches its own stats.
 *
 * The live record (PAGECACHE_LIVE=DIR; its format and contract: live.h):
 * while the program runs, each process that made a cache publishes its
 * counters in DIR/<pid>, a small file it maps shared, so that a sampler
 * (pagecache bench) can sum them over the program's processes at any
 * moment.  It is made with the cache (shim_live_start, from process.c,
 * under files_lock), and a publisher thread of ours, all signals blocked,
 * rewrites it in place every PC_LIVE_TICK_MS: the page gauges each tick,
 * every counter each PC_LIVE_ALL_TICKS (reading the counters pulls the
 * lines the program's threads count on; the gauges are a few).  The
 * program's calls do nothing more: pc_vmstat reads the cache's counters
 * with atomic loads, and the thread runs no signal handler.  The file is
 * unlinked before an exec and at exit (shim_stats_flush), the mapping
 * kept (the thread may be writing; exec or exit ends both).  A fork's
 * child has no publisher (threads stay in the parent): it drops the
 * inherited mapping, and publishes its own at its first cache - in a
 * shared cache, which it goes on using, at its first call on it
 * (shim_live_child, process.c: the fork handler starts no thread).  A failed
 * exec leaves the process unpublished.  @live is written by the thread
 * making the cache (once, files_lock) before the publisher starts, and in
 * the child of a fork; the publisher only writes the mapping.
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "shim.h"

#define SHARDS 32

static struct shard {
	_Atomic uint64_t v[SHIM_NR_COUNTERS];
} __attribute__((aligned(64))) shards[SHARDS];

static _Atomic unsigned next_shard;
static SHIM_TLS int my_shard = -1;

static const char *const counter_names[] = {
#define SHIM_COUNTER_NAME(n) #n,
	SHIM_COUNTERS(SHIM_COUNTER_NAME)
#undef SHIM_COUNTER_NAME
};

/* What was last added to the file: the cache's counters, then ours. */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *flushed;	/* flush_lock; [nr_vmstat + SHIM_NR_COUNTERS] */
static unsigned nr_vmstat;	/* flush_lock */

void shim_count(enum shim_counter c, uint64_t d)
{
	int s = my_shard;

	if (s < 0)
		s = my_shard = (int)(atomic_fetch_add(&next_shard, 1) % SHARDS);
	atomic_fetch_add_explicit(&shards[s].v[c], d, memory_order_relaxed);
}

static uint64_t counter_sum(enum shim_counter c)
{
	uint64_t sum = 0;

	for (int s = 0; s < SHARDS; s++)
		sum += atomic_load_explicit(&shards[s].v[c], memory_order_relaxed);
	return sum;
}

static void live_reset(void);
static void live_unpublish(void);

void shim_stats_reset(void)
{
	live_reset();
	for (int s = 0; s < SHARDS; s++)
		for (int c = 0; c < SHIM_NR_COUNTERS; c++)
			atomic_store(&shards[s].v[c], 0);
	pthread_mutex_init(&flush_lock, NULL);
	free(flushed);
	flushed = NULL;
}

/* One line of the file, or of what we add. */
struct line {
	char name[64];
	uint64_t value;
	bool total;		/* a shared cache's own: the file keeps the
				   largest, not the sum */
};

struct lines {
	struct line *v;
	unsigned n, cap;
};

static struct line *lines_find(struct lines *l, const char *name)
{
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

static void lines_add(struct lines *l, const char *name, uint64_t d)
{
	struct line *x = lines_find(l, name);

	if (!x) {
		if (l->n == l->cap) {
			unsigned cap = l->cap ? 2 * l->cap : 128;
			struct line *v = realloc(l->v, cap * sizeof(*v));

			if (!v)
				return;
			l->v = v;
			l->cap = cap;
		}
		x = &l->v[l->n++];
		snprintf(x->name, sizeof(x->name), "%s", name);
		x->value = 0;
		x->total = false;
	}
	x->value += d;
}

/* @name's line the larger of what it says and @v. */
static void lines_max(struct lines *l, const char *name, uint64_t v)
{
	struct line *x;

	lines_add(l, name, 0);
	x = lines_find(l, name);
	if (x && x->value < v)
		x->value = v;
	if (x)
		x->total = true;
}

/* Is @c a shared cache?  (Its own counters are then every process's.) */
static bool cache_shared(pc_cache *c)
{
	return LIB(pc_cache_shared(c));
}

/* The file's lines, read from @fd. */
static void lines_read(struct lines *l, int fd)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap), *p, *end;
	ssize_t r;

	while (buf && (r = REAL(read)(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	if (!buf)
		return;
	buf[len] = 0;
	for (p = buf; p < buf + len; p = end + 1) {
		char name[64];
		unsigned long long v;

		end = strchr(p, '\n');
		if (!end)
			end = buf + len;
		if (sscanf(p, "%63s %llu", name, &v) == 2)
			lines_add(l, name, v);
	}
	free(buf);
}

static void lines_write(const struct lines *l, int fd)
{
	size_t cap = (size_t)l->n * 96 + 1, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return;
	for (unsigned i = 0; i < l->n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s %llu\n",
					l->v[i].name,
					(unsigned long long)l->v[i].value);
	REAL(ftruncate)(fd, 0);
	REAL(pwrite)(fd, buf, len, 0);
	free(buf);
}

/* Our lines to add: deltas since the last flush; false if all are 0. */
static bool deltas(struct lines *add, bool exiting)
{
	pc_cache *c = atomic_load(&shim_cache);
	bool any = false, shared = cache_shared(c);
	unsigned i;

	if (!flushed) {
		while (pc_vmstat_name(nr_vmstat))
			nr_vmstat++;
		flushed = calloc(nr_vmstat + SHIM_NR_COUNTERS, sizeof(*flushed));
		if (!flushed)
			return false;
	}
	for (i = 0; i < nr_vmstat; i++) {
		const char *name = pc_vmstat_name(i);
		uint64_t v = 0;

		if (c)
			LIB(pc_vmstat(c, name, &v));
		if (shared)	/* the cache's totals, not ours */
			lines_max(add, name, v);
		else
			lines_add(add, name, v - flushed[i]);
		any |= v != flushed[i];
		flushed[i] = v;
	}
	for (unsigned k = 0; k < SHIM_NR_COUNTERS; k++, i++) {
		uint64_t v = counter_sum(k);

		lines_add(add, counter_names[k], v - flushed[i]);
		any |= v != flushed[i];
		flushed[i] = v;
	}
	lines_add(add, "processes", exiting && (any || c) ? 1 : 0);
	return any || (exiting && c);
}

/* ------------------------------------------------------------------ */
/* The live record (PAGECACHE_LIVE=DIR).                               */

static const char *const live_gauges[] = { PC_LIVE_GAUGES };
#define NR_GAUGES (sizeof(live_gauges) / sizeof(live_gauges[0]))

static struct {
	struct pc_live *rec;		/* mapped; NULL: none */
	size_t len;
	pid_t pid;			/* who mapped it */
	pc_cache *cache;
	unsigned nr_vmstat;		/* rec->c[0 .. nr_vmstat): pc_vmstat's */
	unsigned gauge[NR_GAUGES];	/* their indexes in rec->c */
	unsigned nr_gauges;
	char path[PATH_MAX];		/* "": unlinked */
} live;

static void live_set(unsigned i)
{
	uint64_t v = 0;

	if (i < live.nr_vmstat)
		pc_vmstat(live.cache, live.rec->c[i].name, &v);
	else
		v = counter_sum((enum shim_counter)(i - live.nr_vmstat));
	__atomic_store_n(&live.rec->c[i].value, v, __ATOMIC_RELAXED);
}

/* One update, in place, inside the odd-seq window. */
static void live_update(bool all)
{
	struct pc_live *rec = live.rec;
	uint64_t seq = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED);

	/* Odd before any value moves: an exchange with acquire keeps the
	 * stores below after it (a fence would do, but TSan builds refuse
	 * atomic fences). */
	__atomic_exchange_n(&rec->seq, seq + 1, __ATOMIC_ACQ_REL);
	if (all)
		for (unsigned i = 0; i < rec->nr; i++)
			live_set(i);
	else
		for (unsigned g = 0; g < live.nr_gauges; g++)
			live_set(live.gauge[g]);
	__atomic_store_n(&rec->ticks, rec->ticks + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&rec->seq, seq + 2, __ATOMIC_RELEASE);
}

static _Atomic int live_stop_req, live_stopped;

static void *live_main(void *arg)
{
	(void)arg;
	for (uint64_t tick = 1;; tick++) {
		struct timespec ts = { 0, PC_LIVE_TICK_MS * 1000000L };

		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		if (atomic_load(&live_stop_req))
			break;
		live_update(tick % PC_LIVE_ALL_TICKS == 0);
	}
	atomic_store(&live_stopped, 1);
	return NULL;
}

void shim_live_stop(void)
{
	if (!live.cache || live.pid != getpid())
		return;		/* no publisher here */
	atomic_store(&live_stop_req, 1);
	for (int i = 0; i < 1000 && !atomic_load(&live_stopped); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	live_unpublish();
	live.cache = NULL;
}

/* The record's names, then its magic: a reader sees it whole or not. */
static void live_fill(struct pc_live *rec, unsigned nr)
{
	rec->nr = nr;
	rec->pid = (uint32_t)getpid();
	rec->nr_cache = live.nr_vmstat;
	rec->shared = cache_shared(live.cache);
	for (unsigned i = 0; i < nr; i++)
		snprintf(rec->c[i].name, sizeof(rec->c[i].name), "%s",
			 i < live.nr_vmstat ? pc_vmstat_name(i)
					    : counter_names[i - live.nr_vmstat]);
	live.nr_gauges = 0;
	for (unsigned g = 0; g < NR_GAUGES; g++)
		for (unsigned i = 0; i < live.nr_vmstat; i++)
			if (!strcmp(rec->c[i].name, live_gauges[g]))
				live.gauge[live.nr_gauges++] = i;
}

void shim_live_start(pc_cache *c)
{
	const char *dir = getenv("PAGECACHE_LIVE");
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	unsigned nr = 0;
	void *map;
	int fd, err;

	if (!dir || !*dir || live.rec)
		return;
	while (pc_vmstat_name(nr))
		nr++;
	live.nr_vmstat = nr;
	nr += SHIM_NR_COUNTERS;
	live.len = (sizeof(struct pc_live) + nr * sizeof(struct pc_live_counter)
		    + 4095) & ~(size_t)4095;
	if (snprintf(live.path, sizeof(live.path), "%s/%d", dir,
		     (int)getpid()) >= (int)sizeof(live.path))
		goto fail;
	shim_internal++;
	fd = REAL(open)(live.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	map = MAP_FAILED;
	if (fd >= 0 && REAL(ftruncate)(fd, (off_t)live.len) == 0)
		map = REAL(mmap)(NULL, live.len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
	if (fd >= 0)
		REAL(close)(fd);
	shim_internal--;
	if (map == MAP_FAILED)
		goto unlink;
	live.rec = map;
	live.pid = getpid();
	live.cache = c;
	live_fill(live.rec, nr);
	live_update(true);
	memcpy(live.rec->magic + 1, PC_LIVE_MAGIC + 1, sizeof(PC_LIVE_MAGIC) - 1);
	__atomic_store_n(&live.rec->magic[0], PC_LIVE_MAGIC[0], __ATOMIC_RELEASE);
	/* the publisher takes none of the program's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	err = pthread_create(&tid, &attr, live_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err) {
		pthread_setname_np(tid, "pagecache-live");
		return;
	}
unlink:
	shim_internal++;
	REAL(unlink)(live.path);
	shim_internal--;
fail:
	live.path[0] = 0;	/* live.rec, if mapped, stays: never updated */
}

/* Exit or exec: the file goes, the mapping stays (see the top). */
static void live_unpublish(void)
{
	if (!live.path[0] || live.pid != getpid())
		return;
	shim_internal++;
	REAL(unlink)(live.path);
	shim_internal--;
	live.path[0] = 0;
}

/* The child of a fork: the parent's record is the parent's. */
static void live_reset(void)
{
	if (live.rec && live.pid != getpid())
		munmap(live.rec, live.len);
	memset(&live, 0, sizeof(live));
}

void shim_stats_flush(bool exiting)
{
	const char *path = getenv("PAGECACHE_STATS");
	struct lines file = { NULL, 0, 0 }, add = { NULL, 0, 0 };
	int fd, saved = errno;

	live_unpublish();
	if (!path || !*path)
		return;
	shim_internal++;
	pthread_mutex_lock(&flush_lock);
	if (deltas(&add, exiting)) {
		fd = REAL(open)(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			flock(fd, LOCK_EX);
			lines_read(&file, fd);
			for (unsigned i = 0; i < add.n; i++)
				if (add.v[i].total)
					lines_max(&file, add.v[i].name,
						  add.v[i].value);
				else
					lines_add(&file, add.v[i].name,
						  add.v[i].value);
			lines_write(&file, fd);
			REAL(close)(fd);	/* the lock goes with it */
		}
	}
	pthread_mutex_unlock(&flush_lock);
	shim_internal--;
	free(file.v);
	free(add.v);
	errno = saved;
}
