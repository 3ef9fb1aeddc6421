/*
 * test_config.c - the cache's configuration (config.c): each key takes its
 * documented values and nothing else; the README's table of keys says
 * what config.c's table says (every key, every default); a config printed
 * from the table parses back to itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util.h"

/* Each policy key takes its documented values and nothing else. */
static void test_policy_keys(void **state)
{
	static const struct {
		const char *key;
		const char *const good[12];
		const int val[12];
		const char *const bad[8];
	} keys[] = {
		{ "reclaim.batch_remove",
		  { "off", "on", "sorted", "0", "1", "no", "yes", "false", "true" },
		  { 0, 1, 2, 0, 1, 0, 1, 0, 1 },
		  { "", "2", "sleepy", "Sorted", "sort", "onn", "-1" } },
		{ "reclaim.contention_backoff",
		  { "off", "sleepy", "blunt", "on", "0", "1" },
		  { 0, 1, 2, 1, 0, 1 },
		  { "", "2", "sorted", "Blunt", "sleep", "auto" } },
		{ "numa.node_reclaim", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "sorted", "blunt", "On" } },
		{ "numa.mapping_sticky", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "sorted", "sticky" } },
		{ "numa.dirty_spread", { "on", "off", "1", "0" }, { 1, 0, 1, 0 },
		  { "", "2", "auto", "spread" } },
		{ "lru.deferred_activation", { "on", "off", "1", "0" },
		  { 1, 0, 1, 0 }, { "", "2", "sorted", "deferred" } },
		{ "reclaim.kswapd", { "on", "off" }, { 1, 0 }, { "", "2", "blunt" } },
		{ "reclaim.watermark_scale", { "1", "100", "3000" }, { 1, 100, 3000 },
		  { "", "0", "3001", "-5", "10%" } },
	};
	struct pc_config cfg;

	(void)state;
	for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (int i = 0; keys[k].good[i]; i++) {
			char s[128];
			int v;

			snprintf(s, sizeof(s), "%s=%s", keys[k].key, keys[k].good[i]);
			if (pc__config_parse(&cfg, s) != 0)
				fail_msg("refused: %s", s);
			if (!strcmp(keys[k].key, "reclaim.batch_remove"))
				v = cfg.batch_remove;
			else if (!strcmp(keys[k].key, "reclaim.contention_backoff"))
				v = cfg.contention_backoff;
			else if (!strcmp(keys[k].key, "numa.node_reclaim"))
				v = cfg.node_reclaim;
			else if (!strcmp(keys[k].key, "numa.mapping_sticky"))
				v = cfg.mapping_sticky;
			else if (!strcmp(keys[k].key, "numa.dirty_spread"))
				v = cfg.dirty_spread;
			else if (!strcmp(keys[k].key, "lru.deferred_activation"))
				v = cfg.deferred_activation;
			else if (!strcmp(keys[k].key, "reclaim.kswapd"))
				v = cfg.kswapd;
			else
				v = (int)cfg.watermark_scale;
			if (v != keys[k].val[i])
				fail_msg("%s: value %d, want %d", s, v, keys[k].val[i]);
		}
		for (int i = 0; keys[k].bad[i]; i++) {
			char s[128];

			snprintf(s, sizeof(s), "%s=%s", keys[k].key, keys[k].bad[i]);
			if (pc__config_parse(&cfg, s) != -EINVAL)
				fail_msg("accepted: %s", s);
		}
	}
	/* nodes: N from 1 to 64, or auto. */
	assert_int_equal(pc__config_parse(&cfg, "nodes=auto"), 0);
	assert_int_equal(cfg.nodes, 0);
	assert_int_equal(pc__config_parse(&cfg, "nodes=4"), 0);
	assert_int_equal(cfg.nodes, 4);
	assert_int_equal(pc__config_parse(&cfg, "nodes=0"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "nodes=65"), -EINVAL);
	assert_int_equal(pc__config_parse(&cfg, "nodes=two"), -EINVAL);
}

static FILE *readme_open(void)
{
	char path[1200];

	tu_source(path, sizeof(path), "README.md");
	return fopen(path, "r");
}

#define MAX_ROWS 64

struct row {
	char key[64];
	char def[128];		/* what the parentheses say; "" if none */
	bool seen;		/* config.c has the key */
};

/*
 * The README's "| key | values (default) | what it does |" table: one row
 * a key (a row naming several, "a, b", is one per key), the default the
 * text in the last parentheses of the values column.
 */
