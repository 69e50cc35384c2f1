#!/bin/bash
# iopt-bench repro (bench/bench_repro.c), never its speed:
#  - --help lists every case; bad command lines exit 2 with a message and
#    nothing on stdout; a case that cannot run, named, exits 1 saying why;
#  - every implemented case runs in its quick form and prints every field
#    of the contract (JSON lines: suite, case, metric, unit, ours,
#    published, headline, trace_hash, sim_params; tables: ours, published,
#    ratio, trace hash, preset, verdict, sweep); a case whose pieces are
#    missing prints a "cannot run yet" status and no figure;
#  - the points are independent: --jobs | run each (GNU parallel -j2, or
#    xargs -P2) | --merge prints the direct run's tables byte for byte,
#    and its JSON lines are the direct run's (same seed: same figures and
#    trace hashes); another seed changes the hashes;
#  - progress goes to stderr only.
# usage: bench_repro.sh PATH/TO/iopt-bench
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
say_fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The cases the harness runs; pending: those registered without a run.
cases="cmdq-contention batched-unmap lock-removal v2-sync-timeout cmd-sync
  rcache-flush flush-policy"
pending=""

"$bin" repro --help > "$dir/help" 2>&1 || say_fail "--help: rc $?"
for c in $cases $pending; do
  grep -q "^  $c " "$dir/help" || say_fail "--help lacks $c"
done

# Bad command lines: exit 2, a message, stdout untouched.
bad() {
  "$bin" repro "$@" > "$dir/out" 2> "$dir/err"
  rc=$?
  [ $rc -eq 2 ] || say_fail "repro $*: rc $rc, want 2"
  [ -s "$dir/out" ] && say_fail "repro $*: printed on stdout"
  [ -s "$dir/err" ] || say_fail "repro $*: no message"
}
bad no-such-case
bad --point cmdq-contention
bad --point cmdq-contention:99
bad --point nope:0
bad --point cmdq-contention:x
bad --slurm
bad --jobs --point cmdq-contention:0
bad --merge
bad --seed -1
bad --frobnicate

# A pending case, named: exit 1 and why; its published rows still print.
for c in $pending; do
  "$bin" repro "$c" > "$dir/out" 2> "$dir/err"
  rc=$?
  [ $rc -eq 1 ] || say_fail "repro $c: rc $rc, want 1"
  grep -q "cannot run yet: .*workload models" "$dir/err" ||
    say_fail "repro $c: no reason on stderr"
  grep -q "status: cannot run yet" "$dir/out" || say_fail "repro $c: no status line"
  grep -q "published" "$dir/out" || say_fail "repro $c: no published rows"
done

# The direct quick run of the implemented cases.
"$bin" repro $cases --quick --out "$dir/direct.jsonl" > "$dir/direct.txt" \
  2> "$dir/direct.err"
rc=$?
grep -q "points, " "$dir/direct.err" || say_fail "no progress on stderr"
grep -q "iopt-bench repro: \[point" "$dir/direct.txt" &&
  say_fail "progress on stdout"
for c in $cases; do
  if grep -q "\"case\":\"$c\".*\"status\":\"cannot run yet" "$dir/direct.jsonl"; then
    # Honest about missing pieces: a reason, no figure, exit 1 when named.
    grep -q "cannot run yet: needs" "$dir/direct.err" ||
      say_fail "$c: no reason on stderr"
    grep "\"case\":\"$c\"" "$dir/direct.jsonl" | grep -q '"ours"' &&
      say_fail "$c: figures without a run"
    [ $rc -eq 1 ] || say_fail "$c cannot run but rc $rc"
    echo "note: $c cannot run yet in this build: $(grep -o 'needs.*' "$dir/direct.err" | head -1)"
    continue
  fi
  n=$(grep -c "\"case\":\"$c\"" "$dir/direct.jsonl")
  [ "$n" -gt 0 ] || say_fail "$c: no JSON lines"
  grep "\"case\":\"$c\"" "$dir/direct.jsonl" | while read -r line; do
    for f in suite case point setting preset quick seed row metric unit ours \
             ratio published headline trace_hash sim_params status; do
      case "$line" in *"\"$f\":"*) ;; *) echo "FAIL: $c: a line lacks $f: $line";; esac
    done
    case "$line" in *'"ours":null'*) echo "FAIL: $c: a row without a figure: $line";; esac
    # JSON numbers only: no nan or inf (a published 0's ratio is null).
    case "$line" in *[:,]-nan*|*[:,]nan*|*[:,]-inf*|*[:,]inf*)
      echo "FAIL: $c: not JSON (nan/inf): $line";; esac
  done | tee "$dir/fieldfails" | head -5
  [ -s "$dir/fieldfails" ] && fails=$((fails + 1))
  grep -q "\"case\":\"$c\".*\"headline\":true" "$dir/direct.jsonl" ||
    say_fail "$c: no headline row"
  # The table: header, ratio column, hashes, preset, verdict, sweep.
  sed -n "/^== $c:/,/^$/p" "$dir/direct.txt" > "$dir/table"
  for w in "preset: --sim-platform" "ours/pub" "trace_hash" "sim_params" \
           "verdict: " "sweep (headline rows" "sweep points: "; do
    grep -q -- "$w" "$dir/table" || say_fail "$c table lacks '$w'"
  done
  grep -qE '^\* .* [0-9a-f]{16} [0-9a-f]{16}$' "$dir/table" ||
    say_fail "$c table: no headline row with its hashes"
