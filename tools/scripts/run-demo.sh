#!/usr/bin/env bash
# Builds xr-compositor, starts xr-compositord on the headless backend, runs the demo client for
# a few seconds and prints `xr-compositorctl status` while it renders and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/scripts/deps.sh
xrc_install_deps
xrc_build build

export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xrc-runtime-$(id -u)}
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
socket="$XDG_RUNTIME_DIR/xr-compositor/demo.sock"
./build/service/xr-compositord --backend headless --socket "$socket" &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done

# The demo holds its session after the last frame until its stdin closes, so the final status
# still shows it.
coproc DEMO { ./build/tools/xr-compositor-demo --socket "$socket" --frames 360 --stats --hold 2>&1; }
demo_out=${DEMO[0]}
demo_in=${DEMO[1]}
sleep 2
echo "--- xr-compositorctl status (demo rendering) ---"
./build/tools/xr-compositorctl --socket "$socket" status
status=1
while IFS= read -r line <&"$demo_out"; do
  echo "$line"
  case "$line" in release_us*) status=0; break ;; esac
done
echo "--- xr-compositorctl status (demo finished its frames) ---"
./build/tools/xr-compositorctl --socket "$socket" status
exec {demo_in}>&-
wait "$DEMO_PID" || status=1
exit $status
