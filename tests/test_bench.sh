#!/usr/bin/env bash
# tests/test_bench.sh BUILD_DIR - the benchmark lab's harness, not its speed.
#
#   1. bad command lines get their error message and a non-zero exit;
#   2. every workload (but the pgbench-* ones: their server does not fit the
#      kernel's 8M cgroup, and as root its directory must be the postgres
#      user's; tests/test_mp_coherence.sh runs PostgreSQL under pagecache
#      exec) runs at a tiny scale (budget 8M,
#      one repetition, --duration 1) on every engine, and each writes a
#      well-formed result
#      file (bench/results/README.md) with the figures it must have (and
#      counter samples never closer than 5 ms), or an n/a file where the
#      engine cannot serve it; the limit engine only where a workload names
#      it (the cached-read rows); no test file is left; a --budget list runs
#      each workload at each budget; a workload with a warm-up (the
#      list's "warm-up:") records it in each repetition's "warmup" (what,
#      seconds, capped, its own counter deltas; on direct "skipped"), its
#      samples before t = 0, and the measured counters exclude it:
#      seq-write's pages dirtied (pagecache: exactly) or bytes dirtied
#      (kernel, dontcache: and their metadata, under 1/64 more) are the
#      warm-up's B in "warmup" and the measured 3 x B in "vmstat";
#      cached-read's file is read in (pgpgin, the device's bytes) in the
#      warm-up and never in the measured part; repetitions run by turns,
#      every other one backwards (pagecache's first, kernel's first,
#      kernel's second, pagecache's second, by each rep's "started_at"),
#      one result after the other with
#      --order sequential; --variant's config runs beside the base, by
#      turns;
#   3. without a memory cgroup the kernel engine runs unconstrained and says
#      so, on screen and in its file;
#   4. a run interrupted by SIGINT exits 130, marks its result partial and
#      leaves no test file behind (kernel and pagecache engines);
#   5. --profile stores perf's top symbols as perf-profile.self.cycles-pp.*
#      metrics (kernel symbols for the kernel engine); without perf the
#      run says so and goes on.
#
# Exit 0 pass, 1 fail, 77 skip (no python3 to read the JSON).  Test files
# go under $PC_TEST_DIR (default /var/tmp: O_DIRECT needs a disk).
set -u
build=${1:?usage: tests/test_bench.sh BUILD_DIR}
bin="$build/pagecache"
if [ ! -x "$bin" ]; then
	echo "FAIL: no $bin"
	exit 1
fi
if ! command -v python3 >/dev/null; then
	echo "python3 is needed to check the result files"
	exit 77
