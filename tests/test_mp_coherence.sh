#!/usr/bin/env bash
# tests/test_mp_coherence.sh BUILD_DIR - the harness of tests/mp_coherence.py,
# plainly: every case passes without a prefix (the reference a run under
# `pagecache exec` is read against), the postgres case at a quick size
# (pgbench -s 1, -T 2).  Nothing here runs under `pagecache exec`: there
# most cases fail until one cache serves every process (issue 22), so the
# harness is what this checks, not the cache.  BUILD_DIR is not used.
# Exit 0 pass, 1 fail, 77 skip (no python3, sqlite3 or PostgreSQL:
# scripts/deps.sh installs them).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed (scripts/deps.sh)"; exit 77; }
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 &&
   ! command -v postgres >/dev/null; then
	echo "PostgreSQL is not installed (scripts/deps.sh)"; exit 77
fi
# The cases' directories go in /tmp (or TMPDIR): as root the postgres case
# runs PostgreSQL as the postgres user, who must reach its directory.
python3 "$top/tests/mp_coherence.py" --pg-seconds 2 --pg-scale 1
