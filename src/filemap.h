/*
 * filemap.h - the page cache proper as the core calls it: a mapping's
 * pages found, inserted and deleted in its tree (filemap.c, with the test
 * hook in the insertion's window), and read from the device (readpage.c).
 * The read and write paths themselves are the public API's.
 */
#ifndef PC_FILEMAP_H
#define PC_FILEMAP_H

#include "internal.h"

/* filemap.c */
struct pc_page *pc__find_get_page(struct pc_mapping *m, uint64_t index);
/*
 * Insert @p (new, locked by pc__page_lock_new, one reference) at @index:
 * 0, -EEXIST (a page is there: another thread won the race) or -ENOMEM
 * (no tree node).  On failure the page is out of the tree but was seen:
 * its mapping was set before the insertion, so a thread that found the
 * frame by its number (resize.c's evict) may have queued on its lock.
 * The caller lets the lock go with pc__unlock_page, never a plain clear
 * of PG_locked: that waiter must be woken (issue 36).
 */
int pc__add_to_page_cache(struct pc_mapping *m, struct pc_page *p,
			  uint64_t index);
/*
 * Tests (debug builds): called by pc__add_to_page_cache with @p locked and
 * its mapping set, before the tree insertion - the window above.  NULL:
 * none.  Atomic: set by a test, read without a lock.  Release builds
 * never call it.
 */
typedef void pc__test_insert_fn(struct pc_mapping *m, struct pc_page *p,
				uint64_t index);
extern pc__test_insert_fn *_Atomic pc__test_insert_hook;
#ifdef PC_DEBUG
static inline void pc__test_before_insert(struct pc_mapping *m,
					  struct pc_page *p, uint64_t index)
{
	pc__test_insert_fn *fn = atomic_load_explicit(&pc__test_insert_hook,
						      memory_order_acquire);

	if (fn)
		fn(m, p, index);
}
#else
static inline void pc__test_before_insert(struct pc_mapping *m,
					  struct pc_page *p, uint64_t index)
{
	(void)m;
	(void)p;
	(void)index;
}
#endif
void pc__delete_from_page_cache_locked(struct pc_mapping *m,
				       struct pc_page *p, void *shadow);

/* readpage.c */
/*
 * Read @nr locked, not uptodate pages of consecutive indices, one
 * reference each, both given back at completion.  Returns the pages
 * zero-filled without I/O (holes, past the disk's EOF).  @now: pages[0]
 * is needed at once (its request is the caller's own).
 */
unsigned pc__read_pages(struct pc_mapping *m, struct pc_page **pages,
			unsigned nr, bool now);
/* Read a locked page and wait; it stays locked.  0 or -EIO. */
int pc__read_page_sync(struct pc_mapping *m, struct pc_page *p);
/* A dead process's read of @p: @p unlocked, for another reader to do
 * (procs.c reaps it). */
void pc__read_abandon(struct pc_cache *c, struct pc_page *p);

#endif /* PC_FILEMAP_H */
