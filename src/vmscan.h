/*
 * vmscan.h - page reclaim as the rest of the core sees it: pages onto the
 * LRU lists through the thread's batches, accessed, rotated, deactivated
 * (lru.c); each node's reclaim thread started and stopped (kswapd.c);
 * the shadows evicted pages leave, the refaults they tell of and their
 * trim (workingset.c).  What works inside one node - its lists under the
 * lru lock, a reclaim pass, kswapd's wake-ups - is node.h's.
 */
#ifndef PC_VMSCAN_H
#define PC_VMSCAN_H

#include "internal.h"

/* lru.c (the _locked list operations: node.h) */
void pc__lru_add(struct pc_cache *c, struct pc_page *p);	/* takes a ref */
void pc__mark_accessed(struct pc_cache *c, struct pc_page *p);
void pc__lru_drain(struct pc_cache *c, struct pc_tctx *t);
/* Put a page under writeback with PG_reclaim at its inactive list's tail. */
void pc__lru_rotate_reclaimable(struct pc_cache *c, struct pc_page *p);
void pc__deactivate_page(struct pc_cache *c, struct pc_page *p);

/* kswapd.c (reclaim of one node: vmscan.c, node.h) */
int pc__kswapd_start(struct pc_cache *c);
void pc__kswapd_stop(struct pc_cache *c);

/* workingset.c */
void *pc__workingset_eviction(struct pc_cache *c, struct pc_page *p);
void pc__workingset_refault(struct pc_cache *c, struct pc_page *p, void *shadow);
void pc__workingset_activation(struct pc_cache *c, struct pc_page *p);
/*
 * Delete stale shadow entries of every mapping until the count is at most
 * 3/4 of c->max_shadows; returns how many.  kswapd calls it when an
 * eviction asked (c->shadow_trim); no lock held.
 */
uint64_t pc__workingset_trim(struct pc_cache *c);

#endif /* PC_VMSCAN_H */
