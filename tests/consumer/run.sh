#!/usr/bin/env bash
# Usage: run.sh BUILD-DIR SOURCE-DIR
# Install the built tree into a temporary prefix, then build and run
# consumers of it: with find_package (shared and static library, the
# package's version rules, liburcu-bp from where the consumer says) and
# with pkg-config (shared; static through iopgtable-static.pc, the
# command README.md gives, and with -Wl,-Bstatic). Each links main.c and
# clash.c (a host with its own tlb_init & co). Where the build has the
# simulation, sim.c links the installed iopgtable_sim (find_package and
# iopgtable-sim.pc) and runs on simulated CPUs; where it has the
# benchmarks, the installed iopt-bench runs --help and hands `sim --help`
# to the installed iopt-bench-sim.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cons=$src/tests/consumer
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
major=${version%%.*} rest=${version#*.} minor=${rest%%.*}
# An archive built with -DIOPT_LOCALIZE_STATIC=OFF keeps its internal
# symbols global by choice: no static clash programs then.
leaks=OFF statics="consumer clash" pcs="main clash"
if grep -q '^IOPT_LOCALIZE_STATIC:BOOL=OFF' "$build/CMakeCache.txt"; then
  leaks=ON statics=consumer pcs=main
fi
# The simulation library is built except with sanitizers or libFuzzer
# (CMakeLists.txt, IOPT_SIM_BUILD); the benchmarks unless switched off.
sim=ON bench=ON
if ! grep -q '^IOPT_SANITIZE:STRING=$' "$build/CMakeCache.txt" ||
   grep -q '^IOPT_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  sim=OFF
fi
if grep -q '^IOPT_BUILD_BENCH:BOOL=OFF' "$build/CMakeCache.txt"; then
  bench=OFF
fi
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)
lib=${lib%/}

# The soname carries what docs/abi.md says an ABI is.
want=libiopgtable.so.$major
if [ "$major" = 0 ]; then want=libiopgtable.so.0.$minor; fi
soname=$(objdump -p "$lib/libiopgtable.so" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "$want" ]; then
  echo "consumer: soname $soname, docs/abi.md says $want"; exit 1
fi

# A program linked with the static library must not need the shared one.
static_only() {
  # Output captured first: with pipefail, grep -q exiting at its first
  # match can kill the writer with SIGPIPE and fail the pipeline.
  local deps
  deps=$(objdump -p "$1")
  if grep -q 'NEEDED.*libiopgtable' <<<"$deps"; then
    echo "consumer: $1 needs the shared library"; exit 1
  fi
}
# A program linked with the simulation library needs neither the shared
# library nor liburcu (RCU is simulated).
sim_only() {
  local deps
  deps=$(objdump -p "$1")
  if grep -q 'NEEDED.*\(libiopgtable\|liburcu\)' <<<"$deps"; then
    echo "consumer: $1 needs $(grep NEEDED <<<"$deps" | tr -s ' ' | tr '\n' ' ')"; exit 1
  fi
}

cmake -S "$cons" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DIOPT_EXPECT_VERSION="$version" -DIOPT_ARCHIVE_LEAKS=$leaks \
  -DIOPT_EXPECT_SIM=$sim >/dev/null
cmake --build "$tmp/b" >/dev/null
if [ $sim = ON ]; then
  sim_only "$tmp/b/consumer_sim"
  env -u LD_LIBRARY_PATH "$tmp/b/consumer_sim"
fi
for p in consumer clash; do
  LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/b/${p}_shared"
done
for p in $statics; do
  static_only "$tmp/b/${p}_static"
  env -u LD_LIBRARY_PATH "$tmp/b/${p}_static"
done

