/*
 * io_uring.c - the io_uring backend: one ring per pc_io, one completion
 * thread per ring (io_uring_cq.c).  Here: the ring's setup and teardown,
 * and the submitters; uring.h holds the ring's state the two files share.
 *
 *   submitters ─(lock: take slots)─(sq_lock: SQEs, io_uring_submit)─► kernel
 *                                                                       │
 *   completion thread ◄─ io_uring_wait_cqe ◄─ CQ ◄──────────────────────┘
 *     │ per CQE: short? ─► the rest, from where it stopped ─┐
 *     │          EAGAIN/EINTR? ─► again ────────────────────┤ pending[]
 *     │          dontneed? ─► SYNC (writes) ─► DROP ────────┘   │
 *     │          done ─► end_io(req), no lock held              │ flushed
 *     └─ after each batch of CQEs ◄─────────────────────────────┘ under sq_lock
 *
 * The ring's descriptor is moved to a high number at create, out of the
 * program's way (fd.c).
 *
 * A request marked now (its submitter waits for it at once) never enters
 * the ring: submit does it in the calling thread first (pc__io_do), then
 * queues the others - a wake-up of the completion thread and one of the
 * submitter saved, which on a loaded machine are two waits for a CPU.
 *
 * user_data of each SQE is a token: a pointer with a tag in its low 2 bits.
 *
 *   XFER  struct pc_io_req *    the transfer, from the start of req->iov
 *   CONT  struct uring_cont *   the rest of a transfer cut short (its own
 *                               copy of the iovecs, advanced)
 *   SYNC  struct pc_io_req *    sync_file_range of the written range
 *   DROP  struct pc_io_req *    fadvise(DONTNEED) of the range
 *
 * and &pc__uring_stop, the NOP that destroy sends last to stop the thread.
 * While a request is in flight req->res holds the bytes done so far.  A
 * request has at most one SQE or one pending token at any time.
 *
 * Slots: a request holds a slot from submit until its end_io has returned;
 * @inflight counts them.  Submitters wait while @limit (the CQ size) are
 * taken, so the CQ cannot overflow from their requests.  end_io may submit
 * more I/O from the completion thread: those requests never wait (the
 * thread would wait for itself); they go on pending[] and are submitted
 * with the batch's continuations.  pending[] has room for every slot, so
 * pushing a token never fails.
 *
 * Kernels without IORING_OP_SYNC_FILE_RANGE/FADVISE (before 5.6): the
 * dontneed calls are made in the completion thread (pc__io_dontneed).
 *
 * Errors: a request's error ends that request (req->res = -errno).  "Try
 * later" from io_uring_enter (EBUSY, EAGAIN, ENOMEM) is retried: submitters
 * back off without sq_lock, the completion thread polls CQEs meanwhile.
 * Any other error of the ring itself (its descriptor closed behind our
 * back, EBADF; EBADR, EOWNERDEAD, ...) loses the ring, not the process
 * (pc__uring_die, said once on stderr; uring_lost says it after):
 *   - new requests are done the sync backend's way, in the submitter;
 *   - the completion thread (it waits with a timeout where the kernel
 *     takes one, IORING_FEAT_EXT_ARG, so it notices) drains
 *     (io_uring_cq.c): the requests
 *     the kernel never took (SQEs past its head, pending[]) are done in
 *     it, the sync backend's way; the ones the kernel holds end as their
 *     CQEs come (the CQ is our memory: read without entering); those
 *     still held after DRAIN_NS fail with -EIO;
 *   - destroy does not close the descriptor (it may be another file's).
 * The requests holding slots are on @live (lock), so the drain can find
 * the ones left.
 *
 * Locks, never held together, never across end_io:
 *   lock     inflight, space_waiters (with the conds space and idle)
 *   sq_lock  the SQ side of the ring; submitters hold it from the first
 *            io_uring_get_sqe to io_uring_submit, so no SQE is published
 *            half-prepared, and it is dropped only when every SQE taken is
 *            prepared.
 * The completion thread alone touches the CQ side and pending[].
 * The kernel's handoff of a request from submitter to completion thread is
 * invisible to the memory model (and TSan): the thread takes and drops
 * @lock before each batch, pairing with the submitter's unlock after it
 * published the request.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uring.h"

#define URING_DEFAULT_DEPTH 256
#define URING_MAX_DEPTH 4096
#define URING_SYNC_RANGE_FLAGS (SYNC_FILE_RANGE_WAIT_BEFORE | \
				SYNC_FILE_RANGE_WRITE | \
				SYNC_FILE_RANGE_WAIT_AFTER)

const char pc__uring_stop = 0;	/* its address: the stop NOP's user_data */

