/*
 * tree.c - the per-file page index: a radix tree with tags, read under
 * RCU (the kernel's radix tree / xarray, cut down to what we need).
 *
 * What it owns: struct pc_tree (tree.h) and its nodes.  Items are page
 * pointers (low bit clear) or value entries (low bit set: shadows).
 *
 * A node has 64 slots (6 bits of the index a level), a "present" bitmap
 * (bit i: slot i is in use) and one 64-bit bitmap per tag.  In a leaf
 * (shift 0) a slot holds an item and tag bit i says item i carries the
 * tag; in an inner node a slot holds a child and tag bit i says "some item
 * below child i carries the tag".  A tag is set bottom-up until a bit is
 * found already set, cleared bottom-up until a bitmap stays non-zero, and
 * "any item tagged" is the root's bitmap.  Gang lookups jump from set bit
 * to set bit (present, or the tag's), so empty and untagged subtrees cost
 * one bitmap word each.  Page 151881 = 37<<12 | 5<<6 | 9, dirty:
 *
 *   t->root --> root, shift 12 (covers 0 .. 2^18-1)
 *               slots:   [0]   [1] ...  [37] ...  [63]
 *               present:  1     0        1         0
 *               DIRTY:    0     0        1 <-.     0
 *                                |           |   (bit: "something dirty
 *                                v           |    below slot 37")
 *               node, shift 6, offset 37 ----'
 *               slots:   ...  [5] ...        DIRTY bit 5 <-.
 *                              |                           |
 *                              v                           |
 *               leaf, shift 0, offset 5 -------------------'
 *               slots:   ...  [9] = struct pc_page *     DIRTY bit 9
 *
 * The height is the root's shift.  It grows (a new root whose slot 0 is
 * the old root) when an index beyond the root's range is stored, and
 * shrinks (the child in slot 0 becomes the root) when the root has nothing
 * but slot 0.  A node's shift never changes; a node that empties is
 * unlinked and freed.  The whole uint64_t range is covered at shift 60
 * (11 levels; the top node uses 16 of its slots).
 *
 * What protects what:
 *   - writers (insert, store, tag set/clear, tag_range) are serialized by
 *     the caller's tree lock; a node's offset and parent, and the tree's
 *     nr_items/nr_values, are read and written only by them;
 *   - readers (lookup, gang, gang_tag, tag_get, tagged) run inside the
 *     caller's pc__tree_read_lock() section, concurrently with a writer.
 *     Root, child and item pointers are C11 atomics, stored with release
 *     (a node is filled in before it is linked), loaded with acquire.
 *     Bitmaps are relaxed atomics: exact for writers, maybe stale for
 *     readers, who re-check the slot they lead to (a tagged gang skips a
 *     slot that is empty or holds a value);
 *   - shift is written once, before the node is published.  Readers do
 *     not read it below the root: a child's shift is its parent's less
 *     6, so a lookup touches, per level, only the line of the slot it
 *     follows (the slots start a line: a node is 64-byte aligned with its
 *     header in the first line), as the kernel's xarray walk does less
 *     one line a level;
 *   - an unlinked node is retired to the tree's reclamation domain (ebr.c:
 *     epochs whose readers may be in any process) and freed once no
 *     reader can hold it, so a reader may go on walking it: it still
 *     points at live children (shrink leaves the old root's slot 0 in
 *     place).  So an item present for the whole of a gang lookup is always
 *     found by it.  The writer that retires frees what is due when at
 *     least RECLAIM_BATCH nodes wait (pc__tree_reclaim; the free does not
 *     wait for readers); pc__tree_barrier frees everything, waiting.
 *
 * Allocation failure: insert and store first count and allocate every node
 * they will need, so -ENOMEM leaves the tree as it was.
 *
 * Where nodes live: a tree given an arena (pc__tree_init_arena: the cache
 * gives each mapping its node's arena, arena.c) takes its nodes from
 * there - huge pages, so a four-level walk misses the TLB once, not four
 * times - and gives them back there when they are freed; a tree without
 * one uses malloc.  Each node remembers where it came from.  A tree made
 * with pc__tree_init (no cache: the tests) retires into one domain of the
 * process, made at first use.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "tree.h"

#define RECLAIM_BATCH 64	/* retired nodes that make a writer free */

