/*
 * tree.h - the per-file radix tree (tree.c): 64 slots a level, 3 tags.
 * A leaf module: it knows pages only as pointers with the low bit clear.
 */
#ifndef PC_TREE_H
#define PC_TREE_H

#include "base.h"
#include "ebr.h"

/*
 * Items are pointers with the low bit clear (struct pc_page *) or value
 * entries with the low bit set (shadow entries of evicted pages).  Writers
 * (insert, store, delete, tag changes) hold the owner's tree lock.  Lookups
 * (lookup, gang lookups) may run concurrently with writers inside a read
 * section (pc__tree_read_lock: an epoch of the tree's reclamation domain,
 * ebr.h, whose readers may be in any process): they see each slot either
 * before or after a change; nodes are freed once no reader can hold them.
 * Tags seen by readers may be stale; writers see them exact.  "RCU read
 * section" below means such a section.
 */
enum { PC_TAG_DIRTY, PC_TAG_WRITEBACK, PC_TAG_TOWRITE, PC_TREE_TAGS };

struct pc_tree_node;
struct pc_arena;
struct pc_tree {
	_Atomic(struct pc_tree_node *) root;
	uint64_t nr_items;		/* writer lock; pages and values */
	uint64_t nr_values;		/* writer lock; value entries */
	struct pc_arena *arena;		/* read-only: where nodes come from;
					   NULL: malloc */
	struct pc_ebr *ebr;		/* read-only: where they are retired */
};

static inline bool pc_tree_is_value(const void *item)
{
	return ((uintptr_t)item & 1) != 0;
}
static inline void *pc_tree_mkvalue(uint64_t v)
{
	return (void *)(uintptr_t)((v << 1) | 1);
}
static inline uint64_t pc_tree_value(const void *item)
{
	return (uint64_t)(uintptr_t)item >> 1;
}

/* Nodes from malloc, retired into the process's own domain. */
void pc__tree_init(struct pc_tree *t);
/* Nodes from @arena (arena.h: huge pages; NULL: malloc), back there when
 * freed; retired into @ebr, the domain of every tree of the cache. */
void pc__tree_init_arena(struct pc_tree *t, struct pc_arena *arena,
			 struct pc_ebr *ebr);
/* A read section on @t's domain (sections of one domain nest). */
static inline void pc__tree_read_lock(const struct pc_tree *t)
{
	pc__ebr_read_lock(t->ebr);
}
static inline void pc__tree_read_unlock(const struct pc_tree *t)
{
	pc__ebr_read_unlock(t->ebr);
}
/* Free the tree nodes retired into @e that no reader can hold now,
 * without waiting (a writer does it every so often by itself); how many. */
uint64_t pc__tree_reclaim(struct pc_ebr *e);
/* Wait until every reader of @e in a section at the call has left,
 * freeing all the tree nodes retired before it; not inside a section.
 * How many. */
uint64_t pc__tree_barrier(struct pc_ebr *e);
/* Bytes of one node: what an arena for trees must hand out. */
size_t pc__tree_node_size(void);
/* Free every node at once: no reader or writer may be left. */
void pc__tree_destroy(struct pc_tree *t);
/* The item at @index or NULL.  RCU read section or writer lock. */
void *pc__tree_lookup(struct pc_tree *t, uint64_t index);
/*
 * The same, and in *slot where the item sits (NULL when no leaf holds
 * @index): in the same RCU read section, pc__tree_slot_reload(*slot)
 * re-reads it without walking again (the kernel's xas_reload).  An item
 * is only ever in the one slot for its index, and a leaf is emptied
 * before it is unlinked, so a reload equal to the item means the item is
 * still in the tree.
 */
void *pc__tree_lookup_slot(struct pc_tree *t, uint64_t index,
			   _Atomic(void *) **slot);
static inline void *pc__tree_slot_reload(_Atomic(void *) *slot)
{
	return slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
}
/*
 * Insert @item (a page, not a value) at @index.  An empty slot or a value
 * entry is replaced: the value is returned in *old (NULL if empty).
 * Returns 0, -EEXIST if a page is there, -ENOMEM.  Writer lock.
 */
int pc__tree_insert(struct pc_tree *t, uint64_t index, void *item, void **old);
/*
 * Store @item at an occupied or empty @index and return what was there.
 * NULL deletes (and frees emptied nodes after a grace period).  Storing a
 * page over a page keeps the slot's tags; storing a value or NULL clears
 * them.  -ENOMEM is impossible when the slot was occupied; for an empty
 * slot and a non-NULL item the return is (void *)-1 on allocation failure.
 * Writer lock.
 */
void *pc__tree_store(struct pc_tree *t, uint64_t index, void *item);
/* tag_get and tagged: RCU read section or writer lock, like lookups. */
bool pc__tree_tag_get(struct pc_tree *t, uint64_t index, int tag);
void pc__tree_tag_set(struct pc_tree *t, uint64_t index, int tag);	/* slot must hold a page */
void pc__tree_tag_clear(struct pc_tree *t, uint64_t index, int tag);
bool pc__tree_tagged(struct pc_tree *t, int tag);	/* any item tagged */
/*
 * Gang lookups: up to @max items with index in [first, last], in index
 * order, into items[] and indices[] (indices may be NULL).  Returns the
 * count.  The plain one returns pages and values; the tagged one only pages
 * carrying @tag.  RCU read section or writer lock.
 */
unsigned pc__tree_gang(struct pc_tree *t, uint64_t first, uint64_t last,
		       void **items, uint64_t *indices, unsigned max);
unsigned pc__tree_gang_tag(struct pc_tree *t, uint64_t first, uint64_t last,
			   int tag, void **items, uint64_t *indices,
			   unsigned max);
/*
 * Set @to on up to @max items in [first, last] that carry @from; returns how
 * many were tagged (the kernel's tag_tagged_items).  Writer lock.
 */
unsigned pc__tree_tag_range(struct pc_tree *t, uint64_t first, uint64_t last,
			    int from, int to, unsigned max);
/* Tests: fail the nth node allocation from now, once; -1: off. */
void pc__tree_fail_alloc(long nth);
/* Value entries stay below 2^62 (workingset packs 55 bits of age), so
 * none equals store's (void *)-1 failure. */

#endif /* PC_TREE_H */
