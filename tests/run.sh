#!/usr/bin/env bash
# Run every test program of a build, each in its own process under a
# timeout, and count the cases: cmocka's summary for C tests (a program
# that printed none failed), one case per script for tests/test_*.sh.
# Exit 77 from a program means "this machine lacks the feature": counted
# as skipped.  Ends with the one line
# "N passed, N failed" (", N skipped" when any were).
#
# A program still running at its deadline (PC_TEST_TIMEOUT, 600 s) is
# looked at before it is killed: every thread's stack of it and of each
# process below it (gdb -batch, when gdb is there) goes into its log, so a
# hang explains itself; then SIGTERM to them all, SIGKILL 10 s later (as
# timeout -k 10 did), and it counts as a timeout (status 124).
#
#   tests/run.sh BUILD_DIR [NAME_FILTER]
set -u
if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 501)); then
	echo "tests/run.sh: needs bash 5.1 or later (wait -n -p)" >&2
	exit 2
fi
build=${1:?usage: tests/run.sh BUILD_DIR [FILTER]}
filter=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
timeout_s=${PC_TEST_TIMEOUT:-600}
[ "${PC_SANITIZER:-}" = tsan ] && timeout_s=$((timeout_s * 2))
export CMOCKA_MESSAGE_OUTPUT=stdout
export PC_TEST_BUILD="$top/$build"
export PC_TEST_TMP=${PC_TEST_TMP:-$(mktemp -d /tmp/pctest.XXXXXX)}
passed=0 failed=0 skipped=0
failures=()
log_dir="$top/$build/test-logs"
mkdir -p "$log_dir"

# A C test program counts its cases from cmocka's summary ("[==========]
# N test(s) run.", "[  PASSED  ] N", "[  SKIPPED ] N": the rest of the run
# failed, a teardown error too); one that ends without that summary - a crash, an
# exit before the tests ran, a timeout - is a failure whatever its exit
# status, with the cases it finished counted as passed.  A script
# (is_script) is one case: its exit status.
summary_count() {	# log, label: N of "[ label ] N test(s)", else 0
	sed -n "s/^\[ *$2 *\] \([0-9][0-9]*\) test(s).*/\1/p" "$1" | tail -n 1 | grep . || echo 0
}

# @pid and every process below it, parents first.
descendants() {	# pid
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			q[0] = root; n = 1
			for (i = 0; i < n; i++) {
				print q[i]
				m = split(kids[q[i]], k, " ")
				for (j = 1; j <= m; j++)
					q[n++] = k[j]
			}
		}'
}

# Every thread's stack of each of @pids, appended to @log.
dump_stacks() {	# log, pids...
	local log=$1 p; shift
	echo "=== still running after ${timeout_s}s: the stacks of its processes ===" >>"$log"
	if ! command -v gdb >/dev/null 2>&1; then
		echo "(no gdb here: no stacks)" >>"$log"
		return
	fi
	for p in "$@"; do
		[ -d "/proc/$p" ] || continue
		echo "--- pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" >>"$log"
		timeout 120 gdb -batch -nx -p "$p" -ex 'thread apply all bt' \
			</dev/null >>"$log" 2>&1
	done
	echo "=== end of stacks ===" >>"$log"
}

# Run @command with its output in @log until it ends or the deadline;
# sets rc (124: it was killed at the deadline).  The program leads a
# process group of its own (setsid), so what it forks is killed with it.
run_deadline() {	# log, command...
	local log=$1 pid wd ended pids; shift
	setsid "$@" >"$log" 2>&1 </dev/null &
	pid=$!
	sleep "$timeout_s" &
	wd=$!
	wait -n -p ended "$pid" "$wd"
	rc=$?
	if [ "$ended" = "$pid" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		return
	fi
	pids=$(descendants "$pid")
	# shellcheck disable=SC2086 # a list of pids
	dump_stacks "$log" $pids
	# shellcheck disable=SC2086
	kill -TERM -- "-$pid" $pids 2>/dev/null
	sleep 10 &
	wd=$!
	wait -n -p ended "$pid" "$wd"
	if [ "$ended" != "$pid" ]; then
		pids="$pids $(descendants "$pid")"
		# shellcheck disable=SC2086
		kill -KILL -- "-$pid" $pids 2>/dev/null
		wait "$pid" 2>/dev/null
	else
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
	fi
	rc=124
}

run_one() {	# name, is_script, command...
	local name=$1 is_script=$2; shift 2
	local log="$log_dir/$name.log" rc t0 t1 ok fail skip why=""
	t0=$(date +%s)
	run_deadline "$log" "$@"
	t1=$(date +%s)
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1)); echo "SKIP $name ($(tail -n 1 "$log"))"; return
	fi
	if [ "$is_script" = 1 ]; then
		ok=0 fail=0 skip=0
		if [ "$rc" -eq 0 ]; then ok=1; else fail=1; fi
	elif grep -q '^\[==========\] [0-9]* test(s) run\.' "$log"; then
		ok=$(summary_count "$log" PASSED)
		skip=$(summary_count "$log" SKIPPED)
		fail=$(( $(sed -n 's/^\[==========\] \([0-9]*\) test(s) run\..*/\1/p' "$log" |
			   tail -n 1) - ok - skip ))
		[ "$fail" -lt 0 ] && fail=0
		if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then	# died after the summary
			fail=1 why="exit status $rc after the summary"
		fi
	else
		ok=$(grep -c '^\[       OK \]' "$log")
		fail=1 skip=0 why="no cmocka summary (exit status $rc)"
	fi
	[ "$rc" -eq 124 ] && echo "TIMEOUT $name after ${timeout_s}s"
	passed=$((passed + ok)); failed=$((failed + fail)); skipped=$((skipped + skip))
	if [ "$fail" -gt 0 ]; then
		failures+=("$name")
		echo "FAIL $name: $ok passed, $fail failed ($((t1 - t0))s)${why:+, $why}, log: $log"
		grep -E '^\[  FAILED  \]|^\[  ERROR   \]|seed|ERROR|error|Assert' "$log" | head -n 20 | sed 's/^/    /'
	else
		echo "ok   $name: $ok passed ($((t1 - t0))s)"
	fi
}

for t in "$top/$build"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.o|*.d) continue ;; esac
	name=$(basename "$t")
	[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
	run_one "$name" 0 "$t"
done
for t in "$top"/tests/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
	run_one "$name" 1 bash "$t" "$top/$build"
done
rm -rf "$PC_TEST_TMP"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