#define TREE_SHIFT 6
#define TREE_SLOTS (1u << TREE_SHIFT)
#define TREE_MASK ((uint64_t)TREE_SLOTS - 1)
#define TREE_MAX_SHIFT 60		/* top node of a full-range tree */
#define TREE_MAX_PATH (TREE_MAX_SHIFT / TREE_SHIFT + 1)

struct pc_tree_node {
	/* line 0: the header */
	uint8_t shift;			/* bits of index below: set once */
	uint8_t offset;			/* writer: slot in parent */
	struct pc_tree_node *parent;	/* writer: NULL for the root */
	_Atomic uint64_t present;	/* bit i: slots[i] in use; relaxed */
	_Atomic uint64_t tags[PC_TREE_TAGS];	/* relaxed; exact for writers */
	struct pc_arena *arena;		/* where it came from; NULL: malloc */
	/* lines 1-8: items or children, eight to a line */
	_Atomic(void *) slots[TREE_SLOTS] __attribute__((aligned(64)));
	struct pc_ebr_head ebr;		/* retired: waiting to be freed */
} __attribute__((aligned(64)));

#define ld_acq(p) atomic_load_explicit((p), memory_order_acquire)
#define st_rel(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ld_rlx(p) atomic_load_explicit((p), memory_order_relaxed)
#define st_rlx(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define ld_tag(n, tag) ld_rlx(&(n)->tags[tag])
#define st_tag(n, tag, v) st_rlx(&(n)->tags[tag], (v))

static inline uint64_t bit(unsigned off)
{
	return (uint64_t)1 << off;
}

/* Largest index under a node of @shift (relative to its base). */
static inline uint64_t shift_maxindex(unsigned shift)
{
	return shift + TREE_SHIFT >= 64 ? UINT64_MAX
					: (bit(shift + TREE_SHIFT) - 1);
}

/* Slots of a node of @shift that an index can reach: 64, or 16 at top. */
static inline unsigned shift_nslots(unsigned shift)
{
	return shift + TREE_SHIFT > 64 ? 1u << (64 - shift) : TREE_SLOTS;
}

/* The smallest root shift whose range holds @index. */
static unsigned index_shift(uint64_t index)
{
	unsigned s = 0;

	while (s < TREE_MAX_SHIFT && (index >> (s + TREE_SHIFT)) != 0)
		s += TREE_SHIFT;
	return s;
}

static inline unsigned slot_off(const struct pc_tree_node *n, uint64_t index)
{
	return (unsigned)((index >> n->shift) & TREE_MASK);
}

/* ------------------------------------------------------------------ */
/* Nodes: allocation (with a test hook to fail one), freeing.          */

static _Atomic long alloc_fail_at = -1;	/* test hook; atomic */

/*
 * Test hook (tests/test_tree.c): make the node allocation @nth from now
 * (0: the next one) fail, once; -1 disarms.
 */
void pc__tree_fail_alloc(long nth);
void pc__tree_fail_alloc(long nth)
{
	atomic_store_explicit(&alloc_fail_at, nth, memory_order_relaxed);
}

size_t pc__tree_node_size(void)
{
	return sizeof(struct pc_tree_node);
}

/* A zeroed node (every slot and tag word a valid atomic zero). */
static struct pc_tree_node *node_alloc(struct pc_tree *t)
{
	long f = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
	struct pc_tree_node *n;

	if (__builtin_expect(f >= 0, 0)) {
		atomic_store_explicit(&alloc_fail_at, f - 1,
				      memory_order_relaxed);
		if (f == 0)
			return NULL;
	}
	if (t->arena) {
		n = pc__arena_alloc(t->arena);
		if (n)
			n->arena = t->arena;
		return n;
	}
	n = aligned_alloc(_Alignof(struct pc_tree_node), sizeof(*n));
	if (n)
		memset(n, 0, sizeof(*n));
	return n;
}

/* Give a node back where it came from, at once (no reader can see it). */
static void node_free_now(struct pc_tree_node *n)
{
	if (n->arena)
		pc__arena_free(n->arena, n);
	else
		free(n);
}

static void node_free_cb(struct pc_ebr_head *h, void *unused)
{
	(void)unused;
	node_free_now((struct pc_tree_node *)((char *)h -
					      offsetof(struct pc_tree_node, ebr)));
}

/* Free an unlinked node once every reader that may see it has left. */
static void node_retire(struct pc_tree *t, struct pc_tree_node *n)
{
	pc__ebr_retire(t->ebr, &n->ebr);
	if (pc__ebr_pending(t->ebr) >= RECLAIM_BATCH)
		pc__tree_reclaim(t->ebr);
}

