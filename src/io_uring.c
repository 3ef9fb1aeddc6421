/*
 * io_uring.c - the io_uring backend: one ring per pc_io, one completion
 * thread per ring.
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
 * and &uring_stop, the NOP that destroy sends last to stop the thread.
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
 * (uring_die, said once on stderr; uring_lost says it after):
 *   - new requests are done the sync backend's way, in the submitter;
 *   - the completion thread (it waits with a timeout where the kernel
 *     takes one, IORING_FEAT_EXT_ARG, so it notices) drains: the requests
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
#include <liburing.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "lock.h"

/*
 * ThreadSanitizer cannot see the kernel order "SQE submitted, then its CQE
 * reaped": in TSan builds each request is released after it is prepared
 * and acquired before its completion is handled.
 */
#if defined(PC_TSAN) || defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
static inline void tsan_release(void *p) { __tsan_release(p); }
static inline void tsan_acquire(void *p) { __tsan_acquire(p); }
#else
static inline void tsan_release(void *p) { (void)p; }
static inline void tsan_acquire(void *p) { (void)p; }
#endif

#define URING_DEFAULT_DEPTH 256
#define URING_MAX_DEPTH 4096
#define URING_BATCH 64		/* CQEs reaped at a time */
#define URING_BACKOFF_US 50	/* the kernel refused a submit for now */
#define URING_WAIT_S 1		/* the completion thread looks at @dead */
#define DRAIN_NS (2000ull * 1000 * 1000)	/* ring lost: for the kernel's */
#define URING_SYNC_RANGE_FLAGS (SYNC_FILE_RANGE_WAIT_BEFORE | \
				SYNC_FILE_RANGE_WRITE | \
				SYNC_FILE_RANGE_WAIT_AFTER)

enum { TAG_XFER, TAG_CONT, TAG_SYNC, TAG_DROP, TAG_MASK = 3 };

static const char uring_stop;	/* its address: the stop NOP's user_data */
#define URING_STOP ((uint64_t)(uintptr_t)&uring_stop)

struct uring_cont {
	struct pc_io_req *req;
	size_t total;			/* bytes of the whole request */
	int iovcnt;			/* of iov[], the part not done yet */
	struct iovec iov[];		/* room for req->iovcnt */
};

struct pc_io_uring {
	const struct pc_io_ops *ops;	/* &pc__io_uring_ops; read-only */
	unsigned limit;			/* slots: the CQ size; read-only */
	bool async_drop;		/* SYNC/DROP as SQEs; read-only */
	pthread_t thread;		/* the completion thread */

	bool ext_arg;			/* timed waits without an SQE; r-o */
	_Atomic bool dead;		/* the ring failed: see Errors */

	struct pc_lock lock;
	unsigned inflight;		/* lock: slots taken */
	struct pc_io_req *live;		/* lock: the requests holding them */
	unsigned space_waiters;		/* lock: submitters waiting for one */
	pthread_cond_t space;		/* a slot was given back */
	pthread_cond_t idle;		/* inflight reached 0 */

	struct pc_lock sq_lock;
	struct io_uring ring;		/* sq_lock: SQ; completion thread: CQ */

	/* The completion thread's own. */
	uint64_t *pending;		/* tokens to submit */
	unsigned nr_pending, cap_pending;	/* cap >= inflight */
};

/* The ring whose completion thread this is, if any. */
static _Thread_local struct pc_io_uring *uring_self;

static struct pc_io_uring *to_uring(struct pc_io *io)
{
	PC_ASSERT(*(const struct pc_io_ops **)(void *)io == &pc__io_uring_ops);
	return (struct pc_io_uring *)(void *)io;
}

/* The ring failed: said once, and everything goes the sync way (Errors). */
static void uring_die(struct pc_io_uring *u, const char *what, int err)
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

/* @req is about to end: off the list; lock held. */
static void live_del_locked(struct pc_io_uring *u, struct pc_io_req *req)
{
	PC_ASSERT_HELD(&u->lock);
	if (req->live_prev)
		req->live_prev->live_next = req->live_next;
	else
		u->live = req->live_next;
	if (req->live_next)
		req->live_next->live_prev = req->live_prev;
}

static uint64_t token(const void *p, unsigned tag)
{
	PC_ASSERT(((uintptr_t)p & TAG_MASK) == 0);
	return (uint64_t)(uintptr_t)p | tag;
}

static void *token_ptr(uint64_t t)
{
	return (void *)(uintptr_t)(t & ~(uint64_t)TAG_MASK);
}

