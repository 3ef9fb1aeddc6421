#!/usr/bin/env bash
# tests/test_exec.sh BUILD_DIR - real programs under `pagecache exec`.
#
# Each program runs twice, plain and under `pagecache exec --memory 4M --cache "texec-$$"`
# (files four times the budget, 16 MiB), and what it leaves must be the
# same: files byte for byte, query results, archive listings with times.
#   1. the command: bad options and keys exit 2, a missing program 127,
#      one not executable 126; exit status, signals, pid and LD_PRELOAD
#      (appended) are the program's;
#   2. coreutils and friends: cp, cat, dd, sha256sum, sort, tar (create,
#      extract with times); the shared cache's memory within its budget
#      plus 10% while cat reads four times the budget;
#   3. corner programs (tests/preload_helper.c): a file mmap'd after it was
#      written, writes in both processes after a fork, fds at and past
#      RLIMIT_NOFILE, a change of credentials (the process leaves a shared
#      cache first: its writes on the disk, no region mapped after);
#      descriptions shared by fork, exec, system, popen and posix_spawn:
#      another process of the cache reads what a process wrote through a
#      descriptor it had before a fork (ofd), a parent and its child take
#      turns and write at once on one description (interleave), an exec'd
#      image reads and writes on at the inherited offset (exec), shell
#      commands write and read the descriptors they inherit (spawn), a
#      child killed with an inherited description (killed): each as
#      plainly, and by the counters still in the cache (no hand-off, the
#      exec'd image's reads hits); under
#      --private the hand-off instead, as plainly; a forked child in a
#      shared cache publishes its own live record (PAGECACHE_LIVE);
#   4. fio: psync, pvsync2 and sync engines, threads and forked jobs,
#      random writes verified with crc32c, a random read job; --stats shows
#      the cache served them;
#   5. sqlite3: a database four times the budget built, updated, queried
#      and checked (PRAGMA integrity_check) in rollback-journal and WAL
#      modes, the results those of a plain run;
#   6. RocksDB's db_bench: fillrandom then readrandom, checksums verified,
#      the same keys found as plainly.
# The build's flavour runs: its pagecache preloads its own shim (and the
# sanitizer's runtime before it).  Under TSan, fio and the fork helper run
# on build/test's shim instead: TSan's runtime cannot follow them (it kills
# the child of a multi-threaded fork that starts threads, as fio's forked
# jobs and the helper's child do, and it deadlocks among fio's threads);
# tests/test_preload.c covers the shim under TSan.  Exit 0 pass, 1 fail.
set -u
build=${1:?usage: tests/test_exec.sh BUILD_DIR}
bin="$build/pagecache"
helper="$build/tests/preload_helper"
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-exec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
ok()  { echo "ok   $*"; }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
# check DESCRIPTION COMMAND...: a command that must succeed.
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
pcx() { "$bin" exec --memory 4M --cache "texec-$$" "$@"; }
fbin=$bin fhelper=$helper
if [ "${PC_SANITIZER:-}" = tsan ]; then
	alt=$(cd "$build/.." && pwd)/test
	fbin=$alt/pagecache fhelper=$alt/tests/preload_helper
	if [ ! -x "$fbin" ] || [ ! -x "$fhelper" ]; then
		echo "FAIL: under TSan fio needs $alt (make V=test tests)"
		exit 1
	fi
fi
fpcx() { "$fbin" exec --memory 4M --cache "texec-$$" "$@"; }
stat_of() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }
# at_least FILE NAME MIN: the stats file counted NAME at least MIN.
at_least() {
	local v
	v=$(stat_of "$1" "$2")
	[ -n "$v" ] && [ "$v" -ge "$3" ] || { echo "    $2 = '${v}', want >= $3"; return 1; }
}
for p in fio sqlite3 db_bench; do
	command -v "$p" >/dev/null || { echo "FAIL: $p is missing (scripts/deps.sh installs it)"; exit 1; }
done
cd "$tmp" || exit 1

