/*
 * config.c - the config string of pc_cache_create and pc_config_check:
 * space-separated key=value pairs into a struct pc_config (config.h).
 *
 * One table, keys[] below, says everything about a key: its name, its
 * type, its default (a value as the README writes it, parsed like a
 * user's; NULL: not set), its range, and the field it sets.  Everything
 * comes from it: the defaults (config_defaults parses each default), the
 * parsing (key_set, by type), and the debug builds' printing of a config
 * as a string that parses back to it (pc__config_format, and
 * pc__config_key for the test that checks the README's table against
 * this one).  Adding a key: a field in config.h, a row here, a row in the
 * README.
 *
 *   type     value                              field
 *   SIZE     N[kKmMgGtT][i][Bb], in [min, max]   uint64_t, bytes
 *   PAGES    a SIZE, at most max                uint64_t, pages
 *            (not set: PC_RA_MAX_AUTO)
 *   UINT     N, in [min, max]                   unsigned
 *   NODES    a UINT, or auto (0)                int
 *   BOOL     on/off, 1/0, true/false, yes/no    bool
 *   CHOICE   one of names[] (its position), or  an enum of config.h
 *            a BOOL (off: 0, on: @on; @on < 0:
 *            names only)
 *   IO       an I/O backend's name (io.h)       char[16]
 *   PATH     a non-empty path                   char[256]
 *
 * Anything else is -EINVAL, with a message on stderr.  No state: the
 * table is read-only, the functions reentrant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "io.h"
#include "node.h"

enum key_type { SIZE, PAGES, UINT, NODES, BOOL, CHOICE, IO, PATH };

struct key {
	const char *name;
	enum key_type type;
	const char *def;		/* the default, a value; NULL: not set */
	const char *doc;		/* def NULL: the README's words for the
					   default, if it has one */
	uint64_t min, max;		/* SIZE, PAGES, UINT, NODES */
	size_t off;			/* the field in struct pc_config */
	size_t size;			/* ... and its size */
	const char *const *names;	/* CHOICE */
	int on;				/* CHOICE: the value of "on"; < 0:
					   no boolean, names only */
};

static const char *const removal[] = {
	[PC_REMOVE_OFF] = "off", [PC_REMOVE_ON] = "on",
	[PC_REMOVE_SORTED] = "sorted", NULL };
static const char *const backoff[] = {
	[PC_BACKOFF_OFF] = "off", [PC_BACKOFF_SLEEPY] = "sleepy",
	[PC_BACKOFF_BLUNT] = "blunt", NULL };
static const char *const policies[] = {
	[PC_POLICY_CLASSIC] = "classic", [PC_POLICY_SIEVE] = "sieve",
	[PC_POLICY_S3FIFO] = "s3fifo", [PC_POLICY_MGLRU] = "mglru", NULL };
static const char *const sticky[] = {
	[PC_STICKY_OFF] = "off", [PC_STICKY_AUTO] = "auto",
	[PC_STICKY_ALWAYS] = "always", NULL };

#define FIELD(f) .off = offsetof(struct pc_config, f), \
		 .size = sizeof(((struct pc_config *)0)->f)
#define MS_MAX 3600000u		/* an hour */

