/*
 * admin.h - what admin.c (operating shared caches from outside) gives the
 * rest of the library.
 */
#ifndef PC_ADMIN_H
#define PC_ADMIN_H

struct pc_cache;

/*
 * Every file of @c written back from this process, which holds a
 * descriptor of each (the home, or a private cache's process): what
 * pc_cache_sync_all asks the home for (home.c runs it on MSG_SYNC).  As
 * pc_cache_sync, but pages that stay dirty when no write failed during
 * the call were dirtied again after their write (a writer running
 * meanwhile): not an error.  0, the first writeback error, or -ENOMEM.
 */
int pc__admin_sync(struct pc_cache *c);

#endif /* PC_ADMIN_H */
