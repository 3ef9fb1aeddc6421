/*
 * reader.c - reads a trace file written by src/trace.c (trace=PATH).
 *
 * THE FILE FORMAT (version 1).  Native byte order (the file is read on the
 * machine that wrote it; a foreign one is recognised and refused), every
 * field fixed-size, structs in src/trace_fmt.h:
 *
 *   offset 0    header, 256 bytes (struct pc_trace_file_header)
 *                 magic "PCTRACE\0", version 1, header_size 256,
 *                 record_size 32, page_size 4096, nr_nodes,
 *                 frames_per_node, nr_frames, start_ns (CLOCK_MONOTONIC at
 *                 open), start_realtime_ns, pid, nr_page_flags, and a
 *                 note: the cache's policies as "key=value ..." text.
 *   then        blocks, each a 16-byte block header
 *                 { u32 magic "PCTB", u16 type, u16 0, u32 tid, u32 count }
 *               followed by its payload:
 *     EVENTS (1)  count records of thread tid, 32 bytes each
 *                 (struct pc_trace_rec), in the order that thread emitted
 *                 them, so in time order within the thread:
 *                   u64 ts     ns, CLOCK_MONOTONIC (the header's clock)
 *                   u64 index  page index in its file
 *                   u32 pfn    frame number in the cache
 *                   u32 mapping the file's inode number folded to 32 bits
 *                              (ino ^ ino >> 32); 0: page had no mapping
 *                   u32 arg    LRU_INSERT: reason (0 read, 1 write,
 *                              2 readahead, 3 refault); REFAULT: refault
 *                              distance in pages, clamped; EVICT: kind
 *                              (0 reclaim, 1 drop-behind,
 *                              2 truncate/invalidate, 3 migrated);
 *                              others 0
 *                   u16 flags  the page's flag bits at the event
 *                              (trace_fmt.h, PC_TRACE_PG_*: referenced 2,
 *                              dirty 4, readahead 7, active 8, lru 9,
 *                              workingset 10 ...)
 *                   u8  event  0 LRU_INSERT, 1 ACTIVATE, 2 DEACTIVATE,
 *                              3 ROTATE, 4 EVICT, 5 REFAULT, 6 WB_START,
 *                              7 WB_END, 8 DIRTY
 *                   u8  node   the frame's node
 *                 Blocks of different threads interleave in the order the
 *                 drain thread copied them out: to see the events in time
 *                 order, merge the threads' streams by ts.
 *     FOOTER (2)  written once, last, at close: tid 0, count = entries;
 *                 a 32-byte summary (struct pc_trace_footer)
 *                   { u64 events, u64 lost, u64 end_ns,
 *                     u64 lost_unattributed }
 *                 then count 24-byte entries (struct pc_trace_thread_stat)
 *                   { u32 tid, u32 0, u64 events, u64 lost }
 *                 events: records of that thread in the file; lost: events
 *                 dropped because its ring was full.  A thread may have
 *                 more than one entry (sum them).
 *   A file without a footer was not closed (the program died): it is read
 *   up to its last whole record and reported as truncated.
 *
 * This reader maps the file, checks the header, indexes each thread's
 * blocks, merges the threads by (ts, tid) into one array of pointers into
 * the mapping, and checks the per-thread counts against the footer.
 * Single-threaded; the struct it fills is the caller's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

static const char *const event_names[PC_TRACE_NR_EVENTS] = {
	[PC_TR_LRU_INSERT] = "lru_insert", [PC_TR_ACTIVATE] = "activate",
	[PC_TR_DEACTIVATE] = "deactivate", [PC_TR_ROTATE] = "rotate",
	[PC_TR_EVICT] = "evict", [PC_TR_REFAULT] = "refault",
	[PC_TR_WB_START] = "writeback_start", [PC_TR_WB_END] = "writeback_end",
	[PC_TR_DIRTY] = "dirty",
};

const char *pct_event_name(unsigned event)
{
	return event < PC_TRACE_NR_EVENTS ? event_names[event] : "unknown";
}

struct span {
	const struct pc_trace_rec *p;
	size_t n;
};

struct stream {
	uint32_t tid;
	struct span *sp;
	size_t nsp, cap;
	uint64_t n;
	size_t si, ri;		/* merge cursor */
};

struct streams {
	struct stream *s;
	size_t n, cap;
	size_t last;		/* blocks come in runs: the last one found */
};

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static struct stream *stream_of(struct streams *ss, uint32_t tid)
{
	if (ss->n && ss->s[ss->last].tid == tid)
		return &ss->s[ss->last];
	for (size_t i = 0; i < ss->n; i++)
		if (ss->s[i].tid == tid) {
			ss->last = i;
			return &ss->s[i];
		}
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? 2 * ss->cap : 16;
		struct stream *n = realloc(ss->s, cap * sizeof(*n));

		if (!n)
			return NULL;
		ss->s = n;
		ss->cap = cap;
	}
	memset(&ss->s[ss->n], 0, sizeof(ss->s[0]));
	ss->s[ss->n].tid = tid;
	ss->last = ss->n;
	return &ss->s[ss->n++];
}

