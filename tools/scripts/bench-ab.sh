#!/usr/bin/env bash
# bench-ab.sh BASE_DAEMON NEW_DAEMON OUT [counts="1 16 64"] [rounds=2] [seconds=5] [bench args...]
# Alternates two xr-compositord binaries (an earlier commit's and this one's, say) under
# xr-compositor-bench with the same client library, client count by client count, round by
# round, so that a daemon change is compared within one run rather than against the machine's
# drift (docs/BENCHMARKS.md). Writes OUT/runs.jsonl (one bench scenario per line, with `variant`
# and `round`) and prints a summary per variant and client count: the range of the daemon's CPU
# per client frame, its RPC thread's CPU and wake-ups per client frame, the clients' steady
# frame rate, held frames committed past their latch, copy queue submissions per display frame
# and frames dropped. A scenario whose clients failed is
# reported and left out; the script fails if any did.
# Bench arguments after the fifth (e.g. --stereo separate, --view-size 512x512) go to every run.
# Uses XRC_BENCH / XRC_DEMO, else the build in ./build (XRC_BUILD=DIR for another).
# XRC_AB_BASE_ENV / XRC_AB_NEW_ENV: NAME=VALUE words set for that variant's bench and its clients
# (a client-side A/B with one daemon given twice, e.g. XRC_AB_BASE_ENV=XRC_ANSWER_WAITS_AT_ONCE=0).
# XRC_AB_BASE_ARGS / XRC_AB_NEW_ARGS: daemon arguments for that variant only (an A/B of a daemon
# option with one daemon given twice, e.g. XRC_AB_BASE_ARGS="--nice 0" XRC_AB_NEW_ARGS="--nice -10").
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
base=$(realpath "$1") new=$(realpath "$2") out=$3
counts=${4:-"1 16 64"} rounds=${5:-2} seconds=${6:-5}
shift $(($# < 6 ? $# : 6))
build=${XRC_BUILD:-build}
bench=${XRC_BENCH:-$build/tools/xr-compositor-bench}
demo=${XRC_DEMO:-$build/tools/xr-compositor-demo}
mkdir -p "$out"
: >"$out/runs.jsonl"
failed=0
for round in $(seq 1 "$rounds"); do
  for n in $counts; do
    # The order alternates between rounds, so that neither side always runs second.
    variants="base new"
    [ $((round % 2)) -eq 0 ] && variants="new base"
    for v in $variants; do
      daemon=$base variant_env=${XRC_AB_BASE_ENV:-} variant_args=${XRC_AB_BASE_ARGS:-}
      [ "$v" = new ] && daemon=$new variant_env=${XRC_AB_NEW_ENV:-} variant_args=${XRC_AB_NEW_ARGS:-}
      daemon_args=()
      for word in $variant_args; do daemon_args+=("--daemon-arg=$word"); done
      log="$out/$v-$n-r$round.log"
      # A bench that cannot start its clients ends on its own; the timeout is for one that hangs.
      # shellcheck disable=SC2086 # NAME=VALUE words
      if timeout $((seconds * 4 + 240)) env $variant_env "$bench" --daemon "$daemon" --demo "$demo" --clients "$n" \
        --seconds "$seconds" --json ${daemon_args[@]+"${daemon_args[@]}"} "$@" >"$log.json" 2>"$log"; then
        python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    print(json.dumps(dict(s, variant=sys.argv[2], round=int(sys.argv[3]))))' "$log.json" "$v" "$round" >>"$out/runs.jsonl"
        echo "$v $n clients, round $round: done"
      else
        echo "$v $n clients, round $round: the bench failed (exit $?): $(tail -n 3 "$log" | tr '\n' ' ')" >&2
        failed=1
      fi
    done
  done
done
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/summary.txt"
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def span(values):
    values = [v for v in values if v is not None]
    return "-" if not values else f"{min(values):.1f}–{max(values):.1f}"
# Run by run, in the order they ran: the pairs of one round side by side.
for r in runs:
    if not r.get("ok"):
        continue
    held = r.get("frames_held") or 0
    past = f"{100 * r['frames_held_past_latch'] / held:.1f} %" if held else "-"
    print(f"  {r['clients']:3d} clients, round {r['round']}, {r['variant']:4s}: "
          f"{r['daemon_cpu_us_per_client_frame']:.1f} us, {r.get('client_frames_per_s_steady', 0):.2f} frames/s, "
          f"held past latch {past}, dropped {r.get('frames_dropped')}, lead at the end "
          f"{r.get('copy_batch_lead_us', '-')} us")
for n in sorted({r["clients"] for r in runs}):
    for variant in ("base", "new"):
        rs = [r for r in runs if r["clients"] == n and r["variant"] == variant and r.get("ok")]
        if not rs:
            continue
        thread = lambda r, key: r.get(key, {}).get("rpc-main")
        past = [100 * r["frames_held_past_latch"] / r["frames_held"] if r.get("frames_held") else None for r in rs]
        # Absent (or 0) from a daemon before protocol 1.17, which does not count them.
        submits = [r["copy_queue_submissions"] / r["display_frames"]
                   if r.get("copy_queue_submissions") and r.get("display_frames") else None for r in rs]
        print(f"{n} clients, {variant} ({len(rs)} runs): daemon CPU/client frame "
              f"{span(r['daemon_cpu_us_per_client_frame'] for r in rs)} us, rpc-main "
              f"{span(thread(r, 'daemon_cpu_us_per_client_frame_by_thread') for r in rs)} us and "
              f"{span(thread(r, 'daemon_wakeups_per_client_frame_by_thread') for r in rs)} wakes, "
              f"{span(r.get('client_frames_per_s_steady') for r in rs)} frames/s, held past latch {span(past)} %, "
              f"copy submissions/display frame {span(submits)}, "
              f"dropped {span(r.get('frames_dropped') for r in rs)}")
PY
exit $failed
