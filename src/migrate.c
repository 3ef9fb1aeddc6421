/*
 * migrate.c - NUMA balancing: sampled hint faults and page migration.
 *
 * Placeholder until numa.balancing is built (issue 8): no scanner runs,
 * so no page is ever marked PG_hint and nothing here is reached.
 */
#include "internal.h"

int pc__numa_balancing_start(struct pc_cache *c)
{
	(void)c;
	return 0;
}

void pc__numa_balancing_stop(struct pc_cache *c)
{
	(void)c;
}

void pc__numa_hint_fault(struct pc_cache *c, struct pc_page *p)
{
	(void)c;
	page_clear(p, PG_hint);
}
