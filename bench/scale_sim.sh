#!/usr/bin/env bash
# A night of many items on a simulated deployment: `isoharness run --backend hawk` through
# the stand-in platform (tests/hawk_standin/hawk) with its simulation knobs on: each eval
# takes a lognormal time to be ready (median READY_MEDIAN_S, default 20 s), the platform
# allows QUOTA live evals per user (default 32), and the profile's hawk.max_live_evals says
# the same. For each size (default 1 16 64 128 items of one cheap runc item) it prints the
# wall time, the ideal (one item's time at the median ready delay × the waves the quota
# forces: ceil(N / QUOTA)), the
# ratio, the peak RSS of the largest process in the run's tree (GNU time %M: isoharness or a
# child it waited for), the harness's own peak (result.json context.harness_memory) and the
# most sandboxes it held at once, and the retries and quota waits its starts took; then, for
# reference, the wall time of plain OpenSSH reaching min(N, QUOTA) ready sandboxes at once
# (`ssh -J … true`, all started together).
#
#   bench/scale_sim.sh [BUILD_DIR (default: build)] [OUT_DIR (default: bench-out/scale)] [SIZES...]
#   environment: READY_MEDIAN_S (20), READY_SIGMA (0.5: the lognormal's shape; 0, every
#                eval ready after exactly the median), QUOTA (32), ACCEPT_S (1): the
#                stand-in's knobs;
#                RTT_MS (40): the far jumphost link of every eval's world (the profile's
#                jumphost_link.rtt_ms: the world's delay relay, harness/deploy/local/README.md);
#                WITNESSES (both): both = the eval worlds' witnesses and the stand-in's
#                Hubble judge egress, none = the profile says witness: none;
#                COMPARE (0): 1 runs each size a second time with no latency (RTT 0, ready
#                at once) and prints whether every item got the same verdict and the same
#                status for every check (a difference is listed and fails the script).
#
# Every eval the stand-in starts is a real `isoharness local up` (a world and a runc
# sandbox) on this machine: 32 at once is heavy on two cores, and the ideal assumes the
# platform, not this machine, is the bottleneck. Each eval is its own world, and a machine
# has 32 world slots (the host links' 198.51.100.128/25), shared with every other world on
# it: with QUOTA 32 and any other world up, some `local up` finds no free slot and its item
# waits out start_timeout_s and ends in ERROR (seen with other engineers' tests running);
# QUOTA=24 leaves room. Each run is bounded (2 h); a run that does
# not pass is reported with its log and the script exits 1 at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/bench-out/scale}
shift $(($# > 2 ? 2 : $#))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 16 64 128)
ready=${READY_MEDIAN_S:-20}
sigma=${READY_SIGMA:-0.5}
compare=${COMPARE:-0}
quota=${QUOTA:-32}
accept=${ACCEPT_S:-1}
rtt=${RTT_MS:-40}
[[ "$rtt" =~ ^[0-9]+$ ]] && [ "$rtt" -le 2000 ] || { echo "RTT_MS $rtt: 0..2000" >&2; exit 2; }
isoharness=$build/harness/cli/isoharness
standin=$here/tests/hawk_standin/hawk
[ -x "$isoharness" ] || { echo "no $isoharness: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the stand-in's sandboxes are local ones)" >&2; exit 2; }
for n in "${sizes[@]}"; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 256 ] || { echo "size $n: 1..256" >&2; exit 2; }
done
# Debian's own PATH: the stand-in runs under the system's python3, as on a fresh machine. A
# python3 found first elsewhere (a pyenv shim: 210 ms a call here against 45 ms) makes every
# simulated platform call cost several times its CPU, and 32 evals at once share two cores.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$out"
work=$(mktemp -d /tmp/ih-scale-sim.XXXXXX)
trap 'rm -rf "$work"' EXIT

ssh-keygen -q -t ed25519 -N '' -f "$work/id_ed25519"
export HAWK_STANDIN_ISOHARNESS=$isoharness HAWK_STANDIN_STATE=$work/standin
# The stand-in's evals are local worlds with the far link on: the local profile plus
# jumphost_link (a YAML mapping key added at the end).
{ cat "$here/scenarios/deployments/local.yaml"; printf '\njumphost_link: { rtt_ms: %s }\n' "$rtt"; } >"$work/far-local.yaml"
export HAWK_STANDIN_PROFILE=$work/far-local.yaml
export HAWK_STANDIN_READY_MEDIAN_S=$ready HAWK_STANDIN_READY_SIGMA=$sigma HAWK_STANDIN_MAX_LIVE=$quota
export HAWK_STANDIN_ACCEPT_S=$accept
"$standin" human register --name alice --ssh-key "$(cat "$work/id_ed25519.pub")"
# The witnesses (docs/CONTRACTS.md §4.4, §4.6): each eval's world witness, its log served by
# the eval's jumphost, for arrivals, and the stand-in's Hubble for the drop point; the lead
# covers the drawn ready delay. WITNESSES=none: the deployment declares it has none, and its
# egress checks rest on the sandboxes' reports.
case ${WITNESSES:-both} in
  both)
    echo "standin-witness-token-$$-$RANDOM" >"$work/witness.token"
    export ISOHARNESS_WITNESS_KEY_FILE=$work/witness.token
    witnesses="witness:
  canary: 203.0.113.40
  canary6: \"2001:db8:100::40\"
  zone: witness.example.org
  log: { http: \"http://jumphost:8053/witness.log\", timeout_s: 10, token_file: $work/witness.token }
hubble:
  command: [$standin, hubble, observe, --output, json]
  timeout_s: 60
  lead_s: 3600" ;;
  none) witnesses="witness: none" ;;
  *) echo "WITNESSES ${WITNESSES}: both or none" >&2; exit 2 ;;
