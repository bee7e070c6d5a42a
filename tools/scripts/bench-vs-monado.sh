#!/usr/bin/env bash
# Side by side with Monado: the same app (trixie's hello_xr -g Vulkan2, 320x240 views) against
# Monado 25 (monado-service, null compositor, simulated HMD) and against xr-compositord (headless,
# --view-size 320x240), at 20 and 90 Hz, runs interleaved, a fresh service per run, everything in
# the Debian trixie root of tests/monado/monado-root.sh (same Mesa, same loader, same app).
#
#   tools/scripts/bench-vs-monado.sh BUILD_DIR [OUT_DIR]
#
# Per run and side:
#   - idle: the service's CPU (all threads, /proc/PID/task/*/schedstat, ns) over XRC_BENCH_IDLE_S
#     seconds with no client, as ms per second;
#   - with hello_xr, after XRC_BENCH_WARMUP_S seconds, over XRC_BENCH_SECONDS: the app's frames
#     (xrEndFrame calls, counted by a perf uprobe on the root's OpenXR loader), the service's CPU
#     per app frame (all threads; and without lavapipe's rasterizer threads `llvmpipe-*`, whose
#     work a GPU does) and the app's own CPU per frame (all threads; and without `llvmpipe-*`).
#   - before each, a reference: the CPU per wake-up of a thread that only sleeps to each period
#     of the rate (XRC_BENCH_WAKE_S seconds, built with cc), this machine's price of a wake-up then.
# Prints a table of min-max over the runs; every sample is in OUT_DIR/samples.csv, the service's
# CPU per app frame by thread in OUT_DIR/threads.csv, the app's in OUT_DIR/app-threads.csv (with how
# often each thread was put on a CPU per app frame).
# Sides: Monado; ours (hello_xr's waits answered at once, the default since protocol 1.18); "wake",
# ours with hello_xr asking for its waits to be answered at their wake (XRC_ANSWER_WAITS_AT_ONCE=0;
# XRC_BENCH_AT_WAKE=0 leaves it out).
# Env: XRC_BENCH_RUNS (3), XRC_BENCH_RATES ("20 90"), XRC_BENCH_SECONDS (15), XRC_BENCH_IDLE_S
# (10), XRC_BENCH_WARMUP_S (5), XRC_BENCH_WAKE_S (3), XRC_MONADO_ROOT (/var/tmp/xrc-monado-root), XRC_BENCH_BASE_DAEMON
# (unset: an xr-compositord binary, of an earlier commit say, measured as a third side "base" in
# the same interleaved runs, with BUILD_DIR's client library: an A/B of a daemon change).
# Needs root (chroot, perf uprobes) and perf; keep the machine otherwise idle while it runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(realpath "${1:?usage: bench-vs-monado.sh BUILD_DIR [OUT_DIR]}")
out=$(realpath -m "${2:-$build/bench-vs-monado}")
runs=${XRC_BENCH_RUNS:-3}
rates=${XRC_BENCH_RATES:-20 90}
seconds=${XRC_BENCH_SECONDS:-15}
idle_seconds=${XRC_BENCH_IDLE_S:-10}
warmup=${XRC_BENCH_WARMUP_S:-5}
wake_seconds=${XRC_BENCH_WAKE_S:-3}
root=${XRC_MONADO_ROOT:-/var/tmp/xrc-monado-root}
base_daemon=${XRC_BENCH_BASE_DAEMON:-}
at_wake=${XRC_BENCH_AT_WAKE:-1}
[ -z "$base_daemon" ] || [ -x "$base_daemon" ] || { echo "bench-vs-monado: $base_daemon is no executable" >&2; exit 2; }

