/*
 * backing.c - the descriptors behind the mappings: each mapping's backing
 * fd (O_DIRECT where the filesystem takes it) and its buffered twin for
 * the sub-block tail of the file, both opened from an opener's descriptor;
 * kept by closed mappings only within a budget; let go under descriptor
 * pressure; and the file's end on the disk moved out ahead of writeback.
 * Each descriptor is close-on-exec and moved out of the program's way
 * (fd.c: pc__fd_high).
 *
 * A closed file must not cost the program its descriptors (the kernel
 * keeps an inode's pages with none):
 *
 *   open mapping            holds pc__bk(m)->fd, and pc__bk(m)->tail_fd once a tail that
 *                           is not a whole block was written, or a commit's
 *                           few pages were staged through it (sync.c),
 *                           or the program was about to lock the file
 *                           (pc_lock_prepare)
 *   closed, within budget   keeps them: opening it again costs no open(2)
 *   closed, past budget     the oldest closed mapping holding descriptors
 *                           lets them go at its close: at once if clean, a
 *                           dirty one after a writeback pass (pages still
 *                           dirty - the device failed - keep them)
 *   EMFILE or ENFILE from   every closed mapping lets its descriptors go,
 *   an open(2) of ours      the dirty ones after a writeback pass, and the
 *                           open(2) is tried once more
 *
 * A descriptor opened while the program holds fcntl record locks on the
 * file would drop them: the move out of its way (fd.c) closes the number
 * open(2) gave, and a close(2) of any descriptor of a file drops every
 * record lock the process holds on it.  So before the program's first
 * lock (the shim's fcntl, pc_lock_prepare) the buffered twin is opened
 * too; locks taken behind the shim (lockf inside libc) are not seen.
 *
 * Nor may it keep the file open for writing when the program does not (a
 * file open for writing cannot be executed: ETXTBSY).  A read-only opener
 * gets a read-only descriptor; the first writable opener upgrades it (the
 * old one stays open in pc__bk(m)->ro_fd, for readers that loaded it, until the
 * mapping lets its descriptors go).  Every clean closed mapping lets a
 * read-write descriptor go once pc_cache_sync wrote it back (the preload
 * library's fork, exec and exit), so a program written and closed can be
 * run.  Left: a file open only for reading after a writer closed keeps
 * the read-write descriptor until it is closed and synced too.
 *
 *   budget: a quarter of RLIMIT_NOFILE's soft limit at create, between
 *   FD_BUDGET_MIN and FD_BUDGET_MAX (c->fd_budget); c->nr_closed_fds counts
 *   the closed mappings that hold descriptors.
 *
 * A mapping without descriptors keeps its pages.  The next open of the
 * file finds it by the opener's dev:ino (pc__mapping_matches) and attaches
 * descriptors made from the opener's; the open then revalidates the pages
 * (coherence.c, pc__mapping_stale): another process may have changed the
 * file meanwhile, or the inode number may name a new file.
 *
 * Who may use pc__bk(m)->fd and pc__bk(m)->tail_fd: a holder of a reference that has the
 * mapping open or sees it dirty or under writeback - such a mapping never
 * lets them go.  Others (pc_cache_sync, the completion that refreshes
 * m->seen) read pc__bk(m)->fd under disk_size_lock and may find -1.  Descriptors
 * go (backing_release_locked) under mappings_lock and disk_size_lock, and
 * only while the table's reference is the only one and the mapping is
 * closed, clean, not under writeback and off its bdi's dirty list: no one
 * uses them then, and no one can start to without mappings_lock (lookups,
 * opens, which attach new ones first) or the dirty list (the flusher).
 *
 * The file's end on the disk, ahead of a pass's writes: before a
 * writeback pass's O_DIRECT requests in flight together reach past the
 * file's end on the disk (m->seen.size), that part is allocated once
 * (pc__backing_extend, at the end of this file: fallocate(2) per run of
 * pages, up to the file's size; ftruncate(2) where there is no
 * fallocate), so that no request extends the file: ext4 serialises
 * writes that extend i_size (i_rwsem exclusive, and a wait for the write
 * in the call) and runs those within it, into allocated or unwritten
 * blocks, under i_rwsem shared.
 *
 * Locks: mappings_lock → bdi lock (the dirty list), mappings_lock →
 * disk_size_lock.  Writeback passes and the close(2) of released
 * descriptors past the budget run with none held; pc__backing_extend
 * takes disk_size_lock alone (the file's size read under it).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "bdi.h"
#include "inode.h"
#include "tree.h"

#define NR_BACKING_FDS 3	/* fd, tail_fd, ro_fd */
#define FD_BUDGET_MIN 16
#define FD_BUDGET_MAX 512	/* MAX_CLOSED in inode.c: all of them */

