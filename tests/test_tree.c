/*
 * test_tree.c - the per-file radix tree (src/tree.c).
 *
 * Edge cases by hand (empty tree, the ends of the index range, shrinking
 * back to empty), tag_range, allocation failure at every node of a deep
 * insertion, then random operations checked after every step against a
 * reference model (a sorted array), on dense and on sparse indices, and
 * last concurrent RCU readers against one writer (run it under TSan): a
 * count of the writer's operations, not a time, and every reader ran.
 * Random tests print their seed; PC_SEED=N replays them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"
#include "util.h"

/* A page stand-in: its address is the item, its field says where it goes. */
struct tobj {
	uint64_t index;
};

/* ------------------------------------------------------------------ */
/* Reference model: entries sorted by index.                           */

#define MODEL_MAX 4096

struct ment {
	uint64_t index;
	void *item;
	unsigned tags;		/* bit per tag */
};

struct model {
	unsigned n, nr_values;
	struct ment e[MODEL_MAX];
};

/* Position of @index, or where it would go. */
static unsigned model_pos(const struct model *m, uint64_t index)
{
	unsigned lo = 0, hi = m->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (m->e[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct ment *model_find(struct model *m, uint64_t index)
{
	unsigned p = model_pos(m, index);

	return p < m->n && m->e[p].index == index ? &m->e[p] : NULL;
}

/* Same semantics as pc__tree_store, never failing. */
static void *model_store(struct model *m, uint64_t index, void *item)
{
	unsigned p = model_pos(m, index);
	struct ment *e = p < m->n && m->e[p].index == index ? &m->e[p] : NULL;
	void *old = e ? e->item : NULL;

	if (e && pc_tree_is_value(old))
		m->nr_values--;
	if (item && pc_tree_is_value(item))
		m->nr_values++;
	if (!item) {
		if (e) {
			memmove(e, e + 1, (m->n - p - 1) * sizeof(*e));
			m->n--;
		}
		return old;
	}
	if (!e) {
		assert_true(m->n < MODEL_MAX);
		memmove(&m->e[p + 1], &m->e[p], (m->n - p) * sizeof(*e));
		m->n++;
		e = &m->e[p];
		e->index = index;
		e->tags = 0;
	}
	if (pc_tree_is_value(item) || !old || pc_tree_is_value(old))
		e->tags = 0;
	e->item = item;
	return old;
}

/* The model's gang lookup (tag -1: every item). */
static unsigned model_gang(const struct model *m, uint64_t first,
			   uint64_t last, int tag, void **items,
			   uint64_t *indices, unsigned max)
{
	unsigned n = 0;

	if (first > last)
		return 0;
	for (unsigned p = model_pos(m, first); p < m->n && n < max; p++) {
		const struct ment *e = &m->e[p];

		if (e->index > last)
			break;
		if (tag >= 0 && !(e->tags & (1u << tag)))
			continue;
		items[n] = e->item;
		indices[n] = e->index;
		n++;
	}
	return n;
}

static bool model_tagged(const struct model *m, int tag)
{
	for (unsigned p = 0; p < m->n; p++)
		if (m->e[p].tags & (1u << tag))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Comparing a tree with the model.                                    */

static void *gi[MODEL_MAX + 1], *mi[MODEL_MAX + 1];
static uint64_t gx[MODEL_MAX + 1], mx[MODEL_MAX + 1];

static void check_gang(struct pc_tree *t, const struct model *m,
		       uint64_t first, uint64_t last, int tag, unsigned max)
{
	unsigned n, want;

	if (max > MODEL_MAX + 1)
		max = MODEL_MAX + 1;
	if (tag < 0)
		n = pc__tree_gang(t, first, last, gi, gx, max);
	else
		n = pc__tree_gang_tag(t, first, last, tag, gi, gx, max);
	want = model_gang(m, first, last, tag, mi, mx, max);
	if (n != want)
		fail_msg("gang [%" PRIu64 ", %" PRIu64 "] tag %d max %u: %u "
			 "items, want %u", first, last, tag, max, n, want);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(gx[i], mx[i]);
		assert_ptr_equal(gi[i], mi[i]);
	}
	/* Without indices[], the same items. */
	if (tag < 0)
		assert_int_equal(pc__tree_gang(t, first, last, gi, NULL, max),
				 want);
	else
		assert_int_equal(pc__tree_gang_tag(t, first, last, tag, gi,
						   NULL, max), want);
	for (unsigned i = 0; i < n; i++)
		assert_ptr_equal(gi[i], mi[i]);
}

static void check_index(struct pc_tree *t, struct model *m, uint64_t index)
{
	struct ment *e = model_find(m, index);

	assert_ptr_equal(pc__tree_lookup(t, index), e ? e->item : NULL);
	for (int tag = 0; tag < PC_TREE_TAGS; tag++)
		assert_int_equal(pc__tree_tag_get(t, index, tag),
				 e && (e->tags & (1u << tag)));
}

static void check_counts(struct pc_tree *t, const struct model *m)
{
	assert_int_equal(t->nr_items, m->n);
	assert_int_equal(t->nr_values, m->nr_values);
	assert_int_equal(atomic_load(&t->root) == NULL, m->n == 0);
	for (int tag = 0; tag < PC_TREE_TAGS; tag++)
		assert_int_equal(pc__tree_tagged(t, tag), model_tagged(m, tag));
}

static void check_all(struct pc_tree *t, struct model *m)
{
	check_counts(t, m);
	for (unsigned p = 0; p < m->n; p++)
		check_index(t, m, m->e[p].index);
	check_gang(t, m, 0, UINT64_MAX, -1, MODEL_MAX + 1);
	for (int tag = 0; tag < PC_TREE_TAGS; tag++)
		check_gang(t, m, 0, UINT64_MAX, tag, MODEL_MAX + 1);
}

/* ------------------------------------------------------------------ */
/* Edge cases.                                                         */

static struct tobj objs[MODEL_MAX];

static void test_empty_and_ends(void **state)
{
	static const uint64_t ends[] = {
		0, 1, 63, 64, 4095, 4096, ((uint64_t)1 << 36) - 1,
		(uint64_t)1 << 36, (uint64_t)1 << 62, (uint64_t)1 << 63,
		UINT64_MAX - 64, UINT64_MAX - 1, UINT64_MAX,
	};
	const unsigned nr = sizeof(ends) / sizeof(ends[0]);
	struct pc_tree t;
	void *old = &old;
	uint64_t idx[16];
	void *items[16];

	(void)state;
	pc__tree_init(&t);
	assert_null(pc__tree_lookup(&t, 0));
	assert_null(pc__tree_lookup(&t, UINT64_MAX));
	assert_int_equal(pc__tree_gang(&t, 0, UINT64_MAX, items, idx, 16), 0);
	assert_false(pc__tree_tagged(&t, PC_TREE_TAGS - 1));
	assert_false(pc__tree_tag_get(&t, 7, PC_TAG_DIRTY));
	assert_null(pc__tree_store(&t, 9, NULL));
	pc__tree_tag_clear(&t, 9, PC_TAG_DIRTY);

	/* From the top end down, so the tree is tall from the start. */
	for (unsigned i = nr; i-- > 0;) {
		assert_int_equal(pc__tree_insert(&t, ends[i], &objs[i], &old), 0);
		assert_null(old);
		assert_int_equal(pc__tree_insert(&t, ends[i], &objs[i], NULL),
				 -EEXIST);
	}
	assert_int_equal(t.nr_items, nr);
	assert_int_equal(pc__tree_gang(&t, 0, UINT64_MAX, items, idx, 16), nr);
	for (unsigned i = 0; i < nr; i++) {
		assert_int_equal(idx[i], ends[i]);
		assert_ptr_equal(items[i], &objs[i]);
		assert_ptr_equal(pc__tree_lookup(&t, ends[i]), &objs[i]);
	}
	assert_null(pc__tree_lookup(&t, 2));
	assert_null(pc__tree_lookup(&t, UINT64_MAX - 2));
	/* Bounds and max. */
	assert_int_equal(pc__tree_gang(&t, UINT64_MAX, UINT64_MAX, items, idx,
				       16), 1);
	assert_ptr_equal(items[0], &objs[nr - 1]);
	assert_int_equal(pc__tree_gang(&t, 2, 62, items, idx, 16), 0);
	assert_int_equal(pc__tree_gang(&t, 64, 0, items, idx, 16), 0);
	assert_int_equal(pc__tree_gang(&t, 0, UINT64_MAX, items, idx, 0), 0);
	assert_int_equal(pc__tree_gang(&t, 2, UINT64_MAX, items, idx, 2), 2);
	assert_int_equal(idx[0], 63);
	assert_int_equal(idx[1], 64);

	/* Tags at both ends. */
	pc__tree_tag_set(&t, UINT64_MAX, PC_TAG_WRITEBACK);
	pc__tree_tag_set(&t, 0, PC_TAG_WRITEBACK);
	assert_true(pc__tree_tagged(&t, PC_TAG_WRITEBACK));
	assert_false(pc__tree_tagged(&t, PC_TAG_DIRTY));
	assert_int_equal(pc__tree_gang_tag(&t, 1, UINT64_MAX, PC_TAG_WRITEBACK,
					   items, idx, 16), 1);
	assert_int_equal(idx[0], UINT64_MAX);
	pc__tree_tag_clear(&t, UINT64_MAX, PC_TAG_WRITEBACK);
	pc__tree_tag_clear(&t, 0, PC_TAG_WRITEBACK);
	assert_false(pc__tree_tagged(&t, PC_TAG_WRITEBACK));

	/* Delete top down: the tree shrinks back; empty means no root. */
	for (unsigned i = nr; i-- > 0;) {
		assert_ptr_equal(pc__tree_store(&t, ends[i], NULL), &objs[i]);
		assert_null(pc__tree_lookup(&t, ends[i]));
		assert_null(pc__tree_store(&t, ends[i], NULL));
	}
	assert_null(atomic_load(&t.root));
	assert_int_equal(t.nr_items, 0);

	/* Values: insert replaces them and hands them back. */
	assert_null(pc__tree_store(&t, 1000, pc_tree_mkvalue(42)));
	assert_int_equal(t.nr_values, 1);
	assert_int_equal(pc__tree_insert(&t, 1000, &objs[0], &old), 0);
	assert_true(pc_tree_is_value(old));
	assert_int_equal(pc_tree_value(old), 42);
	assert_int_equal(t.nr_values, 0);
	/* Page over page keeps tags, value over page clears them. */
	pc__tree_tag_set(&t, 1000, PC_TAG_DIRTY);
	assert_ptr_equal(pc__tree_store(&t, 1000, &objs[1]), &objs[0]);
	assert_true(pc__tree_tag_get(&t, 1000, PC_TAG_DIRTY));
	assert_ptr_equal(pc__tree_store(&t, 1000, pc_tree_mkvalue(7)),
			 &objs[1]);
	assert_false(pc__tree_tag_get(&t, 1000, PC_TAG_DIRTY));
	assert_false(pc__tree_tagged(&t, PC_TAG_DIRTY));
	assert_int_equal(t.nr_values, 1);
	assert_int_equal(pc__tree_gang_tag(&t, 0, UINT64_MAX, PC_TAG_DIRTY,
					   items, idx, 16), 0);
	pc__tree_destroy(&t);
	assert_null(atomic_load(&t.root));
	assert_int_equal(t.nr_items, 0);
	assert_int_equal(t.nr_values, 0);
}

static void test_tag_range(void **state)
{
	struct pc_tree t;
	uint64_t idx[256];
	void *items[256];
	unsigned n;

	(void)state;
	pc__tree_init(&t);
	for (unsigned i = 0; i < 200; i++)
		assert_int_equal(pc__tree_insert(&t, i, &objs[i], NULL), 0);
	assert_int_equal(pc__tree_insert(&t, (uint64_t)1 << 50, &objs[200],
					 NULL), 0);
	assert_null(pc__tree_store(&t, 201, pc_tree_mkvalue(201)));
	for (unsigned i = 0; i < 200; i += 3)
		pc__tree_tag_set(&t, i, PC_TAG_DIRTY);
	pc__tree_tag_set(&t, (uint64_t)1 << 50, PC_TAG_DIRTY);

	/* max respected: the first five dirty pages at or after 10. */
	assert_int_equal(pc__tree_tag_range(&t, 10, 100, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, 5), 5);
	n = pc__tree_gang_tag(&t, 0, UINT64_MAX, PC_TAG_TOWRITE, items, idx,
			      256);
	assert_int_equal(n, 5);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(idx[i], 12 + 3 * i);
		assert_ptr_equal(items[i], &objs[12 + 3 * i]);
	}
	/* Then all of [10, 100]: 12, 15, ..., 99; again counts all 30. */
	assert_int_equal(pc__tree_tag_range(&t, 10, 100, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, 1000), 30);
	assert_int_equal(pc__tree_tag_range(&t, 10, 100, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, 1000), 30);
	assert_int_equal(pc__tree_gang_tag(&t, 0, UINT64_MAX, PC_TAG_TOWRITE,
					   items, idx, 256), 30);
	assert_int_equal(idx[29], 99);
	assert_false(pc__tree_tag_get(&t, 9, PC_TAG_TOWRITE));
	assert_false(pc__tree_tag_get(&t, 102, PC_TAG_TOWRITE));
	assert_false(pc__tree_tag_get(&t, 13, PC_TAG_TOWRITE));
	assert_true(pc__tree_tag_get(&t, 13 - 1, PC_TAG_DIRTY));
	/* from, not to, is what is looked for; nothing else changes. */
	assert_int_equal(pc__tree_tag_range(&t, 0, UINT64_MAX, PC_TAG_WRITEBACK,
					    PC_TAG_DIRTY, 1000), 0);
	assert_false(pc__tree_tagged(&t, PC_TAG_WRITEBACK));
	/* Empty ranges, max 0, the far item, past the tree's range. */
	assert_int_equal(pc__tree_tag_range(&t, 100, 10, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, 1000), 0);
	assert_int_equal(pc__tree_tag_range(&t, 0, UINT64_MAX, PC_TAG_DIRTY,
					    PC_TAG_WRITEBACK, 0), 0);
	assert_false(pc__tree_tagged(&t, PC_TAG_WRITEBACK));
	assert_int_equal(pc__tree_tag_range(&t, 200, UINT64_MAX, PC_TAG_DIRTY,
					    PC_TAG_WRITEBACK, 1000), 1);
	assert_true(pc__tree_tag_get(&t, (uint64_t)1 << 50, PC_TAG_WRITEBACK));
	assert_int_equal(pc__tree_tag_range(&t, ((uint64_t)1 << 50) + 1,
					    UINT64_MAX, PC_TAG_DIRTY,
					    PC_TAG_WRITEBACK, 1000), 0);
	/* The whole tree: 67 dirty pages below 200, plus the far one. */
	assert_int_equal(pc__tree_tag_range(&t, 0, UINT64_MAX, PC_TAG_DIRTY,
					    PC_TAG_TOWRITE, 1000), 68);
	/* Clearing every TOWRITE one by one leaves the tree untagged. */
	n = pc__tree_gang_tag(&t, 0, UINT64_MAX, PC_TAG_TOWRITE, items, idx,
			      256);
	assert_int_equal(n, 68);
	for (unsigned i = 0; i < n; i++)
		pc__tree_tag_clear(&t, idx[i], PC_TAG_TOWRITE);
	assert_false(pc__tree_tagged(&t, PC_TAG_TOWRITE));
	assert_true(pc__tree_tagged(&t, PC_TAG_DIRTY));
	pc__tree_destroy(&t);
}

/* Fail each allocation of a deep insertion in turn: nothing changes. */
static void test_nomem(void **state)
{
	const uint64_t far[] = { UINT64_MAX, (uint64_t)1 << 63, 1u << 20 };

	(void)state;
	for (unsigned f = 0; f < sizeof(far) / sizeof(far[0]); f++) {
		bool done = false;

		for (long nth = 0; !done; nth++) {
			struct pc_tree t;
			struct pc_tree_node *root;
			void *items[4], *old = &old;
			int rc;

			assert_true(nth < 64);
			pc__tree_init(&t);
			/* Empty tree: no root is left behind. */
			pc__tree_fail_alloc(nth);
			rc = pc__tree_insert(&t, far[f], &objs[1], &old);
			pc__tree_fail_alloc(-1);
			if (rc == 0) {
				pc__tree_store(&t, far[f], NULL);
			} else {
				assert_int_equal(rc, -ENOMEM);
				assert_null(atomic_load(&t.root));
				assert_int_equal(t.nr_items, 0);
			}

			assert_int_equal(pc__tree_insert(&t, 5, &objs[0], NULL),
					 0);
			pc__tree_tag_set(&t, 5, PC_TAG_DIRTY);
			root = atomic_load(&t.root);
			pc__tree_fail_alloc(nth);
			rc = pc__tree_insert(&t, far[f], &objs[1], &old);
			pc__tree_fail_alloc(-1);
			if (rc == 0) {
				done = true;
				assert_null(old);
				assert_int_equal(t.nr_items, 2);
				assert_ptr_equal(pc__tree_store(&t, far[f],
						 NULL), &objs[1]);
			} else {
				assert_int_equal(rc, -ENOMEM);
				assert_ptr_equal(atomic_load(&t.root), root);
			}
			/* store: (void *)-1, and nothing changed either. */
			pc__tree_fail_alloc(nth);
			old = pc__tree_store(&t, far[f], pc_tree_mkvalue(3));
			pc__tree_fail_alloc(-1);
			if (old == (void *)-1) {
				assert_false(done);
				assert_ptr_equal(atomic_load(&t.root), root);
			} else {
				assert_true(done);
				assert_null(old);
				assert_non_null(pc__tree_store(&t, far[f],
							       NULL));
			}
			assert_int_equal(t.nr_items, 1);
			assert_int_equal(t.nr_values, 0);
			assert_int_equal(pc__tree_gang(&t, 0, UINT64_MAX, items,
						       NULL, 4), 1);
			assert_ptr_equal(items[0], &objs[0]);
			assert_true(pc__tree_tag_get(&t, 5, PC_TAG_DIRTY));
			assert_int_equal(pc__tree_gang_tag(&t, 0, UINT64_MAX,
					 PC_TAG_DIRTY, items, NULL, 4), 1);
			pc__tree_destroy(&t);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Random operations against the model.                                */

static struct model model;

static uint64_t rand_index(uint64_t *rs, bool sparse)
{
	uint64_t r = tu_rand(rs);

	if (model.n && r % 3 == 0)	/* an index that is there */
		return model.e[tu_rand(rs) % model.n].index;
	if (!sparse)
		return tu_rand(rs) % 1001;
	switch (r % 7) {
	case 1: /* near a level boundary */
		return ((uint64_t)1 << (6 * (1 + tu_rand(rs) % 10))) +
		       tu_rand(rs) % 5 - 2;
	case 2:
		return UINT64_MAX - tu_rand(rs) % 70;
	case 3:
		return tu_rand(rs) % 5000;
	default: /* up to 2^63 */
		return tu_rand(rs) >> (1 + tu_rand(rs) % 63);
	}
}

static void *rand_item(uint64_t *rs)
{
	uint64_t r = tu_rand(rs);

	if (r % 4 == 0)
		return pc_tree_mkvalue(r >> 8);
	return &objs[r % MODEL_MAX];
}

static void random_ops(bool sparse, unsigned steps, const char *name)
{
	uint64_t rs = tu_seed(name), first, last;
	struct pc_tree t;
	unsigned nomem = 0;

	pc__tree_init(&t);
	model.n = model.nr_values = 0;
	for (unsigned step = 0; step < steps; step++) {
		uint64_t op = tu_rand(&rs) % 100, index = rand_index(&rs, sparse);
		int tag = (int)(tu_rand(&rs) % PC_TREE_TAGS);
		struct ment *e = model_find(&model, index);
		bool fault = tu_rand(&rs) % 16 == 0, failed = false;
		void *item, *old;

		if (fault)
			pc__tree_fail_alloc((long)(tu_rand(&rs) % 4));
		if (op < 30 && model.n < 1200) {	/* insert a page */
			int rc;

			item = &objs[tu_rand(&rs) % MODEL_MAX];
			rc = pc__tree_insert(&t, index, item, &old);
			if (e && !pc_tree_is_value(e->item)) {
				assert_int_equal(rc, -EEXIST);
			} else if (rc == -ENOMEM) {
				assert_true(fault && !e);
				failed = true;
			} else {
				assert_int_equal(rc, 0);
				assert_ptr_equal(old, e ? e->item : NULL);
				model_store(&model, index, item);
			}
		} else if (op < 50 && model.n < 1200) {	/* store */
			item = rand_item(&rs);
			old = pc__tree_store(&t, index, item);
			if (old == (void *)-1) {
				assert_true(fault && !e);
				failed = true;
			} else {
				assert_ptr_equal(old, e ? e->item : NULL);
				model_store(&model, index, item);
			}
		} else if (op < 72) {			/* delete */
			old = pc__tree_store(&t, index, NULL);
			assert_ptr_equal(old, e ? e->item : NULL);
			model_store(&model, index, NULL);
		} else if (op < 86) {			/* tag a page */
			if (e && !pc_tree_is_value(e->item)) {
				pc__tree_tag_set(&t, index, tag);
				e->tags |= 1u << tag;
			}
		} else if (op < 96) {
			pc__tree_tag_clear(&t, index, tag);
			if (e)
				e->tags &= ~(1u << tag);
		} else {				/* tag_range */
			int to = (int)(tu_rand(&rs) % PC_TREE_TAGS);
			unsigned max = (unsigned)(tu_rand(&rs) % 40), n;

			first = index;
			last = tu_rand(&rs) % 2 ? rand_index(&rs, sparse)
						: first + tu_rand(&rs) % 300;
			n = pc__tree_tag_range(&t, first, last, tag, to, max);
			assert_int_equal(n, model_gang(&model, first, last, tag,
						       mi, mx, max));
			for (unsigned i = 0; i < n; i++)
				model_find(&model, mx[i])->tags |= 1u << to;
		}
		pc__tree_fail_alloc(-1);

		/* After every step: counts, tagged(), the index, one gang. */
		check_counts(&t, &model);
		check_index(&t, &model, index);
		check_index(&t, &model, rand_index(&rs, sparse));
		first = rand_index(&rs, sparse);
		last = tu_rand(&rs) % 4 ? first + tu_rand(&rs) % 2000
					: rand_index(&rs, sparse);
		if (last < first)
			last = UINT64_MAX;
		check_gang(&t, &model, first, last, -1,
			   (unsigned)(tu_rand(&rs) % 80));
		check_gang(&t, &model, first, last, tag,
			   (unsigned)(tu_rand(&rs) % 80));
		/* The whole tree now and then, and after a failed insert. */
		if (step % 256 == 0 || failed)
			check_all(&t, &model);
		nomem += failed;
	}
	check_all(&t, &model);
	/* Empty it through the API: the root must go. */
	while (model.n) {
		uint64_t index = model.e[tu_rand(&rs) % model.n].index;

		assert_non_null(pc__tree_store(&t, index, NULL));
		model_store(&model, index, NULL);
		if (model.n % 64 == 0)
			check_all(&t, &model);
	}
	check_all(&t, &model);
	printf("%s: %u steps, %u allocation failures\n", name, steps, nomem);
	pc__tree_destroy(&t);
}

static void test_random_dense(void **state)
{
	(void)state;
	random_ops(false, 20000, "random_dense");
}

static void test_random_sparse(void **state)
{
	(void)state;
	random_ops(true, 12000, "random_sparse");
}

/* ------------------------------------------------------------------ */
/* RCU readers against a writer.                                       */

#define C_DENSE 1024
#define C_SPARSE 64
#define C_NR (C_DENSE + C_SPARSE)
#define C_READERS 3
/* The writer's operations: a count, not a time, and the writer goes on
 * until every reader has done some lookups too (however late it ran). */
#define C_WRITER_OPS (1ul << 20)

static struct tobj cobj[C_NR];
static struct pc_tree ctree;
static pthread_mutex_t ctree_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool cstop;
static _Atomic unsigned cerrors;
static char cerr_msg[256];	/* first error; written by the first to fail */

#define CCHECK(cond, ...) \
	do { \
		if (!(cond) && atomic_fetch_add(&cerrors, 1) == 0) \
			snprintf(cerr_msg, sizeof(cerr_msg), __VA_ARGS__); \
	} while (0)

/* Items at dense indices that are multiples of 8 are never removed. */
static bool permanent(unsigned i)
{
	return i < C_DENSE && i % 8 == 0;
}

/* An item seen at @index must be the object or the value made for it. */
static bool valid_at(void *e, uint64_t index)
{
	if (pc_tree_is_value(e))
		return pc_tree_value(e) == (index & (UINT64_MAX >> 2));
	return (char *)e >= (char *)cobj && (char *)e < (char *)(cobj + C_NR) &&
	       ((struct tobj *)e)->index == index;
}

struct reader {
	uint64_t seed;
	_Atomic unsigned long ops;
};

static bool readers_ran(struct reader *rd)
{
	for (unsigned k = 0; k < C_READERS; k++)
		if (atomic_load_explicit(&rd[k].ops, memory_order_relaxed) == 0)
			return false;
	return true;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t rs = r->seed, idx[128];
	void *items[128];

	while (!atomic_load_explicit(&cstop, memory_order_relaxed)) {
		unsigned i = (unsigned)(tu_rand(&rs) % C_NR), n, perm = 0;
		int tag = (int)(tu_rand(&rs) % PC_TREE_TAGS);
		uint64_t first = cobj[i].index, prev = 0;
		void *e;

		pc__tree_read_lock(&ctree);
		e = pc__tree_lookup(&ctree, first);
		CCHECK(!e || valid_at(e, first), "lookup %" PRIu64, first);
		CCHECK(!permanent(i) || e == &cobj[i], "lost %u", i);

		n = pc__tree_gang(&ctree, first, UINT64_MAX, items, idx, 128);
		for (unsigned k = 0; k < n; k++) {
			CCHECK(idx[k] >= first && (k == 0 || idx[k] > prev),
			       "gang order at %" PRIu64, idx[k]);
			CCHECK(valid_at(items[k], idx[k]), "gang item at %"
			       PRIu64, idx[k]);
			prev = idx[k];
		}
		n = pc__tree_gang_tag(&ctree, first, UINT64_MAX, tag, items,
				      idx, 128);
		for (unsigned k = 0; k < n; k++) {
			CCHECK(idx[k] >= first && (k == 0 || idx[k] > prev),
			       "tag order at %" PRIu64, idx[k]);
			CCHECK(!pc_tree_is_value(items[k]) &&
			       valid_at(items[k], idx[k]),
			       "tagged item at %" PRIu64, idx[k]);
			prev = idx[k];
		}
		(void)pc__tree_tagged(&ctree, tag);
		(void)pc__tree_tag_get(&ctree, first, tag);

		/* Every permanent item is found by a whole-range walk. */
		if (tu_rand(&rs) % 16 == 0) {
			uint64_t from = 0;

			do {
				n = pc__tree_gang(&ctree, from, UINT64_MAX,
						  items, idx, 128);
				for (unsigned k = 0; k < n; k++)
					if (idx[k] < C_DENSE &&
					    permanent((unsigned)idx[k]))
						perm++;
				from = n ? idx[n - 1] + 1 : 0;
			} while (n == 128 && from != 0);
			CCHECK(perm == C_DENSE / 8, "whole walk: %u permanent",
			       perm);
		}
		pc__tree_read_unlock(&ctree);
		atomic_fetch_add_explicit(&r->ops, 1, memory_order_relaxed);
	}
	return NULL;
}

static unsigned char cstate[C_NR];	/* writer: 0 empty, 1 page, 2 value */

static void writer_op(uint64_t *rs)
{
	unsigned i = (unsigned)(tu_rand(rs) % C_NR);
	uint64_t op = tu_rand(rs) % 100, index = cobj[i].index;
	int tag = (int)(tu_rand(rs) % PC_TREE_TAGS);
	void *old;

	pthread_mutex_lock(&ctree_lock);
	if (op < 25 && !cstate[i]) {
		int rc = pc__tree_insert(&ctree, index, &cobj[i], &old);

		CCHECK(rc == 0 && !old, "insert %u: %d", i, rc);
		cstate[i] = 1;
	} else if (op < 30 && !permanent(i)) {	/* a shadow */
		old = pc__tree_store(&ctree, index,
				     pc_tree_mkvalue(index & (UINT64_MAX >> 2)));
		CCHECK(old != (void *)-1, "store value %u", i);
		cstate[i] = 2;
	} else if (op < 40) {			/* page over anything */
		old = pc__tree_store(&ctree, index, &cobj[i]);
		CCHECK(old != (void *)-1, "store page %u", i);
		cstate[i] = 1;
	} else if (op < 70 && !permanent(i)) {
		pc__tree_store(&ctree, index, NULL);
		cstate[i] = 0;
	} else if (op < 85 && cstate[i] == 1) {
		pc__tree_tag_set(&ctree, index, tag);
	} else if (op < 97) {
		pc__tree_tag_clear(&ctree, index, tag);
	} else {
		pc__tree_tag_range(&ctree, index, index + 500, tag,
				   (tag + 1) % PC_TREE_TAGS, 32);
	}
	pthread_mutex_unlock(&ctree_lock);
}

static void test_rcu_readers(void **state)
{
	uint64_t seed = tu_seed("rcu_readers"), rs = seed;
	pthread_t th[C_READERS];
	struct reader rd[C_READERS];
	unsigned long wops = 0, shrinks = 0;

	(void)state;
	for (unsigned i = 0; i < C_DENSE; i++)
		cobj[i].index = i;
	cobj[C_DENSE].index = UINT64_MAX;
	cobj[C_DENSE + 1].index = (uint64_t)1 << 63;
	for (unsigned i = C_DENSE + 2; i < C_NR; i++) {	/* distinct */
		bool dup;

		do {
			cobj[i].index = tu_rand(&rs) >> (tu_rand(&rs) % 52);
			dup = cobj[i].index < C_DENSE;
			for (unsigned j = C_DENSE; j < i; j++)
				dup |= cobj[j].index == cobj[i].index;
		} while (dup);
	}
	pc__tree_init(&ctree);
	memset(cstate, 0, sizeof(cstate));
	for (unsigned i = 0; i < C_NR; i++) {
		if (permanent(i)) {
			assert_int_equal(pc__tree_insert(&ctree, cobj[i].index,
							 &cobj[i], NULL), 0);
			cstate[i] = 1;
		}
	}
	atomic_store(&cstop, false);
	atomic_store(&cerrors, 0);
	for (unsigned k = 0; k < C_READERS; k++) {
		rd[k].seed = (seed + k + 1) | 1;
		atomic_init(&rd[k].ops, 0);
		assert_int_equal(pthread_create(&th[k], NULL, reader_main,
						&rd[k]), 0);
	}
	while (wops < C_WRITER_OPS || !readers_ran(rd)) {
		for (unsigned k = 0; k < 256; k++, wops++)
			writer_op(&rs);
		/* Now and then drop every sparse item: the tree shrinks. */
		if (tu_rand(&rs) % 8 == 0) {
			pthread_mutex_lock(&ctree_lock);
			for (unsigned i = C_DENSE; i < C_NR; i++) {
				pc__tree_store(&ctree, cobj[i].index, NULL);
				cstate[i] = 0;
			}
			pthread_mutex_unlock(&ctree_lock);
			shrinks++;
		}
	}
	atomic_store(&cstop, true);
	for (unsigned k = 0; k < C_READERS; k++) {
		tu_join(th[k]);
		assert_true(atomic_load(&rd[k].ops) > 0);
	}
	printf("rcu_readers: writer %lu ops (%lu shrinks), readers %lu %lu "
	       "%lu lookups\n", wops, shrinks, atomic_load(&rd[0].ops), atomic_load(&rd[1].ops),
	       atomic_load(&rd[2].ops));
	if (atomic_load(&cerrors))
		fail_msg("%u errors, first: %s", atomic_load(&cerrors),
			 cerr_msg);

	/* The writer's own record matches the tree. */
	for (unsigned i = 0; i < C_NR; i++) {
		void *e = pc__tree_lookup(&ctree, cobj[i].index);

		if (cstate[i] == 1)
			assert_ptr_equal(e, &cobj[i]);
		else if (cstate[i] == 2)
			assert_true(pc_tree_is_value(e));
		else
			assert_null(e);
	}
	pc__tree_destroy(&ctree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_ends),
		cmocka_unit_test(test_tag_range),
		cmocka_unit_test(test_nomem),
		cmocka_unit_test(test_random_dense),
		cmocka_unit_test(test_random_sparse),
		cmocka_unit_test(test_rcu_readers),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	{	/* let retired nodes go before exit (LeakSanitizer) */
		struct pc_tree t;

		pc__tree_init(&t);
		pc__tree_barrier(t.ebr);
	}
	return rc;
}
