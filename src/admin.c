/*
 * admin.c - operating shared caches from outside them: the list of a
 * user's caches, a read-only view of one (its state, its counters, the
 * files it holds), and what an operator changes in one - the whole cache
 * written back by its home, clean pages dropped, a stop.  The `pagecache`
 * command's ls, stat, files, sync, drop and stop (tools/admin.c) are
 * this file's callers.
 *
 * Where caches live is shm.c's to know (pc__shm_list, pc__shm_look): a
 * named region is a file of the user's in /dev/shm.
 *
 * A view (pc_view_open) is not an attach.  The region is mapped read-only
 * at its address, in no table of this process, and the process is not
 * entered in the cache's table of processes: it keeps no cache alive
 * (the cache process's idle count does not see it), sends the home
 * nothing, and can look at a cache that attach refuses (broken, its home
 * dead).  It writes nothing, so it takes no lock: every read is a load,
 * of atomics where the owners store atomically (the counters, the
 * mappings' page counts, a page's flags and mapping) and of plain fields
 * that are read-only after create (the nodes, the frames' spans).  The
 * mappings' hash chains change under mappings_lock meanwhile, so their
 * walk checks every pointer it follows lies in the region (a freed
 * mapping's memory stays mapped: reused objects are zeroed, never
 * unmapped) and is bounded: a file opened or closed during it may be
 * missed or seen with stale numbers, never a crash.  The counters are
 * pc_vmstat's own formula (pc__vmstat_sum), but for io_uring_fallback,
 * which asks this process's I/O backend and reads the create-time flag
 * here.
 *
 *   view ── region (PROT_READ, at its address) ── root 0: struct pc_cache
 *             ├─ share->procs[] (pid, start: alive = counted)
 *             ├─ hash[] ─> mappings (dev, ino, nr_pages, nr_dirty ...)
 *             └─ nodes[i] ─> pages[first_pfn .. + hw) (flags, mapping)
 *
 * A file's path is not in the region; the view finds one by the
 * descriptors the cache's processes hold (/proc/PID/fd of its home and of
 * every process attached, which are the user's own): the home has one of
 * every file written, each process of the files it has open.
 *
 * What changes a cache (pc_cache_sync_all, pc_cache_drop, pc_cache_stop)
 * works on an attached handle, as any user of the cache does: each
 * file's i_rwsem for a moment, as a truncation would.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "admin.h"
#include "ebr.h"
#include "inode.h"
#include "proc.h"
#include "node.h"
#include "share.h"
#include "shm.h"

#define STOPPED 2		/* the broken flag's value after a stop */
#define MAX_FILES (1u << 20)	/* the most a view's walk collects */

struct pc_view {
	struct pc_shm *shm;
	struct pc_cache *c;
	int64_t created;
};

PC_EXPORT int pc_cache_list(int (*fn)(const char *name, void *arg), void *arg)
{
	if (!fn)
		return -EINVAL;
	return pc__shm_list(fn, arg);
}

PC_EXPORT int pc_view_open(pc_view **out, const char *name)
{
	struct pc_view *v;
	int r;

	if (!out || !name)
		return -EINVAL;
	*out = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = pc__shm_look(&v->shm, name, &v->created, pc__region_layout());
	if (!r) {
		v->c = atomic_load(pc__shm_root(v->shm, 0));
		if (!v->c)
			r = -EAGAIN;		/* still being made */
	}
	if (r) {
		pc__shm_unlook(v->shm);
		free(v);
		return r;
	}
	*out = v;
	return 0;
}

PC_EXPORT void pc_view_close(pc_view *v)
{
	if (!v)
		return;
	pc__shm_unlook(v->shm);
	free(v);
}

PC_EXPORT int pc_view_info(pc_view *v, struct pc_view_info *info)
{
	struct pc_cache *c;
	struct pc_share *s;
	int flag;

	if (!v || !info)
		return -EINVAL;
	c = v->c;
	s = c->share;
	memset(info, 0, sizeof(*info));
	info->budget_pages = pc__vmstat_sum(c, PC_VM_nr_budget_pages);
	info->max_pages = c->span_frames;
	info->cached_pages = pc__vmstat_sum(c, PC_VM_nr_file_pages);
	info->dirty_pages = pc__vmstat_sum(c, PC_VM_nr_dirty);
	info->writeback_pages = pc__vmstat_sum(c, PC_VM_nr_writeback);
	info->free_pages = pc__vmstat_sum(c, PC_VM_nr_free_pages);
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
		pid_t p = atomic_load(&s->procs[i].pid);

		info->processes += p && p != s->home.pid &&
				   pc__process_alive(p, s->procs[i].start);
	}
	info->home_pid = s->home.pid;
	info->home_alive = pc__proc_alive(&s->home);
	flag = atomic_load(c->broken);
	info->stopped = flag == STOPPED;
	info->broken = flag && !info->stopped;
	info->closing = atomic_load(&s->closing);
	info->created = v->created;
	return 0;
}

