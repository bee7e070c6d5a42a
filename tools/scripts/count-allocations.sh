#!/usr/bin/env bash
# Heap allocations the daemon makes per client frame, and where: starts xr-compositord with
# CLIENTS demo clients of FRAMES frames each, attaches heaptrack once they run (so start-up is
# not counted), and when they are done attributes every allocation recorded to the innermost
# xrc:: function on its stack (else to its thread's outermost frame).
#   tools/scripts/count-allocations.sh OUT [clients=1] [frames=1800] [daemon args...]
# Writes OUT/heaptrack.zst (heaptrack --analyze or heaptrack_print read it), OUT/stacks (one
# line per stack with its count) and prints (and writes OUT/summary.txt) the allocations per
# client frame by owner. The count includes the daemon's shutdown after the clients left (a few
# thousand allocations: under 2 per frame at the defaults). The clients use one 2-layer
# swapchain, as xr-compositor-bench's do. Uses the build in ./build (XRC_BUILD=DIR for another);
# needs heaptrack and gdb (apt-get install heaptrack gdb) and the right to ptrace the daemon.
# heaptrack counts calls to malloc and its kin. The daemon links jemalloc, whose own operator
# new would bypass them (it comes before libstdc++ among the daemon's libraries): the daemon
# runs with libstdc++ preloaded, so that `new` (KJ's promise nodes, Cap'n Proto's messages) goes
# through malloc and is counted. What jemalloc then does with each call is unchanged.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?output directory}
clients=${2:-1} frames=${3:-1800}
shift $(($# < 3 ? $# : 3))
build=${XRC_BUILD:-build}
daemon_bin=$PWD/$build/service/xr-compositord
demo_bin=$build/tools/xr-compositor-demo
ctl_bin=$build/tools/xr-compositorctl
for tool in heaptrack heaptrack_print gdb; do
  command -v $tool >/dev/null || { echo "count-allocations: $tool is not installed" >&2; exit 2; }
done
libstdcxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
mkdir -p "$out"
rm -f "$out/heaptrack.zst"
work=$(mktemp -d)
sock=$work/daemon.sock
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT

LD_PRELOAD=$libstdcxx "$daemon_bin" --socket "$sock" "$@" >"$out/daemon.log" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
for _ in $(seq 200); do grep -q serving "$out/daemon.log" && break; sleep 0.1; done
grep -q serving "$out/daemon.log" || { cat "$out/daemon.log" >&2; exit 1; }
demos=()
for i in $(seq "$clients"); do
  "$demo_bin" --socket "$sock" --frames "$frames" --stereo array --name "alloc-$i" --seed "$i" \
    >"$out/demo-$i.log" 2>&1 &
  demos+=($!)
done
pids+=("${demos[@]}")
sleep 2  # past the clients' start
heaptrack -o "$out/heaptrack" -p "$daemon_pid" >"$out/heaptrack.log" 2>&1 &
pids+=($!)
heaptrack_pid=$!
for _ in $(seq 600); do grep -q "injection finished" "$out/heaptrack.log" && break; sleep 0.1; done
grep -q "injection finished" "$out/heaptrack.log" || { cat "$out/heaptrack.log" >&2; exit 1; }
# The frames the clients had submitted when the recording began.
before=$("$ctl_bin" --socket "$sock" status --json |
  python3 -c 'import json, sys; print(sum(c["frames_submitted"] for c in json.load(sys.stdin)["clients"]))')
for p in "${demos[@]}"; do
  wait "$p" || { echo "count-allocations: a demo client failed:" >&2; tail -n 3 "$out"/demo-*.log >&2; exit 1; }
done
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
wait "$heaptrack_pid" || true
heaptrack_print -f "$out/heaptrack.zst" --flamegraph-cost-type allocations -F "$out/stacks" -a 0 -p 0 -T 0 >/dev/null

python3 - "$out/stacks" "$((clients * frames - before))" "$clients" <<'PY' | tee "$out/summary.txt"
import collections, re, sys
path, recorded, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def name(frame):  # the function without arguments, template arguments or source file
    frame = re.sub(r"\s*\([^()]*\)\s*$", "", frame)
    while (stripped := re.sub(r"<[^<>]*>", "", frame)) != frame:
        frame = stripped
    return re.sub(r"\([^()]*\)", "()", frame).strip()
owners = collections.Counter()
for line in open(path):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    names = [name(f) for f in stack.split(";")]
    # The function's own name is the last word (after a return type or "non-virtual thunk to").
    ours = [n for n in names if re.sub(r"\s+const$", "", n).split(" ")[-1].startswith("xrc::")]
    owners[ours[-1] if ours else "(no xrc:: frame) " + names[0]] += int(count)
print(f"{sum(owners.values()) / recorded:.1f} heap allocations per client frame "
      f"({clients} client(s), {recorded} client frames recorded)")
for owner, count in owners.most_common(30):
    if count / recorded >= 0.5:
        print(f"  {count / recorded:7.1f}  {owner}")
PY
