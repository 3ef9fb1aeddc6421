/*
 * test_vmscan.c - reclaim (vmscan.c), allocation and nodes (node.c), the
 * LRU batches (lru.c) and refault detection (workingset.c).
 *
 *   safety      a random workload on 64-page budgets, 1 to 4 nodes,
 *               several threads, each with a reference model of its
 *               files: pinned and locked pages stay where they are with
 *               their data, dirty data is never lost (reads and, after
 *               fsync, the disk equal the model), writes are slowed so
 *               reclaim keeps meeting pages under writeback;
 *   kswapd      one thread streams several budgets: kswapd does the
 *               reclaiming, direct reclaim stays rare, allocations rarely
 *               find a node below low (counters, not timings);
 *   refault     a refault within the workingset distance activates the
 *               page, one beyond it does not; shadow entries stay
 *               bounded and the recent ones are kept (stale ones trimmed);
 *   policies    each policy moves the counters it must; each policy key
 *               takes only its documented values;
 *   pinned      every frame pinned: -ENOMEM within the bounded wait.
 *
 * Deterministic cases run with reclaim.kswapd=off (only direct reclaim,
 * in the test's own thread) and POSIX_FADV_RANDOM (one page per miss), so
 * the LRU order is the order of the test's reads.  Random cases print
 * their seed; PC_SEED=N replays.  Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "io.h"
#include "util.h"

#define PG 4096

static uint64_t vm(pc_cache *c, const char *name)
{
	uint64_t v = 0;

	if (pc_vmstat(c, name, &v) != 0)
		fail_msg("no counter %s", name);
	return v;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* A file of @pages pages written with write(2): clean when read in. */
static void make_file(const char *path, size_t pages, uint64_t seed)
{
	unsigned char *buf = malloc(pages * PG);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	tu_pattern(buf, pages * PG, seed, 0);
	assert_int_equal(write(fd, buf, pages * PG), (ssize_t)(pages * PG));
	close(fd);
	free(buf);
}

static pc_file *open_random(pc_cache *c, const char *path, int flags)
{
	pc_file *f;

	assert_int_equal(pc_open(c, path, flags, 0644, &f), 0);
	assert_int_equal(pc_fadvise(f, 0, 0, POSIX_FADV_RANDOM), 0);
	return f;
}

/* Read page @idx of a make_file() file through the cache and check it. */
static void read_page(pc_file *f, uint64_t idx, uint64_t seed)
{
	unsigned char buf[PG], want[PG];

	assert_int_equal(pc_pread(f, buf, PG, (off_t)(idx * PG)), PG);
	tu_pattern(want, PG, seed, idx * PG);
	if (memcmp(buf, want, PG) != 0)
		fail_msg("page %llu differs", (unsigned long long)idx);
}

/* ------------------------------------------------------------------ */
/* Safety under constant reclaim                                       */

#define S_MAX_FILE (48 * PG)
#define S_PINS 2

struct s_model {
	char path[600];
	unsigned char *data;
	size_t size;
	pc_file *f;
};

struct s_pin {
	pc_page *page;
	struct s_model *md;
	uint64_t idx;
};

struct s_run {
	pc_cache *c;
	uint64_t seed;
	int id;
	int ops;
};

/* The pinned page is still page @idx of its mapping, with the model's data. */
static void s_check_pin(struct s_pin *pin)
{
	struct pc_page *p = (struct pc_page *)pin->page;
	struct s_model *md = pin->md;
	size_t off = pin->idx * PG;
	size_t len = off < md->size ? pc_min((size_t)PG, md->size - off) : 0;

	if (page_mapping(p) != md->f->mapping || page_index(p) != pin->idx)
		fail_msg("pinned page %llu left its mapping",
			 (unsigned long long)pin->idx);
	if (pc__find_get_page(md->f->mapping, pin->idx) != p)
		fail_msg("pinned page %llu was replaced",
			 (unsigned long long)pin->idx);
	pc__put_page(md->f->cache, p);
	/* (Bytes past end of file are not the model's business.) */
	if (len && memcmp(pc_page_data(pin->page), md->data + off, len) != 0)
		fail_msg("pinned page %llu: data differs from the model",
			 (unsigned long long)pin->idx);
}

static void s_unpin_all(struct s_pin *pins, int *npins)
{
	while (*npins > 0) {
		struct s_pin *pin = &pins[--*npins];

		s_check_pin(pin);
		pc_put_page(pin->page);
	}
}

static void s_check_disk(struct s_model *md)
{
	int fd = open(md->path, O_RDONLY);
	unsigned char *buf = malloc(md->size + 1);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if ((size_t)st.st_size != md->size)
		fail_msg("%s: size on disk %lld, model %zu", md->path,
			 (long long)st.st_size, md->size);
	assert_int_equal(pread(fd, buf, md->size + 1, 0), (ssize_t)md->size);
	if (memcmp(buf, md->data, md->size) != 0)
		fail_msg("%s: disk differs from the model: dirty data lost",
			 md->path);
	free(buf);
	close(fd);
}

