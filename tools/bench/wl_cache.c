/*
 * tools/bench/wl_cache.c - what a cache is for: keeping a working set
 * (hotcold) and serving it fast (cached-read).
 *
 * hotcold (seeds 000 and 004: scan resistance)
 *   warm    the hot file (B/2) is read twice, so each page is used twice:
 *           the warm-up (its working set resident), then pcb_steady
 *   during  thread 0 reads 4 KiB pages of the hot file at random while
 *           thread 1 streams once through a cold file of 4 x B (64 KiB
 *           reads), until the stream ends or --duration passes
 *   after   thread 0 goes on for half of --duration more
 *   A hot read is a hit when the engine has the page without I/O:
 *   pread_cached (RWF_NOWAIT for the kernel, pc_get_page(PC_GET_NOWAIT)
 *   for pagecache; the direct engine has no cache, so never).
 *   Headline: the hit ratio during the stream; also after it, and ops/s.
 *
 * cached-read-T1, -T2 (the hit path)
 *   A file of B/2, read once to warm it (the warm-up), then T threads
 *   read 4 KiB pages at random for half of --duration with a copy
 *   (pread), then, where the engine has it, for as long with zero copy
 *   (pagecache: pc_get_page, a read of every cache line, pc_put_page).
 *   Headline: reads per second per thread.  The kernel's pread of a
 *   cached page costs 0.5-1 us here.
 *   Also cpu-ns/read and zc-cpu-ns/read: the reading threads' own CPU
 *   time per read (CLOCK_THREAD_CPUTIME_ID), which a loaded machine, where
 *   a thread waits for a core between reads, does not inflate as it does
 *   the wall-clock figures.
 *   The limit engine runs it too (engine_limit.c): the same loop over a
 *   plain huge-page buffer, the figures every other row is divided by.
 *
 * Random offsets come from xorshift streams seeded by "seed" + thread.
 * Each thread owns its pcb_file, its buffer and its slot of the figures;
 * hotcold's threads share `stream_end_ns` (atomic).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define BLOCK		4096
#define STREAM_BLOCK	(64 * 1024)
#define SEED		0x5eed5eedull

static int make_files(struct pcb_run *r, const char *const names[],
		      const char *const sizes[])
{
	char path[1100];

	for (int i = 0; names[i]; i++) {
		int err = pcb_make_file(pcb_path(r, path, sizeof(path), "%s", names[i]),
					(uint64_t)pcb_param(r->par, sizes[i]), false);

		if (err < 0)
			return pcb_fail(r, err, "making %s: %s", path, strerror(-err));
	}
	return 0;
}

/* Read [0, size) in STREAM_BLOCK reads; bytes read or -errno. */
static int64_t stream(struct pcb_run *r, struct pcb_file *f, uint64_t size,
		      void *buf, bool timed)
{
	uint64_t off;

	for (off = 0; off < size; off += STREAM_BLOCK) {
		ssize_t n = r->ops->pread(f, buf, STREAM_BLOCK, (off_t)off);

		if (n < 0)
			return pcb_fail(r, (int)n, "pread: %s", strerror((int)-n));
		if (n == 0 || pcb_stop || (timed && pcb_time_up(r)))
			break;
	}
	return (int64_t)(off < size ? off : size);
}

/* ------------------------------------------------------------------ */
/* hotcold                                                             */

struct hotcold {
	struct pcb_file *hot, *cold;
	_Atomic uint64_t stream_end_ns;		/* 0 while streaming */
	uint64_t after_ns;
	uint64_t hits[2], ops[2];		/* [0] during, [1] after */
	double secs[2];
	uint64_t streamed;
	double stream_secs;
};

static void hotcold_params(struct pcb_params *p, const struct pcb_opts *o)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "hot_size", (int64_t)(o->budget / 2 / BLOCK * BLOCK));
	pcb_param_set(p, "cold_size", (int64_t)(4 * o->budget));
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "stream_block", STREAM_BLOCK);
	pcb_param_set(p, "after_ms", (int64_t)(o->duration * 500));
	pcb_param_set(p, "seed", (int64_t)SEED);
}

