/*
 * shm.c - regions of memory shared between processes, each mapped at one
 * fixed address in every process that uses it (shm.h).
 *
 * What it owns: the region's header (struct pc_shm, at the region's
 * base) and the region's allocator.  It keeps no table of the regions this
 * process maps: the caller keeps each region's handle and descriptor
 * (local.c, in the process's entry for the cache; a test, on its stack),
 * and the kernel's mappings say what is mapped where (MAP_FIXED_NOREPLACE
 * refuses a taken address; a region already mapped here is told by its
 * magic at that address, read through /proc/self/mem: -EBUSY).
 *
 *   addr                    addr + 2 MiB                         addr + size
 *   |[struct pc_shm: header, |[chunk][chunk][reserved ...][chunk] | never  |
 *   | roots, allocator state]|   ^ objects of one size class each | touched|
 *   |                        |                          next ─────^        |
 *
 * Where: regions live in a window of the address space that the kernel's
 * top-down mmap reaches last and that no program is loaded into:
 * [32 TiB, 64 TiB) on x86-64 (under the stack and libraries near 128 TiB,
 * over PIE executables and their heaps near 85 TiB and the low memory of
 * non-PIE ones; above ASan's shadow, which ends under 16 TiB), cut in
 * slots of 64 GiB.  TSan builds keep their programs' memory in ranges of
 * its own; there the window is 256 GiB at 0x7e8000000000, the bottom of
 * the range TSan leaves to mmap.  A named region starts its search at the
 * slot its name hashes to, an anonymous one at a random slot, and takes
 * the first run of free slots: free in the creating process, that is,
 * which is all create can know.  Every other process maps it at the
 * address in the header or not at all (MAP_FIXED_NOREPLACE): a process
 * with something of its own there gets -EEXIST from attach.
 *
 * Who may attach: the region's file is mode 0600 and its owner's alone.
 * Attach checks both on the file itself (fstat), not only through the
 * kernel's permission check at open: a descriptor can be passed.
 *
 * Outside a cache's users (admin.c, the `pagecache` ls, stat and files):
 * the user's regions listed by their files in SHM_DIR (pc__shm_list),
 * and a look at one (pc__shm_look): the same checks, mapped read-only at
 * its address and in no table of this process, so that nothing of it is
 * written.
 *
 * The allocator: objects of 64 B to 1 MiB in power-of-two classes.  A
 * class takes 2 MiB chunks from `next` and hands out its current chunk
 * front to back; freed objects go on the class's free list, first in
 * line for reuse, in any process.  Reservations (pc__shm_reserve) are runs
 * of chunks taken from `next` for good.  Fresh chunks are zero (the
 * file's pages are created on first touch); reused objects are zeroed at
 * alloc.  Nothing is given back to the system while the region lives.
 *
 * Locks: s->lock (rank SHM, a leaf, process-shared and robust) protects
 * next, used, the classes' chunks and free lists.  Each update under it
 * is one store that leaves the lists whole (a push writes the link before
 * the head), so a process that dies holding it leaves nothing to repair:
 * the lock is made consistent and the region stays sound.  The header's
 * other fields are read-only after create, but for the atomic roots and
 * `broken`.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm.h"

#define SHM_MAGIC 0x70616765636163ffull	/* "pagecac" + 0xff */
#define SHM_CHUNK (2ull << 20)
#define SHM_SLOT (64ull << 30)
#define SHM_MIN_OBJ_SHIFT 6		/* 64 B */
#define SHM_NR_CLASSES 15		/* 64 B .. 1 MiB */

#ifdef PC_TSAN
#define SHM_WINDOW_BASE 0x7e8000000000ull
#define SHM_WINDOW_SIZE (256ull << 30)
#else
#define SHM_WINDOW_BASE (32ull << 40)
#define SHM_WINDOW_SIZE (32ull << 40)
#endif
#define SHM_NR_SLOTS (SHM_WINDOW_SIZE / SHM_SLOT)

struct shm_class {
	char *chunk_next;		/* lock: next object of the chunk */
	char *chunk_end;		/* lock */
	void *free;			/* lock: freed objects, linked */
};

struct pc_shm {
	/* Read-only after create.  The first two never move: a region of
	 * any layout is told by them. */
	_Atomic uint64_t magic;		/* stored last */
	uint64_t layout;		/* the caller's layout number (shm.h) */
	uint32_t hdr_size;		/* sizeof(struct pc_shm) */
	uint64_t addr;			/* where every process maps it */
	uint64_t size;			/* bytes, a multiple of 2 MiB */
	uint64_t id;			/* random, per region */
	uid_t owner;
	char name[NAME_MAX + 1];	/* "" for an anonymous region */

