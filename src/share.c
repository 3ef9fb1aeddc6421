/*
 * share.c - a cache that many processes use (shared=on): its memory, its
 * locks, what each process keeps of it for itself, and its home.
 *
 * The whole cache - struct pc_cache, frames, descriptors, tree nodes,
 * mappings, open files, bdis, thread contexts, counters, wait queues, the
 * reclamation domain - lives in one region (shm.c) that every process
 * maps at the same address, so a pointer means the same in each.  Nothing
 * in the region points into a process's own memory or at a function.
 *
 *   region ─┬─ struct pc_cache (root 0) ── struct pc_share: serials, the
 *           │                              mappings' slots, the home, the
 *           │                              attached processes
 *           ├─ objects (pc__cache_zalloc: shm.c's size classes)
 *           └─ frames, descriptors, tree arenas (pc__shm_reserve)
 *
 *   each process: local[] ── struct pc_local: its region handle, its I/O
 *                                backend (made at its first I/O), and its
 *                                descriptors of each mapping, by m->slot
 *
 * Fork: the child maps the region already, and keeps the parent's
 * descriptors (same numbers, same files), so a pc_cache and pc_file
 * handle go on working there.  What it cannot keep is threads: the fork
 * handler forgets the parent's I/O backend (the child makes its own) and
 * the parent's thread contexts (tctx.c), and enters the child in the
 * cache's table of processes.
 *
 * Attach (pc_cache_attach, a named cache, after exec too): the region is
 * mapped at its address, its layout checked against this build's (root
 * 1: LAYOUT_ID), the process entered; a cache whose home is gone, or is
 * closing, is refused.
 *
 * The home: the process that made the cache runs its threads - kswapd,
 * the flushers - and a service thread.  Writeback needs a descriptor of
 * each dirty file in the home, so a process that opens a file for writing
 * sends the home its descriptor (SCM_RIGHTS to one of the home's datagram
 * sockets, bound to abstract names made of a random id; the send may wait
 * for the home, so no lock of the cache is held) before the open returns:
 * in the kernel's hands from then on, whatever it then writes,
 * the home can write back, even after the writer died.  The service
 * thread takes a descriptor only if it is the mapping's file open as the
 * message says (anyone may send), and starts the flusher of its device if
 * none runs yet (a bdi made in another process has none).
 *
 * Two sockets, so that an open does not wake the home each time (a
 * wake-up is most of a send's cost; SQLite opens a new journal every
 * transaction):
 *   sock     always watched: MSG_ENTER, MSG_STOP, and a descriptor of a
 *            file on a device whose flusher has not started (the home
 *            must start it now), or one the escrow had no room for;
 *   escrow   descriptors for a device whose flusher runs: the send does
 *            not wake the home while it is "cooling" - after a look that
 *            found any, the service thread looks again only ESCROW_MS
 *            later (or at its next wake-up for anything else), so a
 *            stream of opens costs it one wake-up each ESCROW_MS, not
 *            one each.  An escrow that is full (the kernel's
 *            max_dgram_qlen) makes the sender use sock instead.  The
 *            home takes what the escrow holds at every wake-up of the
 *            service thread (before it reaps the dead: their descriptors
 *            are there), at pc_cache_sync and when the service stops, so
 *            a descriptor waits at most ESCROW_MS, and never past a
 *            writeback that needs it.  Counters: shared_fds_sent (every
 *            send), shared_fds_escrowed (those through the escrow).  pc_cache_destroy in the home removes the name, waits
 * until every other process attached has detached or died, then tears
 * the cache down as a private one; in another process it detaches (its
 * descriptors closed, its batches drained; the region unmapped).
 *
 * The table of processes (pid and start time; a zombie is dead): the
 * home's service thread watches each through a pidfd (a process that
 * enters says so on the socket), and whoever finds a process dead in it
 * reaps it once - its waiters on pages and the wakes it left undone
 * (pagewait.c), its I/O on pages (io_pid: reads unlocked for the next
 * reader, writes dirty again), the page locks it held (their owner, 1 +
 * its slot in the table, is in the page's flags), its holds on the
 * mappings' i_rwsem (a fragile one breaks the cache), its ebr slots, its
 * write requests in flight (each bdi's count of them for its owner id,
 * zeroed: bdi.c), its threads' contexts (the references and pins they
 * record given back: tctx.c) and the files it left open.  A write
 * completion's marks (io_pid | PC_IO_ENDED: its PG_writeback to end, its
 * reference to give back; | PC_IO_MOVING: its counters half moved, the
 * cache broken) are finished like the rest of its I/O.  It counts as attached
 * until the reap is over, and its slot is not reused before.  Pids are
 * reused: a process that enters while an entry of its pid is in the table
 * (a dead one's) reaps that first, before it holds anything marked with
 * the pid (procs_enter).
 *
 * A mapping's slot indexes each process's descriptors of it; its serial
 * (never reused) tells a process that a slot's descriptors belong to a
 * mapping since freed: those are closed when the slot is next used.
 *
 * Locks: the slots' bitmap is taken and given back by compare-and-swap;
 * the processes' table is under share->lock (rank SHARE), and a reap runs
 * after it is let go; the process's own tables under local_lock (rank
 * LOCAL: made and reset there, read without it).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "backing.h"
#include "bdi.h"
#include "ebr.h"
#include "io.h"
#include "node.h"
#include "share.h"
#include "shm.h"
#include "tree.h"

#define SLOTS_MAX (1u << 18)		/* mappings of one cache at once */
#define BK_CHUNK 256u			/* descriptors' entries a chunk */
#define BK_DIR (SLOTS_MAX / BK_CHUNK)
#define MAX_LOCAL 16			/* shared caches one process uses */
#define MAX_PROCS 256			/* processes attached at once */
_Static_assert(MAX_PROCS + 1 <= PC_BDI_OWNERS, "bdi in_flight by owner");

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