esac
cat >"$work/sim.yaml" <<YAML
name: sim
backend: hawk
$witnesses
runtime_classes: [gvisor]
sandbox_runtime_class: gvisor
sandbox_runtime_class_is_default: false
runtime_handlers: { gvisor: runsc }
node_mounts: [/usr, /etc/alternatives]
hawk:
  cli: $standin
  human: alice
  identity_file: $work/id_ed25519
  sandbox_host_keys: first-use
  start_timeout_s: 900
  max_live_evals: $quota
node_classes:
  tier: { env: { HAWK_STANDIN_NODE_CLASS: tier } }
YAML

scenario() {  # N cheap runc items (isolation standard), one task
  local n=$1 f=$work/items-$1.yaml
  {
    printf 'name: items%s\neval_set:\n  name: items%s\n  isolation: standard\n  tasks:\n' "$n" "$n"
    printf '    - package: git+https://git.example.com/evals/cheap@v1\n      name: cheap\n      items:\n'
    for i in $(seq 1 "$n"); do printf '        - name: item%s\n' "$i"; done
    printf 'sandbox_defaults:\n  image: registry.example.com/evals/cheap:v1\n  image_user: root\n'
    printf 'matrix: { runtimes: [runc], node_classes: [tier], attempts: 1 }\n'
  } >"$f"
  echo "$f"
}

summary() {  # result.json -> "verdict sandboxes retries quota_waits harness_rss_mib most_held"
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
facts = [s.get("facts") or {} for s in doc["sandboxes"]]
retries = sum(f.get("hawk_start_retries", 0) for f in facts)
waits = sum(f.get("hawk_quota_waits", 0) for f in facts)
mem = doc.get("context", {}).get("harness_memory") or {}
print(doc["summary"]["verdict"], len(doc["sandboxes"]), retries, waits,
      mem.get("peak_rss_mib", "?"), mem.get("most_sandboxes_held", "?"))
PY
}

