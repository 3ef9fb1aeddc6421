#!/usr/bin/env bash
# scripts/exec-vs-memcg.sh DIR [BUDGET] [SECONDS] - real programs on a
# budget: fio randread and db_bench readrandom under `pagecache exec
# --memory BUDGET`, next to the same program in a memory cgroup of BUDGET
# (the kernel's page cache, cgroup v1 or v2) and with O_DIRECT reads (the
# device alone: the limit a cache is measured against), in one run.
#
# DIR holds the data, made on first use and kept: fio.dat (4 x BUDGET) and
# a RocksDB database of about 4 x BUDGET (fillseq, 400-byte values: every
# key read is found).
# fio reads uniformly with repeats (norandommap: its random map would read
# each block once a pass, and it drops the file's pages at each pass
# unless invalidate=0), so a budget of a quarter of the file can hit a
# quarter of the reads.  Each run starts cold: the kernel's pages of the files are dropped first
# (fadvise DONTNEED, as `dd iflag=nocache count=0` does), so the cgroup
# run cannot hit pages charged to someone else.  The pagecache run sits in
# a cgroup without a limit, to report its peak memory (the budget plus
# the program's own).  Prints one line per program and engine, and the
# ratios to the cgroup.  Needs root for the cgroup; the cgroup runs are
# skipped with a message otherwise.
#
#   scripts/exec-vs-memcg.sh /var/tmp/pcx-fig 256M 30
set -u
dir=${1:?usage: scripts/exec-vs-memcg.sh DIR [BUDGET] [SECONDS]}
budget=${2:-256M}
secs=${3:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
pcx=${PAGECACHE:-$top/build/release/pagecache}
bytes=$(numfmt --from=iec "$budget") || exit 2
[ -x "$pcx" ] || { echo "no $pcx: make first" >&2; exit 1; }
for p in fio db_bench; do
	command -v $p >/dev/null || { echo "$p missing: scripts/deps.sh" >&2; exit 1; }
done
mkdir -p "$dir" && cd "$dir" || exit 1

# ---------------------------------------------------------------- cgroups
# Our own cgroup in the v1 memory hierarchy, else in v2.
cgv=0 cgroot=
if line=$(grep -m1 '^[0-9]*:memory:' /proc/self/cgroup) &&
   [ -d "/sys/fs/cgroup/memory${line#*:memory:}" ]; then
	cgv=1 cgroot=/sys/fs/cgroup/memory${line#*:memory:}
elif line=$(grep -m1 '^0::' /proc/self/cgroup) &&
     [ -f "/sys/fs/cgroup${line#0::}/cgroup.controllers" ]; then
	cgv=2 cgroot=/sys/fs/cgroup${line#0::}
fi
cg_make() {	# NAME LIMIT_BYTES|max: a fresh cgroup, its path on stdout
	local d=$cgroot/$1
	[ -d "$d" ] && rmdir "$d" 2>/dev/null
	mkdir -p "$d" 2>/dev/null || return 1
	if [ $cgv = 1 ]; then
		[ "$2" = max ] || echo "$2" > "$d/memory.limit_in_bytes" || return 1
	else
		echo "$2" > "$d/memory.max" || return 1
	fi
	echo "$d"
}
cg_peak() {	# PATH: the cgroup's peak memory, MiB
	local f=$1/memory.max_usage_in_bytes
	[ $cgv = 2 ] && f=$1/memory.peak
	[ -f "$f" ] && echo $(( $(cat "$f") >> 20 )) || echo "?"
}
# in_cg PATH COMMAND...: the command as a member of the cgroup.
in_cg() { local d=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@"; }
cold() { for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done; }

limited=
if [ $cgv != 0 ] && limited=$(cg_make pcx-kernel "$bytes") &&
   unlimited=$(cg_make pcx-pagecache max); then
	:
else
	echo "no memory cgroup could be made (cgroup v$cgv, $cgroot): kernel runs skipped" >&2
	limited= unlimited=
fi

# ---------------------------------------------------------------- data
if [ ! -f fio.dat ] || [ "$(stat -c %s fio.dat)" -ne $((4 * bytes)) ]; then
	fio --name=prep --filename=fio.dat --size=$((4 * bytes)) --bs=1M \
	    --rw=write --ioengine=psync --end_fsync=1 --output=/dev/null || exit 1
fi
num=$((4 * bytes / 420))	# key + value + overhead per record
if [ ! -f "rdb.$num/CURRENT" ]; then
	rm -rf rdb.*
	db_bench --benchmarks=fillseq --num=$num --value_size=400 \
	    --compression_type=none --db="rdb.$num" --seed=7 > fill.out 2>&1 &&
	# the memtable left in the WAL flushed now, not in the first run
	db_bench --benchmarks=readrandom --use_existing_db=1 --db="rdb.$num" \
	    --num=$num --reads=1 >> fill.out 2>&1 || { tail fill.out; exit 1; }
fi

# ---------------------------------------------------------------- runs
# run ENGINE PROGRAM ARGS...: ENGINE pagecache | kernel | direct.
run() {
	local engine=$1; shift
	case $engine in
	pagecache)
		if [ -n "$unlimited" ]; then
			in_cg "$unlimited" "$pcx" exec --memory "$budget" --stats "$PWD/stats.$engine" -- "$@"
		else
			"$pcx" exec --memory "$budget" --stats "$PWD/stats.$engine" -- "$@"
		fi ;;
	kernel)	in_cg "$limited" "$@" ;;
	direct)	"$@" ;;
	esac
}
peak() {	# ENGINE: peak memory of its run
	case $1 in
	pagecache) [ -n "$unlimited" ] && cg_peak "$unlimited" || echo "?" ;;
	kernel) cg_peak "$limited" ;;
	*) echo - ;;
	esac
}
reset_cg() {	# fresh cgroups: the peak is this run's
	[ -n "$limited" ] || return 0
	limited=$(cg_make pcx-kernel "$bytes") && unlimited=$(cg_make pcx-pagecache max)
}

