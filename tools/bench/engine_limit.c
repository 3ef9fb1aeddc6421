/*
 * tools/bench/engine_limit.c - the limit engine: the physical limit of a
 * cache hit (docs/design.md, "Memory at scale").
 *
 * A file opened here is copied, once, into a plain anonymous buffer of
 * its size on transparent huge pages (MADV_HUGEPAGE, touched while the
 * file is read in).  pread is then a memcpy out of that buffer and
 * page_get hands out a pointer into it: the same access pattern as a
 * cache hit, with nothing but the data in the way - no index, no
 * descriptor, no reference count.  The cached-read rows of this engine
 * are what pagecache's rows are divided by ("pagecache / limit").
 *
 *   open(path) ── first open of a path: mmap size (2 MiB rounded),
 *                 MADV_HUGEPAGE, pread the file into it (not timed)
 *              └─ later opens of the path share the buffer (refs)
 *   pread      ── memcpy from the buffer (short at end of file)
 *   page_get   ── a pointer into the buffer; page_put does nothing
 *
 * It serves only workloads that read files they do not write (the hit
 * path); the write calls answer -EOPNOTSUPP.  The buffers live in the
 * engine's state (`struct limit`), whose table is guarded by its mutex:
 * opens and closes may come from any thread, reads touch no shared state.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define HUGE_SIZE	(2ull << 20)
#define LOAD_CHUNK	(1u << 20)
#define MAX_BUFS	16

struct limit_buf {
	char path[1024];
	char *base;
	uint64_t size;		/* the file's bytes */
	uint64_t mapped;	/* size rounded up to 2 MiB */
	int refs;		/* open files; the table's lock */
};

struct limit {
	pthread_mutex_t lock;
	struct limit_buf bufs[MAX_BUFS];	/* lock */
};

struct limit_file {
	struct limit *l;
	struct limit_buf *b;
};

static struct limit_file *F(struct pcb_file *f)
{
	return (struct limit_file *)f;
}

static int limit_start(struct pcb_run *r)
{
	struct limit *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	r->eng = l;
	return 0;
}

static int limit_stop(struct pcb_run *r)
{
	struct limit *l = r->eng;

	if (!l)
		return 0;
	for (int i = 0; i < MAX_BUFS; i++)
		if (l->bufs[i].base)
			munmap(l->bufs[i].base, l->bufs[i].mapped);
	pthread_mutex_destroy(&l->lock);
	free(l);
	r->eng = NULL;
	return 0;
}

/* Map @b for the file @fd of @size bytes and read the file into it. */
static int load(struct limit_buf *b, int fd, uint64_t size)
{
	uint64_t off = 0;

	b->size = size;
	b->mapped = (size + HUGE_SIZE - 1) / HUGE_SIZE * HUGE_SIZE;
	if (!b->mapped)
		b->mapped = HUGE_SIZE;
	b->base = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->base == MAP_FAILED) {
		b->base = NULL;
		return -ENOMEM;
	}
	madvise(b->base, b->mapped, MADV_HUGEPAGE);
	while (off < size) {
		size_t want = size - off < LOAD_CHUNK ? (size_t)(size - off)
						     : LOAD_CHUNK;
		ssize_t n = pread(fd, b->base + off, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			munmap(b->base, b->mapped);
			b->base = NULL;
			return err;
		}
		off += (uint64_t)n;
	}
	/* the tail of the last huge page, touched as the cache's would be */
	memset(b->base + size, 0, b->mapped - size);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

static int limit_open(struct pcb_run *r, const char *path, int flags,
		      struct pcb_file **out)
{
	struct limit *l = r->eng;
	struct limit_buf *b = NULL, *slot = NULL;
	struct limit_file *f;
	struct stat st;
	int fd, err = 0;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return -EOPNOTSUPP;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < MAX_BUFS && !b; i++) {
		if (l->bufs[i].base && strcmp(l->bufs[i].path, path) == 0)
			b = &l->bufs[i];
		else if (!l->bufs[i].base && !slot)
			slot = &l->bufs[i];
	}
	if (!b && !slot)
		err = -EMFILE;
	if (!b && slot) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
		} else {
			err = fstat(fd, &st) < 0 ? -errno
						 : load(slot, fd, (uint64_t)st.st_size);
			close(fd);
		}
		if (!err) {
			b = slot;
			pcb_fmt(b->path, sizeof(b->path), "%s", path);
		}
	}
	if (b)
		b->refs++;
	pthread_mutex_unlock(&l->lock);
	if (err) {
		free(f);
		return err;
	}
	f->l = l;
	f->b = b;
	*out = (struct pcb_file *)f;
	return 0;
}

static ssize_t limit_pread(struct pcb_file *pf, void *buf, size_t len,
			   off_t off)
{
	const struct limit_buf *b = F(pf)->b;

	if (off < 0)
		return -EINVAL;
	if ((uint64_t)off >= b->size)
		return 0;
	if (len > b->size - (uint64_t)off)
		len = (size_t)(b->size - (uint64_t)off);
	memcpy(buf, b->base + off, len);
	return (ssize_t)len;
}

static ssize_t limit_pwrite(struct pcb_file *f, const void *buf, size_t len,
			    off_t off)
{
	(void)f, (void)buf, (void)len, (void)off;
	return -EOPNOTSUPP;
}

static int limit_fsync(struct pcb_file *f)
{
	(void)f;
	return 0;
}

static int limit_ftruncate(struct pcb_file *f, off_t len)
{
	(void)f, (void)len;
	return -EOPNOTSUPP;
}

static int limit_fadvise(struct pcb_file *f, off_t off, off_t len, int advice)
{
	(void)f, (void)off, (void)len, (void)advice;
	return 0;
}

/* The buffer stays mapped until stop: a later open of the path reuses it. */
static int limit_close(struct pcb_file *pf)
{
	struct limit_file *f = F(pf);

	pthread_mutex_lock(&f->l->lock);
	f->b->refs--;
	pthread_mutex_unlock(&f->l->lock);
	free(f);
	return 0;
}

static int limit_unlink(struct pcb_run *r, const char *path)
{
	(void)r;
	return unlink(path) < 0 ? -errno : 0;
}

static int limit_page_get(struct pcb_file *pf, uint64_t index,
			  const void **data, void **pin)
{
	const struct limit_buf *b = F(pf)->b;

	if (index >= (b->size + 4095) / 4096)
		return -ENXIO;
	*data = b->base + index * 4096;
	*pin = NULL;
	return 0;
}

static void limit_page_put(void *pin)
{
	(void)pin;
}

static json_t *limit_vmstat(struct pcb_run *r)
{
	(void)r;
	return json_object();
}

static int limit_sample(struct pcb_run *r, uint64_t v[PCB_NR_SAMPLES])
{
	(void)r, (void)v;
	return -EOPNOTSUPP;	/* no counters: no samples */
}

const struct pcb_engine_ops pcb_engine_limit = {
	.name = "limit",
	.what = "the hit path's limit: copies out of a plain huge-page buffer",
	.start = limit_start,
	.stop = limit_stop,
	.open = limit_open,
	.pread = limit_pread,
	.pread_cached = limit_pread,
	.pwrite = limit_pwrite,
	.fsync = limit_fsync,
	.ftruncate = limit_ftruncate,
	.fadvise = limit_fadvise,
	.close = limit_close,
	.unlink = limit_unlink,
	.page_get = limit_page_get,
	.page_put = limit_page_put,
	.vmstat = limit_vmstat,
	.sample = limit_sample,
};
