/*
 * io_uring_cq.c - the io_uring backend's completion thread: the CQ side of
 * the ring (io_uring.c has the picture, the tokens, the slots and the
 * locks).  One thread per ring waits for CQEs (with a timeout where the
 * kernel takes one, so it notices a lost ring) and handles them a batch
 * at a time (uring_reap):
 *
 *   a transfer cut short     the rest goes again from where it stopped
 *                            (TAG_CONT: a copy of the iovecs, advanced);
 *   EAGAIN, EINTR            the same SQE again;
 *   a transfer with          its range synced (writes) then dropped from
 *   dontneed                 the kernel's cache, SYNC then DROP SQEs (or
 *                            pc__io_dontneed here, before 5.6);
 *   done                     the request ends: off @live, end_io with no
 *                            lock held, its slot given back.
 *
 * What a batch asked for next goes on pending[] and is submitted after
 * the batch (uring_flush), under sq_lock; what the kernel refuses stays
 * there for the next round.  Requests submitted from end_io land there
 * too (io_uring.c, uring_submit_self).
 *
 * The ring lost (io_uring.c, Errors): the thread drains (uring_drain):
 * the SQEs the kernel never took and pending[] are done here the sync
 * backend's way (uring_step_sync); the requests the kernel holds end as
 * their CQEs come; those still held after DRAIN_NS fail with -EIO.  Then
 * the thread ends.
 *
 * Locks: u->lock for the slots and @live (never across end_io), sq_lock
 * to submit pending[] and to take back the SQ in a drain; pending[] and
 * the CQ are this thread's alone.
 */
#include <stdlib.h>
#include <string.h>

#include "uring.h"

#define URING_WAIT_S 1		/* the completion thread looks at @dead */
#define DRAIN_NS (2000ull * 1000 * 1000)	/* ring lost: for the kernel's */

_Thread_local struct pc_io_uring *pc__uring_self;

/* Completion thread: submit pending[]; whatever the kernel refuses stays. */
static bool uring_flush(struct pc_io_uring *u)
{
	unsigned i = 0;
	bool all;

	pc__lock(&u->sq_lock);
	while (i < u->nr_pending) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

		if (!sqe) {
			if (!pc__uring_kick_locked(u, false))
				break;
			continue;
		}
		pc__uring_prep(sqe, u->pending[i]);
		tsan_release(token_ptr(u->pending[i++]));
	}
	all = pc__uring_kick_locked(u, false);
	pc__unlock(&u->sq_lock);
	u->nr_pending -= i;
	memmove(u->pending, u->pending + i, u->nr_pending * sizeof(uint64_t));
	return all && u->nr_pending == 0;
}

void pc__uring_push(struct pc_io_uring *u, uint64_t t)
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
		pc__uring_push(u, token(req, req->op == PC_IO_WRITE ? TAG_SYNC
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
		pc__uring_push(u, cont ? token(cont, TAG_CONT)
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
		pc__uring_push(u, token(cont, TAG_CONT));
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
			pc__uring_push(u, t);
			return false;
		}
		res = pc__io_sync_range_err(res);
		if (res < 0) {
			req->res = res;
			return true;
		}
		pc__uring_push(u, token(req, TAG_DROP));
		return false;
	default:	/* TAG_DROP: advice, its result does not matter */
		if (res == -EAGAIN || res == -EINTR) {
			pc__uring_push(u, t);
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

/* End @n requests that held slots: off @live, end_io, slots back. */
void pc__uring_end(struct pc_io_uring *u, struct pc_io_req **reqs,
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
		pc__uring_end(u, done, n);
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
	pc__uring_end(u, ended, nended);
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
			pc__uring_push(u, sqe->user_data);
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
		pc__uring_end(u, &req, 1);
	}
}

void *pc__uring_completer(void *arg)
{
	struct pc_io_uring *u = arg;
	bool stop = false, stuck = false;

	pc__uring_self = u;
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
			pc__uring_die(u, "io_uring_wait_cqe", r);
			continue;
		}
		uring_reap(u, &stop);
	}
	return NULL;
}
