#!/usr/bin/env bash
# tests/test_copy.sh BUILD_DIR - copy_file_range, sendfile and splice under
# the shim give what the kernel gives.  tests/copy_helper.c makes the same
# calls twice, plain (the kernel's answers) and under `pagecache exec
# --memory 1M` (the shim's, on a cache smaller than the files): the
# directed calls (past either end, every alignment, one file and two,
# overlaps, len 0, offsets by pointer or not, O_APPEND, pipes and sockets,
# libc's calls and syscall(2)'s), then random ones from a seed (PC_SEED=N
# replays one).  Each call's line must be the same: its return and errno,
# the offsets, what reached the pipe or socket, both files' sizes and
# contents.  Then, each run ended, the files on the disk must be the same,
# byte for byte and hole for hole (their SEEK_DATA/SEEK_HOLE maps, read
# plain).  Exit 0 pass, 1 fail.
set -u
build=${1:?usage: tests/test_copy.sh BUILD_DIR}
bin="$build/pagecache"
helper="$build/tests/copy_helper"
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-copy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
seed=${PC_SEED:-$(( ($(date +%s%N) ^ $$) & 0xffffffff ))}
echo "seed $seed (replay with PC_SEED=$seed)"
failed=0
for round in 0 1; do
	s=$((seed + round))
	mkdir -p "$tmp/k$round" "$tmp/s$round"
	"$helper" run "$tmp/k$round" "$s" 400 > "$tmp/k$round.out" 2>&1
	"$bin" exec --memory 1M -- "$helper" run "$tmp/s$round" "$s" 400 \
		> "$tmp/s$round.out" 2>&1
	if ! diff "$tmp/k$round.out" "$tmp/s$round.out" > "$tmp/d$round"; then
		echo "FAIL seed $s: the calls differ (< kernel, > shim):"
		head -n 20 "$tmp/d$round"
		failed=1
		continue
	fi
	for f in a b; do
		if ! cmp "$tmp/k$round/$f" "$tmp/s$round/$f"; then
			echo "FAIL seed $s: $f differs on the disk"
			failed=1
		fi
		"$helper" holes "$tmp/k$round/$f" > "$tmp/kh"
		"$helper" holes "$tmp/s$round/$f" > "$tmp/sh"
		if ! diff "$tmp/kh" "$tmp/sh"; then
			echo "FAIL seed $s: $f's holes differ on the disk (< kernel)"
			failed=1
		fi
	done
	echo "ok   seed $s: $(wc -l < "$tmp/k$round.out") calls the same, files and holes the same"
done
exit $failed
