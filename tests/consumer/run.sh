#!/usr/bin/env bash
# Install the built tree into a temporary prefix, then build and run a
# consumer with find_package (shared and static) and with pkg-config.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/b" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/b/consumer_shared"
"$tmp/b/consumer_static"
export PKG_CONFIG_PATH="$lib/pkgconfig"
cc -o "$tmp/pc" "$src/tests/consumer/main.c" $(pkg-config --cflags --libs iopgtable)
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/pc"
# Static: the archive, then what pkg-config --static says it needs.
deps=$(pkg-config --static --libs iopgtable | sed 's/-liopgtable//')
cc -o "$tmp/pcs" "$src/tests/consumer/main.c" $(pkg-config --cflags iopgtable) \
  -L"$lib" -Wl,-Bstatic -liopgtable -Wl,-Bdynamic $deps
env -u LD_LIBRARY_PATH "$tmp/pcs"
echo "consumer: installed tree works with find_package and pkg-config"