uint64_t pc__tree_reclaim(struct pc_ebr *e)
{
	return pc__ebr_reclaim(e, node_free_cb, NULL);
}

uint64_t pc__tree_barrier(struct pc_ebr *e)
{
	return pc__ebr_barrier(e, node_free_cb, NULL);
}

/* Nodes allocated up front by an insertion, so that it cannot fail midway. */
struct node_pool {
	unsigned nr;
	struct pc_tree_node *n[2 * TREE_MAX_PATH];
};

static int pool_fill(struct pc_tree *t, struct node_pool *p, unsigned nr)
{
	PC_ASSERT(nr <= sizeof(p->n) / sizeof(p->n[0]));
	for (p->nr = 0; p->nr < nr; p->nr++) {
		p->n[p->nr] = node_alloc(t);
		if (!p->n[p->nr]) {
			while (p->nr)
				node_free_now(p->n[--p->nr]);
			return -ENOMEM;
		}
	}
	return 0;
}

static struct pc_tree_node *pool_take(struct node_pool *p, unsigned shift,
				      struct pc_tree_node *parent,
				      unsigned offset)
{
	struct pc_tree_node *n;

	PC_ASSERT(p->nr > 0);
	n = p->n[--p->nr];
	n->shift = (uint8_t)shift;
	n->parent = parent;
	n->offset = (uint8_t)offset;
	return n;
}

/* ------------------------------------------------------------------ */
/* Tags, writer side: propagate up the parents.                        */

static void node_tag_set(struct pc_tree_node *n, unsigned off, int tag)
{
	while (n) {
		uint64_t t = ld_tag(n, tag);

		if (t & bit(off))
			return;	/* so every ancestor has its bit too */
		st_tag(n, tag, t | bit(off));
		off = n->offset;
		n = n->parent;
	}
}

static void node_tag_clear(struct pc_tree_node *n, unsigned off, int tag)
{
	while (n) {
		uint64_t t = ld_tag(n, tag);

		if (!(t & bit(off)))
			return;
		t &= ~bit(off);
		st_tag(n, tag, t);
		if (t)
			return;	/* the subtree is still tagged */
		off = n->offset;
		n = n->parent;
	}
}

static void node_tags_clear(struct pc_tree_node *leaf, unsigned off)
{
	for (int tag = 0; tag < PC_TREE_TAGS; tag++)
		node_tag_clear(leaf, off, tag);
}

/* ------------------------------------------------------------------ */
/* Walking down, creating, deleting (writer side).                     */

/* Fill or empty slot @off of @n: the pointer, then its present bit. */
static void slot_set(struct pc_tree_node *n, unsigned off, void *e)
{
	uint64_t p = ld_rlx(&n->present);

	st_rel(&n->slots[off], e);
	st_rlx(&n->present, e ? p | bit(off) : p & ~bit(off));
}

/*
 * The leaf that holds @index, or NULL if the path is not there.  Only the
 * root's shift is read (its header line is hot); below it, each level
 * touches the one line of the slot it follows.
 */
static struct pc_tree_node *leaf_find(struct pc_tree *t, uint64_t index)
{
	struct pc_tree_node *n = ld_acq(&t->root);
	unsigned shift;

	if (!n)
		return NULL;
	shift = n->shift;
	if (index > shift_maxindex(shift))
		return NULL;
	while (shift > 0) {
		n = ld_acq(&n->slots[(index >> shift) & TREE_MASK]);
		if (!n)
			return NULL;
		shift -= TREE_SHIFT;
	}
	return n;
}

/* How many nodes leaf_create() will allocate for @index. */
static unsigned nodes_needed(struct pc_tree *t, uint64_t index)
{
	struct pc_tree_node *n = ld_acq(&t->root);
	unsigned s = index_shift(index);

	if (!n)
		return s / TREE_SHIFT + 1;
	if (s > n->shift)	/* grow, then a fresh path below the top */
		return (s - n->shift) / TREE_SHIFT + s / TREE_SHIFT;
	while (n->shift > 0) {
		struct pc_tree_node *c = ld_acq(&n->slots[slot_off(n, index)]);

		if (!c)
			return n->shift / TREE_SHIFT;
		n = c;
	}
	return 0;
}

