/*
 * truncate.c - taking pages out of a mapping by range (the kernel's
 * mm/truncate.c): truncation (pc_ftruncate, an O_TRUNC open), and the
 * invalidation of a mapping's clean pages (close-to-open coherence,
 * pc_fallocate and pc_invalidate: coherence.c).  inode.c holds the
 * mappings and the open files.
 *
 * Truncation (pc_ftruncate, O_TRUNC) calls ftruncate(2) first, and leaves
 * the cache as it was when that fails; then, i_rwsem held, the size, the
 * pages past it, the tail page's bytes past it; a write of an old page
 * still in flight when the disk was cut may have extended it again, so
 * once every writeback from the new last page on is over the disk is cut
 * once more if it must (pc__truncate_locked).  Files keep exactly the
 * size the program gave them: writeback writes the last block's bytes
 * exactly (writeback.c), never a rounded block, so the disk is never
 * longer than a size the file had.
 *
 * Removing pages (drop_pages): each under its page lock, after its
 * writeback (see drop_pages), with its shadow entries; pages reclaim or
 * migration is moving meanwhile are looked at again until none is left.
 *
 * Locks: i_rwsem (exclusive) serializes truncation against writers, and
 * an invalidation's caller holds it too; disk_size_lock serializes
 * ftruncate(2) of the backing file with m->seen; page lock → tree lock
 * for each page removed.
 */
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "bdi.h"
#include "dirty.h"
#include "filemap.h"
#include "inode.h"
#include "pagewait.h"
#include "tracepoint.h"
#include "tree.h"

/*
 * Remove every page from @from on, and the shadows.  @keep_dirty (an
 * invalidation, not a truncation): dirty pages stay, the rest go;
 * otherwise every page goes.  Either way a page under writeback is waited
 * for first, and with @keep_dirty it then stays only if its write failed
 * (pc__wb_finish, writeback_io.c, makes it dirty again before it ends
 * PG_writeback).  A clean page under writeback is not kept: its write may
 * have reached the disk already, its end not yet run (pc__wb_finish moves
 * the tag and the counters,
 * then ends PG_writeback), so the caller's wait for writeback (by the tag)
 * and has_dirty (by the counters) both passed it - and pc_fallocate's
 * collapse or insert range then left it at its old index with the data
 * the shift moved away (tests/exerciser.c, test_coherence's
 * fallocate_writeback_ending).
 */
static void drop_pages(struct pc_mapping *m, uint64_t from, bool keep_dirty)
{
	struct pc_cache *c = m->cache;
	void *items[64];
	uint64_t idx[64];

	for (int pass = 0;; pass++) {
		uint64_t index = from;
		unsigned busy = 0, n;

		for (;;) {
			pc__tree_read_lock(&m->tree);
			n = pc__tree_gang(&m->tree, index, UINT64_MAX, items, idx, 64);
			pc__tree_read_unlock(&m->tree);
			if (!n)
				break;
			index = idx[n - 1] + 1;
			for (unsigned k = 0; k < n; k++) {
				struct pc_page *p = items[k];

				if (pc_tree_is_value(p)) {
					pc__lock_counted(&m->tree_lock);
					if (pc__tree_lookup(&m->tree, idx[k]) == p) {
						pc__tree_store(&m->tree, idx[k], NULL);
						atomic_fetch_sub(&c->nr_shadows, 1);
					}
					pc__unlock(&m->tree_lock);
					continue;
				}
				if (!page_get_unless_zero(p)) {
					busy++;	/* reclaim is removing it */
					continue;
				}
				pc__lock_page(&c->wait, p);
				if (page_mapping(p) != m || page_index(p) != idx[k]) {
					/* Left the slot: reclaimed, or migrated
					 * to a new frame - look again. */
					pc__unlock_page(&c->wait, p);
					pc__put_page(c, p);
					busy++;
					continue;
				}
				if (keep_dirty && page_test(p, PG_dirty)) {
					pc__unlock_page(&c->wait, p);
					pc__put_page(c, p);
					continue;
				}
				/* Locked: no one dirties it again meanwhile. */
				pc__wait_on_page_bit(&c->wait, p, PG_writeback);
				if (keep_dirty && page_test(p, PG_dirty)) {
					/* Its write failed: dirty again. */
					pc__unlock_page(&c->wait, p);
					pc__put_page(c, p);
					continue;
				}
				pc__account_page_cleaned(m, p);
				page_clear(p, PG_reclaim);
				page_clear(p, PG_dropbehind);
				pc_trace(c, PC_TR_EVICT, p, PC_TRACE_EV_REMOVE);
				pc__lock_counted(&m->tree_lock);
				pc__delete_from_page_cache_locked(m, p, NULL);
				pc__unlock(&m->tree_lock);
				pc__unlock_page(&c->wait, p);
				pc__put_page(c, p);	/* the mapping's */
				pc__put_page(c, p);	/* ours */
			}
			if (index == 0)
				break;	/* wrapped past the last index */
		}
		if (!busy)
			break;
		sched_yield();
	}
}

