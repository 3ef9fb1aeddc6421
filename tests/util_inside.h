/*
 * util_inside.h - helpers for the tests that look inside the cache
 * (internal.h), shared so that each is written once.  util.h's helpers
 * use the public API only; these read the cache's own structures.
 */
#ifndef TESTS_UTIL_INSIDE_H
#define TESTS_UTIL_INSIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* Is page @index of @f's file in the cache?  Changes no page's state. */
static inline bool tu_resident(pc_file *f, uint64_t index)
{
	struct pc_page *p = pc__find_get_page(f->mapping, index);

	if (p)
		pc__put_page(f->cache, p);
	return p != NULL;
}

#endif /* TESTS_UTIL_INSIDE_H */
