/*
 * test_dropbehind.c - use-once pages (dropbehind.c): how full a stream
 * leaves the cache, and that it recycles its own frames without waking
 * kswapd.
 *
 *   floor   one stream of 64 KiB reads through a sparse file of four
 *           budgets: from the first drop on, the node's free frames stay
 *           between its low mark and the use-once floor (low plus two
 *           readahead windows, or the band from min to high), so the
 *           cache holds all but that floor (the first wave kept an eighth
 *           of the budget free); kswapd is never woken, nothing is
 *           reclaimed, almost every page is dropped behind.
 *
 * One reader, no other thread allocating: kswapd never runs, so every
 * count is exact.  Tests look inside the cache (internal.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "readahead.h"
#include "util.h"

#define PG 4096
#define KB 1024

static void test_stream_floor(void **state)
{
	const char *path = tu_path("floor");
	const uint64_t pages = 4 * 4096;	/* four budgets */
	unsigned char *buf = malloc(64 * KB);
	uint64_t low, floor, lowest = UINT64_MAX, highest = 0, ra_max;
	struct pc_node *n;
	pc_cache *c;
	pc_file *f;
	int fd;

	(void)state;
	assert_non_null(buf);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(pages * PG)), 0);
	close(fd);
	assert_int_equal(pc_cache_create(&c, "memory=16M nodes=1"), 0);
	n = &c->nodes[0];
	ra_max = pc__ra_default_max(c);
	low = node_wmark_low(n);
	floor = low + pc_max(n->wmark_high - n->wmark_min, 2 * ra_max);
	assert_true(floor < n->nr_frames / 8);
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &f), 0);
	for (uint64_t off = 0; off < pages * PG; off += 64 * KB) {
		uint64_t free_now;

		assert_int_equal(pc_pread(f, buf, 64 * KB, (off_t)off), 64 * KB);
		if (!tu_vm(c, "dropbehind"))
			continue;	/* still filling the cache */
		free_now = atomic_load(&n->nr_free);
		lowest = pc_min(lowest, free_now);
		highest = pc_max(highest, free_now);
	}
	printf("  16M, floor %llu (low %llu, ra max %llu): free frames stayed "
	       "in [%llu, %llu]; dropbehind %llu of %llu, kswapd woken %llu\n",
	       (unsigned long long)floor, (unsigned long long)low,
	       (unsigned long long)ra_max, (unsigned long long)lowest,
	       (unsigned long long)highest,
	       (unsigned long long)tu_vm(c, "dropbehind"),
	       (unsigned long long)pages,
	       (unsigned long long)tu_vm(c, "kswapd_wakeup"));
	assert_true(lowest > low);
	/* a drop batch and a window over holes above the floor at most */
	assert_true(highest <= floor + PC_DROP_BATCH + 32);
	assert_int_equal(tu_vm(c, "kswapd_wakeup"), 0);
	assert_int_equal(tu_vm(c, "pgsteal_kswapd") + tu_vm(c, "pgsteal_direct"), 0);
	assert_true(tu_vm(c, "dropbehind") >= pages - n->nr_frames);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
	unlink(path);
	free(buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_floor),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