PC_EXPORT int pc_view_counter(pc_view *v, unsigned i, uint64_t *value)
{
	if (!v || !value)
		return -EINVAL;
	if (i >= PC_NR_VMSTAT)
		return -ENOENT;
	/* io_uring_fallback asks this process's backend: the flag here */
	*value = i == PC_VM_io_uring_fallback ? v->c->io_fallback
					      : pc__vmstat_sum(v->c, i);
	return 0;
}

/* Does [p, p + size) lie in @v's region, aligned as a struct of it is? */
static bool in_region(const struct pc_view *v, const void *p, size_t size)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)pc__shm_base(v->shm);

	return p && a % 8 == 0 && a >= base &&
	       a + size <= base + pc__shm_size(v->shm);
}

struct vfile {
	struct pc_mapping *m;
	struct pc_view_file f;
	char *path;
};

static int by_mapping(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct vfile *)a)->m;
	uintptr_t y = (uintptr_t)((const struct vfile *)b)->m;

	return x < y ? -1 : x > y;
}

static struct vfile *find(struct vfile *fs, unsigned n, const void *m)
{
	struct vfile key = { .m = (struct pc_mapping *)m };

	return bsearch(&key, fs, n, sizeof(*fs), by_mapping);
}

/* The mappings of @v's hash, without its lock (see the top): how many. */
static unsigned collect(struct pc_view *v, struct vfile **out)
{
	struct pc_cache *c = v->c;
	unsigned n = 0, cap = 64, steps = 0;
	struct vfile *fs = malloc(cap * sizeof(*fs));
	struct pc_mapping **hash = c->hash;
	unsigned size = c->hash_size;

	if (!fs || !in_region(v, hash, (size_t)size * sizeof(*hash)))
		size = 0;
	for (unsigned h = 0; fs && h < size; h++) {
		struct pc_mapping *m = hash[h];

		for (; in_region(v, m, sizeof(*m)) && steps < MAX_FILES;
		     m = m->hash_next, steps++) {
			if (m->cache != c || m->dead)
				continue;
			if (n == cap) {
				struct vfile *more = realloc(fs, 2 * cap *
							     sizeof(*fs));

				if (!more)
					break;
				fs = more;
				cap *= 2;
			}
			memset(&fs[n], 0, sizeof(fs[n]));
			fs[n].m = m;
			fs[n].f.dev = m->dev;
			fs[n].f.ino = m->ino;
			fs[n].f.size = atomic_load(&m->size);
			fs[n].f.cached = atomic_load(&m->nr_pages);
			fs[n].f.dirty = atomic_load(&m->nr_dirty);
			fs[n].f.writeback = atomic_load(&m->nr_writeback);
			fs[n].f.open = m->nr_open > 0 ? (unsigned)m->nr_open : 0;
			fs[n].f.unlinked = m->unlinked;
			n++;
		}
	}
	*out = fs;
	if (fs)
		qsort(fs, n, sizeof(*fs), by_mapping);
	return fs ? n : 0;
}

/* Each frame handed out so far: its file's active and inactive pages. */
static void count_lru(struct pc_view *v, struct vfile *fs, unsigned n)
{
	struct pc_cache *c = v->c;

	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *nd = &c->nodes[i];
		uint32_t hw = pc_min((uint32_t)atomic_load(&nd->hw),
				     c->frames_per_node);

		for (uint32_t k = 0; k < hw; k++) {
			struct pc_page *p = &c->pages[nd->first_pfn + k];
			uint32_t fl = atomic_load_explicit(&p->flags,
							   memory_order_relaxed);
			struct vfile *f;

			if (!(fl & 1u << PG_lru))
				continue;
			f = find(fs, n, atomic_load_explicit(&p->mapping,
						memory_order_relaxed));
			if (!f)
				continue;
			if (fl & 1u << PG_active)
				f->f.active++;
			else
				f->f.inactive++;
		}
	}
}

