#!/usr/bin/env bash
# Prepares (idempotently) a Debian trixie root with Monado 25 (monado-service, headless, with the
# null compositor and a simulated HMD), hello_xr and lavapipe: a real OpenXR runtime for the
# daemon's `--backend openxr`, which Debian 12 does not package. See docs/OPERATIONS.md#monado.
#
#   tests/monado/monado-root.sh ROOT        # prints ROOT when ready; exit 3 when the archive
#                                           # cannot be reached (callers skip), else fails
#
# Needs root and debootstrap (installed when missing). ~1.4 GB, about 2 minutes on a fast mirror.
# Also writes ROOT/opt/monado90/monado-service: the same binary paced at 90 Hz instead of the null
# compositor's hard-coded 20 Hz (one immediate changed; the bytes are checked first).
set -euo pipefail
root=${1:?usage: monado-root.sh ROOT}
mirror=${XRC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(monado-service libopenxr1-monado libopenxr-utils mesa-vulkan-drivers monado-cli vulkan-tools)
stamp=$root/.xrc-monado-ready

if [ "$(id -u)" != 0 ]; then
  echo "monado-root: needs root (debootstrap and chroot)" >&2
  exit 2
fi
if [ -f "$stamp" ]; then
  echo "$root"
  exit 0
fi
if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
if ! timeout 20 bash -c "exec 3<>/dev/tcp/$(echo "$mirror" | sed -E 's#^[a-z]+://([^/:]+).*#\1#')/80" 2>/dev/null; then
  echo "monado-root: the Debian archive ($mirror) cannot be reached" >&2
  exit 3
fi

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap unmount_all EXIT

if [ ! -x "$root/usr/bin/apt-get" ]; then
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log" >&2
    exit 1
  }
fi
for fs in proc sys dev dev/pts; do
  mount --bind "/$fs" "$root/$fs"
  mounted+=("$root/$fs")
done
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" \
  >/dev/null

# The 90 Hz peer: `movq $50000000, 0xd268(%rbx)` (the null compositor's frame interval) must occur
# exactly once; 11111111 ns replaces it.
python3 - "$root/usr/bin/monado-service" "$root/opt/monado90/monado-service" <<'PY'
import os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
old = bytes.fromhex("48c78368d2000080f0fa02")
if data.count(old) != 1:
    sys.exit("monado-root: the null compositor's 20 Hz interval is not where 25.0.0 has it; no 90 Hz peer")
new = old[:7] + struct.pack("<I", 11111111)
os.makedirs(os.path.dirname(dst), exist_ok=True)
open(dst, "wb").write(data.replace(old, new))
os.chmod(dst, 0o755)
PY
touch "$stamp"
echo "$root"
