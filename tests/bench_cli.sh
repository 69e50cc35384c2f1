#!/bin/bash
# Every iopt-bench suite's command line, against what the suites are
# meant to take (written here, not read from the program):
#  - --help exits 0 and names each of the suite's options and cases;
#  - an unknown option, a bad value of any numeric option (negative,
#    zero where zero means nothing, past 2^64, trailing garbage, empty),
#    an unknown --case: exit 2, nothing on stdout, stderr naming the
#    option and the value;
#  - a tiny valid run prints its JSON lines;
#  - a failed allocation (under ulimit -v) is a message and exit 1;
#  - random command lines from a fixed seed: exit 0 (--help) or 2.
# No run may end on a signal (exit status 128 or more). Speed is never
# looked at.
#   bench_cli.sh PATH/TO/iopt-bench
set -u
bench=$1
sim_bin=$(dirname "$bench")/iopt-bench-sim
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

say_fail() { echo "FAIL: $*"; fail=1; }

# run SUITE ARGS...: into $out/$err, rc in $rc; a signal fails at once.
run() {
  timeout 30 "$bench" "$@" >"$out" 2>"$err"
  rc=$?
  if [ $rc -eq 124 ]; then
    say_fail "$*: hung (timeout)"
  elif [ $rc -ge 128 ]; then
    say_fail "$*: killed by signal $((rc - 128))"
  fi
}

# bad WANT_IN_STDERR ARGS...: exit 2, stdout empty, stderr naming it.
bad() {
  local want=$1
  shift
  run "$@"
  if [ $rc -ne 2 ] || [ -s "$out" ] || ! grep -qF -- "$want" "$err"; then
    say_fail "$*: rc $rc, stdout $(wc -c <"$out") bytes, stderr" \
      "'$(head -c 200 "$err")' (wanted it to name $want)"
  fi
}

# The suites (iopt_bench.c), their cases and options. Numeric options
# are NAME:ZERO, ZERO "0ok" where 0 is a meaningful value (a default,
# "none") and "0bad" where it is not.
suites="pgtable iova smmu dma workload sim host"
cases_pgtable=""
cases_iova="cached_pair tree_pair fragmented exhaust32 invalidation record"
cases_smmu="mutex_pair translate_hit translate_walk translate_walk_wcache
  translate_random translate_random_nowc translate_hit_threads cmdq tlbsync
  drv_tlbi_batch drv_tlbi_batch_host"
cases_dma=""
cases_workload=""
cases_sim="switch ops pgtable"
cases_host="pair_alu pair_mem"
num_pgtable="granule:0bad threads:0bad pages:0bad pgcount:0bad runs:0bad"
num_iova="runs:0bad live:0bad threads:0bad"
num_smmu="version:0bad footprint:0bad threads:0bad"
num_dma="threads:0bad seconds:0bad ops:0ok granule:0bad trans-ns:0ok
  sync-timeout-us:0ok sample:0ok dma-bits:0bad fq-entries:0ok parts-ops:0bad
  fq-timeout-ms:0ok iova-start:0ok viommu-trap-ns:0ok cpus:0ok hold:0ok"
num_workload="streams:0bad queues:0bad send-bytes:0bad skb-bytes:0bad mss:0bad
  wire-overhead:0ok frags:0bad head-bytes:0ok ring-entries:0bad
  sndbuf-bytes:0bad send-cycles:0ok skb-cycles:0ok clean-cycles:0ok
  irq-frames:0bad irq-usecs-ns:0bad irq-cpu:0ok buf-bytes:0bad budget:0bad
  pkt-cycles:0ok irq-delay-ns:0ok jobs:0bad qd:0bad io-bytes:0bad
  dev-latency-ns:0ok submit-cycles:0ok complete-cycles:0ok threads:0bad
  dma-trans-ns:0ok link-gbps:0bad byte-cycles:0ok duration-ms:0bad
  warmup-ms:0ok dev-iops:0ok memset-byte-cycles:0ok calibrate-gbps:0bad
  calibrate-iops:0bad calibrate-tol:0bad sync-timeout-us:0ok dma-bits:0bad
  fq-entries:0ok fq-timeout-ms:0ok iova-start:0ok viommu-trap-ns:0ok cpus:0ok
  hold:0ok"
