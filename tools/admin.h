/*
 * tools/admin.h - the `pagecache` commands that operate shared caches
 * (tools/admin.c: ls, stat, and the helpers; admin_files.c: files,
 * fincore; admin_ctl.c: resize, sync, drop, stop), between their files.
 */
#ifndef PC_TOOLS_ADMIN_H
#define PC_TOOLS_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagecache.h"

/* The dispatcher's entries: argv[0] is the command's name. */
int pc_ls_main(int argc, char **argv);
int pc_stat_main(int argc, char **argv);
int pc_files_main(int argc, char **argv);
int pc_fincore_main(int argc, char **argv);
int pc_resize_main(int argc, char **argv);
int pc_sync_main(int argc, char **argv);
int pc_drop_main(int argc, char **argv);
int pc_stop_main(int argc, char **argv);

/*
 * A view of the user's cache @name (NULL: the default) for command @cmd,
 * or the cache attached (@region gets the name it was found by): 0, or
 * the exit status, said on stderr (2: not a name; 1: none, another
 * user's, broken ...).
 */
int pc_admin_view(const char *cmd, const char *name, pc_view **v);
int pc_admin_attach(const char *cmd, const char *name, pc_cache **c,
		    char *region, size_t size);
/* Say why @cmd failed on the cache @name with -errno @r: the status. */
int pc_admin_error(const char *cmd, const char *name, int r);
bool pc_admin_name_ok(const char *name);
/* SIZE with K/M/G/T suffixes, in bytes; 0 if it is not one. */
uint64_t pc_admin_size(const char *v);
/* A positive count from @v (digits only), or 0. */
unsigned long pc_admin_count(const char *v);
/* @pages as 12K, 3.5M, 4G. */
const char *pc_admin_human(uint64_t pages, char *buf, size_t size);
/* @s as a JSON string, to stdout. */
void pc_admin_json_str(const char *s);

#endif /* PC_TOOLS_ADMIN_H */