void pc__backing_init(struct pc_cache *c)
{
	struct rlimit rl;
	rlim_t quarter = FD_BUDGET_MAX;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		quarter = rl.rlim_cur / 4;
	c->fd_budget = (unsigned)pc_min(pc_max(quarter, (rlim_t)FD_BUDGET_MIN),
					(rlim_t)FD_BUDGET_MAX);
}

bool pc__mapping_matches(const struct pc_mapping *m, const struct stat *st)
{
	return m->dev == st->st_dev && m->ino == st->st_ino;
}

static bool out_of_fds(int err)
{
	return err == EMFILE || err == ENFILE;
}

int pc__open_retry(struct pc_cache *c, const char *path, int flags,
		   mode_t mode)
{
	int fd = open(path, flags, mode);

	if (fd < 0 && out_of_fds(errno)) {
		pc__backing_release_all(c);
		fd = open(path, flags, mode);
	}
	return fd < 0 ? -errno : fd;
}

/*
 * /proc/self/fd/@fd again with @flags, as pc__open_retry, moved out of the
 * program's way (fd.c): a descriptor the library keeps.
 */
static int reopen(struct pc_cache *c, int fd, int flags)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return pc__fd_high(pc__open_retry(c, proc, flags | O_CLOEXEC, 0));
}

int pc__backing_open(struct pc_cache *c, int fd, bool writable, bool *direct,
		     bool *rdonly)
{
	int acc = writable ? O_RDWR : O_RDONLY;
	int mfd;

	*direct = true;
	*rdonly = !writable;
	mfd = reopen(c, fd, acc | O_DIRECT);
	if (mfd == -EINVAL) {	/* tmpfs and friends */
		*direct = false;
		mfd = reopen(c, fd, acc);
	}
	return mfd;
}

bool pc__backing_needs_locked(const struct pc_mapping *m, bool writable)
{
	PC_ASSERT_HELD(&m->cache->mappings_lock);
	return pc__bk(m)->fd < 0 || (writable && pc__bk(m)->fd_rdonly);
}

static void release_clean(struct pc_cache *c);

int pc__backing_tail_fd(struct pc_mapping *m, bool may_release)
{
	int fd = atomic_load(&pc__bk(m)->tail_fd), none = -1;
	char proc[64];

	if (!m->direct)
		return pc__bk(m)->fd;	/* buffered already: it writes any length */
	if (fd >= 0)
		return fd;
	/* Not pc__open_retry: writeback of others from here could recurse. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pc__bk(m)->fd);
	fd = open(proc, O_RDWR | O_CLOEXEC);
	if (fd < 0 && out_of_fds(errno) && may_release) {
		release_clean(m->cache);
		fd = open(proc, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	fd = pc__fd_high(fd);
	if (!atomic_compare_exchange_strong(&pc__bk(m)->tail_fd, &none, fd)) {
		close(fd);	/* another writeback was first */
		fd = none;
	}
	return fd;
}

/*
 * May @m let its descriptors go now, @refs the references on it (the
 * table's, and the caller's if it holds one)?  mappings_lock held.
 */
static bool releasable_locked(struct pc_mapping *m, int refs)
{
	PC_ASSERT_HELD(&m->cache->mappings_lock);
	return pc__bk(m)->fd >= 0 && m->nr_open == 0 && !m->dead &&
	       atomic_load(&m->refs) == refs &&
	       atomic_load(&m->nr_dirty) == 0 &&
	       atomic_load(&m->nr_writeback) == 0 &&
	       pc__bdi_retire_if_clean(m);	/* off the flusher's list */
}

/*
 * Take @m's descriptors for the caller to close (out[], -1 if none).
 * mappings_lock held, releasable_locked(m).
 */
static void backing_release_locked(struct pc_cache *c, struct pc_mapping *m,
				   int out[NR_BACKING_FDS])
{
	PC_ASSERT_HELD(&c->mappings_lock);
	pc__lock(&m->disk_size_lock);
	out[0] = pc__bk(m)->fd;
	out[1] = atomic_exchange(&pc__bk(m)->tail_fd, -1);
	out[2] = pc__bk(m)->ro_fd;
	pc__bk(m)->fd = -1;
	pc__bk(m)->ro_fd = -1;
	pc__unlock(&m->disk_size_lock);
	if (m->on_closed_list)
		c->nr_closed_fds--;
	atomic_store(&m->home_rw, false);	/* (shared: we are the home) */
	pc__inc(c, 0, backing_fd_release);
}

