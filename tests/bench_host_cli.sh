#!/bin/sh
# iopt-bench host's command line: every bad option exits 2 with a message
# on stderr and prints nothing on stdout; --help exits 0; a tiny run
# prints the two JSON lines with every field the docs name, and ratios
# that can be ratios. Speed is never asserted.
#   bench_host_cli.sh PATH/TO/iopt-bench
set -u
bench=$1
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

bad() {  # args...: must exit 2, say something on stderr, print nothing
  "$bench" host "$@" >"$out" 2>"$err"
  rc=$?
  if [ $rc -ne 2 ] || [ -s "$out" ] || [ ! -s "$err" ]; then
    echo "FAIL: host $*: rc $rc, stdout $(wc -c <"$out") bytes, stderr $(wc -c <"$err") bytes"
    fail=1
  fi
}

bad --pairs 0
bad --pairs 100001
bad --pairs 10x
bad --pairs -1
bad --pairs ''
bad --run-ms 0
bad --run-ms 1001
bad --run-ms 5ms
bad --run-ms nan
bad --run-ms x
bad --bogus
bad extra
bad --pairs
if command -v taskset >/dev/null 2>&1; then
  # CPU 1 left out of the affinity: the probe cannot pin, and says so.
  taskset -c 0 "$bench" host --pairs 1 >"$out" 2>"$err"
  rc=$?
  if [ $rc -ne 2 ] || ! grep -q "CPUs 0 and 1" "$err"; then
    echo "FAIL: host without CPU 1: rc $rc"
    fail=1
  fi
fi

if ! "$bench" host --help >/dev/null 2>&1; then
  echo "FAIL: host --help did not exit 0"
  fail=1
fi

if ! "$bench" host --pairs 3 --run-ms 0.05 --json >"$out" 2>"$err"; then
  echo "FAIL: host --pairs 3 --run-ms 0.05 --json: $(cat "$err")"
  fail=1
fi
for c in alu mem; do
  line=$(grep "\"case\":\"pair_$c\"" "$out")
  [ -n "$line" ] || { echo "FAIL: no pair_$c line"; fail=1; continue; }
  for k in suite pairs run_ms vs_one_thread vs_one_thread_q1 vs_one_thread_q3 \
           pairs_below_1_3 pairs_at_1_8 below_1_3_slower_thread \
           below_1_3_faster_thread; do
    echo "$line" | grep -q "\"$k\":" || { echo "FAIL: pair_$c lacks $k"; fail=1; }
  done
  echo "$line" | grep -q '"pairs":3,' || { echo "FAIL: pair_$c pairs != 3"; fail=1; }
  # Two threads against one: a positive number. No upper bound: a 50 us
  # run preempted on a loaded machine can make any ratio (a test asserts
  # no speed).
  r=$(echo "$line" | sed 's/.*"vs_one_thread":\([0-9.]*\),.*/\1/')
  if ! awk -v r="$r" 'BEGIN { exit !(r > 0) }'; then
    echo "FAIL: pair_$c vs_one_thread $r"
    fail=1
  fi
done
[ $(wc -l <"$out") -eq 2 ] || { echo "FAIL: $(wc -l <"$out") lines, not 2"; fail=1; }
[ $fail -eq 0 ] && echo "bench_host_cli: all checks passed"
exit $fail