static int stream_add(struct stream *s, const struct pc_trace_rec *p, size_t n)
{
	if (!n)
		return 0;
	if (s->nsp == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct span *sp = realloc(s->sp, cap * sizeof(*sp));

		if (!sp)
			return -ENOMEM;
		s->sp = sp;
		s->cap = cap;
	}
	s->sp[s->nsp++] = (struct span){ p, n };
	s->n += n;
	return 0;
}

static const struct pc_trace_rec *cur(const struct stream *s)
{
	return s->si < s->nsp ? &s->sp[s->si].p[s->ri] : NULL;
}

static void advance(struct stream *s)
{
	if (++s->ri == s->sp[s->si].n) {
		s->si++;
		s->ri = 0;
	}
}

static bool before(const struct stream *a, const struct stream *b)
{
	const struct pc_trace_rec *x = cur(a), *y = cur(b);

	return x->ts < y->ts || (x->ts == y->ts && a->tid < b->tid);
}

static void sift_down(struct stream **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && before(h[l], h[m]))
			m = l;
		if (l + 1 < n && before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct stream *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int cmp_ev(const void *a, const void *b)
{
	const struct pc_trace_rec *x = *(const struct pc_trace_rec *const *)a;
	const struct pc_trace_rec *y = *(const struct pc_trace_rec *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x < y ? -1 : x > y;	/* file order */
}

/* Merge the threads' streams into f->ev by (ts, tid). */
static int merge(struct pct_file *f, struct streams *ss)
{
	struct stream **heap;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < ss->n; i++)
		f->nr_ev += ss->s[i].n;
	f->ev = malloc((f->nr_ev ? f->nr_ev : 1) * sizeof(*f->ev));
	f->tid = malloc((f->nr_ev ? f->nr_ev : 1) * sizeof(*f->tid));
	heap = malloc((ss->n ? ss->n : 1) * sizeof(*heap));
	if (!f->ev || !f->tid || !heap) {
		free(heap);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ss->n; i++) {
		struct stream *s = &ss->s[i];
		uint64_t prev = 0;

		for (size_t a = 0; a < s->nsp; a++)	/* each thread in order? */
			for (size_t b = 0; b < s->sp[a].n; b++) {
				if (s->sp[a].p[b].ts < prev)
					f->unsorted++;
				prev = s->sp[a].p[b].ts;
			}
		if (s->n)
			heap[n++] = s;
	}
	for (size_t i = n; i-- > 0;)
		sift_down(heap, n, i);
	while (n) {
		struct stream *s = heap[0];

		f->ev[k] = cur(s);
		f->tid[k++] = s->tid;
		advance(s);
		if (!cur(s))
			heap[0] = heap[--n];
		sift_down(heap, n, 0);
	}
	free(heap);
	if (f->unsorted) {	/* a writer bug: fall back to a full sort */
		qsort(f->ev, f->nr_ev, sizeof(*f->ev), cmp_ev);
		memset(f->tid, 0, f->nr_ev * sizeof(*f->tid));
	}
	return 0;
}

static struct pct_tid_count *tid_count(struct pct_file *f,
					    uint32_t tid)
{
	for (size_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].tid == tid)
			return &f->threads[i];
	return NULL;
}

static int cmp_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct pct_tid_count *)a)->tid;
	uint32_t y = ((const struct pct_tid_count *)b)->tid;

	return x < y ? -1 : x > y;
}

/* The per-thread table: what was read, and what the footer declares. */
static int count_threads(struct pct_file *f, const struct streams *ss,
			 const struct pc_trace_thread_stat *st, size_t nst)
{
	f->threads = calloc(ss->n + nst + 1, sizeof(*f->threads));
	if (!f->threads)
		return -ENOMEM;
	for (size_t i = 0; i < ss->n; i++)
		f->threads[f->nr_threads++] = (struct pct_tid_count){
			.tid = ss->s[i].tid, .read = ss->s[i].n };
	for (size_t i = 0; i < nst; i++) {
		struct pct_tid_count *t = tid_count(f, st[i].tid);

		if (!t) {
			t = &f->threads[f->nr_threads++];
			t->tid = st[i].tid;
		}
		t->declared += st[i].events;
		t->lost += st[i].lost;
	}
	qsort(f->threads, f->nr_threads, sizeof(*f->threads), cmp_tid);
	if (f->has_footer)
		for (size_t i = 0; i < f->nr_threads; i++)
			if (f->threads[i].declared > f->threads[i].read)
				f->missing += f->threads[i].declared -
					      f->threads[i].read;
	return 0;
}

