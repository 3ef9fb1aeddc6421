/*
 * numa_topology.h - the machine's NUMA topology, shared by node.c and arena.c.
 * Without libnuma there is one node and binding does nothing.
 */
#ifndef PC_NUMA_TOPOLOGY_H
#define PC_NUMA_TOPOLOGY_H

#include <stddef.h>

/* Real memory nodes of this machine (nodes=auto); at least 1. */
int pc__numa_nr_nodes(void);
/* Bind [addr, addr+len) to real node @node before it is first touched. */
void pc__numa_bind(void *addr, size_t len, int node);

#endif
