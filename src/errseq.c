/*
 * errseq.c - a mapping's writeback errors, reported once to each open
 * file (as the kernel's lib/errseq.c).
 *
 *   m->wb_err (32 bits, atomic):  counter (bits 31-13) | SEEN (bit 12)
 *                                 | the latest error's errno (bits 11-0)
 *
 * pc__errseq_set (a failed write, writeback.c; a failed fsync(2)) records
 * the errno, and bumps the counter if the previous error was seen, so a
 * new error differs from every value a cursor holds.  Each open file
 * samples it at open (f->err_cursor: an error no one has seen yet is
 * reported to new openers too) and reports each new error once, at fsync
 * or close, whoever else saw it: pc__errseq_check_advance marks the value
 * SEEN and moves the cursor to it by compare-and-swap, so of concurrent
 * fsyncs of one open file exactly one reports it.
 *
 * No lock: every word is changed by compare-and-swap only.
 */
#include "internal.h"
#include "dirty.h"

#define ERRSEQ_MAX_ERRNO 4095u
#define ERRSEQ_SEEN (1u << 12)
#define ERRSEQ_CTR_INC (1u << 13)

void pc__errseq_set(struct pc_mapping *m, int err)
{
	uint32_t old = atomic_load(&m->wb_err), new;

	if (err >= 0 || (unsigned)-err > ERRSEQ_MAX_ERRNO)
		err = -EIO;
	do {
		new = (old & ~(ERRSEQ_MAX_ERRNO | ERRSEQ_SEEN)) | (uint32_t)-err;
		if (old & ERRSEQ_SEEN)
			new += ERRSEQ_CTR_INC;
		if (new == old)
			return;
	} while (!atomic_compare_exchange_weak(&m->wb_err, &old, new));
}

uint32_t pc__errseq_sample(struct pc_mapping *m)
{
	uint32_t old = atomic_load(&m->wb_err);

	/* An error no one has seen yet is reported to new openers too. */
	return (old & ERRSEQ_SEEN) ? old : 0;
}

/*
 * Report the error @cursor has not seen, once: the cursor moves by
 * compare-and-swap, so of callers racing on one open file (fsyncs, a
 * close, O_SYNC writes) exactly one advances it past an error and returns
 * it; the others find it seen (the kernel holds f_lock for this).
 */
int pc__errseq_check_advance(struct pc_mapping *m, _Atomic uint32_t *cursor)
{
	uint32_t cur = atomic_load(cursor);

	for (;;) {
		uint32_t old = atomic_load(&m->wb_err), new;

		if (old == cur)
			return 0;
		new = old | ERRSEQ_SEEN;
		if (new != old)	/* lost to a new error or another SEEN: fine */
			atomic_compare_exchange_strong(&m->wb_err, &old, new);
		if (atomic_compare_exchange_strong(cursor, &cur, new))
			return new & ERRSEQ_MAX_ERRNO ? -(int)(new & ERRSEQ_MAX_ERRNO)
						      : 0;
		/* Another caller moved it (cur reloaded): it reported that. */
	}
}