static void s_read(struct s_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % (S_MAX_FILE + PG);
	size_t len = 1 + tu_rand(rs) % (6 * PG);
	unsigned char *buf = malloc(len);
	size_t want = off >= md->size ? 0 : pc_min(len, md->size - off);
	ssize_t got = pc_pread(md->f, buf, len, (off_t)off);

	if (got != (ssize_t)want)
		fail_msg("pread(%zu, %zu) = %zd, want %zu", off, len, got, want);
	if (want && memcmp(buf, md->data + off, want) != 0)
		fail_msg("pread(%zu, %zu): data differs: dirty data lost?", off,
			 len);
	free(buf);
}

static void s_write(struct s_model *md, uint64_t *rs)
{
	size_t off = tu_rand(rs) % S_MAX_FILE;
	size_t len = 1 + tu_rand(rs) % pc_min((size_t)(5 * PG), S_MAX_FILE - off);
	unsigned char *buf = malloc(len);

	tu_pattern(buf, len, tu_rand(rs), off);
	assert_int_equal(pc_pwrite(md->f, buf, len, (off_t)off), (ssize_t)len);
	if (off > md->size)
		memset(md->data + md->size, 0, off - md->size);
	memcpy(md->data + off, buf, len);
	if (off + len > md->size)
		md->size = off + len;
	free(buf);
}

static void *s_worker(void *arg)
{
	struct s_run *r = arg;
	uint64_t rs = r->seed * 7919 + (uint64_t)r->id + 1;
	struct s_model md[2];
	struct s_pin pins[S_PINS];
	int npins = 0;

	for (int i = 0; i < 2; i++) {
		char name[64];

		snprintf(name, sizeof(name), "safety-%d-%d", r->id, i);
		snprintf(md[i].path, sizeof(md[i].path), "%s", tu_path(name));
		md[i].data = calloc(1, S_MAX_FILE + PG);
		md[i].size = 0;
		assert_int_equal(pc_open(r->c, md[i].path,
					 O_RDWR | O_CREAT | O_TRUNC, 0644,
					 &md[i].f), 0);
	}
	for (int op = 0; op < r->ops; op++) {
		struct s_model *m = &md[tu_rand(&rs) % 2];
		struct s_model *other = m == &md[0] ? &md[1] : &md[0];
		unsigned k = (unsigned)(tu_rand(&rs) % 100);

		if (k < 35) {
			s_write(m, &rs);
		} else if (k < 65) {
			s_read(m, &rs);
		} else if (k < 77) {	/* pin a page, keep up to S_PINS */
			uint64_t npages = (m->size + PG - 1) / PG;
			uint64_t idx;
			pc_page *pg;
			int e;

			if (!npages)
				continue;
			idx = tu_rand(&rs) % npages;
			if (npins == S_PINS) {
				s_check_pin(&pins[0]);
				pc_put_page(pins[0].page);
				pins[0] = pins[1];
				npins--;
			}
			e = pc_get_page(m->f, idx, 0, &pg);
			if (e != 0)
				fail_msg("pc_get_page(%llu) = %d",
					 (unsigned long long)idx, e);
			pins[npins++] = (struct s_pin){ pg, m, idx };
			s_check_pin(&pins[npins - 1]);
		} else if (k < 82 && npins) {
			/*
			 * Lock a pinned page, then push the other file through
			 * reclaim: the locked page must stay put.  (Not the
			 * page's own file: a write to it would wait for us.)
			 */
			struct s_pin *pin = &pins[tu_rand(&rs) % (uint64_t)npins];

			if (pin->md == other)
				continue;
			pc__lock_page(&r->c->wait, (struct pc_page *)pin->page);
			for (int i = 0; i < 4; i++)
				s_read(other, &rs);
			s_check_pin(pin);
			pc__unlock_page(&r->c->wait, (struct pc_page *)pin->page);
		} else if (k < 90) {
			assert_int_equal(pc_fsync(m->f), 0);
			s_check_disk(m);
		} else if (k < 94) {	/* truncate: pins go first */
			size_t len = tu_rand(&rs) % S_MAX_FILE;

			s_unpin_all(pins, &npins);
			assert_int_equal(pc_ftruncate(m->f, (off_t)len), 0);
			if (len > m->size)
				memset(m->data + m->size, 0, len - m->size);
			m->size = len;
		} else {
			off_t off = (off_t)(tu_rand(&rs) % S_MAX_FILE);

			assert_int_equal(pc_fadvise(m->f, off, 8 * PG,
						    POSIX_FADV_DONTNEED), 0);
		}
	}
	s_unpin_all(pins, &npins);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pc_fsync(md[i].f), 0);
		s_check_disk(&md[i]);
		assert_int_equal(pc_close(md[i].f), 0);
		free(md[i].data);
	}
	return NULL;
}