static uint64_t hotcold_disk(const struct pcb_params *p)
{
	return (uint64_t)(pcb_param(p, "hot_size") + pcb_param(p, "cold_size"));
}

static int hotcold_prepare(struct pcb_run *r)
{
	static const char *const names[] = { "hot", "cold", NULL };
	static const char *const sizes[] = { "hot_size", "cold_size", NULL };

	return make_files(r, names, sizes);
}

static int hot_reader(struct pcb_run *r, struct hotcold *h)
{
	uint64_t pages = (uint64_t)pcb_param(r->par, "hot_size") / BLOCK;
	uint64_t seed = SEED, t_phase = pcb_now_ns(), end;
	void *buf = pcb_buf(BLOCK);
	int phase = 0;

	if (!buf)
		return -ENOMEM;
	for (unsigned i = 0; !pcb_stop; i++) {
		off_t off = (off_t)(pcb_rand(&seed) % pages * BLOCK);
		ssize_t n = r->ops->pread_cached(h->hot, buf, BLOCK, off);

		if (n == -EAGAIN)
			n = r->ops->pread(h->hot, buf, BLOCK, off);
		else if (n >= 0)
			h->hits[phase]++;
		if (n < 0) {
			free(buf);
			return pcb_fail(r, (int)n, "hot pread: %s", strerror((int)-n));
		}
		h->ops[phase]++;
		if ((i & 15) != 15)
			continue;
		end = atomic_load(&h->stream_end_ns);
		if (phase == 0 && end) {
			uint64_t now = pcb_now_ns();

			h->secs[0] = pcb_secs(now - t_phase);
			t_phase = now;
			phase = 1;
		} else if (phase == 1 && pcb_now_ns() >= end + h->after_ns) {
			break;
		}
	}
	h->secs[phase] = pcb_secs(pcb_now_ns() - t_phase);
	free(buf);
	return 0;
}

static int hotcold_thread(struct pcb_run *r, int i, void *arg)
{
	struct hotcold *h = arg;
	uint64_t t0 = pcb_now_ns();
	void *buf;
	int64_t n;

	if (i == 0)
		return hot_reader(r, h);
	if (!(buf = pcb_buf(STREAM_BLOCK)))
		n = -ENOMEM;
	else
		n = stream(r, h->cold, (uint64_t)pcb_param(r->par, "cold_size"),
			   buf, true);
	h->streamed = n > 0 ? (uint64_t)n : 0;
	h->stream_secs = pcb_secs(pcb_now_ns() - t0);
	atomic_store(&h->stream_end_ns, pcb_now_ns());
	free(buf);
	return n < 0 ? (int)n : 0;
}

static int hotcold_run(struct pcb_run *r)
{
	struct hotcold h = { .after_ns = (uint64_t)pcb_param(r->par, "after_ms") * 1000000 };
	char path[1100];
	void *buf = pcb_buf(STREAM_BLOCK);
	int err;

	if (!buf)
		return -ENOMEM;
	err = pcb_open(r, pcb_path(r, path, sizeof(path), "hot"), O_RDONLY, &h.hot);
	if (err == 0) {
		err = pcb_open(r, pcb_path(r, path, sizeof(path), "cold"), O_RDONLY,
			       &h.cold);
		if (err < 0)
			r->ops->close(h.hot);
	}
	if (err < 0) {
		free(buf);
		return pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	}
	/* warm: every hot page used twice, so a cache may call it hot */
	for (int pass = 0; pass < 2 && err >= 0 && pcb_warming(r); pass++)
		err = (int)stream(r, h.hot, (uint64_t)pcb_param(r->par, "hot_size"),
				  buf, false);
	free(buf);
	/* the measured part starts now: the deadline bounds the stream */
	if (err >= 0) {
		pcb_steady(r);
		err = pcb_threads(r, 2, hotcold_thread, &h);
	}
	r->ops->close(h.hot);
	r->ops->close(h.cold);
	if (err < 0)
		return err;
	if (h.ops[0])
		pcb_metric(r, "hit-during%", 100.0 * (double)h.hits[0] / (double)h.ops[0]);
	if (h.ops[1])
		pcb_metric(r, "hit-after%", 100.0 * (double)h.hits[1] / (double)h.ops[1]);
	if (h.secs[0] > 0)
		pcb_metric(r, "ops/s", (double)h.ops[0] / h.secs[0]);
	if (h.secs[1] > 0)
		pcb_metric(r, "ops/s-after", (double)h.ops[1] / h.secs[1]);
	if (h.stream_secs > 0)
		pcb_metric(r, "stream-MB/s", (double)h.streamed / h.stream_secs / 1e6);
	pcb_metric(r, "stream-seconds", h.stream_secs);
	return 0;
}

