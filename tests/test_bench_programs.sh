#!/usr/bin/env bash
# tests/test_bench_programs.sh BUILD_DIR - real programs in the lab
# (tools/bench/program.c): fio, db_bench, sqlite3 and sysbench as workloads, at a
# tiny budget so that it stays quick.  Their speed is not tested.
#
#   1. the program workloads (those `pagecache bench --list` marks
#      [program: NAME]; not the pgbench-* ones: their server does not fit the
#      kernel's 8M cgroup, and tests/test_mp_coherence.sh runs PostgreSQL
#      under pagecache exec) on pagecache, kernel, dontcache
#      and direct at budget 8M: pagecache (through `pagecache exec`) and
#      kernel have their headline (the list's) and the figures they must
#      have; the cache was used
#      (exec's counters: managed opens, pages read or dirtied); the kernel
#      engines' cgroup limit is the program's peak RSS under pagecache
#      less the files it maps (file-rss-MiB: binary, libraries; the fair
#      budget), both in the kernel's "fair_budget"; direct runs fio and sysbench
#      (direct=1) and is n/a for the others (the list's engines say which),
#      dontcache n/a for all;
#      pagecache's samples (the live counters its processes publish,
#      preload/live.h) have page counts: some sample has inactive or
#      active pages, so report.html draws them beside the kernel's cgroup;
#      each program's warm-up (the list's "warm-up:") is recorded on both
#      engines ("warmup": seconds, the counters up to the program's word
#      that it is over, its samples before t = 0), and fio-randread's,
#      a job reading B of the file, is in the warm-up's device reads;
#   2. with the kernel engine alone the peak RSS is measured first all
#      the same;
#   3. a program that is not installed makes its workload n/a, saying how
#      to install it;
#   4. --profile on a program workload profiles the program: samples of
#      its processes, the repetition's own left out, user-space symbols
#      (the program's, libc's, the shim's) among the top (skipped, saying
#      so, where perf cannot record).
#
# Exit 0 pass, 1 fail, 77 skip (no python3, or fio, db_bench, sqlite3 or sysbench
# missing: scripts/deps.sh installs them).
set -u
build=${1:?usage: tests/test_bench_programs.sh BUILD_DIR}
bin="$build/pagecache"
[ -x "$bin" ] || { echo "FAIL: no $bin"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to read the results"; exit 77; }
for p in fio db_bench sqlite3 sysbench; do
	command -v "$p" >/dev/null || { echo "$p is not installed (scripts/deps.sh)"; exit 77; }
done
tmp=$(mktemp -d "${PC_TEST_DIR:-/var/tmp}/pctest-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
mkdir -p "$tmp/files"

# The program workloads, from the binary's own list; but the pgbench-* ones (see
# the top).
"$bin" bench --list >"$tmp/list.txt" || { echo "FAIL bench --list"; exit 1; }
programs=$(sed -n 's/^  [^ ]*  *\([^ ]*\) .*\[program: .*/\1/p' "$tmp/list.txt" |
	grep -v "^pgbench-" | paste -sd, -)
[ -n "$programs" ] || { echo "FAIL no [program] workload in bench --list"; exit 1; }

echo "== the program workloads ($programs) x four engines at budget 8M"
t0=$(date +%s)
"$bin" bench --workload "$programs" --engine pagecache,kernel,dontcache,direct \
	--budget 8M --reps 1 --duration 1 --dir "$tmp/files" --out "$tmp/out" \
	>"$tmp/all.log" 2>&1
rc=$?
echo "   ($(($(date +%s) - t0)) s, exit $rc)"
if [ "$rc" -ne 0 ]; then
	echo "FAIL bench: exit $rc"; sed 's/^/    /' "$tmp/all.log"; failed=1
fi
[ -z "$(ls -A "$tmp/files")" ] || { echo "FAIL test files left: $(ls -A "$tmp/files")"; failed=1; }

python3 - "$tmp/out" "$tmp/list.txt" "$programs" <<'EOF' || failed=1
import json, os, re, sys
out = sys.argv[1]
# name -> (headline, engines), for each [program] workload of the list
listing = open(sys.argv[2]).read()
listed = {m[0]: (m[1], m[2].split(",")) for m in re.findall(
    r"^  \S+\s+(\S+)\s+(\S+)\s+\((?:hi|lo)\)\s+(\S+).*\[program: ",
    listing, re.M) if m[0] in sys.argv[3].split(",")}
warmed = set(re.findall(r"^  \S+\s+(\S+)\s.*\n    .*\n    warm-up: ", listing, re.M))
# figures some of them must have besides the headline
extra = {
    "fio-randread": ["clat-mean-us", "clat-p99-us", "read-MB"],
    "fio-seqwrite": ["written-MB"],
    "fio-zipf": ["hit%", "clat-p99-us"],
    "rocksdb-readrandom": ["latency-mean-us", "latency-p99-us"],
    "rocksdb-fillseq": ["latency-p99-us"],
    "sqlite-oltp": ["transactions", "seconds"],
    "sysbench-rndrw": ["reads/s", "writes/s", "fsyncs/s", "latency-p95-ms"],
    "sysbench-seqwr": ["written-MiB/s", "fsyncs/s"],
}
common = ["peak-rss-MiB", "program-seconds", "program-user-seconds"]
bad = 0
def say(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad |= not ok
def load(wl, e):
    try:
        return json.load(open(os.path.join(out, "%s-%s.json" % (wl, e))))
    except Exception as x:
        return {"status": "missing: %s" % x, "reason": "", "reps": []}
for wl, (headline, served) in listed.items():
    keys = [headline] + extra.get(wl, [])
    pc, k = load(wl, "pagecache"), load(wl, "kernel")
    for e, d in (("pagecache", pc), ("kernel", k)):
        if d["status"] != "ok" or len(d["reps"]) != 1:
            say(False, "%s on %s: %s %s" % (wl, e, d["status"], d["reason"]))
            continue
        m = d["reps"][0]["metrics"]
        miss = [x for x in keys + common if x not in m]
        say(not miss and list(m)[0] == keys[0] and m[keys[0]] > 0,
            "%s on %s: %s = %.1f%s" % (wl, e, keys[0], m.get(keys[0], 0),
                                       ", lacks %s" % miss if miss else ""))
    if pc["status"] != "ok" or k["status"] != "ok":
        continue
    for e, d in (("pagecache", pc), ("kernel", k)):
        r = d["reps"][0]
        w = r.get("warmup")
        if wl not in warmed:
            say(w is None, "%s on %s: no warm-up" % (wl, e))
            continue
        t = r["samples"]["t"]
        good = (isinstance(w, dict) and w.get("seconds", 0) > 0 and
                w.get("vmstat") and not w.get("skipped") and
                all(x >= -w["seconds"] - 0.001 for x in t))
        say(good, "%s on %s: warm-up recorded (%s s, %d of %d samples before 0)" %
            (wl, e, w and w.get("seconds"), sum(x < 0 for x in t), len(t)))
        if good and wl == "fio-randread":
            got = w["vmstat"].get("io.read_bytes", 0)
            say(got >= pc["params"]["warmup_size"],
                "%s on %s: the warm-up's job read %d bytes (B: %d)" %
                (wl, e, got, pc["params"]["warmup_size"]))
    # the warm-up's counters and the measured part's, together
    vm = dict(pc["reps"][0]["vmstat"])
    for key, v in pc["reps"][0].get("warmup", {}).get("vmstat", {}).items():
        vm[key] = vm.get(key, 0) + v
    used = vm.get("managed_opens", 0) > 0 and vm.get("pgpgin", 0) + vm.get("nr_dirtied", 0) > 0
    say(used, "%s: the program's files went through its cache (managed_opens %s, "
        "pgpgin %s, nr_dirtied %s)" % (wl, vm.get("managed_opens"), vm.get("pgpgin"),
                                       vm.get("nr_dirtied")))
    sm = pc["reps"][0]["samples"]
    pages = [a + b for a, b in zip(sm.get("inactive", []), sm.get("active", []))]
    say(len(sm["t"]) > 0 and len(pages) == len(sm["t"]) and max(pages + [0]) > 0,
        "%s: pagecache's samples have page counts (%d samples, most inactive+active %d)" %
        (wl, len(sm["t"]), max(pages + [0])))
    pm = pc["reps"][0]["metrics"]
    files = pm.get("file-rss-MiB", 0)
    peak = int((pm["peak-rss-MiB"] - files) * (1 << 20))
    par = k.get("fair_budget", {})
    fair = ("file-rss-MiB" in pm and 0 < files < pm["peak-rss-MiB"] and
            abs(par.get("pagecache_peak_rss", 0) - peak) <= 1 and
            abs(par.get("memcg_limit", 0) - peak) <= 4096 and
            "memcg.v" in k["config"] and len(k["reps"][0]["samples"]["t"]) > 0)
    say(fair or not k["constrained"],
        "%s: kernel's cgroup limit %s = pagecache's peak RSS less its mapped "
        "files (%.1f MiB) %d (%s)" %
        (wl, par.get("memcg_limit"), files, peak, k["config"]))
    for e in ("dontcache", "direct"):
        d = load(wl, e)
        if e in served:         # fio's direct=1
            good = d["status"] == "ok" and len(d["reps"]) == 1
        else:
            good = d["status"] == "n/a" and bool(d["reason"]) and not d["reps"]
        say(good, "%s on %s: %s %s" % (wl, e, d["status"], d["reason"]))
sys.exit(bad)
EOF

echo "== the kernel engine alone: the peak RSS under pagecache measured first"
"$bin" bench --workload fio-randread --engine kernel --budget 8M --reps 1 --duration 1 \
	--dir "$tmp/files" --out "$tmp/alone" >"$tmp/alone.log" 2>&1
rc=$?
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["fair_budget"]; print(d["status"], p["pagecache_peak_rss"] > 8 << 20, p["memcg_limit"] == p["pagecache_peak_rss"] or not d["constrained"])' \
      "$tmp/alone/fio-randread-kernel.json" 2>&1)
if [ "$rc" -eq 0 ] && [ "$got" = "ok True True" ]; then
	echo "ok   kernel alone: limit = the peak RSS measured under pagecache"
else
	echo "FAIL kernel alone: exit $rc, $got"; sed 's/^/    /' "$tmp/alone.log"; failed=1
fi

echo "== a program that is not installed: n/a, and how to get it"
PATH=/nonexistent "$bin" bench --workload sqlite-oltp --engine kernel --budget 8M --reps 1 \
	--duration 1 --dir "$tmp/files" --out "$tmp/missing" >"$tmp/missing.log" 2>&1
rc=$?
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", d["reason"])' \
      "$tmp/missing/sqlite-oltp-kernel.json" 2>&1)
if [ "$rc" -eq 0 ] && [[ "$got" == "n/a | sqlite3 is not installed: scripts/deps.sh"* ]]; then
	echo "ok   missing sqlite3: $got"
else
	echo "FAIL missing sqlite3: exit $rc, $got"; sed 's/^/    /' "$tmp/missing.log"; failed=1
fi

echo "== --profile on a program workload: the program's samples"
if ! perf record -e cpu-clock -q -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	echo "   skipped: perf cannot record here (not installed, or refused), so the profile is not checked"
else
	"$bin" bench --workload fio-randread --engine pagecache --budget 8M --reps 1 --duration 1 \
		--profile --dir "$tmp/files" --out "$tmp/prof" >"$tmp/prof.log" 2>&1
	rc=$?
	got=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["reps"][0].get("profile", {})
user = [s["symbol"] for s in p.get("top", []) if not s["kernel"]]
procs = p.get("processes", {})
print(p.get("samples", 0) > 0 and "runner_samples" in p and len(procs) > 0 and
      sum(procs.values()) == p["samples"] and len(user) > 0,
      "| samples", p.get("samples"), "runner left out", p.get("runner_samples"),
      "processes", procs, "user symbols", user[:4], p.get("error", ""))' \
	      "$tmp/prof/fio-randread-pagecache.json" 2>&1)
	if [ "$rc" -eq 0 ] && [[ "$got" == True* ]]; then
		echo "ok   --profile profiles fio: ${got#True | }"
	else
		echo "FAIL --profile on fio: exit $rc, $got"; sed 's/^/    /' "$tmp/prof.log"; failed=1
	fi
fi

[ "$failed" -eq 0 ] && echo "all program checks passed"
exit "$failed"
