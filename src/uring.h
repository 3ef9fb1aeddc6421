/*
 * uring.h - the io_uring backend's ring, shared by its submission side
 * (io_uring.c: the ring's setup and teardown, submitters) and its
 * completion thread (io_uring_cq.c).  io_uring.c's top comment has the
 * picture, the tokens and the locks; nothing else includes this.
 */
#ifndef PC_URING_H
#define PC_URING_H

#include <limits.h>
#include <liburing.h>
#include <pthread.h>

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

#define URING_BATCH 64		/* CQEs reaped at a time */
#define URING_BACKOFF_US 50	/* the kernel refused a submit for now */

enum { TAG_XFER, TAG_CONT, TAG_SYNC, TAG_DROP, TAG_MASK = 3 };

extern const char pc__uring_stop;	/* its address: the stop NOP's user_data */
#define URING_STOP ((uint64_t)(uintptr_t)&pc__uring_stop)

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

/* The ring whose completion thread this is, if any (io_uring_cq.c). */
extern _Thread_local struct pc_io_uring *pc__uring_self;

static inline uint64_t token(const void *p, unsigned tag)
{
	PC_ASSERT(((uintptr_t)p & TAG_MASK) == 0);
	return (uint64_t)(uintptr_t)p | tag;
}

static inline void *token_ptr(uint64_t t)
{
	return (void *)(uintptr_t)(t & ~(uint64_t)TAG_MASK);
}

/* A length for the 32-bit fields of SYNC/DROP: 0 means "to end of file". */
static inline unsigned len32(ssize_t len)
{
	return (size_t)len > UINT_MAX ? 0 : (unsigned)len;
}

/* io_uring.c */
/* The ring failed: said once, and everything goes the sync way (Errors). */
void pc__uring_die(struct pc_io_uring *u, const char *what, int err);
void pc__uring_prep(struct io_uring_sqe *sqe, uint64_t t);
/* Every prepared SQE to the kernel; @wait: back off while it refuses. */
bool pc__uring_kick_locked(struct pc_io_uring *u, bool wait);

/* io_uring_cq.c */
void pc__uring_push(struct pc_io_uring *u, uint64_t t);	/* on pending[] */
/* End @n requests that held slots: off @live, end_io, slots back. */
void pc__uring_end(struct pc_io_uring *u, struct pc_io_req **reqs,
		   unsigned n);
void *pc__uring_completer(void *arg);	/* the completion thread */

#endif /* PC_URING_H */