enum { MSG_FD = 1, MSG_STOP, MSG_ENTER };
#define SOCK_NAME "pagecache-%016llx"	/* abstract: the home's socket */

struct share_msg {
	int type;
	int rdonly;
	uint64_t dev, ino, serial;
};

struct pc_share {
	struct pc_lock lock;		/* rank SHARE: procs[] */
	_Atomic uint64_t next_serial;
	int32_t home_pid;		/* read-only */
	uint64_t home_start;		/* read-only */
	uint64_t id;			/* read-only: random; names the
					   home's socket */
	int sock;			/* read-only: the home's, bound */
	int escrow;			/* read-only: the home's, bound
					   (the top: two sockets) */
	_Atomic bool closing;		/* the home is tearing it down */
	_Atomic uint64_t attaches;	/* processes entered, ever (a gauge
					   of vmstat.c: shared_attaches) */
	_Atomic uint32_t slot_hint;	/* where the last slot was found */
	_Atomic uint64_t slot_map[SLOTS_MAX / 64];	/* taken by CAS */
	struct {
		_Atomic int32_t pid;	/* 0: free */
		uint64_t start;
		bool reaping;		/* dead; its reap under way */
	} procs[MAX_PROCS];		/* lock */
};

struct local_ent {
	_Atomic(struct pc_cache *) c;	/* written under local_lock */
	struct pc_local l;
	_Atomic int sock;		/* to send the home descriptors; -1:
					   not made yet (share_sock) */
	_Atomic uintptr_t lo, hi;	/* its page descriptors, once whole
					   (pc__share_page_cache); 0: not */
	pthread_t service;		/* home: the service thread */
	bool service_started;
};

static struct pc_lock local_lock = PC_LOCK_INITIALIZER(PC_RANK_LOCAL);
static struct local_ent local[MAX_LOCAL];
static _Atomic bool local_any;	/* a shared cache was ever attached */

/* ------------------------------------------------------------------ */
/* This process's part.                                                 */

static struct local_ent *local_ent(struct pc_cache *c)
{
	for (unsigned i = 0; i < MAX_LOCAL; i++)
		if (atomic_load_explicit(&local[i].c, memory_order_acquire) == c)
			return &local[i];
	return NULL;
}

struct pc_cache *pc__share_page_cache(const struct pc_page *p)
{
	if (!atomic_load_explicit(&local_any, memory_order_relaxed))
		return NULL;
	for (unsigned i = 0; i < MAX_LOCAL; i++) {
		uintptr_t lo = atomic_load_explicit(&local[i].lo,
						    memory_order_acquire);

		if (lo && (uintptr_t)p >= lo &&
		    (uintptr_t)p < atomic_load_explicit(&local[i].hi,
							memory_order_relaxed))
			return atomic_load_explicit(&local[i].c,
						    memory_order_relaxed);
	}
	return NULL;
}

struct pc_local *pc__local_shared(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);

	PC_ASSERT(e);	/* a process uses only caches it attached */
	return &e->l;
}

/* @c is whole: pc__share_page_cache may find its pages. */
static void local_whole(struct local_ent *e, struct pc_cache *c)
{
	atomic_store_explicit(&e->hi, (uintptr_t)(c->pages + c->span_frames),
			      memory_order_relaxed);
	atomic_store_explicit(&e->lo, (uintptr_t)c->pages,
			      memory_order_release);
	atomic_store(&local_any, true);
}

static struct local_ent *local_add(struct pc_cache *c, struct pc_shm *shm)
{
	struct local_ent *e = NULL;

	pc__lock(&local_lock);
	if (pc__pid != getpid())	/* read by other caches' threads */
		pc__pid = getpid();
	for (unsigned i = 0; i < MAX_LOCAL && !e; i++)
		if (!atomic_load(&local[i].c))
			e = &local[i];
	if (e) {
		memset(&e->l, 0, sizeof(e->l));
		e->service_started = false;
		atomic_init(&e->sock, -1);
		e->l.shm = shm;
		e->l.bk_dir = calloc(BK_DIR, sizeof(*e->l.bk_dir));
		if (e->l.bk_dir)
			atomic_store_explicit(&e->c, c, memory_order_release);
		else
			e = NULL;
	}
	pc__unlock(&local_lock);
	return e;
}

/* Close this process's descriptors of every mapping; forget the tables. */
static void local_remove(struct local_ent *e)
{
	pc__lock(&local_lock);
	for (unsigned i = 0; i < BK_DIR; i++) {
		struct pc_backing *chunk = atomic_load(&e->l.bk_dir[i]);

		if (!chunk)
			continue;
		for (unsigned j = 0; j < BK_CHUNK; j++) {
			struct pc_backing *b = &chunk[j];
			int fds[3] = { atomic_load(&b->fd),
				       atomic_load(&b->tail_fd), b->ro_fd };

			for (int k = 0; k < 3; k++)
				if (fds[k] >= 0)
					close(fds[k]);
		}
		free(chunk);
	}
	free(e->l.bk_dir);
	if (atomic_load(&e->sock) >= 0)
		close(atomic_load(&e->sock));
	atomic_store(&e->sock, -1);
	atomic_store(&e->lo, 0);
	memset(&e->l, 0, sizeof(e->l));
	atomic_store(&e->c, NULL);
	pc__unlock(&local_lock);
}