static void safety_run(uint64_t seed, int nodes, int threads, int ops)
{
	char cfg[160];
	pthread_t tid[8];
	struct s_run runs[8];
	/* Slow writes down so reclaim meets pages under writeback. */
	struct pc_io_fault slow = { .op = PC_IO_WRITE, .fd = -1, .delay_us = 300,
				    .count = -1 };
	pc_cache *c;

	snprintf(cfg, sizeof(cfg), "memory=256K nodes=%d io=fault", nodes);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc__io_fault_add(c->io, &slow), 0);
	for (int t = 0; t < threads; t++) {
		runs[t] = (struct s_run){ .c = c, .seed = seed + (uint64_t)nodes,
					  .id = t, .ops = ops };
		pthread_create(&tid[t], NULL, s_worker, &runs[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	tu_check_threads();
	printf("  nodes=%d: pgscan %llu pgsteal %llu (direct %llu) "
	       "writeback skipped %llu, dirty handed off %llu, refaults %llu\n",
	       nodes,
	       (unsigned long long)(vm(c, "pgscan_kswapd") + vm(c, "pgscan_direct")),
	       (unsigned long long)(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct")),
	       (unsigned long long)vm(c, "pgsteal_direct"),
	       (unsigned long long)vm(c, "pgsteal_writeback_skip"),
	       (unsigned long long)vm(c, "dirty_reclaim_handoff"),
	       (unsigned long long)vm(c, "workingset_refault_file"));
	/* Reclaim did run, all the time. */
	assert_true(vm(c, "pgsteal_kswapd") + vm(c, "pgsteal_direct") > 100);
	assert_true(vm(c, "nr_free_pages") <= c->nr_frames);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_safety_under_reclaim(void **state)
{
	uint64_t seed = tu_seed("safety_under_reclaim");

	(void)state;
	for (int nodes = 1; nodes <= 4; nodes++)
		safety_run(seed, nodes, 3, 700);
}

/* ------------------------------------------------------------------ */
/* kswapd keeps up with one streaming writer                           */

static void test_kswapd_keeps_up(void **state)
{
	const char *path = tu_path("stream");
	const size_t budget = 8u << 20, total = 4 * budget;
	static unsigned char buf[PG];
	uint64_t below_low = 0, below_min = 0, samples = 0;
	uint64_t kswapd, direct;
	struct pc_node *n;
	pc_cache *c;
	pc_file *f;

	(void)state;
	/* cache.stickiness=off: reclaim, not drop-behind, frees the stream. */
	assert_int_equal(pc_cache_create(&c, "memory=8M nodes=1 "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	for (size_t off = 0; off < total; off += PG) {
		uint64_t free_now;

		tu_pattern(buf, PG, 5, off);
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)off), PG);
		if (off < budget)
			continue;	/* first pass: the cache fills */
		free_now = atomic_load(&n->nr_free);
		samples++;
		below_low += free_now < n->wmark_low;
		below_min += free_now < n->wmark_min;
	}
	assert_int_equal(pc_fsync(f), 0);
	kswapd = vm(c, "pgsteal_kswapd");
	direct = vm(c, "pgsteal_direct");
	printf("  pgsteal_kswapd %llu pgsteal_direct %llu allocstall %llu "
	       "kswapd_wakeup %llu; samples %llu, below low %llu, below min %llu\n",
	       (unsigned long long)kswapd, (unsigned long long)direct,
	       (unsigned long long)vm(c, "allocstall"),
	       (unsigned long long)vm(c, "kswapd_wakeup"),
	       (unsigned long long)samples, (unsigned long long)below_low,
	       (unsigned long long)below_min);
	/* The stream was reclaimed, and by kswapd. */
	assert_true(kswapd + direct >= (total - budget) / PG / 2);
	assert_true(direct * 10 <= kswapd + direct);
	/*
	 * Free pages stayed above min nearly always, so allocations did not
	 * need direct reclaim.  kswapd is woken at low and balances to high,
	 * so free memory dips under low between wake-ups; how long depends on
	 * when the scheduler runs kswapd (on a loaded 2-core machine, up to
	 * ~16% of samples): most of the time above low is what is asserted.
	 */
	assert_true(below_low * 4 <= samples);
	assert_true(below_min * 20 <= samples);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Refault distance                                                     */

/*
 * Budget 1M (256 frames), one node, no kswapd, one page per miss.  A hot
 * file of ACT pages read twice sits on the active list.  Page X of a
 * third file is read once, then a stream of new pages pushes it out; when
 * the node's eviction clock has moved @distance past X's eviction, X is
 * read again.
 */
#define ACT 64

static void refault_run(uint64_t distance, bool *activated, bool *on_active)
{
	const char *hot = tu_path("ws-hot"), *tgt = tu_path("ws-target"),
		   *str = tu_path("ws-stream");
	uint64_t act0, ref0, evicted_at = 0;
	struct pc_node *n;
	struct pc_page *p;
	pc_cache *c;
	pc_file *fh, *ft, *fs;
	uint64_t s = 0;

	make_file(hot, ACT, 1);
	make_file(tgt, 4, 2);
	make_file(str, 1024, 3);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	fh = open_random(c, hot, O_RDONLY);
	ft = open_random(c, tgt, O_RDONLY);
	fs = open_random(c, str, O_RDONLY);
	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < ACT; i++)
			read_page(fh, i, 1);
	pc__lru_drain(c, pc__tctx(c));
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), ACT);
	read_page(ft, 1, 2);
	/* Stream until X is gone; remember the clock of its eviction. */
	while (!evicted_at) {
		void *item;

		assert_true(s < 1024);
		read_page(fs, s++, 3);
		item = pc__tree_lookup(&ft->mapping->tree, 1);
		if (item && pc_tree_is_value(item))
			evicted_at = pc_tree_value(item) >> 7;
		else
			assert_non_null(item);
	}
	while ((atomic_load(&n->nonresident_age) - evicted_at) < distance) {
		assert_true(s < 1024);
		read_page(fs, s++, 3);
	}
	assert_int_equal(atomic_load(&n->lru[PC_LRU_ACTIVE].nr), ACT);
	act0 = vm(c, "workingset_activate_file");
	ref0 = vm(c, "workingset_refault_file");
	read_page(ft, 1, 2);
	assert_int_equal(vm(c, "workingset_refault_file"), ref0 + 1);
	*activated = vm(c, "workingset_activate_file") == act0 + 1;
	pc__lru_drain(c, pc__tctx(c));
	p = pc__find_get_page(ft->mapping, 1);
	assert_non_null(p);
	*on_active = page_test(p, PG_active) && page_test(p, PG_lru);
	pc__put_page(c, p);
	printf("  distance >= %llu (active list %d): %s\n",
	       (unsigned long long)distance, ACT,
	       *activated ? "activated" : "inactive");
	pc_close(fh);
	pc_close(ft);
	pc_close(fs);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_refault_distance(void **state)
{
	bool activated, on_active;

	(void)state;
	/* Direct reclaim evicts up to 32 at a time: distance is at most +32. */
	refault_run(ACT / 2 - PC_RECLAIM_BATCH / 2, &activated, &on_active);
	assert_true(activated);
	assert_true(on_active);
	refault_run(2 * ACT, &activated, &on_active);
	assert_false(activated);
	assert_false(on_active);
}

/*
 * Shadow entries stay bounded, and the bound does not keep the old ones
 * at the expense of the new: a stream of 50 budgets through 64 frames
 * evicts far more pages than c->max_shadows; kswapd trims the stale
 * shadows (workingset_nodereclaim), so the pages evicted last still leave
 * a shadow and their refaults are seen.
 */
static void test_shadow_bound(void **state)
{
	const char *path = tu_path("shadows");
	const uint64_t pages = 3200;
	uint64_t over = 0, last_evicted = 0, refaults;
	pc_cache *c;
	pc_file *f;

	(void)state;
	make_file(path, pages, 71);
	assert_int_equal(pc_cache_create(&c, "memory=256K nodes=1 "
					 "cache.stickiness=off"), 0);
	f = open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < pages - 100; i++) {
		read_page(f, i, 71);
		over += vm(c, "nr_shadow_entries") > c->max_shadows;
	}
	assert_int_equal(over, 0);
	/* kswapd trimmed on its own. */
	for (int i = 0; i < 10000 && !vm(c, "workingset_nodereclaim"); i++)
		sleep_us(1000);
	assert_true(vm(c, "workingset_nodereclaim") > 0);
	/* Trim now (as kswapd does), then evict some more: they leave shadows. */
	pc__workingset_trim(c);
	assert_true(vm(c, "nr_shadow_entries") <= c->max_shadows / 4 * 3);
	for (uint64_t i = pages - 100; i < pages; i++) {
		void *item;

		read_page(f, i, 71);
		for (uint64_t k = pages - 100; k < i; k++) {
			item = pc__tree_lookup(&f->mapping->tree, k);
			if (item && pc_tree_is_value(item) && k > last_evicted)
				last_evicted = k;
		}
	}
	printf("  %llu pages through 64 frames: %llu shadows (bound %llu), "
	       "%llu trimmed, page %llu evicted late has one\n",
	       (unsigned long long)pages,
	       (unsigned long long)vm(c, "nr_shadow_entries"),
	       (unsigned long long)c->max_shadows,
	       (unsigned long long)vm(c, "workingset_nodereclaim"),
	       (unsigned long long)last_evicted);
	assert_true(last_evicted >= pages - 100);
	refaults = vm(c, "workingset_refault_file");
	read_page(f, last_evicted, 71);
	assert_int_equal(vm(c, "workingset_refault_file"), refaults + 1);
	assert_true(vm(c, "nr_shadow_entries") <= c->max_shadows);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* Policies                                                             */

/*
 * reclaim.batch_remove: tree-lock holds taken to remove a reclaimed page.
 * One page per miss, no kswapd: every tree-lock acquisition is an insert
 * (one per page read) or a removal.  Two files read alternately make a
 * batch alternate mappings too: "on" finds runs of one, "sorted" two.
 */
static double removal_locks_per_page(const char *mode, bool two_files)
{
	const char *a = tu_path("br-a"), *b = tu_path("br-b");
	const uint64_t pages = 1024;	/* 4 budgets */
	char cfg[160];
	uint64_t reads = 0, locks, steal;
	pc_cache *c;
	pc_file *fa, *fb;

	make_file(a, pages, 11);
	make_file(b, pages, 12);
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=1 reclaim.kswapd=off "
		 "cache.stickiness=off reclaim.batch_remove=%s", mode);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	fa = open_random(c, a, O_RDONLY);
	fb = open_random(c, b, O_RDONLY);
	locks = vm(c, "tree_lock_acquired");
	for (uint64_t i = 0; i < pages; i++) {
		read_page(fa, i, 11);
		reads++;
		if (two_files) {
			read_page(fb, i, 12);
			reads++;
		}
	}
	locks = vm(c, "tree_lock_acquired") - locks;
	steal = vm(c, "pgsteal_direct");
	assert_true(steal >= reads / 2);
	pc_close(fa);
	pc_close(fb);
	assert_int_equal(pc_cache_destroy(c), 0);
	printf("  batch_remove=%s, %s: %.3f tree-lock holds per reclaimed page\n",
	       mode, two_files ? "two files" : "one file",
	       (double)(locks - reads) / (double)steal);
	return (double)(locks - reads) / (double)steal;
}

static void test_policy_batch_remove(void **state)
{
	(void)state;
	/* off: one hold per page. */
	assert_true(removal_locks_per_page("off", false) >= 0.95);
	/* on: one hold per run; a batch of one file is one run. */
	assert_true(removal_locks_per_page("on", false) <= 0.1);
	/* Alternating mappings: "on" gains nothing, "sorted" does. */
	assert_true(removal_locks_per_page("on", true) >= 0.9);
	assert_true(removal_locks_per_page("sorted", true) <= 0.15);
	assert_true(removal_locks_per_page("off", true) >= 0.95);
}

/*
 * reclaim.contention_backoff: the test holds a mapping's tree lock while
 * both nodes' kswapds try to reclaim that mapping's pages (the cache is
 * full of them, and the test takes free frames down to min with
 * allocations that never reclaim), then keeps the lock busy in 1 ms
 * slices while they work.
 */
struct backoff_counts {
	uint64_t contended, waits, stalls;
};

static struct backoff_counts contention_run(const char *backoff)
{
	const char *path = tu_path("contended");
	const uint64_t frames = 2048;	/* 8M */
	struct pc_page *taken[2048];
	unsigned ntaken = 0;
	struct backoff_counts r;
	char cfg[200];
	pc_cache *c;
	pc_file *f;
	struct pc_lock *tl;

	make_file(path, frames + frames / 2, 21);
	snprintf(cfg, sizeof(cfg), "memory=8M nodes=2 numa.node_reclaim=off "
		 "cache.stickiness=off reclaim.watermark_scale=3000 "
		 "reclaim.contention_backoff=%s", backoff);
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	f = open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < frames + frames / 2; i++) {
		/* Both nodes get their share of the file. */
		assert_int_equal(pc_thread_set_node(c, (int)(i % 2)), 0);
		read_page(f, i, 21);
	}
	pc__lru_drain(c, pc__tctx(c));
	/* Let both kswapds finish balancing. */
	for (int i = 0; i < 5000 && (atomic_load(&c->nodes[0].kswapd_active) ||
				     atomic_load(&c->nodes[1].kswapd_active)); i++)
		sleep_us(1000);
	tl = &f->mapping->tree_lock;
	pc__lock(tl);
	while (ntaken < 2048) {
		struct pc_page *p = pc__alloc_page(c, NULL, PC_GFP_NORETRY);

		if (!p)
			break;
		taken[ntaken++] = p;
	}
	/* Both kswapds are awake and stuck on our lock (or done). */
	for (int i = 0; i < 5000 && vm(c, "reclaim_tree_contended") < 2; i++)
		sleep_us(1000);
	pc__unlock(tl);
	/* Keep the lock contended while they balance. */
	for (int i = 0; i < 3000; i++) {
		if (!atomic_load(&c->nodes[0].kswapd_active) &&
		    !atomic_load(&c->nodes[1].kswapd_active))
			break;
		if (!strcmp(backoff, "blunt") && vm(c, "kswapd_contended_stall"))
			break;
		pc__lock(tl);
		sleep_us(1000);
		pc__unlock(tl);
		sleep_us(200);
	}
	r.contended = vm(c, "reclaim_tree_contended");
	r.waits = vm(c, "reclaim_backoff_wait");
	r.stalls = vm(c, "kswapd_contended_stall");
	printf("  contention_backoff=%s: reclaim_tree_contended %llu "
	       "reclaim_backoff_wait %llu kswapd_contended_stall %llu\n", backoff,
	       (unsigned long long)r.contended, (unsigned long long)r.waits,
	       (unsigned long long)r.stalls);
	while (ntaken)
		pc__put_page(c, taken[--ntaken]);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
	return r;
}

