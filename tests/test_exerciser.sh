#!/usr/bin/env bash
# tests/test_exerciser.sh BUILD_DIR - tests/exerciser.c, the model-checked
# random exerciser of every call the shim serves, under `pagecache exec`.
#
# Each single-process run is made twice with one seed: plainly (the model
# against the kernel: that checks the model itself) and under the shim.
# Both must agree with the model at every op, and with each other at the
# end: one seed does the same ops everywhere, so the two end with the same
# sizes and digest, and skip the same ops as not supported (fallocate
# modes, RWF_NOWAIT) - an op the shim refuses where the kernel serves it
# fails here.  The configurations: shared caches of 1M, 2M and 8M (files
# of up to 1 MiB, three of them: four times the smallest budget), one with
# files of 2 MiB, --private, and half of them with -F (fork and exec ops
# in one process).  Then the multi-process mode (-P 3: three workers on
# files of their own and one shared file under an fcntl lock), plainly
# with -F and under a shared cache.
#
# Copies from ranges past the source's end (-E: copy_file_range,
# sendfile, splice) and the multi-process mode with fork and exec ops
# (-P 3 -F) under a shared cache run too: before issue 36's fixes the
# first copied bytes past EOF (-S 1 -N 5000 -E under --memory 2M: op 3087
# copied 44216 bytes from 9708 of a file of 32768, the kernel 23060), and
# the second lost a fork child's writes to the other workers' cache (-S 50
# -N 3000 -P 3 -F: fstat 2519 where the model had 9233), since the shim
# handed inherited descriptors to the kernel.
# PC_SEED=N sets the first seed (the runs take N, N+1, ...); each run
# prints its own, and a failure the command that replays it.  Exit 0 pass.
set -u
build=${1:?usage: tests/test_exerciser.sh BUILD_DIR}
bin="$build/pagecache"
ex="$build/tests/exerciser"
ops=${PC_EXERCISER_OPS:-10000}
seed=${PC_SEED:-$(( $(date +%s%N) / 1000 % 1000000007 ))}
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-fsx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
for f in "$bin" "$ex"; do
	[ -x "$f" ] || { echo "FAIL: $f is missing (make V=test tests)"; exit 1; }
done
echo "exerciser runs from seed $seed ($ops ops each; PC_SEED=$seed replays them)"

# run NAME LOG COMMAND...: one exerciser run, its log kept; 0 if it passed.
run() {
	local name=$1 log=$2; shift 2
	if "$@" >"$log" 2>&1; then
		echo "ok   $name: $(grep 'agreed' "$log" | tail -n 1)"
		return 0
	fi
	echo "FAIL $name: $*"
	tail -n 40 "$log" | sed 's/^/    /'
	failed=$((failed + 1))
	return 1
}

# pair NAME SEED "EXEC OPTIONS" "EXERCISER OPTIONS": plain, then the shim.
pair() {
	local name=$1 s=$2 eopts=$3 xopts=$4 p c
	p="$tmp/$name.plain" c="$tmp/$name.shim"
	# shellcheck disable=SC2086
	run "$name plain" "$p" "$ex" -S "$s" -N "$ops" -d "$tmp" $xopts || return
	# shellcheck disable=SC2086
	run "$name under pagecache exec $eopts" "$c" \
		"$bin" exec $eopts -- "$ex" -S "$s" -N "$ops" -d "$tmp" $xopts || return
	local a b
	a=$(grep 'agreed\|not supported' "$p" | sed 's/ on [^ ]* (/ (/' | sort)
	b=$(grep 'agreed\|not supported' "$c" | sed 's/ on [^ ]* (/ (/' | sort)
	if [ "$a" != "$b" ]; then
		echo "FAIL $name: the shim's run of seed $s ended otherwise than the kernel's"
		diff <(echo "$a") <(echo "$b") | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

pe="-E"
pair shared-2M   "$seed"         "--memory 2M --cache tfsx2-$$"  "$pe"
pair shared-1M   "$((seed + 1))" "--memory 1M --cache tfsx1-$$"  "-F $pe"
pair shared-8M   "$((seed + 2))" "--memory 8M --cache tfsx8-$$"  "$pe"
pair shared-1M-big "$((seed + 3))" "--memory 1M --cache tfsx1-$$" "-L 2097152 -l 524288 $pe"
pair private-2M  "$((seed + 4))" "--memory 2M --private"         "-F $pe"

mp=$((ops / 2))
run "multi-process plain -P 3 -F" "$tmp/mp.plain" \
	"$ex" -S "$((seed + 5))" -N "$mp" -d "$tmp" -P 3 -F $pe
run "multi-process -P 3 under pagecache exec --memory 2M" "$tmp/mp.shim" \
	"$bin" exec --memory 2M --cache "tfsx2-$$" -- \
	"$ex" -S "$((seed + 6))" -N "$mp" -d "$tmp" -P 3 $pe
run "multi-process -P 3 -F under pagecache exec --memory 2M" "$tmp/mpf.shim" \
	"$bin" exec --memory 2M --cache "tfsx2-$$" -- \
	"$ex" -S "$((seed + 7))" -N "$mp" -d "$tmp" -P 3 -F $pe
[ "$failed" -eq 0 ] && echo "exerciser: every run agreed (seeds $seed..$((seed + 7)))"
[ "$failed" -eq 0 ]