/*
 * The leaf for @index, growing the tree and creating the path as needed.
 * NULL (and the tree untouched) if a node could not be allocated.  New
 * nodes are empty when linked, so readers see nothing until the item is.
 */
static struct pc_tree_node *leaf_create(struct pc_tree *t, uint64_t index)
{
	struct node_pool pool;
	struct pc_tree_node *n;
	unsigned s = index_shift(index);

	if (pool_fill(t, &pool, nodes_needed(t, index)) < 0)
		return NULL;
	n = ld_acq(&t->root);
	if (!n) {
		n = pool_take(&pool, s, NULL, 0);
		st_rel(&t->root, n);
	}
	while (n->shift < s) {	/* grow: the old root becomes slot 0 */
		struct pc_tree_node *top;

		top = pool_take(&pool, n->shift + TREE_SHIFT, NULL, 0);
		slot_set(top, 0, n);
		for (int tag = 0; tag < PC_TREE_TAGS; tag++)
			if (ld_tag(n, tag))
				st_tag(top, tag, 1);
		n->parent = top;
		n->offset = 0;
		st_rel(&t->root, top);
		n = top;
	}
	while (n->shift > 0) {
		unsigned off = slot_off(n, index);
		struct pc_tree_node *c = ld_acq(&n->slots[off]);

		if (!c) {
			c = pool_take(&pool, n->shift - TREE_SHIFT, n, off);
			slot_set(n, off, c);
		}
		n = c;
	}
	PC_ASSERT(pool.nr == 0);
	return n;
}

/* While the root has only slot 0 in use, its child becomes the root. */
static void tree_shrink(struct pc_tree *t)
{
	struct pc_tree_node *n = ld_acq(&t->root);

	while (n && n->shift > 0 && ld_rlx(&n->present) == 1) {
		struct pc_tree_node *c = ld_acq(&n->slots[0]);

		c->parent = NULL;
		st_rel(&t->root, c);
		/* n->slots[0] stays: a reader still in n goes on to c. */
		node_retire(t, n);
		n = c;
	}
}

/* Set a slot of @leaf that was empty; the caller counts the item. */
static void slot_fill(struct pc_tree *t, struct pc_tree_node *leaf,
		      unsigned off, void *item)
{
	PC_ASSERT(!atomic_load_explicit(&leaf->slots[off],
					memory_order_relaxed));
	slot_set(leaf, off, item);
	t->nr_items++;
	if (pc_tree_is_value(item))
		t->nr_values++;
}

/* Empty an occupied slot; unlink and free nodes left empty; shrink. */
static void *slot_delete(struct pc_tree *t, struct pc_tree_node *leaf,
			 unsigned off)
{
	void *old = atomic_load_explicit(&leaf->slots[off],
					 memory_order_relaxed);
	struct pc_tree_node *n = leaf;

	PC_ASSERT(old != NULL);
	node_tags_clear(leaf, off);
	slot_set(leaf, off, NULL);
	t->nr_items--;
	if (pc_tree_is_value(old))
		t->nr_values--;
	while (ld_rlx(&n->present) == 0) {
		struct pc_tree_node *p = n->parent;

		for (int tag = 0; tag < PC_TREE_TAGS; tag++)
			PC_ASSERT(ld_tag(n, tag) == 0);
		if (!p) {
			st_rel(&t->root, NULL);
			node_retire(t, n);
			return old;
		}
		slot_set(p, n->offset, NULL);
		node_retire(t, n);
		n = p;
	}
	tree_shrink(t);
	return old;
}

/* ------------------------------------------------------------------ */
/* The contract (tree.h).                                              */

/* The domain of trees made without one (pc__tree_init). */
static struct pc_ebr *process_ebr;
static pthread_once_t process_ebr_once = PTHREAD_ONCE_INIT;

static void process_ebr_init(void)
{
	process_ebr = aligned_alloc(64, sizeof(*process_ebr));
	if (!process_ebr)
		abort();
	memset(process_ebr, 0, sizeof(*process_ebr));
	pc__ebr_init(process_ebr);
}

void pc__tree_init(struct pc_tree *t)
{
	pthread_once(&process_ebr_once, process_ebr_init);
	pc__tree_init_arena(t, NULL, process_ebr);
}

