#!/usr/bin/env bash
# Runs the Khronos OpenXR Conformance Test Suite (the automated cases, "exclude:[interactive]")
# through our OpenXR runtime against a headless xr-compositord, in every configuration the
# conformance submission asks for:
#   -G vulkan2 and -G vulkan, at --apiVersion 1.1 and 1.0, and -G vulkan2 at 1.1 with
#   --invalidHandleValidation; and -G vulkan2 at 1.1 with the runtime asking for its waits to be
#   answered at their wake (XRC_ANSWER_WAITS_AT_ONCE=0; by default, protocol 1.18, at once).
# Each run's per-case summary (tests/conformance/cts_summary.py over the suite's cts.xml) is
# printed. Cases listed in tests/conformance/known-failures.txt may fail (each line says why);
# any other failure fails the stage, and so does a listed case that passes (the list stays true).
#
#   tests/conformance/run-conformance.sh BUILD_DIR [OUT_DIR]
#
# The suite comes from $XRC_OPENXR_CTS (a folder like ../shared/openxr-cts with run-cts.sh);
# without it the stage says so and is skipped. XRC_CTS_RUNS limits the runs (e.g. "vulkan2-1.1").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:?usage: run-conformance.sh BUILD_DIR [OUT_DIR]}")
out=${2:-$build/conformance}
cts=${XRC_OPENXR_CTS:-}
if [ -z "$cts" ] || [ ! -x "$cts/run-cts.sh" ]; then
  echo "conformance: skipped: no OpenXR CTS (set XRC_OPENXR_CTS to a folder with run-cts.sh; .ci/run uses ../shared/openxr-cts)"
  exit 0
fi
cts=$(realpath "$cts")
manifest=$build/client-lib/openxr_xr-compositor.json
daemon=$build/service/xr-compositord
[ -f "$manifest" ] && [ -x "$daemon" ] || { echo "conformance: $build has no built daemon and runtime" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out"

runtime_dir=$(mktemp -d /tmp/xrc-cts-XXXXXX)
export XDG_RUNTIME_DIR=$runtime_dir
export XR_COMPOSITOR_SOCKET=$runtime_dir/socket
daemon_pid=
stop_daemon() {
  [ -n "$daemon_pid" ] || return 0
  kill "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
}
trap 'stop_daemon; rm -rf "$runtime_dir"' EXIT
start_daemon() {  # a fresh daemon per run: one run's leftovers never decide another's result
  # Views of 512x512 (XRC_CTS_VIEW_SIZE): lavapipe renders the suite's frames and composes the
  # daemon's on 2 CPU cores, so the default 1440x1600 would take the suite several times longer.
  "$daemon" --backend headless --socket "$XR_COMPOSITOR_SOCKET" --view-size "${XRC_CTS_VIEW_SIZE:-512x512}" \
    >"$1/daemon.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 100); do [ -S "$XR_COMPOSITOR_SOCKET" ] && return 0; sleep 0.1; done
  echo "conformance: the daemon did not start (see $1/daemon.log)" >&2
  return 1
}

# known-failures.txt: "RUN CASE  # why" lines; RUN is a run name below or '*'.
known=$here/known-failures.txt
is_known() {  # run case
  [ -f "$known" ] || return 1
  awk -v run="$1" -v name="$2" '!/^#/ && NF >= 2 && ($1 == run || $1 == "*") && $2 == name { found = 1 } END { exit !found }' "$known"
}

# NAME:ENV:ARGS, ENV being NAME=VALUE words for the suite's process (our runtime in it).
runs=("vulkan2-1.1::-G vulkan2 --apiVersion 1.1"
      "vulkan-1.1::-G vulkan --apiVersion 1.1"
      "vulkan2-1.0::-G vulkan2 --apiVersion 1.0"
      "vulkan-1.0::-G vulkan --apiVersion 1.0"
      "vulkan2-1.1-handles::-G vulkan2 --apiVersion 1.1 --invalidHandleValidation"
      "vulkan2-1.1-waits-at-wake:XRC_ANSWER_WAITS_AT_ONCE=0:-G vulkan2 --apiVersion 1.1")
status=0
summary=()
for entry in "${runs[@]}"; do
  name=${entry%%:*}
  rest=${entry#*:}
  read -r -a run_env <<<"${rest%%:*}"
  read -r -a args <<<"${rest#*:}"
  if [ -n "${XRC_CTS_RUNS:-}" ] && [[ " $XRC_CTS_RUNS " != *" $name "* ]]; then continue; fi
  dir=$out/$name
  mkdir -p "$dir"
  echo "=== conformance run $name: ${run_env[*]:+${run_env[*]} }conformance_cli \"exclude:[interactive]\" ${args[*]}"
  start_daemon "$dir"
  started=$(date +%s)
  set +e
  env "${run_env[@]}" "$cts/run-cts.sh" "$manifest" "$dir" "exclude:[interactive]" "${args[@]}" >"$dir/console.log" 2>&1
  rc=$?
  set -e
  if ! kill -0 "$daemon_pid" 2>/dev/null; then
    echo "conformance: run $name: the daemon died during the run (see $dir/daemon.log)"
    status=1
  fi
  stop_daemon
  if [ ! -s "$dir/cts.xml" ]; then
    echo "conformance: run $name produced no report (conformance_cli exited $rc); last lines:"
    tail -n 30 "$dir/console.log"
    status=1
    continue
  fi
  python3 "$here/cts_summary.py" "$dir/cts.xml" --messages >"$dir/summary.txt" || true
  cat "$dir/summary.txt"
  while read -r result case_name _; do
    if [ "$result" = failed ] && ! is_known "$name" "$case_name"; then
      echo "conformance: run $name: case $case_name FAILED"
      status=1
    elif [ "$result" = passed ] && is_known "$name" "$case_name"; then
      echo "conformance: run $name: case $case_name passes but is listed in known-failures.txt: take it out"
      status=1
    fi
  done < <(grep -E '^(passed|failed|skipped) ' "$dir/summary.txt")
  # The suite's own count (its console's 'test cases:' line) is the figure runtimes are compared by.
  counts=$(grep -a 'test cases:' "$dir/console.log" | tail -n 1 | sed 's/\x1b\[[0-9;]*m//g' |
    awk '{ p = f = s = 0; for (i = 1; i <= NF; ++i) { if ($(i+1) ~ /^passed/) p = $i; if ($(i+1) ~ /^failed/) f = $i;
           if ($(i+1) ~ /^skipped/) s = $i } print p " passed, " f " failed, " s " skipped" }')
  summary+=("$name: ${counts:-no count} of the suite's cases ($(( $(date +%s) - started )) s)")
done
echo "=== conformance summary"
printf '%s\n' "${summary[@]}"
exit $status
