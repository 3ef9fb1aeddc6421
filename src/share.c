/*
 * share.c - a cache that many processes use (shared=on): its region, its
 * layout, its mappings' slots, and create, attach and detach.
 *
 * The whole cache - struct pc_cache, frames, descriptors, tree nodes,
 * mappings, open files, bdis, thread contexts, counters, wait queues, the
 * reclamation domain - lives in one region (shm.c) that every process
 * maps at the same address, so a pointer means the same in each.  Nothing
 * in the region points into a process's own memory or at a function.
 *
 *   region ─┬─ struct pc_cache (root 0) ── struct pc_share (share.h):
 *           │                              serials, the mappings' slots,
 *           │                              the home's sockets, the table
 *           │                              of processes
 *           ├─ objects (pc__cache_zalloc: shm.c's size classes)
 *           └─ frames, descriptors, tree arenas (pc__shm_reserve)
 *
 * The shared cache's modules, one concept each:
 *   share.c   this file: the region's making and joining, the layout
 *             check, the slots and serials of mappings;
 *   local.c   what each process keeps for itself (its handle: region,
 *             I/O backend, descriptors by slot), the memory and locks;
 *   home.c    the home - the process that runs the cache's threads - its
 *             sockets, the descriptors sent to it, its service thread;
 *   procs.c   the table of processes and the reaping of the dead;
 *   daemon.c  pc_cache_spawn: a daemon whose only job is to be a home;
 *   io_local.c  each process's I/O backend of a cache (private ones too).
 *
 * Create (pc__share_create, from pc_cache_create): a new region, the
 * cache's struct pc_cache and struct pc_share in it, the home's sockets
 * bound, this process entered; once the rest of create is done, the
 * service thread starts and the cache is published (root 0, and root 1:
 * LAYOUT_ID), so that attach may find it.
 *
 * Attach (pc_cache_attach, a named cache, after exec too): the region is
 * mapped at its address, its layout checked against this build's, the
 * process entered; a cache whose home is gone, or is closing, is refused.
 *
 * Destroy: in the home, pc__share_wait_others removes the name, then
 * waits until every other process attached has detached or died, then the
 * cache is torn down as a private one; in another process it detaches
 * (pc__share_detach: its descriptors closed, its batches drained, the
 * region unmapped).  pc_cache_remove removes the name of a cache nobody
 * serves (its home died).
 *
 * A mapping's slot indexes each process's descriptors of it (local.c);
 * its serial (never reused) tells a process that a slot's descriptors
 * belong to a mapping since freed.  The slots' bitmap is taken and given
 * back by compare-and-swap; no lock.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"
#include "bdi.h"
#include "ebr.h"
#include "node.h"
#include "share.h"
#include "shm.h"

/*
 * The layout of what the region holds, as this build compiled it (kept in
 * root 1): a process of another build must not read it as its own.
 */
#define LAYOUT_ID ((uint64_t)sizeof(struct pc_cache) << 44 ^ \
		   (uint64_t)sizeof(struct pc_mapping) << 32 ^ \
		   (uint64_t)sizeof(struct pc_file) << 24 ^ \
		   (uint64_t)sizeof(struct pc_bdi) << 16 ^ \
		   (uint64_t)sizeof(struct pc_node) << 8 ^ \
		   (uint64_t)sizeof(struct pc_tctx) << 4 ^ \
		   (uint64_t)sizeof(struct pc_share) << 28 ^ \
		   (uint64_t)sizeof(struct pc_config) << 36 ^ \
		   (uint64_t)PC_NR_VMSTAT << 52 ^ (uint64_t)PC_NR_RANKS << 58)

/* ------------------------------------------------------------------ */
/* Slots and serials of mappings.                                       */

/* A free slot of @s taken: its number, or -1 (PC_SHARE_SLOTS taken). */
static int slot_take(struct pc_share *s)
{
	uint32_t hint = atomic_load_explicit(&s->slot_hint,
					     memory_order_relaxed);

	for (uint32_t i = 0; i < PC_SHARE_SLOTS / 64; i++) {
		uint32_t w = (hint + i) % (PC_SHARE_SLOTS / 64);
		uint64_t v = atomic_load(&s->slot_map[w]);

		while (~v) {
			unsigned b = (unsigned)__builtin_ctzll(~v);

			if (atomic_compare_exchange_weak(&s->slot_map[w], &v,
							 v | 1ull << b)) {
				atomic_store_explicit(&s->slot_hint, w,
						      memory_order_relaxed);
				return (int)(w * 64 + b);
			}
		}
	}
	return -1;
}