PCB_WORKLOAD(hotcold) = {
	.name = "hotcold",
	.group = "hotcold",
	.what = "random reads of a hot B/2 file while a 4xB file streams past once",
	.metric = "hit-during%",
	.timed = true,
	.in_suite = true,
	.engines = PCB_ENG_ALL,
	.warmup = "the hot file read twice",
	.params = hotcold_params,
	.disk = hotcold_disk,
	.prepare = hotcold_prepare,
	.run = hotcold_run,
};

/* ------------------------------------------------------------------ */
/* cached-read                                                         */

struct cached {
	struct pcb_file **f;		/* one per thread */
	bool zero_copy;
	uint64_t end_ns;
	uint64_t *reads;		/* per thread */
	uint64_t *cpu_ns;		/* per thread: its own CPU time */
	uint64_t sink;			/* keeps the zero-copy reads honest */
};

/* The calling thread's CPU time: what a read costs when the machine is
 * loaded and the thread waits for a core between its reads. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cached_thread(struct pcb_run *r, int i, void *arg)
{
	struct cached *c = arg;
	uint64_t pages = (uint64_t)pcb_param(r->par, "file_size") / BLOCK;
	uint64_t seed = SEED + (uint64_t)i, n = 0, sum = 0, cpu0;
	void *buf = pcb_buf(BLOCK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	cpu0 = thread_cpu_ns();
	for (;;) {
		uint64_t page = pcb_rand(&seed) % pages;

		if (c->zero_copy) {
			const uint64_t *data;
			void *pin;

			err = r->ops->page_get(c->f[i], page, (const void **)&data, &pin);
			if (err < 0)
				break;
			for (int w = 0; w < BLOCK / 8; w += 8)	/* each line */
				sum += data[w];
			r->ops->page_put(pin);
		} else {
			ssize_t got = r->ops->pread(c->f[i], buf, BLOCK,
						    (off_t)(page * BLOCK));

			if (got < 0) {
				err = (int)got;
				break;
			}
		}
		if ((++n & 63) == 0 && (pcb_stop || pcb_now_ns() >= c->end_ns))
			break;
	}
	c->cpu_ns[i] = thread_cpu_ns() - cpu0;
	c->reads[i] = n;
	__atomic_fetch_add(&c->sink, sum, __ATOMIC_RELAXED);
	free(buf);
	if (err < 0)
		return pcb_fail(r, err, "%s: %s", c->zero_copy ? "page_get" : "pread",
				strerror(-err));
	return 0;
}

static void cached_params(struct pcb_params *p, const struct pcb_opts *o,
			  int threads)
{
	pcb_param_set(p, "budget", (int64_t)o->budget);
	pcb_param_set(p, "file_size", (int64_t)(o->budget / 2 / BLOCK * BLOCK));
	pcb_param_set(p, "threads", threads);
	pcb_param_set(p, "block", BLOCK);
	pcb_param_set(p, "phase_ms", (int64_t)(o->duration * 500));
	pcb_param_set(p, "seed", (int64_t)SEED);
}

static void cached_t1_params(struct pcb_params *p, const struct pcb_opts *o)
{
	cached_params(p, o, 1);
}

static void cached_t2_params(struct pcb_params *p, const struct pcb_opts *o)
{
	cached_params(p, o, 2);
}

