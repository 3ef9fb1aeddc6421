/*
 * config.h - struct pc_config, what pc_cache_create's config string sets
 * (config.c parses it, from its table of keys; the README's table
 * documents every key).
 */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include "base.h"

#define PC_RA_MAX_AUTO UINT64_MAX	/* readahead.max not set (readahead.c) */

/* The modes of four keys, in the order of their names (config.c). */
enum pc_batch_remove {		/* reclaim.batch_remove (vmscan.c) */
	PC_REMOVE_OFF,		/* one tree-lock hold per page: vanilla */
	PC_REMOVE_ON,		/* runs of consecutive pages of a mapping */
	PC_REMOVE_SORTED,	/* the batch sorted by mapping first */
};
enum pc_contention_backoff {	/* reclaim.contention_backoff (vmscan.c) */
	PC_BACKOFF_OFF,
	PC_BACKOFF_SLEEPY,	/* wait for a reclaimer's progress, 10 ms */
	PC_BACKOFF_BLUNT,	/* all but one kswapd stall */
};
enum pc_reclaim_policy {	/* reclaim.policy (policy.h) */
	PC_POLICY_CLASSIC,	/* two-list LRU: inactive, active */
	PC_POLICY_SIEVE,	/* one FIFO, a visited bit, a hand */
	PC_POLICY_S3FIFO,	/* small and main FIFOs, shadows as the ghost */
	PC_POLICY_MGLRU,	/* generations and aging (partial: mglru.c) */
	PC_NR_POLICIES
};
enum pc_stickiness {		/* cache.stickiness (dropbehind.c) */
	PC_STICKY_OFF,		/* stream pages cached like any */
	PC_STICKY_AUTO,		/* use-once on fast devices */
	PC_STICKY_ALWAYS,	/* use-once, and dropped at once */
};

struct pc_config {
	uint64_t memory;		/* bytes: the starting budget */
	uint64_t memory_max;		/* bytes: largest budget (resize); 0:
					   the machine's memory, or memory */
	int nodes;			/* 0 = auto */
	char io[16];
	uint64_t ra_max_pages;		/* readahead.max; PC_RA_MAX_AUTO: unset */
	enum pc_batch_remove batch_remove;
	enum pc_contention_backoff contention_backoff;
	enum pc_reclaim_policy reclaim_policy;
	bool node_reclaim;
	bool mapping_sticky;
	bool dirty_spread;
	bool deferred_activation;
	bool single_marker;
	bool waiters_bit;
	bool numa_balancing;
	bool kswapd;			/* reclaim.kswapd: background reclaim */
	enum pc_stickiness stickiness;
	unsigned dirty_ratio;		/* percent of dirtyable memory */
	unsigned dirty_background_ratio;
	uint64_t dirty_bytes;		/* overrides the ratio when set */
	uint64_t dirty_background_bytes;
	unsigned dirty_time_ms;		/* 0: off */
	unsigned dirty_expire_ms;
	unsigned writeback_interval_ms;
	unsigned watermark_scale;	/* per 10000 of a node's frames */
	unsigned thread_frames;		/* memory.thread_frames (pcp.c) */
	unsigned numa_scan_ms;		/* numa.scan_period_ms: initial */
	unsigned numa_migrate_rate;	/* pages per second */
	char trace[256];		/* trace=PATH; empty: off */
	bool shared;			/* one cache for many processes:
					   in a region (share.c) */
	char name[65];			/* shared: joinable by this name
					   (pc_cache_attach); empty: not */
};

/* @s (NULL: every default) into @cfg: 0, or -EINVAL said on stderr. */
int pc__config_parse(struct pc_config *cfg, const char *s);

#ifdef PC_DEBUG
/*
 * Tests: the @i-th key of config.c's table (NULL past the end), its
 * default as a value (*@def; NULL: not set) and, for one not set, the
 * README's words for it (*@doc, or NULL).
 */
const char *pc__config_key(unsigned i, const char **def, const char **doc);
/*
 * Tests: @cfg as a config string that parses back to it (the keys not
 * set left out), as snprintf writes into @buf: returns its length.
 */
int pc__config_format(const struct pc_config *cfg, char *buf, size_t size);
#endif

#endif /* PC_CONFIG_H */