# liburcu-bp elsewhere: a copy in its own prefix, named by the consumer's
# PKG_CONFIG_PATH, is the one the static library's link interface takes.
urcu_libdir=$(pkg-config --variable=libdir liburcu-bp)
urcu_incdir=$(pkg-config --variable=includedir liburcu-bp)
mkdir -p "$tmp/urcu/lib/pkgconfig"
cp -P "$urcu_libdir"/liburcu-bp.* "$tmp/urcu/lib/"
cp -P "$urcu_libdir"/liburcu-common.* "$tmp/urcu/lib/" 2>/dev/null || true
cat >"$tmp/urcu/lib/pkgconfig/liburcu-bp.pc" <<PC
libdir=$tmp/urcu/lib
includedir=$urcu_incdir
Name: liburcu-bp
Description: a copy of liburcu-bp in a prefix of its own
Version: $(pkg-config --modversion liburcu-bp)
Libs: -L\${libdir} -lurcu-bp
Cflags: -I\${includedir}
PC
PKG_CONFIG_PATH="$tmp/urcu/lib/pkgconfig" cmake -S "$cons" -B "$tmp/b2" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DIOPT_EXPECT_VERSION="$version" \
  -DIOPT_EXPECT_URCU_DIR="$tmp/urcu/lib" -DIOPT_ARCHIVE_LEAKS=$leaks >/dev/null
cmake --build "$tmp/b2" --target consumer_static >/dev/null
resolved=$(env -u LD_LIBRARY_PATH ldd "$tmp/b2/consumer_static")
if ! grep -q "$tmp/urcu/lib/liburcu-bp" <<<"$resolved"; then
  echo "consumer: consumer_static does not use the liburcu-bp of its PKG_CONFIG_PATH"; exit 1
fi
env -u LD_LIBRARY_PATH "$tmp/b2/consumer_static"

# pkg-config: shared, then static (the archive, and what --static adds).
export PKG_CONFIG_PATH="$lib/pkgconfig"
if [ "$(pkg-config --modversion iopgtable)" != "$version" ]; then
  echo "consumer: iopgtable.pc says $(pkg-config --modversion iopgtable)"; exit 1
fi
deps=$(pkg-config --static --libs iopgtable | sed 's/-liopgtable//')
for p in main clash; do
  cc -o "$tmp/pc_$p" "$cons/$p.c" $(pkg-config --cflags --libs iopgtable)
  LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/pc_$p"
done
for p in $pcs; do
  # README.md's static link: the archive by its path.
  cc -o "$tmp/pcs_$p" "$cons/$p.c" $(pkg-config --cflags --libs iopgtable-static)
  static_only "$tmp/pcs_$p"
  env -u LD_LIBRARY_PATH "$tmp/pcs_$p"
  # The same with iopgtable.pc: -liopgtable made to take the archive.
  cc -o "$tmp/pcb_$p" "$cons/$p.c" $(pkg-config --cflags iopgtable) \
    -L"$lib" -Wl,-Bstatic -liopgtable -Wl,-Bdynamic $deps
  static_only "$tmp/pcb_$p"
  env -u LD_LIBRARY_PATH "$tmp/pcb_$p"
done
# `pkg-config --static --libs iopgtable` alone links the shared library
# (what iopgtable-static.pc is for): hold README.md to saying so.
cc -o "$tmp/pcd_main" "$cons/main.c" $(pkg-config --cflags --static --libs iopgtable)
if ! objdump -p "$tmp/pcd_main" | grep -q 'NEEDED.*libiopgtable\.so'; then
  echo "consumer: --static --libs iopgtable no longer links the shared library: update README.md"
  exit 1
fi
if [ $sim = ON ]; then
  cc -o "$tmp/pc_sim" "$cons/sim.c" $(pkg-config --cflags --libs iopgtable-sim)
  sim_only "$tmp/pc_sim"
  env -u LD_LIBRARY_PATH "$tmp/pc_sim"
fi

# The installed benchmarks: iopt-bench, and iopt-bench-sim beside it.
if [ $bench = ON ]; then
  "$tmp/prefix/bin/iopt-bench" --help | grep -q '^usage: iopt-bench' ||
    { echo "consumer: installed iopt-bench --help"; exit 1; }
  if [ $sim = ON ]; then
    "$tmp/prefix/bin/iopt-bench" sim --help >"$tmp/simhelp" ||
      { echo "consumer: installed iopt-bench sim --help failed"; exit 1; }
    [ -s "$tmp/simhelp" ] ||
      { echo "consumer: installed iopt-bench sim --help printed nothing"; exit 1; }
  fi
fi
echo "consumer: installed tree works with find_package and pkg-config, shared, static and sim=$sim; bench=$bench"