int pc__share_slot_get(struct pc_cache *c, struct pc_mapping *m)
{
	struct pc_share *s = c->share;
	int slot;

	if (!s)
		return 0;
	m->serial = atomic_fetch_add(&s->next_serial, 1);
	slot = slot_take(s);
	if (slot < 0)
		return -ENOMEM;
	m->slot = (uint32_t)slot;
	/* Room for its descriptors in this process, or it cannot open. */
	if (pc__bk_ready(m)) {
		pc__share_slot_put(c, m);
		return -ENOMEM;
	}
	return 0;
}

void pc__share_slot_put(struct pc_cache *c, struct pc_mapping *m)
{
	struct pc_share *s = c->share;

	if (s)
		atomic_fetch_and(&s->slot_map[m->slot / 64],
				 ~(1ull << (m->slot % 64)));
}

/* ------------------------------------------------------------------ */
/* What a process asks of a shared cache.                               */

PC_EXPORT bool pc_cache_shared(pc_cache *c)
{
	return c && c->shared;
}

PC_EXPORT bool pc_cache_broken(pc_cache *c)
{
	/* A load: the shim asks at every call on a file it manages. */
	return c && c->broken && atomic_load_explicit(c->broken,
						      memory_order_relaxed);
}

uint64_t pc__share_attaches(struct pc_cache *c)
{
	return c->share ? atomic_load(&c->share->attaches) : 0;
}

bool pc__share_is_home(struct pc_cache *c)
{
	return !c->shared || pc__local_shared(c)->home;
}

pid_t pc__share_home_pid(struct pc_cache *c)
{
	return c->shared ? c->share->home_pid : getpid();
}

/* ------------------------------------------------------------------ */
/* Create, attach and destroy.                                          */

/* Bytes of region a cache of @span_frames frames needs. */
static size_t region_size(uint64_t span_frames)
{
	return (span_frames << PC_PAGE_SHIFT) +	/* frames */
	       2 * span_frames * sizeof(struct pc_page) +	/* descriptors,
							   tree arenas */
	       (256ull << 20);			/* objects */
}

static uint64_t random_id(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)getpid() << 32 ^ pc__now_ns();
	return v;
}

int pc__share_create(struct pc_cache **out, const struct pc_config *cfg,
		     uint64_t span_frames)
{
	const char *name = cfg->name[0] ? cfg->name : NULL;
	struct pc_shm *shm;
	struct pc_local *l;
	struct pc_cache *c;
	struct pc_share *s;
	int r;

	r = pc__shm_create(&shm, name, region_size(span_frames));
	if (r) {
		if (r == -EEXIST && name)
			fprintf(stderr, "pagecache: a shared cache named %s "
				"exists: pc_cache_attach joins it\n", name);
		return r;
	}
	c = pc__shm_alloc(shm, sizeof(*c));
	s = pc__shm_alloc(shm, sizeof(*s));
	l = c && s ? pc__local_add(c, shm) : NULL;
	if (!l) {
		pc__shm_detach(shm);
		if (name)
			pc__shm_unlink(name);
		return -ENOMEM;
	}
	c->shared = true;
	c->share = s;
	c->cfg = *cfg;
	c->id = random_id() | 1ull << 63;	/* unique in every process */
	c->broken = pc__shm_broken_flag(shm);
	l->home = true;
	pc__lock_init_shared(&s->lock, PC_RANK_SHARE,
			     pc__shm_broken_flag(shm));
	atomic_init(&s->next_serial, 1);
	s->home_pid = getpid();
	s->home_start = pc__process_start(s->home_pid);
	s->id = random_id();
	r = pc__home_open(s);
	if (r) {
		pc__local_remove(c);
		pc__shm_detach(shm);
		if (name)
			pc__shm_unlink(name);
		return r;
	}
	(void)pc__procs_enter(c);	/* the first: there is room */
	*out = c;
	return 0;
}

int pc__share_start(struct pc_cache *c)
{
	struct pc_shm *shm = pc__local_shared(c)->shm;
	int r = pc__home_start(c);

	if (r)
		return r;
	pc__local_whole(c);
	/* Whole now: attach may find it. */
	atomic_store(pc__shm_root(shm, 1), (void *)(uintptr_t)LAYOUT_ID);
	atomic_store(pc__shm_root(shm, 0), c);
	return 0;
}

