/*
 * shared_pos.c - open file descriptions that other processes share: a
 * fork's, an exec's, a spawned program's, in a shared cache.
 *
 * The kernel shares an open file description across fork and exec: one
 * offset, one set of status flags, moved by whichever process calls.  A
 * shared cache is one cache for all of them (its pc_file handles and
 * pages are in a region every process maps at one address), so a
 * description they share stays in the cache; what cannot stay a
 * process's own is its offset.  Such a description is "shared-position"
 * (struct shim_ofd's kpos):
 *
 *   offset     the kernel's f_pos of the fd: a call at the offset reads
 *              it (lseek(fd, 0, SEEK_CUR)), calls the cache there, sets
 *              it (lseek(fd, pos + n, SEEK_SET)), holding the file's
 *              pc_file_pos_lock (the library's fpos.c: one lock per file,
 *              process-shared) for the three steps, as the kernel holds
 *              f_pos_lock (rw.c pos_begin/pos_end); so write(2)s in a
 *              parent and its child interleave as on the kernel
 *   O_APPEND   the kernel's status flag (F_GETFL) at each write, so an
 *              F_SETFL in either process is the other's too
 *   errseq     each process's pc_file has its own cursor: a writeback
 *              error is reported once to each process that fsyncs the
 *              description, where the kernel reports it once to the
 *              description (a process that never fsyncs sees nothing)
 *
 * When a description becomes shared-position (kpos_one), its offset is
 * first set on the kernel's (the two are the same from then on):
 *
 *   fork        the prepare handler (process.c), every description
 *   exec        before the exec (handoff.c), those the new image inherits
 *               (not close-on-exec); the new image's shim, joining the
 *               cache, adopts every inherited regular-file fd above 2 as
 *               a shared-position description of its own (adopt_inherited)
 *   posix_spawn before the spawn, those the program inherits (not
 *   system      close-on-exec): the program adopts them as an exec'd
 *   popen       image does
 *
 * only if the new program runs under this shim in this cache
 * (shim_spawn_cached: LD_PRELOAD names the shim, PAGECACHE_CACHE is ours,
 * the executable is dynamic, neither setuid nor setgid - a #! script's
 * interpreter is looked at instead); else, and in a private cache, the
 * descriptions are handed to the kernel as before (process.c), written
 * back first, since the program reads and writes them through the kernel.
 * A posix_spawn with file actions is handed off too: its actions may put
 * an inherited description on fd 0, 1 or 2, which no shim manages.
 *
 * What such a program writes through the kernel instead (a description
 * it has on fd 0, 1 or 2 - a shell's `>&N` - goes to the kernel there:
 * open.c std_handoff, which in a shared cache drops the file's pages
 * too) is seen with close-to-open coherence: system and pclose, which
 * wait for the program, revalidate every shared-position description's
 * file after it (shim_kpos_revalidate: an open through the cache compares
 * the file's size and mtime with the cache's); a posix_spawn'd program
 * running beside us is seen at our next open of the file.
 *
 * A forked child's descriptions are copies of its parent's shim_ofds,
 * naming the parent's pc_files: the child opens its own at its first call
 * on each (fdtable.c reopen), so each process closes its own, and a
 * killed child's are reaped by its pid like any of its files.
 *
 * Locks: files_lock (callers of shim_kpos_all_locked), then one ofd's
 * pos_lock, then fdt_lock (a leaf; the lseek under it is a system call).
 * pc_file_pos_lock is taken under pos_lock only, and nothing of the shim
 * is taken under it.  Nothing here runs in a fork child's handler.
 */
#include <dirent.h>
#include <elf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/* ------------------------------------------------------------------ */
/* A call at the kernel's offset.                                      */

int shim_kpos_begin(struct shim_ofd *o, int fd, off_t *pos)
{
	int e;

	LIB(pc_file_pos_lock(o->file));
	*pos = REAL(lseek)(fd, 0, SEEK_CUR);
	if (*pos >= 0)
		return 0;
	e = -errno;
	LIB(pc_file_pos_unlock(o->file));
	return e;
}

void shim_kpos_end(struct shim_ofd *o, int fd, off_t pos, bool move)
{
	int saved = errno;

	if (move)
		REAL(lseek)(fd, pos, SEEK_SET);
	errno = saved;
	LIB(pc_file_pos_unlock(o->file));
}

int shim_kpos_pcflags(struct shim_ofd *o, int fd, int pcflags)
{
	int saved = errno, fl = REAL(fcntl)(fd, F_GETFL);

	(void)o;
	errno = saved;
	if (fl < 0 || (pcflags & (PC_RW_APPEND | PC_RW_NOAPPEND)))
		return pcflags;	/* the call's own RWF_ flag decides */
	return pcflags | ((fl & O_APPEND) ? PC_RW_APPEND : PC_RW_NOAPPEND);
}

/* ------------------------------------------------------------------ */
/* Making descriptions shared-position.                                */

/* Does every fd of @o have FD_CLOEXEC (an exec closes them all)? */
static bool all_cloexec(struct shim_ofd *o, unsigned span)
{
	for (unsigned fd = 0; fd < span; fd++)
		if (shim_fdt_get((int)fd) == (uintptr_t)o &&
		    !(REAL(fcntl)((int)fd, F_GETFD) & FD_CLOEXEC))
			return false;
	return true;
}

