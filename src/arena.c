/*
 * arena.c - huge-page-backed arenas of fixed-size objects.
 *
 * What it owns: struct pc_arena, one address range reserved at create
 * (MAP_NORESERVE, MADV_HUGEPAGE, 2 MiB aligned, bound to a real NUMA node
 * when asked), and the objects carved out of it.  The cache keeps one
 * arena per node for its radix-tree nodes (node.c); a lookup that walks
 * four levels of a tree then touches four lines on one or two huge pages
 * instead of four malloc'ed 4 KiB pages, each a TLB miss of its own at
 * 8 GiB.
 *
 *   base                                  next              base + size
 *   |[obj][obj][obj][obj] ... [obj][obj]  |  never touched ...          |
 *     ^free ──> [obj] ──> [obj] ──> NULL      (objects given back)
 *
 *   alloc: the free list's head, else the object at `next` (the range
 *          is touched only as far as `next` has gone: RSS follows use),
 *          else - the reservation used up - malloc (counted in overflow);
 *          always zeroed.
 *   free:  an object of the range goes on the free list, an overflow one
 *          back to free().  Memory of the range is never given back to
 *          the system before destroy: freed objects are reused first.
 *
 * Objects are 64-byte aligned and sized in whole lines (the reservation
 * starts on a 2 MiB boundary), so a tree node's slots start a line.
 *
 * A shared cache's arena (pc__arena_init_shared) lives in its region:
 * its struct and its range are the region's, its lock process-shared, and
 * it never falls back to malloc (a node from a process's heap would mean
 * nothing to the others): past its range, alloc returns NULL.
 *
 * Locks: `lock` (a leaf: taken under a mapping's tree lock, and by
 * whoever frees retired tree nodes, tree.c; nothing is taken under it)
 * protects next, free
 * and overflow; base, size, obj_size, map and map_len are read-only after
 * create.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arena.h"
#include "lock.h"
#include "numa_topology.h"

#define ARENA_ALIGN (2ull << 20)
#define LINE 64

struct free_obj {
	struct free_obj *next;
};

struct pc_arena {
	char *base;			/* read-only: 2 MiB aligned */
	size_t size;			/* read-only: bytes reserved from base */
	size_t obj_size;		/* read-only: whole lines */
	char *map;			/* read-only: what mmap returned */
	size_t map_len;

	struct pc_lock lock;		/* leaf */
	size_t next;			/* lock: first byte never handed out */
	struct free_obj *free;		/* lock */
	uint64_t overflow;		/* lock: objects from malloc */
	bool shared;			/* read-only: in a region, no malloc */
};

size_t pc__arena_struct_size(void)
{
	return sizeof(struct pc_arena);
}

struct pc_arena *pc__arena_init_shared(void *mem, void *base, size_t size,
				       size_t obj_size, _Atomic int *broken)
{
	struct pc_arena *a = mem;

	a->obj_size = (obj_size + LINE - 1) / LINE * LINE;
	a->base = base;
	a->size = size;
	a->shared = true;
	pc__lock_init_shared(&a->lock, PC_RANK_ARENA, broken);
	return a;
}

int pc__arena_create(struct pc_arena **out, size_t obj_size, size_t reserve,
		     int numa_node)
{
	struct pc_arena *a;
	uintptr_t start;

	*out = NULL;
	if (!obj_size)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->obj_size = (obj_size + LINE - 1) / LINE * LINE;
	reserve = (reserve + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
	if (reserve < ARENA_ALIGN)
		reserve = ARENA_ALIGN;
	a->map_len = reserve + ARENA_ALIGN;
	a->map = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->map == MAP_FAILED) {
		free(a);
		return -ENOMEM;
	}
	start = ((uintptr_t)a->map + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);
	a->base = (char *)start;
	a->size = reserve;
	madvise(a->base, a->size, MADV_HUGEPAGE);
	if (numa_node >= 0)
		pc__numa_bind(a->base, a->size, numa_node);
	pc__lock_init(&a->lock, NULL, PC_RANK_ARENA, -1);
	*out = a;
	return 0;
}

void pc__arena_destroy(struct pc_arena *a)
{
	if (!a)
		return;
	pc__lock_destroy(&a->lock);
	munmap(a->map, a->map_len);
	free(a);
}

static bool in_range(const struct pc_arena *a, const void *obj)
{
	return (const char *)obj >= a->base && (const char *)obj < a->base + a->size;
}

void *pc__arena_alloc(struct pc_arena *a)
{
	void *obj = NULL;

	pc__lock(&a->lock);
	if (a->free) {
		obj = a->free;
		a->free = a->free->next;
	} else if (a->next + a->obj_size <= a->size) {
		obj = a->base + a->next;
		a->next += a->obj_size;
	} else {
		a->overflow++;
	}
	pc__unlock(&a->lock);
	if (!obj && a->shared)
		return NULL;
	if (!obj) {
		obj = aligned_alloc(LINE, a->obj_size);
		if (!obj)
			return NULL;
	}
	memset(obj, 0, a->obj_size);
	return obj;
}

void pc__arena_free(struct pc_arena *a, void *obj)
{
	struct free_obj *f = obj;

	if (!obj)
		return;
	if (!in_range(a, obj)) {
		free(obj);
		return;
	}
	pc__lock(&a->lock);
	f->next = a->free;
	a->free = f;
	pc__unlock(&a->lock);
}