engines="pagecache kernel direct"
[ -n "$limited" ] || engines="pagecache direct"
echo "budget $budget, ${secs}s a run, load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cpus"
printf '%-20s %-10s %14s %10s  %s\n' program engine throughput "peak MiB" note
declare -A fio_iops rdb_ops
for e in $engines; do
	reset_cg
	cold fio.dat
	d=0; [ $e = direct ] && d=1
	run $e fio --name=randread --filename=fio.dat --rw=randread --bs=4k \
	    --ioengine=psync --numjobs=2 --thread --direct=$d --time_based \
	    --norandommap --random_generator=tausworthe64 --invalidate=0 \
	    --runtime="$secs" --ramp_time=5 --group_reporting \
	    --output-format=json --output="fio.$e.json" >/dev/null 2>&1
	iops=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' "fio.$e.json" 2>/dev/null || echo "?")
	fio_iops[$e]=$iops
	note=
	[ $e = pagecache ] && note="$(awk '$1=="managed_read_bytes"{r=$2} $1=="pgpgin"{i=$2} END{if(r) printf "%.0f%% of the bytes read came from the disk", 100*i*1024/r}' stats.$e 2>/dev/null)"
	printf '%-20s %-10s %10s IOPS %10s  %s\n' "fio randread 4k" $e "$iops" "$(peak $e)" "$note"
done
for e in $engines; do
	reset_cg
	cold rdb.$num/*
	extra=; [ $e = direct ] && extra=--use_direct_reads=true
	run $e db_bench --benchmarks=readrandom --use_existing_db=1 --db="rdb.$num" \
	    --num=$num --value_size=400 --compression_type=none --threads=2 \
	    --cache_size=8388608 --duration="$secs" --verify_checksum=1 --seed=11 \
	    $extra > "rdb.$e.out" 2>&1
	ops=$(awk '$1=="readrandom" { for (i = 1; i <= NF; i++) if ($(i+1) == "ops/sec") print $i }' "rdb.$e.out" | tail -1)
	found=$(grep -o '[0-9]* of [0-9]* found' "rdb.$e.out" | tail -1)
	[ -n "$ops" ] || { ops="?"; found="failed: $(tail -1 "rdb.$e.out")"; }
	rdb_ops[$e]=$ops
	printf '%-20s %-10s %9s ops/s %10s  %s\n' "db_bench readrandom" $e "$ops" "$(peak $e)" "$found"
done
if [ -n "$limited" ]; then
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 && b + 0) printf "%.2fx", a / b; else print "?" }'; }
	echo "pagecache / kernel:  fio randread $(ratio "${fio_iops[pagecache]}" "${fio_iops[kernel]}"), db_bench readrandom $(ratio "${rdb_ops[pagecache]}" "${rdb_ops[kernel]}")"
	rmdir "$limited" "$unlimited" 2>/dev/null
fi
