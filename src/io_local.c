/*
 * io_local.c - each process's I/O backend of a cache.
 *
 * A cache's I/O goes through the backend (io.h: io_uring.c, io_sync.c,
 * io_fault.c) of the process that submits it, kept in its struct pc_local
 * (internal.h; the process's entry for the cache: local.c).  The creator
 * makes its backend at create (pc__io_make: cfg.io, or the sync backend
 * when io_uring is refused, said once on stderr); any other process, a
 * forked child included, at its first I/O (local_io, under io_lock, rank
 * IO).  A process that cannot make even the sync backend (no memory) ends
 * each request it submits with -ENOMEM: the read or the writeback that
 * needed it sees the error, as it would an I/O error.
 *
 * Beside io.c, which stays a leaf (no cache, no state): this is the
 * cache's side of the interface.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "io.h"
#include "share.h"

static void io_fallback_say(int err)
{
	static _Atomic bool said;

	if (!atomic_exchange(&said, true))
		fprintf(stderr, "pagecache: io_uring unavailable (%s): I/O goes "
			"through the sync backend (pread/pwrite)\n",
			strerror(-err));
}

int pc__io_make(struct pc_cache *c, struct pc_local *l)
{
	const struct pc_io_ops *ops = pc__io_ops_by_name(c->cfg.io);
	struct pc_io *io;
	int r = ops->create(&io, 256);

	if (r && ops == &pc__io_uring_ops) {
		io_fallback_say(r);	/* no io_uring here */
		ops = &pc__io_sync_ops;
		c->io_fallback = true;
		r = ops->create(&io, 256);
	}
	if (r)
		return r;
	l->io = io;
	atomic_store_explicit((_Atomic(const struct pc_io_ops *) *)&l->io_ops,
			      ops, memory_order_release);
	return 0;
}

/*
 * This process's backend for @c, made at its first I/O here (a forked
 * child's, an attached process's): 0, or -errno when not even the sync
 * backend could be made.
 */
static int local_io(struct pc_cache *c, struct pc_local *l)
{
	int r = 0;

	if (__builtin_expect(!atomic_load_explicit(
		(_Atomic(const struct pc_io_ops *) *)&l->io_ops,
		memory_order_acquire), 0)) {
		static struct pc_lock io_lock = PC_LOCK_INITIALIZER(PC_RANK_IO);

		pc__lock(&io_lock);
		if (!l->io_ops)
			r = pc__io_make(c, l);
		pc__unlock(&io_lock);
	}
	return r;
}

int pc__io_submit(struct pc_cache *c, struct pc_io_req **reqs, unsigned n)
{
	struct pc_local *l = pc__local(c);
	int r = local_io(c, l);

	if (__builtin_expect(r == 0, 1))
		return l->io_ops->submit(l->io, reqs, n);
	/* No backend: each request ends now, failed (io.h: end_io once). */
	for (unsigned i = 0; i < n; i++) {
		reqs[i]->res = r;
		reqs[i]->end_io(reqs[i]);
	}
	return 0;
}

bool pc__io_lost(struct pc_cache *c)
{
	struct pc_local *l = pc__local(c);

	return l->io && l->io_ops->lost && l->io_ops->lost(l->io);
}

void pc__io_destroy(struct pc_cache *c)
{
	struct pc_local *l = pc__local(c);

	if (!l)		/* a create that failed before it was registered */
		return;
	if (l->io)
		l->io_ops->destroy(l->io);
	l->io = NULL;
	l->io_ops = NULL;
}
