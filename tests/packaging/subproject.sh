#!/usr/bin/env bash
# Usage: subproject.sh SOURCE-DIR WORK-DIR GENERATOR C-COMPILER
# Configures and builds tests/packaging/subproject, a parent project that
# add_subdirectory()s libiopgtable with nothing set, then runs the parent's
# programs linked with the shared and the static library.
set -euo pipefail
src=$1 work=$2 gen=$3 cc=$4
rm -rf "$work"
cmake -S "$src/tests/packaging/subproject" -B "$work" -G "$gen" \
  -DCMAKE_C_COMPILER="$cc" -DIOPT_SOURCE_DIR="$src" >"$work.log" 2>&1 ||
  { cat "$work.log"; exit 1; }
cmake --build "$work" >>"$work.log" 2>&1 || { cat "$work.log"; exit 1; }
# Nothing but the parent's targets and the two libraries was built.
for t in iopt-bench test_pt_matrix libiopgtable_internal.a; do
  if [ -n "$(find "$work" -name "$t" -print -quit)" ]; then
    echo "subproject: built $t"; exit 1
  fi
done
"$work/parent_shared"
"$work/parent_static"
echo "subproject: add_subdirectory() builds the two libraries and nothing else"
