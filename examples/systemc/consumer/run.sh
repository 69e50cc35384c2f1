#!/usr/bin/env bash
# Install the built tree into a temporary prefix, then build and run the
# adapter test as a consumer would: with find_package(iopgtable
# COMPONENTS systemc) and with pkg-config iopgtable-systemc.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)
cmake -S "$src/examples/systemc/consumer" -B "$tmp/b" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DSRC_DIR="$src/examples/systemc" >/dev/null
cmake --build "$tmp/b" >/dev/null
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/b/consumer_systemc" >/dev/null
export PKG_CONFIG_PATH="$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
c++ -std=c++17 -o "$tmp/pc" "$src/examples/systemc/test_smmu_adapter.cpp" \
  $(pkg-config --cflags --libs iopgtable-systemc)
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/pc" >/dev/null
echo "consumer: installed iopgtable-systemc works with find_package and pkg-config"
