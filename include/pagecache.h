/*
 * pagecache.h - a page cache for programs, in user space.
 *
 * libpagecache keeps the pages of an application's files in a fixed memory
 * budget, the way the Linux page cache keeps them for the kernel: a per-file
 * page index, active/inactive LRU lists, background (kswapd) and direct
 * reclaim, refault detection, readahead, dirty throttling and per-device
 * writeback.  Underneath it talks to the disk with O_DIRECT through io_uring,
 * so the kernel's own cache is out of the way.
 *
 * Conventions, for every function below:
 *  - a function returns 0 or a count on success, or a negative errno;
 *  - a NULL handle or an out-of-range argument gives -EINVAL, never a crash;
 *  - every function may be called from many threads at once, on one file or
 *    many, and several pc_cache instances may live in one process;
 *  - offsets and lengths are bytes and need no alignment.
 *
 * Link with `pkg-config --libs pagecache`.
 */
#ifndef PAGECACHE_H
#define PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;
struct stat;

#ifdef __cplusplus
extern "C" {
#endif

#define PC_PAGE_SIZE 4096

typedef struct pc_cache pc_cache;
typedef struct pc_file  pc_file;
typedef struct pc_page  pc_page;

/*
 * pc_cache_create - make a cache with its own memory budget and threads.
 * @out:    receives the cache.
 * @config: NULL for the defaults, or space-separated key=value pairs, e.g.
 *          "memory=256M nodes=4 reclaim.batch_remove=1".  Sizes take a K, M
 *          or G suffix.  The keys and their values are listed in README.md
 *          ("Configuration"); the main ones:
 *            memory=SIZE        the budget for cached pages (default 64M)
 *            memory.max=SIZE    the largest budget pc_cache_resize may set
 *                               (default: the machine's memory, or memory=
 *                               if larger)
 *            nodes=N|auto       memory nodes the budget is split into (1)
 *            io=uring|sync      the I/O backend (uring, falling back to sync)
 *            readahead.max=SIZE the largest readahead window
 *            shared=on          one cache for many processes: this
 *                               one, the children it forks and, with
 *                               name=NAME, any process of the same user
 *                               that joins it (pc_cache_attach; below)
 *            name=NAME          shared=on: the name others join it by
 *            writeback.* reclaim.* lru.* numa.* page.* cache.* policies
 *
 * shared=on: the whole cache lives in shared memory that every process
 * using it maps at the same address: a child made by fork(2) maps it
 * already and goes on using the same pc_cache and pc_file handles, and
 * with name=NAME (letters, digits, '.', '_', '-', at most 64; the memory
 * is /dev/shm/pagecache-NAME, mode 0600) a process of the same user joins
 * it from any program, after exec too (pc_cache_attach).  The processes
 * see one cache as threads do: a write is visible to a read in any of
 * them the moment pc_pwrite returns, one budget (memory.max, or memory:
 * it does not grow past it), one LRU, one dirty limit.  The creating
 * process (its home; pc_cache_spawn makes the home a cache process of its
 * own) runs the cache's threads; every other process's writes are
 * written back by them even after that process died (each process that
 * opens a file for writing sends its descriptor of the file to the home
 * before the open returns).  pc_cache_destroy in any other process
 * detaches it; in the home it first removes the name, then waits until
 * every other process has detached or exited.  Not with trace= or
 * numa.balancing=on.
 *
 * The budget is reserved here as address space (up to memory.max), and
 * nothing is touched: creating a cache of any size takes about the same
 * time, and the process's memory grows with what is cached, 2 MiB at a
 * time, never past the budget.  Memory once used stays with the cache for
 * reuse until the cache is destroyed or its budget shrinks.
 * Returns 0, or -EINVAL for a NULL @out, an unknown key or a bad value, a
 * budget too small for the configuration or above memory.max, trace= or
 * numa.balancing=on with shared=on (a message on stderr says why),
 * -EEXIST (shared=on name=NAME: a cache of that name exists; join it),
 * or -ENOMEM when the address space cannot be reserved.
 */
int pc_cache_create(pc_cache **out, const char *config);

/*
 * pc_config_check - parse @config as pc_cache_create does, creating
 * nothing: for a tool that passes a configuration on (pagecache exec).
 * Returns 0, or -EINVAL for an unknown key, a bad value, a budget too
 * small for its nodes or above memory.max (a message on stderr says
 * which).  Only pc_cache_create finds what needs the memory itself
 * (-ENOMEM).
 */
int pc_config_check(const char *config);

/*
 * pc_cache_resize - set the budget to @bytes while the cache is in use
 * (split over its nodes as at create; memory= was only the start).
 * Growing takes effect at once.  Shrinking evicts the pages that do not
 * fit, writing dirty ones back and waiting for them (never dropping
 * them), lowers the reclaim watermarks and the dirty limits with the
 * budget, and gives the memory above the new budget back to the system
 * before returning.  Readers and writers may go on meanwhile.  One resize
 * runs at a time; others wait for it.
 * Returns 0; -EINVAL for NULL, a budget under the minimum (16 pages a
 * node) or above memory.max; -EBUSY when pinned pages (pc_get_page, or
 * pages held by reads and writes in progress) still sit above the new
 * budget after a bounded wait (a quarter of a second without progress):
 * the budget is then left as low as they allow, which
 * pc_vmstat(c, "nr_budget_pages", ...) reports, and a later call can
 * finish the shrink once they are put.
 */
int pc_cache_resize(pc_cache *c, size_t bytes);

/*
 * pc_cache_destroy - write back every dirty page, stop the threads, free all.
 * Files still open are closed.  Returns 0, the first writeback error met
 * (the cache is freed all the same), or -EINVAL for NULL.  A shared
 * cache (shared=on): in a process that did not create it, the process
 * detaches (its descriptors closed; the cache and its pages live on, what
 * it wrote written back by the creator's threads) and 0 is returned; in
 * the creator, destroy removes the name (no more joins) and waits for the
 * others to detach or exit first.
 */
int pc_cache_destroy(pc_cache *c);

/*
 * pc_cache_attach - join the shared cache made with "shared=on name=@name"
 * by a process of the same user, from any program (after exec too): it is
 * mapped at the address it has in the others, and *@out is the handle
 * they have.  Returns 0; -ENOENT (no cache of that name, or it is being
 * destroyed); -EAGAIN (it is still being made: try again); -EACCES (it is
 * another user's); -EEXIST (this process has something of its own at the
 * cache's address: it must not use the cache, and a message on stderr
 * says so); -ENOTCONN (its creator is gone, or a process died inside it:
 * it is broken, see pc_cache_broken); -EBUSY (attached already); -EPROTO
 * (made by an incompatible build: its region's layout version is not this
 * library's, and it is not mapped); -EMFILE (256 processes use it
 * already); -ENOMEM (this process uses 16 shared caches, or 64 caches,
 * already); -EINVAL (NULL, or not a name pc_cache_create takes).
 * pc_cache_destroy detaches.
 */
int pc_cache_attach(pc_cache **out, const char *name);

/*
 * pc_cache_remove - remove the name of the shared cache @name when no
 * process serves it any more - its home (the process that made it) is
 * gone, or it is broken: what pc_cache_attach refuses with -ENOTCONN -
 * so that a new cache of the name can be made.  Processes still attached
 * keep it mapped until they detach.  Returns 0; -ENOENT (no cache of that
 * name); -EBUSY (its home is alive and it is not broken - in use - or
 * this process has it attached, or a newer cache took the name meanwhile);
 * -EAGAIN (it is still being made); -EACCES (it is another user's);
 * -EPROTO (made by an incompatible build - its region's layout version
 * is not this library's: left alone); -EEXIST (this
 * process has something of its own at the cache's address, so it cannot
 * be looked at); -ENOMEM; -EINVAL (NULL, or not a name pc_cache_create
 * takes).
 */
int pc_cache_remove(const char *name);

/*
 * pc_cache_spawn - start a cache process for the shared cache @config
 * describes (it must say shared=on and name=NAME): a daemon, forked from
 * this process (twice: no child of it, a session of its own, stdio on
 * /dev/null, none of this process's descriptors), that creates the cache,
 * runs its threads (kswapd, the flushers, the watch on the processes
 * attached) and destroys it - everything written back, the name removed -
 * once no process has been attached for a second (ten before the first
 * came).  So the cache lives while any process uses it, whichever ends
 * first.  Join it with pc_cache_attach(NAME).  Returns 0 once the cache
 * is made; -EEXIST (a cache of that name exists: join it); -EINVAL (NULL,
 * not shared, no name, or a bad configuration); -EIO (the cache process
 * died before it said); the errno of pipe(2) or fork(2); or
 * pc_cache_create's error.  Best called before this process starts
 * threads of its own: the daemon is a fork of it.
 */
int pc_cache_spawn(const char *config);

/*
 * pc_cache_shared - is @c a shared cache (made with shared=on, here or in
 * another process, or joined with pc_cache_attach)?  Its files and
 * counters are then every process's, and a forked child goes on using it.
 * false for a private cache, or NULL.
 */
bool pc_cache_shared(pc_cache *c);

/*
 * pc_cache_broken - a process died holding one of the shared cache @c's
 * mutexes, or in the middle of an update its reaper cannot finish (a
 * truncation between the disk and the cache, a write's completion moving
 * the counters), so what it was changing may be half-updated: the
 * cache's users should write back what they can (pc_cache_sync), close
 * their files and go on without it (the preload shim does so at its next
 * call on a file).  A cache once broken stays so, and pc_cache_attach
 * refuses it (-ENOTCONN).  false for a private cache, or NULL.
 */
bool pc_cache_broken(pc_cache *c);

/*
 * pc_cache_processes - the processes using @c: 1 for a private cache; for
 * a shared one, this one and every other that attached or was forked from
 * one and has neither detached nor exited (one found dead counts until
 * its reap is over: this call may do it).  0 for NULL.
 */
unsigned pc_cache_processes(pc_cache *c);

/*
 * Operating shared caches from outside them (the `pagecache` command's
 * ls, stat, files, sync, drop and stop).
 *
 * pc_cache_list - call @fn with the name of every shared cache of the
 * calling user on this machine (the name pc_cache_attach takes), in no
 * order; a cache still being made may be missed.  @fn returns 0 to go on.
 * Returns the count of names, @fn's first non-zero return, -EINVAL (NULL
 * @fn), or the errno of reading the directory the caches live in.
 */
int pc_cache_list(int (*fn)(const char *name, void *arg), void *arg);

/*
 * pc_view - a read-only look at a shared cache by its name, without
 * joining it: the cache's memory is mapped read-only, the process is not
 * counted among the cache's (pc_cache_processes, the cache process's idle
 * wait) and writes and locks nothing of it, so a program's reads and
 * writes never wait for a view, and a cache pc_cache_attach refuses
 * (broken, its home gone) can be looked at.  What it reads is read
 * without locks while the cache changes: each number is one the cache
 * had, not all at one instant.
 *
 * pc_view_open - *@out a view of the cache @name.  Returns 0; -ENOENT (no
 * cache of that name); -EACCES (another user's, or one group or others
 * may open); -EAGAIN (still being made); -EPROTO (made by an incompatible
 * build); -EEXIST (something of this process's is at the cache's
 * address); -EBUSY (this process has it attached: use the handle);
 * -ENOMEM; -EINVAL (NULL, or not a name pc_cache_create takes).
 * pc_view_close unmaps it (NULL is ignored).
 */
typedef struct pc_view pc_view;
int pc_view_open(pc_view **out, const char *name);
void pc_view_close(pc_view *v);

/* A cache's state, as pc_view_info reads it. */
struct pc_view_info {
	uint64_t budget_pages;		/* nr_budget_pages */
	uint64_t max_pages;		/* memory.max: the largest budget */
	uint64_t cached_pages;		/* nr_file_pages */
	uint64_t dirty_pages;		/* nr_dirty */
	uint64_t writeback_pages;	/* nr_writeback */
	uint64_t free_pages;		/* nr_free_pages */
	unsigned processes;		/* attached and alive, the home not
					   counted */
	pid_t home_pid;			/* the process that runs its threads
					   (a cache process: pc_cache_spawn) */
	bool home_alive;		/* false: nobody serves it */
	bool broken;			/* pc_cache_broken */
	bool stopped;			/* pc_cache_stop was called on it */
	bool closing;			/* its home is destroying it */
	int64_t created;		/* when it was made, seconds since
					   the epoch */
};

/* pc_view_info - fill @info.  Returns 0, or -EINVAL for NULL. */
int pc_view_info(pc_view *v, struct pc_view_info *info);

/*
 * pc_view_counter - counter @i (the one pc_vmstat_name(i) names) of the
 * viewed cache, as pc_vmstat reads it in a process attached.  Returns 0,
 * -ENOENT (@i past the last), -EINVAL (NULL).
 */
int pc_view_counter(pc_view *v, unsigned i, uint64_t *value);

/* A file the viewed cache holds, as pc_view_files reports it. */
struct pc_view_file {
	uint64_t dev, ino;		/* st_dev, st_ino */
	const char *path;		/* a name one of the cache's processes
					   has it open by; NULL when none
					   does (closed everywhere, or
					   deleted) */
	int64_t size;			/* bytes, as the cache holds it */
	uint64_t cached;		/* pages in the cache */
	uint64_t dirty, writeback;	/* of them, pages */
	uint64_t active, inactive;	/* on the LRU lists, pages */
	unsigned open;			/* opens of it, every process's */
	bool unlinked;
};

/*
 * pc_view_files - call @fn on every file the viewed cache holds (open, or
 * closed with pages), ordered by device and inode; @fn returns 0 to go
 * on.  The struct and its path are valid during the call only.  A file
 * opened or closed during the walk may be missed.  Returns the count of
 * files, @fn's first non-zero return, -ENOMEM or -EINVAL (NULL).
 */
int pc_view_files(pc_view *v,
		  int (*fn)(const struct pc_view_file *f, void *arg),
		  void *arg);

/*
 * pc_cache_sync_all - every file of the shared cache @c written back by
 * its home, which holds a descriptor of every file written (pc_cache_sync
 * in a process other than the home writes only the files it has open for
 * writing), and waited for; in the home, or for a private cache,
 * pc_cache_sync.  Readers and writers go on meanwhile.  Returns 0, the
 * first writeback error met, -ENOTCONN (the home died before it
 * answered), -ENOMEM, or -EINVAL for NULL.
 */
int pc_cache_sync_all(pc_cache *c);

/*
 * pc_cache_drop - drop the clean pages of the file @st describes (by
 * st_dev and st_ino), or with @st NULL of every file @c holds, as the
 * kernel's drop_caches does: dirty pages stay, pages under writeback are
 * waited for, each file's writers wait while its pages go.  Returns the
 * count of pages dropped, -ENOENT (@c does not hold the file), -ENOMEM,
 * or -EINVAL for NULL @c.
 */
int64_t pc_cache_drop(pc_cache *c, const struct stat *st);

/*
 * pc_cache_stop - stop the shared cache @name while programs use it:
 * everything written back by its home, then the cache marked stopped -
 * each process using it, at its next call on one of its files, writes
 * back what it wrote and goes on through the kernel (the preload shim
 * does so, as for a broken cache: pc_cache_stopped, pc_cache_broken),
 * and pc_cache_attach refuses it (-ENOTCONN) - and its name removed, so
 * a new cache of the name can be made; written back once more.  The home
 * destroys it once the last process has left (writing back again).  A
 * cache already broken, or whose home is gone, only loses its name (as
 * pc_cache_remove).  Returns 0; the first writeback error of the first
 * write-back (then nothing was changed: the pages stay dirty, the cache
 * serves on); -ENOTCONN (the home died meanwhile); or pc_cache_attach's
 * errors (-ENOENT, -EACCES, -EPROTO ...).
 */
int pc_cache_stop(const char *name);

/*
 * pc_cache_stopped - was the shared cache @c stopped (pc_cache_stop)?
 * Then pc_cache_broken is true as well.  false for a private cache, or
 * NULL.
 */
bool pc_cache_stopped(pc_cache *c);

/*
 * pc_open - open @path through the cache.
 * @flags: O_RDONLY, O_WRONLY or O_RDWR, with any of O_CREAT, O_EXCL, O_TRUNC,
 *         O_APPEND, O_SYNC, O_DSYNC.  O_CLOEXEC and O_NOATIME are accepted
 *         and change nothing: the program gets no descriptor, and the
 *         cache's own are always close-on-exec; the cache's reads of the
 *         file update its access time as the file system's mount says
 *         (relatime), as they would without O_NOATIME.  Other flags are
 *         refused with -EINVAL.
 * @mode:  as for open(2) when O_CREAT creates the file.
 * Opens of one path share one mapping (by device and inode), so they see
 * each other's writes at once.  The cache holds one or two descriptors per
 * open file (O_DIRECT, and a buffered one for a partial last block), and
 * closed files' descriptors only within a quarter of RLIMIT_NOFILE; when an
 * open(2) of its own fails with EMFILE or ENFILE, it lets every closed
 * file's descriptors go and tries once more.  Returns 0, -EINVAL, or the
 * errno of open(2) (-ENOENT, -EEXIST, -EACCES, -EISDIR, -EMFILE ...).
 */
int pc_open(pc_cache *c, const char *path, int flags, mode_t mode,
	    pc_file **out);

/*
 * pc_open_fd - open through the cache the file that @fd, a descriptor the
 * caller opened itself, refers to (the preload shim's way: the program's
 * descriptor stays a real kernel fd, the cache opens its own).  @fd stays
 * the caller's, open and unchanged.
 * @flags: O_RDONLY, O_WRONLY or O_RDWR (no more than @fd allows), with any
 *         of O_APPEND, O_SYNC, O_DSYNC as for pc_open; O_TRUNC says open(2)
 *         truncated the file: every cached page is dropped, dirty or not,
 *         and the size is 0.  O_CREAT, O_EXCL, O_CLOEXEC, O_NOATIME,
 *         O_NOCTTY, O_NONBLOCK and O_LARGEFILE are accepted and ignored;
 *         other flags are refused with -EINVAL.
 * Like every open, it revalidates what the cache holds of the file
 * (close-to-open coherence): if the file's size, mtime or ctime differ from
 * what the cache last wrote or saw, another process changed it, and the
 * cache's clean pages of it are dropped (its dirty ones written first).
 * Returns 0, -EINVAL (NULL, bad @flags, @fd < 0, not a regular file),
 * -EISDIR, -EBADF (@fd not open, O_PATH, or its access mode does not allow
 * @flags'), -ENOMEM, or the errno of reopening it (-EACCES ...).
 */
int pc_open_fd(pc_cache *c, int fd, int flags, pc_file **out);

/*
 * pc_open_fd_stat - pc_open_fd for a caller that knows @fd: it opened @fd
 * itself with @flags (so @fd's access mode is @flags', and @fd is not
 * O_PATH), and @st is @fd's fstat(2), taken after that open.  The cache
 * asks the kernel neither again (pc_open_fd's fcntl(F_GETFL) and fstat)
 * and does not check them: the caller vouches for its access mode, as the
 * cache's own descriptors are opened with it.  Returns what pc_open_fd returns (-EINVAL for a NULL @st).
 */
int pc_open_fd_stat(pc_cache *c, int fd, int flags, const struct stat *st,
		    pc_file **out);

/*
 * pc_lock_prepare - the caller is about to take fcntl(2) record locks
 * (F_SETLK, F_SETLKW) on the file of @f: the cache opens now the
 * descriptor it would otherwise open at the file's first commit or short
 * last block's writeback (its buffered one).  Opening a descriptor closes
 * one of the file (moved out of the program's way), and a close(2) of any
 * descriptor of a file drops every record lock the process holds on it:
 * done later, it would drop the caller's locks.  The preload shim calls it
 * before each F_SETLK and F_SETLKW of a managed file.  Cheap once done.
 * Returns 0, -EINVAL (NULL), or the errno of reopening the file (the
 * cache opens it when it needs it then).
 */
int pc_lock_prepare(pc_file *f);

/*
 * pc_file_pos_lock, pc_file_pos_unlock - take and let go the lock of the
 * file position that @f's file shares between processes: a caller that
 * keeps an open file description's offset where the kernel does (the
 * preload shim, for a description a fork or an exec shares) reads the
 * kernel's offset, calls pc_readv or pc_writev at it and sets it again
 * under this lock, so that two processes' calls on one description never
 * use one offset, as under the kernel's f_pos_lock.  One lock per file
 * (every description of it), process-shared in a shared cache; a holder's
 * death lets the next taker have it and does not break the cache.  Held,
 * the caller calls the cache on that file only (pc_readv, pc_writev,
 * pc_size): no other pc_file_pos_lock.  Returns 0, or -EINVAL (NULL).
 */
int pc_file_pos_lock(pc_file *f);
int pc_file_pos_unlock(pc_file *f);

/*
 * pc_close - close a file.  Its pages stay cached (written back later) unless
 * the file was unlinked, in which case its dirty pages are dropped unwritten.
 * A closed file need not keep a descriptor: its pages stay without one.  A
 * write error of pages written back after the close stays with the file,
 * and the next pc_fsync of a later open of it reports it.
 * Returns 0, or a writeback error this open had not yet seen (-EIO,
 * -ENOSPC ...); the handle is freed either way.  -EINVAL for NULL.
 */
int pc_close(pc_file *f);

/*
 * pc_pread - read up to @len bytes at @off.  Returns the number of bytes read
 * (0 at or past end of file), -EBADF if the file was opened O_WRONLY,
 * -EINVAL for a NULL handle or buffer, a negative @off or @len > SSIZE_MAX,
 * -EIO if the device failed to read a page, -ENOMEM if no page frame could
 * be freed for the data (every frame pinned).
 */
ssize_t pc_pread(pc_file *f, void *buf, size_t len, off_t off);

/*
 * pc_pwrite - write @len bytes at @off (at the end of file for O_APPEND),
 * extending the file as needed.  The data is in the cache on return and on
 * the disk after pc_fsync (or at once with O_SYNC/O_DSYNC).  Returns @len,
 * -EBADF for an O_RDONLY file, -EINVAL as for pc_pread, -EFBIG past the
 * largest offset, -EIO if a partial page could not be read first, -ENOMEM as
 * for pc_pread, or (O_SYNC/O_DSYNC) the writeback error.
 * A write is not all or nothing: as with pwrite(2), an error met part way
 * (-EIO or -ENOMEM at a later page) returns the count of bytes written
 * before it, from @off on (they are in the cache, and the size covers
 * them); a call for the rest then returns the error.
 */
ssize_t pc_pwrite(pc_file *f, const void *buf, size_t len, off_t off);

/* Flags for pc_writev. */
#define PC_RW_APPEND	0x1	/* at end of file, as with O_APPEND */
#define PC_RW_NOAPPEND	0x2	/* at *pos even if the file is O_APPEND */
#define PC_RW_DSYNC	0x4	/* this write as with O_DSYNC */
#define PC_RW_SYNC	0x8	/* this write as with O_SYNC */

/*
 * pc_readv - read into @iovcnt buffers, in order, from *@pos on, and
 * advance *@pos by the count read (the caller keeps a file position, as a
 * kernel file description does; pass a copy for a positional read).
 * Returns the count (short at end of file, 0 past it), or -EINVAL (NULL
 * @f or @pos, *@pos < 0, @iovcnt < 0 or > IOV_MAX, a NULL buffer with a
 * length, lengths summing past SSIZE_MAX), and otherwise as pc_pread.
 */
ssize_t pc_readv(pc_file *f, const struct iovec *iov, int iovcnt, off_t *pos);

/*
 * pc_writev - write @iovcnt buffers, gathered in order, as one write: at
 * *@pos, or at end of file when the file is O_APPEND (unless
 * PC_RW_NOAPPEND) or @flags has PC_RW_APPEND; concurrent appends never
 * interleave.  *@pos ends past the data written (for an append, at the
 * end of the data: the file offset write(2) leaves).
 * Returns the count, or -EINVAL (as pc_readv; unknown @flags, or APPEND
 * with NOAPPEND), and otherwise as pc_pwrite (a short count if an error
 * met part way: the bytes before it are written).
 */
ssize_t pc_writev(pc_file *f, const struct iovec *iov, int iovcnt, off_t *pos,
		  int flags);

/*
 * pc_fsync, pc_fdatasync - write the file's dirty pages, wait for them, and
 * make the device durable (fdatasync/fsync of the backing file).  Return 0,
 * or the first writeback error this open has not yet seen (each error is
 * reported once to every file that was open when it happened); the failed
 * pages stay dirty and are retried.  -EINVAL for NULL.
 */
int pc_fsync(pc_file *f);
int pc_fdatasync(pc_file *f);

/*
 * pc_ftruncate - set the file's size to @len, dropping cached pages beyond
 * it.  The file is truncated with ftruncate(2) first: when that fails, its
 * errno is returned and the file and the cache are as they were.  Returns
 * 0, -EINVAL for NULL or a negative @len, -EBADF for O_RDONLY, or the
 * errno of ftruncate(2).  (O_TRUNC at pc_open is the same: it fails with
 * that errno and opens nothing.)
 */
int pc_ftruncate(pc_file *f, off_t len);

/* pc_size - the file's size in bytes, or -EINVAL for NULL. */
off_t pc_size(pc_file *f);

/*
 * pc_unlink - remove @path.  Open files keep working; when the last one is
 * closed, the file's pages are dropped without being written.  Returns 0,
 * -EINVAL, or the errno of unlink(2).
 */
int pc_unlink(pc_cache *c, const char *path);

/*
 * pc_fallocate - fallocate(2) through the cache: @mode 0 or
 * FALLOC_FL_KEEP_SIZE allocates [off, off+len) (mode 0 extends the file
 * to off+len if shorter); any other mode (FALLOC_FL_PUNCH_HOLE,
 * FALLOC_FL_ZERO_RANGE, FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE
 * ...) changes data, so the file is written back first and its cached
 * pages are dropped after.  Returns 0, -EINVAL (NULL, @off < 0, @len <= 0),
 * -EBADF (O_RDONLY), -EFBIG (off+len overflows), -EIO if dirty pages could
 * not be written first (the data-changing modes; nothing was done), a
 * writeback error this open had not seen, or the errno of fallocate(2)
 * (-EOPNOTSUPP, -ENOSPC, -EINVAL ...).
 */
int pc_fallocate(pc_file *f, int mode, off_t off, off_t len);

/*
 * pc_invalidate - write the file's dirty pages back, wait, and drop every
 * cached page of it: for a caller about to let the kernel read or change
 * the file behind the cache (mmap, stdio, an ioctl).  The size is then the
 * one on the disk.  Returns 0, -EINVAL for NULL, a writeback error this
 * open had not seen, or -EIO if pages stayed dirty (their writeback kept
 * failing: they stay cached, nothing written is dropped).
 */
int pc_invalidate(pc_file *f);

/*
 * Files known by a stat(2) result (st_dev, st_ino) rather than an open
 * file, for callers that do their own open(2), unlink(2) and stat(2) (the
 * preload shim).
 *
 * pc_cache_stat - if @c holds the file @st describes open or with pages
 * not yet written back, set st->st_size to the size the cache holds (the
 * disk's may be shorter until writeback).  Returns 0, -ENOENT if @c does
 * not hold it so (@st unchanged; a directory, device, ... is never held),
 * -EINVAL for NULL.
 *
 * pc_cache_unlinked - the file @st describes (a stat taken before the
 * unlink(2), or before a rename(2) over it) lost a name: with st_nlink 1
 * it is gone, and as with pc_unlink its pages are dropped unwritten at
 * its last close.  Returns 0 (also for a file @c does not hold), -EINVAL
 * for NULL.
 *
 * pc_cache_sync_file - write the file @st describes back and wait (without
 * the device flush of pc_fsync); an unlinked file too while it is open
 * (descriptors on it still read it: a child's after fork or exec).
 * Returns 0, -ENOENT if @c does not hold it, -EINVAL for NULL, or a
 * writeback error met now.
 *
 * pc_cache_sync - the same for every file @c holds: when it returns,
 * everything written before the call is on the disk (in the device's
 * cache; pc_fsync makes it durable), and the library holds no closed
 * file open for writing (it can be executed: no ETXTBSY).  Returns 0, the
 * first writeback error met, -ENOMEM, or -EINVAL for NULL.
 */
int pc_cache_stat(pc_cache *c, struct stat *st);
int pc_cache_unlinked(pc_cache *c, const struct stat *st);
int pc_cache_sync_file(pc_cache *c, const struct stat *st);
int pc_cache_sync(pc_cache *c);

/*
 * pc_fadvise - POSIX_FADV_NORMAL, SEQUENTIAL, RANDOM, WILLNEED, DONTNEED or
 * NOREUSE for [off, off+len) (len 0: to end of file).  Returns 0, or -EINVAL
 * for a NULL handle, a negative range or an unknown advice.
 */
int pc_fadvise(pc_file *f, off_t off, off_t len, int advice);

/* Flags for pc_get_page. */
#define PC_GET_NOWAIT 0x1	/* only a page already cached and uptodate */

/*
 * pc_get_page - pin page @index (bytes index*4096 .. +4095) of the file,
 * reading it if needed, for zero-copy reads.  The data stays valid and in
 * place until pc_put_page.  Bytes past end of file read as zeros.  A pinned
 * page is never reclaimed, so pin few and briefly.
 * Returns 0, -EINVAL (NULL, unknown @flags), -EBADF (O_WRONLY), -ENXIO if the
 * page lies wholly past end of file, -EAGAIN (PC_GET_NOWAIT and not cached),
 * -EIO, -ENOMEM.
 */
int pc_get_page(pc_file *f, uint64_t index, int flags, pc_page **out);

/* pc_page_data - the 4 KiB of a pinned page; NULL for NULL. */
void *pc_page_data(pc_page *p);

/* pc_put_page - unpin a page from pc_get_page.  NULL is ignored. */
void pc_put_page(pc_page *p);

/*
 * pc_vmstat - read a counter by its /proc/vmstat name ("nr_free_pages",
 * "pgscan_kswapd", ...).  A "nodeN." prefix ("node1.nr_free_pages") reads
 * one node's share.  Returns 0, -EINVAL for NULL arguments, -ENOENT for an
 * unknown name or node.
 */
int pc_vmstat(pc_cache *c, const char *name, uint64_t *value);

/*
 * pc_vmstat_name - the name of counter @i, for listing them all: returns NULL
 * once @i is past the last.
 */
const char *pc_vmstat_name(unsigned i);

/*
 * pc_thread_set_node - make the calling thread allocate from node @node of
 * @c first (by default threads are spread over the nodes round-robin).
 * Returns 0, or -EINVAL for NULL or a node that does not exist.
 */
int pc_thread_set_node(pc_cache *c, int node);

#ifdef __cplusplus
}
#endif

#endif /* PAGECACHE_H */
