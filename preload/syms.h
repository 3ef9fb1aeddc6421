/*
 * syms.h - every libc function the shim puts itself in front of, once,
 * with its signature and how its wrapper is written.  real.c makes a
 * struct shim_sym of each name (REAL(name) calls libc's); the file named
 * above each group expands its group with SHIM_WRAP (shim.h), which
 * writes the wrapper of each entry from its kind.  A function not in this
 * list is never intercepted.
 *
 *   X(return type, name, (parameters), (arguments), kind[, how])
 *
 * Kinds, and what the wrapper does (shim.h has the generic ones, the file
 * its own):
 *   own       written by hand in its file (the list only declares it)
 *   fd        on a managed fd: how (with o, the fd's description);
 *             on any other fd: libc's
 *   before    how, then libc's
 *   after     libc's; when it succeeded, how
 *   or_real   how, or libc's when how returns SHIM_PASS
 *   open, open_2, creat, fcntl    open.c: the open family, fcntl
 *   chk       rw.c: a fortified read: libc's when the buffer is too small
 *             or the fd not managed, else how (the plain call)
 *   unlink    meta.c: a call that may take a regular file's last name;
 *             how says whether it may (and fills st)
 *   stdio, execl, exit            handoff.c: fopen/freopen, execl*, _exit
 * The open kinds' arguments name mode, a local the wrapper reads from its
 * variable arguments.
 *
 * Both names of a pair (pread and pread64 ...) are listed: on x86_64 they
 * are distinct symbols, each of which a program may call.
 */
#ifndef PC_SHIM_SYMS_H
#define PC_SHIM_SYMS_H

#define SHIM_SYMS_OPEN(X) \
	X(int, open, (const char *path, int flags, ...), (path, flags, mode), \
	  open, AT_FDCWD) \
	X(int, open64, (const char *path, int flags, ...), (path, flags, mode), \
	  open, AT_FDCWD) \
	X(int, openat, (int dirfd, const char *path, int flags, ...), \
	  (dirfd, path, flags, mode), open, dirfd) \
	X(int, openat64, (int dirfd, const char *path, int flags, ...), \
	  (dirfd, path, flags, mode), open, dirfd) \
	X(int, creat, (const char *path, mode_t mode), (path, mode), creat) \
	X(int, creat64, (const char *path, mode_t mode), (path, mode), creat) \
	X(int, __open_2, (const char *path, int flags), (path, flags), \
	  open_2, AT_FDCWD) \
	X(int, __open64_2, (const char *path, int flags), (path, flags), \
	  open_2, AT_FDCWD) \
	X(int, __openat_2, (int dirfd, const char *path, int flags), \
	  (dirfd, path, flags), open_2, dirfd) \
	X(int, __openat64_2, (int dirfd, const char *path, int flags), \
	  (dirfd, path, flags), open_2, dirfd) \
	X(int, close, (int fd), (fd), own) \
	X(int, close_range, (unsigned lo, unsigned hi, int flags), \
	  (lo, hi, flags), own) \
	X(void, closefrom, (int lo), (lo), own) \
	X(int, dup, (int oldfd), (oldfd), own) \
	X(int, dup2, (int oldfd, int newfd), (oldfd, newfd), own) \
	X(int, dup3, (int oldfd, int newfd, int flags), (oldfd, newfd, flags), own) \
	X(int, fcntl, (int fd, int cmd, ...), (fd, cmd, arg), fcntl) \
	X(int, fcntl64, (int fd, int cmd, ...), (fd, cmd, arg), fcntl)