void pc__tree_init_arena(struct pc_tree *t, struct pc_arena *arena,
			 struct pc_ebr *ebr)
{
	atomic_init(&t->root, NULL);
	t->nr_items = 0;
	t->nr_values = 0;
	t->arena = arena;
	t->ebr = ebr;
}

static void node_destroy(struct pc_tree_node *n)
{
	if (n->shift > 0) {
		for (unsigned i = 0; i < TREE_SLOTS; i++) {
			struct pc_tree_node *c = atomic_load_explicit(
				&n->slots[i], memory_order_relaxed);

			if (c)
				node_destroy(c);
		}
	}
	node_free_now(n);
}

void pc__tree_destroy(struct pc_tree *t)
{
	struct pc_tree_node *n = atomic_load_explicit(&t->root,
						      memory_order_relaxed);
	struct pc_arena *arena = t->arena;
	struct pc_ebr *ebr = t->ebr;

	if (n)
		node_destroy(n);
	pc__tree_init_arena(t, arena, ebr);
}

void *pc__tree_lookup(struct pc_tree *t, uint64_t index)
{
	struct pc_tree_node *leaf = leaf_find(t, index);
	void *e = leaf ? ld_acq(&leaf->slots[index & TREE_MASK]) : NULL;

	return e;
}

void *pc__tree_lookup_slot(struct pc_tree *t, uint64_t index,
			   _Atomic(void *) **slot)
{
	struct pc_tree_node *leaf = leaf_find(t, index);
	void *e = NULL;

	*slot = NULL;
	if (leaf) {
		*slot = &leaf->slots[index & TREE_MASK];
		e = ld_acq(*slot);
	}
	return e;
}

int pc__tree_insert(struct pc_tree *t, uint64_t index, void *item, void **old)
{
	struct pc_tree_node *leaf = leaf_find(t, index);
	unsigned off = (unsigned)(index & TREE_MASK);

	if (old)
		*old = NULL;
	PC_ASSERT(item && !pc_tree_is_value(item));
	if (!item || pc_tree_is_value(item))
		return -EINVAL;
	if (leaf) {
		void *e = atomic_load_explicit(&leaf->slots[off],
					       memory_order_relaxed);

		if (e && !pc_tree_is_value(e))
			return -EEXIST;
		if (e) {	/* a shadow: replaced, handed back */
			st_rel(&leaf->slots[off], item);
			t->nr_values--;
			if (old)
				*old = e;
			return 0;
		}
	} else {
		leaf = leaf_create(t, index);
		if (!leaf)
			return -ENOMEM;
	}
	slot_fill(t, leaf, off, item);
	return 0;
}

void *pc__tree_store(struct pc_tree *t, uint64_t index, void *item)
{
	struct pc_tree_node *leaf = leaf_find(t, index);
	unsigned off = (unsigned)(index & TREE_MASK);
	void *e = NULL;

	if (leaf)
		e = atomic_load_explicit(&leaf->slots[off],
					 memory_order_relaxed);
	if (!item)
		return e ? slot_delete(t, leaf, off) : NULL;
	if (e) {
		if (pc_tree_is_value(item))
			node_tags_clear(leaf, off);
		st_rel(&leaf->slots[off], item);
		t->nr_values += (uint64_t)pc_tree_is_value(item) -
				(uint64_t)pc_tree_is_value(e);
		return e;
	}
	if (!leaf)
		leaf = leaf_create(t, index);
	if (!leaf)
		return (void *)-1;
	slot_fill(t, leaf, off, item);
	return NULL;
}

static bool tag_get(struct pc_tree *t, uint64_t index, int tag)
{
	struct pc_tree_node *n = ld_acq(&t->root);

	if (!n || index > shift_maxindex(n->shift))
		return false;
	for (;;) {
		unsigned off = slot_off(n, index);

		if (!(ld_tag(n, tag) & bit(off)))
			return false;
		if (n->shift == 0)
			return true;
		n = ld_acq(&n->slots[off]);
		if (!n)
			return false;
	}
}

bool pc__tree_tag_get(struct pc_tree *t, uint64_t index, int tag)
{
	bool ret;

	PC_ASSERT(tag >= 0 && tag < PC_TREE_TAGS);
	ret = tag_get(t, index, tag);
	return ret;
}

