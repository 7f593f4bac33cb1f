#!/usr/bin/env bash
# `isoharness run` on the default scenarios against `run` of one single-sandbox scenario
# (scenarios/strict-egress.yaml under gVisor only), back to back in one run, with the
# ratio of the two wall times (the fan-out target: at most 3x) and, for each run, the mean
# and slowest per-sandbox phases from its result.json (deploy, ssh ready, upload, posture,
# total) and each CPU's busy and idle time over the run, so the place the time goes is visible.
#
#   bench/run_default_vs_one.sh [BUILD_DIR (default: build)] [OUT_DIR (default: bench-out/fanout)]
#                               [-- extra `isoharness run` arguments, e.g. --parallel 4]
#
# Exits 1 when either run does not pass (its verdict is what counts; its log is shown);
# a slow ratio is reported, not failed: timing targets belong to benchmarks, and the
# machine is shared.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
out=$here/bench-out/fanout
if [ $# -gt 0 ] && [ "$1" != -- ]; then build=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then out=$1; shift; fi
[ "${1:-}" = -- ] && shift
extra=("$@")
isoharness=$build/harness/cli/isoharness
[ -x "$isoharness" ] || { echo "no $isoharness: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the local backend needs it)" >&2; exit 2; }
mkdir -p "$out"
cd "$here"  # the default scenario set is scenarios/ here

phases() {  # result.json: mean / max of each per-sandbox timing
  python3 - "$1" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
boxes = doc["sandboxes"]
print(f"   {len(boxes)} sandboxes, verdict {doc['summary']['verdict']}")
for key in ("deploy_s", "ssh_ready_s", "upload_s", "posture_s", "total_s"):
    xs = [b["timings"][key] for b in boxes if key in b.get("timings", {})]
    if xs:
        print(f"   {key:<12} mean {sum(xs) / len(xs):6.2f} s   max {max(xs):6.2f} s")
EOF
}

cpu_times() {  # per CPU: "cpuN busy idle steal" (ticks) from /proc/stat
  awk '/^cpu[0-9]/ {print $1, $2 + $3 + $4 + $7 + $8, $5 + $6, $9}' /proc/stat
}

timed_run() {  # name args... ; seconds in $out/name.time, per-CPU busy/idle in $out/name.cpu
  local name=$1
  shift
  rm -rf "${out:?}/$name"
  local start rc before
  before=$(cpu_times)
  start=$(date +%s%N)
  set +e
  "$isoharness" run --out "$out/$name" "$@" "${extra[@]}" >"$out/$name.log" 2>&1
  rc=$?
  set -e
  echo "scale=2; ($(date +%s%N) - $start) / 1000000000" | bc >"$out/$name.time"
  # The whole machine's CPUs over the run (USER_HZ ticks of 10 ms): a CPU busy for the whole
  # run is the bound; the local profile's tier class pins every tier sandbox to one CPU.
  paste -d' ' <(echo "$before") <(cpu_times) |
    awk '{printf "   %s busy %5.1f s, idle %5.1f s, stolen by the hypervisor %4.1f s\n", $1,
          ($6 - $2) / 100, ($7 - $3) / 100, ($8 - $4) / 100}' >"$out/$name.cpu"
  return $rc
}

status=0
timed_run default || status=1
timed_run one scenarios/strict-egress.yaml --runtimes gvisor || status=1
t_default=$(cat "$out/default.time")
t_one=$(cat "$out/one.time")
ratio=$(echo "scale=2; $t_default / $t_one" | bc)

for name in default one; do
  printf '\n== isoharness run (%s): %s s\n' "$name" "$(cat "$out/$name.time")"
  grep -E '^isoharness run |^(PASS|FAIL|ERROR):' "$out/$name.log" || true
  if [ -f "$out/$name/result.json" ]; then phases "$out/$name/result.json"; fi
  cat "$out/$name.cpu"
done
printf '\ndefault set / one sandbox: %s s / %s s = %sx (target: at most 3x: %s)\n' "$t_default" "$t_one" "$ratio" \
  "$(echo "$ratio <= 3" | bc | sed 's/1/met/;s/0/MISSED/')"
if [ $status -ne 0 ]; then
  echo "a run did not pass; its log ends:"
  for name in default one; do tail -5 "$out/$name.log"; done
fi
exit $status
