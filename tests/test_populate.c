/*
 * test_populate.c - never-used memory faulted in ahead of the allocator
 * (populate.c).
 *
 *   steps      with kswapd off, each populate step is called by the test:
 *              the first step the allocator takes is cold (pggrow_cold),
 *              a populate step faults the next one in (its data resident,
 *              by mincore; pgpopulate_kswapd), no further than ahead of
 *              hw, and the allocator's next step is then not cold;
 *   shrink     a shrink below memory populated ahead gives it back (not
 *              resident afterwards) and brings the frontier down;
 *   kswapd     with kswapd on, one allocation's grow gets the steps ahead
 *              populated by kswapd (waited for as an event, not a time);
 *   shared_huge  a shared cache (a memfd's 4 KiB pages) has each step
 *              populated ahead collapsed to a huge page, the cold step
 *              behind collapsed later with its data kept, a descriptor
 *              block once (thp_collapse_alloc; mapped by PMD in smaps);
 *              a private cache collapses nothing;
 *   shared_shrink  test_shrink on a shared cache: the memfd's pages go
 *              back (MADV_REMOVE), not only this process's mapping.
 *
 * Checks are on counters, the frontier and mincore: never a timing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "node.h"
#include "util.h"

#define MIB (1ull << 20)

/* Resident pages of frames [from, to) of node 0's data (mincore). */
static uint64_t resident(struct pc_cache *c, uint32_t from, uint32_t to)
{
	size_t len = (size_t)(to - from) << PC_PAGE_SHIFT;
	unsigned char *vec = malloc(to - from);
	uint64_t n = 0;

	assert_non_null(vec);
	assert_int_equal(mincore(pfn_data(c, c->nodes[0].first_pfn + from), len,
				 vec), 0);
	for (uint32_t i = 0; i < to - from; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* Take @nr frames of node 0 (they stay taken: the test puts them later). */
static void take(struct pc_cache *c, struct pc_page **pages, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		pages[i] = pc__alloc_page(c, NULL, 0);
		assert_non_null(pages[i]);
	}
}

static void put_all(struct pc_cache *c, struct pc_page **pages, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++)
		pc__put_page(c, pages[i]);
}

static void test_steps(void **state)
{
	static struct pc_page *pages[2 * PC_FRAME_STEP];
	const uint32_t S = PC_FRAME_STEP;
	struct pc_node *n;
	pc_cache *c;

	(void)state;
	/* 64 MiB: one step ahead (a 32nd of the share, at least one). */
	assert_int_equal(pc_cache_create(&c, "memory=64M reclaim.kswapd=0"), 0);
	n = &c->nodes[0];
	assert_int_equal(atomic_load(&n->ready), 0);
	take(c, pages, 1);
	assert_int_equal(atomic_load(&n->hw), S);
	assert_int_equal(tu_vm(c, "pggrow_cold"), S);	/* nothing was ready */
	assert_int_equal(resident(c, S, 2 * S), 0);

	/* One step ahead of hw, then nothing more to do. */
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(atomic_load(&n->ready), 2 * S);
	assert_int_equal(tu_vm(c, "pgpopulate_kswapd"), S);
	assert_int_equal(resident(c, S, 2 * S), S);
	assert_int_equal(resident(c, 2 * S, 3 * S), 0);
	assert_int_equal(pc__populate_step(c, n), 0);

	/* The allocator's next step was ready: not cold. */
	take(c, pages + 1, S);
	assert_int_equal(atomic_load(&n->hw), 2 * S);
	assert_int_equal(tu_vm(c, "pggrow_cold"), S);
	/* And the step after it is populated next. */
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(atomic_load(&n->ready), 3 * S);
	assert_int_equal(tu_vm(c, "pgpopulate_kswapd"), 2 * S);
	put_all(c, pages, S + 1);
	assert_int_equal(pc_cache_destroy(c), 0);
}

/* kB of the mapping holding @addr that this process maps by PMD, as a
 * shared memory's huge pages (smaps: ShmemPmdMapped). */
static long pmd_mapped_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		long v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') <
		    strchr(line, ' '))
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && sscanf(line, "ShmemPmdMapped: %ld kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	assert_true(kb >= 0);
	return kb;
}