/* @o's offset on the kernel's, and @o shared-position from now on. */
static void kpos_one(struct shim_ofd *o, unsigned span)
{
	pthread_mutex_lock(&o->pos_lock);	/* calls at the offset done */
	if (!atomic_load(&o->kpos)) {
		shim_fdt_lock();	/* no fd of it closed meanwhile */
		for (unsigned fd = 0; fd < span; fd++)
			if (shim_fdt_get_locked((int)fd) == (uintptr_t)o) {
				REAL(lseek)((int)fd, o->pos, SEEK_SET);
				break;
			}
		shim_fdt_unlock();
		atomic_store(&o->kpos, true);
		SHIM_INC(shared_pos);
	}
	pthread_mutex_unlock(&o->pos_lock);
}

void shim_kpos_all_locked(bool cloexec_too)
{
	unsigned span = shim_fdt_span();
	int saved = errno;

	for (unsigned fd = 0; fd < span; fd++) {
		struct shim_ofd *o;

		if (!shim_e_ofd(shim_fdt_get((int)fd)) ||
		    !(o = shim_ofd_ref((int)fd)))
			continue;
		/* A description on several fds is met again: done once. */
		if (!atomic_load(&o->kpos) && (cloexec_too || !all_cloexec(o, span)))
			kpos_one(o, span);
		shim_ofd_put(o);
	}
	errno = saved;
}

void shim_kpos_revalidate(void)
{
	pc_cache *c = atomic_load(&shim_cache);
	unsigned span = shim_fdt_span();
	int saved = errno;

	if (!c || !shim_cache_shared())
		return;
	for (unsigned fd = 0; fd < span; fd++) {
		struct shim_ofd *o;
		pc_file *f;

		if (!shim_e_ofd(shim_fdt_get((int)fd)) ||
		    !(o = shim_ofd_ref((int)fd)))
			continue;
		if (atomic_load(&o->kpos) && shim_ofd_own(o) &&
		    LIB(pc_open_fd(c, (int)fd, atomic_load(&o->flags) & O_ACCMODE,
				   &f)) == 0)
			LIB(pc_close(f));
		shim_ofd_put(o);
	}
	errno = saved;
}

/* ------------------------------------------------------------------ */
/* Will a spawned or exec'd program run under this shim, in our cache?  */

/* The value of @name in @envp, or NULL. */
static const char *env_of(char *const envp[], const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/*
 * @path: a regular file neither setuid nor setgid, whose ELF header asks
 * for an interpreter (dynamic: LD_PRELOAD applies), or a #! script whose
 * interpreter is so (@depth: scripts followed).
 */
static bool dynamic_exe(const char *path, int depth)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct stat st;
	char line[PATH_MAX + 3];
	bool ok = false;
	ssize_t n;
	int fd;

	if (REAL(stat)(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & (S_ISUID | S_ISGID)))
		return false;
	fd = REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = REAL(pread)(fd, line, sizeof(line) - 1, 0);
	if (n > 2 && line[0] == '#' && line[1] == '!' && depth < 2) {
		char *p = line + 2, *end;

		line[n] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strcspn(p, " \t\n");
		*end = 0;
		REAL(close)(fd);
		return *p == '/' && dynamic_exe(p, depth + 1);
	}
	if (n >= (ssize_t)sizeof(eh)) {
		memcpy(&eh, line, sizeof(eh));
		if (!memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
		    eh.e_ident[EI_CLASS] == ELFCLASS64 &&
		    eh.e_phentsize == sizeof(ph))
			for (unsigned i = 0; i < eh.e_phnum && !ok; i++)
				ok = REAL(pread)(fd, &ph, sizeof(ph),
						 (off_t)(eh.e_phoff + i * sizeof(ph)))
					== (ssize_t)sizeof(ph) &&
				     ph.p_type == PT_INTERP;
	}
	REAL(close)(fd);
	return ok;
}

/* @file searched in $PATH as execvp does, into @out; false if not found. */
static bool path_search(const char *file, char *out, size_t size)
{
	const char *p = getenv("PATH");

	for (p = p ? p : "/bin:/usr/bin"; *p;) {
		size_t len = strcspn(p, ":");

		if (snprintf(out, size, "%.*s/%s", (int)len, len ? p : ".", file) <
			    (int)size &&
		    access(out, X_OK) == 0)
			return true;
		p += len;
		if (*p == ':')
			p++;
	}
	return false;
}

bool shim_spawn_cached(const char *path, bool search, char *const envp[])
{
	extern char **environ;
	char *const *env = envp ? envp : environ;
	const char *pre = env_of(env, "LD_PRELOAD");
	/* The child joins the cache its environment names: the same name
	 * as ours (the environment, not the library: a name is what the
	 * child will ask for, and the handle keeps none). */
	const char *name = env_of(env, "PAGECACHE_CACHE");
	const char *ours = getenv("PAGECACHE_CACHE");
	char found[PATH_MAX];

	if (!path || !pre || !strstr(pre, "libpagecache-preload.so") || !name ||
	    !ours || strcmp(name, ours))
		return false;
	if (search && !strchr(path, '/')) {
		if (!path_search(path, found, sizeof(found)))
			return false;
		path = found;
	}
	return dynamic_exe(path, 0);
}

/* ------------------------------------------------------------------ */
/* An exec'd image's inherited descriptors.                            */

void shim_adopt_inherited(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int saved = errno;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name), fl;

		if (e->d_name[0] == '.' || fd <= STDERR_FILENO || fd == dirfd(d) ||
		    shim_fdt_get(fd) != SHIM_E_NONE)
			continue;	/* stdio's, or the library's own */
		fl = REAL(fcntl)(fd, F_GETFL);
		if (fl < 0 || (fl & (O_PATH | O_DIRECT)))
			continue;
		(void)shim_adopt(fd, fl);	/* counted: exec_adopted */
	}
	closedir(d);
	errno = saved;
}
