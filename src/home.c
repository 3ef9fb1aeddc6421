/*
 * home.c - the home of a shared cache: its sockets, the descriptors the
 * other processes send it, and its service thread.
 *
 * The home is the process that runs a shared cache's threads - kswapd,
 * the flushers, the service thread - the one that created it
 * (pc_cache_create with shared=on; pc_cache_spawn makes the home a daemon
 * of its own: daemon.c).  Every other process attached only uses the
 * cache.  "The home" means this process everywhere in the tree
 * (pc__share_is_home, m->home_rw, struct pc_local's home).
 *
 * Writeback needs a descriptor of each dirty file in the home, so a
 * process that opens a file for writing sends the home its descriptor
 * (SCM_RIGHTS to one of the home's datagram sockets, bound to abstract
 * names made of a random id; the send may wait for the home, so no lock
 * of the cache is held) before the open returns: in the kernel's hands
 * from then on, whatever it then writes, the home can write back, even
 * after the writer died.  The service thread takes a descriptor only if
 * it is the mapping's file open as the message says (anyone may send),
 * and starts the flusher of its device if none runs yet (a bdi made in
 * another process has none).
 *
 * Two sockets, so that an open does not wake the home each time (a
 * wake-up is most of a send's cost; SQLite opens a new journal every
 * transaction):
 *   sock     always watched: MSG_ENTER, MSG_STOP, MSG_SYNC (a pipe's
 *            end: write everything back and answer on it, in a thread
 *            of its own: pc_cache_sync_all), and a descriptor of a
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
 *            send), shared_fds_escrowed (those through the escrow).
 *
 * The service thread also watches every process in the table (procs.c)
 * through a pidfd, and reaps a death at once (pc__procs_others).
 *
 * State: the sockets and the id are in struct pc_share (read-only after
 * create); this process's sending socket and the service thread's handle
 * in its struct pc_local (local.c).  No lock of its own: the service
 * thread takes mappings_lock to attach a descriptor, and nothing is held
 * across a send, which sends the mapping's own descriptor, no copy
 * (pc__share_send_fd says why it stays open meanwhile).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "admin.h"
#include "backing.h"
#include "bdi.h"
#include "ebr.h"
#include "inode.h"
#include "share.h"

enum { MSG_FD = 1, MSG_STOP, MSG_ENTER, MSG_SYNC };
#define SOCK_NAME "pagecache-%016llx"	/* abstract: the home's socket */

struct share_msg {
	int type;
	int rdonly;
	uint64_t dev, ino, serial;
};

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
	struct pc_local *l = pc__local_shared(c);
	int fd = atomic_load(&l->sock), none = -1;

	if (fd >= 0)
		return fd;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	fd = pc__fd_high(fd);
	if (!atomic_compare_exchange_strong(&l->sock, &none, fd)) {
		close(fd);
		fd = none;
	}
	return fd;
}

/*
 * The mapping's read-write descriptor to the home, before the open that
 * made it returns (the caller is that opener: @m is open, by it).  The
 * send may block (a datagram socket's queue holds ten messages, and the
 * home's service thread may wait for mappings_lock meanwhile, in
 * service_take), so nothing of the cache is held across it.  Holding
 * disk_size_lock across it once hung PostgreSQL: a backend's last close
 * held mappings_lock and waited for disk_size_lock, the home waited for
 * mappings_lock, and the sender waited for the home.
 *
 * The descriptor itself is sent, no copy of it (SCM_RIGHTS gives the
 * home its own reference at the send): read under disk_size_lock, where
 * a concurrent opener's upgrade writes it, and used after with no lock.
 * That is safe because it stays open until the send is over: descriptors
 * go only from a mapping nobody has open (backing_release_locked: nr_open
 * 0, under mappings_lock and disk_size_lock), and ours counts in nr_open
 * until our open returns; an upgrade meanwhile keeps the old one open as
 * ro_fd, which goes only with the rest.  (The copy cost a dup and a
 * close per writable open.)
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
	int fd, sock;
	bool rdonly, escrow;

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
	rdonly = b->fd_rdonly;
	pc__unlock(&m->disk_size_lock);
	if (fd < 0 || rdonly)
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
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
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
	if (m && m->serial == msg->serial && !pc__bk_ready(m) &&
	    fstat(fd, &st) == 0 &&
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
	struct pc_proc_id who;	/* pid and start time (no image) */
	int fd;			/* its pidfd */
};

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
	for (unsigned i = 0; i < PC_SHARE_PROCS; i++) {
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
		w[*nw].who = (struct pc_proc_id){ .pid = p,
						 .start = s->procs[i].start };
		w[(*nw)++].fd = fd;
	}
	pc__unlock(&s->lock);
	/* One died before we could watch it, or one now watched died
	 * before it: look at the table. */
	if (dead || *nw)
		for (unsigned k = 0; k < *nw; k++)
			if (!pc__proc_alive(&w[k].who))
				dead = true;
	if (dead)
		(void)pc__procs_others(c);
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