static struct pc_io_uring *to_uring(struct pc_io *io)
{
	PC_ASSERT(*(const struct pc_io_ops **)(void *)io == &pc__io_uring_ops);
	return (struct pc_io_uring *)(void *)io;
}

/* The ring failed: said once, and everything goes the sync way (Errors). */
void pc__uring_die(struct pc_io_uring *u, const char *what, int err)
{
	if (atomic_exchange(&u->dead, true))
		return;
	fprintf(stderr, "pagecache: %s: %s: the io_uring ring is lost; requests "
		"it holds fail with EIO, the rest go on through the sync "
		"backend\n", what, strerror(-err));
}

static bool uring_lost(struct pc_io *io)
{
	return atomic_load(&to_uring(io)->dead);
}

/* @req holds a slot from now on; lock held. */
static void live_add_locked(struct pc_io_uring *u, struct pc_io_req *req)
{
	PC_ASSERT_HELD(&u->lock);
	req->live_prev = NULL;
	req->live_next = u->live;
	if (u->live)
		u->live->live_prev = req;
	u->live = req;
}

void pc__uring_prep(struct io_uring_sqe *sqe, uint64_t t)
{
	void *p = token_ptr(t);
	struct uring_cont *cont = p;
	struct pc_io_req *req = p;

	switch (t & TAG_MASK) {
	case TAG_XFER:
		if (req->op == PC_IO_WRITE)
			io_uring_prep_writev(sqe, req->fd, req->iov,
					     (unsigned)req->iovcnt,
					     (uint64_t)req->off);
		else
			io_uring_prep_readv(sqe, req->fd, req->iov,
					    (unsigned)req->iovcnt,
					    (uint64_t)req->off);
		break;
	case TAG_CONT:
		req = cont->req;
		if (req->op == PC_IO_WRITE)
			io_uring_prep_writev(sqe, req->fd, cont->iov,
					     (unsigned)cont->iovcnt,
					     (uint64_t)(req->off + req->res));
		else
			io_uring_prep_readv(sqe, req->fd, cont->iov,
					    (unsigned)cont->iovcnt,
					    (uint64_t)(req->off + req->res));
		break;
	case TAG_SYNC:
		io_uring_prep_sync_file_range(sqe, req->fd, len32(req->res),
					      (uint64_t)req->off,
					      URING_SYNC_RANGE_FLAGS);
		break;
	case TAG_DROP:
		io_uring_prep_fadvise(sqe, req->fd, (uint64_t)req->off,
				      (off_t)len32(req->res),
				      POSIX_FADV_DONTNEED);
		break;
	}
	io_uring_sqe_set_data64(sqe, t);
}

/*
 * Hand every prepared SQE to the kernel.  When it refuses for now (its CQ
 * overflowed, or it is short of memory): with @wait, drop sq_lock, back off
 * and try again; without, return false and leave them in the SQ.  False
 * too once the ring is lost (they stay in the SQ, for the drain).
 */
bool pc__uring_kick_locked(struct pc_io_uring *u, bool wait)
{
	PC_ASSERT_HELD(&u->sq_lock);
	while (io_uring_sq_ready(&u->ring) > 0 && !atomic_load(&u->dead)) {
		int r = io_uring_submit(&u->ring);

		if (r > 0 || r == -EINTR)
			continue;
		if (r != 0 && r != -EBUSY && r != -EAGAIN && r != -ENOMEM)
			pc__uring_die(u, "io_uring_submit", r);
		if (!wait || atomic_load(&u->dead))
			return false;
		pc__unlock(&u->sq_lock);
		pc__io_sleep_us(URING_BACKOFF_US);
		pc__lock(&u->sq_lock);
	}
	return !atomic_load(&u->dead);
}