static const struct key keys[] = {
	{ "memory", SIZE, "64M", NULL, 0, UINT64_MAX, FIELD(memory) },
	{ "memory.max", SIZE, NULL, "the machine's memory, or memory if larger",
	  1, UINT64_MAX, FIELD(memory_max) },
	{ "memory.thread_frames", UINT, "32", NULL, 0, PC_PCP_MAX,
	  FIELD(thread_frames) },
	{ "nodes", NODES, "1", NULL, 1, PC_MAX_NODES, FIELD(nodes) },
	{ "io", IO, "uring", NULL, 0, 0, FIELD(io) },
	{ "readahead.max", PAGES, NULL, "2M, at most 1/64 of the budget",
	  0, 64ull << 20, FIELD(ra_max_pages) },
	{ "readahead.single_marker", BOOL, "on", NULL, 0, 0,
	  FIELD(single_marker) },
	{ "reclaim.kswapd", BOOL, "on", NULL, 0, 0, FIELD(kswapd) },
	{ "reclaim.batch_remove", CHOICE, "sorted", NULL, 0, 0,
	  FIELD(batch_remove), removal, PC_REMOVE_ON },
	{ "reclaim.contention_backoff", CHOICE, "off", NULL, 0, 0,
	  FIELD(contention_backoff), backoff, PC_BACKOFF_SLEEPY },
	{ "reclaim.policy", CHOICE, "classic", NULL, 0, 0,
	  FIELD(reclaim_policy), policies, -1 },
	{ "reclaim.watermark_scale", UINT, "100", NULL, 1, 3000,
	  FIELD(watermark_scale) },
	{ "numa.node_reclaim", BOOL, "on", NULL, 0, 0, FIELD(node_reclaim) },
	{ "numa.mapping_sticky", BOOL, "off", NULL, 0, 0,
	  FIELD(mapping_sticky) },
	{ "numa.dirty_spread", BOOL, "off", NULL, 0, 0, FIELD(dirty_spread) },
	{ "numa.balancing", BOOL, "off", NULL, 0, 0, FIELD(numa_balancing) },
	{ "numa.scan_period_ms", UINT, "100", NULL, 1, 60000,
	  FIELD(numa_scan_ms) },
	{ "numa.migrate_rate", UINT, "65536", NULL, 1, 1u << 30,
	  FIELD(numa_migrate_rate) },
	{ "lru.deferred_activation", BOOL, "on", NULL, 0, 0,
	  FIELD(deferred_activation) },
	{ "page.waiters_bit", BOOL, "on", NULL, 0, 0, FIELD(waiters_bit) },
	{ "writeback.dirty_ratio", UINT, "20", NULL, 1, 100,
	  FIELD(dirty_ratio) },
	{ "writeback.dirty_background_ratio", UINT, "10", NULL, 1, 100,
	  FIELD(dirty_background_ratio) },
	{ "writeback.dirty_bytes", SIZE, NULL, NULL, 0, UINT64_MAX,
	  FIELD(dirty_bytes) },
	{ "writeback.dirty_background_bytes", SIZE, NULL, NULL, 0, UINT64_MAX,
	  FIELD(dirty_background_bytes) },
	{ "writeback.dirty_time_ms", UINT, "0", NULL, 0, MS_MAX,
	  FIELD(dirty_time_ms) },
	{ "writeback.dirty_expire_ms", UINT, "30000", NULL, 0, MS_MAX,
	  FIELD(dirty_expire_ms) },
	{ "writeback.interval_ms", UINT, "5000", NULL, 1, MS_MAX,
	  FIELD(writeback_interval_ms) },
	{ "cache.stickiness", CHOICE, "auto", NULL, 0, 0, FIELD(stickiness),
	  sticky, PC_STICKY_AUTO },
	{ "trace", PATH, NULL, NULL, 0, 0, FIELD(trace) },
	{ "shared", BOOL, "off", NULL, 0, 0, FIELD(shared) },
	{ "name", PATH, NULL, NULL, 0, 0, FIELD(name) },
};

#define NR_KEYS (sizeof(keys) / sizeof(keys[0]))

_Static_assert(sizeof(enum pc_batch_remove) == sizeof(int) &&
	       sizeof(enum pc_contention_backoff) == sizeof(int) &&
	       sizeof(enum pc_stickiness) == sizeof(int),
	       "CHOICE fields are set as ints");

/* ------------------------------------------------------------------ */
/* Values.                                                              */

static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	case 't': case 'T': n <<= 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long n;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "true") ||
	    !strcmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "false") ||
	    !strcmp(v, "no")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/*
 * A value among @names: its position (the mode's enum value), or a
 * boolean: off = 0, on = @on (@on < 0: no boolean).  -EINVAL for anything
 * else.
 */
