#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the benchmarks need,
# when any is missing.  Quiet when everything is there.
set -euo pipefail
need=(gcc make pkg-config liburing-dev libcmocka-dev libjansson-dev
      libnuma-dev gnuplot-nox
      man-db groff-base	# tests/test_install.sh renders the man pages
      fio sqlite3 rocksdb-tools	# programs tests/test_exec.sh runs
      sysbench			# the lab's sysbench-rndrw and -seqwr
      # PostgreSQL's server and client (postgres, initdb, pg_ctl, pgbench,
      # pg_amcheck), for tests/mp_coherence.py postgres and the lab's
      # pgbench-* workloads; Debian puts them in /usr/lib/postgresql/NN/bin
      postgresql postgresql-client)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
