#!/usr/bin/env python3
"""tests/mp_coherence.py - programs of many processes sharing files.

Each case is what real programs do with files between processes, and what
the kernel's page cache, one for all processes, makes work: appends from
several writers, a counter under fcntl locks, records updated under
byte-range locks, two sqlite3 processes on one database (rollback journal
and WAL), a multiprocessing pool passing files, an open unlinked file read
by a child, the data of a writer killed with SIGKILL read by a sibling,
and PostgreSQL: a server of many processes under pgbench's TPC-B-like
load, its bank's sums and pg_amcheck checked after a restart.

Every process a case starts is started through PREFIX (say
"build/test/pagecache exec --memory 32M --"), each separately, as two
programs started side by side are; with no prefix the case runs plainly,
and must pass: that is the reference.

    tests/mp_coherence.py [--prefix "CMD ..."] [--dir DIR]
                          [--pg-seconds N] [--pg-scale N] [CASE ...]

--pg-seconds and --pg-scale are pgbench's -T and -s in the postgres case
(20 and 8: `--pg-seconds 2 --pg-scale 1` is a quick run).  Run as root,
the postgres case runs PostgreSQL's programs as the postgres user
(setpriv, before the prefix: the cache is the postgres user's), so the
postgres user must reach DIR (the default, /tmp, it does).

Prints "ok CASE" or "FAIL CASE: what was wrong" for each, then
"N passed, N failed"; the exit status is the number of failures (at most
100).  Deterministic: no case depends on timing, only on what the
processes leave in the files.
"""
import argparse
import glob
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PY = sys.executable


def run(prefix, argv, **kw):
    return subprocess.run(prefix + argv, **kw)


def start(prefix, argv, **kw):
    return subprocess.Popen(prefix + argv, **kw)


GO = "import sys; sys.stdin.buffer.read(1)\n"


def worker(prefix, code, *args, **kw):
    """A python worker process, started through the prefix; it waits for
    go() before it does its work, so that the workers of a case run at
    the same time however long each takes to start."""
    kw.setdefault("stdin", subprocess.PIPE)
    return start(prefix, [PY, "-c", GO + code] + [str(a) for a in args],
                 **kw)


def go(procs):
    for p in procs:
        p.stdin.write(b"g")
        p.stdin.close()


def wait_all(procs):
    if procs and procs[0].stdin and not procs[0].stdin.closed:
        go(procs)
    bad = [p.args for p in procs if p.wait() != 0]
    return "" if not bad else "a worker failed: %r" % (bad[0][-3:],)


# ---------------------------------------------------------------------------

APPEND = r"""
import os, sys
path, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for i in range(n):
    line = ("%s %05d " % (me, i)).ljust(63, "x") + "\n"
    assert os.write(fd, line.encode()) == 64
os.close(fd)
"""


def case_append(prefix, d):
    """4 processes append 200 records each with O_APPEND."""
    path = os.path.join(d, "log")
    procs = [worker(prefix, APPEND, path, "w%d" % w, 200) for w in range(4)]
    err = wait_all(procs)
    if err:
        return err
    lines = open(path, "rb").read().split(b"\n")[:-1]
    whole = [l for l in lines if len(l) == 63 and l.endswith(b"x")]
    got = {tuple(l.split()[:2]) for l in whole}
    want = {(b"w%d" % w, b"%05d" % i) for w in range(4) for i in range(200)}
    if len(lines) != 800 or len(whole) != 800 or got != want:
        return "%d lines, %d whole, %d of 800 records" % (
            len(lines), len(whole), len(got & want))
    return ""


COUNTER = r"""
import fcntl, os, sys
path, n, reopen = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
fd = -1
for i in range(n):
    if fd < 0:
        fd = os.open(path, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    v = int(os.pread(fd, 16, 0).decode() or "0")
    os.pwrite(fd, ("%15d\n" % (v + 1)).encode(), 0)
    if reopen:
        os.fsync(fd)
    fcntl.lockf(fd, fcntl.LOCK_UN)
    if reopen:
        os.close(fd)
        fd = -1
"""


def counter(prefix, d, reopen, n):
    path = os.path.join(d, "counter")
    with open(path, "w") as f:
        f.write("%15d\n" % 0)
    procs = [worker(prefix, COUNTER, path, n, "1" if reopen else "0")
             for _ in range(2)]
    err = wait_all(procs)
    if err:
        return err
    v = int(open(path).read())
    return "" if v == 2 * n else "counter %d, want %d" % (v, 2 * n)


def case_counter_open(prefix, d):
    """2 x 1000 read-modify-writes under fcntl locks, the file kept open."""
    return counter(prefix, d, False, 1000)


def case_counter_reopen(prefix, d):
    """2 x 100: open, lock, update, fsync, unlock, close each time."""
    return counter(prefix, d, True, 100)


