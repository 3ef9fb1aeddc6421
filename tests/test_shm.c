/*
 * test_shm.c - regions shared between processes (src/shm.c).
 *
 * What is checked, each across real processes (fork, and exec of this
 * program for the joins after exec):
 *   - a forked child uses the parent's region: objects it allocates and
 *     fills are the parent's to read and free, at the same addresses;
 *   - a program exec'd with the region's descriptor, or knowing its name
 *     only, maps it at the same address and finds the same objects;
 *   - attach refuses what it must: the same region twice in a process
 *     (-EBUSY), the region's address taken by something else (-EEXIST),
 *     a file that is not a region or a region of another layout number
 *     (-EPROTO), a region whose file others
 *     may open (-EACCES), and, run as root, a process of another uid with
 *     the region's descriptor in hand (-EACCES: the owner is checked, not
 *     only the mode);
 *   - a process killed inside the allocator's lock hangs no one: the next
 *     one takes the lock, and the region stays sound; a lock made with the
 *     region's broken flag records the death;
 *   - a region whose name a newer region took removes only its own name;
 *   - a named create that fails after making its temporary file (here
 *     ftruncate over RLIMIT_FSIZE) leaves no file in /dev/shm;
 *   - 3 processes x 2 threads allocate and free objects of random sizes:
 *     no object is handed to two owners (each is signed by its owner and
 *     checked before it is freed).
 * No test waits on time: children say where they are through pipes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm.h"
#include "util.h"

#define MIB (1ull << 20)
#define LAYOUT 0x746573745f73686dull	/* this test's regions' layout */

static char self_exe[4096];

struct rec {
	uint64_t magic;
	uint64_t value;
	struct rec *next;
};

#define REC_MAGIC 0x5245435245435245ull

/* ------------------------------------------------------------------ */
/* Children run by exec: argv[1] says what to do (see main).            */

/* Attach (by fd or name), check the record chain, add one, exit 0. */
static int exec_child(const char *how, const char *arg, uint64_t addr)
{
	struct pc_shm *s;
	int rc, sfd;

	if (strcmp(how, "--attach-fd") == 0)
		rc = pc__shm_attach_fd(&s, &sfd, atoi(arg), LAYOUT);
	else
		rc = pc__shm_attach(&s, &sfd, arg, LAYOUT);
	if (rc) {
		fprintf(stderr, "attach: %s\n", strerror(-rc));
		return 10;
	}
	if ((uint64_t)(uintptr_t)pc__shm_base(s) != addr)
		return 11;
	struct rec *r = atomic_load(pc__shm_root(s, 0));

	if (!r || r->magic != REC_MAGIC || r->value != 42)
		return 12;
	struct rec *n = pc__shm_alloc(s, sizeof(*n));

	if (!n)
		return 13;
	n->magic = REC_MAGIC;
	n->value = 43;
	r->next = n;
	pc__shm_detach(s, sfd);
	return 0;
}

