/*
 * test_crash.c - crash safety: every byte acknowledged by an fsync is on
 * disk when the process dies (SIGKILL) at any moment.
 *
 * Each kill round forks a child that opens one file through its own
 * pc_cache (a small budget, so reclaim and background writeback run) and
 * does "epochs": a few writes at random offsets and of random lengths
 * (1 byte to 64 KiB, rewrites and extensions), then pc_fsync or
 * pc_fdatasync, then a 4-byte record (the epoch's number) into a pipe.
 * The parent kills it with SIGKILL after a random delay, reads the last
 * acknowledged epoch K, and replays the child's sequence from its seed:
 *
 *   acked   the file after epoch K: its size and bytes;
 *   maybe   the writes of epoch K+1 (the only ones the child can have
 *           started: it reports epoch K+1 before it begins K+2).
 *
 * The size on disk must be one the file had: the acknowledged size, or a
 * size epoch K+1's writes gave it (a write extends the file a page at a
 * time), or a block boundary below the largest of those (whole blocks
 * below the last one go to the disk as blocks, before the last block's
 * bytes, as the kernel's writeback sets i_disksize) - never longer, never
 * a rounded-up block with a zero tail.  Each byte below the acknowledged
 * size must hold its acknowledged value or a value some write of epoch
 * K+1 gave it; bytes past it hold epoch K+1's or zero (a hole, or a page
 * of K+1 not written yet).  Each kill round has its own seed, printed
 * with the round; PC_SEED=N replays the set.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

#define MAX_FILE (4u << 20)
#define MAX_WRITE (64u << 10)
#define MAX_WRITES 8		/* per epoch */

struct wr {
	uint64_t off;
	uint32_t len;
	uint64_t pat;		/* tu_pattern seed of its bytes */
};

/* The writes of epoch @e (1, 2, ...) given the size before it. */
static unsigned epoch_writes(uint64_t seed, uint64_t e, uint64_t size,
			     struct wr *w, bool *datasync)
{
	uint64_t x = seed ^ (e * 0x9E3779B97F4A7C15ull);
	unsigned n;

	tu_rand(&x);
	n = 1 + (unsigned)(tu_rand(&x) % MAX_WRITES);
	*datasync = tu_rand(&x) & 1;
	for (unsigned i = 0; i < n; i++) {
		uint64_t r = tu_rand(&x);
		uint64_t span = pc_min(size + MAX_WRITE, (uint64_t)MAX_FILE);
		uint32_t len;

		/* Mostly small writes, some whole blocks and more. */
		switch (r & 3) {
		case 0: len = 1 + (uint32_t)((r >> 8) % 64); break;
		case 1: len = 1 + (uint32_t)((r >> 8) % 8192); break;
		default: len = 1 + (uint32_t)((r >> 8) % MAX_WRITE); break;
		}
		w[i].off = (r >> 32) % span;
		if (w[i].off + len > MAX_FILE)	/* off < MAX_FILE: len >= 1 */
			len = (uint32_t)(MAX_FILE - w[i].off);
		w[i].len = len;
		w[i].pat = seed ^ (e << 20) ^ i;
		size = pc_max(size, w[i].off + len);
	}
	return n;
}

static void apply(unsigned char *img, uint64_t *size, const struct wr *w)
{
	tu_pattern(img + w->off, w->len, w->pat, w->off);
	*size = pc_max(*size, w->off + w->len);
}

/*
 * Is @disk a size the file had after epoch K (size @acked), with epoch
 * K+1's writes @w[0..n) in progress?  pc_pwrite extends the size page by
 * page; a block boundary below the largest size is one too (see the top).
 */
static bool size_was_had(uint64_t disk, uint64_t acked, const struct wr *w,
			 unsigned n)
{
	uint64_t size = acked;

	if (disk == acked)
		return true;
	for (unsigned i = 0; i < n; i++)
		for (uint64_t pos = w[i].off; pos < w[i].off + w[i].len;) {
			uint64_t end = pc_min((pos | (PC_PAGE_SIZE - 1)) + 1,
					      w[i].off + w[i].len);

			size = pc_max(size, end);
			if (disk == size)
				return true;
			pos = end;
		}
	return disk > acked && disk <= size && disk % PC_PAGE_SIZE == 0;
}

/* The child: epochs until killed.  Never returns. */
static void child(const char *path, uint64_t seed, int fd_out, bool uring)
{
	static unsigned char buf[MAX_WRITE];
	char cfg[64];
	pc_cache *c;
	pc_file *f;
	uint64_t size = 0;
	ssize_t r;

	snprintf(cfg, sizeof(cfg), "memory=2M io=%s", uring ? "uring" : "sync");
	if ((r = pc_cache_create(&c, cfg)) != 0 ||
	    (r = pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f)) != 0) {
		fprintf(stderr, "child: create/open: %s\n", strerror(-(int)r));
		_exit(2);
	}
	for (uint32_t e = 1;; e++) {
		struct wr w[MAX_WRITES];
		bool datasync;
		unsigned n = epoch_writes(seed, e, size, w, &datasync);

		for (unsigned i = 0; i < n; i++) {
			uint32_t done = 0;
			unsigned tries = 0;

			tu_pattern(buf, w[i].len, w[i].pat, w[i].off);
			/* A short write (no memory for a moment) goes on. */
			while (done < w[i].len) {
				r = pc_pwrite(f, buf + done, w[i].len - done,
					      (off_t)(w[i].off + done));
				if (r > 0) {
					done += (uint32_t)r;
					continue;
				}
				if (r != -ENOMEM || ++tries > 10000) {
					fprintf(stderr, "child: epoch %u: pwrite of "
						"%u at %" PRIu64 ": %zd\n", e,
						w[i].len, w[i].off, r);
					_exit(3);
				}
				usleep(1000);
			}
			size = pc_max(size, w[i].off + w[i].len);
		}
		r = datasync ? pc_fdatasync(f) : pc_fsync(f);
		if (r != 0) {
			fprintf(stderr, "child: epoch %u: fsync: %s\n", e,
				strerror(-(int)r));
			_exit(4);
		}
		if (write(fd_out, &e, sizeof(e)) != sizeof(e))
			_exit(5);
	}
}