static unsigned readme_rows(struct row *rows)
{
	FILE *f = readme_open();
	char line[1024];
	bool in_table = false;
	unsigned n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *keys, *values, *end, *open, *close, *k;

		if (!strncmp(line, "| key | values (default) |", 26)) {
			in_table = true;
			continue;
		}
		if (!in_table || !strncmp(line, "| ---", 5))
			continue;
		if (line[0] != '|')
			break;	/* the table's end */
		keys = line + 2;
		values = strstr(keys, " | ");
		assert_non_null(values);
		*values = 0;
		values += 3;
		end = strstr(values, " | ");
		assert_non_null(end);
		*end = 0;
		open = strrchr(values, '(');
		close = open ? strrchr(open, ')') : NULL;
		for (k = strtok(keys, ", "); k; k = strtok(NULL, ", ")) {
			assert_true(n < MAX_ROWS);
			memset(&rows[n], 0, sizeof(rows[n]));
			snprintf(rows[n].key, sizeof(rows[n].key), "%s", k);
			if (open && close)
				snprintf(rows[n].def, sizeof(rows[n].def), "%.*s",
					 (int)(close - open - 1), open + 1);
			n++;
		}
	}
	fclose(f);
	assert_true(n > 0);
	return n;
}

/*
 * Every key of config.c's table is in the README's with the same default
 * (its value, or "value: what it means"; for a key not set, the table's
 * words), and the README has no key the table lacks.
 */
static void test_readme_table(void **state)
{
	struct row rows[MAX_ROWS];
	unsigned n = readme_rows(rows);
	const char *key, *def, *doc;

	(void)state;
	for (unsigned i = 0; (key = pc__config_key(i, &def, &doc)); i++) {
		const char *want = def ? def : doc ? doc : "";
		struct row *r = NULL;
		size_t len = strlen(want);

		for (unsigned j = 0; j < n; j++)
			if (!strcmp(rows[j].key, key))
				r = &rows[j];
		if (!r)
			fail_msg("README.md: no row for the key %s", key);
		r->seen = true;
		if (strcmp(r->def, want) &&
		    !(def && !strncmp(r->def, want, len) && r->def[len] == ':'))
			fail_msg("README.md: %s defaults to (%s), config.c to (%s)",
				 key, r->def, want);
		/* A default is a value the key takes. */
		if (def) {
			struct pc_config cfg, dflt;
			char s[256];

			snprintf(s, sizeof(s), "%s=%s", key, def);
			assert_int_equal(pc__config_parse(&dflt, NULL), 0);
			assert_int_equal(pc__config_parse(&cfg, s), 0);
			assert_memory_equal(&cfg, &dflt, sizeof(cfg));
		}
	}
	for (unsigned j = 0; j < n; j++)
		if (!rows[j].seen)
			fail_msg("README.md: the key %s is not config.c's", rows[j].key);
}

/* A config printed from the table parses back to the same config. */
static void test_format_round_trip(void **state)
{
	static const char *const configs[] = {
		NULL,
		"memory=1G memory.max=4G nodes=auto io=sync readahead.max=512K "
		"readahead.single_marker=off reclaim.kswapd=off "
		"reclaim.batch_remove=on reclaim.contention_backoff=blunt "
		"reclaim.watermark_scale=3000 numa.node_reclaim=off "
		"numa.mapping_sticky=on numa.dirty_spread=on numa.balancing=on "
		"numa.scan_period_ms=60000 numa.migrate_rate=1 "
		"lru.deferred_activation=off page.waiters_bit=off "
		"writeback.dirty_ratio=50 writeback.dirty_background_ratio=5 "
		"writeback.dirty_bytes=8M writeback.dirty_background_bytes=1M "
		"writeback.dirty_time_ms=250 writeback.dirty_expire_ms=0 "
		"writeback.interval_ms=1 cache.stickiness=always trace=/tmp/t",
		"nodes=7 readahead.max=0 cache.stickiness=off",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		struct pc_config a, b;
		char s[2048];
		int len;

		memset(&a, 0, sizeof(a));
		memset(&b, 0xa5, sizeof(b));
		assert_int_equal(pc__config_parse(&a, configs[i]), 0);
		len = pc__config_format(&a, s, sizeof(s));
		assert_true(len > 0 && (size_t)len < sizeof(s));
		if (pc__config_parse(&b, s) != 0)
			fail_msg("refused: %s", s);
		if (memcmp(&a, &b, sizeof(a)))
			fail_msg("'%s' printed as '%s' parses to another config",
				 configs[i] ? configs[i] : "", s);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_readme_table),
		cmocka_unit_test(test_format_round_trip),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