num_sim="sim:0bad seed:0ok pages:0bad"
num_host="pairs:0bad run-ms:0bad"
word_pgtable="format pattern mode gather"
word_iova=""
word_smmu=""
word_dma="dir policy smmu cmdq sync v2-sync v2-poll lock clock domain-lock-kind
  rcache-flush"
word_workload="kind proto dir policy smmu cmdq sync v2-sync v2-poll lock clock
  domain-lock-kind rcache-flush"
word_sim=""
word_host=""
flags_pgtable="json"
flags_iova="json"
flags_smmu="json"
flags_dma="json report no-lat pin fq-fine-clock no-sev domain-lock pci
  noncoherent fq-timer"
flags_workload="json share map-per-page no-sev domain-lock pci noncoherent
  fq-timer fq-fine-clock"
flags_sim="json tso"
flags_host="json"
# Tiny runs: the arguments, and the JSON cases (or suite) they print.
tiny_pgtable="--pages 64 --runs 1 --json"
tiny_iova="--case tree_pair --runs 1 --threads 1 --json"
tiny_smmu="--case translate_hit --json"
tiny_dma="--ops 100 --json"
tiny_workload="--sim 2 --kind tx --duration-ms 0.2 --warmup-ms 0.05 --json"
tiny_sim="--case pgtable --sim 2 --pages 10 --json"
tiny_host="--case pair_alu --pairs 1 --run-ms 0.05 --json"
lines_pgtable='"suite":"pgtable"'
lines_iova='"case":"tree_pair" "case":"cached_pair" "case":"cached_vs_tree"'
lines_smmu='"case":"mutex_pair" "case":"translate_hit"'
lines_dma='"suite":"dma"'
lines_workload='"suite":"workload"'
lines_sim='"case":"pgtable"'
lines_host='"case":"pair_alu"'

have_sim=1
if [ ! -x "$sim_bin" ]; then
  have_sim=0
  # Without it (a sanitizer build): sim and --sim say so and exit 2.
  bad iopt-bench-sim sim --help
  bad iopt-bench-sim pgtable --sim 2
  echo "note: no $sim_bin; the sim suite and --sim are not checked"
fi

run --help
[ $rc -eq 0 ] && [ -s "$out" ] || say_fail "iopt-bench --help: rc $rc"
for s in $suites; do grep -q "^  $s " "$out" || say_fail "--help lacks $s"; done
bad bogus bogus
run
[ $rc -eq 2 ] || say_fail "no suite: rc $rc"

for s in $suites; do
  [ $s = sim ] && [ $have_sim = 0 ] && continue
  eval "cases=\$cases_$s num=\$num_$s word=\$word_$s flags=\$flags_$s"
  eval "tiny=\$tiny_$s lines=\$lines_$s"

  run $s --help
  if [ $rc -ne 0 ]; then
    say_fail "$s --help: rc $rc"
  fi
  for c in $cases; do
    grep -qE "^  $c( |\$)" "$out" || say_fail "$s --help lacks case $c"
  done
  for o in $flags $word $(for n in $num; do echo ${n%%:*}; done) help; do
    grep -qE -- "^  --$o( |\$)" "$out" || say_fail "$s --help lacks --$o"
  done

  bad "'--bogus'" $s --bogus
  bad "'-x'" $s -x
  bad "'stray'" $s stray
  bad "--json" $s --json=1
  if [ -n "$cases" ]; then
    bad "'no_such_case'" $s --case no_such_case
    bad "'no_such_case'" $s --case=no_such_case
    bad "''" $s --case ''
    bad "--case" $s --case
  else
    bad "'--case'" $s --case no_such_case
  fi
  for w in $word; do
    bad "'bogus'" $s --$w bogus
    bad "''" $s --$w ''
    bad "--$w" $s --$w
  done
  for n in $num; do
    o=${n%%:*} zero=${n##*:}
    vals="-5 99999999999999999999 12abc 1x 0x -0 +1 nan inf 1e9"
    [ $zero = 0bad ] && vals="$vals 0"
    for v in $vals ''; do
      bad "--$o '$v'" $s --$o "$v"
      bad "--$o '$v'" $s --$o="$v"
    done
    bad "--$o" $s --$o
  done

  if [ $s = host ] && command -v taskset >/dev/null 2>&1 &&
     ! taskset -c 1 true 2>/dev/null; then
    echo "note: no CPU 1; host's tiny run not checked"
    continue
  fi
  [ $s = workload ] && [ $have_sim = 0 ] && continue
  run $s $tiny
  if [ $rc -ne 0 ]; then
    say_fail "$s $tiny: rc $rc: $(head -c 300 "$err")"
  else
    for l in $lines; do
      grep -qF -- "$l" "$out" || say_fail "$s $tiny: no $l line"
    done
    while read -r line; do
      case $line in {*}) ;; *) say_fail "$s $tiny: not JSON: $line" ;; esac
    done <"$out"
  fi