# ---------------------------------------------------------------- 1. command
status() { "$@" >/dev/null 2>&1; echo $?; }
check "bad option: 2"          [ "$(status "$bin" exec --bogus -- true)" = 2 ]
check "missing value: 2"       [ "$(status "$bin" exec --memory)" = 2 ]
check "unknown key: 2"         [ "$(status "$bin" exec --set no.such.key=1 -- true)" = 2 ]
check "bad value: 2"           [ "$(status "$bin" exec --memory 12Q -- true)" = 2 ]
check "budget too small: 2"    [ "$(status "$bin" exec --memory 1 -- true)" = 2 ]
check "--set without =: 2"     [ "$(status "$bin" exec --set memory -- true)" = 2 ]
check "no program: 2"          [ "$(status "$bin" exec --memory 4M --cache "texec-$$")" = 2 ]
check "a message on stderr"    sh -c "'$bin' exec --bogus -- true 2>&1 | grep -q bogus"
check "missing program: 127"   [ "$(status "$bin" exec -- ./no-such-program)" = 127 ]
check "missing in PATH: 127"   [ "$(status "$bin" exec -- no-such-program-xyz)" = 127 ]
printf 'x' > not-exec
mkdir -p a-dir
check "not executable: 126"    [ "$(status "$bin" exec -- ./not-exec)" = 126 ]
check "a directory: 126"       [ "$(status "$bin" exec -- ./a-dir)" = 126 ]
check "exit status kept"       [ "$(status pcx -- sh -c 'exit 7')" = 7 ]
check "signal kept"            [ "$(status pcx -- sh -c 'kill -TERM $$')" = "$(status sh -c 'kill -TERM $$')" ]
check "exec, no fork: same pid" sh -c "[ \"\$(sh -c 'echo \$\$; exec \"$bin\" exec -- sh -c \"echo \\\$\\\$\"' | uniq | wc -l)\" = 1 ]"
# (an instrumented pagecache, itself under LD_PRELOAD, must not mind it)
got=$(ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0} LD_PRELOAD=libm.so.6 \
	pcx -- sh -c 'echo "$LD_PRELOAD"')
check "LD_PRELOAD appended"    sh -c "case '$got' in *libm.so.6:*libpagecache-preload.so) true;; *) false;; esac"
check "help"                   sh -c "'$bin' exec --help | grep -q -- --stats"

# ---------------------------------------------------------------- 2. coreutils
head -c 16M /dev/urandom > big
seq 1 800000 | shuf --random-source=big > lines
check "cp"                     sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- cp big big.cp && cmp big big.cp"
check "cat"                    sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- cat big > big.cat && cmp big big.cat"
check "cat through sh (exec)"  sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- sh -c 'cat big > big.sh' && cmp big big.sh"
# The cache's memory while a program reads four times its budget: the
# region (frames, descriptors, the cache's objects), resident once for
# every process, within the budget plus 10%.
region_bytes() {
	"$bin" exec --memory 8M --cache "texec-mem-$$" -- sh -c '
		cat big > /dev/null
		b=$(stat -c %b "/dev/shm/pagecache-u$(id -u)-$1")
		echo $((b * 512))' sh "texec-mem-$$"
}
mem_ok() {
	local used
	used=$(region_bytes)
	[ -n "$used" ] && [ "$used" -le $((8 * 1048576 * 11 / 10)) ] ||
		{ echo "    region: '$used' bytes resident, budget 8M"; return 1; }
}
check "cache memory: budget + 10%" mem_ok
dd if=big of=dd.plain bs=64k status=none && dd if=big of=dd.plain bs=4096 seek=7 count=900 conv=notrunc,fsync status=none
check "dd"                     sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- sh -c 'dd if=big of=dd.pc bs=64k status=none && dd if=big of=dd.pc bs=4096 seek=7 count=900 conv=notrunc,fsync status=none' && cmp dd.plain dd.pc"
check "sha256sum"              [ "$(pcx -- sha256sum big | cut -d' ' -f1)" = "$(sha256sum big | cut -d' ' -f1)" ]
sort -n -S 2M -T "$tmp" lines -o sorted.plain
check "sort"                   sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- sort -n -S 2M -T '$tmp' lines -o sorted.pc && cmp sorted.plain sorted.pc"
mkdir -p tree/a/b tree/c
head -c 3M big > tree/a/b/three; head -c 100 big > tree/a/small; : > tree/c/empty
head -c 9000000 big > tree/c/nine; ln -s ../a/small tree/c/link; truncate -s 5M tree/sparse
tar -cf tree.plain.tar -C tree .
check "tar create"             sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- tar -cf tree.pc.tar -C tree . && cmp tree.plain.tar tree.pc.tar"
mkdir -p out.plain out.pc
tar -xf tree.plain.tar -C out.plain
listing() { (cd "$1" && find . -printf '%p %y %s %T@ %l\n' | sort); }
check "tar extract"            sh -c "'$bin' exec --memory 4M --cache "texec-$$" -- tar -xf tree.plain.tar -C out.pc && diff -r out.plain out.pc"
check "tar extract: times"     [ "$(listing out.plain)" = "$(listing out.pc)" ]