static int run_exec_child(const char *how, const char *arg, void *base)
{
	char addr[32];
	pid_t pid;
	int status;

	snprintf(addr, sizeof(addr), "%llu",
		 (unsigned long long)(uintptr_t)base);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(self_exe, self_exe, how, arg, addr, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* ------------------------------------------------------------------ */

static void test_fork_shares(void **state)
{
	struct pc_shm *s;
	int sfd;
	struct rec *r;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(pc__shm_create(&s, &sfd, NULL, 64 * MIB, LAYOUT), 0);
	assert_true(sfd >= 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rec *prev = NULL;

		for (int i = 0; i < 100; i++) {
			struct rec *x = pc__shm_alloc(s, sizeof(*x));

			if (!x || !pc__shm_contains(s, x) ||
			    ((uintptr_t)x & 63) || x->magic)
				_exit(1);
			x->magic = REC_MAGIC;
			x->value = (uint64_t)i;
			x->next = prev;
			prev = x;
		}
		atomic_store(pc__shm_root(s, 1), prev);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	r = atomic_load(pc__shm_root(s, 1));
	for (int i = 99; i >= 0; i--) {
		struct rec *next;

		assert_non_null(r);
		assert_true(r->magic == REC_MAGIC);
		assert_int_equal(r->value, i);
		next = r->next;
		pc__shm_free(s, r, sizeof(*r));
		r = next;
	}
	assert_null(r);
	/* Freed objects come back first, zeroed. */
	r = pc__shm_alloc(s, sizeof(*r));
	assert_non_null(r);
	assert_true(r->magic == 0 && r->next == NULL);

	void *big = pc__shm_reserve(s, 5 * MIB);

	assert_non_null(big);
	assert_int_equal((uintptr_t)big % (2 * MIB), 0);
	assert_true(pc__shm_contains(s, (char *)big + 6 * MIB - 1));
	assert_null(pc__shm_alloc(s, 2 * MIB));	/* over the largest class */
	assert_null(pc__shm_reserve(s, 1ull << 40));	/* over the region */
	pc__shm_detach(s, sfd);
}

static void test_join_after_exec(void **state)
{
	char name[64], fdarg[16];
	struct pc_shm *s;
	struct rec *r;
	int fd, sfd, tfd;

	(void)state;
	snprintf(name, sizeof(name), "test-%d", (int)getpid());
	pc__shm_unlink(name);
	assert_int_equal(pc__shm_create(&s, &sfd, name, 16 * MIB, LAYOUT), 0);
	{
		struct pc_shm *again;

		assert_int_equal(pc__shm_create(&again, &tfd, name, 16 * MIB,
						LAYOUT),
				 -EEXIST);
	}
	r = pc__shm_alloc(s, sizeof(*r));
	r->magic = REC_MAGIC;
	r->value = 42;
	atomic_store(pc__shm_root(s, 0), r);

	/* By name. */
	assert_int_equal(run_exec_child("--attach-name", name,
					pc__shm_base(s)), 0);
	assert_non_null(r->next);
	assert_int_equal(r->next->value, 43);
	r->next = NULL;

	/* By a descriptor inherited across exec. */
	fd = fcntl(sfd, F_DUPFD, 0);		/* no O_CLOEXEC */
	assert_true(fd >= 0);
	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	assert_int_equal(run_exec_child("--attach-fd", fdarg,
					pc__shm_base(s)), 0);
	close(fd);
	assert_non_null(r->next);
	assert_int_equal(r->next->value, 43);

	assert_int_equal(pc__shm_unlink(name), 0);
	assert_int_equal(pc__shm_unlink(name), -ENOENT);
	pc__shm_detach(s, sfd);
	{
		struct pc_shm *t;

		assert_int_equal(pc__shm_attach(&t, &tfd, name, LAYOUT),
				 -ENOENT);
		assert_int_equal(pc__shm_attach(&t, &tfd, "../etc/passwd",
						LAYOUT), -EINVAL);
		assert_int_equal(pc__shm_create(&t, &tfd, "a/b", MIB, LAYOUT),
				 -EINVAL);
		assert_int_equal(pc__shm_create(&t, &tfd, NULL, 0, LAYOUT),
				 -EINVAL);
	}
}

static void test_attach_refusals(void **state)
{
	struct pc_shm *s, *t;
	int fd, status, sfd, tfd;
	pid_t pid;

	(void)state;
	assert_int_equal(pc__shm_create(&s, &sfd, NULL, 8 * MIB, LAYOUT), 0);
	/* Mapped here already. */
	assert_int_equal(pc__shm_attach_fd(&t, &tfd, sfd, LAYOUT), -EBUSY);
	/* Another layout: refused before anything is mapped. */
	assert_int_equal(pc__shm_attach_fd(&t, &tfd, sfd, LAYOUT ^ 1), -EPROTO);
	assert_int_equal(tfd, -1);

	/* Not a region: a plain file, an empty memfd. */
	fd = open(tu_path("plain"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8 * MIB), 0);
	assert_int_equal(pc__shm_attach_fd(&t, &tfd, fd, LAYOUT), -EPROTO);
	close(fd);

	/* The address taken by something else in the attaching process. */
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *base = pc__shm_base(s);
		int dup = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
		size_t size = pc__shm_size(s);

		pc__shm_detach(s, sfd);
		if (mmap(base, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0) != base)
			_exit(2);
		if (pc__shm_attach_fd(&t, &tfd, dup, LAYOUT) != -EEXIST)
			_exit(3);
		/* Once the address is free again, it attaches. */
		munmap(base, size);
		if (pc__shm_attach_fd(&t, &tfd, dup, LAYOUT) != 0)
			_exit(4);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* A region others may open is refused. */
	fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
	pc__shm_detach(s, sfd);
	assert_int_equal(fchmod(fd, 0640), 0);
	assert_int_equal(pc__shm_attach_fd(&t, &tfd, fd, LAYOUT), -EACCES);
	assert_int_equal(fchmod(fd, 0600), 0);
	assert_int_equal(pc__shm_attach_fd(&t, &tfd, fd, LAYOUT), 0);
	pc__shm_detach(t, tfd);

	/* Another uid holding the descriptor: refused on the owner. */
	if (geteuid() == 0) {
		fflush(stdout);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				_exit(5);
			_exit(pc__shm_attach_fd(&t, &tfd, fd, LAYOUT) ==
			      -EACCES ? 0 : 6);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		printf("not root: the other-uid case is not run\n");
	}
	close(fd);
}

/* A child takes @l, says so on @ready, and waits to be killed. */
static pid_t hold_and_wait(struct pc_shm *s, struct pc_lock *l)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (l)
			pc__lock(l);
		else
			pc__shm_test_hold_lock(s);
		(void)!write(p[1], "x", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void test_holder_killed(void **state)
{
	struct pc_shm *s;
	int sfd;
	struct pc_lock *l;
	void *p;

	(void)state;
	assert_int_equal(pc__shm_create(&s, &sfd, NULL, 8 * MIB, LAYOUT), 0);
	/* The allocator's lock: nothing to repair, the region stays whole. */
	tu_kill_wait(hold_and_wait(s, NULL));
	p = pc__shm_alloc(s, 100);
	assert_non_null(p);
	pc__shm_free(s, p, 100);
	assert_false(pc__shm_broken(s));

	/* A lock guarding what may be half-done: the region is broken. */
	l = pc__shm_alloc(s, sizeof(*l));
	pc__lock_init_shared(l, PC_RANK_TREE, pc__shm_broken_flag(s));
	tu_kill_wait(hold_and_wait(s, l));
	assert_false(pc__shm_broken(s));	/* seen at the next lock */
	pc__lock(l);
	assert_true(pc__shm_broken(s));
	pc__unlock(l);
	assert_true(pc__trylock(l));		/* consistent again */
	pc__unlock(l);
	pc__shm_detach(s, sfd);
}

/* ------------------------------------------------------------------ */
/* Stress: 3 processes x 2 threads.                                     */

#define LIVE 64
#define OPS 20000

struct stress {
	struct pc_shm *s;
	uint64_t seed;
	unsigned owner;
};

static void sign(uint64_t *p, size_t words, uint64_t owner, uint64_t seq)
{
	for (size_t i = 0; i < words; i++)
		p[i] = owner << 48 ^ seq << 8 ^ i;
}

static bool signed_by(const uint64_t *p, size_t words, uint64_t owner,
		      uint64_t seq)
{
	for (size_t i = 0; i < words; i++)
		if (p[i] != (owner << 48 ^ seq << 8 ^ i))
			return false;
	return true;
}

static void *stress_thread(void *arg)
{
	struct stress *st = arg;
	uint64_t rs = st->seed ^ (st->owner * 0x9e3779b97f4a7c15ull);
	struct {
		uint64_t *p;
		size_t size;
		uint64_t seq;
	} live[LIVE] = { { 0 } };

	for (uint64_t op = 1; op <= OPS; op++) {
		unsigned i = (unsigned)(tu_rand(&rs) % LIVE);

		if (live[i].p) {
			assert_true(signed_by(live[i].p, live[i].size / 8,
					      st->owner, live[i].seq));
			pc__shm_free(st->s, live[i].p, live[i].size);
			live[i].p = NULL;
		} else {
			size_t size = 8 + tu_rand(&rs) % 8192;

			size &= ~(size_t)7;
			live[i].p = pc__shm_alloc(st->s, size);
			assert_non_null(live[i].p);
			live[i].size = size;
			live[i].seq = op;
			sign(live[i].p, size / 8, st->owner, op);
		}
	}
	for (unsigned i = 0; i < LIVE; i++)
		if (live[i].p) {
			assert_true(signed_by(live[i].p, live[i].size / 8,
					      st->owner, live[i].seq));
			pc__shm_free(st->s, live[i].p, live[i].size);
		}
	return NULL;
}

static void stress_process(struct pc_shm *s, uint64_t seed, unsigned proc)
{
	struct stress st[2];
	pthread_t t[2];

	for (unsigned i = 0; i < 2; i++) {
		st[i].s = s;
		st[i].seed = seed;
		st[i].owner = proc * 2 + i + 1;
		assert_int_equal(pthread_create(&t[i], NULL, stress_thread,
						&st[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++)
		tu_join(t[i]);
}

static uint64_t stress_seed;

static void stress_child(unsigned i, void *s)
{
	stress_process(s, stress_seed, i);
}

static void test_stress(void **state)
{
	uint64_t seed = tu_seed("shm stress");
	struct pc_shm *s;
	int sfd;
	size_t used;

	(void)state;
	assert_int_equal(pc__shm_create(&s, &sfd, NULL, 256 * MIB, LAYOUT), 0);
	stress_seed = seed;
	tu_in_children(3, stress_child, s);
	/* Everything was freed: a second round reuses it, needing no more
	 * chunks than there are classes times processes' threads at once. */
	used = pc__shm_used(s);
	stress_process(s, seed + 1, 0);
	assert_true(pc__shm_used(s) <= used + 16 * 2 * MIB);
	pc__shm_detach(s, sfd);
}

/*
 * A region whose name was taken from it (given up, a new region made
 * under the name) removes only its own name: the new one's stays.
 */
static void test_unlink_own(void **state)
{
	struct pc_shm *old, *young;
	int ofd, yfd;
	char name[64], path[128];

	(void)state;
	snprintf(name, sizeof(name), "test-own-%d", (int)getpid());
	snprintf(path, sizeof(path), "/dev/shm/pagecache-%s", name);
	assert_int_equal(pc__shm_create(&old, &ofd, name, 4 * MIB, LAYOUT), 0);
	assert_int_equal(pc__shm_unlink(name), 0);	/* given up */
	assert_int_equal(pc__shm_create(&young, &yfd, name, 4 * MIB, LAYOUT),
			 0);
	assert_int_equal(pc__shm_unlink_own(old), -ESTALE);
	assert_int_equal(access(path, F_OK), 0);	/* the young one's */
	assert_int_equal(pc__shm_unlink_own(young), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(pc__shm_unlink_own(young), -ENOENT);
	pc__shm_detach(old, ofd);
	pc__shm_detach(young, yfd);
}

/* Is there a file in /dev/shm whose name starts with @prefix? */
static bool shm_file_with(const char *prefix)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			found = true;
	closedir(d);
	return found;
}

/* A child: a named create that fails after its temporary file exists
 * (ftruncate over RLIMIT_FSIZE: -EFBIG) leaves no file behind. */
static void failed_create(void *arg)
{
	const char *name = arg;
	struct rlimit rl = { MIB, MIB };
	struct pc_shm *s;
	int fd;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
	assert_int_equal(pc__shm_create(&s, &fd, name, 16 * MIB, LAYOUT),
			 -EFBIG);
	assert_null(s);
	assert_int_equal(fd, -1);
}

static void test_failed_create(void **state)
{
	char name[64], prefix[96];

	(void)state;
	snprintf(name, sizeof(name), "test-fail-%d", (int)getpid());
	snprintf(prefix, sizeof(prefix), "pagecache-%s", name);
	tu_in_child(failed_create, name);
	assert_false(shm_file_with(prefix));	/* nor its .new- name */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_shares),
		cmocka_unit_test(test_join_after_exec),
		cmocka_unit_test(test_attach_refusals),
		cmocka_unit_test(test_holder_killed),
		cmocka_unit_test(test_stress),
		cmocka_unit_test(test_unlink_own),
		cmocka_unit_test(test_failed_create),
	};
	ssize_t n;

	if (argc == 4 && strncmp(argv[1], "--attach-", 9) == 0)
		return exec_child(argv[1], argv[2],
				  strtoull(argv[3], NULL, 10));
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