void pc__tree_tag_set(struct pc_tree *t, uint64_t index, int tag)
{
	struct pc_tree_node *leaf = leaf_find(t, index);
	unsigned off = (unsigned)(index & TREE_MASK);
	void *e = leaf ? atomic_load_explicit(&leaf->slots[off],
					      memory_order_relaxed) : NULL;

	PC_ASSERT(tag >= 0 && tag < PC_TREE_TAGS);
	PC_ASSERT(e && !pc_tree_is_value(e));
	if (e && !pc_tree_is_value(e))
		node_tag_set(leaf, off, tag);
}

void pc__tree_tag_clear(struct pc_tree *t, uint64_t index, int tag)
{
	struct pc_tree_node *leaf = leaf_find(t, index);

	PC_ASSERT(tag >= 0 && tag < PC_TREE_TAGS);
	if (leaf)
		node_tag_clear(leaf, (unsigned)(index & TREE_MASK), tag);
}

bool pc__tree_tagged(struct pc_tree *t, int tag)
{
	struct pc_tree_node *n = ld_acq(&t->root);
	bool ret;

	PC_ASSERT(tag >= 0 && tag < PC_TREE_TAGS);
	ret = n && ld_tag(n, tag) != 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Gang lookups: one in-order walk for the three of them.               */

struct gang {
	uint64_t last;
	int tag;		/* only pages with this tag; -1: every item */
	int set_tag;		/* tag_range: set this on each; -1: none */
	void **items;		/* may be NULL (tag_range) */
	uint64_t *indices;	/* may be NULL */
	unsigned max, nr;
};

/*
 * Visit the items of @n (which covers indices from @base) at @first and
 * after, in order.  Returns true when done: @max found or past @last.
 */
static bool gang_node(struct gang *g, struct pc_tree_node *n, uint64_t base,
		      uint64_t first)
{
	unsigned shift = n->shift, nslots = shift_nslots(shift);
	unsigned off = (unsigned)((first - base) >> shift);

	_Atomic uint64_t *map = g->tag >= 0 ? &n->tags[g->tag] : &n->present;

	for (; off < nslots; off++) {
		/* Skip empty or untagged slots in one step. */
		uint64_t bits = ld_rlx(map) & ~(bit(off) - 1), start;
		void *e;

		if (!bits)
			return false;
		off = (unsigned)__builtin_ctzll(bits);
		if (off >= nslots)
			return false;
		start = base + ((uint64_t)off << shift);
		if (start > g->last)
			return true;
		e = ld_acq(&n->slots[off]);
		if (!e)
			continue;
		if (shift > 0) {
			if (gang_node(g, e, start, pc_max(first, start)))
				return true;
			continue;
		}
		if (g->tag >= 0 && pc_tree_is_value(e))
			continue;	/* stale tag seen by a reader */
		if (g->set_tag >= 0)
			node_tag_set(n, off, g->set_tag);
		if (g->items)
			g->items[g->nr] = e;
		if (g->indices)
			g->indices[g->nr] = start;
		if (++g->nr == g->max)
			return true;
	}
	return false;
}

static unsigned gang_walk(struct pc_tree *t, uint64_t first, struct gang *g)
{
	struct pc_tree_node *root = ld_acq(&t->root);

	if (root && g->max > 0 && first <= g->last &&
	    first <= shift_maxindex(root->shift))
		gang_node(g, root, 0, first);
	return g->nr;
}

unsigned pc__tree_gang(struct pc_tree *t, uint64_t first, uint64_t last,
		       void **items, uint64_t *indices, unsigned max)
{
	struct gang g = { .last = last, .tag = -1, .set_tag = -1,
			  .items = items, .indices = indices, .max = max };

	return gang_walk(t, first, &g);
}

unsigned pc__tree_gang_tag(struct pc_tree *t, uint64_t first, uint64_t last,
			   int tag, void **items, uint64_t *indices,
			   unsigned max)
{
	struct gang g = { .last = last, .tag = tag, .set_tag = -1,
			  .items = items, .indices = indices, .max = max };

	PC_ASSERT(tag >= 0 && tag < PC_TREE_TAGS);
	return gang_walk(t, first, &g);
}

unsigned pc__tree_tag_range(struct pc_tree *t, uint64_t first, uint64_t last,
			    int from, int to, unsigned max)
{
	struct gang g = { .last = last, .tag = from, .set_tag = to,
			  .max = max };

	PC_ASSERT(from >= 0 && from < PC_TREE_TAGS);
	PC_ASSERT(to >= 0 && to < PC_TREE_TAGS);
	return gang_walk(t, first, &g);
}