[ "$(id -u)" = 0 ] || { echo "bench-vs-monado: needs root (chroot, perf uprobes)" >&2; exit 2; }
command -v perf >/dev/null || { echo "bench-vs-monado: needs perf (apt-get install linux-perf)" >&2; exit 2; }
rc=0
"$repo/tests/monado/monado-root.sh" "$root" >/dev/null || rc=$?
[ $rc = 0 ] || { echo "bench-vs-monado: preparing the trixie root failed (exit $rc; 3: no Debian archive)" >&2; exit 1; }
source "$repo/tests/monado/root-lib.sh"
xrc_root_install "$build" "$root" || { echo "bench-vs-monado: installing the build into the root failed" >&2; exit 1; }
if [ -n "$base_daemon" ]; then
  cp "$base_daemon" "$root/opt/xrc/bin/xr-compositord-base"
  # Libraries only that binary needs are not among what xrc_root_install brought.
  if chroot "$root" env LD_LIBRARY_PATH=/opt/xrc/lib ldd /opt/xrc/bin/xr-compositord-base | grep 'not found'; then
    echo "bench-vs-monado: $base_daemon needs libraries the root lacks (above)" >&2
    exit 1
  fi
fi
loader=$(ls "$root"/usr/lib/x86_64-linux-gnu/libopenxr_loader.so.1.* | head -1)
rm -rf "$out" && mkdir -p "$out"
xrc_root_mount "$root"
trap 'xrc_root_cleanup; perf probe -q -d "xrcbench:*" 2>/dev/null || true' EXIT
perf probe -q -d 'xrcbench:*' 2>/dev/null || true
perf probe -q -x "$loader" -a 'xrcbench:end_frame=xrEndFrame'

run_dir=/run/xrc-bench
in_root=(chroot "$root" env -i PATH=/usr/bin:/bin:/opt/xrc/bin HOME=/root XDG_RUNTIME_DIR=$run_dir VK_LAYER_PATH=
  LD_LIBRARY_PATH=/opt/xrc/lib)

# Per-thread CPU of a process: "name ns runs" lines, runs being how often the thread was put on a
# CPU (its wake-ups, about; threads of the same name summed; the main thread is "main", apart from
# the driver threads that inherit its name, such as lavapipe's queue thread).
thread_cpu() {
  local t name stat
  for t in /proc/"$1"/task/*; do
    # A thread may end while it is read: it is left out whole.
    name=$(tr ' ' _ <"$t/comm" 2>/dev/null) || continue
    stat=$(cut -d' ' -f1,3 "$t/schedstat" 2>/dev/null) || continue
    [ -n "$name" ] && [ -n "$stat" ] || continue
    [ "${t##*/}" = "$1" ] && name=main
    echo "$name $stat"
  done | awk '{ ns[$1] += $2; runs[$1] += $3 } END { for (n in ns) print n, ns[n], runs[n] }'
}
# Total and non-llvmpipe CPU (ns) between two thread_cpu snapshots: "all without_llvmpipe".
cpu_delta() {
  awk 'NR == FNR { a[$1] = $2; next } { d = $2 - a[$1]; all += d; if ($1 !~ /^llvmpipe/) own += d }
       END { printf "%d %d\n", all, own }' "$1" "$2"
}

# CSV rows "TAG,thread,us_per_app_frame,runs_per_app_frame" between two thread_cpu snapshots
# over FRAMES app frames: thread_rows TAG FRAMES BEFORE AFTER.
thread_rows() {
  awk -v f="$2" -v tag="$1" 'NR == FNR { a[$1] = $2; r[$1] = $3; next }
    { printf "%s,%s,%.0f,%.2f\n", tag, $1, ($2 - a[$1]) / 1000 / f, ($3 - r[$1]) / f }' "$3" "$4"
}