static int parse_choice(const char *v, const char *const *names, int on)
{
	bool b;

	for (int i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return i;
	if (on >= 0 && parse_bool(v, &b) == 0)
		return b ? on : 0;
	return -EINVAL;
}

/* Key @k of @cfg to @v: 0, or -EINVAL and @cfg unchanged. */
static int key_set(const struct key *k, struct pc_config *cfg, const char *v)
{
	void *f = (char *)cfg + k->off;
	uint64_t n;
	int r;

	switch (k->type) {
	case SIZE:
	case PAGES:
		if (parse_size(v, &n) || n < k->min || n > k->max)
			return -EINVAL;
		*(uint64_t *)f = k->type == PAGES ? n >> PC_PAGE_SHIFT : n;
		return 0;
	case NODES:
		if (!strcmp(v, "auto")) {
			*(int *)f = 0;
			return 0;
		}
		if (parse_uint(v, k->max, &n) || n < k->min)
			return -EINVAL;
		*(int *)f = (int)n;
		return 0;
	case UINT:
		if (parse_uint(v, k->max, &n) || n < k->min)
			return -EINVAL;
		*(unsigned *)f = (unsigned)n;
		return 0;
	case BOOL:
		return parse_bool(v, (bool *)f);
	case CHOICE:
		if ((r = parse_choice(v, k->names, k->on)) < 0)
			return r;
		*(int *)f = r;	/* an enum: int-sized, see below */
		return 0;
	case IO:
		if (!pc__io_ops_by_name(v))
			return -EINVAL;
		snprintf(f, k->size, "%s", v);
		return 0;
	case PATH:
		if (!*v || strlen(v) >= k->size)
			return -EINVAL;
		strcpy(f, v);
		return 0;
	}
	return -EINVAL;
}

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < NR_KEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* Every key at its default (the table's; not set: zero, or auto). */
static void config_defaults(struct pc_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NR_KEYS; i++) {
		const struct key *k = &keys[i];

		if (k->def) {
			int r = key_set(k, cfg, k->def);

			PC_ASSERT(r == 0);	/* test_config tries each */
			(void)r;
		} else if (k->type == PAGES) {
			*(uint64_t *)(void *)((char *)cfg + k->off) =
				PC_RA_MAX_AUTO;
		}
	}
}

/* ------------------------------------------------------------------ */
/* The string.                                                          */

int pc__config_parse(struct pc_config *cfg, const char *s)
{
	char buf[512];

	config_defaults(cfg);
	if (!s)
		return 0;
	while (*s) {
		const struct key *k;
		size_t len;
		char *eq;
		int r;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " \t\n");
		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, len);
		buf[len] = 0;
		s += len;
		eq = strchr(buf, '=');
		if (!eq || eq == buf) {
			fprintf(stderr, "pagecache: config: '%s' is not key=value\n", buf);
			return -EINVAL;
		}
		*eq = 0;
		k = key_find(buf);
		r = k ? key_set(k, cfg, eq + 1) : -EINVAL;
		if (r) {
			fprintf(stderr, "pagecache: config: bad key or value '%s=%s'\n",
				buf, eq + 1);
			return r;
		}
	}
	if (cfg->dirty_background_ratio > cfg->dirty_ratio)
		cfg->dirty_background_ratio = cfg->dirty_ratio;
	return 0;
}

PC_EXPORT int pc_config_check(const char *config)
{
	struct pc_config cfg;
	int r = pc__config_parse(&cfg, config);

	return r ? r : pc__config_check_budget(&cfg);
}

/* ------------------------------------------------------------------ */
/* Debug builds: the table for the tests.                               */

#ifdef PC_DEBUG
const char *pc__config_key(unsigned i, const char **def, const char **doc)
{
	if (i >= NR_KEYS)
		return NULL;
	*def = keys[i].def;
	*doc = keys[i].doc;
	return keys[i].name;
}

/* Key @k's value in @cfg, as it parses back; false if not set. */
static bool key_format(const struct key *k, const struct pc_config *cfg,
		       char *buf, size_t size)
{
	const void *f = (const char *)cfg + k->off;
	uint64_t n;

	switch (k->type) {
	case SIZE:
		n = *(const uint64_t *)f;
		if (!k->def && n == 0)
			return false;
		snprintf(buf, size, "%llu", (unsigned long long)n);
		return true;
	case PAGES:
		n = *(const uint64_t *)f;
		if (n == PC_RA_MAX_AUTO)
			return false;
		snprintf(buf, size, "%llu",
			 (unsigned long long)(n << PC_PAGE_SHIFT));
		return true;
	case NODES:
		if (*(const int *)f == 0)
			snprintf(buf, size, "auto");
		else
			snprintf(buf, size, "%d", *(const int *)f);
		return true;
	case UINT:
		snprintf(buf, size, "%u", *(const unsigned *)f);
		return true;
	case BOOL:
		snprintf(buf, size, "%s", *(const bool *)f ? "on" : "off");
		return true;
	case CHOICE:
		snprintf(buf, size, "%s", k->names[*(const int *)f]);
		return true;
	case IO:
	case PATH:
		if (!*(const char *)f)
			return false;
		snprintf(buf, size, "%s", (const char *)f);
		return true;
	}
	return false;
}

int pc__config_format(const struct pc_config *cfg, char *buf, size_t size)
{
	size_t len = 0;

	for (size_t i = 0; i < NR_KEYS; i++) {
		char v[300];

		if (!key_format(&keys[i], cfg, v, sizeof(v)))
			continue;
		len += (size_t)snprintf(buf + pc_min(len, size),
					size - pc_min(len, size), "%s%s=%s",
					len ? " " : "", keys[i].name, v);
	}
	return (int)len;
}
#endif