static void test_shared_huge(void **state)
{
	struct pc_page *pages[1];
	const uint32_t S = PC_FRAME_STEP;
	unsigned char *data;
	struct pc_node *n;
	long kb;
	pc_cache *c;

	(void)state;
	/* 128 MiB: two steps ahead, descriptors one whole 2 MiB block. */
	assert_int_equal(pc_cache_create(&c, "shared=on memory=128M "
					     "reclaim.kswapd=0"), 0);
	n = &c->nodes[0];
	kb = pmd_mapped_kb(c->data);
	take(c, pages, 1);			/* step 0: cold */
	data = pages[0]->data;
	memset(data, 0x5a, PC_PAGE_SIZE);	/* what a collapse must keep */
	/* Ahead: steps 1 and 2, each collapsed as it is populated. */
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(atomic_load(&n->ready), 3 * S);
	assert_int_equal(resident(c, S, 3 * S), 2 * S);
	assert_int_equal(tu_vm(c, "thp_collapse_alloc") +
			 tu_vm(c, "thp_collapse_alloc_failed"), 2);
	assert_int_equal(atomic_load(&n->huge), 0);	/* step 0 is behind */
	/* Nothing ahead: the cold step behind, and the descriptor block
	 * its descriptors start. */
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(atomic_load(&n->huge), S);
	assert_int_equal(tu_vm(c, "thp_collapse_alloc") +
			 tu_vm(c, "thp_collapse_alloc_failed"), 4);
	for (unsigned i = 0; i < PC_PAGE_SIZE; i++)
		assert_int_equal(data[i], 0x5a);
	assert_int_equal(pc__populate_step(c, n), 0);	/* all done */
	printf("  thp_collapse_alloc %llu, failed %llu, PMD-mapped %ld kB\n",
	       (unsigned long long)tu_vm(c, "thp_collapse_alloc"),
	       (unsigned long long)tu_vm(c, "thp_collapse_alloc_failed"),
	       pmd_mapped_kb(c->data) - kb);
	/* The kernel may refuse a collapse (no huge page free); what it
	 * made huge, this process maps by PMD. */
	assert_int_equal(pmd_mapped_kb(c->data) - kb,
			 (long)tu_vm(c, "thp_collapse_alloc") * 2048);
	pc__put_page(c, pages[0]);
	assert_int_equal(pc_cache_destroy(c), 0);

	/* A private cache's memory is huge from its first fault: nothing
	 * to collapse. */
	assert_int_equal(pc_cache_create(&c, "memory=128M reclaim.kswapd=0"), 0);
	take(c, pages, 1);
	while (pc__populate_step(c, &c->nodes[0]))
		;
	assert_int_equal(tu_vm(c, "thp_collapse_alloc") +
			 tu_vm(c, "thp_collapse_alloc_failed"), 0);
	pc__put_page(c, pages[0]);
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void shrink(const char *conf, bool shared)
{
	struct pc_page *pages[1];
	const uint32_t S = PC_FRAME_STEP;
	struct pc_node *n;
	pc_cache *c;

	assert_int_equal(pc_cache_create(&c, conf), 0);
	n = &c->nodes[0];
	take(c, pages, 1);
	pc__put_page(c, pages[0]);
	assert_int_equal(pc__populate_step(c, n), S);
	if (shared)	/* the cold step behind made huge */
		assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(resident(c, S, 2 * S), S);
	/* Down to one step: what was populated ahead goes back. */
	assert_int_equal(pc_cache_resize(c, 2 * MIB), 0);
	assert_int_equal(atomic_load(&n->ready), S);
	assert_int_equal(resident(c, S, 2 * S), 0);
	assert_int_equal(pc__populate_step(c, n), 0);	/* the share is full */
	/* Growing again: the step given back is populated anew. */
	assert_int_equal(pc_cache_resize(c, 8 * MIB), 0);
	assert_int_equal(pc__populate_step(c, n), S);
	assert_int_equal(resident(c, S, 2 * S), S);
	assert_int_equal(pc__populate_step(c, n), 0);	/* one step ahead */
	assert_int_equal(pc_cache_destroy(c), 0);
}

static void test_shrink(void **state)
{
	(void)state;
	shrink("memory=8M reclaim.kswapd=0", false);
}

static void test_shared_shrink(void **state)
{
	(void)state;
	shrink("shared=on memory=8M reclaim.kswapd=0", true);
}

static void test_kswapd(void **state)
{
	struct pc_page *p;
	struct pc_node *n;
	pc_cache *c;
	unsigned waited = 0;

	(void)state;
	/* 1 GiB: four steps ahead. */
	assert_int_equal(pc_cache_create(&c, "memory=1G"), 0);
	n = &c->nodes[0];
	p = pc__alloc_page(c, NULL, 0);
	assert_non_null(p);
	/* An event, not a time: kswapd populates when it runs. */
	while (atomic_load(&n->ready) < PC_FRAME_STEP + PC_POPULATE_AHEAD_MAX &&
	       waited++ < 600000)
		tu_sleep_us(100);
	printf("  1G: ready %u frames beyond the first step, %llu populated\n",
	       (unsigned)(atomic_load(&n->ready) - PC_FRAME_STEP),
	       (unsigned long long)tu_vm(c, "pgpopulate_kswapd"));
	assert_int_equal(atomic_load(&n->ready), PC_FRAME_STEP + PC_POPULATE_AHEAD_MAX);
	assert_int_equal(tu_vm(c, "pgpopulate_kswapd"), PC_POPULATE_AHEAD_MAX);
	assert_int_equal(resident(c, PC_FRAME_STEP,
				  PC_FRAME_STEP + PC_POPULATE_AHEAD_MAX),
			 PC_POPULATE_AHEAD_MAX);
	pc__put_page(c, p);
	assert_int_equal(pc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_kswapd),
		cmocka_unit_test(test_shared_huge),
		cmocka_unit_test(test_shared_shrink),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
