/*
 * io_sync.c - the pread/pwrite backend: each request done with
 * preadv/pwritev in the submitting thread, end_io called before submit
 * returns, requests in the order given.
 *
 *   submit(reqs[0..n)) ─► for each: pc__io_transfer (continues short
 *   transfers, retries EINTR) ─► dontneed: pc__io_dontneed ─► end_io
 *
 * The fallback when io_uring is unavailable, and the deterministic backend
 * of the tests (io_fault.c puts fault rules in front of it).
 *
 * State: none but the ops pointer, read-only.  No locks, no threads:
 * submit may run in any number of threads at once, and nothing is ever in
 * flight when submit has returned, so destroy has nothing to wait for.
 */
#include <stdlib.h>

#include "io.h"

struct pc_io_sync {
	const struct pc_io_ops *ops;	/* &pc__io_sync_ops; read-only */
};

static int sync_create(struct pc_io **out, unsigned depth)
{
	struct pc_io_sync *s = calloc(1, sizeof(*s));

	(void)depth;
	if (!s)
		return -ENOMEM;
	s->ops = &pc__io_sync_ops;
	*out = (struct pc_io *)s;
	return 0;
}

static void sync_destroy(struct pc_io *io)
{
	free(io);
}

static int sync_submit(struct pc_io *io, struct pc_io_req **reqs, unsigned n)
{
	(void)io;
	PC_ASSERT(*(const struct pc_io_ops **)(void *)io == &pc__io_sync_ops);
	for (unsigned i = 0; i < n; i++)
		pc__io_do(reqs[i]);	/* reqs[i] may be gone after this */
	return 0;
}

const struct pc_io_ops pc__io_sync_ops = {
	.name = "sync",
	.create = sync_create,
	.destroy = sync_destroy,
	.submit = sync_submit,
};
