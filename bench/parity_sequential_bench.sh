#!/usr/bin/env bash
# Fixed rounds against `--until-decided`, side by side, on this machine (local backend,
# default parity scenario): for an A/A cell (the baseline's twin) and one real gVisor cell,
# how many rounds and how much wall time each way needs to reach its verdict, and whether
# the two ways agree.
#
#   bench/parity_sequential_bench.sh [BUILD_DIR (default: build)] [OUT_DIR (default: bench-out/sequential)]
#
# Runs, one after the other (never in parallel: they would time each other):
#   fixed:      isoharness parity --candidate runc/tier --candidate gvisor/tier --rounds 12
#   sequential: isoharness parity --candidate runc/tier --candidate gvisor/tier --until-decided --batch 4 --rounds 24
# and prints, per cell: rounds timed, verdict, decided or not, and each run's wall time.
# Exits 1 when a run produced no result document; verdicts that disagree are reported, not
# failed (both are statistical: a disagreement near the tolerance line is expected
# sometimes). Timing on a shared machine is noisy: say how loaded it was (uptime is printed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/bench-out/sequential}
isoharness=$build/harness/cli/isoharness
[ -x "$isoharness" ] || { echo "no $isoharness: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the local backend needs it)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read the result documents" >&2; exit 2; }
mkdir -p "$out"
echo "load before: $(uptime)"

cells=(--candidate runc/tier --candidate gvisor/tier)
status=0
for mode in fixed sequential; do
  dir=$out/$mode
  rm -rf "$dir"
  args=(parity "${cells[@]}" --out "$dir" --max-minutes 30)
  if [ "$mode" = fixed ]; then args+=(--rounds 12); else args+=(--until-decided --batch 4 --rounds 24); fi
  start=$(date +%s%N)
  set +e
  timeout 2400 "$isoharness" "${args[@]}" >"$out/$mode.log" 2>&1
  rc=$?
  set -e
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "$ms" >"$out/$mode.wall_ms"
  printf '== %s: exit %d, wall %.1f s\n' "$mode" "$rc" "$(echo "$ms / 1000" | bc -l)"
  found=$(find "$dir" -name '*.json' 2>/dev/null || true)
  if [ -z "$found" ]; then
    echo "no result document; the log ends:"; tail -5 "$out/$mode.log"; status=1
  fi
done
echo "load after: $(uptime)"
[ "$status" = 0 ] || exit "$status"

# One table from the two result documents (the newest result JSON in each directory).
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def load(mode):
    best = None
    for p in sorted(glob.glob(os.path.join(out, mode, "**", "*.json"), recursive=True)):
        try:
            d = json.load(open(p))
        except Exception:
            continue
        if isinstance(d, dict) and isinstance(d.get("parity"), dict):
            best = d
    return best
fixed, seq = load("fixed"), load("sequential")
wall = {m: int(open(os.path.join(out, m + ".wall_ms")).read()) / 1000 for m in ("fixed", "sequential")}
def cells(doc, mode):
    sec = doc["parity"]
    out = {}
    for c in sec.get("cells", []):
        name = c.get("name")
        mix = c.get("mix") or {}
        rounds = min((len(v) for v in sec["samples"].get(name, {}).values()), default=0)
        decided = mix.get("verdict") in ("parity", "regression", "faster")
        if mode == "sequential":
            s = sec.get("sequential", {}).get("cells", {}).get(name, {})
            rounds, decided = s.get("rounds", rounds), s.get("decided", decided)
        out[name] = (rounds, mix.get("verdict"), decided, (mix.get("slowdown") or {}))
    return out
f, s = cells(fixed, "fixed"), cells(seq, "sequential")
print(f"{'cell':<16} {'fixed: rounds verdict':<34} {'until-decided: rounds verdict':<40} agree")
for name in sorted(set(f) | set(s)):
    fr, fv, fd, fi = f.get(name, (0, "-", False, {}))
    sr, sv, sd, si = s.get(name, (0, "-", False, {}))
    fx = f"{fr:>3} {fv} [{fi.get('low', 0):.3f}, {fi.get('high', 0):.3f}]"
    sx = f"{sr:>3} {sv}{'' if sd else ' (undecided)'} [{si.get('low', 0):.3f}, {si.get('high', 0):.3f}]"
    print(f"{name:<16} {fx:<34} {sx:<40} {'yes' if fv == sv else 'NO'}")
print(f"wall time: fixed {wall['fixed']:.1f} s, until-decided {wall['sequential']:.1f} s "
      f"(rounds run: fixed {fixed['parity'].get('rounds')}, until-decided {seq['parity'].get('rounds')})")
PY
