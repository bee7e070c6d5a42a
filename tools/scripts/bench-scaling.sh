#!/usr/bin/env bash
# Measures how the daemon's per-frame costs grow with the number of clients: starts
# xr-compositord on the headless backend, runs xr-compositor-bench against it for each client
# count and writes OUT/scaling.json; then plots it (plot-scaling.sh) unless XRC_NO_PLOT=1.
#   tools/scripts/bench-scaling.sh OUT [seconds=5] [view WxH=1440x1600] [counts="1 4 16 32 64"]
# Uses the existing build in ./build (XRC_BUILD=DIR for another; binaries may also come from
# XRC_DAEMON / XRC_DEMO / XRC_BENCH, as on the device machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?output directory}
seconds=${2:-5}
view=${3:-1440x1600}
counts=${4:-1 4 16 32 64}
build=${XRC_BUILD:-build}
daemon_bin=${XRC_DAEMON:-$build/service/xr-compositord}
demo_bin=${XRC_DEMO:-$build/tools/xr-compositor-demo}
bench_bin=${XRC_BENCH:-$build/tools/xr-compositor-bench}
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null || true; rm -rf "$work"' EXIT
socket=$work/daemon.sock
"$daemon_bin" --socket "$socket" --view-size "$view" --log-level warn 2>"$out/daemon.log" &
daemon=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
# shellcheck disable=SC2086  # counts is a list
"$bench_bin" --socket "$socket" --demo "$demo_bin" --seconds "$seconds" --clients $counts --json >"$out/scaling.json"
echo "wrote $out/scaling.json"
[ "${XRC_NO_PLOT:-0}" = 1 ] || "$(dirname "$0")/plot-scaling.sh" "$out/scaling.json" "$out/scaling.svg"
