#!/usr/bin/env bash
# The leaves stay leaves (docs/design.md, "Layout"): a leaf is a src/*.c
# that includes no header of the core (internal.h, or a header that
# includes it); what its object calls of the library (`nm -u`, the pc__
# names) must be defined by leaves too, so that no leaf calls up into the
# core.
#   bash tests/test_leaves.sh BUILD_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: tests/test_leaves.sh BUILD_DIR}" && pwd)
cd "$top/src"

core_headers="internal.h $(grep -l '#include "internal.h"' *.h | tr '\n' ' ')"
is_leaf() {	# file.c: includes none of the core's headers
	local h
	for h in $core_headers; do
		grep -q "#include \"$h\"" "$1" && return 1
	done
	return 0
}

leaves=()
for f in *.c; do
	is_leaf "$f" || continue
	[ -f "$build/src/${f%.c}.o" ] || { echo "no $build/src/${f%.c}.o"; exit 1; }
	leaves+=("${f%.c}")
done
echo "== leaves: ${leaves[*]}"
[ ${#leaves[@]} -ge 8 ] || { echo "too few leaves found"; exit 1; }

defined=$(for l in "${leaves[@]}"; do
	nm --defined-only "$build/src/$l.o" | awk '{print $3}'
done | grep '^pc__' | sort -u)
bad=0
for l in "${leaves[@]}"; do
	for s in $(nm -u "$build/src/$l.o" | awk '{print $2}' | grep '^pc__' || true); do
		if ! grep -qx "$s" <<<"$defined"; then
			echo "$l.c calls $s, not a leaf's"
			bad=1
		fi
	done
done
[ "$bad" -eq 0 ] && echo "== no leaf calls into the core"
exit "$bad"