# ---------------------------------------------------------------- 3. corners
forking="fork ofd interleave exec spawn killed"
for mode in mmap fdlimit creds $forking; do
	h=$helper run=pcx
	case " $forking " in *" $mode "*) h=$fhelper run=fpcx;; esac
	"$h" $mode "h.$mode.plain" > "h.$mode.plain.out" 2>&1
	$run -- "$h" $mode "h.$mode.pc" > "h.$mode.pc.out" 2>&1
	sed -i "s/h\.$mode\.pc/h.$mode.plain/g" "h.$mode.pc.out"
	if cmp -s "h.$mode.plain.out" "h.$mode.pc.out"; then
		ok "helper $mode: as without pagecache"
	else
		bad "helper $mode: differs"; diff "h.$mode.plain.out" "h.$mode.pc.out" | head -20
	fi
done

# The shared descriptions stayed in the cache: each mode again on a cache
# of its own (its counters the run's), asserted by counter.
# shared_counts MODE NAME=VALUE...: each counter exactly that; NAME>=VALUE
# at least.
shared_counts() {
	local mode=$1 st="h.$mode.stats" c n v got; shift
	rm -f "$st"
	"$fbin" exec --memory 4M --cache "texec-$mode-$$" --stats "$st" -- \
		"$fhelper" "$mode" "h.$mode.counted" > /dev/null 2>&1 || { echo "    $mode failed"; return 1; }
	for c in "$@"; do
		n=${c%%[>=]*}; v=${c##*[>=]}; got=$(stat_of "$st" "$n")
		case $c in
		*'>='*) [ -n "$got" ] && [ "$got" -ge "$v" ] ;;
		*) [ "${got:-0}" = "$v" ] ;;
		esac || { echo "    $mode: $n = '$got', want $c"; return 1; }
	done
}
check "ofd: after fork, system, popen, posix_spawn still cached" \
	shared_counts ofd fork_handoffs=0 exec_handoffs=0 'shared_pos>=1' 'exec_adopted>=3'
check "interleave: no hand-off at the forks" \
	shared_counts interleave fork_handoffs=0 'shared_pos>=2'
check "exec: the new image reads the inherited fd from the cache, all hits" \
	shared_counts exec exec_handoffs=0 'exec_adopted>=1' 'managed_read_bytes>=65556' pgpgin=0
check "spawn: the shell commands adopt the fd; file actions hand off" \
	shared_counts spawn exec_handoffs=1 'exec_adopted>=3'
check "killed: the child wrote through the cache" \
	shared_counts killed fork_handoffs=0 'shared_pos>=1'