/* Submitted from end_io, in the completion thread: queue, never wait. */
static int uring_submit_self(struct pc_io_uring *u, struct pc_io_req **reqs,
			     unsigned n)
{
	unsigned need;

	if (atomic_load(&u->dead)) {	/* the sync way, here */
		for (unsigned i = 0; i < n; i++)
			pc__io_do(reqs[i]);
		return 0;
	}
	pc__lock(&u->lock);
	u->inflight += n;
	need = u->inflight;
	for (unsigned i = 0; i < n; i++)
		live_add_locked(u, reqs[i]);
	pc__unlock(&u->lock);
	if (need > u->cap_pending) {
		unsigned cap = pc_max(need, 2 * u->cap_pending);
		uint64_t *p = realloc(u->pending, cap * sizeof(*p));

		if (!p) {
			for (unsigned i = 0; i < n; i++)
				reqs[i]->res = -ENOMEM;
			pc__uring_end(u, reqs, n);
			return 0;
		}
		u->pending = p;
		u->cap_pending = cap;
	}
	for (unsigned i = 0; i < n; i++)
		pc__uring_push(u, token(reqs[i], TAG_XFER));
	return 0;
}

static int uring_submit_ring(struct pc_io_uring *u, struct pc_io_req **reqs,
			     unsigned n);

/*
 * Requests marked now are done first, here (pc__io_do): their submitter
 * would only sleep until the completion thread woke it - two context
 * switches, and on a busy machine two waits for a CPU - and they do not
 * queue on the device behind the readahead submitted with them.  The
 * others go on the ring after, in their order.
 */
static int uring_submit(struct pc_io *io, struct pc_io_req **reqs, unsigned n)
{
	struct pc_io_uring *u = to_uring(io);
	struct pc_io_req *ring[64];

	/* The ring's writes take no RWF_ flags (a request that got none is
	 * told so: rwf 0, its submitter drops the kernel's copy itself). */
	if (pc__uring_self == u) {
		for (unsigned j = 0; j < n; j++)
			reqs[j]->res = 0, reqs[j]->rwf = 0;
		return uring_submit_self(u, reqs, n);
	}
	for (unsigned i = 0; i < n; i += 64) {
		unsigned k = pc_min(n - i, 64u), nr = 0;

		for (unsigned j = i; j < i + k; j++)
			if (!reqs[j]->now) {
				reqs[j]->rwf = 0;
				ring[nr++] = reqs[j];
			}
		for (unsigned j = i; j < i + k; j++)
			if (reqs[j]->now)
				pc__io_do(reqs[j]);	/* may free it */
		if (nr)
			uring_submit_ring(u, ring, nr);
	}
	return 0;
}

static int uring_submit_ring(struct pc_io_uring *u, struct pc_io_req **reqs,
			     unsigned n)
{
	unsigned i = 0;

	/* Before any request is published (see the lock comment on top). */
	for (unsigned j = 0; j < n; j++)
		reqs[j]->res = 0;

	while (i < n) {
		unsigned k, j;

		pc__lock(&u->lock);
		while (u->inflight >= u->limit && !atomic_load(&u->dead)) {
			u->space_waiters++;
			pc__cond_wait(&u->space, &u->lock);
			u->space_waiters--;
		}
		if (atomic_load(&u->dead)) {
			pc__unlock(&u->lock);
			break;
		}
		k = pc_min(n - i, u->limit - u->inflight);
		u->inflight += k;
		for (j = i; j < i + k; j++)
			live_add_locked(u, reqs[j]);
		pc__unlock(&u->lock);

		pc__lock(&u->sq_lock);
		for (j = i; j < i + k; j++) {
			struct io_uring_sqe *sqe;

			while (!(sqe = io_uring_get_sqe(&u->ring)) &&
			       pc__uring_kick_locked(u, true))
				;
			if (!sqe)
				break;	/* the ring is lost */
			pc__uring_prep(sqe, token(reqs[j], TAG_XFER));
			tsan_release(reqs[j]);
		}
		pc__uring_kick_locked(u, true);
		pc__unlock(&u->sq_lock);
		/* Never in the ring: here, the sync way (prepared ones: drain). */
		for (unsigned m = j; m < i + k; m++) {
			struct pc_io_req *req = reqs[m];
			ssize_t r = pc__io_transfer(req, pc__io_req_bytes(req));

			if (r > 0 && req->dontneed) {
				int e = pc__io_dontneed(req, (size_t)r);

				r = e ? e : r;
			}
			req->res = r;
			pc__uring_end(u, &req, 1);
		}
		i += k;
	}
	for (; i < n; i++)	/* the ring was lost before: the sync way */
		pc__io_do(reqs[i]);
	return 0;
}