#define SHIM_SYMS_RW(X) \
	X(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n), \
	  fd, pos_read(o, fd, buf, n)) \
	X(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), \
	  fd, pos_write(o, fd, buf, n)) \
	X(ssize_t, pread, (int fd, void *buf, size_t n, off_t off), \
	  (fd, buf, n, off), fd, at_read(o, buf, n, off)) \
	X(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off), \
	  (fd, buf, n, off), fd, at_read(o, buf, n, off)) \
	X(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), \
	  (fd, buf, n, off), fd, at_write(o, fd, buf, n, off)) \
	X(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off), \
	  (fd, buf, n, off), fd, at_write(o, fd, buf, n, off)) \
	X(ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t buflen), \
	  (fd, buf, n, buflen), chk, read(fd, buf, n)) \
	X(ssize_t, __pread_chk, \
	  (int fd, void *buf, size_t n, off_t off, size_t buflen), \
	  (fd, buf, n, off, buflen), chk, pread(fd, buf, n, off)) \
	X(ssize_t, __pread64_chk, \
	  (int fd, void *buf, size_t n, off64_t off, size_t buflen), \
	  (fd, buf, n, off, buflen), chk, pread64(fd, buf, n, off)) \
	X(ssize_t, readv, (int fd, const struct iovec *iov, int cnt), \
	  (fd, iov, cnt), fd, pos_readv(o, fd, iov, cnt)) \
	X(ssize_t, writev, (int fd, const struct iovec *iov, int cnt), \
	  (fd, iov, cnt), fd, pos_writev(o, fd, iov, cnt, 0)) \
	X(ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off), \
	  (fd, iov, cnt, off), fd, at_readv(o, iov, cnt, off)) \
	X(ssize_t, preadv64, \
	  (int fd, const struct iovec *iov, int cnt, off64_t off), \
	  (fd, iov, cnt, off), fd, at_readv(o, iov, cnt, off)) \
	X(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off), \
	  (fd, iov, cnt, off), fd, at_writev(o, fd, iov, cnt, off, 0)) \
	X(ssize_t, pwritev64, \
	  (int fd, const struct iovec *iov, int cnt, off64_t off), \
	  (fd, iov, cnt, off), fd, at_writev(o, fd, iov, cnt, off, 0)) \
	X(ssize_t, preadv2, \
	  (int fd, const struct iovec *iov, int cnt, off_t off, int flags), \
	  (fd, iov, cnt, off, flags), fd, readv2(o, fd, iov, cnt, off, flags)) \
	X(ssize_t, pwritev2, \
	  (int fd, const struct iovec *iov, int cnt, off_t off, int flags), \
	  (fd, iov, cnt, off, flags), fd, writev2(o, fd, iov, cnt, off, flags)) \
	X(ssize_t, preadv64v2, \
	  (int fd, const struct iovec *iov, int cnt, off64_t off, int flags), \
	  (fd, iov, cnt, off, flags), fd, readv2(o, fd, iov, cnt, off, flags)) \
	X(ssize_t, pwritev64v2, \
	  (int fd, const struct iovec *iov, int cnt, off64_t off, int flags), \
	  (fd, iov, cnt, off, flags), fd, writev2(o, fd, iov, cnt, off, flags)) \
	X(off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence), \
	  fd, do_lseek(o, fd, off, whence)) \
	X(off64_t, lseek64, (int fd, off64_t off, int whence), (fd, off, whence), \
	  fd, do_lseek(o, fd, off, whence))

#define SHIM_SYMS_COPY(X) \
	X(ssize_t, copy_file_range, (int fdin, off64_t *offin, int fdout, \
	  off64_t *offout, size_t len, unsigned flags), \
	  (fdin, offin, fdout, offout, len, flags), own) \
	X(ssize_t, sendfile, (int fdout, int fdin, off_t *off, size_t count), \
	  (fdout, fdin, off, count), or_real, copy_send(fdout, fdin, off, count)) \
	X(ssize_t, sendfile64, (int fdout, int fdin, off64_t *off, size_t count), \
	  (fdout, fdin, off, count), or_real, copy_send(fdout, fdin, off, count)) \
	X(ssize_t, splice, (int fdin, off64_t *offin, int fdout, off64_t *offout, \
	  size_t len, unsigned flags), (fdin, offin, fdout, offout, len, flags), \
	  own) \
	X(long, syscall, (long nr, ...), (nr), own)