	_Atomic int broken;		/* pc__shm_broken */
	_Atomic(void *) root[PC_SHM_ROOTS];

	struct pc_lock lock;		/* rank SHM: the rest */
	uint64_t next;			/* offset of the first free chunk */
	uint64_t used;			/* bytes handed out */
	struct shm_class cls[SHM_NR_CLASSES];
};

_Static_assert(sizeof(struct pc_shm) <= SHM_CHUNK, "the header's chunk");

/*
 * Is a region mapped at @addr in this process (attached already)?  Its
 * magic read where it would be, through /proc/self/mem: a read of memory
 * not mapped, or not readable, fails there instead of faulting.  System
 * calls, not libc's open: attach runs in the preload shim's constructor,
 * whose open(2) is the shim's own.
 */
static bool mapped_here(uint64_t addr)
{
	uint64_t magic = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mem",
			      O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return false;
	n = syscall(SYS_pread64, fd, &magic, sizeof(magic),
		    (off_t)(addr + offsetof(struct pc_shm, magic)));
	syscall(SYS_close, fd);
	return n == (long)sizeof(magic) && magic == SHM_MAGIC;
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		      ch == '.'))
			return false;
	}
	return name[0] != '.';
}

#define SHM_DIR "/dev/shm"	/* where glibc's shm_open keeps its files */

static void shm_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/pagecache-%s", name);
}

/* FNV-1a: a name's first slot. */
static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	return h;
}

static uint64_t random64(void)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ pc__now_ns();
	return v;
}

