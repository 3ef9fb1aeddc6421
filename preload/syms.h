/*
 * syms.h - every libc function the shim puts itself in front of, once:
 * real.c makes a struct shim_sym of each (REAL(name) calls libc's), and
 * the interposers are these names, defined in the files named beside.
 * A function not in this list is never intercepted.
 */
#ifndef PC_SHIM_SYMS_H
#define PC_SHIM_SYMS_H

#define SHIM_SYMS(X) \
	/* open.c */ \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64) \
	X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2) \
	X(close) X(close_range) X(closefrom) \
	X(dup) X(dup2) X(dup3) X(fcntl) X(fcntl64) \
	/* rw.c */ \
	X(read) X(write) X(pread) X(pread64) X(pwrite) X(pwrite64) \
	X(__read_chk) X(__pread_chk) X(__pread64_chk) \
	X(readv) X(writev) X(preadv) X(preadv64) X(pwritev) X(pwritev64) \
	X(preadv2) X(pwritev2) X(preadv64v2) X(pwritev64v2) \
	X(lseek) X(lseek64) \
	X(copy_file_range) X(sendfile) X(sendfile64) X(splice) \
	/* meta.c */ \
	X(fsync) X(fdatasync) X(sync_file_range) X(syncfs) X(sync) \
	X(ftruncate) X(ftruncate64) X(truncate) X(truncate64) \
	X(fallocate) X(fallocate64) X(posix_fallocate) X(posix_fallocate64) \
	X(posix_fadvise) X(posix_fadvise64) X(readahead) \
	X(stat) X(stat64) X(lstat) X(lstat64) X(fstat) X(fstat64) \
	X(fstatat) X(fstatat64) X(statx) \
	X(__xstat) X(__xstat64) X(__lxstat) X(__lxstat64) \
	X(__fxstat) X(__fxstat64) X(__fxstatat) X(__fxstatat64) \
	X(unlink) X(unlinkat) X(remove) X(rename) X(renameat) X(renameat2) \
	X(utimensat) X(futimens) X(utimes) X(utime) X(futimes) X(lutimes) \
	X(futimesat) \
	/* handoff.c */ \
	X(mmap) X(mmap64) X(ioctl) \
	X(fopen) X(fopen64) X(freopen) X(freopen64) X(fdopen) X(fclose) \
	X(dprintf) X(vdprintf) \
	X(dlopen) \
	X(fork) X(vfork) X(posix_spawn) X(posix_spawnp) X(system) X(popen) \
	X(execve) X(execv) X(execvp) X(execvpe) X(execl) X(execlp) \
	X(execle) X(fexecve) X(execveat) X(_exit) X(_Exit)

#endif /* PC_SHIM_SYMS_H */