# The machine's own cost of a wake-up at RATE Hz, as a reference for the figures above: a thread
# that sleeps to each period on a timerfd and does nothing else, its CPU per wake-up (schedstat,
# so scheduler and interrupt time charged to it count, as for the services' threads). On a VM
# whose CPUs idle between wake-ups this is most of what a thread that wakes once per frame costs.
wake_reference_bin=$out/wake-reference
cc -O2 -x c -o "$wake_reference_bin" - <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>
static unsigned long long cpu_ns(void) {
  unsigned long long ns;
  FILE* f = fopen("/proc/thread-self/schedstat", "r");
  if (!f || fscanf(f, "%llu", &ns) != 1) exit(1);
  fclose(f);
  return ns;
}
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const double rate = atof(argv[1]);
  const long n = (long)(rate * atof(argv[2]));
  const long periodNs = (long)(1e9 / rate);
  struct itimerspec spec = {{periodNs / 1000000000, periodNs % 1000000000}, {periodNs / 1000000000, periodNs % 1000000000}};
  int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  if (fd < 0 || n <= 0 || timerfd_settime(fd, 0, &spec, NULL) != 0) return 1;
  uint64_t expirations;
  const unsigned long long before = cpu_ns();
  for (long i = 0; i < n; ++i)
    if (read(fd, &expirations, sizeof expirations) != sizeof expirations) return 1;
  printf("%.1f\n", (double)(cpu_ns() - before) / 1000.0 / (double)n);
  return 0;
}
C

# One measurement: service SIDE (monado|ours) at RATE Hz, run RUN. Appends to samples.csv.
measure() {
  local side=$1 rate=$2 run=$3 tag="$1-$2hz-run$3" service runtime_json ready wake_us
  wake_us=$("$wake_reference_bin" "$rate" "$wake_seconds") || { echo "the wake-up reference failed" >&2; exit 1; }
  rm -rf "${root:?}$run_dir" && mkdir -p "$root$run_dir" && chmod 700 "$root$run_dir"
  if [ "$side" = monado ]; then
    local bin=/usr/bin/monado-service
    [ "$rate" = 90 ] && bin=/opt/monado90/monado-service
    [ "$rate" = 20 ] || [ "$rate" = 90 ] || { echo "Monado runs at 20 or 90 Hz here" >&2; exit 2; }
    "${in_root[@]}" XRT_COMPOSITOR_NULL=1 SIMULATED_ENABLE=1 XRT_NO_STDIN=1 "$bin" >"$out/$tag.service.log" 2>&1 &
    ready=$run_dir/monado_comp_ipc
    runtime_json=(XR_RUNTIME_JSON=/usr/share/openxr/1/openxr_monado.json)
  else
    local daemon=xr-compositord
    [ "$side" = base ] && daemon=xr-compositord-base
    "${in_root[@]}" "$daemon" --socket "$run_dir/xrc.sock" --view-size 320x240 --refresh-hz "$rate" \
      --log-level warn >"$out/$tag.service.log" 2>&1 &
    ready=$run_dir/xrc.sock
    # Our runtime also reports the CPU its calls cost the app's threads (XRC_OPENXR_STATS; two
    # clock reads per call, counted against us).
    runtime_json=(XR_RUNTIME_JSON=/opt/xrc/lib/openxr_xr-compositor.json XR_COMPOSITOR_SOCKET=$run_dir/xrc.sock
      XRC_OPENXR_STATS=$run_dir/runtime-stats.json)
    [ "$side" = wake ] && runtime_json+=(XRC_ANSWER_WAITS_AT_ONCE=0)
  fi
  service=$!
  xrc_root_track $service
  for _ in $(seq 100); do [ -S "$root$ready" ] && break; sleep 0.1; done
  [ -S "$root$ready" ] || { cat "$out/$tag.service.log"; echo "$side did not start" >&2; exit 1; }
  sleep 3  # past start-up (shader compilation, first allocations)
  thread_cpu $service >"$out/$tag.idle0"
  sleep "$idle_seconds"
  thread_cpu $service >"$out/$tag.idle1"
  read -r idle_all _ < <(cpu_delta "$out/$tag.idle0" "$out/$tag.idle1")

  mkfifo "$root$run_dir/app.in"
  "${in_root[@]}" "${runtime_json[@]}" hello_xr -g Vulkan2 <"$root$run_dir/app.in" >"$out/$tag.app.log" 2>&1 &
  local app=$!
  xrc_root_track $app
  exec 8>"$root$run_dir/app.in"
  sleep "$warmup"
  kill -0 $app 2>/dev/null || { tail "$out/$tag.app.log"; echo "hello_xr ended early ($side)" >&2; exit 1; }
  thread_cpu $service >"$out/$tag.svc0"
  thread_cpu $app >"$out/$tag.app0"
  perf stat -e xrcbench:end_frame -p $app -x, -o "$out/$tag.frames" -- sleep "$seconds" >/dev/null 2>&1
  thread_cpu $service >"$out/$tag.svc1"
  thread_cpu $app >"$out/$tag.app1"
  echo >&8
  exec 8>&-
  wait $app 2>/dev/null || true
  local runtime_us=""
  if [ "$side" != monado ]; then
    # Written when hello_xr's session ends; over the whole session, warm-up included.
    runtime_us=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["app_thread_cpu_us_per_frame"]))' \
      "$root$run_dir/runtime-stats.json") || { echo "no runtime stats from hello_xr ($side)" >&2; exit 1; }
    cp "$root$run_dir/runtime-stats.json" "$out/$tag.runtime-stats.json"
  fi
  kill $service 2>/dev/null || true
  wait $service 2>/dev/null || true
  xrc_root_pids=()
  local frames svc_all svc_own app_all app_own
  frames=$(awk -F, '/end_frame/ { print $1 }' "$out/$tag.frames")
  [ -n "$frames" ] && [ "$frames" -gt 0 ] || { echo "no frames counted ($side)" >&2; exit 1; }
  read -r svc_all svc_own < <(cpu_delta "$out/$tag.svc0" "$out/$tag.svc1")
  read -r app_all app_own < <(cpu_delta "$out/$tag.app0" "$out/$tag.app1")
  thread_rows "$side,$rate,$run" "$frames" "$out/$tag.svc0" "$out/$tag.svc1" >>"$out/threads.csv"
  thread_rows "$side,$rate,$run" "$frames" "$out/$tag.app0" "$out/$tag.app1" >>"$out/app-threads.csv"
  echo "$side,$rate,$run,$frames,$seconds,$((svc_all / frames / 1000)),$((svc_own / frames / 1000)),$((app_all / frames / 1000)),$((app_own / frames / 1000)),$(awk -v ns=$idle_all -v s=$idle_seconds 'BEGIN { printf "%.2f", ns / 1e6 / s }'),$wake_us,$runtime_us" >>"$out/samples.csv"
  tail -1 "$out/samples.csv"
}