static int check_header(const struct pc_trace_file_header *h, size_t len,
			char *err, size_t errlen)
{
	if (len < sizeof(*h) || memcmp(h->magic, PC_TRACE_MAGIC, 8) != 0) {
		seterr(err, errlen, "not a pagecache trace (bad magic)");
		return -EINVAL;
	}
	if (h->version == __builtin_bswap32(PC_TRACE_VERSION)) {
		seterr(err, errlen, "trace written on a machine of the other "
		       "byte order");
		return -EINVAL;
	}
	if (h->version != PC_TRACE_VERSION) {
		seterr(err, errlen, "trace version %u; this reader knows %u",
		       h->version, PC_TRACE_VERSION);
		return -EINVAL;
	}
	if (h->header_size != sizeof(*h) ||
	    h->record_size != sizeof(struct pc_trace_rec)) {
		seterr(err, errlen, "trace header/record size %u/%u, expected "
		       "%zu/%zu", h->header_size, h->record_size, sizeof(*h),
		       sizeof(struct pc_trace_rec));
		return -EINVAL;
	}
	return 0;
}

/* Walk the blocks after the header. */
static int parse_blocks(struct pct_file *f, struct streams *ss,
			const struct pc_trace_thread_stat **st, size_t *nst)
{
	const char *base = f->map;
	size_t off = sizeof(struct pc_trace_file_header), len = f->map_len;
	const size_t rs = sizeof(struct pc_trace_rec);

	while (off < len) {
		struct pc_trace_block b;
		size_t avail;

		if (len - off < sizeof(b)) {
			f->truncated = true;
			break;
		}
		memcpy(&b, base + off, sizeof(b));
		off += sizeof(b);
		avail = len - off;
		if (b.magic != PC_TRACE_BLOCK_MAGIC) {
			f->bad_blocks++;
			break;
		}
		if (b.type == PC_TRACE_BLK_EVENTS) {
			size_t n = b.count;
			struct stream *s = stream_of(ss, b.tid);

			if (!s)
				return -ENOMEM;
			if (avail < n * rs) {
				n = avail / rs;
				f->truncated = true;
			}
			if (stream_add(s, (const void *)(base + off), n))
				return -ENOMEM;
			off += n * rs;
			if (f->truncated)
				break;
		} else if (b.type == PC_TRACE_BLK_FOOTER) {
			size_t need = sizeof(f->footer) +
				      (size_t)b.count * sizeof(**st);

			if (avail < need) {
				f->truncated = true;
				break;
			}
			memcpy(&f->footer, base + off, sizeof(f->footer));
			*st = (const void *)(base + off + sizeof(f->footer));
			*nst = b.count;
			f->has_footer = true;
			off += need;
			if (off != len)
				f->bad_blocks++;	/* bytes after the footer */
			break;
		} else {
			f->bad_blocks++;
			break;
		}
	}
	if (!f->has_footer)
		f->truncated = true;
	return 0;
}

int pct_file_read(const char *path, struct pct_file *f,
		       char *err, size_t errlen)
{
	const struct pc_trace_thread_stat *st = NULL;
	struct streams ss = { 0 };
	size_t nst = 0;
	struct stat sb;
	int fd, r;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &sb) < 0 || sb.st_size < (off_t)sizeof(f->hdr)) {
		r = sb.st_size < (off_t)sizeof(f->hdr) ? -EINVAL : -errno;
		seterr(err, errlen, "%s: too short for a trace header", path);
		close(fd);
		return r;
	}
	f->map_len = (size_t)sb.st_size;
	f->map = mmap(NULL, f->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED) {
		r = -errno;
		f->map = NULL;
		seterr(err, errlen, "%s: mmap: %s", path, strerror(-r));
		return r;
	}
	memcpy(&f->hdr, f->map, sizeof(f->hdr));
	f->hdr.note[sizeof(f->hdr.note) - 1] = 0;
	r = check_header(&f->hdr, f->map_len, err, errlen);
	if (!r)
		r = parse_blocks(f, &ss, &st, &nst);
	if (!r)
		r = merge(f, &ss);
	if (!r)
		r = count_threads(f, &ss, st, nst);
	if (r == -ENOMEM)
		seterr(err, errlen, "%s: out of memory", path);
	for (size_t i = 0; i < ss.n; i++)
		free(ss.s[i].sp);
	free(ss.s);
	if (r)
		pct_file_free(f);
	return r;
}

void pct_file_free(struct pct_file *f)
{
	free(f->ev);
	free(f->tid);
	free(f->threads);
	if (f->map)
		munmap(f->map, f->map_len);
	memset(f, 0, sizeof(*f));
}