# Every item's verdict and its checks' statuses, keyed by item, runtime and node class (eval
# ids differ between runs), as one JSON object; then two of them compared.
verdicts() {  # result.json -> JSON on stdout
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
out = {}
for s in doc["sandboxes"]:
    key = "%s %s %s #%s" % (s["item_id"], s["runtime"], s["node_class"], s["attempt"])
    out[key] = {"error": bool(s.get("error")), "checks": {c["control"]: c["status"] for c in s["checks"]}}
json.dump(out, sys.stdout, sort_keys=True)
PY
}
same_verdicts() {  # A.json B.json -> "same" or "N differ" (and the differences on stderr)
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
diff = []
for key in sorted(set(a) | set(b)):
    x, y = a.get(key), b.get(key)
    if x is None or y is None:
        diff.append("%s: only %s" % (key, "with latency" if y is None else "without"))
    elif x != y:
        d = {c: (x["checks"].get(c), y["checks"].get(c)) for c in set(x["checks"]) | set(y["checks"])
             if x["checks"].get(c) != y["checks"].get(c)}
        diff.append("%s: error %s/%s %s" % (key, x["error"], y["error"], d))
for line in diff:
    print("  differs (with latency, without):", line, file=sys.stderr)
print("same" if not diff else "%d_differ" % len(diff))
PY
}

# The platform's own floor for this size: how long the platform's side of each eval took
# (the stand-in's `ready` event: from the start call to the sandbox up and past its drawn
# ready time, so a start slowed by this machine's load counts as the platform's; the drawn
# delay where an eval never became ready; plus its `delete` event's time, from the delete
# call until it returned, for the quota's slot is not free before), each plus the harness's
# work on one ready item (WORK s: the one-item run's wall less its eval's platform time),
# list-scheduled in start order on QUOTA slots. A harness with no cost of its own would
# finish at this makespan; the one-item-times-waves ideal ignores the slowest of each
# wave's random ready times, and the platform's slower starts and deletes under load.
platform_floor() {  # FROM WORK -> "floor_s platform_s_of_first drawn_ready_s_of_first"
  python3 - "$work/standin/events.jsonl" "$1" "$2" "$quota" <<'PY'
import heapq, json, sys
path, start, work, quota = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
events = [json.loads(line) for line in open(path).read().splitlines()[start:]]
starts = [e for e in events if e.get("event") == "start" and "ready_s" in e]
platform = {e["id"]: e["platform_s"] for e in events if e.get("event") == "ready"}
deleting = {e["id"]: e.get("delete_s", 0.0) for e in events if e.get("event") == "delete"}
times = [platform.get(e["id"], e["ready_s"]) + deleting.get(e["id"], 0.0) for e in starts]
slots = [0.0] * max(1, quota)
for t in times:
    heapq.heappush(slots, heapq.heappop(slots) + t + work)
print("%.2f %.2f %.2f" % (max(slots), times[0] if times else 0.0, starts[0]["ready_s"] if starts else 0.0))
PY
}

# Plain OpenSSH for reference: start k evals, wait until each answers ssh-command, then
# `ssh -J` into all of them at once and time that alone.
ssh_reference() {
  local k=$1 ids=() lines=() start
  for _ in $(seq 1 "$k"); do
    ids+=("$("$standin" human eval start "$work/items-1.yaml" --human alice --skip-confirm |
      sed -n 's/^Eval set ID: //p')")
  done
  for id in "${ids[@]}"; do
    lines+=("$("$standin" human eval ssh-command "$id" --timeout 900 | sed -n 's/^  ssh //p')")
  done
  start=$(date +%s%N)
  # A config file, not -o: ssh -J starts the jump hop's ssh with the config, not with -o.
  printf 'Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 30\n' \
    "$work/id_ed25519" >"$work/ssh_config"
  for l in "${lines[@]}"; do
    # shellcheck disable=SC2086 # the stand-in's own `-J user@host:port -p port user@host` words
    timeout 120 ssh -F "$work/ssh_config" $l true &
  done
  wait || true
  echo "scale=2; ($(date +%s%N) - $start) / 1000000000" | bc
  for id in "${ids[@]}"; do "$standin" delete "$id" || true; done
}