done

# The DMA layer's variants: each value reaches the JSON line, and the
# flush queues take the sizes and timeouts the s390 runs used.
run dma --smmu none --dma-bits 32 --ops 100 --json
grep -qF '"smmu":"none"' "$out" && grep -qF '"errors":0,' "$out" ||
  say_fail "dma --smmu none: $(head -c 300 "$out")"
run dma --ops 100 --json --domain-lock --domain-lock-kind ticket --pci \
  --rcache-flush every-retry --iova-start 0xffff0000 --viommu-trap-ns 100 \
  --noncoherent --policy strict --hold 16 --cpus 128
for l in '"domain_lock":"ticket"' '"rcache_flush":"every-retry"' '"pci":true' \
    '"iova_start":4294901760' '"viommu_trap_ns":100' '"walk":"noncoherent"' \
    '"hold":16,"cpus":128,' \
    '"device_faults":0,' '"errors":0,'; do
  grep -qF -- "$l" "$out" || say_fail "dma variants: no $l: $(head -c 300 "$err")"
done
for q in 8192:100 32768:4000 256:10; do
  e=${q%%:*} t=${q##*:}
  run dma --ops 100 --json --policy single --fq-entries $e --fq-timeout-ms $t \
    --fq-timer
  grep -qF "\"fq_entries\":$e,\"fq_timeout_ms\":$t,\"fq_timer\":true" "$out" ||
    say_fail "dma --fq-entries $e --fq-timeout-ms $t: rc $rc"
done
bad "--smmu none" dma --report --smmu none
run dma --ops 10 --iova-start 0x1001
[ $rc -eq 1 ] && grep -qF "setup failed" "$err" ||
  say_fail "dma --iova-start 0x1001: rc $rc, '$(head -c 200 "$err")'"

# The workload suite: options of another kind, no --sim, --irq-cpu's
# word (tests/bench_workload.sh runs the kinds).
bad "--qd does not apply to --kind tx" workload --kind tx --qd 4
bad "--streams does not apply to --kind nvme" workload --kind nvme --streams 2
bad "--proto does not apply to --kind rx" workload --kind rx --proto udp
bad "--dir does not apply to --kind tx" workload --dir to
bad "--map-per-page does not apply" workload --kind rx --map-per-page
bad "--irq-cpu does not apply" workload --kind mapbench --irq-cpu spread
bad "--buf-bytes must be a multiple of 4096" workload --kind mapbench \
  --buf-bytes 5000
bad "--sim N" workload --kind tx --irq-cpu spread
bad "--irq-cpu 'sprea'" workload --irq-cpu sprea

# A wrong case for the model's version.
bad "cmdq" smmu --version 2 --case cmdq
bad "tlbsync" smmu --case tlbsync

# Any suite's --sim options (iopt-bench-sim takes them out).
if [ $have_sim = 1 ]; then
  for v in -5 0 256 99999999999999999999 12abc ''; do
    bad "--sim '$v'" pgtable --sim "$v"
  done
  for v in -5 99999999999999999999 12abc ''; do
    bad "--seed '$v'" pgtable --sim 2 --seed "$v"
  done
  bad "--sim-mem 'x'" pgtable --sim 2 --sim-mem x
  bad "--sim-sched 'x'" pgtable --sim 2 --sim-sched x
  bad "--sim-ipc '-1'" pgtable --sim 2 --sim-ipc -1
  bad "--sim-ipc '65'" pgtable --sim 2 --sim-ipc 65
  bad "--sim-ipc 'nan'" pgtable --sim 2 --sim-ipc nan
  bad "--sim-hot" pgtable --sim 2 --sim-hot=1
  bad "'--bogus'" pgtable --sim 2 --bogus
  run pgtable --sim 2 --seed 0 --pages 16 --json
  [ $rc -eq 0 ] && grep -q '"sim_cpus":2' "$out" ||
    say_fail "pgtable --sim 2: rc $rc"
  # --sim-hot names each hot line's last writer by the object file that
  # holds it (the simulation binary, not the name it was started by) and
  # an offset into it.
  run dma --sim 4 --threads 4 --ops 50 --sim-hot
  obj=$(sed -n 's/^iopt-bench-sim: hot line 0: .*last writer \(.*\)+0x[0-9a-f]*$/\1/p' "$err")
  [ $rc -eq 0 ] && [ -n "$obj" ] && [ "$(readlink -f "$obj")" = "$(readlink -f "$sim_bin")" ] ||
    say_fail "dma --sim-hot: rc $rc, last writer's object '$obj'"
  # Parameters by name (docs/sim.md, "Platforms"): a bad one is named.
  for v in hit= hit=-1 hit=4x hit=99999999999999999999 hit=4294967296 \
           nope=1 hit =5 cpus=2 cpu_ghz=0 ipc=65 memmodel=x stack_bytes=1; do
    bad "--sim-param '$v'" pgtable --sim 2 --sim-param "$v"
  done
  bad "--sim-param needs a value" pgtable --sim 2 --sim-param
  for v in nope '' GRAVITON2; do
    bad "--sim-platform '$v'" pgtable --sim 2 --sim-platform "$v"
  done
  for v in v3.sync_cycles=-1 v3.walk_slots=0 sync_cycles=1 v2.nope=1 \
           v2.tlbi_cycles=1x v3.sync_cycles; do
    bad "--smmu-param '$v'" pgtable --sim 2 --smmu-param "$v"
  done
  bad "--smmu-preset 'mmu-400'" pgtable --sim 2 --smmu-preset mmu-400
  # A platform: what it set on stderr, the hash of the parameters in
  # every JSON line, the same for the same parameters.
  run pgtable --sim 2 --pages 16 --json
  base=$(grep -o '"sim_params":"[0-9a-f]\{16\}"' "$out" | sort -u)
  [ $rc -eq 0 ] && [ -n "$base" ] && [ $(grep -c . "$out") -eq \
    $(grep -c '"sim_params"' "$out") ] || say_fail "--sim: no sim_params"
  run pgtable --sim 2 --pages 16 --json --sim-param hit=4 --smmu-param \
    v2.sync_cycles=8
  [ "$(grep -o '"sim_params":"[0-9a-f]*"' "$out" | sort -u)" = "$base" ] ||
    say_fail "sim_params differs for the default values set by name"
  grep -q -- '--sim-param hit=4: nothing changed' "$err" ||
    say_fail "--sim-param hit=4: '$(head -c 200 "$err")'"
  for pl in a72-8 thunderx2 kunpeng920; do
    run pgtable --sim 2 --pages 16 --json --sim-platform "$pl"
    h=$(grep -o '"sim_params":"[0-9a-f]*"' "$out" | sort -u)
    [ $rc -eq 0 ] && [ -n "$h" ] && [ "$h" != "$base" ] &&
      grep -q -- "--sim-platform $pl: cpu_ghz=" "$err" ||
      say_fail "--sim-platform $pl: rc $rc, '$h', '$(head -c 200 "$err")'"
  done
  run pgtable --sim 2 --pages 16 --json --sim-platform graviton2
  [ "$(grep -o '"sim_params":"[0-9a-f]*"' "$out" | sort -u)" = "$base" ] &&
    grep -q -- '--sim-platform graviton2: nothing changed' "$err" ||
    say_fail "--sim-platform graviton2 is not the defaults"
  # The models' parameters reach the model the suite creates.
  # translate_hit costs 5 cycles with the TLB lookup at 3: 52 at 50.
  run smmu --sim 1 --case translate_hit --json --smmu-param v3.tlb.latency=50
  grep -q '"cycles_mean":52.0' "$out" &&
    grep -q -- '--smmu-param v3.tlb.latency=50: v3.tlb.latency=50 (was 3)' \
    "$err" || say_fail "--smmu-param v3.tlb.latency=50: $(head -c 300 "$out")"
  run dma --sim 1 --ops 20 --policy strict --smmu v2 --json --smmu-preset \
    mmu-500
  grep -q -- '--smmu-preset mmu-500: v2.sync_cycles=200 (was 8)' "$err" ||
    say_fail "--smmu-preset mmu-500: '$(head -c 200 "$err")'"
fi

# Allocations that fail: a message and exit 1 (or a run that fitted),
# never a signal. Only where a process runs under ulimit -v at all (a
# sanitizer's shadow memory does not fit).
if (ulimit -v 20000 && "$bench" --help >/dev/null 2>&1); then
  for t in "300000 pgtable --pages 200m --runs 1" \
           "20000 smmu --case translate_hit" \
           "20000 smmu --version 2 --case translate_random" \
           "20000 iova --case fragmented --runs 1" \
           "8000 dma --ops 10" \
           "20000 sim --case ops --sim 256"; do
    set -- $t
    lim=$1
    shift
    [ $1 = sim ] && [ $have_sim = 0 ] && continue
    (ulimit -v $lim; exec timeout 60 "$bench" "$@") >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ] && { [ $rc -ne 1 ] || [ ! -s "$err" ]; }; then
      say_fail "$* under ulimit -v $lim: rc $rc: $(head -c 200 "$err")"
    fi
  done