# A forked child goes on in its parent's shared cache and publishes its
# own live record (PAGECACHE_LIVE) at its first call on the cache.
live_fork() {
	local d="$tmp/live.$$"
	mkdir -p "$d"
	PAGECACHE_LIVE="$d" fpcx -- python3 -c '
import os, sys
d, f = sys.argv[1], sys.argv[2]
fd = os.open(f, os.O_RDONLY)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.read(fd, 4096)    # its first call on the inherited description
    os.write(w, " ".join(sorted(os.listdir(d))).encode())
    os._exit(0)
os.close(w)
got = os.read(r, 4096).decode()
os.waitpid(pid, 0)
print("both" if got == " ".join(sorted([str(os.getpid()), str(pid)])) else got)
' "$d" big
}
check "live: a forked child publishes a record of its own" [ "$(live_fork)" = both ]
# --private: the hand-off as before, and the kernel's results.
for mode in interleave exec spawn; do
	"$fhelper" $mode "h.$mode.plain" > "h.$mode.plain.out" 2>&1
	"$fbin" exec --private --memory 4M --stats "h.$mode.priv.stats" -- \
		"$fhelper" $mode "h.$mode.priv" > "h.$mode.priv.out" 2>&1
	sed -i "s/h\.$mode\.priv/h.$mode.plain/g" "h.$mode.priv.out"
	handed=$(($(stat_of "h.$mode.priv.stats" fork_handoffs) + $(stat_of "h.$mode.priv.stats" exec_handoffs)))
	if cmp -s "h.$mode.plain.out" "h.$mode.priv.out" && [ "$handed" -ge 1 ] &&
	   [ "$(stat_of "h.$mode.priv.stats" exec_adopted)" = 0 ]; then
		ok "helper $mode --private: handed off ($handed), as without pagecache"
	else
		bad "helper $mode --private (hand-offs $handed)"; diff "h.$mode.plain.out" "h.$mode.priv.out" | head -20
	fi
done

# Pseudo filesystems (proc, sys: no device) go to the kernel, and a file of
# a device's filesystem (major != 0: no fstatfs asked) to the cache.
echo 'one line of a file on the disk' > pseudo.file
pcx --stats pseudo.stats -- sh -c 'cat /sys/devices/system/cpu/possible; cat pseudo.file; grep -c . /proc/self/stat' > pseudo.pc 2>&1
if [ "$(stat_of pseudo.stats managed_opens)" = 1 ] &&
   [ "$(sed -n 2p pseudo.pc)" = "$(cat pseudo.file)" ] &&
   [ "$(sed -n 1p pseudo.pc)" = "$(cat /sys/devices/system/cpu/possible)" ] &&
   [ "$(sed -n 3p pseudo.pc)" = 1 ]; then
	ok "pseudo filesystems: the kernel's; the file on the disk: the cache's"
else
	bad "pseudo filesystems (managed_opens $(stat_of pseudo.stats managed_opens))"; cat pseudo.pc
fi