fi
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-bench.XXXXXX")
cleanup() {
	mountpoint -q "$tmp/small" 2>/dev/null && umount "$tmp/small"
	rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
ok()   { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

# ---------------------------------------------------------------- 1 ---
echo "== bad command lines: an error naming the problem, non-zero exit"
expect_error() {	# expected-text, args...
	local want=$1 out rc
	shift
	# the folders first, so that a case's own --dir or missing value wins
	out=$("$bin" "$1" --dir "$tmp" --out "$tmp/never" "${@:2}" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
		ok "pagecache $* -> exit $rc: $(head -n 1 <<<"$out")"
	else
		fail "pagecache $*: exit $rc, wanted an error with '$want', got: $out"
	fi
}
expect_error "unknown workload 'nosuch'" bench --workload seq-write,nosuch
expect_error "unknown engine 'nosuch'" bench --engine kernel,nosuch
expect_error "too small" bench --budget 1M
expect_error "bad --budget" bench --budget lots
expect_error "bad --budget" bench --budget 8M,lots
expect_error "twice in --budget" bench --budget 8M,8M
expect_error "more than this machine has" bench --budget 64T
expect_error "bad --reps" bench --reps 0
expect_error "bad --order" bench --order random
expect_error "bad --duration" bench --duration -1
expect_error "KEY=VALUE" bench --set nokey
expect_error "--budget" bench --set memory=1G
expect_error "KEY=VALUE" bench --variant nokey
expect_error "KEY=VALUE" bench --variant shared=on,
expect_error "twice" bench --variant shared=on --variant shared=on
expect_error "at most two" bench -V a=1 -V b=1 -V c=1
expect_error "refuses the config" bench --engine pagecache --budget 8M --variant no.such.key=1
expect_error "unknown option" bench --bogus
expect_error "needs a value" bench --workload
expect_error "unexpected argument" bench stray
expect_error "not a writable folder" bench --engine kernel --dir /nonexistent/dir
expect_error "refuses the config" bench --engine pagecache --budget 8M --set no.such.key=1
expect_error "unknown workload" run --workload nosuch
out=$("$bin" nosuch 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -q "unknown command" <<<"$out"; then
	ok "pagecache nosuch -> exit $rc"
else
	fail "pagecache nosuch: exit $rc: $out"
fi
[ -e "$tmp/never" ] && fail "a refused command line made its --out folder"

# A disk too full for the run, and a folder that refuses O_DIRECT: tmpfs.
mkdir -p "$tmp/small"
if mount -t tmpfs -o size=8m tmpfs "$tmp/small" 2>/dev/null; then
	out=$("$bin" bench --engine kernel --workload seq-write --budget 8M \
	      --dir "$tmp/small" --out "$tmp/never" 2>&1); rc=$?
	if [ "$rc" -ne 0 ] && grep -q "not enough free space" <<<"$out"; then
		ok "disk too full -> exit $rc: $out"
	else
		fail "disk too full: exit $rc: $out"
	fi
	umount "$tmp/small"
	# tmpfs takes O_DIRECT since Linux 6.6: then there is nothing to refuse
	mount -t tmpfs -o size=64m tmpfs "$tmp/small"
	out=$("$bin" bench --engine direct --workload readonce --budget 4M \
	      --reps 1 --duration 0.2 --dir "$tmp/small" --out "$tmp/odirect" 2>&1); rc=$?
	if [ "$rc" -ne 0 ] && grep -q "refuses O_DIRECT" <<<"$out"; then
		ok "O_DIRECT refused -> exit $rc"
	elif [ "$rc" -eq 0 ]; then
		echo "skip O_DIRECT-refused check: this kernel's tmpfs takes O_DIRECT"
	else
		fail "O_DIRECT refused: exit $rc: $out"
	fi
	umount "$tmp/small"
else
	echo "skip disk-full and O_DIRECT checks: cannot mount a tmpfs here"
fi

for args in "bench --help" "bench --list" "run --help" "help" "help bench" "version"; do
	# shellcheck disable=SC2086
	if "$bin" $args >/dev/null 2>&1; then ok "pagecache $args -> 0"
	else fail "pagecache $args: non-zero exit"; fi
done

# ---------------------------------------------------------------- 2 ---
echo "== every workload on every engine at budget 8M, one repetition"
mkdir -p "$tmp/files"
# every workload but the pgbench-* ones (see the top)
"$bin" bench --list >"$tmp/list.txt"
every=$(awk '$4 == "(hi)" || $4 == "(lo)" { print $2 }' "$tmp/list.txt" |
	grep -v "^pgbench-" | paste -sd, -)
t0=$(date +%s)
"$bin" bench --workload "$every" --engine all --budget 8M --reps 1 --duration 1 \
	--dir "$tmp/files" --out "$tmp/out" >"$tmp/all.log" 2>&1
rc=$?
echo "   ($(($(date +%s) - t0)) s, exit $rc)"
if [ "$rc" -ne 0 ]; then
	fail "bench --workload $every: exit $rc"
	sed 's/^/    /' "$tmp/all.log"
fi
if [ -n "$(ls -A "$tmp/files")" ]; then
	fail "test files left behind: $(ls -A "$tmp/files")"
else
	ok "no test files left behind"
fi

python3 - "$tmp/out" "$tmp/list.txt" "$every" <<'EOF' || failed=1
import json, os, re, sys

out, listing = sys.argv[1], open(sys.argv[2]).read()
listed = re.findall(r"^  \S+\s+(\S+)\s+\S+\s+\((?:hi|lo)\)\s+(\S+)", listing, re.M)
names = [n for n in listed if n[0] in sys.argv[3].split(",")]
# the workloads with a warm-up: "    warm-up: WHAT" two lines below
warmed = set(re.findall(r"^  \S+\s+(\S+)\s.*\n    .*\n    warm-up: ", listing, re.M))
engines = ["pagecache", "kernel", "dontcache", "direct", "limit"]
bad = 0

# figures each workload must report besides its headline (prefix match)
must = {
    "seq-write": ["MB/s", "seconds", "fsync-seconds"],
    "dd-async": ["slowest-seconds", "mean-seconds", "MB/s"],
    "readtwice": ["KB/s", "seconds"],
    "readonce": ["KB/s", "seconds"],
    "aim7-": ["jobs-per-min", "seconds", "jobs"],
    "fsmark-": ["files/s", "app-overhead-us"],
    "tiobench-": ["seq-write-MB/s", "rand-write-MB/s", "seq-read-MB/s",
                  "rand-read-MB/s", "seq-read-latency-max-ms",
                  "seq-read-cached-MB", "rand-read-dev-read-MB",
                  "rand-read-from-cache%", "seq-write-reclaimed-MB"],
    "randread-cold-": ["IOPS/thread", "IOPS", "latency-mean-us",
                       "latency-p99-us"],
    "hotcold": ["hit-during%", "hit-after%", "ops/s", "stream-MB/s"],
    "cached-read-": ["reads/s/thread"],
    "fio-": ["peak-rss-MiB"], "rocksdb-": ["ops/s", "peak-rss-MiB"],
    "sqlite-": ["transactions/s", "peak-rss-MiB"],
    "sysbench-": ["fsyncs/s", "latency-p95-ms", "peak-rss-MiB"],
}
# real programs (test_bench_programs.sh checks them), by the list's
# "[program: NAME]": their cache is in the program's process, so no create
# figures and no live samples
programs = set(re.findall(r"^  \S+\s+(\S+)\s.*\[program: ", listing, re.M))
must_pc = {"cached-read-": ["zc-reads/s/thread"],
           "tiobench-": ["rand-read-hit%", "seq-read-ra-unused-MB"],
           "dd-async": ["waitqueue-lookups/page"],
           "": ["create-ms", "rss-after-create-MiB", "rss-end-MiB"]}
must_limit = {"cached-read-": ["reads/s/thread", "ns/read", "zc-reads/s/thread",
                               "zc-ns/read"]}

def say(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad = 1

def check(path, wl, engine, served):
    problems = []
    try:
        d = json.load(open(path))
    except Exception as e:
        return ["unreadable: %s" % e]
    want = ["format", "workload", "engine", "label", "config", "params",
            "machine", "constrained", "partial", "status", "reason",
            "headline", "reps", "started"]
    problems += ["no %s" % k for k in want if k not in d]
    if problems:
        return problems
    if d["format"] != "pagecache-result-1": problems.append("format")
    if d["workload"] != wl: problems.append("workload %r" % d["workload"])
    if d["engine"] != engine: problems.append("engine %r" % d["engine"])
    for k in ["cpu", "cores", "memory", "kernel", "fs", "device", "hostname"]:
        if k not in d["machine"]: problems.append("machine.%s" % k)
    if not isinstance(d["params"], dict) or not d["params"]:
        problems.append("params")
    if d["partial"] is not False: problems.append("partial")
    if not isinstance(d["constrained"], bool): problems.append("constrained")
    if not re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", d["started"]):
        problems.append("started")
    h = d["headline"]
    if not isinstance(h.get("metric"), str) or not isinstance(h.get("higher_is_better"), bool):
        problems.append("headline")
    if not served:
        if d["status"] != "n/a" or not d["reason"] or d["reps"]:
            problems.append("should be n/a with a reason, got %s" % d["status"])
        return problems
    if d["status"] == "n/a" and engine == "dontcache" and "RWF_DONTCACHE" in d["reason"]:
        return problems          # this kernel refuses it: said so
    if d["status"] != "ok":
        return problems + ["status %s: %s" % (d["status"], d["reason"])]
    if len(d["reps"]) != 1:
        return problems + ["%d reps" % len(d["reps"])]
    rep = d["reps"][0]
    m = rep.get("metrics", {})
    if not m or list(m)[0] != h["metric"]:
        problems.append("headline %s not first in metrics" % h["metric"])
    for k, v in m.items():
        if not isinstance(v, (int, float)): problems.append("metric %s" % k)
    program = wl in programs
    pc_keys = [*must_pc.items()] if engine == "pagecache" and not program else []
    for prefix, keys in list(must.items()) + pc_keys:
        if wl.startswith(prefix):
            problems += ["no metric %s" % k for k in keys if k not in m]
    if engine == "limit":        # no cache: no counters, no samples
        for prefix, keys in must_limit.items():
            if wl.startswith(prefix):
                problems += ["no metric %s" % k for k in keys if k not in m]
        return problems
    vm = rep.get("vmstat", {})
    if not vm or not all(isinstance(v, int) for v in vm.values()):
        problems.append("vmstat")
    if "io.read_bytes" not in vm:
        problems.append("vmstat lacks io.read_bytes")
    if wl.startswith("tiobench-"):
        ph = rep.get("phases", {})
        if sorted(ph) != sorted(["seq-write", "rand-write", "seq-read", "rand-read"]):
            problems.append("phases: %s" % sorted(ph))
        elif not all(isinstance(v, int) for d in ph.values() for v in d.values()):
            problems.append("phases: counters not integers")
    if engine == "pagecache" and "nr_free_pages" not in vm:
        problems.append("vmstat lacks nr_free_pages")
    if engine != "pagecache" and "pgpgin" not in vm:
        problems.append("vmstat lacks /proc/vmstat's pgpgin")
    if engine != "pagecache" and d["constrained"] and not any(k.startswith("memcg.") for k in vm):
        problems.append("vmstat lacks memory.stat deltas")
    s = rep.get("samples", {})
    w = rep.get("warmup")
    if wl not in warmed:
        if w is not None: problems.append("a warm-up it does not have")
        if any(t < 0 for t in s.get("t", [])): problems.append("samples before 0")
    elif not isinstance(w, dict) or not isinstance(w.get("what"), str) or \
            not isinstance(w.get("seconds"), (int, float)):
        problems.append("no warmup what/seconds: %s" % w)
    elif engine == "direct":     # no cache: steady from the start
        if not w.get("skipped") or w["seconds"] != 0 or \
                any(t < 0 for t in s.get("t", [])):
            problems.append("direct's warm-up not skipped: %s" % w)
    else:
        wv = w.get("vmstat")
        if not isinstance(w.get("capped"), bool) or not isinstance(wv, dict) or \
                not wv or not all(isinstance(v, int) for v in wv.values()) or \
                w["seconds"] <= 0:
            problems.append("warmup: %s" % {k: v for k, v in w.items() if k != "vmstat"})
        # the warm-up's samples come before the measured part's 0
        if any(t < -w["seconds"] - 0.001 for t in s.get("t", [])):
            problems.append("samples before the warm-up: %s" % s["t"][:3])
    keys = ["t", "free", "inactive", "active", "dirty", "writeback"]
    if any(k not in s for k in keys):
        problems.append("samples lack %s" % [k for k in keys if k not in s])
    elif (len(s["t"]) < 1 and not (program and engine == "pagecache")) or \
            len({len(s[k]) for k in keys}) != 1:
        problems.append("samples: uneven or empty")
    elif any(b - a < 0.00499 for a, b in zip(s["t"], s["t"][1:])):
        problems.append("samples closer than 5 ms: %s" % s["t"][:8])
    return problems

say(len(listed) >= 22, "--list names %d workloads" % len(listed))
for wl, served_list in names:
    for e in engines:
        path = os.path.join(out, "%s-%s.json" % (wl, e))
        if e == "limit" and e not in served_list.split(","):
            say(not os.path.exists(path), "%s: no limit row" % wl)
            continue
        if not os.path.exists(path):
            say(False, "%s on %s: no result file" % (wl, e))
            continue
        p = check(path, wl, e, e in served_list.split(","))
        say(not p, "%s on %s%s" % (wl, e, ": " + "; ".join(p) if p else ""))
p = os.path.join(out, "seq-write-pagecache+nodes=4.json")
say(os.path.exists(p) and not check(p, "seq-write", "pagecache", True),
    "seq-write on pagecache with nodes=4")

# The warm-up is discarded: by counters, never by time.
def rep_of(wl, e):
    try:
        d = json.load(open(os.path.join(out, "%s-%s.json" % (wl, e))))
        return d, d["reps"][0]
    except Exception:
        return None, None
for e, key, unit in (("pagecache", "nr_dirtied", 4096), ("kernel", "io.write_bytes", 1),
                     ("dontcache", "io.write_bytes", 1)):
    d, r = rep_of("seq-write", e)
    if r is None or "time limit" in d.get("reason", "") or r["warmup"].get("capped"):
        print("     seq-write on %s: %s, not checked" % (e, "no result" if r is None else "capped"))
        continue
    warm, meas = r["warmup"]["vmstat"].get(key), r["vmstat"].get(key)
    want = (d["params"]["warmup_size"] // unit, d["params"]["file_size"] // unit)
    # pagecache's own count is exact; the kernel's bytes dirtied by the
    # process also count the few metadata blocks it dirtied (under 1/64)
    slack = 0 if e == "pagecache" else 64
    fits = warm is not None and meas is not None and all(
        w <= g <= w + (w // slack if slack else 0) for g, w in zip((warm, meas), want))
    say(fits, "seq-write on %s: %s %s in the warm-up, %s measured (want %s, %s%s)" %
        (e, key, warm, meas, *want, " or under 1/64 more" if slack else ""))
for e, key, unit in (("pagecache", "pgpgin", 1024), ("kernel", "io.read_bytes", 1)):
    d, r = rep_of("cached-read-T1", e)
    if r is None:
        say(False, "cached-read-T1 on %s: no result" % e)
        continue
    warm, meas = r["warmup"]["vmstat"].get(key), r["vmstat"].get(key)
    want = d["params"]["file_size"] // unit
    # The kernel's cgroup charges the process's own memory too, and may
    # reclaim a few of the file's pages while it runs (44 KiB of 4 MiB
    # were read again once, on a loaded machine): a sixteenth at most.
    # pagecache's budget holds the file whole: nothing is read.
    most = 0 if e == "pagecache" else want // 16
    say(warm is not None and warm >= want and meas is not None and meas <= most,
        "cached-read-T1 on %s: %s %s in the warm-up (the file: %d), %s measured" %
        (e, key, warm, want, meas))
sys.exit(bad)
EOF

echo "== a --budget list: each workload at each budget, the budget in the file name"
"$bin" bench --workload cached-read-T1 --engine pagecache,limit --budget 8M,12M \
	--reps 1 --duration 1 --dir "$tmp/files" --out "$tmp/budgets" >"$tmp/budgets.log" 2>&1
rc=$?
python3 - "$tmp/budgets" <<'EOF' || { failed=1; sed 's/^/    /' "$tmp/budgets.log"; }
import json, os, sys
bad = 0
for e in ("pagecache", "limit"):
    for b, size in (("8M", 8 << 20), ("12M", 12 << 20)):
        p = os.path.join(sys.argv[1], "cached-read-T1-%s-%s.json" % (e, b))
        try:
            d = json.load(open(p))
            good = (d["params"]["budget"] == size and d["status"] == "ok" and
                    d["config"].startswith("memory=%s" % b))
        except Exception as x:
            good = False
        print(("ok   " if good else "FAIL ") + "cached-read-T1 on %s at %s" % (e, b))
        bad |= not good
sys.exit(bad)
EOF
[ "$rc" -eq 0 ] || fail "bench --budget 8M,12M: exit $rc"

echo "== repetitions by turns, every other one backwards: pagecache 1, kernel 1, kernel 2, pagecache 2"
# by the order of the reps' "started_at", never by how long they took
for order in turns sequential; do
	"$bin" bench --workload dd-async --engine pagecache,kernel --budget 8M \
		--reps 2 --duration 1 --order "$order" --dir "$tmp/files" \
		--out "$tmp/order-$order" >"$tmp/order.log" 2>&1
	rc=$?
	got=$(python3 - "$tmp/order-$order" <<'EOF2' 2>&1
import json, os, sys
at = []
for e in ("pagecache", "kernel"):
    d = json.load(open(os.path.join(sys.argv[1], "dd-async-%s.json" % e)))
    at += [(r["started_at"], "%s%d" % (e[0], i + 1)) for i, r in enumerate(d["reps"])]
print(" ".join(name for _, name in sorted(at)))
EOF2
)
	want="p1 k1 k2 p2"
	[ "$order" = sequential ] && want="p1 p2 k1 k2"
	if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
		ok "--order $order: the reps started as $got"
	else
		fail "--order $order: exit $rc, the reps started as '$got', not $want"
		sed 's/^/    /' "$tmp/order.log"
	fi
done

echo "== --variant: a second pagecache config beside the base, by turns"
"$bin" bench --workload dd-async --engine pagecache --budget 8M --reps 2 \
	--duration 1 --variant readahead.max=0,writeback.dirty_background_ratio=5 \
	--dir "$tmp/files" --out "$tmp/variant" >"$tmp/variant.log" 2>&1
rc=$?
got=$(python3 - "$tmp/variant" <<'EOF2' 2>&1
import json, os, sys
at, configs = [], []
for n, f in (("b", "dd-async-pagecache.json"),
             ("v", "dd-async-pagecache+readahead.max=0,writeback.dirty_background_ratio=5.json")):
    d = json.load(open(os.path.join(sys.argv[1], f)))
    configs.append(d["config"])
    at += [(r["started_at"], "%s%d" % (n, i + 1)) for i, r in enumerate(d["reps"])]
print(" ".join(name for _, name in sorted(at)), "|", " | ".join(configs))
EOF2
)
want="b1 v1 v2 b2 | memory=8M | memory=8M readahead.max=0 writeback.dirty_background_ratio=5"
if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then
	ok "--variant: $got"
else
	fail "--variant: exit $rc, got '$got', not '$want'"
	sed 's/^/    /' "$tmp/variant.log"
fi

echo "== no memory cgroup: the run goes on unconstrained, and says so"
out=$(PAGECACHE_BENCH_NO_CGROUP=1 "$bin" bench --workload dd-async --engine kernel \
      --budget 8M --reps 1 --duration 1 --dir "$tmp/files" --out "$tmp/nocg" 2>&1); rc=$?
said=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["constrained"], d["config"], d["status"])' \
       "$tmp/nocg/dd-async-kernel.json" 2>&1)
if [ "$rc" -eq 0 ] && grep -q UNCONSTRAINED <<<"$out" && [ "$said" = "False memory=8M memcg=none ok" ]; then
	ok "unconstrained: on screen, and \"constrained\": false in the file"
else
	fail "unconstrained: exit $rc, file says '$said': $out"
fi

# ---------------------------------------------------------------- 4 ---
echo "== Ctrl-C: stop cleanly, remove the test files, mark the result partial"
for engine in kernel pagecache; do
	mkdir -p "$tmp/int-$engine"
	"$bin" bench --workload seq-write --engine "$engine" --budget 256M --reps 3 \
		--dir "$tmp/int-$engine" --out "$tmp/intout-$engine" >"$tmp/int.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 200); do	# until the writer's file exists
		compgen -G "$tmp/int-$engine/pagecache-bench.*/*/seq-write" >/dev/null && break
		sleep 0.05
	done
	sleep 0.3
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	left=$(ls -A "$tmp/int-$engine")
	partial=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["partial"])' \
		  "$tmp/intout-$engine/seq-write-$engine.json" 2>&1)
	if [ "$rc" -eq 130 ] && [ -z "$left" ] && [ "$partial" = True ]; then
		ok "$engine: SIGINT -> exit 130, no test files, result partial"
	else
		fail "$engine: SIGINT -> exit $rc, left: '$left', partial: $partial"
		sed 's/^/    /' "$tmp/int.log"
	fi
done

# ---------------------------------------------------------------- 5 ---
echo "== --profile: perf's top symbols as metrics; without perf, said and run"
out=$(PC_PERF=/nonexistent/perf "$bin" bench --workload seq-write --engine kernel \
      --budget 8M --reps 1 --profile --dir "$tmp/files" --out "$tmp/noperf" 2>&1); rc=$?
prof=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["reps"][0]["metrics"]; print(sum(k.startswith("perf-profile.") for k in m))' \
       "$tmp/noperf/seq-write-kernel.json" 2>&1)
if [ "$rc" -eq 0 ] && grep -q "perf not found.*running without profiles" <<<"$out" && [ "$prof" = 0 ]; then
	ok "no perf: said once, the run goes on without profiles"
else
	fail "no perf: exit $rc, $prof profile metrics: $out"
fi
if perf record -e cpu-clock -q -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	out=$("$bin" bench --workload seq-write --engine pagecache,kernel --budget 8M \
	      --reps 1 --profile --dir "$tmp/files" --out "$tmp/prof" 2>&1); rc=$?
	[ "$rc" -eq 0 ] || fail "bench --profile: exit $rc: $out"
	python3 - "$tmp/prof" <<'EOF2' || failed=1
import json, sys
bad = 0
for e in ["pagecache", "kernel"]:
    rep = json.load(open("%s/seq-write-%s.json" % (sys.argv[1], e)))["reps"][0]
    prof = rep.get("profile", {})
    names = [k for k in rep["metrics"] if k.startswith("perf-profile.self.cycles-pp.")]
    ok = prof.get("samples", 0) > 0 and len(names) == len(prof.get("top", [])) > 0 \
        and all(0 < rep["metrics"][k] <= 100 for k in names)
    if e == "kernel":	# the write path is the kernel's: its symbols show
        ok = ok and any(s["kernel"] for s in prof["top"])
    print(("ok   " if ok else "FAIL ") + "--profile on %s: %d symbols, %s" %
          (e, len(names), names[:3] if ok else prof))
    bad |= not ok
sys.exit(bad)
EOF2
else
	echo "   (perf cannot record here: the profile itself is not checked)"
fi

[ "$failed" -eq 0 ] && echo "all bench checks passed"
exit "$failed"