static void test_policy_contention_backoff(void **state)
{
	struct backoff_counts r;

	(void)state;
	r = contention_run("off");
	assert_true(r.contended >= 1);
	assert_int_equal(r.waits, 0);
	assert_int_equal(r.stalls, 0);
	r = contention_run("sleepy");
	assert_true(r.contended >= 1);
	assert_true(r.waits >= 1);
	assert_int_equal(r.stalls, 0);
	r = contention_run("blunt");
	assert_true(r.contended >= 2);
	assert_int_equal(r.waits, 0);
	assert_true(r.stalls >= 1);
}

/*
 * numa.node_reclaim: a thread of node 0 reads two budgets of a clean file.
 * Off, its pages spill to node 1 (numa_miss); on, node 0 is reclaimed
 * first and node 1 is never used.
 */
static void node_reclaim_run(bool on, uint64_t *miss, uint64_t *node1)
{
	const char *path = tu_path("nodereclaim");
	char cfg[160];
	pc_cache *c;
	pc_file *f;

	make_file(path, 512, 31);
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=2 reclaim.kswapd=off "
		 "cache.stickiness=off numa.node_reclaim=%s", on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	f = open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < 512; i++)
		read_page(f, i, 31);
	*miss = vm(c, "numa_miss");
	*node1 = vm(c, "node1.pgalloc");
	assert_int_equal(vm(c, "numa_miss"), vm(c, "numa_foreign"));
	assert_int_equal(vm(c, "numa_hit") + vm(c, "numa_miss"), vm(c, "pgalloc"));
	assert_int_equal(vm(c, "numa_local") + vm(c, "numa_other"), vm(c, "pgalloc"));
	printf("  node_reclaim=%s: numa_miss %llu, node1 pgalloc %llu, "
	       "pgsteal_direct %llu\n", on ? "on" : "off",
	       (unsigned long long)*miss, (unsigned long long)*node1,
	       (unsigned long long)vm(c, "pgsteal_direct"));
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_node_reclaim(void **state)
{
	uint64_t miss, node1;

	(void)state;
	node_reclaim_run(false, &miss, &node1);
	assert_true(miss > 0);
	assert_true(node1 > 0);
	node_reclaim_run(true, &miss, &node1);
	assert_int_equal(miss, 0);
	assert_int_equal(node1, 0);
}

