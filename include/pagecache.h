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
 *            nodes=N|auto       memory nodes the budget is split into (1)
 *            io=uring|sync      the I/O backend (uring, falling back to sync)
 *            readahead.max=SIZE the largest readahead window
 *            writeback.* reclaim.* lru.* numa.* page.* cache.* policies
 *
 * The whole budget is allocated and touched here, once.
 * Returns 0, or -EINVAL for a NULL @out, an unknown key or a bad value, a
 * budget too small for the configuration (a message on stderr says why), or
 * -ENOMEM when the budget cannot be allocated.
 */
int pc_cache_create(pc_cache **out, const char *config);

/*
 * pc_cache_destroy - write back every dirty page, stop the threads, free all.
 * Files still open are closed.  Returns 0, the first writeback error met
 * (the cache is freed all the same), or -EINVAL for NULL.
 */
int pc_cache_destroy(pc_cache *c);

/*
 * pc_open - open @path through the cache.
 * @flags: O_RDONLY, O_WRONLY or O_RDWR, with any of O_CREAT, O_EXCL, O_TRUNC,
 *         O_APPEND, O_SYNC, O_DSYNC.  Other flags are refused with -EINVAL.
 * @mode:  as for open(2) when O_CREAT creates the file.
 * Opens of one path share one mapping (by device and inode), so they see
 * each other's writes at once.  Returns 0, -EINVAL, or the errno of open(2)
 * (-ENOENT, -EEXIST, -EACCES, -EISDIR ...).
 */
int pc_open(pc_cache *c, const char *path, int flags, mode_t mode,
	    pc_file **out);

/*
 * pc_close - close a file.  Its pages stay cached (written back later) unless
 * the file was unlinked, in which case its dirty pages are dropped unwritten.
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
 */
ssize_t pc_pwrite(pc_file *f, const void *buf, size_t len, off_t off);

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
 * it.  Returns 0, -EINVAL for NULL or a negative @len, -EBADF for O_RDONLY,
 * or the errno of ftruncate(2).
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