static int by_file(const void *a, const void *b)
{
	const struct pc_view_file *x = &((const struct vfile *)a)->f;
	const struct pc_view_file *y = &((const struct vfile *)b)->f;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The files of @fs (sorted by_file) that process @pid holds a name of. */
static void paths_of(pid_t pid, struct vfile *fs, unsigned n)
{
	char dir[64], buf[4096];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct vfile key = { .m = NULL }, *f;
		struct stat st;
		ssize_t len;

		if (e->d_name[0] == '.' ||
		    fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		key.f.dev = st.st_dev;
		key.f.ino = st.st_ino;
		f = bsearch(&key, fs, n, sizeof(*fs), by_file);
		if (!f || f->path)
			continue;
		len = readlinkat(dirfd(d), e->d_name, buf, sizeof(buf) - 1);
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (buf[0] != '/' || strstr(buf, " (deleted)"))
			continue;	/* gone: device and inode say it */
		f->path = strdup(buf);
	}
	closedir(d);
}

PC_EXPORT int pc_view_files(pc_view *v,
			    int (*fn)(const struct pc_view_file *f, void *arg),
			    void *arg)
{
	struct pc_share *s;
	struct vfile *fs;
	unsigned n;
	int r = 0;

	if (!v || !fn)
		return -EINVAL;
	s = v->c->share;
	n = collect(v, &fs);
	if (!fs)
		return -ENOMEM;
	count_lru(v, fs, n);
	qsort(fs, n, sizeof(*fs), by_file);
	if (pc__proc_alive(&s->home))
		paths_of(s->home.pid, fs, n);
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
		pid_t p = atomic_load(&s->procs[i].pid);

		if (p && p != s->home.pid)
			paths_of(p, fs, n);
	}
	for (unsigned i = 0; i < n && !r; i++) {
		fs[i].f.path = fs[i].path;
		r = fn(&fs[i].f, arg);
	}
	for (unsigned i = 0; i < n; i++)
		free(fs[i].path);
	free(fs);
	return r ? r : (int)n;
}

/* ------------------------------------------------------------------ */
/* What an operator changes, on an attached handle.                      */

int pc__admin_sync(struct pc_cache *c)
{
	uint64_t errors = pc__vmstat_sum(c, PC_VM_writeback_errors);
	int r = pc_cache_sync(c);

	/* -EIO with no new error is pc__mapping_sync's "pages stay dirty":
	 * each page dirty at the call was written; these are newer. */
	if (r == -EIO && pc__vmstat_sum(c, PC_VM_writeback_errors) == errors)
		r = 0;
	return r;
}

PC_EXPORT int pc_cache_sync_all(pc_cache *c)
{
	if (!c)
		return -EINVAL;
	return pc__home_sync(c);
}

/* @m's clean pages dropped, i_rwsem held for it: how many went. */
static uint64_t drop_mapping(struct pc_mapping *m)
{
	uint64_t before = atomic_load(&m->nr_pages), after;

	pc__write_lock(&m->i_rwsem);
	pc__invalidate_pages(m);
	pc__write_unlock(&m->i_rwsem);
	after = atomic_load(&m->nr_pages);
	return before > after ? before - after : 0;
}

PC_EXPORT int64_t pc_cache_drop(pc_cache *c, const struct stat *st)
{
	struct pc_mapping **all, *m;
	unsigned n = 0;
	int64_t dropped = 0;

	if (!c)
		return -EINVAL;
	if (st) {
		m = pc__mapping_lookup(c, st->st_dev, st->st_ino);
		if (!m)
			return -ENOENT;
		dropped = (int64_t)drop_mapping(m);
		pc__mapping_put(m);
		return dropped;
	}
	pc__lock(&c->mappings_lock);
	all = malloc((c->nr_mappings + 1) * sizeof(*all));
	for (unsigned h = 0; all && h < c->hash_size; h++)
		for (m = c->hash[h]; m; m = m->hash_next)
			if (!m->dead && pc__mapping_tryget(m))
				all[n++] = m;
	pc__unlock(&c->mappings_lock);
	if (!all)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		dropped += (int64_t)drop_mapping(all[i]);
		pc__mapping_put(all[i]);
	}
	free(all);
	return dropped;
}

/*
 * A stop, in order:
 *   1. every file written back by the home (an error: nothing changed);
 *   2. the broken flag set to STOPPED: every process, at its next call on
 *      a file of the cache, writes back what it wrote and hands its files
 *      to the kernel (the preload shim's way out of a broken cache), and
 *      attach refuses the cache;
 *   3. its name removed (a new cache of the name may be made);
 *   4. written back by the home once more: what a write that was in the
 *      cache's hands when the flag went up left there;
 *   5. this process detached: the home destroys the cache (written back
 *      again) once every process has left - a cache process (daemon.c) a
 *      second after the last.
 */
PC_EXPORT int pc_cache_stop(const char *name)
{
	pc_cache *c;
	int r = pc_cache_attach(&c, name);

	if (r == -ENOTCONN)	/* broken, or its home gone: only the name */
		return pc_cache_remove(name);
	if (r)
		return r;
	r = pc__home_sync(c);					/* 1 */
	if (!r) {
		int zero = 0;

		(void)atomic_compare_exchange_strong(c->broken, &zero,	/* 2 */
						     STOPPED);
		(void)pc__shm_unlink_own(pc__local_shared(c)->shm);	/* 3 */
		r = pc__home_sync(c);				/* 4 */
	}
	pc_cache_destroy(c);					/* 5 */
	return r;
}

PC_EXPORT bool pc_cache_stopped(pc_cache *c)
{
	return c && c->broken && atomic_load(c->broken) == STOPPED;
}