PC_EXPORT int pc_cache_attach(pc_cache **out, const char *name)
{
	struct pc_shm *shm;
	struct pc_cache *c;
	int r;

	if (!out || !name)
		return -EINVAL;
	*out = NULL;
	r = pc__shm_attach(&shm, name);
	if (r == -EEXIST)
		fprintf(stderr, "pagecache: the shared cache %s cannot be "
			"mapped at its address in this process (something "
			"else is there): not joining it\n", name);
	if (r)
		return r;
	c = atomic_load(pc__shm_root(shm, 0));
	if (!c) {		/* still being made */
		pc__shm_detach(shm);
		return -EAGAIN;
	}
	if ((uintptr_t)atomic_load(pc__shm_root(shm, 1)) != LAYOUT_ID) {
		fprintf(stderr, "pagecache: the shared cache %s was made by "
			"another build of pagecache: not joining it\n", name);
		pc__shm_detach(shm);
		return -EPROTO;
	}
	if (pc__shm_broken(shm) ||
	    !pc__process_alive(c->share->home_pid, c->share->home_start)) {
		pc__shm_detach(shm);
		return -ENOTCONN;	/* nobody runs its threads */
	}
	if (!pc__local_add(c, shm)) {
		pc__shm_detach(shm);
		return -ENOMEM;
	}
	r = pc__procs_enter(c);
	if (r) {
		pc__local_remove(c);
		pc__shm_detach(shm);
		return r;
	}
	if (atomic_load(&c->share->closing)) {	/* too late: it is going */
		pc__procs_leave(c);
		pc__local_remove(c);
		pc__shm_detach(shm);
		return -ENOENT;
	}
	r = pc__cache_register(c);
	if (r) {
		pc__procs_leave(c);
		pc__local_remove(c);
		pc__shm_detach(shm);
		return r;
	}
	pc__local_whole(c);
	*out = c;
	return 0;
}

/* Is the cache in @shm this build's (root 1)?  A view's check (admin.c). */
bool pc__share_layout_ok(struct pc_shm *shm)
{
	return (uintptr_t)atomic_load(pc__shm_root(shm, 1)) == LAYOUT_ID;
}

/*
 * A name nobody serves: its home gone, or the cache broken (what attach
 * refuses with -ENOTCONN).  Looked at through a mapping of our own, and
 * removed only if the file is still the one we looked at.
 */
PC_EXPORT int pc_cache_remove(const char *name)
{
	struct pc_shm *shm;
	struct pc_cache *c;
	int r;

	if (!name)
		return -EINVAL;
	r = pc__shm_attach(&shm, name);
	if (r)
		return r;
	c = atomic_load(pc__shm_root(shm, 0));
	if (!c)
		r = -EAGAIN;	/* still being made */
	else if ((uintptr_t)atomic_load(pc__shm_root(shm, 1)) != LAYOUT_ID)
		r = -EPROTO;	/* its home cannot be told: left alone */
	else if (!pc__shm_broken(shm) &&
		 pc__process_alive(c->share->home_pid, c->share->home_start))
		r = -EBUSY;
	else
		r = pc__shm_unlink_own(shm);
	pc__shm_detach(shm);
	return r == -ESTALE ? -EBUSY : r;	/* (a newer cache's name now) */
}

/*
 * The home's destroy begins: a named cache's name goes (no new joins),
 * then the home waits until no other process is attached.
 */
void pc__share_wait_others(struct pc_cache *c)
{
	bool said = false;

	if (c->cfg.name[0])	/* unless a new cache has the name now */
		(void)pc__shm_unlink_own(pc__local_shared(c)->shm);
	atomic_store(&c->share->closing, true);
	while (pc__procs_others(c)) {
		if (!said)
			fprintf(stderr, "pagecache: destroy waits for the "
				"other processes of the shared cache\n");
		said = true;
		usleep(10000);
	}
}

void pc__share_detach(struct pc_cache *c)
{
	struct pc_local *l = pc__local_find(c);
	struct pc_shm *shm;

	if (!l)
		return;
	shm = l->shm;
	if (l->home) {
		close(c->share->sock);
		close(c->share->escrow);
		if (c->cfg.name[0] && !atomic_load(&c->share->closing))
			pc__shm_unlink(c->cfg.name);	/* a failed create */
	}
	pc__procs_leave(c);
	pc__local_remove(c);
	pc__shm_detach(shm);
}