else
  echo "note: cannot run under ulimit -v here; allocation failures not checked"
fi

# Random command lines (fixed seed): any mix of the suites' options and
# values, good and bad, "--name=value" forms, strays, ending on a bad
# value so that nothing runs: exit 2 with a message and no stdout, or
# exit 0 where --help came first.
RANDOM=12345
suite_list=($suites)
tokens=(--json --help --case tree_pair cmdq --pages --pgcount --threads
  --runs --format v7s --granule 64k --mode locked --pattern random --live
  --version 2 --footprint 1g --seconds --ops --dir to --policy strict
  --smmu v2 --v2-sync global --clock runner --sample --dma-bits --fq-entries
  --sync-timeout-us --trans-ns --parts-ops --pairs --run-ms --tso --seed
  --no-lat --pin --report --sim --sim-mem tso 1 0 -1 -5 1,2 2,,3 4k 0x10 0xg 1e9 3.5 .5
  99999999999999999999 18446744073709551616 18446744073709551615 ''
  = -- - --= --pages= --runs=2 --json=0 '%s%n' $'\xff\xfe' "$(printf 'a%.0s' {1..300})")
ntok=${#tokens[@]}
started=$(date +%s)
for i in $(seq 1 400); do
  s=${suite_list[RANDOM % ${#suite_list[@]}]}
  [ $s = sim ] && [ $have_sim = 0 ] && continue
  args=()
  for k in $(seq 1 $((RANDOM % 6))); do
    args+=("${tokens[RANDOM % ntok]}")
  done
  args+=(--bogus-last)
  run $s "${args[@]}"
  helped=0
  for a in "${args[@]}"; do [ "$a" = --help ] && helped=1; done
  if [ $rc -eq 0 ] && [ $helped = 1 ]; then
    :
  elif [ $rc -ne 2 ] || [ -s "$out" ] || [ ! -s "$err" ]; then
    say_fail "fuzz $s ${args[*]}: rc $rc, stdout $(wc -c <"$out") bytes"
  fi
done
echo "fuzz: 400 command lines in $(( $(date +%s) - started )) s"

[ $fail -eq 0 ] && echo "bench_cli: all checks passed"
exit $fail