echo "side,rate_hz,run,thread,us_per_app_frame,runs_per_app_frame" >"$out/threads.csv"
echo "side,rate_hz,run,thread,us_per_app_frame,runs_per_app_frame" >"$out/app-threads.csv"
echo "side,rate_hz,run,app_frames,seconds,service_us_per_frame,service_us_per_frame_without_llvmpipe,app_us_per_frame,app_us_per_frame_without_llvmpipe,idle_service_ms_per_s,wake_reference_us,runtime_app_thread_us_per_frame" >"$out/samples.csv"
echo "bench-vs-monado: $runs runs, rates $rates, ${seconds} s with hello_xr, ${idle_seconds} s idle; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
  for rate in $rates; do
    # Interleaved, and the order alternates between runs.
    sides="monado ours"
    [ "$at_wake" = 1 ] && sides="$sides wake"
    [ -n "$base_daemon" ] && sides="$sides base"
    [ $((run % 2)) = 1 ] || sides=$(echo $sides | tr ' ' '\n' | tac | tr '\n' ' ')
    for side in $sides; do measure "$side" "$rate" "$run"; done
  done
done

python3 - "$out/samples.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def span(side, rate, key):
    v = [float(r[key]) for r in rows if r["side"] == side and r["rate_hz"] == rate and r.get(key)]
    if not v:
        return "—"
    lo, hi = min(v), max(v)
    fmt = (lambda x: f"{x:.2f}") if key.startswith("idle") else (lambda x: f"{x:.1f}") if key.startswith("wake") else (lambda x: f"{x:.0f}")
    return fmt(lo) if lo == hi else f"{fmt(lo)}–{fmt(hi)}"
