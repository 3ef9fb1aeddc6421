/*
 * fpos.c - the lock of a file position shared between processes
 * (pc_file_pos_lock, pc_file_pos_unlock).
 *
 * An open file description that several processes share (a fork's, an
 * exec's inherited descriptor) has one offset, the kernel's f_pos, and the
 * kernel moves it under the description's f_pos_lock, so that two
 * processes' write(2)s on it never land at one offset.  A client that
 * serves such a description's read and write through the cache keeps the
 * offset where the kernel does (lseek(fd, 0, SEEK_CUR), the cache's call at
 * that offset, lseek(fd, pos + n, SEEK_SET)) and needs the same exclusion
 * around the three steps, between processes: that is this lock.
 *
 *   pc_file ──► pc_mapping (one per file, in the cache) ── pos_lock
 *
 * It is one lock per file, not per description (the cache does not know
 * the kernel's descriptions): two descriptions of one file that are both
 * shared wait for each other where the kernel would not, which is
 * coarser, never wrong.  In a shared cache it is process-shared and
 * robust, like the cache's other locks, but a holder's death does not
 * break the cache: it guards no state of the cache, only the callers'
 * sequence, and the next taker finds the kernel's offset either before or
 * after the dead one's call.  Rank FPOS, before every lock of the cache:
 * the holder calls pc_readv, pc_writev and pc_size under it.  Its users
 * are the library's clients only (the preload shim's shared_pos.c); the
 * cache itself never takes it.
 */
#include "internal.h"
#include "inode.h"

void pc__fpos_init(struct pc_cache *c, struct pc_mapping *m)
{
	if (c->shared)
		pc__lock_init_shared(&m->pos_lock, PC_RANK_FPOS, NULL);
	else
		pc__lock_init(&m->pos_lock, NULL, PC_RANK_FPOS, -1);
}

PC_EXPORT int pc_file_pos_lock(pc_file *f)
{
	if (!f)
		return -EINVAL;
	pc__lock(&f->mapping->pos_lock);
	return 0;
}

PC_EXPORT int pc_file_pos_unlock(pc_file *f)
{
	if (!f)
		return -EINVAL;
	pc__unlock(&f->mapping->pos_lock);
	return 0;
}