/*
 * numa.mapping_sticky: page 0 of a file is written from node 0, the rest
 * from node 1.  Sticky, every page lands on node 0 (numa_other counts the
 * node-1 allocations that went there); not sticky, they land on node 1.
 */
static void sticky_run(bool on, unsigned *on_node0)
{
	const char *path = tu_path("sticky");
	unsigned char buf[PG];
	char cfg[160];
	pc_cache *c;
	pc_file *f;

	memset(buf, 7, sizeof(buf));
	snprintf(cfg, sizeof(cfg), "memory=1M nodes=2 reclaim.kswapd=off "
		 "numa.mapping_sticky=%s", on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	assert_int_equal(pc_pwrite(f, buf, PG, 0), PG);
	assert_int_equal(pc_thread_set_node(c, 1), 0);
	for (uint64_t i = 1; i < 40; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)(i * PG)), PG);
	*on_node0 = 0;
	for (uint64_t i = 0; i < 40; i++) {
		struct pc_page *p = pc__find_get_page(f->mapping, i);

		assert_non_null(p);
		*on_node0 += page_node(c, p)->id == 0;
		pc__put_page(c, p);
	}
	if (on)
		assert_true(vm(c, "numa_other") >= 39);
	else
		assert_int_equal(vm(c, "numa_other"), 0);
	assert_int_equal(vm(c, "numa_miss"), 0);
	printf("  mapping_sticky=%s: %u of 40 pages on node 0\n",
	       on ? "on" : "off", *on_node0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_mapping_sticky(void **state)
{
	unsigned n0;

	(void)state;
	sticky_run(true, &n0);
	assert_int_equal(n0, 40);
	sticky_run(false, &n0);
	assert_int_equal(n0, 1);
}

/*
 * numa.dirty_spread: a node-0 thread dirties 400 pages under a dirty limit
 * of 512 (a share of 256 a node) that nothing writes back meanwhile.
 * Spread, node 0 stops at its share and node 1 takes the rest.
 */
static void spread_run(bool on, uint64_t *dirty0, uint64_t *dirty1)
{
	const char *path = tu_path("spread");
	unsigned char buf[PG];
	char cfg[200];
	pc_cache *c;
	pc_file *f;

	memset(buf, 9, sizeof(buf));
	snprintf(cfg, sizeof(cfg), "memory=8M nodes=2 writeback.dirty_bytes=2M "
		 "writeback.dirty_background_bytes=2M numa.dirty_spread=%s",
		 on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	assert_int_equal(pc_thread_set_node(c, 0), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	for (uint64_t i = 0; i < 400; i++)
		assert_int_equal(pc_pwrite(f, buf, PG, (off_t)(i * PG)), PG);
	*dirty0 = vm(c, "node0.nr_dirty");
	*dirty1 = vm(c, "node1.nr_dirty");
	printf("  dirty_spread=%s: dirty pages node0 %llu node1 %llu, "
	       "numa_miss %llu\n", on ? "on" : "off",
	       (unsigned long long)*dirty0, (unsigned long long)*dirty1,
	       (unsigned long long)vm(c, "numa_miss"));
	if (on)
		assert_true(vm(c, "numa_miss") >= *dirty1);
	else
		assert_int_equal(vm(c, "numa_miss"), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_dirty_spread(void **state)
{
	uint64_t d0, d1;

	(void)state;
	spread_run(true, &d0, &d1);
	if (d0 + d1 == 400) {	/* nothing was written back meanwhile */
		assert_true(d0 <= 256);
		assert_true(d1 >= 144);
	} else {
		assert_true(d1 > 0);
	}
	spread_run(false, &d0, &d1);
	assert_int_equal(d1, 0);
}

/*
 * lru.deferred_activation (seed 004): a page read twice while it still
 * sits in the thread's add batch.  On, the drain puts it on the active
 * list; off, the activation is lost.
 */
static void deferred_run(bool on, bool *active, uint64_t *pgactivate)
{
	const char *path = tu_path("deferred");
	char cfg[160];
	struct pc_page *p;
	pc_cache *c;
	pc_file *f;

	make_file(path, 8, 41);
	snprintf(cfg, sizeof(cfg), "memory=1M reclaim.kswapd=off "
		 "cache.stickiness=off lru.deferred_activation=%s",
		 on ? "on" : "off");
	assert_int_equal(pc_cache_create(&c, cfg), 0);
	f = open_random(c, path, O_RDONLY);
	read_page(f, 3, 41);
	p = pc__find_get_page(f->mapping, 3);
	assert_non_null(p);
	assert_false(page_test(p, PG_lru));	/* still in the batch */
	read_page(f, 5, 41);	/* (a read of the same page is one access) */
	read_page(f, 3, 41);
	assert_false(page_test(p, PG_lru));
	pc__lru_drain(c, pc__tctx(c));
	assert_true(page_test(p, PG_lru));
	*active = page_test(p, PG_active);
	*pgactivate = vm(c, "pgactivate");
	printf("  deferred_activation=%s: page read twice in its batch %s, "
	       "pgactivate %llu\n", on ? "on" : "off",
	       *active ? "active" : "inactive", (unsigned long long)*pgactivate);
	pc__put_page(c, p);
	pc_close(f);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_policy_deferred_activation(void **state)
{
	bool active;
	uint64_t n;

	(void)state;
	deferred_run(true, &active, &n);
	assert_true(active);
	assert_int_equal(n, 1);
	deferred_run(false, &active, &n);
	assert_false(active);
	assert_int_equal(n, 0);
}

/* Each policy key takes its documented values and nothing else. */
static void test_policy_keys(void **state)
{
	static const struct {
		const char *key;
		const char *const good[12];
		const int val[12];
		const char *const bad[8];
	} keys[] = {
		{ "reclaim.batch_remove",
		  { "off", "on", "sorted", "0", "1", "no", "yes", "false", "true" },
		  { 0, 1, 2, 0, 1, 0, 1, 0, 1 },
		  { "", "2", "sleepy", "Sorted", "sort", "onn", "-1" } },
		{ "reclaim.contention_backoff",
		  { "off", "sleepy", "blunt", "on", "0", "1" },
		  { 0, 1, 2, 1, 0, 1 },
		  { "", "2", "sorted", "Blunt", "sleep", "auto" } },
		{ "numa.node_reclaim", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "sorted", "blunt", "On" } },
		{ "numa.mapping_sticky", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "sorted", "sticky" } },
		{ "numa.dirty_spread", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "auto", "spread" } },
		{ "lru.deferred_activation", { "on", "off", "1", "0" },
		  { 1, 0, 1, 0 }, { "", "2", "sorted", "deferred" } },
		{ "reclaim.kswapd", { "on", "off" }, { 1, 0 }, { "", "2", "blunt" } },
		{ "reclaim.watermark_scale", { "1", "100", "3000" }, { 1, 100, 3000 },
		  { "", "0", "3001", "-5", "10%" } },
	};
	struct pc_config cfg;

	(void)state;
	for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (int i = 0; keys[k].good[i]; i++) {
			char s[128];
			int v;

			snprintf(s, sizeof(s), "%s=%s", keys[k].key, keys[k].good[i]);
			if (pc__config_parse(&cfg, s) != 0)
				fail_msg("refused: %s", s);
			if (!strcmp(keys[k].key, "reclaim.batch_remove"))
				v = cfg.batch_remove;
			else if (!strcmp(keys[k].key, "reclaim.contention_backoff"))
				v = cfg.contention_backoff;
			else if (!strcmp(keys[k].key, "numa.node_reclaim"))
				v = cfg.node_reclaim;
			else if (!strcmp(keys[k].key, "numa.mapping_sticky"))
				v = cfg.mapping_sticky;
			else if (!strcmp(keys[k].key, "numa.dirty_spread"))
				v = cfg.dirty_spread;
			else if (!strcmp(keys[k].key, "lru.deferred_activation"))
				v = cfg.deferred_activation;
			else if (!strcmp(keys[k].key, "reclaim.kswapd"))
				v = cfg.kswapd;
			else
				v = (int)cfg.watermark_scale;
			if (v != keys[k].val[i])
				fail_msg("%s: value %d, want %d", s, v, keys[k].val[i]);
		}
		for (int i = 0; keys[k].bad[i]; i++) {
			char s[128];

			snprintf(s, sizeof(s), "%s=%s", keys[k].key, keys[k].bad[i]);
			if (pc__config_parse(&cfg, s) != -EINVAL)
				fail_msg("accepted: %s", s);
		}
	}
	/* nodes: N from 1 to 64, or auto. */
	assert_int_equal(pc__config_parse(&cfg, "nodes=auto"), 0);
	assert_int_equal(cfg.nodes, 0);
	assert_int_equal(pc__config_parse(&cfg, "nodes=4"), 0);
	assert_int_equal(cfg.nodes, 4);
	assert_int_equal(pc__config_parse(&cfg, "nodes=0"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "nodes=65"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "nodes=two"), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* Nodes, watermarks, the inactive/active balance                       */

static void test_nodes(void **state)
{
	pc_cache *c;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=4M nodes=4"), 0);
	assert_int_equal(c->nr_nodes, 4);
	for (int i = 0; i < 4; i++) {
		struct pc_node *n = &c->nodes[i];

		assert_int_equal(n->nr_frames, 256);
		assert_true(n->wmark_min < n->wmark_low);
		assert_true(n->wmark_low < n->wmark_high);
		assert_true(n->wmark_high < n->nr_frames / 2);
		assert_int_equal(atomic_load(&n->nr_free), 256);
	}
	assert_int_equal(pc_thread_set_node(c, 3), 0);
	assert_int_equal(pc__tctx(c)->node, 3);
	assert_int_equal(pc_thread_set_node(c, 4), -EINVAL);
	assert_int_equal(pc_thread_set_node(c, -1), -EINVAL);
	assert_int_equal(pc_thread_set_node(NULL, 0), -EINVAL);
	/* A frame from the thread's node first, counted as a local hit. */
	{
		struct pc_page *p = pc__alloc_page(c, NULL, 0);

		assert_non_null(p);
		assert_int_equal(page_node(c, p)->id, 3);
		assert_int_equal(vm(c, "node3.numa_hit"), 1);
		assert_int_equal(vm(c, "node3.numa_local"), 1);
		pc__put_page(c, p);
	}
	assert_int_equal(pc_cache_destroy(c), 0);
	/* nodes=auto: the machine's nodes (one without libnuma). */
	assert_int_equal(pc_cache_create(&c, "memory=4M nodes=auto"), 0);
	assert_true(c->nr_nodes >= 1);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/*
 * The active list is aged when it outgrows the inactive one: a hot set of
 * 3/4 of the budget, then a stream.  Unreferenced active pages move to
 * the inactive list (pgrefill, pgdeactivate), until inactive is not low.
 */
static void test_inactive_balance(void **state)
{
	const char *hot = tu_path("bal-hot"), *str = tu_path("bal-stream");
	struct pc_node *n;
	pc_cache *c;
	pc_file *fh, *fs;
	uint64_t a, i;

	(void)state;
	make_file(hot, 192, 51);
	make_file(str, 512, 52);
	assert_int_equal(pc_cache_create(&c, "memory=1M nodes=1 reclaim.kswapd=off "
					 "cache.stickiness=off"), 0);
	n = &c->nodes[0];
	fh = open_random(c, hot, O_RDONLY);
	fs = open_random(c, str, O_RDONLY);
	for (int round = 0; round < 2; round++)
		for (uint64_t k = 0; k < 192; k++)
			read_page(fh, k, 51);
	pc__lru_drain(c, pc__tctx(c));
	assert_true(atomic_load(&n->lru[PC_LRU_ACTIVE].nr) >= 150);
	for (uint64_t k = 0; k < 512; k++)
		read_page(fs, k, 52);
	a = atomic_load(&n->lru[PC_LRU_ACTIVE].nr);
	i = atomic_load(&n->lru[PC_LRU_INACTIVE].nr);
	printf("  active %llu inactive %llu pgrefill %llu pgdeactivate %llu\n",
	       (unsigned long long)a, (unsigned long long)i,
	       (unsigned long long)vm(c, "pgrefill"),
	       (unsigned long long)vm(c, "pgdeactivate"));
	assert_true(vm(c, "pgrefill") > 0);
	assert_true(vm(c, "pgdeactivate") > 0);
	assert_true(a <= i + PC_RECLAIM_BATCH + PC_LRU_BATCH);
	pc_close(fh);
	pc_close(fs);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* ------------------------------------------------------------------ */
/* All pinned                                                           */

static void pinned_run(const char *cfgs)
{
	const char *path = tu_path("allpinned");
	pc_page **pins;
	unsigned char buf[PG];
	uint64_t frames, n = 0, t0, waited;
	ssize_t r;
	pc_cache *c;
	pc_file *f;

	assert_int_equal(pc_cache_create(&c, cfgs), 0);
	frames = c->nr_frames;
	make_file(path, frames + 8, 61);
	pins = calloc(frames + 8, sizeof(*pins));
	f = open_random(c, path, O_RDONLY);
	for (uint64_t i = 0; i < frames + 8; i++) {
		int e = pc_get_page(f, i, 0, &pins[n]);

		if (e == -ENOMEM)
			break;
		assert_int_equal(e, 0);
		n++;
	}
	assert_int_equal(n, frames);	/* every frame, and not one more */
	t0 = pc__now_ns();
	r = pc_pread(f, buf, PG, (off_t)((frames + 4) * PG));
	waited = pc__now_ns() - t0;
	assert_int_equal(r, -ENOMEM);
	assert_true(vm(c, "allocfail") >= 2);
	printf("  %s: %llu frames pinned, -ENOMEM after %.0f ms\n", cfgs,
	       (unsigned long long)frames, (double)waited / 1e6);
	/* Bounded: 250 ms without progress (generous margin for slow runs). */
	assert_true(waited < 3000ull * 1000 * 1000);
	while (n)
		pc_put_page(pins[--n]);
	read_page(f, frames + 4, 61);
	pc_close(f);
	free(pins);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_all_pinned(void **state)
{
	(void)state;
	pinned_run("memory=64K");
	pinned_run("memory=256K nodes=4");
	pinned_run("memory=128K nodes=2 reclaim.kswapd=off");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_all_pinned),
		cmocka_unit_test(test_refault_distance),
		cmocka_unit_test(test_inactive_balance),
		cmocka_unit_test(test_shadow_bound),
		cmocka_unit_test(test_policy_batch_remove),
		cmocka_unit_test(test_policy_node_reclaim),
		cmocka_unit_test(test_policy_mapping_sticky),
		cmocka_unit_test(test_policy_dirty_spread),
		cmocka_unit_test(test_policy_deferred_activation),
		cmocka_unit_test(test_policy_contention_backoff),
		cmocka_unit_test(test_kswapd_keeps_up),
		cmocka_unit_test(test_safety_under_reclaim),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