failed=0
one=""
work_s=""
echo "ready median ${ready} s (lognormal sigma ${sigma}), quota ${quota}, jumphost link rtt ${rtt} ms"
printf '%6s %9s %9s %6s %8s %6s %10s %9s %5s %8s %6s %9s  %s\n' items wall_s ideal_s ratio floor_s /floor \
  tree_rss_mb harness_mb held retries quota ssh_J_s verdict
# The same size with no latency at all (rtt 0, every eval ready at once): its verdicts.
without_latency() {  # N scenario.yaml -> "same" | "K_differ" | "none"
  local n=$1 f=$2 dir=$out/items-$1-no-latency
  rm -rf "$dir"
  if ! HAWK_STANDIN_PROFILE=$here/scenarios/deployments/local.yaml HAWK_STANDIN_READY_MEDIAN_S=0 \
    timeout 7200 "$isoharness" run --backend hawk --deployment "$work/sim.yaml" --out "$dir" \
    --accept-new-host-keys "$f" >"$dir.log" 2>&1 && [ ! -f "$dir/result.json" ]; then
    echo none
    return
  fi
  verdicts "$out/items-$n/result.json" >"$work/v-$n.json"
  verdicts "$dir/result.json" >"$work/v0-$n.json"
  same_verdicts "$work/v-$n.json" "$work/v0-$n.json"
}
for n in "${sizes[@]}"; do
  f=$(scenario "$n")
  [ -f "$work/items-1.yaml" ] || scenario 1 >/dev/null
  rm -rf "${out:?}/items-$n"
  from=0
  [ ! -f "$work/standin/events.jsonl" ] || from=$(wc -l <"$work/standin/events.jsonl")
  start=$(date +%s%N)
  set +e
  timeout 7200 /usr/bin/time -f '%M' -o "$work/rss-$n" "$isoharness" run --backend hawk --deployment "$work/sim.yaml" \
    --out "$out/items-$n" --accept-new-host-keys "$f" >"$out/items-$n.log" 2>&1
  rc=$?
  set -e
  wall=$(echo "scale=2; ($(date +%s%N) - $start) / 1000000000" | bc)
  if [ -z "$work_s" ]; then
    read -r _ first_platform first_drawn < <(platform_floor "$from" 0)
    work_s=$(echo "scale=2; w = $wall - $first_platform; if (w < 0) w = 0; w" | bc)
    # One item's time at the median ready delay, not at the one delay its run happened to draw.
    one=$(echo "scale=2; $wall - $first_drawn + $ready" | bc)
    echo "       one item: ${wall} s; its eval's drawn ready delay ${first_drawn} s, the platform's side" \
      "${first_platform} s, the harness's ${work_s} s; at the median delay: ${one} s"
  fi
  read -r floor _ _ < <(platform_floor "$from" "$work_s")
  by_floor=$(echo "scale=2; $wall / $floor" | bc)
  waves=$(((n + quota - 1) / quota))
  ideal=$(echo "scale=2; $one * $waves" | bc)
  ratio=$(echo "scale=2; $wall / $ideal" | bc)
  rss=$(($(tail -n1 "$work/rss-$n") / 1024))
  read -r verdict boxes retries waits hrss held < <(summary "$out/items-$n/result.json" 2>/dev/null || echo "none 0 0 0 ? ?")
  ref=$(ssh_reference $((n < quota ? n : quota)))
  printf '%6s %9s %9s %6s %8s %6s %10s %9s %5s %8s %6s %9s  %s (%s sandboxes, exit %s)\n' "$n" "$wall" "$ideal" \
    "$ratio" "$floor" "$by_floor" "$rss" "$hrss" "$held" "$retries" "$waits" "$ref" "$verdict" "$boxes" "$rc"
  if [ "$rc" != 0 ]; then
    failed=1
    tail -n 20 "$out/items-$n.log"
  fi
  if [ "$compare" = 1 ]; then
    same=$(without_latency "$n" "$f")
    echo "       $n items without latency: verdicts $same"
    [ "$same" = same ] || failed=1
  fi
done
exit $failed
