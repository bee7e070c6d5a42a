#!/usr/bin/env bash
# Runs Debian's hello_xr through xr-compositord's OpenXR runtime for a while and prints what the
# runtime measured per frame: blocking round trips to the daemon and call times (p50/p99).
#   tools/scripts/bench-openxr.sh [seconds=10] [Vulkan2|Vulkan] [view WxH=1440x1600]
# Uses the existing build in ./build (run tools/scripts/run-demo.sh once to create it).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
graphics=${2:-Vulkan2}
view=${3:-1440x1600}
work=$(mktemp -d)
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null || true; rm -rf "$work"' EXIT
socket=$work/daemon.sock
./build/service/xr-compositord --socket "$socket" --view-size "$view" --log-level warn &
daemon=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
export XR_RUNTIME_JSON=$PWD/build/client-lib/openxr_xr-compositor.json XR_COMPOSITOR_SOCKET=$socket
export XRC_OPENXR_STATS=$work/stats.json
(sleep "$seconds"; echo) | hello_xr -g "$graphics" >"$work/hello_xr.log" 2>&1 || {
  tail -20 "$work/hello_xr.log"
  exit 1
}
./build/tools/xr-compositorctl --socket "$socket" status >/dev/null
cat "$XRC_OPENXR_STATS"
