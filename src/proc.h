/*
 * proc.h - one identity for a process (proc.c).  A leaf.
 *
 * A table that outlives a process - in a region many processes map (a
 * shared cache's table of processes, an epoch domain's reader slots) -
 * must name it so that a pid reused by another process, or the same
 * process after an exec, is not taken for it:
 *   pid     what the kernel names it by; reused once it is reaped;
 *   start   its start time (field 22 of /proc/PID/stat, clock ticks since
 *           boot): a pid reused since names a process started at another
 *           time; 0 when it could not be read (taken for alive);
 *   image   a random id this image of the process drew at its first look
 *           at itself (never 0): an exec keeps pid and start time, and
 *           ends every thread of the old image, so an old image's claims
 *           are told by their image (ebr.c's pc__ebr_reap_image).
 * A fork child is a new pid, so it draws its own image.
 *
 * Two short forms stand for it where a word must name the process:
 *   - its slot in the cache's table of processes (procs.c), whose entry
 *     holds the pid and start time: a page lock's owner bits (page.h), a
 *     bdi's count of requests in flight (bdi.h); the slot is not reused
 *     before the process is reaped;
 *   - its pid alone, on marks the reaper finds by pid (a page's io_pid,
 *     a shared i_rwsem's owner and readers, thread contexts, open files):
 *     procs.c reaps a dead entry of a pid before a new process of that
 *     pid holds anything, so a pid is never two processes' there.
 */
#ifndef PC_PROC_H
#define PC_PROC_H

#include "base.h"

struct pc_proc_id {
	pid_t pid;
	uint64_t start;		/* 0: unknown */
	uint64_t image;		/* 0: not drawn (another process's, unknown) */
};

/* This process's identity (its image drawn at the first call, and again
 * in a fork child).  Any thread; fork handlers too (system calls only). */
void pc__proc_self(struct pc_proc_id *me);
/* @pid's start time, 0 if it cannot be read (it is gone, or no /proc). */
uint64_t pc__process_start(pid_t pid);
/*
 * Is (@pid, @start) still that process, running?  A zombie is not; a pid
 * running since another start time is another process; @start 0: any
 * process of that pid.
 */
bool pc__process_alive(pid_t pid, uint64_t start);

static inline bool pc__proc_alive(const struct pc_proc_id *p)
{
	return pc__process_alive(p->pid, p->start);
}

#ifdef PC_DEBUG
/* Tests: this process draws a new image at its next look at itself, as
 * an exec would. */
void pc__proc_test_new_image(void);
#endif

#endif /* PC_PROC_H */