static void bk_clear(struct pc_backing *b)
{
	atomic_init(&b->fd, -1);
	atomic_init(&b->tail_fd, -1);
	b->ro_fd = -1;
	b->fd_rdonly = false;
}

struct pc_backing *pc__bk_shared(const struct pc_mapping *m)
{
	struct pc_local *l = pc__local_shared(m->cache);
	struct pc_backing *_Atomic *dir = &l->bk_dir[m->slot / BK_CHUNK];
	struct pc_backing *chunk = atomic_load_explicit(dir, memory_order_acquire);
	struct pc_backing *b;

	if (__builtin_expect(!chunk, 0)) {
		pc__lock(&local_lock);
		chunk = atomic_load(dir);
		if (!chunk) {
			chunk = calloc(BK_CHUNK, sizeof(*chunk));
			if (!chunk)	/* no memory for 8 KiB: nothing works */
				abort();
			for (unsigned j = 0; j < BK_CHUNK; j++)
				bk_clear(&chunk[j]);
			atomic_store_explicit(dir, chunk, memory_order_release);
		}
		pc__unlock(&local_lock);
	}
	b = &chunk[m->slot % BK_CHUNK];
	if (__builtin_expect(atomic_load_explicit(&b->serial,
						  memory_order_acquire) !=
			     m->serial, 0)) {
		/* The slot's last mapping is gone: its descriptors go. */
		pc__lock(&local_lock);
		if (atomic_load(&b->serial) != m->serial) {
			int fds[3] = { atomic_load(&b->fd),
				       atomic_load(&b->tail_fd), b->ro_fd };

			for (int k = 0; k < 3; k++)
				if (fds[k] >= 0)
					close(fds[k]);
			bk_clear(b);
			atomic_store_explicit(&b->serial, m->serial,
					      memory_order_release);
		}
		pc__unlock(&local_lock);
	}
	return b;
}

/* ------------------------------------------------------------------ */
/* Memory and locks.                                                    */

void *pc__cache_zalloc(struct pc_cache *c, size_t size)
{
	void *p;

	if (c->shared)
		return pc__shm_alloc(pc__local_shared(c)->shm, size);
	p = aligned_alloc(64, (size + 63) / 64 * 64);
	if (p)
		memset(p, 0, size);
	return p;
}

void pc__cache_free(struct pc_cache *c, void *p, size_t size)
{
	if (!p)
		return;
	if (c->shared)
		pc__shm_free(pc__local_shared(c)->shm, p, size);
	else
		free(p);
}

void pc__cache_lock_init(struct pc_cache *c, struct pc_lock *l, int rank,
			 int stat)
{
	if (!c->shared) {
		pc__lock_init(l, stat >= 0 ? c : NULL, rank, stat);
		return;
	}
	pc__lock_init_shared(l, rank,
			     pc__shm_broken_flag(pc__local_shared(c)->shm));
	if (stat >= 0) {
		l->cache = c;
		l->stat = stat;
	}
}

void pc__cache_rwlock_init(struct pc_cache *c, struct pc_rwlock *l, int rank)
{
	if (c->shared)
		pc__rwlock_init_shared(l, rank);
	else
		pc__rwlock_init(l, rank);
}

void pc__cache_cond_init(struct pc_cache *c, pthread_cond_t *cv,
			 bool monotonic)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	if (monotonic)
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (c->shared)
		pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}

/* ------------------------------------------------------------------ */
/* I/O: each process its own backend.                                   */

static void io_fallback_say(int err)
{
	static _Atomic bool said;

	if (!atomic_exchange(&said, true))
		fprintf(stderr, "pagecache: io_uring unavailable (%s): I/O goes "
			"through the sync backend (pread/pwrite)\n",
			strerror(-err));
}

int pc__io_make(struct pc_cache *c, struct pc_local *l)
{
	const struct pc_io_ops *ops = pc__io_ops_by_name(c->cfg.io);
	struct pc_io *io;
	int r = ops->create(&io, 256);

	if (r && ops == &pc__io_uring_ops) {
		io_fallback_say(r);	/* no io_uring here */
		ops = &pc__io_sync_ops;
		c->io_fallback = true;
		r = ops->create(&io, 256);
	}
	if (r)
		return r;
	l->io = io;
	atomic_store_explicit((_Atomic(const struct pc_io_ops *) *)&l->io_ops,
			      ops, memory_order_release);
	return 0;
}

/* A forked child makes its own backend at its first I/O. */
static struct pc_local *local_io(struct pc_cache *c)
{
	struct pc_local *l = pc__local(c);

	if (__builtin_expect(!atomic_load_explicit(
		(_Atomic(const struct pc_io_ops *) *)&l->io_ops,
		memory_order_acquire), 0)) {
		static struct pc_lock io_lock = PC_LOCK_INITIALIZER(PC_RANK_IO);

		pc__lock(&io_lock);
		if (!l->io_ops && pc__io_make(c, l))
			abort();	/* not even the sync backend */
		pc__unlock(&io_lock);
	}
	return l;
}

int pc__io_submit(struct pc_cache *c, struct pc_io_req **reqs, unsigned n)
{
	struct pc_local *l = local_io(c);

	return l->io_ops->submit(l->io, reqs, n);
}

bool pc__io_lost(struct pc_cache *c)
{
	struct pc_local *l = pc__local(c);

	return l->io && l->io_ops->lost && l->io_ops->lost(l->io);
}

void pc__io_destroy(struct pc_cache *c)
{
	struct pc_local *l = pc__local(c);

	if (l->io)
		l->io_ops->destroy(l->io);
	l->io = NULL;
	l->io_ops = NULL;
}

