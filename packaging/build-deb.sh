#!/usr/bin/env bash
# Builds the Debian packages from this tree: xr-compositor (daemon, units, ctl, demo, bench),
# libxr-compositor-client0 (client library + OpenXR runtime + manifest), libxr-compositor-dev.
#   packaging/build-deb.sh [OUTPUT_DIR=dist]
# Installs what it needs (the project's build dependencies, debhelper) with apt-get first.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/scripts/deps.sh
XRC_PACKAGES+=(debhelper dpkg-dev fakeroot)
xrc_install_deps
out=$(realpath -m "${1:-dist}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A clean copy of the tracked tree (what a source package would hold), with debian/ on top.
src=$work/xr-compositor-0.1.0
mkdir -p "$src"
git ls-files -z | xargs -0 cp --parents -t "$src"
cp -r packaging/debian "$src/debian"
(cd "$src" && dpkg-buildpackage -b -us -uc --no-sign >"$work/build.log" 2>&1) || {
  tail -40 "$work/build.log"
  exit 1
}
mkdir -p "$out"
mv "$work"/*.deb "$out"/
ls -1 "$out"/*.deb