/* A length for the 32-bit fields of SYNC/DROP: 0 means "to end of file". */
static unsigned len32(ssize_t len)
{
	return (size_t)len > UINT_MAX ? 0 : (unsigned)len;
}

static void uring_prep(struct io_uring_sqe *sqe, uint64_t t)
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
static bool uring_kick_locked(struct pc_io_uring *u, bool wait)
{
	PC_ASSERT_HELD(&u->sq_lock);
	while (io_uring_sq_ready(&u->ring) > 0 && !atomic_load(&u->dead)) {
		int r = io_uring_submit(&u->ring);

		if (r > 0 || r == -EINTR)
			continue;
		if (r != 0 && r != -EBUSY && r != -EAGAIN && r != -ENOMEM)
			uring_die(u, "io_uring_submit", r);
		if (!wait || atomic_load(&u->dead))
			return false;
		pc__unlock(&u->sq_lock);
		pc__io_sleep_us(URING_BACKOFF_US);
		pc__lock(&u->sq_lock);
	}
	return !atomic_load(&u->dead);
}

/* Completion thread: submit pending[]; whatever the kernel refuses stays. */
static bool uring_flush(struct pc_io_uring *u)
{
	unsigned i = 0;
	bool all;

	pc__lock(&u->sq_lock);
	while (i < u->nr_pending) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

		if (!sqe) {
			if (!uring_kick_locked(u, false))
				break;
			continue;
		}
		uring_prep(sqe, u->pending[i]);
		tsan_release(token_ptr(u->pending[i++]));
	}
	all = uring_kick_locked(u, false);
	pc__unlock(&u->sq_lock);
	u->nr_pending -= i;
	memmove(u->pending, u->pending + i, u->nr_pending * sizeof(uint64_t));
	return all && u->nr_pending == 0;
}

static void uring_push(struct pc_io_uring *u, uint64_t t)
{
	PC_ASSERT(u->nr_pending < u->cap_pending);
	u->pending[u->nr_pending++] = t;
}

/* Completion thread: the transfer is over; dontneed, then it ends. */
static bool uring_transferred(struct pc_io_uring *u, struct pc_io_req *req)
{
	int err;

	if (!req->dontneed || req->res <= 0)
		return true;
	if (u->async_drop) {
		uring_push(u, token(req, req->op == PC_IO_WRITE ? TAG_SYNC
							       : TAG_DROP));
		return false;
	}
	err = pc__io_dontneed(req, (size_t)req->res);
	if (err)
		req->res = err;
	return true;
}

/* Completion thread: the transfer SQE of @req (in @cont, if any) ended. */
static bool uring_xfer_done(struct pc_io_uring *u, struct pc_io_req *req,
			    struct uring_cont *cont, int res)
{
	size_t done = (size_t)req->res;
	size_t total = cont ? cont->total : pc__io_req_bytes(req);

	if (res == -EAGAIN || res == -EINTR) {
		uring_push(u, cont ? token(cont, TAG_CONT)
				   : token(req, TAG_XFER));
		return false;
	}
	if (res > 0 && done + (size_t)res < total) {
		req->res += res;
		if (!cont) {
			cont = malloc(sizeof(*cont) + (size_t)req->iovcnt *
						       sizeof(cont->iov[0]));
			if (!cont) {
				req->res = -ENOMEM;
				return true;
			}
			cont->req = req;
			cont->total = total;
		}
		cont->iovcnt = pc__io_iov_slice(cont->iov, req->iovcnt,
						req->iov, req->iovcnt,
						(size_t)req->res, SIZE_MAX);
		uring_push(u, token(cont, TAG_CONT));
		return false;
	}
	free(cont);
	if (res > 0)
		req->res += res;	/* all of it */
	else if (res == 0 && req->op == PC_IO_WRITE && done < total)
		req->res = -EIO;	/* a write that makes no progress */
	else if (res < 0 && !pc__io_eof_einval(req, done, res))
		req->res = res;
	/* else: end of file, req->res is what the read got */
	return uring_transferred(u, req);
}

/* Completion thread: one CQE.  Returns whether its request ended. */
static bool uring_complete(struct pc_io_uring *u, struct pc_io_req *req,
			   uint64_t t, int res)
{
	switch (t & TAG_MASK) {
	case TAG_XFER:
		return uring_xfer_done(u, req, NULL, res);
	case TAG_CONT:
		return uring_xfer_done(u, req, token_ptr(t), res);
	case TAG_SYNC:
		if (res == -EAGAIN || res == -EINTR) {
			uring_push(u, t);
			return false;
		}
		res = pc__io_sync_range_err(res);
		if (res < 0) {
			req->res = res;
			return true;
		}
		uring_push(u, token(req, TAG_DROP));
		return false;
	default:	/* TAG_DROP: advice, its result does not matter */
		if (res == -EAGAIN || res == -EINTR) {
			uring_push(u, t);
			return false;
		}
		return true;
	}
}