/* ------------------------------------------------------------------ */
/* Slots and serials of mappings.                                       */

int pc__share_slot_get(struct pc_cache *c, struct pc_mapping *m)
{
	struct pc_share *s = c->share;
	uint32_t hint;

	if (!s)
		return 0;
	m->serial = atomic_fetch_add(&s->next_serial, 1);
	hint = atomic_load_explicit(&s->slot_hint, memory_order_relaxed);
	for (uint32_t i = 0; i < SLOTS_MAX / 64; i++) {
		uint32_t w = (hint + i) % (SLOTS_MAX / 64);
		uint64_t v = atomic_load(&s->slot_map[w]);

		while (~v) {
			unsigned b = (unsigned)__builtin_ctzll(~v);

			if (atomic_compare_exchange_weak(&s->slot_map[w], &v,
							 v | 1ull << b)) {
				atomic_store_explicit(&s->slot_hint, w,
						      memory_order_relaxed);
				m->slot = w * 64 + b;
				return 0;
			}
		}
	}
	return -ENOMEM;
}

void pc__share_slot_put(struct pc_cache *c, struct pc_mapping *m)
{
	struct pc_share *s = c->share;

	if (s)
		atomic_fetch_and(&s->slot_map[m->slot / 64],
				 ~(1ull << (m->slot % 64)));
}

/* ------------------------------------------------------------------ */
/* The home's descriptors: sent by the writers, taken by the service.  */

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

unsigned pc__share_entered(struct pc_cache *c)
{
	unsigned n = 0;

	if (!c->share)
		return 0;
	for (unsigned i = 0; i < MAX_PROCS; i++) {
		pid_t p = atomic_load(&c->share->procs[i].pid);

		n += p && p != pc__pid;
	}
	return n;
}

bool pc__share_is_home(struct pc_cache *c)
{
	return !c->shared || pc__local_shared(c)->home;
}

pid_t pc__share_home_pid(struct pc_cache *c)
{
	return c->shared ? c->share->home_pid : getpid();
}

/* The name of the home's socket, or (@escrow) of its escrow. */
static void sock_addr(const struct pc_share *s, bool escrow,
		      struct sockaddr_un *a, socklen_t *len)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* sun_path[0] = 0: an abstract name, gone with the socket */
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, SOCK_NAME "%s",
		 (unsigned long long)s->id, escrow ? "-escrow" : "");
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   strlen(a->sun_path + 1));
}

static void home_addr(const struct pc_share *s, struct sockaddr_un *a,
		      socklen_t *len)
{
	sock_addr(s, false, a, len);
}

/* This process's socket to send the home descriptors (made once). */
static int share_sock(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);
	int fd = atomic_load(&e->sock), none = -1;

	if (fd >= 0)
		return fd;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	fd = pc__fd_high(fd);
	if (!atomic_compare_exchange_strong(&e->sock, &none, fd)) {
		close(fd);
		fd = none;
	}
	return fd;
}

/*
 * The mapping's read-write descriptor to the home, before the open that
 * made it returns.  The send may block (a datagram socket's queue holds
 * ten messages, and the home's service thread may wait for mappings_lock
 * meanwhile, in service_take), so nothing of the cache is held across it:
 * a copy of the descriptor is taken under disk_size_lock (which a
 * concurrent opener's upgrade of the descriptors takes too), and the
 * send made with no lock held.  Holding disk_size_lock across it once
 * hung PostgreSQL: a backend's last close held mappings_lock and waited
 * for disk_size_lock, the home waited for mappings_lock, and the sender
 * waited for the home.
 */
void pc__share_send_fd(struct pc_mapping *m)
{
	struct pc_cache *c = m->cache;
	struct pc_backing *b;
	struct share_msg msg = { .type = MSG_FD };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &msg, sizeof(msg) };
	struct sockaddr_un to;
	struct msghdr mh = { .msg_name = &to, .msg_iov = &iov,
			     .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd, sock, copy = -1;
	bool escrow;

	if (!c->shared || pc__share_is_home(c) ||
	    atomic_load(&m->home_rw))
		return;
	sock = share_sock(c);
	if (sock < 0)
		return;		/* the home cannot write it back; said by
				   the counter staying put */
	/* A device the home writes already: no need to wake it. */
	escrow = atomic_load(&m->bdi->started);
	sock_addr(c->share, escrow, &to, &mh.msg_namelen);
	b = pc__bk(m);
	pc__lock(&m->disk_size_lock);
	fd = atomic_load(&b->fd);
	/* At or above fd, itself out of the program's way: one call. */
	if (fd >= 0 && !b->fd_rdonly)
		copy = fcntl(fd, F_DUPFD_CLOEXEC, fd);
	pc__unlock(&m->disk_size_lock);
	if (copy < 0)
		return;
	msg.rdonly = 0;
	msg.dev = m->dev;
	msg.ino = m->ino;
	msg.serial = m->serial;
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &copy, sizeof(int));
	/* In the kernel's hands once sent: safe from our death.  The
	 * escrow never waits: full (or failing), the message goes to the
	 * home's socket, which wakes it. */
	if (escrow) {
		ssize_t n;

		while ((n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 &&
		       errno == EINTR)
			;
		if (n < 0) {
			escrow = false;
			home_addr(c->share, &to, &mh.msg_namelen);
		}
	}
	if (!escrow)
		while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	else
		pc__inc(c, 0, shared_fds_escrowed);
	close(copy);
	pc__inc(c, 0, shared_fds_sent);
}

/*
 * The home: one descriptor received for the mapping @msg names (moved
 * out of the program's way if it is kept: one of a mapping gone since,
 * such as a deleted journal's, is only closed).
 */
