/*
 * numa.c - node topology and memory binding for nodes=auto.
 *
 * With nodes=N (fake nodes, like the kernel's numa=fake=N) nothing here is
 * used: the budget is cut in N slices of one real node.  With nodes=auto
 * and libnuma present, each slice is bound to the real node of its number
 * before node.c touches it.  No state: every function is thread-safe.
 */
#include "numa_topology.h"

#ifdef PC_HAVE_NUMA
#include <numa.h>

int pc__numa_nr_nodes(void)
{
	int n;

	if (numa_available() < 0)
		return 1;
	n = numa_num_configured_nodes();
	return n > 0 ? n : 1;
}

void pc__numa_bind(void *addr, size_t len, int node)
{
	if (numa_available() >= 0 && node <= numa_max_node())
		numa_tonode_memory(addr, len, node);
}

#else

int pc__numa_nr_nodes(void)
{
	return 1;
}

void pc__numa_bind(void *addr, size_t len, int node)
{
	(void)addr;
	(void)len;
	(void)node;
}

#endif