/* One kill round.  Returns the acknowledged epoch. */
static uint32_t crash_round(const char *path, uint64_t seed, unsigned delay_ms,
			    bool uring)
{
	static unsigned char acked[MAX_FILE], disk[MAX_FILE + 65536];
	struct wr maybe[MAX_WRITES];
	unsigned nmaybe;
	bool ds;
	int pfd[2], status, fd;
	uint64_t size = 0;
	uint32_t k = 0, e;
	ssize_t got;
	struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L };
	pid_t pid;

	unlink(path);
	assert_int_equal(pipe(pfd), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		child(path, seed, pfd[1], uring);
	}
	close(pfd[1]);
	nanosleep(&ts, NULL);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status)) {
		fprintf(stderr, "child exited by itself: status %d (seed %" PRIu64 ")\n",
			WEXITSTATUS(status), seed);
		fail();
	}
	while (read(pfd[0], &e, sizeof(e)) == sizeof(e)) {
		assert_int_equal(e, k + 1);
		k = e;
	}
	close(pfd[0]);

	/* Replay: the file after epoch k, and epoch k+1's writes. */
	memset(acked, 0, sizeof(acked));
	for (uint32_t i = 1; i <= k; i++) {
		struct wr w[MAX_WRITES];
		unsigned n = epoch_writes(seed, i, size, w, &ds);

		for (unsigned j = 0; j < n; j++)
			apply(acked, &size, &w[j]);
	}
	nmaybe = epoch_writes(seed, k + 1, size, maybe, &ds);

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		assert_int_equal(errno, ENOENT);
		assert_int_equal(k, 0);	/* killed before it opened the file */
		return k;
	}
	got = pread(fd, disk, sizeof(disk), 0);
	close(fd);
	assert_true(got >= 0);
	if ((uint64_t)got < size) {
		fprintf(stderr, "seed %" PRIu64 " epoch %u: file is %zd bytes, "
			"%" PRIu64 " were acknowledged\n", seed, k, got, size);
		fail();
	}
	if (!size_was_had((uint64_t)got, size, maybe, nmaybe)) {
		fprintf(stderr, "seed %" PRIu64 " epoch %u: file is %zd bytes, a "
			"size it never had (acknowledged %" PRIu64 ")\n", seed,
			k, got, size);
		fail();
	}
	for (uint64_t b = 0; b < (uint64_t)got; b++) {
		unsigned char want = b < size ? acked[b] : 0;
		bool ok = disk[b] == want;

		for (unsigned j = 0; j < nmaybe && !ok; j++) {
			unsigned char v;

			if (b < maybe[j].off || b >= maybe[j].off + maybe[j].len)
				continue;
			tu_pattern(&v, 1, maybe[j].pat, b);
			ok = disk[b] == v;
		}
		if (!ok) {
			fprintf(stderr, "seed %" PRIu64 " epoch %u: byte %" PRIu64
				" is %#x, acknowledged %#x (size %" PRIu64 ")\n",
				seed, k, b, disk[b], want, size);
			fail();
		}
	}
	return k;
}

/* Prints how long the rounds took: the suite's time budget counts them. */
static void crash_rounds(bool uring, unsigned rounds)
{
	const char *path = tu_path(uring ? "crash-uring" : "crash-sync");
	uint64_t seed = tu_seed(uring ? "crash(io=uring)" : "crash(io=sync)");
	uint64_t x = seed, epochs = 0, t0 = pc__now_ns();

	for (unsigned r = 0; r < rounds; r++) {
		uint64_t rs = tu_rand(&x);
		unsigned delay = 5 + (unsigned)(tu_rand(&x) % 400);
		uint32_t k;

		k = crash_round(path, rs, delay, uring);
		epochs += k;
		printf("round %u: seed %" PRIu64 ", killed after %u ms, "
		       "%u epochs acknowledged and on disk\n", r, rs, delay, k);
	}
	printf("%u rounds, %" PRIu64 " epochs, in %.1f s\n", rounds, epochs,
	       (double)(pc__now_ns() - t0) / 1e9);
	/* Kills landed after some work, not only during start-up. */
	assert_true(epochs > 0);
	unlink(path);
}

static void test_crash_uring(void **state)
{
	pc_cache *c;
	uint64_t fallback = 1;

	(void)state;
	/* It means io_uring: not the sync backend it falls back to. */
	assert_int_equal(pc_cache_create(&c, "memory=2M io=uring"), 0);
	assert_int_equal(pc_vmstat(c, "io_uring_fallback", &fallback), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	if (fallback) {
		printf("io_uring unavailable here: skipped\n");
		skip();
	}
	crash_rounds(true, 120);
}

static void test_crash_sync(void **state)
{
	(void)state;
	crash_rounds(false, 80);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_uring),
		cmocka_unit_test(test_crash_sync),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
