/*
 * proc.c - one identity for a process (proc.h): this process's own, and
 * whether another one still lives, read from /proc.
 *
 * This process's identity is computed once per image and fork child: at
 * the first call of pc__proc_self, and again when the pid it recorded is
 * not getpid() (the call is in a fork child; the fork handler clears it
 * too, and makes the lock new, since a fork copies it in whatever state
 * another thread held it).  An exec starts this memory afresh, so a new
 * image draws a new id.
 *
 * Another process's liveness: kill(pid, 0) says whether the pid exists,
 * /proc/PID/stat whether it is a zombie (state Z or X) and when it
 * started.  Read with system calls, not stdio or libc's open: this runs
 * in fork handlers, where an interposer of open(2) (the preload shim)
 * may hold its own locks.
 *
 * Locks: self_lock (rank SELF, the innermost: nothing is taken under it)
 * guards `self`; pc__proc_self copies it out.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"
#include "proc.h"

static struct pc_lock self_lock = PC_LOCK_INITIALIZER(PC_RANK_SELF);
static struct pc_proc_id self;		/* self_lock; pid 0: not looked */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/*
 * Field 22 of /proc/PID/stat: when the process started; 0 if unknown.
 * *@zombie (if given): it has exited (state Z or X), not yet reaped.
 */
static uint64_t stat_of(pid_t pid, bool *zombie)
{
	char path[64], buf[1024];
	ssize_t n;
	char *p;
	uint64_t v = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');		/* the name may hold anything */
	if (!p)
		return 0;
	if (zombie)
		*zombie = p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
	/* after ") ": state is field 3; start time is field 22 */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

uint64_t pc__process_start(pid_t pid)
{
	return stat_of(pid, NULL);
}

bool pc__process_alive(pid_t pid, uint64_t start)
{
	bool zombie = false;
	uint64_t now;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	now = stat_of(pid, &zombie);
	return !zombie && (!start || now == start);
}

static void fork_child(void)
{
	pc__lock_init(&self_lock, NULL, PC_RANK_SELF, -1);
	self.pid = 0;	/* the parent's: the child looks again */
}

static void init_once(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

void pc__proc_self(struct pc_proc_id *me)
{
	pthread_once(&once, init_once);
	pc__lock(&self_lock);
	if (self.pid != getpid()) {
		uint64_t img = 0;

		self.pid = getpid();
		self.start = stat_of(self.pid, NULL);
		if (getrandom(&img, sizeof(img), 0) != sizeof(img))
			img = (uint64_t)self.pid << 32 ^ pc__now_ns();
		self.image = img | 1;
	}
	*me = self;
	pc__unlock(&self_lock);
}

#ifdef PC_DEBUG
void pc__proc_test_new_image(void)
{
	pc__lock(&self_lock);
	self.pid = 0;	/* a new image at the next look */
	pc__unlock(&self_lock);
}
#endif
