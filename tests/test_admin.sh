#!/usr/bin/env bash
# tests/test_admin.sh BUILD_DIR - the commands that operate a shared cache
# (tools/admin*.c, src/admin.c), on a live cache "tadmin-$$" made by
# `pagecache exec --memory 16M`, with programs of tests/preload_helper in
# it:
#   1. refusals and exit statuses: no such cache 1 (said), a bad name or
#      option 2, a cache that is not the user's alone refused with 1;
#   2. ls and ls --json: the cache listed, its budget, cached and dirty the
#      counters' (stat's nr_budget_pages, nr_file_pages, nr_dirty), the
#      processes attached (the holder), the cache process's pid alive;
#   3. stat: every counter once, the same as --json's; stat -w -n: COUNT
#      lines of 13 columns under a header, --json one object each; none of
#      ls, stat, files or fincore attaches (shared_attaches stays);
#   4. files and fincore: the held file by its path with its 256 pages
#      cached and dirty, active + inactive within them, a file deleted
#      behind the cache by device:inode, --top, fincore of a file the
#      cache does not hold;
#   5. sync: nothing dirty after it, the held file on the disk (read
#      through the kernel) while its writer still holds it; drop: its 256
#      clean pages dropped, fincore 0 after; resize: the budget is the new
#      one, bad sizes 2;
#   6. stop under a running writer (preload_helper append): the writer goes
#      on through the kernel, every record it wrote is in the file in
#      order (read through the kernel), the cache's name is gone and a
#      command on it says so.
# Nothing is checked against wall time; waits are for files a helper
# makes.  Exit 0 pass, 1 fail.
set -u
build=${1:?usage: tests/test_admin.sh BUILD_DIR}
bin="$build/pagecache"
helper="$build/tests/preload_helper"
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-admin.XXXXXX")
tmp=$(cd "$tmp" && pwd -P)	# as /proc/PID/fd names it
name="tadmin-$$"
region="u$(id -u)-$name"
pids=()
cleanup() {
	touch "$tmp/held.go" "$tmp/log.go"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -f "/dev/shm/pagecache-u$(id -u)-tadmin-open-$$" \
	      "/dev/shm/pagecache-u65534-tadmin-$$"
	rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
ok()  { echo "ok   $*"; }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
# status WANT DESCRIPTION COMMAND...: exits WANT, says something on stderr
status() {
	local want=$1 d=$2 rc; shift 2
	"$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
	if [ "$rc" = "$want" ] && { [ "$want" = 0 ] || [ -s "$tmp/err" ]; }; then
		ok "$d (exit $rc)"
	else
		bad "$d: exit $rc, not $want"; cat "$tmp/err"
	fi
}
# wait_for FILE: until a helper made it (or its process ended)
wait_for() {
	local f=$1 pid=$2
	while [ ! -e "$f" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
	[ -e "$f" ]
}
counter() { "$bin" stat "$name" | awk -v k="$1" '$1 == k { print $2 }'; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# The live cache: a holder with 1 MiB dirty in it, held open.
"$bin" exec --memory 16M --cache "$name" -- "$helper" hold "$tmp/held" \
	> "$tmp/hold.out" 2>&1 & pids+=($!)
if ! wait_for "$tmp/held.ready" "${pids[0]}"; then
	bad "the holder did not start"; cat "$tmp/hold.out"; exit 1
fi
# A file written, closed, then deleted behind the cache (files, below).
"$bin" exec --cache "$name" -- dd if=/dev/zero of="$tmp/gone" bs=4k count=8 2>/dev/null
gone_ino=$(stat -c %i "$tmp/gone")
rm -f "$tmp/gone"

# 1. refusals and exit statuses
for c in ls stat files fincore resize sync drop stop; do
	"$bin" help "$c" > "$tmp/out" 2>&1 && grep -q "usage: pagecache $c" "$tmp/out" ||
		bad "help $c"
done
status 1 "stat of no such cache" "$bin" stat "nosuch-$$"
grep -q "no cache named nosuch-$$" "$tmp/err" || bad "no such cache: message"
status 1 "sync of no such cache" "$bin" sync "nosuch-$$"
status 1 "stop of no such cache" "$bin" stop "nosuch-$$"
status 2 "stat of a bad name" "$bin" stat "a/b"
status 2 "stat -w 0" "$bin" stat "$name" -w 0
status 2 "stat -n without -w" "$bin" stat "$name" -n 3
status 2 "ls with an argument" "$bin" ls extra
status 2 "files --top x" "$bin" files "$name" --top x
status 2 "resize without a size" "$bin" resize "$name"
status 2 "resize to a non-size" "$bin" resize "$name" 12Q
status 2 "resize under the minimum" "$bin" resize "$name" 4K
status 2 "resize above memory.max" "$bin" resize "$name" 1T
status 2 "fincore without a file" "$bin" fincore --cache "$name"
status 2 "drop of a missing file" "$bin" drop "$name" "$tmp/none"
# a cache file others may open is not the user's alone: refused
head -c 4096 /dev/zero > "/dev/shm/pagecache-u$(id -u)-tadmin-open-$$"
chmod 0644 "/dev/shm/pagecache-u$(id -u)-tadmin-open-$$"
status 1 "stat of a cache others may open" "$bin" stat "tadmin-open-$$"
grep -q "another user's: refused" "$tmp/err" || bad "refused: message"
status 1 "stop of a cache others may open" "$bin" stop "tadmin-open-$$"
if [ "$(id -u)" = 0 ]; then	# another user's file outright
	head -c 4096 /dev/zero > "/dev/shm/pagecache-u65534-tadmin-$$"
	chmod 0600 "/dev/shm/pagecache-u65534-tadmin-$$"
	chown 65534 "/dev/shm/pagecache-u65534-tadmin-$$"
	status 1 "stat of another user's cache" "$bin" stat "u65534-tadmin-$$"
	grep -q "another user's: refused" "$tmp/err" || bad "another user's: message"
	status 1 "sync of another user's cache" "$bin" sync "u65534-tadmin-$$"
	"$bin" ls | grep -q "u65534-tadmin-$$" && bad "ls lists another user's"
fi

# 2. ls against the counters (nothing writes now: the holder waits)
attaches0=$(counter shared_attaches)
"$bin" ls > "$tmp/ls.txt"
check "ls lists the cache" grep -q "^$name " "$tmp/ls.txt"
"$bin" ls --json > "$tmp/ls.json"
check "ls --json is JSON" json 'len(d)' < "$tmp/ls.json" > /dev/null
row="[c for c in d if c['name'] == '$name'][0]"
budget=$(json "$row['budget_bytes']" < "$tmp/ls.json")
check "ls: budget 16M = nr_budget_pages" \
	test "$budget" = $((16 << 20)) -a "$(counter nr_budget_pages)" = 4096
check "ls: cached = nr_file_pages" \
	[ "$(json "$row['cached_bytes'] // 4096" < "$tmp/ls.json")" = "$(counter nr_file_pages)" ]
dirty=$(counter nr_dirty)
check "ls: dirty = nr_dirty, the holder's 256 pages or less" \
	test "$(json "$row['dirty_bytes'] // 4096" < "$tmp/ls.json")" = "$dirty" -a "$dirty" -le 256
check "ls: one process attached (the holder)" \
	[ "$(json "$row['processes']" < "$tmp/ls.json")" = 1 ]
home=$(json "$row['pid']" < "$tmp/ls.json")
check "ls: the cache process runs" kill -0 "$home"
check "ls: state ok, not broken" \
	[ "$(json "$row['state'] + str($row['broken'])" < "$tmp/ls.json")" = okFalse ]

# 3. stat
"$bin" stat "$name" > "$tmp/stat.txt"
"$bin" stat "$name" --json > "$tmp/stat.json"
odd=$(grep -cv '^[a-z_0-9]* [0-9][0-9]*$' "$tmp/stat.txt")
check "stat: every counter, name value" \
	test "$(wc -l < "$tmp/stat.txt")" -gt 100 -a "$odd" = 0
check "stat --json: the same names" \
	[ "$(json 'len(d)' < "$tmp/stat.json")" = "$(wc -l < "$tmp/stat.txt")" ]
check "stat --json: the same budget" \
	[ "$(json "d['nr_budget_pages']" < "$tmp/stat.json")" = 4096 ]
"$bin" stat "$name" -w 0.2 -n 3 > "$tmp/w.txt"
check "stat -w -n 3: a header and 3 lines of 13 columns" \
	test "$(head -1 "$tmp/w.txt" | awk '{ print $1, $2, NF }')" = "free cached 13" \
	     -a "$(tail -n +2 "$tmp/w.txt" | awk 'NF == 13' | wc -l)" = 3 \
	     -a "$(wc -l < "$tmp/w.txt")" = 4
"$bin" stat "$name" -w 0.2 -n 2 --json > "$tmp/w.json"
check "stat -w --json: one object a line" \
	[ "$(python3 -c 'import json,sys; print(sum("nr_dirty" in json.loads(l) for l in sys.stdin))' < "$tmp/w.json")" = 2 ]

# 4. files and fincore: the held file; the one deleted behind the cache
"$bin" files "$name" --json > "$tmp/files.json"
held="[f for f in d if f['file'] == '$tmp/held'][0]"
check "files: the held file by its path, 256 pages cached" \
	[ "$(json "$held['cached_pages']" < "$tmp/files.json")" = 256 ]
check "files: its dirty pages = nr_dirty (the only dirty file)" \
	[ "$(json "$held['dirty_pages']" < "$tmp/files.json")" = "$(counter nr_dirty)" ]
check "files: active + inactive within cached" \
	[ "$(json "$held['active_pages'] + $held['inactive_pages'] <= 256" < "$tmp/files.json")" = True ]
check "files: the deleted file by device:inode" \
	[ "$(json "[f['file'].split(':')[2] for f in d if not f['known_path']]" < "$tmp/files.json" | grep -c "'$gone_ino'")" = 1 ]
check "files: largest first" \
	[ "$(json "d[0]['file']" < "$tmp/files.json")" = "$tmp/held" ]
check "files --top 1: one file" \
	[ "$("$bin" files "$name" --top 1 | wc -l)" = 2 ]
echo other > "$tmp/other"
"$bin" fincore --cache "$name" --json "$tmp/held" "$tmp/other" > "$tmp/fc.json"
check "fincore: 256 pages of the held file, none of another" \
	[ "$(json "[f['cached_pages'] for f in d]" < "$tmp/fc.json")" = "[256, 0]" ]
status 1 "fincore of a missing file" "$bin" fincore --cache "$name" "$tmp/held" "$tmp/none"
check "no view attached" [ "$(counter shared_attaches)" = "$attaches0" ]

# 5. sync, drop, resize
written0=$(counter nr_written)
status 0 "sync" "$bin" sync "$name"
check "sync: nothing dirty after it" [ "$(counter nr_dirty)" = 0 ]
check "sync: the held file written back (nr_written grew)" \
	[ "$(counter nr_written)" -ge $((written0 + dirty)) ]
python3 -c 'import sys; sys.stdout.buffer.write(bytes(i % 251 for i in range(1 << 20)))' > "$tmp/held.want"
check "sync: the held file on the disk while its writer holds it" \
	cmp -s "$tmp/held" "$tmp/held.want"
status 0 "drop of the held file" "$bin" drop "$name" "$tmp/held"
check "drop: its 256 clean pages dropped" grep -q ": 256 pages dropped" "$tmp/out"
check "drop: fincore says 0 after" \
	[ "$("$bin" fincore --cache "$name" --json "$tmp/held" | json "d[0]['cached_pages']")" = 0 ]
status 0 "drop of the whole cache" "$bin" drop "$name"
status 0 "resize to 32M" "$bin" resize "$name" 32M
check "resize: nr_budget_pages 8192" [ "$(counter nr_budget_pages)" = 8192 ]
touch "$tmp/held.go"
wait "${pids[0]}"
check "the holder ended well" [ $? = 0 ]

# 6. stop under a running writer
"$bin" exec --cache "$name" -- "$helper" append "$tmp/log" \
	> "$tmp/append.out" 2> "$tmp/append.err" & pids+=($!)
if wait_for "$tmp/log.ready" "${pids[1]}"; then
	status 0 "stop under a writer" "$bin" stop "$name"
	touch "$tmp/log.go"
	wait "${pids[1]}"
	check "the writer ended well" [ $? = 0 ]
	n=$(cat "$tmp/append.out")
	check "stop: every record in the file, in order ($n)" \
		[ "$(awk -v n="$n" '$0 != "record " NR { bad = 1 } END { print !bad && NR == n }' "$tmp/log")" = 1 ]
	check "stop: the writer was told" grep -q "was stopped (pagecache stop)" "$tmp/append.err"
	status 1 "stat after stop: no such cache" "$bin" stat "$name"
	check "stop: the name is gone" [ ! -e "/dev/shm/pagecache-$region" ]
else
	bad "the appender did not start"; cat "$tmp/append.err"
fi

[ "$failed" = 0 ] && echo "test_admin: all passed" || echo "test_admin: $failed failed"
[ "$failed" = 0 ]