#define SHIM_SYMS_META(X) \
	X(int, fsync, (int fd), (fd), fd, sync_fd(o, false)) \
	X(int, fdatasync, (int fd), (fd), fd, sync_fd(o, true)) \
	X(int, sync_file_range, (int fd, off64_t off, off64_t n, unsigned flags), \
	  (fd, off, n, flags), fd, sync_range(o, off, n, flags)) \
	X(int, syncfs, (int fd), (fd), before, sync_cache()) \
	X(void, sync, (void), (), own) \
	X(int, ftruncate, (int fd, off_t len), (fd, len), fd, truncate_fd(o, len)) \
	X(int, ftruncate64, (int fd, off64_t len), (fd, len), \
	  fd, truncate_fd(o, len)) \
	X(int, truncate, (const char *path, off_t len), (path, len), \
	  or_real, truncate_path(path, len)) \
	X(int, truncate64, (const char *path, off64_t len), (path, len), \
	  or_real, truncate_path(path, len)) \
	X(int, fallocate, (int fd, int mode, off_t off, off_t len), \
	  (fd, mode, off, len), fd, fallocate_fd(o, mode, off, len)) \
	X(int, fallocate64, (int fd, int mode, off64_t off, off64_t len), \
	  (fd, mode, off, len), fd, fallocate_fd(o, mode, off, len)) \
	X(int, posix_fallocate, (int fd, off_t off, off_t len), (fd, off, len), \
	  fd, posix_fallocate_fd(o, off, len)) \
	X(int, posix_fallocate64, (int fd, off64_t off, off64_t len), \
	  (fd, off, len), fd, posix_fallocate_fd(o, off, len)) \
	X(int, posix_fadvise, (int fd, off_t off, off_t len, int advice), \
	  (fd, off, len, advice), fd, fadvise_fd(o, off, len, advice)) \
	X(int, posix_fadvise64, (int fd, off64_t off, off64_t len, int advice), \
	  (fd, off, len, advice), fd, fadvise_fd(o, off, len, advice)) \
	X(ssize_t, readahead, (int fd, off64_t off, size_t count), \
	  (fd, off, count), fd, readahead_fd(o, off, count)) \
	X(int, stat, (const char *path, struct stat *st), (path, st), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, stat64, (const char *path, struct stat64 *st), (path, st), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, lstat, (const char *path, struct stat *st), (path, st), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, lstat64, (const char *path, struct stat64 *st), (path, st), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, fstat, (int fd, struct stat *st), (fd, st), \
	  after, patch_fd(fd, (struct stat *)st)) \
	X(int, fstat64, (int fd, struct stat64 *st), (fd, st), \
	  after, patch_fd(fd, (struct stat *)st)) \
	X(int, fstatat, (int dirfd, const char *path, struct stat *st, int flags), \
	  (dirfd, path, st, flags), after, shim_patch_stat((struct stat *)st)) \
	X(int, fstatat64, \
	  (int dirfd, const char *path, struct stat64 *st, int flags), \
	  (dirfd, path, st, flags), after, shim_patch_stat((struct stat *)st)) \
	X(int, statx, (int dirfd, const char *path, int flags, unsigned mask, \
	  struct statx *stx), (dirfd, path, flags, mask, stx), own) \
	X(int, __xstat, (int ver, const char *path, struct stat *st), \
	  (ver, path, st), after, shim_patch_stat((struct stat *)st)) \
	X(int, __xstat64, (int ver, const char *path, struct stat64 *st), \
	  (ver, path, st), after, shim_patch_stat((struct stat *)st)) \
	X(int, __lxstat, (int ver, const char *path, struct stat *st), \
	  (ver, path, st), after, shim_patch_stat((struct stat *)st)) \
	X(int, __lxstat64, (int ver, const char *path, struct stat64 *st), \
	  (ver, path, st), after, shim_patch_stat((struct stat *)st)) \
	X(int, __fxstat, (int ver, int fd, struct stat *st), (ver, fd, st), \
	  after, patch_fd(fd, (struct stat *)st)) \
	X(int, __fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st), \
	  after, patch_fd(fd, (struct stat *)st)) \
	X(int, __fxstatat, (int ver, int dirfd, const char *path, \
	  struct stat *st, int flags), (ver, dirfd, path, st, flags), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, __fxstatat64, (int ver, int dirfd, const char *path, \
	  struct stat64 *st, int flags), (ver, dirfd, path, st, flags), \
	  after, shim_patch_stat((struct stat *)st)) \
	X(int, unlink, (const char *path), (path), \
	  unlink, before_unlink(AT_FDCWD, path, &st)) \
	X(int, unlinkat, (int dirfd, const char *path, int flags), \
	  (dirfd, path, flags), unlink, \
	  !(flags & AT_REMOVEDIR) && before_unlink(dirfd, path, &st)) \
	X(int, remove, (const char *path), (path), \
	  unlink, before_unlink(AT_FDCWD, path, &st)) \
	X(int, rename, (const char *old, const char *new), (old, new), \
	  unlink, before_rename(AT_FDCWD, old, AT_FDCWD, new, 0, &st)) \
	X(int, renameat, (int olddir, const char *old, int newdir, \
	  const char *new), (olddir, old, newdir, new), \
	  unlink, before_rename(olddir, old, newdir, new, 0, &st)) \
	X(int, renameat2, (int olddir, const char *old, int newdir, \
	  const char *new, unsigned flags), (olddir, old, newdir, new, flags), \
	  unlink, before_rename(olddir, old, newdir, new, flags, &st)) \
	X(int, utimensat, (int dirfd, const char *path, \
	  const struct timespec times[2], int flags), (dirfd, path, times, flags), \
	  before, before_times(dirfd, path, flags)) \
	X(int, futimens, (int fd, const struct timespec times[2]), (fd, times), \
	  before, before_times(fd, NULL, 0)) \
	X(int, utimes, (const char *path, const struct timeval tv[2]), \
	  (path, tv), before, before_times(AT_FDCWD, path, 0)) \
	X(int, utime, (const char *path, const struct utimbuf *times), \
	  (path, times), before, before_times(AT_FDCWD, path, 0)) \
	X(int, futimes, (int fd, const struct timeval tv[2]), (fd, tv), \
	  before, before_times(fd, NULL, 0)) \
	X(int, lutimes, (const char *path, const struct timeval tv[2]), \
	  (path, tv), before, before_times(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW)) \
	X(int, futimesat, (int dirfd, const char *path, \
	  const struct timeval tv[2]), (dirfd, path, tv), \
	  before, before_times(dirfd, path, 0))

