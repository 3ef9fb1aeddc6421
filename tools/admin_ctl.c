/*
 * tools/admin_ctl.c - the `pagecache` commands that change a shared
 * cache, each on a handle attached as any user of the cache has one
 * (pc_cache_attach; tools/admin.c finds the cache by its name):
 *
 *   pagecache resize NAME SIZE    pc_cache_resize
 *   pagecache sync NAME           pc_cache_sync_all: every file written
 *                                 back by the cache process
 *   pagecache drop NAME [FILE...] pc_cache_drop: clean pages dropped
 *   pagecache stop NAME           pc_cache_stop: written back, every
 *                                 process on through the kernel, the
 *                                 cache removed
 *
 * Exit statuses as tools/admin.c says: 1 for a cache that cannot be had
 * or a request it refused (a writeback error, pinned pages), 2 for a bad
 * argument.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"

/* Only --help among the options; NAME and @want more: 0, -1 (help), 2. */
static int args(const char *cmd, const char *use, int argc, char **argv,
		int min, int max)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: pagecache %s %s\n", cmd, use);
			return -1;
		}
	}
	if (argc - 1 < min || (max >= 0 && argc - 1 > max) ||
	    (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: pagecache %s %s\n", cmd, use);
		return 2;
	}
	return 0;
}

int pc_resize_main(int argc, char **argv)
{
	char region[128];
	uint64_t bytes, pages = 0;
	pc_cache *c;
	int r = args("resize", "NAME SIZE", argc, argv, 2, 2);

	if (r)
		return r < 0 ? 0 : r;
	bytes = pc_admin_size(argv[2]);
	if (!bytes) {
		fprintf(stderr, "pagecache resize: '%s' is not a size (K, M, G "
			"suffixes)\n", argv[2]);
		return 2;
	}
	r = pc_admin_attach("resize", argv[1], &c, region, sizeof(region));
	if (r)
		return r;
	r = pc_cache_resize(c, bytes);
	(void)pc_vmstat(c, "nr_budget_pages", &pages);
	pc_cache_destroy(c);	/* detaches */
	if (r == -EINVAL) {
		fprintf(stderr, "pagecache resize: %s: a budget under the "
			"minimum or above the cache's memory.max\n", argv[2]);
		return 2;
	}
	if (r) {
		fprintf(stderr, "pagecache resize: %s: %s; the budget is %llu "
			"KiB\n", argv[1], r == -EBUSY ? "pinned pages stay above "
			"the new budget" : strerror(-r),
			(unsigned long long)pages * 4);
		return 1;
	}
	printf("%s: budget %llu KiB\n", argv[1], (unsigned long long)pages * 4);
	return 0;
}

int pc_sync_main(int argc, char **argv)
{
	char region[128];
	pc_cache *c;
	int r = args("sync", "NAME", argc, argv, 1, 1);

	if (r)
		return r < 0 ? 0 : r;
	r = pc_admin_attach("sync", argv[1], &c, region, sizeof(region));
	if (r)
		return r;
	r = pc_cache_sync_all(c);
	pc_cache_destroy(c);
	if (r) {
		fprintf(stderr, "pagecache sync: %s: writeback failed: %s (the "
			"pages stay dirty)\n", argv[1], strerror(-r));
		return 1;
	}
	return 0;
}

int pc_drop_main(int argc, char **argv)
{
	char region[128];
	int64_t total = 0;
	pc_cache *c;
	int r = args("drop", "NAME [FILE...]", argc, argv, 1, -1), status = 0;

	if (r)
		return r < 0 ? 0 : r;
	for (int i = 2; i < argc; i++) {	/* every FILE there first */
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "pagecache drop: %s: %s\n", argv[i],
				strerror(errno));
			return 2;
		}
	}
	r = pc_admin_attach("drop", argv[1], &c, region, sizeof(region));
	if (r)
		return r;
	if (argc == 2)
		total = pc_cache_drop(c, NULL);
	for (int i = 2; i < argc && total >= 0; i++) {
		struct stat st;
		int64_t n = stat(argv[i], &st) ? -errno : pc_cache_drop(c, &st);

		if (n == -ENOENT)	/* the cache holds none of it */
			n = 0;
		if (n < 0) {
			total = n;
			break;
		}
		total += n;
	}
	pc_cache_destroy(c);
	if (total < 0) {
		fprintf(stderr, "pagecache drop: %s: %s\n", argv[1],
			strerror((int)-total));
		status = 1;
	} else {
		printf("%s: %lld pages dropped\n", argv[1], (long long)total);
	}
	return status;
}

int pc_stop_main(int argc, char **argv)
{
	char region[128], pre[32];
	int r = args("stop", "NAME", argc, argv, 1, 1);

	if (r)
		return r < 0 ? 0 : r;
	if (!pc_admin_name_ok(argv[1])) {
		fprintf(stderr, "pagecache stop: '%s' is not a cache's name\n",
			argv[1]);
		return 2;
	}
	snprintf(pre, sizeof(pre), "u%u-", (unsigned)geteuid());
	snprintf(region, sizeof(region), "%s%s", pre, argv[1]);
	r = pc_cache_stop(region);
	if (r == -ENOENT && strncmp(argv[1], pre, strlen(pre)))
		r = pc_cache_stop(argv[1]);	/* a program's own name */
	if (r == -EIO || r == -ENOSPC || r == -EDQUOT) {
		fprintf(stderr, "pagecache stop: %s: writeback failed: %s: not "
			"stopped (the pages stay dirty)\n", argv[1],
			strerror(-r));
		return 1;
	}
	if (r)
		return pc_admin_error("stop", argv[1], r);
	printf("%s: stopped\n", argv[1]);
	return 0;
}