rates = sorted({r["rate_hz"] for r in rows}, key=float)
sides = [s for s in ("monado", "ours", "wake", "base") if any(r["side"] == s for r in rows)]
label = {"monado": "Monado", "ours": "ours", "wake": "ours, waits at the wake", "base": "base"}
print()
print("| | " + " | ".join(f"{label[s]} {r} Hz" for r in rates for s in sides) + " |")
print("|---|" + "---|" * len(sides) * len(rates))
for name, key in [("app frames per run", "app_frames"),
                   ("service CPU per app frame (µs)", "service_us_per_frame"),
                   ("… without lavapipe's llvmpipe-* threads (µs)", "service_us_per_frame_without_llvmpipe"),
                   ("app CPU per frame (µs)", "app_us_per_frame"),
                   ("… without llvmpipe-* (µs)", "app_us_per_frame_without_llvmpipe"),
                   ("service CPU with no client (ms/s)", "idle_service_ms_per_s"),
                   ("reference: CPU per wake-up of an idle thread at the rate (µs)", "wake_reference_us"),
                   ("our runtime's calls: CPU on the app's threads per frame (µs)", "runtime_app_thread_us_per_frame")]:
    print(f"| {name} | " + " | ".join(span(s, r, key) for r in rates for s in sides) + " |")
per_thread = {f: list(csv.DictReader(open(sys.argv[1].replace("samples.csv", f)))) for f in ("threads.csv", "app-threads.csv")}
def by_thread(file, who):
    threads = per_thread[file]
    print()
    for side in sides:
        for rate in rates:
            per, runs = {}, {}
            for t in threads:
                if t["side"] == side and t["rate_hz"] == rate:
                    per.setdefault(t["thread"], []).append(int(t["us_per_app_frame"]))
                    runs.setdefault(t["thread"], []).append(float(t["runs_per_app_frame"]))
            busy = sorted(((min(v), max(v), n) for n, v in per.items() if max(v) > 0), reverse=True)
            print(f"{side} {rate} Hz, {who} µs per app frame by thread: " +
                  ", ".join(f"{n} {lo}" + (f"–{hi}" if hi != lo else "") for lo, hi, n in busy))
            woken = sorted(((min(v), max(v), n) for n, v in runs.items() if max(v) >= 0.05), reverse=True)
            print(f"{side} {rate} Hz, {who} times on a CPU per app frame by thread: " +
                  ", ".join(f"{n} {lo:.1f}" + (f"–{hi:.1f}" if hi != lo else "") for lo, hi, n in woken))
by_thread("threads.csv", "service")
by_thread("app-threads.csv", "app")
# Monado's client library runs on the app's main thread; ours on it and on client-lib's I/O
# thread. hello_xr's own main-thread work is the same on both sides: ours less our runtime's
# calls. So Monado's library, estimated: Monado's app main thread less that work.
def app_us(side, rate, run, thread):
    return sum(int(t["us_per_app_frame"]) for t in per_thread["app-threads.csv"]
               if t["side"] == side and t["rate_hz"] == rate and t["run"] == run and t["thread"] == thread)
print()
for r in rows:
    if r["side"] not in ("ours", "wake") or not r.get("runtime_app_thread_us_per_frame"):
        continue
    side, rate, run = r["side"], r["rate_hz"], r["run"]
    if not any(m["side"] == "monado" and m["rate_hz"] == rate and m["run"] == run for m in rows):
        continue
    ours_main, io = app_us(side, rate, run, "main"), app_us(side, rate, run, "xrc-client-io")
    runtime = int(r["runtime_app_thread_us_per_frame"])
    own, monado_main = ours_main - runtime, app_us("monado", rate, run, "main")
    print(f"{label[side]}, {rate} Hz run {run}: client-lib's I/O thread {io} µs per frame, its calls on the app's "
          f"threads {runtime} (together {io + runtime}); Monado's client library, estimated {monado_main - own} "
          f"(Monado's app main thread {monado_main} less hello_xr's own main-thread work {own})")
PY
