/*
 * mem.h - what a cache is made of: the memory and lock provider (local.c).
 *
 * A private cache is made of malloc's memory, anonymous mappings and this
 * process's locks; a shared one of its region (shm.c) and process-shared,
 * robust locks (lock.h).  The choice is made once, by what the cache is
 * (c->shared, read-only from create on): pc__mem(c) is its provider, and
 * node.c, resize.c and populate.c ask it, never which one it is.  The
 * table is indexed rather than pointed to from the cache, since a shared
 * cache's struct may hold no pointer at a function (share.c).  The cache's
 * objects, locks and condition variables are made through it
 * (pc__cache_zalloc ..., below).
 */
#ifndef PC_MEM_H
#define PC_MEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct pc_cache;
struct pc_config;
struct pc_lock;
struct pc_node;
struct pc_rwlock;

struct pc_mem_ops {
	/* Zeroed, 64-byte aligned memory for an object (NULL: none); its
	 * return, with the size given. */
	void *(*zalloc)(struct pc_cache *c, size_t size);
	void (*free)(struct pc_cache *c, void *p, size_t size);
	void (*lock_init)(struct pc_cache *c, struct pc_lock *l, int rank,
			  int stat);
	void (*rwlock_init)(struct pc_rwlock *l, int rank);
	bool pshared;		/* condition variables: process-shared */
	/*
	 * @len bytes, 2 MiB aligned and untouched (frames, descriptors),
	 * or NULL; *@map and *@map_len what to munmap at the end (NULL: a
	 * region's, which goes with it).
	 */
	void *(*reserve)(struct pc_cache *c, size_t len, void **map,
			 size_t *map_len);
	/* Sized for the budget when memory.max is not set (a region): no
	 * room to grow to give up when a reservation fails. */
	bool fixed;
	/* @n's tree-node arena of @bytes (on NUMA node @numa, -1: any): 0
	 * or -errno; and its end (pc__nodes_fini). */
	int (*arena)(struct pc_cache *c, struct pc_node *n, size_t bytes,
		     int numa);
	void (*arena_fini)(struct pc_node *n);
	bool hugetlb;		/* the data may be on hugetlbfs pages */
	/* Memory back to the system: madvise's advice (anonymous memory:
	 * MADV_DONTNEED; a region's memfd: MADV_REMOVE, a hole punched, gone
	 * from every process's mapping, which MADV_DONTNEED only unmaps). */
	int discard;
	/* Faulted in 4 KiB at a time (shmem): populate.c collapses each
	 * step behind it into huge pages (MADV_COLLAPSE). */
	bool collapse;
};

extern const struct pc_mem_ops pc__mem_ops[2];	/* private, shared */

static inline const struct pc_mem_ops *pc__mem_for(bool shared)
{
	return &pc__mem_ops[shared];
}

#define pc__mem(c) pc__mem_for((c)->shared)

/*
 * Memory for the cache's objects, through its provider (local.c): zeroed,
 * 64-byte aligned; in the region for a shared cache (at most 1 MiB an
 * object), from malloc else.  NULL when there is none.  pc__cache_free
 * takes the size given.
 */
void *pc__cache_zalloc(struct pc_cache *c, size_t size);
void pc__cache_free(struct pc_cache *c, void *p, size_t size);
/* The cache's locks and condition variables: process-shared and robust in
 * a shared cache (lock.h), as pc__lock_init else. */
void pc__cache_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			 int stat);
void pc__cache_rwlock_init(struct pc_cache *c, struct pc_rwlock *l, int rank);
void pc__cache_cond_init(struct pc_cache *c, pthread_cond_t *cv,
			 bool monotonic);

#endif /* PC_MEM_H */
