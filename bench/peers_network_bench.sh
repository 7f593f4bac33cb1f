#!/usr/bin/env bash
# Peers at scale: a night of N items (default 32: cheap runc items of SETS eval sets, default
# 4) through the hawk stand-in (tests/hawk_standin/hawk), once with every eval on one network
# (HAWK_STANDIN_NETWORK=shared: one `local up --serve` world that every eval joins) and once
# with a world per eval (separate), the same night side by side. Each sandbox still tries at
# most the profile's peers_per_sandbox others (other eval sets first), so the peer checks'
# cost stays per sandbox. Prints per network: the wall time, the harness's CPU seconds per
# item (user + system of `isoharness run` and the platform CLI calls it waited for, GNU
# time; the sandboxes' own `local up` processes are not its children), the wall per item,
# the most peers any sandbox tried, and how many sandboxes had their peer checks judged
# (pass or fail) against n/a; then the ratios shared / separate.
#
#   bench/peers_network_bench.sh [BUILD_DIR (default: build)] [OUT_DIR (default: bench-out/peers)]
#   environment: ITEMS (32), SETS (4), PARALLEL (8: sandboxes at once; separate networks
#                take a world slot each, of the machine's 32), PEERS (2: peers_per_sandbox)
#
# Run as root on an otherwise idle machine; each run is bounded (2 h).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/bench-out/peers}
items=${ITEMS:-32}
sets=${SETS:-4}
parallel=${PARALLEL:-8}
peers=${PEERS:-2}
for v in "$items" "$sets" "$parallel" "$peers"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "ITEMS, SETS, PARALLEL, PEERS: whole numbers" >&2; exit 2; }
done
[ "$items" -ge 1 ] && [ "$items" -le 256 ] || { echo "ITEMS $items: 1..256" >&2; exit 2; }
[ "$sets" -ge 1 ] && [ "$sets" -le "$items" ] || { echo "SETS $sets: 1..ITEMS" >&2; exit 2; }
[ "$parallel" -ge 1 ] && [ "$parallel" -le 32 ] || { echo "PARALLEL $parallel: 1..32" >&2; exit 2; }
[ "$peers" -le 16 ] || { echo "PEERS $peers: 0..16" >&2; exit 2; }
isoharness=$build/harness/cli/isoharness
standin=$here/tests/hawk_standin/hawk
[ -x "$isoharness" ] || { echo "no $isoharness: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the stand-in's sandboxes are local ones)" >&2; exit 2; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$out"
work=$(mktemp -d /tmp/ih-peers-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

ssh-keygen -q -t ed25519 -N '' -f "$work/id_ed25519"
export HAWK_STANDIN_ISOHARNESS=$isoharness HAWK_STANDIN_STATE=$work/standin
export HAWK_STANDIN_PROFILE=$here/scenarios/deployments/local.yaml
"$standin" human register --name alice --ssh-key "$(cat "$work/id_ed25519.pub")"
cat >"$work/night.yaml" <<YAML
name: night
backend: hawk
witness: none
node_view: none
runtime_classes: [gvisor]
sandbox_runtime_class: gvisor
sandbox_runtime_class_is_default: false
runtime_handlers: { gvisor: runsc }
node_mounts: [/usr, /etc/alternatives]
peers_per_sandbox: $peers
egress_deadline_ms: 1500
hawk:
  cli: $standin
  human: alice
  identity_file: $work/id_ed25519
  sandbox_host_keys: first-use
  start_timeout_s: 900
node_classes:
  tier: { env: { HAWK_STANDIN_NODE_CLASS: tier } }
YAML

# SETS eval sets (one scenario file each) sharing ITEMS cheap runc items between them.
scenarios=()
for s in $(seq 1 "$sets"); do
  f=$work/set$s.yaml
  {
    printf 'name: set%s\neval_set:\n  name: set%s\n  isolation: standard\n  tasks:\n' "$s" "$s"
    printf '    - package: git+https://git.example.com/evals/cheap@v1\n      name: cheap\n      items:\n'
    for i in $(seq "$s" "$sets" "$items"); do printf '        - name: item%s\n' "$i"; done
    printf 'sandbox_defaults:\n  image: registry.example.com/evals/cheap:v1\n  image_user: root\n'
    printf 'matrix: { runtimes: [runc], node_classes: [tier], attempts: 1 }\n'
  } >"$f"
  scenarios+=("$f")
done

summary() {  # result.json -> "verdict sandboxes judged na most_peers"
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
judged = na = most = 0
for s in doc["sandboxes"]:
    status = {c["control"]: c["status"] for c in s["checks"] if c["control"].startswith("peers")}
    if status.get("peers:tcp-2222") in ("pass", "fail") and status.get("peers:serve-port") in ("pass", "fail"):
        judged += 1
    else:
        na += 1
    most = max(most, len((s.get("peers") or {}).get("peers") or []))
print(doc["summary"]["verdict"], len(doc["sandboxes"]), judged, na, most)
PY
}

failed=0
declare -A wall cpu
echo "$items items in $sets eval sets, $parallel at once, peers_per_sandbox $peers"
printf '%9s %8s %12s %12s %10s %7s %6s %10s  %s\n' network wall_s cpu_s/item wall_s/item sandboxes judged n/a most_peers verdict
for network in shared separate; do
  dir=$out/$network
  rm -rf "$dir"
  start=$(date +%s%N)
  set +e
  HAWK_STANDIN_NETWORK=$network timeout 7200 /usr/bin/time -f '%U %S' -o "$work/cpu-$network" \
    "$isoharness" run --backend hawk --deployment "$work/night.yaml" --out "$dir" --accept-new-host-keys \
    --attempts 1 --node-classes tier --parallel "$parallel" "${scenarios[@]}" >"$dir.log" 2>&1
  rc=$?
  set -e
  wall[$network]=$(echo "scale=2; ($(date +%s%N) - $start) / 1000000000" | bc)
  read -r user sys < <(tail -n1 "$work/cpu-$network")
  cpu[$network]=$(echo "scale=3; ($user + $sys) / $items" | bc)
  per_item=$(echo "scale=2; ${wall[$network]} / $items" | bc)
  read -r verdict boxes judged na most < <(summary "$dir/result.json" 2>/dev/null || echo "none 0 0 0 0")
  printf '%9s %8s %12s %12s %10s %7s %6s %10s  %s (exit %s)\n' "$network" "${wall[$network]}" "${cpu[$network]}" \
    "$per_item" "$boxes" "$judged" "$na" "$most" "$verdict" "$rc"
  if [ "$rc" != 0 ]; then
    failed=1
    tail -n 20 "$dir.log"
  fi
done
echo "shared / separate: wall $(echo "scale=2; ${wall[shared]} / ${wall[separate]}" | bc)," \
  "harness cpu per item $(echo "scale=2; ${cpu[shared]} / ${cpu[separate]}" | bc)"
exit $failed
