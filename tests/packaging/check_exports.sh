#!/usr/bin/env bash
# Usage: check_exports.sh NM HEADER-DIR[:HEADER-DIR...] LIBRARY...
#
# A library may export exactly the public API: every function its headers
# declare with IOPT_API, and nothing else. For an archive "export" means a
# defined global symbol of its objects (nm --defined-only --extern-only):
# any other would clash with a symbol of the same name in the program that
# links it (QEMU has its own tlb_init). For a shared object it means a
# defined symbol in the dynamic symbol table (nm -D). Prints every symbol
# that leaks and every API function that is missing; exits 1 if any.
set -euo pipefail
nm=$1 hdirs=$2
shift 2

# The API: the identifier before the "(" on each line that declares with
# IOPT_API (every declaration in include/iopgtable keeps the two together).
api=$(IFS=:; for d in $hdirs; do cat "$d"/*.h; done |
      grep -E '^[[:space:]]*IOPT_API[[:space:]]' |
      sed -E 's/^[^(]*[^A-Za-z0-9_](iopt_[A-Za-z0-9_]+)[[:space:]]*\(.*/\1/' |
      sort -u)
if [ -z "$api" ] || printf '%s\n' "$api" | grep -qv '^iopt_'; then
  echo "check_exports: cannot read the API from $hdirs" >&2
  exit 2
fi

fail=0
for lib; do
  case $lib in
    *.a) defined=$("$nm" --defined-only --extern-only -P "$lib") ;;
    *)   defined=$("$nm" -D --defined-only -P "$lib") ;;
  esac
  # -P lines: "NAME TYPE VALUE SIZE"; an archive adds "lib.a[obj.o]:" lines.
  names=$(printf '%s\n' "$defined" | awk 'NF >= 2 && $1 !~ /:$/ { print $1 }' | sort -u)
  leaks=$(comm -23 <(printf '%s\n' "$names") <(printf '%s\n' "$api") | grep . || true)
  missing=$(comm -13 <(printf '%s\n' "$names") <(printf '%s\n' "$api") | grep . || true)
  if [ -n "$leaks" ]; then
    echo "$lib: $(printf '%s\n' "$leaks" | wc -l) symbols leak:" $leaks
    fail=1
  fi
  if [ -n "$missing" ]; then
    echo "$lib: API functions not exported:" $missing
    fail=1
  fi
  if [ -z "$leaks$missing" ]; then
    echo "$lib: exports exactly the $(printf '%s\n' "$api" | wc -l) API functions"
  fi
done
exit $fail