RECORD = r"""
import fcntl, os, sys
path, me, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
for i in range(n):
    fcntl.lockf(fd, fcntl.LOCK_EX, 16, me * 16)
    v = int(os.pread(fd, 16, me * 16).decode())
    os.pwrite(fd, ("%15d\n" % (v + 1)).encode(), me * 16)
    fcntl.lockf(fd, fcntl.LOCK_UN, 16, me * 16)
os.close(fd)
"""


def case_records(prefix, d):
    """2 processes x 2000 updates of their own 16-byte record of one page."""
    path = os.path.join(d, "records")
    with open(path, "w") as f:
        f.write(("%15d\n" % 0) * 2)
    procs = [worker(prefix, RECORD, path, me, 2000) for me in range(2)]
    err = wait_all(procs)
    if err:
        return err
    vals = [int(x) for x in open(path).read().split()]
    return "" if vals == [2000, 2000] else "records %r, want [2000, 2000]" % vals


SQL_LOOP = "BEGIN IMMEDIATE; UPDATE c SET n = n + 1; COMMIT;\n"


def sqlite_setup(prefix, db, wal):
    mode = "PRAGMA journal_mode=WAL;" if wal else ""
    r = run(prefix, ["sqlite3", db, mode + "CREATE TABLE c(n); "
                     "INSERT INTO c VALUES(0);"], capture_output=True)
    return "" if r.returncode == 0 else "setup: %r" % r.stderr[-200:]


def sqlite_check(prefix, db, want):
    r = run(prefix, ["sqlite3", db, "SELECT n FROM c; PRAGMA integrity_check;"],
            capture_output=True, text=True)
    out = r.stdout.split()
    if r.returncode != 0 or out != [str(want), "ok"]:
        return "count and integrity_check %r (stderr %r), want [%d, ok]" % (
            out[:4], r.stderr[-200:], want)
    return ""