#define SHIM_SYMS_HANDOFF(X) \
	X(void *, mmap, (void *addr, size_t len, int prot, int flags, int fd, \
	  off_t off), (addr, len, prot, flags, fd, off), \
	  before, map_before(flags, fd)) \
	X(void *, mmap64, (void *addr, size_t len, int prot, int flags, int fd, \
	  off64_t off), (addr, len, prot, flags, fd, off), \
	  before, map_before(flags, fd)) \
	X(int, ioctl, (int fd, unsigned long req, ...), (fd, req, arg), own) \
	X(FILE *, fopen, (const char *path, const char *mode), (path, mode), \
	  stdio, NULL) \
	X(FILE *, fopen64, (const char *path, const char *mode), (path, mode), \
	  stdio, NULL) \
	X(FILE *, freopen, (const char *path, const char *mode, FILE *fp), \
	  (path, mode, fp), stdio, path ? fp : NULL) \
	X(FILE *, freopen64, (const char *path, const char *mode, FILE *fp), \
	  (path, mode, fp), stdio, path ? fp : NULL) \
	X(FILE *, fdopen, (int fd, const char *mode), (fd, mode), own) \
	X(int, fclose, (FILE *fp), (fp), own) \
	X(int, dprintf, (int fd, const char *fmt, ...), (fd, fmt), own) \
	X(int, vdprintf, (int fd, const char *fmt, va_list ap), (fd, fmt, ap), \
	  own) \
	X(void *, dlopen, (const char *file, int mode), (file, mode), own) \
	X(pid_t, fork, (void), (), own) \
	X(pid_t, vfork, (void), (), own) \
	X(int, posix_spawn, (pid_t *pid, const char *path, \
	  const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr, \
	  char *const argv[], char *const envp[]), \
	  (pid, path, fa, attr, argv, envp), before, \
	  before_spawn(false, path, false, envp, fa != NULL)) \
	X(int, posix_spawnp, (pid_t *pid, const char *file, \
	  const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr, \
	  char *const argv[], char *const envp[]), \
	  (pid, file, fa, attr, argv, envp), before, \
	  before_spawn(false, file, true, envp, fa != NULL)) \
	X(int, system, (const char *cmd), (cmd), own) \
	X(FILE *, popen, (const char *cmd, const char *type), (cmd, type), \
	  before, before_spawn(false, "/bin/sh", false, NULL, false)) \
	X(int, pclose, (FILE *fp), (fp), own) \
	X(int, execve, (const char *path, char *const argv[], \
	  char *const envp[]), (path, argv, envp), before, \
	  before_spawn(true, path, false, envp, false)) \
	X(int, execv, (const char *path, char *const argv[]), (path, argv), \
	  before, before_spawn(true, path, false, NULL, false)) \
	X(int, execvp, (const char *file, char *const argv[]), (file, argv), \
	  before, before_spawn(true, file, true, NULL, false)) \
	X(int, execvpe, (const char *file, char *const argv[], \
	  char *const envp[]), (file, argv, envp), before, \
	  before_spawn(true, file, true, envp, false)) \
	X(int, execl, (const char *path, const char *arg, ...), (path, arg), \
	  execl, EXEC_V) \
	X(int, execlp, (const char *path, const char *arg, ...), (path, arg), \
	  execl, EXEC_VP) \
	X(int, execle, (const char *path, const char *arg, ...), (path, arg), \
	  execl, EXEC_VE) \
	X(int, fexecve, (int fd, char *const argv[], char *const envp[]), \
	  (fd, argv, envp), before, before_fexec(fd, NULL, envp)) \
	X(int, execveat, (int dirfd, const char *path, char *const argv[], \
	  char *const envp[], int flags), (dirfd, path, argv, envp, flags), \
	  before, before_fexec(dirfd, path, envp)) \
	X(void, _exit, (int status), (status), exit) \
	X(void, _Exit, (int status), (status), exit) \
	X(int, setuid, (uid_t uid), (uid), before, shim_leave_cache()) \
	X(int, setgid, (gid_t gid), (gid), before, shim_leave_cache()) \
	X(int, seteuid, (uid_t uid), (uid), before, shim_leave_cache()) \
	X(int, setegid, (gid_t gid), (gid), before, shim_leave_cache()) \
	X(int, setreuid, (uid_t r, uid_t e), (r, e), before, shim_leave_cache()) \
	X(int, setregid, (gid_t r, gid_t e), (r, e), before, shim_leave_cache()) \
	X(int, setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s), before, \
	  shim_leave_cache()) \
	X(int, setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s), before, \
	  shim_leave_cache()) \
	X(int, setgroups, (size_t n, const gid_t *list), (n, list), before, \
	  shim_leave_cache()) \
	X(int, capset, (void *hdr, void *data), (hdr, data), before, \
	  shim_leave_cache())

#define SHIM_SYMS(X) \
	SHIM_SYMS_OPEN(X) SHIM_SYMS_RW(X) SHIM_SYMS_COPY(X) SHIM_SYMS_META(X) \
	SHIM_SYMS_HANDOFF(X)

#endif /* PC_SHIM_SYMS_H */
