#!/bin/bash
# iopt-bench workload on --sim 2: each kind runs briefly and prints one
# JSON line with the keys docs/workload.md ("From the command line")
# promises (written here, not read from the program); --smmu none, v2
# and calibration; the same command prints the same line; the errors
# that need the simulation's CPU count. Speed is never looked at.
#   bench_workload.sh PATH/TO/iopt-bench
set -u
bench=$1
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

say_fail() { echo "FAIL: $*"; fail=1; }

run() {
  timeout 60 "$bench" workload --sim 2 "$@" >"$out" 2>"$err"
  rc=$?
}

# has_keys ARGS... -- KEY...: a run of ARGS exits 0 with one JSON line
# holding every KEY.
has_keys() {
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  run "${args[@]}" --json
  if [ $rc -ne 0 ]; then
    say_fail "${args[*]}: rc $rc: $(head -c 300 "$err")"
    return
  fi
  [ "$(grep -c . "$out")" -eq 1 ] || say_fail "${args[*]}: not one line"
  for k in "$@"; do
    grep -qF -- "\"$k\":" "$out" || say_fail "${args[*]}: no \"$k\": $(head -c 300 "$out")"
  done
}

rig="suite kind smmu policy v2_sync v2_poll lock cmdq sync domain_lock
  rcache_flush viommu_trap_ns walk fq_entries cpus sync_timeouts sync_restarts
  v2_delay_cap_us sync_polls sync_polls_active sync_waits sync_waits_max
  nested_syncs errors trace_hash sim_params sim_preemptions sim_interrupts"
short="--duration-ms 0.3 --warmup-ms 0.1"
has_keys --kind tx $short -- $rig gbps pps cpu_util maps unmaps irqs
has_keys --kind rx $short -- $rig gbps pps cpu_util maps unmaps irqs
has_keys --kind nvme $short -- $rig iops lat_us cpu_util
has_keys --kind mapbench --duration-ms 0.1 -- $rig map_us unmap_us map_sd_us \
  unmap_sd_us loops
grep -q '"kind":"mapbench"' "$out" || say_fail "mapbench: kind"
has_keys --kind tx --smmu none $short -- $rig gbps
grep -q '"smmu":"none"' "$out" && grep -q '"errors":0,' "$out" ||
  say_fail "--smmu none: $(head -c 400 "$out")"
has_keys --kind tx --smmu v2 --v2-sync none --v2-poll udelay1 --policy strict \
  --streams 2 $short -- $rig gbps
grep -q '"smmu":"v2","v2_sync":"none","v2_poll":"udelay1"' "$out" ||
  say_fail "--smmu v2: the rig's keys: $(head -c 300 "$out")"
has_keys --kind tx --proto udp --streams 4 --share --irq-cpu 1 $short -- gbps
grep -q '"proto":"udp","streams":4' "$out" && grep -q '"irq_cpu":1,' "$out" ||
  say_fail "--proto udp --streams 4 --share: $(head -c 300 "$out")"

# Calibration: the byte cost found, then the run with it; the no-IOMMU
# run is the calibration's own model, so it lands within the tolerance.
has_keys --kind rx --smmu none --calibrate-gbps 5 --calibrate-tol 0.01 \
  $short -- calibrated gbps
g=$(grep -o '"gbps":[0-9.]*' "$out" | cut -d: -f2)
awk -v g="$g" 'BEGIN { exit !(g > 4.95 && g < 5.05) }' ||
  say_fail "--calibrate-gbps 5 --smmu none: $g Gbps"
bc=$(grep -o '"calibrated":{"byte_cycles":[0-9.e+-]*}' "$out" | grep -o '[0-9.e+-]*}' | tr -d '}')
[ -n "$bc" ] || say_fail "no calibrated byte_cycles: $(head -c 300 "$out")"
run --kind rx --smmu none --byte-cycles "$bc" $short --json
grep -qF "\"gbps\":$g," "$out" ||
  say_fail "--byte-cycles $bc does not give the calibrated $g Gbps: $(head -c 300 "$out")"
has_keys --kind nvme --smmu none --qd 4 --calibrate-iops 20000 --calibrate-tol 0.02 \
  $short -- calibrated iops
grep -q '"calibrated":{"submit_cycles":' "$out" || say_fail "nvme calibrated key"
run --kind nvme --calibrate-iops 1e7 $short --json
[ $rc -eq 1 ] && [ ! -s "$out" ] && grep -q "iopt_wl_nvme_calibrate" "$err" ||
  say_fail "an unreachable --calibrate-iops: rc $rc, '$(head -c 200 "$err")'"

# Deterministic: the same command, the same line (less host speed).
norm() { sed -E 's/"(host_s|sim_ops_per_host_sec|sim_insns_per_host_sec)":[0-9.]+//g' "$out"; }
run --kind tx --streams 2 --policy strict $short --json
a=$(norm)
run --kind tx --streams 2 --policy strict $short --json
[ "$a" = "$(norm)" ] || say_fail "the same tx run printed another line"

# What needs the simulation's CPUs: exit 2, nothing on stdout.
for t in "threads on 2 CPUs:--kind tx --streams 3" \
         "threads on 2 CPUs:--kind mapbench --threads 4" \
         "simulation has 2 CPUs:--kind rx --irq-cpu 2" \
         "not available with --sim:--kind tx --clock runner"; do
  want=${t%%:*}
  run ${t#*:}
  [ $rc -eq 2 ] && [ ! -s "$out" ] && grep -qF -- "$want" "$err" ||
    say_fail "${t#*:}: rc $rc, '$(head -c 200 "$err")'"
done

[ $fail -eq 0 ] && echo "bench_workload: all checks passed"
exit $fail