def sqlite_two(prefix, d, wal):
    db = os.path.join(d, "c.db")
    err = sqlite_setup(prefix, db, wal)
    if err:
        return err
    script = ".timeout 20000\n" + SQL_LOOP * 200
    procs = [start(prefix, ["sqlite3", db], stdin=subprocess.PIPE,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(2)]
    errs = [p.communicate(script.encode())[1] for p in procs]
    if any(p.returncode for p in procs) or any(errs):
        return "sqlite3 said %r" % (b"".join(errs)[-200:],)
    return sqlite_check(prefix, db, 400)


def case_sqlite_journal(prefix, d):
    """2 sqlite3 processes x 200 increments, rollback journal."""
    return sqlite_two(prefix, d, False)


def case_sqlite_wal(prefix, d):
    """2 sqlite3 processes x 200 increments, WAL."""
    return sqlite_two(prefix, d, True)


LOOP = r"""
import subprocess, sys
db, n = sys.argv[1], int(sys.argv[2])
prefix = sys.argv[3:]
for i in range(n):
    r = subprocess.run(prefix + ["sqlite3", "-cmd", ".timeout 20000", db,
                                 "BEGIN IMMEDIATE; UPDATE c SET n = n + 1; COMMIT;"])
    if r.returncode:
        sys.exit(1)
"""


def case_sqlite_per_tx(prefix, d):
    """2 loops of 100 transactions, each its own sqlite3 process."""
    db = os.path.join(d, "c.db")
    err = sqlite_setup(prefix, db, False)
    if err:
        return err
    procs = [subprocess.Popen([PY, "-c", LOOP, db, "100"] + prefix)
             for _ in range(2)]
    err = wait_all(procs)
    return err or sqlite_check(prefix, db, 200)


POOL = r"""
import multiprocessing, os, sys
d = sys.argv[1]

def work(i):
    data = open(os.path.join(d, "in%d" % i), "rb").read()
    with open(os.path.join(d, "out%d" % i), "wb") as f:
        f.write(data[::-1])
    return len(data)

if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    with multiprocessing.Pool(2) as pool:      # forked before the files
        for rnd in range(3):
            for i in range(8):
                with open(os.path.join(d, "in%d" % i), "wb") as f:
                    f.write(os.urandom(3000 + 1000 * i + rnd))
            sizes = pool.map(work, range(8))
            for i in range(8):
                a = open(os.path.join(d, "in%d" % i), "rb").read()
                b = open(os.path.join(d, "out%d" % i), "rb").read()
                if sizes[i] != len(a) or b != a[::-1]:
                    print("round %d file %d: %d/%d bytes" % (rnd, i, sizes[i], len(a)))
                    sys.exit(1)
"""


def case_pool(prefix, d):
    """A multiprocessing pool, forked once, exchanging files."""
    r = run(prefix, [PY, "-c", POOL, d], capture_output=True, text=True)
    return "" if r.returncode == 0 else (r.stdout + r.stderr)[-300:]


UNLINKED = r"""
import os, subprocess, sys
d = sys.argv[1]
path = os.path.join(d, "tmp")
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
data = b"here-document line\n" * 500
os.write(fd, data)
os.unlink(path)
os.lseek(fd, 0, 0)
pid = os.fork()
if pid == 0:
    got = os.pread(fd, len(data) + 1, 0)
    os._exit(0 if got == data else 1)
if os.waitpid(pid, 0)[1] != 0:
    print("a forked child read otherwise"); sys.exit(1)
r = subprocess.run([sys.executable, "-c",
                    "import os,sys; sys.stdout.buffer.write(os.pread(%d, 1 << 20, 0))" % fd],
                   pass_fds=[fd], capture_output=True)
if r.stdout != data:
    print("an exec'd child read %d bytes" % len(r.stdout)); sys.exit(1)
os.lseek(fd, 0, 0)
r = subprocess.run(["cat"], stdin=fd, capture_output=True)
if r.stdout != data:
    print("cat on fd 0 read %d bytes" % len(r.stdout)); sys.exit(1)
"""


def case_unlinked(prefix, d):
    """An open, unlinked file read by a forked child, an exec'd one, fd 0."""
    r = run(prefix, [PY, "-c", UNLINKED, d], capture_output=True, text=True)
    return "" if r.returncode == 0 else (r.stdout + r.stderr)[-300:]


KILLED = r"""
import os, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(256):
    os.write(fd, bytes([i]) * 4096)
print("written", flush=True)
while True:
    time.sleep(60)
"""


def case_killed(prefix, d):
    """A writer killed with SIGKILL: a sibling reads what it wrote."""
    path = os.path.join(d, "killed")
    p = worker(prefix, KILLED, path, stdout=subprocess.PIPE)
    go([p])
    line = p.stdout.readline().decode()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    if line.strip() != "written":
        return "the writer said %r" % line
    r = run(prefix, [PY, "-c", "import sys; sys.stdout.buffer.write("
                     "open(sys.argv[1], 'rb').read())", path],
            capture_output=True)
    want = b"".join(bytes([i]) * 4096 for i in range(256))
    if r.stdout != want:
        return "the sibling read %d of %d bytes right" % (
            sum(1 for a, b in zip(r.stdout, want) if a == b), len(want))
    return ""


# ---------------------------------------------------------------------------
# PostgreSQL: a server of many processes (postmaster, a backend per client,
# checkpointer, background and WAL writers) sharing its data files.

PG = {"seconds": 20, "scale": 8}        # pgbench -T and -s (the options)
PG_CONF = """
shared_buffers = 256kB          # pages go through the file layer
listen_addresses = ''           # no TCP: the socket below only
unix_socket_directories = '%s'
"""
PG_SUMS = ("SELECT (SELECT count(*) FROM pgbench_history), "
           "(SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), "
           "(SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), "
           "(SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), "
           "(SELECT coalesce(sum(delta), 0) FROM pgbench_history)")


def pg_bindir():
    """Debian's PostgreSQL programs: /usr/lib/postgresql/NN/bin, the
    newest NN; else wherever postgres is on PATH; None if nowhere."""
    found = [os.path.dirname(p)
             for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")]
    found.sort(key=lambda b: [int(x) for x in
                              os.path.basename(os.path.dirname(b)).split(".")
                              if x.isdigit()])
    if found:
        return found[-1]
    p = shutil.which("postgres")
    return os.path.dirname(p) if p else None


def tail(text, n=300):
    text = text.decode(errors="replace") if isinstance(text, bytes) else text
    return " | ".join(l for l in text.strip().splitlines()[-4:])[-n:]


class Postgres:
    """The server and its clients, each process through the prefix (after
    setpriv to the postgres user when run as root), on a unix socket in
    the case's directory."""

    def __init__(self, prefix, d, bindir):
        self.d, self.bindir = d, bindir
        self.data = os.path.join(d, "data")
        self.log = os.path.join(d, "server.log")
        self.server = None
        self.user = []
        if os.getuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(d, pw.pw_uid, pw.pw_gid)
            self.user = ["setpriv", "--reuid=postgres", "--regid=postgres",
                         "--init-groups", "--"]
        # the programs run in the case's directory: a relative prefix
        # ("build/test/pagecache exec ...") made absolute
        if prefix and "/" in prefix[0]:
            prefix = [os.path.abspath(prefix[0])] + prefix[1:]
        self.prefix = self.user + prefix
        # HOME: the user's own may be root's, which postgres cannot read
        self.env = dict(os.environ, PGHOST=d, PGPORT="5432",
                        PGDATABASE="postgres", HOME=d)

    def run(self, prog, *args, timeout=600):
        return run(self.prefix, [os.path.join(self.bindir, prog)] + list(args),
                   capture_output=True, text=True, env=self.env, cwd=self.d,
                   timeout=timeout)

    def start(self):
        log = open(self.log, "ab")
        self.server = start(self.prefix, [os.path.join(self.bindir, "postgres"),
                                          "-D", self.data],
                            stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, env=self.env, cwd=self.d)
        log.close()
        # ready when it answers on its socket (the bound is for a server
        # that never does, not a timing the case depends on)
        for _ in range(1200):
            if self.server.poll() is not None:
                return "postgres exited with %d: %s" % (
                    self.server.returncode, tail(open(self.log, "rb").read()))
            if self.run("pg_isready", "-q", timeout=60).returncode == 0:
                return ""
            time.sleep(0.1)
        return "postgres did not accept connections in 120 s"

    def stop(self):
        """A fast shutdown (SIGINT: the pid is the postmaster's, setpriv
        and pagecache exec exec it); "" or what went wrong."""
        p, self.server = self.server, None
        if p is None:
            return ""
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return "postgres did not stop in 120 s"
        return "" if rc == 0 else "postgres exited with %d at its stop: %s" % (
            rc, tail(open(self.log, "rb").read()))


def pg_case(pg):
    r = pg.run("initdb", "-k", "-A", "trust", "-D", pg.data)
    if r.returncode:
        return "initdb -k: %s" % tail(r.stdout + r.stderr)
    with open(os.path.join(pg.data, "postgresql.conf"), "a") as f:
        f.write(PG_CONF % pg.d)
    err = pg.start()
    if err:
        return err
    r = pg.run("pgbench", "-i", "-s", str(PG["scale"]))
    if r.returncode:
        return "pgbench -i -s %d: %s" % (PG["scale"], tail(r.stderr))
    r = pg.run("pgbench", "-c", "4", "-j", "2", "-T", str(PG["seconds"]),
               timeout=600 + 2 * PG["seconds"])
    if r.returncode:
        return "pgbench -c 4 -j 2 -T %d: %s" % (PG["seconds"],
                                                tail(r.stderr + r.stdout))
    err = pg.stop() or pg.start()
    if err:
        return "restart: " + err
    r = pg.run("psql", "-X", "-At", "-F", " ", "-c", PG_SUMS)
    got = r.stdout.split()
    if r.returncode or len(got) != 5:
        return "the sums: %s" % tail(r.stderr + r.stdout)
    n, sums = int(got[0]), [int(x) for x in got[1:]]
    if n == 0 or len(set(sums)) != 1:
        return ("%d transactions: accounts %d, tellers %d, branches %d, "
                "history %d: not all equal" % tuple([n] + sums))
    r = pg.run("pg_amcheck", "--install-missing", "--heapallindexed",
               "postgres")
    if r.returncode or r.stdout.strip():
        return "pg_amcheck --heapallindexed (exit %d): %s" % (
            r.returncode, tail(r.stdout + r.stderr))
    return ""


def case_postgres(prefix, d):
    """PostgreSQL (initdb -k, shared_buffers 256kB): pgbench -i, a
    TPC-B-like run of 4 clients, a restart; the bank's sums and
    pg_amcheck --heapallindexed."""
    bindir = pg_bindir()
    if not bindir:
        return "postgres is not installed (scripts/deps.sh installs it)"
    pg = Postgres(prefix, d, bindir)
    try:
        err = pg_case(pg)
    finally:
        stopped = pg.stop()
    return err or stopped


CASES = [(n[5:], f) for n, f in sorted(globals().items())
         if n.startswith("case_")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", default="",
                    help="command that starts each process, e.g. "
                    "'pagecache exec --memory 32M --'")
    ap.add_argument("--dir", default=None, help="scratch directory")
    ap.add_argument("--pg-seconds", type=int, default=PG["seconds"],
                    help="postgres: pgbench -T (default %(default)s)")
    ap.add_argument("--pg-scale", type=int, default=PG["scale"],
                    help="postgres: pgbench -i -s (default %(default)s)")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    prefix = shlex.split(a.prefix)
    PG.update(seconds=a.pg_seconds, scale=a.pg_scale)
    names = [n for n, _ in CASES]
    for c in a.cases:
        if c not in names:
            ap.error("no case %r (cases: %s)" % (c, ", ".join(names)))
    passed = failed = 0
    for name, fn in CASES:
        if a.cases and name not in a.cases:
            continue
        with tempfile.TemporaryDirectory(dir=a.dir) as d:
            try:
                err = fn(prefix, d)
            except Exception as e:       # a case that crashed failed
                err = "%s: %s" % (type(e).__name__, e)
        if err:
            failed += 1
            print("FAIL %s: %s" % (name, err), flush=True)
        else:
            passed += 1
            print("ok   %s" % name, flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