static void uring_end_slots(struct pc_io_uring *u, unsigned n)
{
	pc__lock(&u->lock);
	u->inflight -= n;
	if (u->space_waiters)
		pthread_cond_broadcast(&u->space);
	if (u->inflight == 0)
		pthread_cond_broadcast(&u->idle);
	pc__unlock(&u->lock);
}

/* End @n requests that held slots: off @live, end_io, slots back. */
static void uring_end(struct pc_io_uring *u, struct pc_io_req **reqs,
		      unsigned n)
{
	if (!n)
		return;
	pc__lock(&u->lock);
	for (unsigned i = 0; i < n; i++)
		live_del_locked(u, reqs[i]);
	pc__unlock(&u->lock);
	for (unsigned i = 0; i < n; i++)
		reqs[i]->end_io(reqs[i]);	/* reqs[i] may be gone after */
	uring_end_slots(u, n);
}

/*
 * The ring is lost: the step @t of its request, done here the sync
 * backend's way, to the request's end.  Returns the request.
 */
static struct pc_io_req *uring_step_sync(uint64_t t)
{
	struct pc_io_req *req = token_ptr(t);
	struct uring_cont *cont = NULL;
	ssize_t r;

	tsan_acquire(req);
	switch (t & TAG_MASK) {
	case TAG_CONT:	/* the rest of the transfer, from where it is */
		cont = token_ptr(t);
		req = cont->req;
		__attribute__((fallthrough));
	case TAG_XFER: {
		struct pc_io_req rest = *req;

		if (cont) {
			rest.iov = cont->iov;
			rest.iovcnt = cont->iovcnt;
			rest.off = req->off + req->res;
		} else {
			req->res = 0;
		}
		r = pc__io_transfer(&rest, pc__io_req_bytes(&rest));
		free(cont);
		req->res = r < 0 ? r : req->res + r;
		if (req->res > 0 && req->dontneed &&
		    (r = pc__io_dontneed(req, (size_t)req->res)))
			req->res = r;
		break;
	}
	case TAG_SYNC:	/* the transfer is done: sync, drop */
		if ((r = pc__io_dontneed(req, (size_t)req->res)))
			req->res = r;
		break;
	default:	/* TAG_DROP */
		(void)posix_fadvise(req->fd, req->off, (off_t)len32(req->res),
				    POSIX_FADV_DONTNEED);
		break;
	}
	return req;
}

/* Completion thread, ring lost: pending[]'s steps done here. */
static void uring_pending_sync(struct pc_io_uring *u)
{
	while (u->nr_pending) {
		struct pc_io_req *done[URING_BATCH];
		unsigned n = 0;

		while (u->nr_pending && n < URING_BATCH)
			done[n++] = uring_step_sync(u->pending[--u->nr_pending]);
		uring_end(u, done, n);
	}
}

/*
 * Completion thread: handle the CQEs there are (up to a batch): the ones
 * ended go through uring_end.  Sets *stop at the stop NOP's.  Returns how
 * many CQEs it took.
 */
static unsigned uring_reap(struct pc_io_uring *u, bool *stop)
{
	struct { uint64_t t; int res; } batch[URING_BATCH];
	struct pc_io_req *ended[URING_BATCH];
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, nended = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		batch[n].t = io_uring_cqe_get_data64(cqe);
		batch[n].res = cqe->res;
		if (++n == URING_BATCH)
			break;
	}
	io_uring_cq_advance(&u->ring, n);

	/* Acquire what submitters published before the kernel did. */
	pc__lock(&u->lock);
	pc__unlock(&u->lock);

	for (unsigned i = 0; i < n; i++) {
		uint64_t t = batch[i].t;
		struct pc_io_req *req;

		if (t == URING_STOP) {
			*stop = true;
			continue;
		}
		req = token_ptr(t);
		tsan_acquire(req);
		if ((t & TAG_MASK) == TAG_CONT)	/* before it is freed */
			req = ((struct uring_cont *)(void *)req)->req;
		if (uring_complete(u, req, t, batch[i].res))
			ended[nended++] = req;
	}
	uring_end(u, ended, nended);
	return n;
}

