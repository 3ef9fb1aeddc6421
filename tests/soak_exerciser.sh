#!/usr/bin/env bash
# tests/soak_exerciser.sh BUILD_DIR MINUTES - `make soak`: tests/exerciser.c
# under `pagecache exec` with fresh seeds until MINUTES have passed, each
# run's seed and configuration printed before it starts; the first failure
# stops it with the exerciser's report (op log, first differing offset, the
# command that replays it).  The runs take turns among shared caches of 1M,
# 2M and 8M, --private, files of 1 or 2 MiB, one process or three workers
# (-P 3 -F), -F (fork and exec) in a single process, copies from past
# the source's end (-E) in every run.  Not a test of the suite: it runs
# for minutes.
set -u
build=${1:?usage: tests/soak_exerciser.sh BUILD_DIR MINUTES}
minutes=${2:-5}
bin="$build/pagecache"
ex="$build/tests/exerciser"
ops=${PC_EXERCISER_OPS:-20000}
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pcsoak.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
end=$(( $(date +%s) + minutes * 60 ))
mems=(1M 2M 8M)
n=0
extra="-E"
echo "soak: $minutes minutes of exerciser runs ($ops ops each)"
while [ "$(date +%s)" -lt "$end" ]; do
	seed=$(( ($(date +%s%N) / 1000 + n * 7919) % 1000000007 ))
	mem=${mems[$((n % 3))]}
	cache="--cache soak$mem-$$"
	[ $((n % 5)) = 4 ] && cache="--private"
	opts="$extra"
	[ $((n % 2)) = 1 ] && opts="$opts -L 2097152 -l 524288"
	if [ $((n % 4)) = 3 ]; then
		opts="$opts -P 3 -F"
		[ "$cache" = "--private" ] && cache="--cache soak$mem-$$"	# a shared file wants one cache
	elif [ $((n % 3)) = 1 ]; then
		opts="$opts -F"
	fi
	echo "run $n: seed $seed: pagecache exec --memory $mem $cache -- exerciser -S $seed -N $ops$opts"
	# shellcheck disable=SC2086
	if ! "$bin" exec --memory "$mem" $cache -- "$ex" -S "$seed" -N "$ops" -d "$tmp" $opts \
		>"$tmp/log" 2>&1; then
		cat "$tmp/log"
		echo "soak: FAILED at run $n, seed $seed (replay: $bin exec --memory $mem $cache -- $ex -S $seed -N $ops$opts)"
		exit 1
	fi
	grep 'agreed' "$tmp/log" | tail -n 1
	n=$((n + 1))
done
echo "soak: $n runs agreed with the model"