done
[ $rc -eq 0 ] || grep -q "cannot run yet" "$dir/direct.err" ||
  say_fail "direct run: rc $rc"
# Every line is JSON (a row the source gives no figure for says null).
if command -v python3 > /dev/null; then
  python3 -c 'import json, sys
for n, l in enumerate(sys.stdin, 1):
    d = json.loads(l, parse_constant=lambda c: sys.exit("line %d: %s" % (n, c)))
    if d.get("status") == "ran" and d["published"] is None and d["headline"]:
        sys.exit("line %d: a headline without a published figure" % n)' \
    < "$dir/direct.jsonl" || say_fail "the lines are not all JSON"
fi
# A swept suite option (flush-policy's trap cost per page, its quick
# sweep) reaches its runs: the point's strict run is another simulation
# than point 0's.
fp_hash() {
  grep '"case":"flush-policy"' "$dir/direct.jsonl" | grep "\"point\":$1," |
    grep '"metric":"strict"' | grep -o '"trace_hash":"[0-9a-f]*"'
}
if ! grep -q '"case":"flush-policy".*cannot run yet' "$dir/direct.jsonl"; then
  grep -q '"case":"flush-policy".*"setting":"viommu-trap-page-ns=' "$dir/direct.jsonl" ||
    say_fail "flush-policy: no point sweeps the trap cost"
  t1=$(grep '"setting":"viommu-trap-page-ns=' "$dir/direct.jsonl" | head -1 |
       grep -o '"point":[0-9]*' | grep -o '[0-9]*')
  [ -n "$t1" ] && [ "$(fp_hash 0)" != "$(fp_hash "$t1")" ] ||
    say_fail "flush-policy: the trap sweep left strict's run unchanged"
fi

# jobs | run each (in parallel) | merge == the direct run.
"$bin" repro --jobs $cases --quick > "$dir/jobs" || say_fail "--jobs: rc $?"
[ -s "$dir/jobs" ] || say_fail "--jobs printed nothing"
if command -v parallel > /dev/null; then
  parallel -j2 < "$dir/jobs" > "$dir/par.jsonl" 2> "$dir/par.err"
else
  tr '\n' '\0' < "$dir/jobs" | xargs -0 -P2 -n1 sh -c > "$dir/par.jsonl" 2> "$dir/par.err"
fi
"$bin" repro --merge "$dir/par.jsonl" $cases > "$dir/merged.txt" ||
  say_fail "--merge: rc $?"
cmp -s "$dir/direct.txt" "$dir/merged.txt" || {
  say_fail "merged tables differ from the direct run's"
  diff "$dir/direct.txt" "$dir/merged.txt" | head -20
}
sort "$dir/direct.jsonl" > "$dir/a"
sort "$dir/par.jsonl" > "$dir/b"
cmp -s "$dir/a" "$dir/b" || say_fail "the points' lines differ from the direct run's"
# stdin as a file, and a case filter.
"$bin" repro --merge - cmdq-contention < "$dir/par.jsonl" > "$dir/m2" ||
  say_fail "--merge -: rc $?"
grep -q "^== cmdq-contention" "$dir/m2" || say_fail "--merge - printed no table"
grep -q "^== batched-unmap" "$dir/m2" && say_fail "--merge CASE printed another case"
# Files before --merge are files too.
"$bin" repro "$dir/par.jsonl" --merge > "$dir/m3" || say_fail "FILE --merge: rc $?"
grep -q "^== cmdq-contention" "$dir/m3" || say_fail "FILE --merge printed no table"

# The Slurm script: one array task per point.
"$bin" repro --jobs --slurm $cases --quick > "$dir/sbatch" || say_fail "--slurm: rc $?"
np=$(wc -l < "$dir/jobs")
grep -q "^#SBATCH --array=0-$((np - 1))$" "$dir/sbatch" ||
  say_fail "sbatch --array is not 0-$((np - 1))"
grep -q 'repro --point "${points\[$SLURM_ARRAY_TASK_ID\]}"' "$dir/sbatch" ||
  say_fail "sbatch runs no point"

# Another seed: the same point, other trace hashes.
"$bin" repro --point cmdq-contention:0 --quick --seed 2 > "$dir/s2.jsonl" ||
  say_fail "--seed 2: rc $?"
h1=$(grep -o '"trace_hash":"[0-9a-f]*"' "$dir/direct.jsonl" | head -1)
h2=$(grep -o '"trace_hash":"[0-9a-f]*"' "$dir/s2.jsonl" | head -1)
[ -n "$h1" ] && [ "$h1" != "$h2" ] || say_fail "seed 2 kept the hash ($h1)"

if [ $fails -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "bench_repro: all checks passed"
