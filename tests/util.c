/*
 * util.c - helpers shared by the tests: scratch directory, seeds, patterns.
 * Single-threaded setup code; tu_rand state is the caller's.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static char dir[512];

static void rm_dir(void)
{
	char cmd[600];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
}

const char *tu_dir(void)
{
	if (!dir[0]) {
		const char *base = getenv("PC_TEST_DIR");

		snprintf(dir, sizeof(dir), "%s/pctest.XXXXXX",
			 base ? base : "/var/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		atexit(rm_dir);
	}
	return dir;
}

const char *tu_path(const char *name)
{
	static __thread char buf[8][600];
	static __thread int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tu_dir(), name);
	return buf[i];
}

uint64_t tu_seed(const char *test)
{
	const char *e = getenv("PC_SEED");
	uint64_t s;

	if (e) {
		s = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		    (uint64_t)getpid();
	}
	if (!s)
		s = 1;
	printf("seed %s: %" PRIu64 " (replay with PC_SEED=%" PRIu64 ")\n",
	       test, s, s);
	fflush(stdout);
	return s;
}

uint64_t tu_rand(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

void tu_pattern(void *buf, size_t len, uint64_t seed, uint64_t off)
{
	unsigned char *b = buf;

	for (size_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ULL ^ seed;

		b[i] = (unsigned char)(x >> 56 ^ x >> 13);
	}
}

int tu_dir_is_tmpfs(void)
{
	struct statfs sf;

	return statfs(tu_dir(), &sf) == 0 && sf.f_type == 0x01021994;
}
