/*
 * arena.h - huge-page-backed arenas of fixed-size objects (arena.c): the
 * metadata a lookup walks (radix-tree nodes, and in them the shadow
 * entries) kept on a few 2 MiB pages instead of malloc's scattered 4 KiB
 * ones.  A leaf: it knows nothing of caches, nodes or trees.
 */
#ifndef PC_ARENA_H
#define PC_ARENA_H

#include "base.h"

struct pc_arena;

/*
 * An arena of objects of @obj_size bytes (rounded up to 64: every object
 * starts a cache line) in @reserve bytes of address space, reserved and
 * not touched.  With @numa_node >= 0 the range is bound to that real node
 * first.  0, -EINVAL (a zero size), -ENOMEM (no address space).
 */
int pc__arena_create(struct pc_arena **out, size_t obj_size, size_t reserve,
		     int numa_node);
/*
 * An arena over @size bytes at @base (2 MiB aligned, in a region that
 * many processes map: shm.h), its struct in @mem (pc__arena_struct_size
 * bytes of the region, zeroed), its lock process-shared and robust
 * (@broken: the region's flag).  No malloc past the range: NULL.  Never
 * destroyed: it goes with the region.
 */
size_t pc__arena_struct_size(void);
struct pc_arena *pc__arena_init_shared(void *mem, void *base, size_t size,
				       size_t obj_size, _Atomic int *broken);
/* Unmap it all; every object must have been freed or be forgotten. */
void pc__arena_destroy(struct pc_arena *a);
/* A zeroed object; NULL only when the reservation is used up and malloc
 * fails too.  Any thread. */
void *pc__arena_alloc(struct pc_arena *a);
/* Give an object back (from pc__arena_alloc of @a).  Any thread. */
void pc__arena_free(struct pc_arena *a, void *obj);

#endif /* PC_ARENA_H */
