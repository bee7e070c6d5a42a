#!/usr/bin/env bash
# What a second daemon hop costs: runs xr-compositor-bench against daemon A (headless) directly,
# then against daemon B (--backend openxr over A, through our OpenXR runtime), and samples A's
# status while B's clients run. Writes OUT/direct.json, OUT/hop.json (bench reports) and
# OUT/a-during-hop.json (A's status: its CPU and latency for B's frames), then prints a summary
# when jq is there.
#   tools/scripts/bench-hop.sh OUT [seconds=4] [view WxH=1440x1600] [clients="1 4"]
# Uses the existing build in ./build (XRC_BUILD=DIR for another; binaries may also come from
# XRC_DAEMON / XRC_DEMO / XRC_BENCH / XRC_CTL and the runtime manifest from XRC_OPENXR_MANIFEST).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?output directory}
seconds=${2:-4}
view=${3:-1440x1600}
clients=${4:-1 4}
build=${XRC_BUILD:-build}
daemon_bin=${XRC_DAEMON:-$build/service/xr-compositord}
demo_bin=${XRC_DEMO:-$build/tools/xr-compositor-demo}
bench_bin=${XRC_BENCH:-$build/tools/xr-compositor-bench}
ctl_bin=${XRC_CTL:-$build/tools/xr-compositorctl}
manifest=${XRC_OPENXR_MANIFEST:-$PWD/$build/client-lib/openxr_xr-compositor.json}
mkdir -p "$out"
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT
wait_for() { for _ in $(seq 200); do grep -q serving "$1" 2>/dev/null && return 0; sleep 0.1; done; cat "$1"; exit 1; }

"$daemon_bin" --socket "$work/a.sock" --view-size "$view" --log-level info 2>"$out/daemon-a.log" &
pids+=($!)
wait_for "$out/daemon-a.log"
# shellcheck disable=SC2086  # clients is a list
"$bench_bin" --socket "$work/a.sock" --demo "$demo_bin" --seconds "$seconds" --clients $clients --json \
  >"$out/direct.json"

XR_RUNTIME_JSON=$manifest XR_COMPOSITOR_SOCKET=$work/a.sock \
  "$daemon_bin" --backend openxr --socket "$work/b.sock" --log-level info 2>"$out/daemon-b.log" &
pids+=($!)
wait_for "$out/daemon-b.log"
last=${clients##* }
# A's view of B while the last (largest) scenario runs: B is A's only client.
(
  while ! grep -q "\"clients\": $last" "$out/hop.json" 2>/dev/null; do
    "$ctl_bin" --socket "$work/a.sock" status --json >"$work/a.json" 2>/dev/null && cp "$work/a.json" "$out/a-during-hop.json"
    sleep 0.5
  done
) &
sampler=$!
# shellcheck disable=SC2086
"$bench_bin" --socket "$work/b.sock" --demo "$demo_bin" --seconds "$seconds" --clients $clients --json \
  >"$out/hop.json"
kill $sampler 2>/dev/null || true
echo "wrote $out/direct.json $out/hop.json $out/a-during-hop.json"
command -v jq >/dev/null || exit 0
summary='.scenarios[] | [.clients, .latency_us.p50, .latency_us.p99, .release_call_us.p50, .release_call_us.p99,
  .daemon_cpu_us_per_client_frame, .frames_late, .missed_display_frames] | @tsv'
echo "clients latency_p50 latency_p99 release_p50 release_p99 cpu_us_per_client_frame late missed"
echo "direct (clients on A):"; jq -r "$summary" "$out/direct.json"
echo "hop (clients on B over A; B's figures, latency to A's vsync):"; jq -r "$summary" "$out/hop.json"
echo "A while serving B (last scenario): cpu us per B frame, latency p50/p99 of B's frames on A:"
jq -r '[.daemon_cpu_us_per_client_frame, (.clients[0].latency_us.p50), (.clients[0].latency_us.p99)] | @tsv' \
  "$out/a-during-hop.json"
