#!/usr/bin/env bash
# Run every test program of a build, each in its own process under a
# timeout, and count the cases: cmocka's per-case lines for C tests, one
# case per script for tests/test_*.sh.  Exit 77 from a program means "this
# machine lacks the feature": counted as skipped.  Ends with the one line
# "N passed, N failed" (", N skipped" when any were).
#
#   tests/run.sh BUILD_DIR [NAME_FILTER]
set -u
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

run_one() {	# name, command...
	local name=$1; shift
	local log="$log_dir/$name.log" rc t0 t1
	t0=$(date +%s)
	timeout -k 10 "$timeout_s" "$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s)
	local ok fail skip
	ok=$(grep -c '^\[       OK \]' "$log")
	fail=$(grep '^\[  FAILED  \]' "$log" | grep -vc 'test(s)')
	skip=$(grep -c '^\[  SKIPPED \]' "$log")
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1)); echo "SKIP $name ($(tail -n 1 "$log"))"; return
	fi
	if [ "$ok" -eq 0 ] && [ "$fail" -eq 0 ]; then	# a script, or a crash
		if [ "$rc" -eq 0 ]; then ok=1; else fail=1; fi
	elif [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then	# died after some cases
		fail=1
	fi
	[ "$rc" -eq 124 ] && echo "TIMEOUT $name after ${timeout_s}s"
	passed=$((passed + ok)); failed=$((failed + fail)); skipped=$((skipped + skip))
	if [ "$fail" -gt 0 ]; then
		failures+=("$name")
		echo "FAIL $name: $ok passed, $fail failed ($((t1 - t0))s), log: $log"
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
	run_one "$name" "$t"
done
for t in "$top"/tests/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
	run_one "$name" bash "$t" "$top/$build"
done
rm -rf "$PC_TEST_TMP"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
