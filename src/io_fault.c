/*
 * io_fault.c - the fault-injecting backend (for tests): rules in front of
 * the sync backend.
 *
 *   submit ─► for each request, in order:
 *             first live rule that matches?  (op, fd, offset overlap)
 *               no  ─► sync backend (done, end_io, before submit returns)
 *               yes ─► count down, hits++ ─► sleep delay_us (no lock held)
 *                      ─► gate: wait until *gate (the test releases it)
 *                      error 0   ─► sync backend (only slowed down)
 *                      short_io  ─► do the first half of the bytes, rounded
 *                                   down to 4 KiB, then end_io(-error)
 *                      otherwise ─► end_io(-error), nothing done
 *
 * A rule matches a request when its op is the request's or -1, its fd is
 * the request's or -1, the request's bytes [off, off + len) overlap
 * [off_lo, off_hi) (off_hi 0: no upper bound), and its count is not used
 * up (-1: forever; decremented when applied; inert at 0).
 * pc__io_fault_hits counts the requests a rule applied to since the last
 * pc__io_fault_clear, which also removes every rule; pc__io_fault_now the
 * requests marked now (the submitter's own, pc_io_req.now) and their
 * pages, whatever the rules.
 *
 * Locking: f->lock guards the rules and the hit count; it is held only to
 * pick a rule, never across the delay, the transfer or end_io, so a
 * delayed request (a "slow device") holds up its own submitter only.
 * The three pc__io_fault_* calls do nothing (add: -EINVAL) on an io that is
 * not a fault one.
 */
#include <pthread.h>
#include <stdlib.h>

#include "io.h"
#include "lock.h"

struct pc_io_faulty {
	const struct pc_io_ops *ops;	/* &pc__io_fault_ops; read-only */
	struct pc_io *inner;		/* the sync backend; read-only */

	struct pc_lock lock;
	struct pc_io_fault *rules;	/* lock; [nr_rules], in match order */
	unsigned nr_rules, cap_rules;	/* lock */
	uint64_t hits;			/* lock */
	uint64_t now_reqs, now_pages;	/* lock: requests marked now */
};

static struct pc_io_faulty *to_faulty(struct pc_io *io)
{
	if (!io || *(const struct pc_io_ops **)(void *)io != &pc__io_fault_ops)
		return NULL;
	return (struct pc_io_faulty *)(void *)io;
}

static int fault_create(struct pc_io **out, unsigned depth)
{
	struct pc_io_faulty *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	err = pc__io_sync_ops.create(&f->inner, depth);
	if (err) {
		free(f);
		return err;
	}
	pc__lock_init(&f->lock, NULL, PC_RANK_IO_FAULT, -1);
	f->ops = &pc__io_fault_ops;
	*out = (struct pc_io *)(void *)f;
	return 0;
}

static void fault_destroy(struct pc_io *io)
{
	struct pc_io_faulty *f = to_faulty(io);

	/* Like the sync backend, nothing is in flight once submit returns. */
	pc__io_sync_ops.destroy(f->inner);
	pc__lock_destroy(&f->lock);
	free(f->rules);
	free(f);
}

static bool rule_matches(const struct pc_io_fault *r,
			 const struct pc_io_req *req, size_t len)
{
	off_t end = req->off + (off_t)pc_max(len, (size_t)1);

	return r->count != 0 &&
	       (r->op == -1 || r->op == req->op) &&
	       (r->fd == -1 || r->fd == req->fd) &&
	       (r->off_hi == 0 || req->off < r->off_hi) && end > r->off_lo;
}

/* The rule that applies to @req, copied to @out, counted down; or false. */
static bool fault_pick(struct pc_io_faulty *f, const struct pc_io_req *req,
		       size_t len, struct pc_io_fault *out)
{
	bool hit = false;

	pc__lock(&f->lock);
	if (req->now) {
		f->now_reqs++;
		f->now_pages += (len + 4095) / 4096;
	}
	for (unsigned i = 0; i < f->nr_rules; i++) {
		struct pc_io_fault *r = &f->rules[i];

		if (!rule_matches(r, req, len))
			continue;
		if (r->count > 0)
			r->count--;
		f->hits++;
		*out = *r;
		hit = true;
		break;
	}
	pc__unlock(&f->lock);
	return hit;
}

static int fault_submit(struct pc_io *io, struct pc_io_req **reqs, unsigned n)
{
	struct pc_io_faulty *f = to_faulty(io);

	PC_ASSERT(f);
	for (unsigned i = 0; i < n; i++) {
		struct pc_io_req *req = reqs[i];
		size_t len = pc__io_req_bytes(req);
		struct pc_io_fault rule;

		if (!fault_pick(f, req, len, &rule)) {
			pc__io_sync_ops.submit(f->inner, &req, 1);
			continue;
		}
		if (rule.delay_us)
			pc__io_sleep_us(rule.delay_us);
		while (rule.gate && !atomic_load(rule.gate))
			pc__io_sleep_us(100);
		if (rule.error == 0) {
			pc__io_sync_ops.submit(f->inner, &req, 1);
			continue;
		}
		if (rule.short_io) {
			size_t half = (len / 2) & ~(size_t)4095;

			if (half)
				(void)pc__io_transfer(req, half);
		}
		req->res = -rule.error;
		req->end_io(req);
	}
	return 0;
}

int pc__io_fault_add(struct pc_io *io, const struct pc_io_fault *rule)
{
	struct pc_io_faulty *f = to_faulty(io);
	int err = 0;

	if (!f || !rule || rule->op < -1 || rule->op > PC_IO_WRITE ||
	    rule->fd < -1 || rule->error < 0 || rule->count < -1 ||
	    rule->off_lo < 0 || rule->off_hi < 0)
		return -EINVAL;
	pc__lock(&f->lock);
	if (f->nr_rules == f->cap_rules) {
		unsigned cap = f->cap_rules ? 2 * f->cap_rules : 8;
		struct pc_io_fault *r = realloc(f->rules, cap * sizeof(*r));

		if (r) {
			f->rules = r;
			f->cap_rules = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err)
		f->rules[f->nr_rules++] = *rule;
	pc__unlock(&f->lock);
	return err;
}

void pc__io_fault_clear(struct pc_io *io)
{
	struct pc_io_faulty *f = to_faulty(io);

	if (!f)
		return;
	pc__lock(&f->lock);
	f->nr_rules = 0;
	f->hits = 0;
	f->now_reqs = f->now_pages = 0;
	pc__unlock(&f->lock);
}

uint64_t pc__io_fault_now(struct pc_io *io, uint64_t *pages)
{
	struct pc_io_faulty *f = to_faulty(io);
	uint64_t n;

	if (pages)
		*pages = 0;
	if (!f)
		return 0;
	pc__lock(&f->lock);
	n = f->now_reqs;
	if (pages)
		*pages = f->now_pages;
	pc__unlock(&f->lock);
	return n;
}

uint64_t pc__io_fault_hits(struct pc_io *io)
{
	struct pc_io_faulty *f = to_faulty(io);
	uint64_t hits;

	if (!f)
		return 0;
	pc__lock(&f->lock);
	hits = f->hits;
	pc__unlock(&f->lock);
	return hits;
}

const struct pc_io_ops pc__io_fault_ops = {
	.name = "fault",
	.create = fault_create,
	.destroy = fault_destroy,
	.submit = fault_submit,
};