/*
 * Completion thread, the ring lost (Errors): what the kernel never took is
 * done here; what it holds ends with its CQE, or after DRAIN_NS with -EIO.
 */
static void uring_drain(struct pc_io_uring *u)
{
	uint64_t deadline = pc__now_ns() + DRAIN_NS;
	bool stop = false;

	/* SQEs past the kernel's head were never taken: ours again. */
	pc__lock(&u->sq_lock);
	for (unsigned h = io_uring_smp_load_acquire(u->ring.sq.khead);
	     h != u->ring.sq.sqe_tail; h++) {
		struct io_uring_sqe *sqe =
			&u->ring.sq.sqes[h & *u->ring.sq.kring_mask];

		if (sqe->user_data != URING_STOP)
			uring_push(u, sqe->user_data);
	}
	u->ring.sq.sqe_head = u->ring.sq.sqe_tail;
	pc__unlock(&u->sq_lock);
	uring_pending_sync(u);
	for (;;) {
		struct io_uring_cqe *cqe;
		bool empty;

		pc__lock(&u->lock);
		empty = u->live == NULL;
		pc__unlock(&u->lock);
		if (empty || pc__now_ns() >= deadline)
			break;
		if (io_uring_peek_cqe(&u->ring, &cqe) == 0)
			uring_reap(u, &stop);
		else
			pc__io_sleep_us(1000);
		uring_pending_sync(u);	/* continuations of those */
	}
	/* Still the kernel's: lost with the ring. */
	for (;;) {
		struct pc_io_req *req;

		pc__lock(&u->lock);
		req = u->live;
		pc__unlock(&u->lock);
		if (!req)
			break;
		req->res = -EIO;
		uring_end(u, &req, 1);
	}
}

static void *uring_completer(void *arg)
{
	struct pc_io_uring *u = arg;
	bool stop = false, stuck = false;

	uring_self = u;
	while (!stop) {
		struct __kernel_timespec ts = { .tv_sec = URING_WAIT_S };
		struct io_uring_cqe *cqe;
		int r;

		if (atomic_load(&u->dead)) {
			uring_drain(u);
			break;	/* nothing uses the ring any more */
		}
		if (u->nr_pending || stuck)
			stuck = !uring_flush(u);
		if (stuck && !atomic_load(&u->dead)) {
			/* the kernel wants CQEs reaped first */
			r = io_uring_peek_cqe(&u->ring, &cqe);
			if (r == -EAGAIN) {
				pc__io_sleep_us(URING_BACKOFF_US);
				continue;
			}
		} else if (u->ext_arg) {
			r = io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
		} else {
			r = io_uring_wait_cqe(&u->ring, &cqe);
		}
		if (r == -EINTR || r == -EAGAIN || r == -ETIME)
			continue;
		if (r < 0) {
			uring_die(u, "io_uring_wait_cqe", r);
			continue;
		}
		uring_reap(u, &stop);
	}
	return NULL;
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
			uring_end(u, reqs, n);
			return 0;
		}
		u->pending = p;
		u->cap_pending = cap;
	}
	for (unsigned i = 0; i < n; i++)
		uring_push(u, token(reqs[i], TAG_XFER));
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

	if (uring_self == u) {
		for (unsigned j = 0; j < n; j++)
			reqs[j]->res = 0;
		return uring_submit_self(u, reqs, n);
	}
	for (unsigned i = 0; i < n; i += 64) {
		unsigned k = pc_min(n - i, 64u), nr = 0;

		for (unsigned j = i; j < i + k; j++)
			if (!reqs[j]->now)
				ring[nr++] = reqs[j];
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
			       uring_kick_locked(u, true))
				;
			if (!sqe)
				break;	/* the ring is lost */
			uring_prep(sqe, token(reqs[j], TAG_XFER));
			tsan_release(reqs[j]);
		}
		uring_kick_locked(u, true);
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
			uring_end(u, &req, 1);
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
	err = -pthread_create(&u->thread, NULL, uring_completer, u);
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

	PC_ASSERT(uring_self != u);	/* not from end_io */
	pc__lock(&u->lock);
	while (u->inflight)
		pc__cond_wait(&u->idle, &u->lock);
	pc__unlock(&u->lock);

	/* Nothing in flight, nothing pending: the NOP's CQE comes last. */
	pc__lock(&u->sq_lock);
	while (!atomic_load(&u->dead) && !(sqe = io_uring_get_sqe(&u->ring)))
		uring_kick_locked(u, true);
	if (sqe) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, URING_STOP);
		uring_kick_locked(u, true);
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
