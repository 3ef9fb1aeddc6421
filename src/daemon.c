/*
 * daemon.c - the cache process: a daemon whose one job is to be the home
 * of a named shared cache, so that the cache outlives the process that
 * asked for it (pc_cache_spawn).
 *
 * A shared cache's threads (kswapd, the flushers, the service thread that
 * takes descriptors and watches the processes: home.c) run in its home,
 * the process that created it.  A program whose processes end in any
 * order (a server that outlives its workers, a shell that exits while its
 * children run) wants a home that is none of them: pc_cache_spawn forks
 * this daemon, which creates the cache (and so is its home).
 *
 *   caller ── fork ──> child: setsid, fork ──> cache process
 *     │                  └─ _exit                 stdio on /dev/null,
 *     │                                           nothing else of the
 *     │<───────── pipe: create's result ──────── caller's open;
 *     │                                           pc_cache_create, then
 *   waits for the child, reads the result          every POLL_MS: anyone
 *   (then pc_cache_attach joins by the name)       in the table, or come
 *                                                  and gone? (counted, no
 *                                                  process looked at: the
 *                                                  service thread reaps
 *                                                  the dead)  Idle IDLE_MS
 *                                                  (FIRST_MS before the
 *                                                  first): destroy, exit
 *
 * The double fork makes the cache process no child of the caller (whose
 * wait(2) it must not disturb) and of no terminal's session (a hang-up
 * must not end it).  It keeps no descriptor of the caller's - a pipe it
 * held would never reach its end - and ignores SIGHUP, SIGINT and
 * SIGPIPE.  It is a fork of the caller: it sees the caller's memory as
 * it was (copy-on-write, never written) and runs only this file's code.
 * When it is idle it writes everything back, then destroys the cache (the
 * name goes first, then the region), so once the name is gone what the
 * cache held is on the disk - unless a process joined at that moment,
 * whose data destroy writes back after - and a later spawn of the same
 * name makes a new cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "share.h"

#define IDLE_MS 1000		/* the cache process outlives its last user */
#define FIRST_MS 10000		/* ... and waits this long for a first */
#define POLL_MS 20
#define READY_FD 3		/* the one descriptor the cache process keeps */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The cache process: make the cache (its result on READY_FD), then serve
 * it until no process has used it for IDLE_MS, and destroy it.  Never
 * returns.
 */
static void __attribute__((noreturn)) cache_process(const char *cfg)
{
	uint64_t idle_since, wait_ms = FIRST_MS, seen = 0, attaches;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	pc_cache *c;
	int r, null = open("/dev/null", O_RDWR);

	for (int fd = 0; fd < 3; fd++)
		if (null >= 0 && null != fd)
			dup2(null, fd);
	if (null > 2)
		close(null);
	closefrom(READY_FD + 1);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	r = pc_cache_create(&c, cfg);
	if (write(READY_FD, &r, sizeof(r)) != sizeof(r) || r)
		_exit(r ? 1 : 0);
	seen = pc__share_attaches(c);
	close(READY_FD);
	idle_since = now_ms();
	for (;;) {
		struct timespec ts = { 0, POLL_MS * 1000000L };

		nanosleep(&ts, NULL);
		/* Someone who came and went between two looks (one that
		 * checked the cache is there, then left) counts too.  The
		 * table is only counted: the service thread reaps a death
		 * (home.c), so no process is looked at here. */
		attaches = pc__share_attaches(c);
		if (pc__share_entered(c) > 0 || attaches != seen) {
			seen = attaches;
			wait_ms = IDLE_MS;
			idle_since = now_ms();
		} else if (now_ms() - idle_since >= wait_ms) {
			break;
		}
	}
	/* Everything on the disk before the name goes (destroy removes it
	 * first, then waits for latecomers and writes back what they left). */
	(void)pc_cache_sync(c);
	pc_cache_destroy(c);
	_exit(0);
}

PC_EXPORT int pc_cache_spawn(const char *config)
{
	struct pc_config cfg;
	int p[2], r, status;
	pid_t pid;

	if (!config)
		return -EINVAL;
	r = pc__config_parse(&cfg, config);
	if (r)
		return r;
	if (!cfg.shared || !cfg.name[0])
		return -EINVAL;	/* a cache process serves a named cache */
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {		/* a session of its own, then the daemon */
		close(p[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		if (p[1] != READY_FD) {
			dup2(p[1], READY_FD);
			close(p[1]);
		}
		fcntl(READY_FD, F_SETFD, FD_CLOEXEC);
		cache_process(config);
	}
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -EIO;	/* the cache process died before it said */
	close(p[0]);
	return r;
}