/* Map @fd's @size bytes exactly at @addr, or fail: -EEXIST if taken. */
static int map_at(uint64_t addr, uint64_t size, int fd)
{
	void *want = (void *)(uintptr_t)addr;
	void *p = mmap(want, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (p != want) {		/* a kernel before 4.17: only a hint */
		munmap(p, size);
		return -EEXIST;
	}
	return 0;
}

/* Map a new region at the first free run of slots from @first. */
static int map_somewhere(uint64_t first, uint64_t size, int fd,
			 uint64_t *addr)
{
	uint64_t nslots = (size + SHM_SLOT - 1) / SHM_SLOT;

	if (nslots > SHM_NR_SLOTS)
		return -EINVAL;
	for (uint64_t i = 0; i < SHM_NR_SLOTS; i++) {
		uint64_t slot = (first + i) % (SHM_NR_SLOTS - nslots + 1);
		uint64_t a = SHM_WINDOW_BASE + slot * SHM_SLOT;
		int rc;

		rc = map_at(a, size, fd);
		if (rc == 0) {
			*addr = a;
			return 0;
		}
		if (rc != -EEXIST)
			return rc;
	}
	return -ENOMEM;
}

int pc__shm_create(struct pc_shm **out, int *fdp, const char *name,
		   size_t size, uint64_t layout)
{
	char path[96], tmp[128];
	uint64_t addr;
	struct pc_shm *s;
	int fd, rc;

	*out = NULL;
	*fdp = -1;
	if ((name && !name_ok(name)) || size == 0 || size > SHM_WINDOW_SIZE)
		return -EINVAL;
	size = (size + SHM_CHUNK - 1) / SHM_CHUNK * SHM_CHUNK + SHM_CHUNK;
	if (name) {
		/* Made whole under a name of its own, then linked to its
		 * name: whoever finds the name finds a region. */
		shm_path(path, sizeof(path), name);
		snprintf(tmp, sizeof(tmp), "%s.new-%016llx", path,
			 (unsigned long long)random64());
		fd = shm_open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	} else {
		fd = memfd_create("pagecache", MFD_CLOEXEC);
		if (fd >= 0 && fchmod(fd, 0600) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
	}
	if (fd < 0)
		return -errno;
	fd = pc__fd_high(fd);
	if (ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = map_somewhere(name ? name_hash(name) : random64(), size, fd,
			   &addr);
	if (rc)
		goto fail;
	s = (struct pc_shm *)(uintptr_t)addr;
	s->layout = layout;
	s->hdr_size = sizeof(*s);
	s->addr = addr;
	s->size = size;
	s->id = random64();
	s->owner = geteuid();
	if (name)
		snprintf(s->name, sizeof(s->name), "%s", name);
	pc__lock_init_shared(&s->lock, PC_RANK_SHM, NULL);
	s->next = SHM_CHUNK;
	s->used = SHM_CHUNK;
	/* The magic last: a region is whole before anyone can attach it. */
	atomic_store_explicit(&s->magic, SHM_MAGIC, memory_order_release);
	if (name) {
		char from[160], to[160];

		snprintf(from, sizeof(from), SHM_DIR "%s", tmp);
		snprintf(to, sizeof(to), SHM_DIR "%s", path);
		rc = link(from, to) < 0 ? -errno : 0;	/* EEXIST: O_EXCL's */
		shm_unlink(tmp);
		if (rc) {
			pc__shm_detach(s, fd);
			return rc;
		}
	}
	*out = s;
	*fdp = fd;
	return 0;
fail:
	/* Until the link the region's only name is the temporary one. */
	close(fd);
	if (name)
		shm_unlink(tmp);
	return rc;
}

/* Is @fd's file a region of @layout, and its owner's only? */
static int check_file(int fd, struct pc_shm *hdr, uint64_t layout)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPROTO;
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return -EACCES;
	n = pread(fd, hdr, sizeof(*hdr), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(*hdr) || hdr->magic != SHM_MAGIC ||
	    hdr->layout != layout ||
	    hdr->hdr_size != sizeof(*hdr))
		return -EPROTO;
	if (hdr->owner != geteuid())
		return -EACCES;
	if (hdr->addr < SHM_WINDOW_BASE || hdr->size > SHM_WINDOW_SIZE ||
	    hdr->addr + hdr->size > SHM_WINDOW_BASE + SHM_WINDOW_SIZE ||
	    (uint64_t)st.st_size < hdr->size)
		return -EPROTO;
	return 0;
}

int pc__shm_attach_fd(struct pc_shm **out, int *fdp, int fd,
		      uint64_t layout)
{
	struct pc_shm *hdr, *s;
	int rc, nfd;

	*out = NULL;
	*fdp = -1;
	hdr = malloc(sizeof(*hdr));
	if (!hdr)
		return -ENOMEM;
	rc = check_file(fd, hdr, layout);
	if (rc)
		goto out;
	s = (struct pc_shm *)(uintptr_t)hdr->addr;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		rc = -errno;
		goto out;
	}
	nfd = pc__fd_high(nfd);
	rc = map_at(hdr->addr, hdr->size, nfd);
	if (rc == -EEXIST && mapped_here(hdr->addr))
		rc = -EBUSY;
	if (rc == 0 && s->id != hdr->id) {	/* changed under us: not ours */
		munmap(s, hdr->size);
		rc = -EPROTO;
	}
	if (rc) {
		close(nfd);
		goto out;
	}
	*out = s;
	*fdp = nfd;
out:
	free(hdr);
	return rc;
}

int pc__shm_attach(struct pc_shm **out, int *fdp, const char *name,
		   uint64_t layout)
{
	char path[96];
	int fd, rc;

	*out = NULL;
	*fdp = -1;
	if (!name || !name_ok(name))
		return -EINVAL;
	shm_path(path, sizeof(path), name);
	fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = pc__shm_attach_fd(out, fdp, fd, layout);
	close(fd);
	return rc;
}

/*
 * A look at the region @name without joining it: mapped read-only at its
 * address (the same checks as attach), in no table of this process, so
 * nothing of it is written and no lock of it can be taken.  *@created is
 * when its file got its name (its ctime: the link at create).
 */
int pc__shm_look(struct pc_shm **out, const char *name, int64_t *created,
		 uint64_t layout)
{
	struct pc_shm *hdr, *s;
	char path[96];
	struct stat st;
	void *p;
	int fd, rc;

	*out = NULL;
	if (!name || !name_ok(name))
		return -EINVAL;
	shm_path(path, sizeof(path), name);
	fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	hdr = malloc(sizeof(*hdr));
	rc = hdr ? check_file(fd, hdr, layout) : -ENOMEM;
	if (rc == 0 && fstat(fd, &st) == 0)
		*created = st.st_ctim.tv_sec;
	if (rc == 0) {
		s = (struct pc_shm *)(uintptr_t)hdr->addr;
		p = mmap(s, hdr->size, PROT_READ,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (p == MAP_FAILED)
			rc = errno != EEXIST ? -errno :
			     mapped_here(hdr->addr) ? -EBUSY : -EEXIST;
		else if (p != s || s->id != hdr->id)
			rc = p != s ? -EEXIST : -EPROTO;
		if (rc && p != MAP_FAILED)
			munmap(p, hdr->size);
		if (!rc)
			*out = s;
	}
	free(hdr);
	close(fd);
	return rc;
}

void pc__shm_unlook(struct pc_shm *s)
{
	if (s)
		munmap(s, s->size);
}

int pc__shm_list(int (*fn)(const char *name, void *arg), void *arg)
{
	static const char prefix[] = "pagecache-";
	DIR *d = opendir(SHM_DIR);
	struct dirent *e;
	int n = 0, r = 0;

	if (!d)
		return -errno;
	while (!r && (e = readdir(d))) {
		const char *name = e->d_name + sizeof(prefix) - 1;
		struct stat st;

		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1) ||
		    !name_ok(name) || strstr(name, ".new-") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		n++;
		r = fn(name, arg);
	}
	closedir(d);
	return r ? r : n;
}

void pc__shm_detach(struct pc_shm *s, int fd)
{
	if (s)
		munmap(s, s->size);
	if (fd >= 0)
		close(fd);
}

int pc__shm_unlink(const char *name)
{
	char path[96];

	if (!name || !name_ok(name))
		return -EINVAL;
	shm_path(path, sizeof(path), name);
	return shm_unlink(path) < 0 ? -errno : 0;
}

int pc__shm_unlink_own(struct pc_shm *s)
{
	char path[NAME_MAX + 32];
	uint64_t id = 0;
	ssize_t n;
	int fd;

	if (!s->name[0])
		return 0;
	shm_path(path, sizeof(path), s->name);
	fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;	/* gone already */
	/* The file's region is @s if its header has @s's random id. */
	n = pread(fd, &id, sizeof(id), offsetof(struct pc_shm, id));
	close(fd);
	if (n != (ssize_t)sizeof(id) || id != s->id)
		return -ESTALE;	/* a newer region's now: not ours to remove */
	return pc__shm_unlink(s->name);
}

void *pc__shm_base(const struct pc_shm *s)
{
	return (void *)(uintptr_t)s->addr;
}

size_t pc__shm_size(const struct pc_shm *s)
{
	return s->size;
}

bool pc__shm_contains(const struct pc_shm *s, const void *p)
{
	uintptr_t a = (uintptr_t)p;

	return a >= s->addr && a < s->addr + s->size;
}

_Atomic(void *) *pc__shm_root(struct pc_shm *s, unsigned i)
{
	PC_ASSERT(i < PC_SHM_ROOTS);
	return &s->root[i];
}

bool pc__shm_broken(const struct pc_shm *s)
{
	return atomic_load(&s->broken) != 0;
}

_Atomic int *pc__shm_broken_flag(struct pc_shm *s)
{
	return &s->broken;
}

/* A run of @bytes (whole chunks) from `next`; lock held. */
static char *take_chunks_locked(struct pc_shm *s, uint64_t bytes)
{
	char *p;

	PC_ASSERT_HELD(&s->lock);
	if (bytes > s->size - s->next)
		return NULL;
	p = (char *)(uintptr_t)(s->addr + s->next);
	s->used += bytes;
	s->next += bytes;
	return p;
}

static int class_of(size_t size)
{
	int c = 0;

	while (((size_t)1 << (SHM_MIN_OBJ_SHIFT + c)) < size)
		c++;
	return c < SHM_NR_CLASSES ? c : -1;
}

void *pc__shm_alloc(struct pc_shm *s, size_t size)
{
	int c = class_of(size ? size : 1);
	size_t obj;
	struct shm_class *k;
	void *p = NULL;

	if (c < 0)
		return NULL;
	obj = (size_t)1 << (SHM_MIN_OBJ_SHIFT + c);
	k = &s->cls[c];
	pc__lock(&s->lock);
	if (k->free) {
		p = k->free;
		k->free = *(void **)p;
		pc__unlock(&s->lock);
		memset(p, 0, obj);
		return p;
	}
	if (k->chunk_next == k->chunk_end) {
		char *chunk = take_chunks_locked(s, SHM_CHUNK);

		if (chunk) {
			k->chunk_end = chunk + SHM_CHUNK;
			k->chunk_next = chunk;
		}
	}
	if (k->chunk_next != k->chunk_end) {
		p = k->chunk_next;
		k->chunk_next += obj;
	}
	pc__unlock(&s->lock);
	return p;		/* never used: zero */
}

void pc__shm_free(struct pc_shm *s, void *p, size_t size)
{
	int c = class_of(size ? size : 1);
	struct shm_class *k;

	if (!p)
		return;
	PC_ASSERT(c >= 0 && pc__shm_contains(s, p));
	k = &s->cls[c];
	pc__lock(&s->lock);
	*(void **)p = k->free;
	k->free = p;
	pc__unlock(&s->lock);
}

void *pc__shm_reserve(struct pc_shm *s, size_t size)
{
	void *p;

	if (size == 0)
		return NULL;
	size = (size + SHM_CHUNK - 1) / SHM_CHUNK * SHM_CHUNK;
	pc__lock(&s->lock);
	p = take_chunks_locked(s, size);
	pc__unlock(&s->lock);
	return p;
}

size_t pc__shm_used(struct pc_shm *s)
{
	size_t u;

	pc__lock(&s->lock);
	u = s->used;
	pc__unlock(&s->lock);
	return u;
}

#ifdef PC_DEBUG
void pc__shm_test_hold_lock(struct pc_shm *s)
{
	pc__lock(&s->lock);
}
#endif