# The shared cache breaks while the helper has a file open: its next call
# goes through the kernel, said once on stderr, nothing lost.
broken_run() {	# NAME, then the command prefix (none: plain)
	local name=$1 pid; shift
	rm -f "$name.ready" "$name.go"
	"$@" "$helper" broken "$name" > "$name.out" 2> "$name.err" & pid=$!
	while [ ! -e "$name.ready" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
	[ $# -gt 0 ] && "$build/tests/test_shared" --break "u$(id -u)-texec-broken-$$"
	touch "$name.go"
	wait "$pid"
}
broken_run h.broken.plain
broken_run h.broken.pc "$bin" exec --memory 4M --cache "texec-broken-$$" --
sed -i "s/h\.broken\.pc/h.broken.plain/g" h.broken.pc.out
if cmp -s h.broken.plain.out h.broken.pc.out &&
   [ "$(grep -c 'shared cache is broken' h.broken.pc.err)" = 1 ]; then
	ok "helper broken: the cache breaks mid-run, the kernel goes on"
else
	bad "helper broken"; diff h.broken.plain.out h.broken.pc.out | head; cat h.broken.pc.err
fi

# ---------------------------------------------------------------- 4. fio
fio_run() {	# NAME, BYTES WRITTEN AT LEAST, fio options...: verified writes
	local name=$1 wrote=$2; shift 2
	if fpcx --stats "fio.$name.stats" -- fio --name="$name" --directory="$tmp" \
		--filename_format='fio.$jobnum' --size=16M --bs=4k \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting \
		--output="fio.$name.out" "$@" >/dev/null 2>&1 &&
	   ! grep -q 'err= *[1-9]' "fio.$name.out" &&
	   at_least "fio.$name.stats" managed_opens 1 &&
	   at_least "fio.$name.stats" managed_write_bytes "$wrote" &&
	   at_least "fio.$name.stats" pgpgout $((wrote / 1024)); then
		ok "fio $name"
	else
		bad "fio $name"; tail -5 "fio.$name.out" 2>/dev/null
	fi
}
fio_run psync-threads 33554432 --ioengine=psync --rw=randwrite --numjobs=2 --thread
fio_run pvsync2-forked 33554432 --ioengine=pvsync2 --rw=randwrite --numjobs=2
fio_run sync 8388608 --ioengine=sync --rw=randrw --rwmixread=30 --numjobs=1
if fpcx --stats fio.read.stats -- fio --name=read --directory="$tmp" \
	--filename_format='fio.$jobnum' --size=16M --bs=4k --rw=randread \
	--ioengine=psync --io_size=8M --output=fio.read.out >/dev/null 2>&1 &&
   at_least fio.read.stats managed_read_bytes 8388608 &&
   at_least fio.read.stats pgpgin 4096; then
	ok "fio randread served by the cache"
else
	bad "fio randread"; tail -5 fio.read.out 2>/dev/null
fi

# ---------------------------------------------------------------- 5. sqlite3
sql() {	# MODE: a script for a 16 MiB database in that journal mode
	cat <<EOF
PRAGMA journal_mode=$1;
PRAGMA cache_size=-256;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 4000)
  INSERT INTO t SELECT x, (x * 7919) % 4001, printf('%.4000c', char(65 + x % 26)) FROM c;
CREATE INDEX tk ON t(k);
UPDATE t SET v = printf('%.3000c', char(97 + id % 26)) WHERE id % 3 = 0;
DELETE FROM t WHERE id % 7 = 0;
BEGIN; INSERT INTO t SELECT id + 10000, k, v FROM t WHERE id < 500; COMMIT;
SELECT count(*), sum(length(v)), sum(k), total(unicode(substr(v, 10, 1))) FROM t;
SELECT id, k, substr(v, 1, 3) FROM t WHERE k BETWEEN 100 AND 110 ORDER BY k, id;
PRAGMA integrity_check;
EOF
}
for mode in DELETE WAL; do
	sql $mode | sqlite3 "db.$mode.plain" > "sql.$mode.plain" 2>&1
	sql $mode | pcx --stats "sql.$mode.stats" -- sqlite3 "db.$mode.pc" > "sql.$mode.pc" 2>&1
	again=$(echo 'PRAGMA integrity_check; SELECT count(*) FROM t;' | pcx -- sqlite3 "db.$mode.pc" 2>&1 | tr '\n' ' ')
	if cmp -s "sql.$mode.plain" "sql.$mode.pc" && grep -qx ok "sql.$mode.pc" &&
	   [ "$(stat -c %s "db.$mode.pc")" -ge 16000000 ] &&
	   [ "$again" = "ok $(echo 'SELECT count(*) FROM t;' | sqlite3 "db.$mode.plain") " ] &&
	   at_least "sql.$mode.stats" managed_opens 1; then
		ok "sqlite3 $mode"
	else
		bad "sqlite3 $mode (again: $again)"; diff "sql.$mode.plain" "sql.$mode.pc" | head -10
	fi
done

# ---------------------------------------------------------------- 6. db_bench
# Memtables of 1 MiB: the data goes to SST files, read back with pread.
bench_args=(--benchmarks=fillrandom,readrandom --num=40000 --value_size=400
	--compression_type=none --cache_size=1048576 --write_buffer_size=1048576
	--verify_checksum=1 --seed=42 --threads=1 --use_existing_db=0 --reads=4000)
db_bench "${bench_args[@]}" --db=rdb.plain > rdb.plain.out 2>&1
found_plain=$(grep -o '[0-9]* of [0-9]* found' rdb.plain.out)
pcx --stats rdb.stats -- db_bench "${bench_args[@]}" --db=rdb.pc > rdb.pc.out 2>&1
rc=$?
found_pc=$(grep -o '[0-9]* of [0-9]* found' rdb.pc.out)
if [ $rc = 0 ] && [ -n "$found_pc" ] && [ "$found_pc" = "$found_plain" ] &&
   ! grep -qi 'corrupt\|error' rdb.pc.out && at_least rdb.stats managed_opens 1 &&
   at_least rdb.stats managed_read_bytes 1; then
	ok "db_bench fillrandom,readrandom ($found_pc)"
else
	bad "db_bench (rc $rc, found '$found_pc', plainly '$found_plain')"; tail -5 rdb.pc.out
fi

[ "$failed" -eq 0 ] || { echo "$failed failed"; exit 1; }
exit 0