static void service_take(struct pc_cache *c, const struct share_msg *msg,
			 int fd)
{
	struct pc_mapping *m = pc__mapping_lookup(c, (dev_t)msg->dev,
						  (ino_t)msg->ino);
	bool kept = false;
	struct stat st;

	/* Anyone may send to the socket: only the mapping's own file is
	 * taken, and only open for writing as the message says. */
	if (m && m->serial == msg->serial && fstat(fd, &st) == 0 &&
	    pc__mapping_matches(m, &st) &&
	    (msg->rdonly || (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR)) {
		fd = pc__fd_high(fd);
		pc__lock(&c->mappings_lock);
		kept = pc__backing_attach_locked(m, fd, msg->rdonly);
		if (!pc__backing_needs_locked(m, true))
			atomic_store(&m->home_rw, true);
		pc__unlock(&c->mappings_lock);
		pc__bdi_start(m->bdi);
	}
	if (m)
		pc__mapping_put(m);
	if (!kept)
		close(fd);
}

/*
 * The service thread watches every attached process through a pidfd
 * (readable when it dies), so a death is reaped at once and an idle
 * cache costs no wake-ups; a process that enters says so (MSG_ENTER)
 * and the table is looked at again.  Without pidfds (before Linux 5.3),
 * it looks every REAP_MS.
 */
#define REAP_MS 100

struct watch {
	int32_t pid;
	uint64_t start;
	int fd;
};

static unsigned procs_others(struct pc_cache *c);

/* The watches made to match the table of processes. */
static void watch_refresh(struct pc_cache *c, struct watch *w, unsigned *nw,
			  bool *poll_only)
{
	struct pc_share *s = c->share;
	bool dead = false;

	for (unsigned k = 0; k < *nw; k++)
		close(w[k].fd);
	*nw = 0;
	pc__lock(&s->lock);
	for (unsigned i = 0; i < MAX_PROCS; i++) {
		pid_t p = atomic_load(&s->procs[i].pid);
		int fd;

		if (!p || p == pc__pid)
			continue;
		fd = (int)syscall(SYS_pidfd_open, p, 0);
		if (fd < 0) {
			*poll_only = *poll_only || errno != ESRCH;
			dead = dead || errno == ESRCH;
			continue;
		}
		w[*nw].pid = p;
		w[*nw].start = s->procs[i].start;
		w[(*nw)++].fd = fd;
	}
	pc__unlock(&s->lock);
	/* One died before we could watch it, or one now watched died
	 * before it: look at the table. */
	if (dead || *nw)
		for (unsigned k = 0; k < *nw; k++)
			if (!pc__process_alive(w[k].pid, w[k].start))
				dead = true;
	if (dead)
		(void)procs_others(c);
}

/*
 * One message from @sock, without waiting: its length or -errno; *@fd
 * the descriptor it carried, or -1.
 */
static ssize_t recv_one(int sock, struct share_msg *msg, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { msg, sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	*fd = -1;
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return n;
}

/* One message at the home's socket: false when told to stop. */
static bool service_msg(struct pc_cache *c, bool *refresh)
{
	struct share_msg msg;
	int fd;
	ssize_t n = recv_one(c->share->sock, &msg, &fd);

	if (n < 0)
		return n == -EINTR || n == -EAGAIN;
	if (n == sizeof(msg) && msg.type == MSG_FD && fd >= 0) {
		service_take(c, &msg, fd);
		return true;
	}
	if (fd >= 0)
		close(fd);
	if (n == sizeof(msg) && msg.type == MSG_ENTER)
		*refresh = true;
	/* A stop counts only when the home's destroy sent it. */
	return !(n == sizeof(msg) && msg.type == MSG_STOP &&
		 atomic_load(&c->share->closing));
}

/*
 * The home: take every descriptor the escrow holds (the top); how many.
 * No lock held.
 */
static unsigned escrow_take(struct pc_cache *c)
{
	unsigned taken = 0;

	for (;;) {
		struct share_msg msg;
		int fd;
		ssize_t n = recv_one(c->share->escrow, &msg, &fd);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return taken;	/* EAGAIN: empty */
		if (n == sizeof(msg) && msg.type == MSG_FD && fd >= 0)
			service_take(c, &msg, fd);
		else if (fd >= 0)
			close(fd);
		taken++;
	}
}

void pc__share_take_fds(struct pc_cache *c)
{
	if (c->shared && pc__share_is_home(c))
		(void)escrow_take(c);
}

/* After a look at the escrow that found descriptors: the next one, ms. */
#define ESCROW_MS 10

static void *service_main(void *arg)
{
	struct pc_cache *c = arg;
	struct watch *w = calloc(MAX_PROCS, sizeof(*w));
	struct pollfd *pf = calloc(MAX_PROCS + 2, sizeof(*pf));
	unsigned nw = 0;
	bool poll_only = !w || !pf, run = true, cooling = false;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (w && pf)
		watch_refresh(c, w, &nw, &poll_only);
	while (run) {
		bool refresh = false, died = false;
		unsigned npf = 0, nwatch;
		int n;

		if (pf) {
			pf[npf++] = (struct pollfd){ c->share->sock, POLLIN, 0 };
			for (unsigned k = 0; k < nw; k++)
				pf[npf++] = (struct pollfd){ w[k].fd, POLLIN, 0 };
			nwatch = npf;
			if (!cooling)	/* cooling: a send wakes no one */
				pf[npf++] = (struct pollfd){ c->share->escrow,
							     POLLIN, 0 };
			n = poll(pf, npf, poll_only ? REAP_MS :
					  cooling ? ESCROW_MS : -1);
		} else {	/* no memory for watches: look every REAP_MS */
			struct pollfd one = { c->share->sock, POLLIN, 0 };

			nwatch = 1;
			n = poll(&one, 1, REAP_MS);
			if (n > 0)
				run = service_msg(c, &refresh);
		}
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && poll_only) {
			(void)procs_others(c);
			refresh = true;
		}
		for (unsigned k = 1; pf && n > 0 && k < nwatch; k++)
			died = died || pf[k].revents;
		if (pf && n > 0 && pf[0].revents)
			run = service_msg(c, &refresh);
		/* Every wake-up, before a reap: the dead's descriptors too. */
		cooling = escrow_take(c) > 0;
		if (died)
			(void)procs_others(c);	/* reaps the dead */
		if ((died || refresh) && w && pf)
			watch_refresh(c, w, &nw, &poll_only);
	}
	(void)escrow_take(c);	/* for destroy's writeback */
	for (unsigned k = 0; k < nw; k++)
		close(w[k].fd);
	free(w);
	free(pf);
	return NULL;
}

/* A process entered @c: the home watches it from now on. */
static void say_entered(struct pc_cache *c)
{
	struct share_msg msg = { .type = MSG_ENTER };
	struct sockaddr_un a;
	socklen_t len;
	int fd;

	if (pc__share_is_home(c))
		return;
	fd = share_sock(c);
	home_addr(c->share, &a, &len);
	while (fd >= 0 && sendto(fd, &msg, sizeof(msg), MSG_NOSIGNAL,
				 (struct sockaddr *)&a, len) < 0 &&
	       errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* Processes.                                                           */

static void procs_leave(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();

	pc__pagewait_owner(c->pages, c->span_frames, 0);
	pc__lock(&s->lock);
	for (unsigned i = 0; i < MAX_PROCS; i++)
		if (atomic_load(&s->procs[i].pid) == pid)
			atomic_store(&s->procs[i].pid, 0);
	pc__unlock(&s->lock);
}

/*
 * A page lock a dead process held outside I/O (page.h: its owner bits): it may
 * have been copying a write into the page, so an uptodate page is dirty
 * from now on (what readers may have seen of it reaches the disk); one not
 * uptodate is read by the next reader (filemap.c).  The dead process's
 * reference, if it had one, stays: the page is only never freed.
 *
 * It may also have been gathering the page for writeback (writeback.c):
 * its tags moved (DIRTY off, WRITEBACK on) before PG_writeback was set -
 * put back, so the page is written again and nothing waits for it - or
 * PG_writeback set and the counters moving, not yet marked as its write
 * in flight (io_pid): how far the counters got cannot be known, so the
 * cache is broken (each process writes back what it can and goes on
 * through the kernel).  Once marked, the page is a write in flight
 * (reap_pages).
 */
static void lock_abandon(struct pc_cache *c, struct pc_page *p)
{
	struct pc_mapping *m = page_mapping(p);

	if (m && page_test(p, PG_writeback) && !atomic_load(&p->io_pid)) {
		atomic_store(c->broken, 1);
	} else if (m) {
		/* Locked, so still in its mapping's tree at its index. */
		pc__lock_counted(&m->tree_lock);
		if (page_test(p, PG_dirty))
			pc__tree_tag_set(&m->tree, page_index(p), PC_TAG_DIRTY);
		if (!page_test(p, PG_writeback))
			pc__tree_tag_clear(&m->tree, page_index(p),
					   PC_TAG_WRITEBACK);
		pc__unlock(&m->tree_lock);
		if (page_test(p, PG_uptodate))
			pc__set_page_dirty(m, p);
	}
	pc__unlock_page(&c->wait, p);
}

/*
 * A dead process's write completion (writeback.c: wb_finish) left @p
 * marked: PC_IO_ENDED, its counters moved, so only its PG_writeback (if
 * still set: no new writeback sets it while the mark stands) and the
 * request's reference are left; PC_IO_MOVING, the counters half moved:
 * the cache is broken, and the page's writeback ended all the same, so
 * no one waits for it.
 */
static void write_end_abandon(struct pc_cache *c, struct pc_page *p,
			      int32_t mark)
{
	if (mark & PC_IO_MOVING)
		atomic_store(c->broken, 1);
	if (page_test(p, PG_writeback))
		pc__end_page_writeback(c, p);
	atomic_store(&p->io_pid, 0);
	pc__put_page(c, p);
}

/*
 * The I/O and the page locks a dead process left on pages (page.h:
 * io_pid, the lock's owner @id): every frame handed out so far is looked
 * at.  Its io_uring requests are over by now (a process's ring is
 * cancelled and drained before it becomes a zombie), so nothing else will
 * end them.  Its waiters are out of the queues by now (pc__pagewait_reap),
 * so no lock is handed to it behind the scan.
 */
static unsigned reap_pages(struct pc_cache *c, pid_t pid, uint32_t id,
			   unsigned *locks)
{
	unsigned n = 0;

	for (int i = 0; i < c->nr_nodes; i++) {
		struct pc_node *nd = &c->nodes[i];
		uint32_t hw = atomic_load(&nd->hw);

		for (uint32_t k = 0; k < hw; k++) {
			struct pc_page *p = &c->pages[nd->first_pfn + k];
			int32_t owner = atomic_load_explicit(&p->io_pid,
							     memory_order_relaxed);

			if (owner && PC_IO_PID(owner) == pid) {
				if (owner & (PC_IO_MOVING | PC_IO_ENDED))
					write_end_abandon(c, p, owner);
				else if (page_test(p, PG_writeback))
					pc__writeback_abandon(c, p);
				else
					pc__read_abandon(c, p);
				n++;
				/* marked by a writeback gang, still locked */
				if (page_lock_owner(p) == id) {
					pc__unlock_page(&c->wait, p);
					(*locks)++;
				}
			} else if (page_lock_owner(p) == id) {
				lock_abandon(c, p);
				(*locks)++;
			}
		}
	}
	return n;
}

/*
 * What the dead process of table slot @i left: its waiters on pages, its
 * I/O and page locks, what it held of the mappings' i_rwsem (a truncation
 * left half-done breaks the cache), its read sections' slots, its
 * threads' batches (pages they held), the files it had open.  Its dirty
 * pages are the cache's and stay, for the home to write back.  In this
 * order: closing its files takes the locks it held.
 */
static void reap(struct pc_cache *c, unsigned i)
{
	_Atomic int *broken = pc__shm_broken_flag(pc__local_shared(c)->shm);
	pid_t pid = atomic_load(&c->share->procs[i].pid);
	unsigned locks = 0;

	pc__add(c, 0, shared_waiters_reaped, pc__pagewait_reap(&c->wait, i + 1));
	pc__add(c, 0, shared_io_reaped, reap_pages(c, pid, i + 1, &locks));
	pc__bdi_reap(c, i + 1);	/* its requests are over */
	pc__lock(&c->mappings_lock);
	for (unsigned h = 0; h < c->hash_size; h++)
		for (struct pc_mapping *m = c->hash[h]; m; m = m->hash_next)
			if (pc__rwlock_reap(&m->i_rwsem, pid, broken) &
			    PC_RW_REAPED)
				locks++;
	pc__unlock(&c->mappings_lock);
	pc__add(c, 0, shared_locks_reaped, locks);
	/* Our own pid: our image before an exec (alive to pc__ebr_reap: same
	 * pid and start time), or a dead one's whose pid we reuse. */
	if (pid == getpid())
		pc__ebr_reap_image(c->ebr);
	else
		pc__ebr_reap(c->ebr, pid);
	pc__tctx_reap(c, pid);
	pc__files_reap(c, pid);
	pc__inc(c, 0, shared_procs_reaped);
}

/* Reap the process of slot @i (marked reaping by the caller), then free
 * the slot: until then no one takes its pid or its owner id. */
static void reap_slot(struct pc_cache *c, unsigned i)
{
	struct pc_share *s = c->share;

	reap(c, i);
	pc__lock(&s->lock);
	s->procs[i].reaping = false;
	atomic_store(&s->procs[i].pid, 0);
	pc__unlock(&s->lock);
}

/* Processes attached but this one and alive; the dead ones reaped. */
static unsigned procs_others(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();
	unsigned n = 0, nr_dead = 0, dead[MAX_PROCS];

	pc__lock(&s->lock);
	for (unsigned i = 0; i < MAX_PROCS; i++) {
		pid_t p = atomic_load(&s->procs[i].pid);

		if (!p || p == pid)
			continue;
		n++;	/* a dead one counts until its reap is over */
		if (!s->procs[i].reaping &&
		    !pc__process_alive(p, s->procs[i].start)) {
			s->procs[i].reaping = true;	/* ours, once */
			dead[nr_dead++] = i;
		}
	}
	pc__unlock(&s->lock);
	for (unsigned k = 0; k < nr_dead; k++) {
		reap_slot(c, dead[k]);
		n--;
	}
	return n;
}

PC_EXPORT unsigned pc_cache_processes(pc_cache *c)
{
	if (!c)
		return 0;
	return c->shared ? procs_others(c) + 1 : 1;
}

/*
 * Into the table of processes: 0, or -EMFILE (MAX_PROCS alive); this
 * process's owner id for page locks set (pagewait.h).
 *
 * Pids are reused.  Whatever a process holds that is marked with its pid
 * (i_rwsem's owner and reader slots, io_pid, its threads' contexts, its
 * open files) is reaped by pid, so a process with the pid of a dead one
 * whose reap has not ended must not hold anything yet: its holds would
 * be reaped with the dead one's.  So an entry with our pid - a dead
 * process's, since a live process enters a cache once (attach refuses a
 * second mapping of its region), or our own image before an exec (which
 * ended every thread it had wherever it was) - is reaped here before we
 * enter, by us or by whoever marked it first (then we wait for it to
 * end), and this runs before the process takes any of the cache's locks
 * (attach, the fork child's handler).  Page locks are not by pid: their
 * owner is the slot, not reused before its reap is over.  Our image
 * before an exec has our start time too, so its read sections' slots
 * look alive to pc__ebr_reap: they are told by their image id (ebr.c)
 * and cleared by pc__ebr_reap_image.
 */
static int procs_enter(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();
	uint64_t start = pc__process_start(pid);

	for (int pass = 0; pass < 2;) {
		int mine = -1, free_at = -1;
		bool reap_it = false;

		pc__lock(&s->lock);
		for (unsigned i = 0; i < MAX_PROCS; i++) {
			pid_t p = atomic_load(&s->procs[i].pid);

			if (p == pid)
				mine = (int)i;
			else if (!p && free_at < 0)
				free_at = (int)i;
		}
		if (mine >= 0) {	/* a dead one's: reaped first */
			reap_it = !s->procs[mine].reaping;
			s->procs[mine].reaping = true;
			pc__unlock(&s->lock);
			if (reap_it)
				reap_slot(c, (unsigned)mine);
			else	/* another's reap of it: until it ends */
				usleep(1000);
			continue;
		}
		if (free_at >= 0) {
			s->procs[free_at].start = start;
			atomic_store(&s->procs[free_at].pid, pid);
			atomic_fetch_add(&s->attaches, 1);
			pc__unlock(&s->lock);
			pc__pagewait_owner(c->pages, c->span_frames,
					   (uint32_t)free_at + 1);
			say_entered(c);
			return 0;
		}
		pc__unlock(&s->lock);
		(void)procs_others(c);	/* the dead leave room */
		pass++;
	}
	return -EMFILE;
}

#ifdef PC_DEBUG
int pc__share_test_predecessor(struct pc_cache *c)
{
	struct pc_share *s = c->share;
	pid_t pid = getpid();

	pc__lock(&s->lock);
	for (unsigned i = 0; i < MAX_PROCS; i++)
		if (atomic_load(&s->procs[i].pid) == pid)
			s->procs[i].start ^= 1;
	pc__unlock(&s->lock);
	return procs_enter(c);
}
#endif

void pc__share_fork_child(void)
{
	pc__pid = getpid();
	for (unsigned i = 0; i < MAX_LOCAL; i++) {
		struct pc_cache *c = atomic_load(&local[i].c);

		if (!c)
			continue;
		/* The parent's ring and threads are not ours. */
		local[i].l.io = NULL;
		local[i].l.io_ops = NULL;
		local[i].l.home = false;
		local[i].service_started = false;
		/* The parent's owner id is not ours: none until we enter. */
		pc__pagewait_owner(c->pages, c->span_frames, 0);
		(void)procs_enter(c);	/* full: it runs unseen by the home */
	}
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

/* A socket of the home's, bound to its abstract name: fd or -errno. */
static int bound_sock(struct pc_share *s, bool escrow)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sock_addr(s, escrow, &a, &len);
	if (bind(fd, (struct sockaddr *)&a, len) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return pc__fd_high(fd);
}

/* The home's sockets (the top): 0 or -errno. */
static int home_sock(struct pc_share *s)
{
	s->sock = bound_sock(s, false);
	if (s->sock < 0)
		return s->sock;
	s->escrow = bound_sock(s, true);
	if (s->escrow < 0) {
		close(s->sock);
		return s->escrow;
	}
	return 0;
}

int pc__share_create(struct pc_cache **out, const struct pc_config *cfg,
		     uint64_t span_frames)
{
	const char *name = cfg->name[0] ? cfg->name : NULL;
	struct pc_shm *shm;
	struct local_ent *e;
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
	e = c && s ? local_add(c, shm) : NULL;
	if (!e) {
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
	e->l.home = true;
	pc__lock_init_shared(&s->lock, PC_RANK_SHARE,
			     pc__shm_broken_flag(shm));
	atomic_init(&s->next_serial, 1);
	s->home_pid = getpid();
	s->home_start = pc__process_start(s->home_pid);
	s->id = random_id();
	r = home_sock(s);
	if (r) {
		local_remove(e);
		pc__shm_detach(shm);
		if (name)
			pc__shm_unlink(name);
		return r;
	}
	(void)procs_enter(c);	/* the first: there is room */
	*out = c;
	return 0;
}

int pc__share_start(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);
	int r;

	r = -pthread_create(&e->service, NULL, service_main, c);
	if (r)
		return r;
	e->service_started = true;
	local_whole(e, c);
	/* Whole now: attach may find it. */
	atomic_store(pc__shm_root(e->l.shm, 1), (void *)(uintptr_t)LAYOUT_ID);
	atomic_store(pc__shm_root(e->l.shm, 0), c);
	return 0;
}

PC_EXPORT int pc_cache_attach(pc_cache **out, const char *name)
{
	struct pc_shm *shm;
	struct local_ent *e;
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
	e = local_add(c, shm);
	if (!e) {
		pc__shm_detach(shm);
		return -ENOMEM;
	}
	r = procs_enter(c);
	if (r) {
		local_remove(e);
		pc__shm_detach(shm);
		return r;
	}
	if (atomic_load(&c->share->closing)) {	/* too late: it is going */
		procs_leave(c);
		local_remove(e);
		pc__shm_detach(shm);
		return -ENOENT;
	}
	r = pc__cache_register(c);
	if (r) {
		procs_leave(c);
		local_remove(e);
		pc__shm_detach(shm);
		return r;
	}
	local_whole(e, c);
	*out = c;
	return 0;
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
	while (procs_others(c)) {
		if (!said)
			fprintf(stderr, "pagecache: destroy waits for the "
				"other processes of the shared cache\n");
		said = true;
		usleep(10000);
	}
}

/* The service thread stops. */
void pc__share_stop(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);
	struct share_msg msg = { .type = MSG_STOP };
	struct sockaddr_un a;
	socklen_t len;
	int fd;

	if (!e || !e->service_started)
		return;
	fd = share_sock(c);
	home_addr(c->share, &a, &len);
	while (fd >= 0 && sendto(fd, &msg, sizeof(msg), MSG_NOSIGNAL,
				 (struct sockaddr *)&a, len) < 0 &&
	       errno == EINTR)
		;
	pthread_join(e->service, NULL);
	e->service_started = false;
}

void pc__share_detach(struct pc_cache *c)
{
	struct local_ent *e = local_ent(c);
	struct pc_shm *shm;

	if (!e)
		return;
	shm = e->l.shm;
	if (e->l.home) {
		close(c->share->sock);
		close(c->share->escrow);
		if (c->cfg.name[0] && !atomic_load(&c->share->closing))
			pc__shm_unlink(c->cfg.name);	/* a failed create */
	}
	procs_leave(c);
	local_remove(e);
	pc__shm_detach(shm);
}
