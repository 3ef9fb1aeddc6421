/*
 * migrate.h - NUMA balancing (numa.balancing, migrate.c): its scanner
 * started and stopped with the cache, and the hint faults readers take
 * on the pages it marked.
 */
#ifndef PC_MIGRATE_H
#define PC_MIGRATE_H

#include "internal.h"

int pc__numa_balancing_start(struct pc_cache *c);
void pc__numa_balancing_stop(struct pc_cache *c);
/* A reader touched a page the scanner marked (PG_hint): count, decide. */
void pc__numa_hint_fault(struct pc_cache *c, struct pc_page *p);

#endif /* PC_MIGRATE_H */
