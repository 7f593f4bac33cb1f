#!/usr/bin/env bash
# The default parity matrix (runc and gVisor on tier and non-tier nodes), timed end to end:
# `isoharness parity --quick` and then the full `isoharness parity`, one after the other in
# one run, each against its target (2 and 10 minutes on a 2-core machine). Each run's
# parity.html is then opened in headless Chromium (in a fresh network namespace, so the
# browser cannot send a packet anywhere) and screenshotted at 1200x900.
#
#   bench/parity_matrix_bench.sh [BUILD_DIR (default: build)] [OUT_DIR (default: bench-out/parity)]
#
# Prints per run: wall time against the target, every candidate's mix verdict, the getpid
# cross-check, and the screenshot's path, size and dimensions. Exits 1 if a run failed to
# produce its report or the screenshot; a slow run is reported, not failed (timing targets
# belong to benchmarks, the machine is shared).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/bench-out/parity}
isoharness=$build/harness/cli/isoharness
[ -x "$isoharness" ] || { echo "no $isoharness: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (the local backend needs it)" >&2; exit 2; }
mkdir -p "$out"

screenshot() {  # html png
  local profile
  profile=$(mktemp -d)
  timeout 120 unshare --net -- chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" --screenshot="$2" --window-size=1200,900 "file://$1" >/dev/null 2>&1
  local rc=$?
  rm -rf "$profile"
  return $rc
}

png_size() {  # width x height from the IHDR chunk
  od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'
}

status=0
for mode in quick full; do
  dir=$out/$mode
  rm -rf "$dir"
  args=(parity --out "$dir")
  target=600
  if [ "$mode" = quick ]; then args+=(--quick); target=120; fi
  start=$(date +%s%N)
  set +e
  "$isoharness" "${args[@]}" >"$out/$mode.log" 2>&1
  rc=$?
  set -e
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  printf '\n== isoharness parity%s: %d s (target %d s: %s), exit %d\n' \
    "$([ "$mode" = quick ] && echo ' --quick')" "$secs" "$target" "$([ "$secs" -le "$target" ] && echo met || echo MISSED)" "$rc"
  grep -E "mix slowdown" "$out/$mode.log" || true
  if [ ! -f "$dir/parity.html" ]; then
    echo "no parity.html; the log ends:"; tail -5 "$out/$mode.log"; status=1; continue
  fi
  sed -n '/^## getpid cross-check/,/^$/p;/^| candidate | isoprobe/,/^$/p' "$dir/parity.md" | grep '^|' || true
  if screenshot "$dir/parity.html" "$dir/parity.png" && [ -s "$dir/parity.png" ]; then
    echo "screenshot $dir/parity.png: $(stat -c %s "$dir/parity.png") bytes, $(png_size "$dir/parity.png")"
  else
    echo "screenshot of $dir/parity.html failed"; status=1
  fi
done
exit $status