static void uring_free(struct pc_io_uring *u)
{
	pthread_cond_destroy(&u->idle);
	pthread_cond_destroy(&u->space);
	pc__lock_destroy(&u->sq_lock);
	pc__lock_destroy(&u->lock);
	free(u->pending);
	free(u);
}

static int uring_create(struct pc_io **out, unsigned depth)
{
	struct pc_io_uring *u;
	struct io_uring_probe *probe;
	sigset_t all, old;
	int err;

	if (depth == 0)
		depth = URING_DEFAULT_DEPTH;
	depth = pc_min(depth, URING_MAX_DEPTH);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->ops = &pc__io_uring_ops;
	pc__lock_init(&u->lock, NULL, PC_RANK_IO, -1);
	pc__lock_init(&u->sq_lock, NULL, PC_RANK_IO_SQ, -1);
	pthread_cond_init(&u->space, NULL);
	pthread_cond_init(&u->idle, NULL);

	err = io_uring_queue_init(depth, &u->ring, 0);
	if (err < 0) {
		uring_free(u);
		return err;	/* -ENOSYS, -EPERM: the caller falls back */
	}
	/* The ring fd out of the program's way (fd.c); liburing enters and
	 * closes it by these two fields only. */
	u->ring.ring_fd = u->ring.enter_ring_fd = pc__fd_high(u->ring.ring_fd);
	u->limit = u->ring.cq.ring_entries;
	u->ext_arg = (u->ring.features & IORING_FEAT_EXT_ARG) != 0;
	probe = io_uring_get_probe_ring(&u->ring);
	u->async_drop = probe &&
		io_uring_opcode_supported(probe, IORING_OP_SYNC_FILE_RANGE) &&
		io_uring_opcode_supported(probe, IORING_OP_FADVISE);
	if (probe)
		io_uring_free_probe(probe);
	u->cap_pending = u->limit;
	u->pending = malloc(u->cap_pending * sizeof(*u->pending));
	if (!u->pending) {
		err = -ENOMEM;
		goto fail;
	}

	/* The thread takes no signal: they are the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&u->thread, NULL, pc__uring_completer, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	*out = (struct pc_io *)(void *)u;
	return 0;
fail:
	io_uring_queue_exit(&u->ring);
	uring_free(u);
	return err;
}

static void uring_destroy(struct pc_io *io)
{
	struct pc_io_uring *u = to_uring(io);
	struct io_uring_sqe *sqe = NULL;

	PC_ASSERT(pc__uring_self != u);	/* not from end_io */
	pc__lock(&u->lock);
	while (u->inflight)
		pc__cond_wait(&u->idle, &u->lock);
	pc__unlock(&u->lock);

	/* Nothing in flight, nothing pending: the NOP's CQE comes last. */
	pc__lock(&u->sq_lock);
	while (!atomic_load(&u->dead) && !(sqe = io_uring_get_sqe(&u->ring)))
		pc__uring_kick_locked(u, true);
	if (sqe) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, URING_STOP);
		pc__uring_kick_locked(u, true);
	}
	pc__unlock(&u->sq_lock);
	if (atomic_load(&u->dead) && !u->ext_arg) {
		/*
		 * Lost on a kernel without timed waits (before 5.11): the
		 * thread may sleep in the kernel for ever on the ring.  It and
		 * the ring are left as they are rather than freed under it.
		 */
		pthread_detach(u->thread);
		return;
	}
	pthread_join(u->thread, NULL);	/* lost: it ended by itself */
	if (atomic_load(&u->dead))	/* its number may be another file's */
		u->ring.ring_fd = u->ring.enter_ring_fd = -1;
	io_uring_queue_exit(&u->ring);
	uring_free(u);
}

const struct pc_io_ops pc__io_uring_ops = {
	.name = "uring",
	.create = uring_create,
	.destroy = uring_destroy,
	.submit = uring_submit,
	.lost = uring_lost,
};