static uint64_t cached_disk(const struct pcb_params *p)
{
	return (uint64_t)pcb_param(p, "file_size");
}

static int cached_prepare(struct pcb_run *r)
{
	static const char *const names[] = { "cached", NULL };
	static const char *const sizes[] = { "file_size", NULL };

	return make_files(r, names, sizes);
}

static int cached_phase(struct pcb_run *r, struct cached *c, bool zero_copy,
			double *per_thread, double *cpu_ns)
{
	int t = (int)pcb_param(r->par, "threads");
	uint64_t t0 = pcb_now_ns(), n = 0, cpu = 0;
	int err;

	c->zero_copy = zero_copy;
	c->end_ns = t0 + (uint64_t)pcb_param(r->par, "phase_ms") * 1000000;
	err = pcb_threads(r, t, cached_thread, c);
	for (int i = 0; i < t; i++) {
		n += c->reads[i];
		cpu += c->cpu_ns[i];
	}
	*per_thread = (double)n / t / pcb_secs(pcb_now_ns() - t0);
	*cpu_ns = n ? (double)cpu / (double)n : 0;
	return err;
}

static int cached_run(struct pcb_run *r)
{
	int t = (int)pcb_param(r->par, "threads"), opened = 0, err = 0;
	struct pcb_file *files[8];
	uint64_t reads[8], cpu_ns[8];
	struct cached c = { .f = files, .reads = reads, .cpu_ns = cpu_ns };
	char path[1100];
	void *buf = pcb_buf(STREAM_BLOCK);
	double rate, zc, cpu;

	if (!buf || t > 8) {
		free(buf);
		return -ENOMEM;
	}
	for (; opened < t && err == 0; opened++)
		err = pcb_open(r, pcb_path(r, path, sizeof(path), "cached"), O_RDONLY,
			       &files[opened]);
	if (err < 0) {
		opened--;
		pcb_fail(r, err, "open %s: %s", path, strerror(-err));
	} else if (pcb_warming(r)) {
		/* warm: read it once */
		int64_t n = stream(r, files[0], (uint64_t)pcb_param(r->par, "file_size"),
				   buf, false);

		err = n < 0 ? (int)n : 0;
	}
	free(buf);
	if (err == 0) {
		pcb_steady(r);
		err = cached_phase(r, &c, false, &rate, &cpu);
	}
	if (err == 0 && !pcb_stop) {
		pcb_metric(r, "reads/s/thread", rate);
		pcb_metric(r, "ns/read", 1e9 / rate);
		pcb_direction(r, "ns/read", false);
		pcb_metric(r, "cpu-ns/read", cpu);
		pcb_direction(r, "cpu-ns/read", false);
	}
	if (err == 0 && !pcb_stop && r->ops->page_get) {
		err = cached_phase(r, &c, true, &zc, &cpu);
		if (err == 0 && !pcb_stop) {
			pcb_metric(r, "zc-reads/s/thread", zc);
			pcb_metric(r, "zc-ns/read", 1e9 / zc);
			pcb_direction(r, "zc-ns/read", false);
			pcb_metric(r, "zc-cpu-ns/read", cpu);
			pcb_direction(r, "zc-cpu-ns/read", false);
		}
	}
	for (int i = 0; i < opened; i++)
		r->ops->close(files[i]);
	return err;
}

#define CACHED_READ(T, threads) \
	PCB_WORKLOAD(cached_read_t##T) = { \
		.name = "cached-read-T" #T, \
		.group = "cached-read", \
		.what = "random 4 KiB reads of a warm B/2 file, " threads \
			": copy, zero copy", \
		.metric = "reads/s/thread", \
		.timed = true, \
		.in_suite = true, \
		.engines = PCB_ENG_HIT, \
		.warmup = "the file read once", \
		.params = cached_t##T##_params, \
		.disk = cached_disk, \
		.prepare = cached_prepare, \
		.run = cached_run, \
	};

CACHED_READ(1, "1 thread")
CACHED_READ(2, "2 threads")
