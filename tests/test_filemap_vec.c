/*
 * test_filemap_vec.c - the vectored entry points of filemap.c: pc_readv
 * scatters and pc_writev gathers across segment and page boundaries, both
 * move the caller's position as read(2)/write(2) move a file offset;
 * appends (O_APPEND, PC_RW_APPEND, not with PC_RW_NOAPPEND) land at end
 * of file as one piece even with four threads appending at once; bad
 * arguments get the header's errnos.  Also pc_config_check.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pagecache.h"
#include "util.h"

static void test_gather_scatter(void **state)
{
	const char *path = tu_path("vec");
	static char model[3 * 4096 + 777], back[sizeof(model)];
	size_t lens[] = { 1, 0, 4095, 4096, 2, 0, 4000, 871 };	/* 3 pages + 777 */
	struct iovec iov[8];
	size_t total = 0;
	pc_cache *c;
	pc_file *f;
	off_t pos;
	int n = 0;

	(void)state;
	tu_pattern(model, sizeof(model), 42, 0);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		iov[n].iov_base = model + total;
		iov[n].iov_len = lens[i];
		total += lens[i];
		n++;
	}
	assert_int_equal(total, sizeof(model));
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	pos = 100;
	assert_int_equal(pc_writev(f, iov, n, &pos, 0), (ssize_t)total);
	assert_int_equal(pos, 100 + (off_t)total);
	assert_int_equal(pc_pread(f, back, sizeof(back), 100), (ssize_t)total);
	assert_memory_equal(back, model, total);
	/* Scatter it back into the same shape, from a position. */
	memset(back, 0, sizeof(back));
	for (int i = 0, o = 0; i < n; o += (int)iov[i].iov_len, i++)
		iov[i].iov_base = back + o;
	pos = 100;
	assert_int_equal(pc_readv(f, iov, n, &pos), (ssize_t)total);
	assert_int_equal(pos, 100 + (off_t)total);
	assert_memory_equal(back, model, total);
	/* Short at end of file, 0 past it; the position moves by the count. */
	pos = 100 + (off_t)total - 10;
	assert_int_equal(pc_readv(f, iov, n, &pos), 10);
	assert_int_equal(pos, 100 + (off_t)total);
	assert_int_equal(pc_readv(f, iov, n, &pos), 0);
	assert_int_equal(pc_readv(f, NULL, 0, &pos), 0);
	assert_int_equal(pc_writev(f, NULL, 0, &pos, 0), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_append_flags(void **state)
{
	const char *path = tu_path("app");
	struct iovec iov[2] = { { "ab", 2 }, { "cd", 2 } };
	char back[64] = { 0 };
	pc_cache *c;
	pc_file *f, *a;
	off_t pos;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_pwrite(f, "0123456789", 10, 0), 10);
	pos = 2;	/* PC_RW_APPEND: the end, whatever the position */
	assert_int_equal(pc_writev(f, iov, 2, &pos, PC_RW_APPEND), 4);
	assert_int_equal(pos, 14);
	assert_int_equal(pc_open(c, path, O_RDWR | O_APPEND, 0, &a), 0);
	pos = 0;	/* O_APPEND file */
	assert_int_equal(pc_writev(a, iov, 2, &pos, 0), 4);
	assert_int_equal(pos, 18);
	pos = 0;	/* ... unless PC_RW_NOAPPEND */
	assert_int_equal(pc_writev(a, iov, 1, &pos, PC_RW_NOAPPEND), 2);
	assert_int_equal(pos, 2);
	assert_int_equal(pc_writev(a, iov, 1, &pos, PC_RW_DSYNC), 2);
	assert_int_equal(pos, 20);
	assert_int_equal(pc_pread(f, back, sizeof(back), 0), 20);
	assert_string_equal(back, "ab23456789abcdabcdab");
	assert_int_equal(pc_close(a), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

struct appender {
	pc_file *f;
	int id;
	int bad;		/* a *pos that was not a record's end */
};

#define RECORDS 300
#define REC_LEN 700		/* 3 segments: head, body, tail */

static void *append_worker(void *arg)
{
	struct appender *ap = arg;

	for (int i = 0; i < RECORDS; i++) {
		char head[16], body[REC_LEN - 32], tail[16];
		struct iovec iov[3] = { { head, 16 }, { body, sizeof(body) },
					{ tail, 16 } };
		off_t pos = 0;

		snprintf(head, sizeof(head), "<%02d:%05d", ap->id, i);
		memset(body, 'a' + ap->id, sizeof(body));
		snprintf(tail, sizeof(tail), "%02d:%05d>", ap->id, i);
		if (pc_writev(ap->f, iov, 3, &pos, PC_RW_APPEND) != REC_LEN ||
		    pos % REC_LEN != 0)
			ap->bad++;
	}
	return NULL;
}

/* Four threads appending multi-segment records: whole records, none lost. */
static void test_concurrent_appends(void **state)
{
	const char *path = tu_path("appends");
	struct appender ap[4];
	pthread_t tid[4];
	int seen[4] = { 0 };
	char *all;
	pc_cache *c;
	pc_file *f;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=512K"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	for (int t = 0; t < 4; t++) {
		ap[t] = (struct appender){ f, t, 0 };
		pthread_create(&tid[t], NULL, append_worker, &ap[t]);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(tid[t], NULL);
		assert_int_equal(ap[t].bad, 0);
	}
	assert_int_equal(pc_size(f), 4 * RECORDS * REC_LEN);
	all = malloc(4 * RECORDS * REC_LEN);
	assert_int_equal(pc_pread(f, all, 4 * RECORDS * REC_LEN, 0),
			 4 * RECORDS * REC_LEN);
	for (int r = 0; r < 4 * RECORDS; r++) {
		const char *rec = all + (size_t)r * REC_LEN;
		int id, i, id2, i2;

		assert_int_equal(sscanf(rec, "<%2d:%5d", &id, &i), 2);
		assert_int_equal(sscanf(rec + REC_LEN - 16, "%2d:%5d>", &id2, &i2), 2);
		assert_int_equal(id, id2);
		assert_int_equal(i, i2);
		assert_true(id >= 0 && id < 4);
		assert_int_equal(i, seen[id]);	/* each thread's in order */
		seen[id]++;
		for (int k = 16; k < REC_LEN - 16; k++)
			assert_int_equal(rec[k], 'a' + id);
	}
	free(all);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_bad_args(void **state)
{
	const char *path = tu_path("bad");
	struct iovec iov[2] = { { "x", 1 }, { NULL, 1 } };
	char buf[8];
	struct iovec rv = { buf, sizeof(buf) };
	pc_cache *c;
	pc_file *f, *ro, *wo;
	off_t pos = 0, neg = -1;

	(void)state;
	assert_int_equal(pc_cache_create(&c, "memory=1M"), 0);
	assert_int_equal(pc_open(c, path, O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
	assert_int_equal(pc_writev(NULL, iov, 1, &pos, 0), -EINVAL);
	assert_int_equal(pc_writev(f, iov, 1, NULL, 0), -EINVAL);
	assert_int_equal(pc_writev(f, iov, 1, &neg, 0), -EINVAL);
	assert_int_equal(pc_writev(f, iov, -1, &pos, 0), -EINVAL);
	assert_int_equal(pc_writev(f, iov, IOV_MAX + 1, &pos, 0), -EINVAL);
	assert_int_equal(pc_writev(f, iov, 2, &pos, 0), -EINVAL);	/* NULL base */
	assert_int_equal(pc_writev(f, iov, 1, &pos, 0x100), -EINVAL);
	assert_int_equal(pc_writev(f, iov, 1, &pos, PC_RW_APPEND | PC_RW_NOAPPEND),
			 -EINVAL);
	assert_int_equal(pc_writev(f, NULL, 1, &pos, 0), -EINVAL);
	assert_int_equal(pc_readv(f, &rv, 1, NULL), -EINVAL);
	assert_int_equal(pc_readv(f, &rv, -1, &pos), -EINVAL);
	assert_int_equal(pos, 0);	/* nothing moved */
	assert_int_equal(pc_open(c, path, O_RDONLY, 0, &ro), 0);
	assert_int_equal(pc_open(c, path, O_WRONLY, 0, &wo), 0);
	assert_int_equal(pc_writev(ro, iov, 1, &pos, 0), -EBADF);
	assert_int_equal(pc_readv(wo, &rv, 1, &pos), -EBADF);
	assert_int_equal(pc_close(ro), 0);
	assert_int_equal(pc_close(wo), 0);
	assert_int_equal(pc_close(f), 0);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_config_check(void **state)
{
	(void)state;
	assert_int_equal(pc_config_check(NULL), 0);
	assert_int_equal(pc_config_check("memory=256M readahead.max=1M"), 0);
	assert_int_equal(pc_config_check("memory=lots"), -EINVAL);
	assert_int_equal(pc_config_check("no.such.key=1"), -EINVAL);
	assert_int_equal(pc_config_check("memory"), -EINVAL);
	/* what pc_cache_create would refuse for the budget alone */
	assert_int_equal(pc_config_check("memory=1"), -EINVAL);
	assert_int_equal(pc_config_check("memory=64K nodes=1"), 0);
	assert_int_equal(pc_config_check("memory=64K nodes=2"), -EINVAL);
	assert_int_equal(pc_config_check("memory=8M memory.max=4M"), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_append_flags),
		cmocka_unit_test(test_concurrent_appends),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_config_check),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
