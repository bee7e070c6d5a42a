#!/usr/bin/env bash
# Installs what building, running and testing xr-compositor needs on Debian 12 (idempotent:
# installs only what is missing). Sourced by run-demo.sh and run-tests.sh.
set -euo pipefail

XRC_PACKAGES=(
  g++ meson ninja-build pkg-config glslang-tools
  capnproto libcapnp-dev libboost-dev libvulkan-dev libopenxr-dev libfmt-dev libsystemd-dev systemd
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libgtest-dev libgmock-dev libjemalloc-dev
  mesa-vulkan-drivers vulkan-validationlayers
  libopenxr-loader1 libopenxr-utils openxr-layer-corevalidation
  libjsoncpp25 python3
  libxcb1-dev xvfb
  libwayland-dev wayland-protocols weston
)
# Only the tests need these (run-tests.sh: xrc_install_deps --tests).
XRC_TEST_PACKAGES=(clang-format)

xrc_install_deps() {
  local wanted=("${XRC_PACKAGES[@]}")
  [ "${1:-}" = --tests ] && wanted+=("${XRC_TEST_PACKAGES[@]}")
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# xrc_build DIR [meson options...]: configures DIR once, then builds it.
xrc_build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@"
  fi
  ninja -C "$dir"
}

# xrc_test DIR [meson test options...]: runs DIR's tests; when one fails, ends with a digest of
# the failed assertions and sanitizer reports from its log, so that the tail of a long run (all
# that a CI page may keep) says what failed and why.
xrc_test() {
  local dir=$1
  shift
  if meson test -C "$dir" --print-errorlogs "$@"; then return 0; fi
  echo "==== what failed in $dir (from $dir/meson-logs/testlog.txt) ===="
  grep -n -E -A12 ': Failure$|^WARNING: ThreadSanitizer|^==[0-9]+==ERROR|runtime error:' \
    "$dir/meson-logs/testlog.txt" | grep -v -E '^[0-9]+-\[ +(RUN|OK) ' | head -200 || true
  grep -E '^\[  FAILED  \]' "$dir/meson-logs/testlog.txt" | sort -u || true
  return 1
}