void pc__truncate_pages(struct pc_mapping *m, uint64_t from)
{
	drop_pages(m, from, false);
}

void pc__invalidate_pages(struct pc_mapping *m)
{
	drop_pages(m, 0, true);
}

/*
 * Truncate to @len: ftruncate(2) first - its error is returned and the
 * cache left as it was - then the cache (see the top).  i_rwsem held
 * exclusively.
 */
int pc__truncate_locked(struct pc_mapping *m, off_t len)
{
	struct pc_cache *c = m->cache;
	int64_t old = atomic_load(&m->size);
	struct stat st;
	bool stat_ok;
	PC_ASSERT(pc__rwlock_held(&m->i_rwsem));

	pc__lock(&m->disk_size_lock);
	if (ftruncate(pc__bk(m)->fd, len) != 0) {
		int e = -errno;

		pc__unlock(&m->disk_size_lock);
		return e;
	}
	pc__unlock(&m->disk_size_lock);
	/* Cut on the disk, not yet here: a death from now on leaves the
	 * cache unlike the disk (the reaper breaks the cache then). */
	pc__rwlock_fragile(&m->i_rwsem, true);
	atomic_store(&m->size, len);
	if (len < old) {
		uint64_t keep = ((uint64_t)len + PC_PAGE_SIZE - 1) >> PC_PAGE_SHIFT;
		size_t tail = (size_t)len & (PC_PAGE_SIZE - 1);

		pc__truncate_pages(m, keep);
		if (tail) {
			struct pc_page *p = pc__find_get_page(m, (uint64_t)len >> PC_PAGE_SHIFT);

			if (p) {
				pc__lock_page(&c->wait, p);
				if (atomic_load(&m->bdi->stable_writes))
					pc__wait_on_page_bit(&c->wait, p,
							     PG_writeback);
				memset((char *)page_data(c, p) + tail, 0,
				       PC_PAGE_SIZE - tail);
				pc__unlock_page(&c->wait, p);
				pc__put_page(c, p);
			}
		}
		/* Writes sized before the cut are over: none extends it now. */
		pc__wait_writeback_range(m, (uint64_t)len >> PC_PAGE_SHIFT,
					 UINT64_MAX);
	}
	pc__lock(&m->disk_size_lock);
	stat_ok = fstat(pc__bk(m)->fd, &st) == 0;
	if (stat_ok && st.st_size <= len) {
		pc__seen_set_locked(m, &st);	/* that stat is the record */
	} else {
		if (stat_ok && ftruncate(pc__bk(m)->fd, len) != 0)
			pc__errseq_set(m, -errno);
		pc__seen_refresh_locked(m);
	}
	pc__unlock(&m->disk_size_lock);
	pc__rwlock_fragile(&m->i_rwsem, false);
	return 0;
}

PC_EXPORT int pc_ftruncate(pc_file *f, off_t len)
{
	struct pc_mapping *m;
	int r = 0;

	if (!f || len < 0)
		return -EINVAL;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	m = f->mapping;
	pc__write_lock(&m->i_rwsem);
	r = pc__truncate_locked(m, len);
	pc__write_unlock(&m->i_rwsem);
	return r;
}