/*
 * MSG_SYNC (pc_cache_sync_all, from any process): the home writes every
 * file back in a thread of its own, so that the service thread goes on
 * taking descriptors and reaping the dead meanwhile, and answers on the
 * descriptor the message carried (a pipe's end): pc__admin_sync's result
 * (admin.c: pc_cache_sync, a writer running meanwhile no error).
 * The asker stays attached until the answer, so the cache outlives the
 * thread's use of it (the home's destroy waits for the asker); after the
 * write the thread touches nothing of the cache.
 */
struct sync_req {
	struct pc_cache *c;
	int fd;
};

static void *sync_main(void *arg)
{
	struct sync_req *q = arg;
	int r = pc__admin_sync(q->c);

	if (write(q->fd, &r, sizeof(r)) != sizeof(r))
		r = 0;	/* the asker is gone: no one to tell */
	close(q->fd);
	free(q);
	return NULL;
}

static void sync_start(struct pc_cache *c, int fd)
{
	struct sync_req *q = malloc(sizeof(*q));
	pthread_attr_t a;
	pthread_t t;
	int r = -ENOMEM;

	if (q) {
		q->c = c;
		q->fd = fd;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		r = -pthread_create(&t, &a, sync_main, q);
		pthread_attr_destroy(&a);
	}
	if (r) {	/* answered here: the asker must not wait forever */
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			r = 0;
		close(fd);
		free(q);
	}
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
	if (n == sizeof(msg) && msg.type == MSG_SYNC && fd >= 0) {
		sync_start(c, fd);
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
	struct watch *w = calloc(PC_SHARE_PROCS, sizeof(*w));
	struct pollfd *pf = calloc(PC_SHARE_PROCS + 2, sizeof(*pf));
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
			(void)pc__procs_others(c);
			refresh = true;
		}
		for (unsigned k = 1; pf && n > 0 && k < nwatch; k++)
			died = died || pf[k].revents;
		if (pf && n > 0 && pf[0].revents)
			run = service_msg(c, &refresh);
		/* Every wake-up, before a reap: the dead's descriptors too. */
		cooling = escrow_take(c) > 0;
		if (died)
			(void)pc__procs_others(c);	/* reaps the dead */
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

/* A message without a descriptor (MSG_ENTER, MSG_STOP) to the home. */
static void say(struct pc_cache *c, int type)
{
	struct share_msg msg = { .type = type };
	struct sockaddr_un a;
	socklen_t len;
	int fd = share_sock(c);

	home_addr(c->share, &a, &len);
	while (fd >= 0 && sendto(fd, &msg, sizeof(msg), MSG_NOSIGNAL,
				 (struct sockaddr *)&a, len) < 0 &&
	       errno == EINTR)
		;
}

/*
 * Every file of @c written back by its home, which holds a descriptor of
 * each dirty one (another process's pc_cache_sync writes only what it
 * has descriptors of): a pipe's write end goes to the home with
 * MSG_SYNC, and its answer comes back on the read end.  In the home,
 * pc__admin_sync itself.  0, the first writeback error, -ENOTCONN (the
 * home died before it answered), or -errno.
 */
int pc__home_sync(struct pc_cache *c)
{
	struct share_msg msg = { .type = MSG_SYNC };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &msg, sizeof(msg) };
	struct sockaddr_un to;
	struct msghdr mh = { .msg_name = &to, .msg_iov = &iov,
			     .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int p[2], sock, r = 0;
	ssize_t n;

	if (!c->shared || pc__share_is_home(c))
		return pc__admin_sync(c);
	sock = share_sock(c);
	if (sock < 0)
		return sock;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	home_addr(c->share, &to, &mh.msg_namelen);
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	while ((n = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0)
		r = errno == ECONNREFUSED || errno == ENOENT ? -ENOTCONN
							     : -errno;
	close(p[1]);	/* the home's copy is the one that answers */
	while (!r && (n = read(p[0], &r, sizeof(r))) < 0 && errno == EINTR)
		;
	if (!r && n != sizeof(r))
		r = -ENOTCONN;	/* closed unanswered: the home died */
	close(p[0]);
	return r;
}

/* A process entered @c: the home watches it from now on. */
void pc__home_say_entered(struct pc_cache *c)
{
	if (!pc__share_is_home(c))
		say(c, MSG_ENTER);
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

/* The home's sockets, bound (create): 0 or -errno. */
int pc__home_open(struct pc_share *s)
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

int pc__home_start(struct pc_cache *c)
{
	struct pc_local *l = pc__local_shared(c);
	int r = -pthread_create(&l->service, NULL, service_main, c);

	if (!r)
		l->service_started = true;
	return r;
}

/* The service thread stops. */
void pc__share_stop(struct pc_cache *c)
{
	struct pc_local *l = pc__local_shared(c);

	if (!l->service_started)
		return;
	say(c, MSG_STOP);
	pthread_join(l->service, NULL);
	l->service_started = false;
}
