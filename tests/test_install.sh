#!/usr/bin/env bash
# A program outside the tree uses the installed library: `make install`
# into a scratch prefix, build tests/install_demo.c with pkg-config (shared
# library, then static), run both.  The man pages are installed and render
# without a warning; `pagecache --version` is pkg-config's version.
#   bash tests/test_install.sh BUILD_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /var/tmp/pcinstall.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "== make install PREFIX=$tmp/prefix"
make -C "$top" --no-print-directory -s install PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
echo "== pkg-config: $(pkg-config --cflags --libs pagecache)"
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/demo" "$top/tests/install_demo.c" \
	$(pkg-config --cflags --libs pagecache)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/demo" "$tmp"
echo "== the shared library exports only pc_* (no pc__ internals)"
if nm -D --defined-only "$tmp/prefix/lib/libpagecache.so" | awk '{print $3}' | grep -q '^pc__'; then
	echo "internal symbols exported"; exit 1
fi
echo "== the shared library exports every function pagecache.h declares"
exported=$(nm -D --defined-only "$tmp/prefix/lib/libpagecache.so" | awk '{print $3}' | sed 's/@.*//')
missing=0
for fn in $(grep -oE '^[a-z_ ]+[ *]pc_[a-z_0-9]+\(' "$top/include/pagecache.h" |
	    grep -oE 'pc_[a-z_0-9]+' | sort -u); do
	grep -qx "$fn" <<<"$exported" || { echo "pagecache.h declares $fn: not exported"; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
echo "== static"
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/demo-static" "$top/tests/install_demo.c" \
	$(pkg-config --cflags pagecache) "$tmp/prefix/lib/libpagecache.a" \
	$(pkg-config --libs --static liburing jansson) -lnuma -lpthread -lm
"$tmp/demo-static" "$tmp"
echo "== man pages: pagecache(1), libpagecache(3)"
for page in man1/pagecache.1 man3/libpagecache.3; do
	f="$tmp/prefix/share/man/$page"
	[ -f "$f" ] || { echo "$page not installed"; exit 1; }
	warn=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	[ -z "$warn" ] || { echo "$page: $warn"; exit 1; }
	MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q '^SEE ALSO' ||
		{ echo "$page does not render"; exit 1; }
	if grep -q '@VERSION@' "$f"; then echo "$page: @VERSION@ left"; exit 1; fi
done
echo "== pagecache --version: the version pkg-config reports"
got=$("$tmp/prefix/bin/pagecache" --version)
want="pagecache $(pkg-config --modversion pagecache)"
[ "$got" = "$want" ] || { echo "pagecache --version: '$got', want '$want'"; exit 1; }
