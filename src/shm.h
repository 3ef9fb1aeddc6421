/*
 * shm.h - a region of memory shared between processes, mapped at one
 * address in each of them (shm.c).  A leaf: it knows nothing of caches.
 *
 * The region is the "physical memory" of a cache that many processes use
 * (docs/design.md, "One cache for many processes"): a memfd, or a file
 * under /dev/shm when it has a name, sized once and touched only where it
 * is used.  Every process maps it at the address recorded in its header,
 * so a pointer into it means the same thing in all of them, and nothing
 * stored in it may point anywhere else: not into a process's heap, not at
 * a function (libraries load at other addresses in other processes).
 *
 * A process that cannot map the region at that address (something of its
 * own is there) does not attach: pc__shm_attach says -EEXIST and the
 * caller must not run beside the cache incoherently.
 *
 * A region records its user's layout number (what the region holds, in
 * what form: share.c's REGION_LAYOUT for a shared cache), given at create;
 * attach refuses a region of another (-EPROTO) before it maps it.
 *
 * This file keeps no table of the regions a process maps: create and
 * attach give the caller the region and this process's descriptor of it
 * (close-on-exec: to pass on), and the caller keeps both until it
 * detaches (local.c keeps them in the process's entry for the cache).
 */
#ifndef PC_SHM_H
#define PC_SHM_H

#include "base.h"
#include "lock.h"

/* Root pointers a region's user keeps in its header (pc__shm_root). */
#define PC_SHM_ROOTS 8

struct pc_shm;

/*
 * Make a region of @size bytes (rounded up to 2 MiB; the header and the
 * allocator's state take the first 2 MiB) and map it, read-write, at an
 * address chosen for it (shm.c says where).  @name NULL: an anonymous
 * memfd, reached by fork or by its descriptor; else the region is the file
 * /dev/shm/pagecache-@name, made with O_EXCL and mode 0600.  Returns 0,
 * -EINVAL (a bad name, a size of 0 or too large for the window), -EEXIST
 * (a region of that name exists), -ENOMEM (no free address in the
 * window), or what memfd_create, shm_open or ftruncate said.  *@fd:
 * this process's descriptor of it (-1 on failure).  @layout: the number
 * attach checks.
 */
int pc__shm_create(struct pc_shm **out, int *fd, const char *name,
		   size_t size, uint64_t layout);
/*
 * Map the region of descriptor @fd (inherited, or received) at its
 * address.  0; -EACCES (the file is not the caller's: its owner is another
 * uid, or group or others may open it); -EPROTO (not a region, or not one
 * of @layout: made by an incompatible build); -EEXIST (the address is
 * taken in this process); -EBUSY (already attached here).  @fd is dup'ed
 * into *@nfd: the caller keeps its own.
 */
int pc__shm_attach_fd(struct pc_shm **out, int *nfd, int fd,
		      uint64_t layout);
/* The same for the region named @name.  -ENOENT when there is none. */
int pc__shm_attach(struct pc_shm **out, int *fd, const char *name,
		   uint64_t layout);
/*
 * A look at the region @name, not an attach: mapped read-only at its
 * address, in no table of this process (it writes and locks nothing of
 * it); *@created is when it was made (seconds since the epoch).  Errors
 * as pc__shm_attach's (-EPROTO: not of @layout).  pc__shm_unlook unmaps it.
 */
int pc__shm_look(struct pc_shm **out, const char *name, int64_t *created,
		 uint64_t layout);
void pc__shm_unlook(struct pc_shm *s);
/*
 * @fn on the name of every region of this user in SHM_DIR (those being
 * made are not named yet); stops at the first non-zero return, which it
 * returns; otherwise the count, or -errno of opendir.
 */
int pc__shm_list(int (*fn)(const char *name, void *arg), void *arg);
/* Unmap the region in this process and close @fd, its descriptor (-1:
 * none); the region lives on in the others (and as long as its name, for
 * a named one). */
void pc__shm_detach(struct pc_shm *s, int fd);
/* Remove @name (the region lives on while mapped).  0 or -errno. */
int pc__shm_unlink(const char *name);
/*
 * Remove @s's name if it still names @s: a region whose name was taken
 * from it (its users gave it up as broken, and made a new one under the
 * name) leaves the new one's alone (-ESTALE).  0 or -errno.
 */
int pc__shm_unlink_own(struct pc_shm *s);

/* Where it starts and how large it is. */
void *pc__shm_base(const struct pc_shm *s);
size_t pc__shm_size(const struct pc_shm *s);
/* Is @p inside the region? */
bool pc__shm_contains(const struct pc_shm *s, const void *p);
/*
 * Root slot @i (< PC_SHM_ROOTS): where the region's user keeps the
 * pointers it finds its objects by.  The slots are atomic pointers.
 */
_Atomic(void *) *pc__shm_root(struct pc_shm *s, unsigned i);

/*
 * A zeroed object of @size bytes (at most 1 MiB), 64-byte aligned, from
 * the region; NULL when the region is full.  Any process, any thread.
 * pc__shm_free gives it back for reuse by any process (the size must be
 * the one asked).  Memory is never given back to the system: freed
 * objects are reused first.
 */
void *pc__shm_alloc(struct pc_shm *s, size_t size);
void pc__shm_free(struct pc_shm *s, void *p, size_t size);
/*
 * @size bytes (rounded up to 2 MiB), aligned to 2 MiB, never freed while
 * the region lives: a cache's frames and descriptors.  Untouched: the
 * pages come into being when written.  NULL when the region is full.
 */
void *pc__shm_reserve(struct pc_shm *s, size_t size);
/* Bytes handed out so far (objects and reservations), of pc__shm_size. */
size_t pc__shm_used(struct pc_shm *s);

/*
 * Broken: a process died holding one of the region's locks, so what that
 * lock guards may be half-updated.  Set once, never cleared; every user of
 * the region looks at it and stops trusting the region's contents.
 * pc__shm_broken_flag is where the region's locks record it
 * (pc__lock_init_shared).
 */
bool pc__shm_broken(const struct pc_shm *s);
_Atomic int *pc__shm_broken_flag(struct pc_shm *s);

#ifdef PC_DEBUG
/* Tests: take the allocator's lock and return (a test hook that parks a
 * process inside a region lock, to be killed there). */
void pc__shm_test_hold_lock(struct pc_shm *s);
#endif

#endif /* PC_SHM_H */
