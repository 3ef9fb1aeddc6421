/*
 * tools/pagecache.c - the `pagecache` command: subcommand dispatch.
 *
 *   pagecache bench ...     workloads against engines   tools/bench/
 *   pagecache run ...       the default suite, then the comparison
 *   pagecache compare ...   result files side by side   tools/compare/
 *   pagecache report DIR    report.html of a folder     tools/compare/
 *   pagecache trace ...     trace reports               tools/trace/
 *   pagecache exec ...      a program on the user's cache    tools/exec.c
 *   pagecache ls | stat | files | fincore | resize | sync | drop | stop
 *                           operate the user's shared caches tools/admin*.c
 *   pagecache version | help [COMMAND]
 *
 * Each subcommand lives in its own folder behind one entry point,
 * `int pc_<name>_main(int argc, char **argv)` with argv[0] the
 * subcommand's name, returning the exit code.  This is the one file that
 * defines main(): the tests link every other object of tools/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "compare/compare.h"
#include "trace/trace.h"
#include "admin.h"

#ifndef PC_VERSION
#define PC_VERSION "unknown"	/* the Makefile passes -DPC_VERSION */
#endif

int pc_exec_main(int argc, char **argv);	/* tools/exec.c */
static int run_main(int argc, char **argv);
static int version_main(int argc, char **argv);
static int help_main(int argc, char **argv);

static const struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "bench", pc_bench_main, "run workloads against engines, write result files" },
	{ "run", run_main, "the default suite on every engine, then the comparison" },
	{ "compare", pc_compare_main, "compare result files: the verdict, LKP and mmtests tables, plots" },
	{ "report", pc_report_main, "report.html, its charts and compare.txt for a result folder" },
	{ "trace", pc_trace_main, "report on a trace recorded with bench --trace" },
	{ "exec", pc_exec_main, "run a program with its file I/O on the user's shared page cache" },
	{ "ls", pc_ls_main, "the user's shared caches: budget, cached, dirty, processes, state" },
	{ "stat", pc_stat_main, "a cache's counters, or one line each interval (-w) as vmstat" },
	{ "files", pc_files_main, "the files a cache holds, most cached first" },
	{ "fincore", pc_fincore_main, "what a cache holds of the given files" },
	{ "resize", pc_resize_main, "set a cache's budget while it is in use" },
	{ "sync", pc_sync_main, "write back everything a cache holds dirty" },
	{ "drop", pc_drop_main, "drop a cache's clean pages (of the given files)" },
	{ "stop", pc_stop_main, "write back and remove a cache; its programs go on with the kernel" },
	{ "version", version_main, "print the version" },
	{ "help", help_main, "help on the command or a subcommand" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: pagecache COMMAND [options]\n\n"
		"A page cache for programs, in user space, and its benchmark lab.\n\n"
		"commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\n`pagecache COMMAND --help` for a command's options.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/*
 * `pagecache run`: the suite, then the verdict on what it wrote, with
 * compare.txt and report.html written into the result folder (the
 * folder of the first file: the bench writes them all in one).
 */
static int run_main(int argc, char **argv)
{
	char **files = NULL, *cargv[1030], *dir;
	int rc, crc, n = 0;

	rc = pcb_suite_main(argc, argv, &files);
	if (!files || !files[0] || (rc != 0 && rc != 1)) {
		pcb_free_files(files);
		return rc;
	}
	dir = strdup(files[0]);
	if (!dir) {
		pcb_free_files(files);
		return 1;
	}
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	else
		strcpy(dir, ".");
	cargv[n++] = "compare";
	cargv[n++] = "--report";
	cargv[n++] = dir;
	cargv[n++] = "--base";
	cargv[n++] = "kernel";
	for (char **f = files; *f && n < 1029; f++)
		cargv[n++] = *f;
	cargv[n] = NULL;
	printf("\n");
	fflush(stdout);
	crc = pc_compare_main(n, cargv);
	free(dir);
	pcb_free_files(files);
	return rc ? rc : crc;
}

static int version_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("pagecache %s\n", PC_VERSION);
	return 0;
}

static int help_main(int argc, char **argv)
{
	const struct command *c;
	char *hargv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "pagecache: unknown command '%s'\n", argv[1]);
		return 2;
	}
	if (c->main == help_main || c->main == version_main) {
		printf("pagecache %s: %s\n", c->name, c->what);
		return 0;
	}
	hargv[0] = (char *)c->name;
	return c->main(2, hargv);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return version_main(argc - 1, argv + 1);
	c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "pagecache: unknown command '%s' (see pagecache help)\n",
			argv[1]);
		return 2;
	}
	return c->main(argc - 1, argv + 1);
}
