/*
 * test_cache.c - the cache's configuration (cache.c): each key takes its
 * documented values and nothing else.
 */
#include <stdio.h>
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_keys),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
