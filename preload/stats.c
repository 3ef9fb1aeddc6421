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
 * summed too: read them as totals over processes).  A process with nothing
 * counted leaves the file alone; `pagecache exec` empties it before it
 * runs the program.  The file is opened with shim_internal set: the cache
 * never caches its own stats.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

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

void shim_stats_reset(void)
{
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
	}
	x->value += d;
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
	bool any = false;
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

void shim_stats_flush(bool exiting)
{
	const char *path = getenv("PAGECACHE_STATS");
	struct lines file = { NULL, 0, 0 }, add = { NULL, 0, 0 };
	int fd, saved = errno;

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
				lines_add(&file, add.v[i].name, add.v[i].value);
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
