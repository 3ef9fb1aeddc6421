#!/usr/bin/env bash
# A program outside the tree uses the installed library: `make install`
# into a scratch prefix, build tests/install_demo.c with pkg-config (shared
# library, then static), run both.
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
echo "== static"
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/demo-static" "$top/tests/install_demo.c" \
	$(pkg-config --cflags pagecache) "$tmp/prefix/lib/libpagecache.a" \
	$(pkg-config --libs --static liburing liburcu-bp jansson) -lnuma -lpthread -lm
"$tmp/demo-static" "$tmp"
