#!/usr/bin/env bash
# Packs Debian trixie's `perf` (6.12) with every library it loads into one archive that runs on
# another Linux machine without installing anything, through the packed dynamic loader:
#
#   tools/scripts/pack-perf.sh OUT.tar.xz
#   # on the other machine:
#   mkdir /tmp/perf && tar -C /tmp/perf -xJf OUT.tar.xz
#   /tmp/perf/lib/ld-linux-x86-64.so.2 --library-path /tmp/perf/lib /tmp/perf/perf record ...
#
# Why: Debian 12's perf (6.1) crashes in `perf record` on newer kernels (a GPU machine's 6.18),
# and a GPU machine may have no package manager. The perf comes from the Debian trixie root of
# tests/monado/monado-root.sh (XRC_MONADO_ROOT, /var/tmp/xrc-monado-root), where it is installed
# with apt-get when missing. Needs root (chroot).
set -euo pipefail
out=${1:?usage: pack-perf.sh OUT.tar.xz}
root=${XRC_MONADO_ROOT:-/var/tmp/xrc-monado-root}
[ -x "$root/usr/bin/apt-get" ] || { echo "no Debian root at $root (tests/monado/monado-root.sh makes one)" >&2; exit 1; }
if [ ! -x "$root/usr/bin/perf" ]; then
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-perf >/dev/null
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp "$root/usr/bin/perf" "$stage/perf"
# ldd inside the root names every library perf loads, the dynamic loader among them.
for lib in $(chroot "$root" ldd /usr/bin/perf | grep -o '/[^ ]*' | sort -u); do
  cp -L "$root$lib" "$stage/lib/"
done
tar -C "$stage" -cJf "$out" .
echo "$out: perf $(chroot "$root" perf --version | awk '{print $3}') and $(ls "$stage/lib" | wc -l) libraries, $(du -h "$out" | cut -f1)"
