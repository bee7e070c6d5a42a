# Sourced by the scripts that run our binaries inside the trixie root with Monado
# (tests/monado/run-monado.sh, tools/scripts/bench-vs-monado.sh): installing the build into the
# root, bind mounts, and stopping what was started. Callers set `set -euo pipefail`.
#
#   xrc_root_install BUILD ROOT   our binaries and the host libraries trixie lacks -> ROOT/opt/xrc
#   xrc_root_mount ROOT           /proc /sys /dev /dev/pts /dev/shm, undone by xrc_root_cleanup
#   xrc_root_track PID            stopped by xrc_root_cleanup, newest first
#   xrc_root_cleanup              (installed as the EXIT trap by xrc_root_mount)

xrc_root_mounted=()
xrc_root_pids=()

xrc_root_install() {
  local build=$1 root=$2
  local opt=$root/opt/xrc
  # Called as `xrc_root_install ... || ...`, where set -e does not apply: every step checks.
  rm -rf "$opt" && mkdir -p "$opt/bin" "$opt/lib" || return 1
  cp "$build/service/xr-compositord" "$build/tools/xr-compositorctl" "$build/tools/xr-compositor-demo" "$opt/bin/" ||
    return 1
  # The integration tests too, where built: some run against this root's Mesa (run-monado.sh).
  if [ -x "$build/tests/integration-tests" ]; then cp "$build/tests/integration-tests" "$opt/bin/" || return 1; fi
  cp -P "$build"/client-lib/libxr-compositor-client.so "$build"/client-lib/libxr-compositor-client.so.0 \
    "$build"/client-lib/libxr-compositor-client.so.0.1.0 "$build/client-lib/libxr-compositor-openxr.so" \
    "$build/client-lib/openxr_xr-compositor.json" "$opt/lib/" || return 1
  local missing lib path round
  for round in 1 2 3 4 5 6; do
    missing=$(chroot "$root" env LD_LIBRARY_PATH=/opt/xrc/lib sh -c 'ldd /opt/xrc/bin/* /opt/xrc/lib/*.so' 2>/dev/null |
      awk '/not found/ { print $1 }' | sort -u)
    [ -z "$missing" ] && return 0
    [ $round = 6 ] && break  # what the fifth round copied has been checked; no more rounds
    for lib in $missing; do
      path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !found { print $NF; found = 1 }')
      [ -n "$path" ] || { echo "$lib is missing in the root and on the host" >&2; return 1; }
      cp -L "$path" "$opt/lib/$lib" || return 1
    done
  done
  echo "libraries still missing in the root: $missing" >&2
  return 1
}

xrc_root_cleanup() {
  local i
  # Newest first, each gone before the next: a daemon leaves Monado before Monado stops.
  for ((i = ${#xrc_root_pids[@]} - 1; i >= 0; i--)); do
    kill "${xrc_root_pids[$i]}" 2>/dev/null || true
    wait "${xrc_root_pids[$i]}" 2>/dev/null || true
  done
  xrc_root_pids=()
  for ((i = ${#xrc_root_mounted[@]} - 1; i >= 0; i--)); do umount -l "${xrc_root_mounted[$i]}" 2>/dev/null || true; done
  xrc_root_mounted=()
}

xrc_root_track() { xrc_root_pids+=("$1"); }

xrc_root_mount() {
  local root=$1 fs
  trap xrc_root_cleanup EXIT
  for fs in proc sys dev dev/pts dev/shm; do
    mount --bind "/$fs" "$root/$fs"
    xrc_root_mounted+=("$root/$fs")
  done
}
