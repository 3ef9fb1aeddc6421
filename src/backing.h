/*
 * backing.h - the descriptors behind the mappings and the file's end on
 * the disk (backing.c), and the cache's coherence with the kernel on one
 * file (coherence.c).
 */
#ifndef PC_BACKING_H
#define PC_BACKING_H

#include "internal.h"

struct stat;

/* backing.c: the mappings' descriptors */
void pc__backing_init(struct pc_cache *c);	/* the budget, at create */
/* open(2), trying once more after pc__backing_release_all on EMFILE. */
int pc__open_retry(struct pc_cache *c, const char *path, int flags,
		   mode_t mode);
/*
 * A backing fd for the file of @fd (O_DIRECT if it can), read-write for
 * a @writable opener, read-only (*@rdonly) for another; fd or -errno.
 */
int pc__backing_open(struct pc_cache *c, int fd, bool writable, bool *direct,
		     bool *rdonly);
/*
 * @fd becomes @m's (mappings_lock held): if it has none, or if @fd is
 * read-write and @m's read-only (the upgrade); false: close yours.
 */
bool pc__backing_attach_locked(struct pc_mapping *m, int fd, bool rdonly);
/* Does an opener of @m with @writable need a backing fd made first? */
bool pc__backing_needs_locked(const struct pc_mapping *m, bool writable);
/*
 * The descriptor that writes @m's partial last block exactly: m->fd if it
 * is buffered, else m->tail_fd, opened at the first need.  @may_release:
 * no lock held, EMFILE may release descriptors.  fd or -errno.
 */
int pc__backing_tail_fd(struct pc_mapping *m, bool may_release);
/* A closed mapping was added: past the budget, the oldest let theirs go. */
void pc__backing_trim(struct pc_cache *c);
/* Every closed mapping lets its descriptors go (dirty ones written back). */
void pc__backing_release_all(struct pc_cache *c);
/* The closed clean mappings with a read-write descriptor let it go. */
void pc__backing_release_writers(struct pc_cache *c);
void pc__backing_close(struct pc_mapping *m);	/* teardown */
/* Does @st (a stat of some path or fd) name @m's file? */
bool pc__mapping_matches(const struct pc_mapping *m, const struct stat *st);
/*
 * Before a writeback pass's O_DIRECT writes of the pages tagged @tag in
 * [@start, @end] (at most @limit of them; 0: all): the file's end on the
 * disk moved out to cover them, so none of them extends the file.
 */
void pc__backing_extend(struct pc_mapping *m, uint64_t start, uint64_t end,
			int tag, uint64_t limit);
/* Tests: writeback's fallocate(2) fails as on a file system without it
 * (backing.c, pc__backing_extend).  Atomic: set by a test, read without
 * a lock. */
extern _Atomic bool pc__test_no_fallocate;

/* coherence.c: close-to-open coherence, hand-offs to the kernel */
/* m->seen from @st, or from the backing fd now; disk_size_lock held.
 * _init: a new mapping's, which no other thread sees yet (no lock). */
void pc__seen_init(struct pc_mapping *m, const struct stat *st);
void pc__seen_set_locked(struct pc_mapping *m, const struct stat *st);
void pc__seen_refresh_locked(struct pc_mapping *m);
void pc__seen_refresh(struct pc_mapping *m);	/* takes disk_size_lock */
/* Our last write in flight ended: m->seen to be refreshed at its next
 * need (pay), not now (coherence.c's top).  Both take disk_size_lock;
 * _locked: held. */
void pc__seen_owe(struct pc_mapping *m);
void pc__seen_pay(struct pc_mapping *m);
void pc__seen_pay_locked(struct pc_mapping *m);
/* At an open of @m: drop what another process made stale (@st: fstat). */
void pc__revalidate(struct pc_mapping *m, const struct stat *st);

#endif /* PC_BACKING_H */