static void close_pair(const int fds[NR_BACKING_FDS])
{
	for (int i = 0; i < NR_BACKING_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

void pc__backing_close(struct pc_mapping *m)
{
	int fds[NR_BACKING_FDS] = { pc__bk(m)->fd, atomic_load(&pc__bk(m)->tail_fd), pc__bk(m)->ro_fd };

	close_pair(fds);
	pc__bk(m)->fd = -1;
	pc__bk(m)->ro_fd = -1;
	atomic_store(&pc__bk(m)->tail_fd, -1);
}

bool pc__backing_attach_locked(struct pc_mapping *m, int fd, bool rdonly)
{
	struct pc_cache *c = m->cache;
	bool had = pc__bk(m)->fd >= 0;

	PC_ASSERT_HELD(&c->mappings_lock);
	if (!pc__backing_needs_locked(m, !rdonly))
		return false;	/* another opener attached first */
	pc__lock(&m->disk_size_lock);
	if (had) {		/* the upgrade: readers may hold the old one */
		PC_ASSERT(pc__bk(m)->ro_fd < 0);
		pc__bk(m)->ro_fd = pc__bk(m)->fd;
	}
	pc__bk(m)->fd = fd;
	pc__bk(m)->fd_rdonly = rdonly;
	pc__unlock(&m->disk_size_lock);
	if (m->on_closed_list && !had)
		c->nr_closed_fds++;
	return true;
}

/*
 * Write @m back once (a closed mapping that holds descriptors past the
 * budget, or under pressure) and let its descriptors go if it is clean.
 * No lock held; the caller's reference on @m is dropped.
 */
static void release_after_writeback(struct pc_cache *c, struct pc_mapping *m)
{
	int fds[NR_BACKING_FDS] = { -1, -1, -1 };

	bool ours_put = false;

	pc__mapping_writeback_once(m);
	pc__lock(&c->mappings_lock);
	if (releasable_locked(m, 2)) {	/* the table's and ours */
		atomic_fetch_sub(&m->refs, 1);	/* not the last: the table's */
		ours_put = true;
		backing_release_locked(c, m, fds);
	}
	pc__unlock(&c->mappings_lock);
	close_pair(fds);
	if (!ours_put)
		pc__mapping_put(m);
}

void pc__backing_trim(struct pc_cache *c)
{
	struct pc_mapping *m, *dirty = NULL;
	int fds[NR_BACKING_FDS] = { -1, -1, -1 };

	pc__lock(&c->mappings_lock);
	for (m = closed_first(c); m && c->nr_closed_fds > c->fd_budget;
	     m = closed_next(m)) {
		if (pc__bk(m)->fd < 0)
			continue;
		if (releasable_locked(m, 1)) {
			backing_release_locked(c, m, fds);
			break;
		}
		if (!m->dead && m->nr_open == 0 && pc__mapping_tryget(m)) {
			dirty = m;	/* written back below, without the lock */
			break;
		}
	}
	pc__unlock(&c->mappings_lock);
	close_pair(fds);
	if (dirty)
		release_after_writeback(c, dirty);
}

/*
 * Every closed clean mapping lets its descriptors go; @dirty gets up to
 * @cap of the dirty ones, with a reference each.
 */
static unsigned release_closed(struct pc_cache *c, struct pc_mapping **dirty,
			       unsigned cap)
{
	unsigned n = 0;

	pc__inc(c, 0, backing_fd_emfile);
	pc__lock(&c->mappings_lock);
	for (struct pc_mapping *m = closed_first(c); m; m = closed_next(m)) {
		int fds[NR_BACKING_FDS];

		if (pc__bk(m)->fd < 0)
			continue;
		if (releasable_locked(m, 1)) {
			/* close(2) of a regular file does not block: here */
			backing_release_locked(c, m, fds);
			close_pair(fds);
		} else if (n < cap && !m->dead && m->nr_open == 0 &&
			   pc__mapping_tryget(m)) {
			dirty[n++] = m;
		}
	}
	pc__unlock(&c->mappings_lock);
	return n;
}

static void release_clean(struct pc_cache *c)
{
	release_closed(c, NULL, 0);
}

void pc__backing_release_writers(struct pc_cache *c)
{
	pc__lock(&c->mappings_lock);
	for (struct pc_mapping *m = closed_first(c); m; m = closed_next(m)) {
		int fds[NR_BACKING_FDS];

		if (pc__bk(m)->fd < 0 || pc__bk(m)->fd_rdonly || !releasable_locked(m, 1))
			continue;
		backing_release_locked(c, m, fds);
		close_pair(fds);	/* regular files: no blocking */
	}
	pc__unlock(&c->mappings_lock);
}

void pc__backing_release_all(struct pc_cache *c)
{
	struct pc_mapping **dirty;
	unsigned n, cap;

	pc__lock(&c->mappings_lock);
	cap = c->nr_closed;
	pc__unlock(&c->mappings_lock);
	dirty = malloc((cap + 1) * sizeof(*dirty));
	if (!dirty) {
		release_clean(c);
		return;
	}
	n = release_closed(c, dirty, cap);	/* newer ones: next time */
	for (unsigned i = 0; i < n; i++)
		release_after_writeback(c, dirty[i]);
	free(dirty);
}

/* ------------------------------------------------------------------ */
/* The file's end on the disk, ahead of a pass's writes               */

/*
 * The file's end on the disk moved out once, before a pass's O_DIRECT
 * writes reach past it (writeback.c).  The pages tagged
 * @tag in [@start, @end] past the disk's end, at most @limit of them (a
 * background pass's budget; 0: all), in runs of consecutive indices
 * (EXTENTS at most): each run is allocated with fallocate(2), mode 0,
 * from the disk's end (m->seen.size) to the run's end or the file's size,
 * whichever is less - so the disk is never longer than a size the file
 * has, and the gaps between runs stay holes.  A file system without
 * fallocate (EOPNOTSUPP) is extended by ftruncate(2) to the file's size
 * instead, only when that grows it.  The pass's writes then land within
 * the file's size (into unwritten extents on ext4), so none of them
 * extends it: ext4 takes i_rwsem shared for them and runs them at once,
 * where each extending write held it exclusive and waited for its own
 * completion, so a new file's requests went to the device one by one.
 *
 * Nothing is done for a pass of at most one request past the disk's end
 * (nothing to run beside it), nor when every run lies within it.  Under
 * disk_size_lock, with the size read under it: a truncation that cut
 * the disk before we read its old size checks the disk again under that
 * lock once the cut is done (truncate.c, pc__truncate_locked) and cuts
 * it once more.  ext4's fallocate waits for the file's O_DIRECT writes in
 * flight: ours of this pass are not submitted yet.  Counters:
 * writeback_extends (fallocate calls), writeback_extend_truncates.
 */
#define EXTENTS 8
#define EXTEND_GANG 64	/* pages looked up at a time */

_Atomic bool pc__test_no_fallocate;

void pc__backing_extend(struct pc_mapping *m, uint64_t start, uint64_t end,
			int tag, uint64_t limit)
{
	struct pc_cache *c = m->cache;
	struct { uint64_t lo, hi; } ext[EXTENTS];	/* pages [lo, hi) */
	unsigned next = 0;
	uint64_t index, pages = 0;
	void *items[EXTEND_GANG];
	uint64_t idx[EXTEND_GANG];
	int64_t disk, size;
	int fd = pc__bk(m)->fd;

	pc__lock(&m->disk_size_lock);
	pc__seen_pay_locked(m);	/* the disk's end as our last write left it */
	disk = m->seen.size;
	pc__unlock(&m->disk_size_lock);
	if (atomic_load(&m->size) <= disk)
		return;
	index = pc_max(start, (uint64_t)disk >> PC_PAGE_SHIFT);
	while (index <= end && (!limit || pages < limit)) {
		unsigned n;

		pc__tree_read_lock(&m->tree);
		n = pc__tree_gang_tag(&m->tree, index, end, tag, items, idx,
				      EXTEND_GANG);
		pc__tree_read_unlock(&m->tree);
		for (unsigned k = 0; k < n; k++) {
			if (next && ext[next - 1].hi == idx[k]) {
				ext[next - 1].hi++;
			} else if (next == EXTENTS) {
				break;
			} else {
				ext[next].lo = idx[k];
				ext[next++].hi = idx[k] + 1;
			}
			pages++;
		}
		if (n < EXTEND_GANG || (next == EXTENTS &&
					ext[next - 1].hi != idx[n - 1] + 1))
			break;
		index = idx[n - 1] + 1;
		if (index == 0)
			break;	/* wrapped past the last index */
	}
	if (pages <= PC_MAX_IO_PAGES && next <= 1)
		return;
	pc__lock(&m->disk_size_lock);
	pc__seen_pay_locked(m);
	disk = m->seen.size;
	size = atomic_load(&m->size);
	for (unsigned i = 0; i < next; i++) {
		int64_t lo = pc_max((int64_t)(ext[i].lo << PC_PAGE_SHIFT), disk);
		int64_t hi = pc_min((int64_t)(ext[i].hi << PC_PAGE_SHIFT), size);
		struct stat st;

		if (hi <= lo)
			continue;
		if (atomic_load_explicit(&pc__test_no_fallocate,
					 memory_order_relaxed)) {
			errno = EOPNOTSUPP;
		} else if (fallocate(fd, 0, lo, hi - lo) == 0) {
			pc__inc(c, 0, writeback_extends);
			continue;
		}
		/* Not supported: the size alone, only ever up; other errors
		 * (ENOSPC) are the writes' to meet and report. */
		if (errno == EOPNOTSUPP && fstat(fd, &st) == 0 &&
		    st.st_size < size && ftruncate(fd, size) == 0)
			pc__inc(c, 0, writeback_extend_truncates);
		break;
	}
	pc__seen_refresh_locked(m);	/* our change: not another's */
	pc__unlock(&m->disk_size_lock);
}
