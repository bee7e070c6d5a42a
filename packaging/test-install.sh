#!/usr/bin/env bash
# Installs the packages into a clean Debian 12 root and boots a real systemd in it
# (systemd-nspawn, as ../shared/notes/real-systemd-in-tests.md describes): the socket unit is
# enabled by the package, a client connecting starts the service, `systemctl status` shows the
# daemon's STATUS line, `systemctl stop` ends it cleanly. The exit status is the test's.
#   packaging/test-install.sh DEB_DIR      (build them with packaging/build-deb.sh DEB_DIR)
# Needs root and network access to deb.debian.org.
set -euo pipefail
cd "$(dirname "$0")/.."
debs=$(realpath "${1:?usage: packaging/test-install.sh DEB_DIR}")
source tools/scripts/deps.sh
XRC_PACKAGES+=(systemd-container debootstrap)
xrc_install_deps

work=$(mktemp -d /var/tmp/xrc-install-XXXXXX)
root=$work/root
cleanup() {
  for c in /sys/fs/cgroup/unified/xrc-install-test /sys/fs/cgroup/systemd/xrc-install-test; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "debootstrap (a clean bookworm root)..."
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$root" http://deb.debian.org/debian \
  >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }

echo "installing the packages with apt (dependencies from the archive)..."
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/tmp/debs" && cp "$debs"/*.deb "$root/tmp/debs/"
# No service starts inside the chroot: systemd is not running there.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
chroot "$root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/debs/*.deb' \
  >"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; exit 1; }
rm "$root/usr/sbin/policy-rc.d"

# The test runs as a oneshot unit at boot; nspawn exits with its result.
cat >"$root/usr/local/bin/xrc-install-test" <<'TEST'
#!/bin/sh
set -x
fail() { echo "INSTALL TEST FAILED: $*"; systemctl status xr-compositord.socket xr-compositord.service --no-pager; journalctl -u xr-compositord.service --no-pager | tail -30; exit 1; }
systemctl is-enabled xr-compositord.socket || fail "the package did not enable the socket"
systemctl is-active xr-compositord.socket || fail "socket not listening"
systemctl is-active xr-compositord.service && fail "the service ran before anyone connected"
getent group xr || fail "no xr group"
# A client connecting starts the service (socket activation), renders and leaves.
xr-compositor-demo --socket /run/xr-compositor/socket --frames 60 --name install-test || fail "demo client failed"
systemctl is-active xr-compositord.service || fail "service not active after a client connected"
systemctl show -p StatusText --value xr-compositord.service | grep -q '^serving' || fail "no STATUS line"
journalctl -u xr-compositord.service -o verbose --no-pager | grep -q "XRC_CLIENT_NAME=install-test" ||
  fail "no structured journal entry for the client"
xr-compositorctl --socket /run/xr-compositor/socket status || fail "ctl status failed"
test -f /usr/share/openxr/1/openxr_xr-compositor.json || fail "no runtime manifest"
# Stop with a client connected: the client is told to leave and does; the stop is clean.
xr-compositor-demo --socket /run/xr-compositor/socket --frames 100000 --name leaving >/tmp/leaving.log 2>&1 &
demo=$!
sleep 2
systemctl stop xr-compositord.service || fail "stop failed"
wait $demo || fail "the client did not leave cleanly: $(cat /tmp/leaving.log)"
grep -q "daemon is stopping" /tmp/leaving.log || fail "the client was not told: $(cat /tmp/leaving.log)"
systemctl show -p Result --value xr-compositord.service | grep -q '^success' || fail "unclean stop"
# A stalled frame loop stops the watchdog: systemd kills and restarts the daemon.
mkdir -p /etc/systemd/system/xr-compositord.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/bin/xr-compositord --socket /run/xr-compositor/socket --test-hooks\n' \
  >/etc/systemd/system/xr-compositord.service.d/test-hooks.conf
systemctl daemon-reload
systemctl start xr-compositord.service || fail "start with test hooks failed"
first=$(systemctl show -p MainPID --value xr-compositord.service)
sleep 1
systemctl kill -s SIGUSR2 --kill-whom=main xr-compositord.service
for i in $(seq 30); do
  [ "$(systemctl show -p NRestarts --value xr-compositord.service)" -ge 1 ] && break
  sleep 0.5
done
[ "$(systemctl show -p NRestarts --value xr-compositord.service)" -ge 1 ] || fail "no watchdog restart"
journalctl -u xr-compositord.service --no-pager | grep -q "Watchdog timeout" || fail "restart was not the watchdog's"
for i in $(seq 20); do systemctl is-active -q xr-compositord.service && break; sleep 0.5; done
second=$(systemctl show -p MainPID --value xr-compositord.service)
[ "$second" != "$first" ] && [ "$second" != 0 ] || fail "no new daemon after the restart"
systemctl stop xr-compositord.service
echo "INSTALL TEST PASSED"
TEST
chmod +x "$root/usr/local/bin/xrc-install-test"
cat >"$root/etc/systemd/system/xrc-install-test.service" <<'UNIT'
[Unit]
Description=xr-compositor package install test
After=xr-compositord.socket
SuccessAction=exit
FailureAction=exit
[Service]
Type=oneshot
ExecStart=/usr/local/bin/xrc-install-test
StandardOutput=journal+console
StandardError=journal+console
UNIT

echo "booting systemd in the root..."
set +e
unshare -m --propagation private bash -c '
  set -e
  mkdir -p /run/systemd/nspawn && mount -t tmpfs tmpfs /run/systemd/nspawn
  for c in /sys/fs/cgroup/unified/xrc-install-test /sys/fs/cgroup/systemd/xrc-install-test; do
    mkdir -p "$c" && echo $BASHPID >"$c/cgroup.procs"
  done
  SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 exec timeout 300 systemd-nspawn -D "$1" --register=no --keep-unit \
    --console=read-only --volatile=overlay -b systemd.wants=xrc-install-test.service
' _ "$root" >"$work/boot.log" 2>&1
status=$?
set -e
grep -E "INSTALL TEST|xrc-install-test|FAILED|xr-compositord" "$work/boot.log" | tail -40
[ $status -eq 0 ] && grep -q "INSTALL TEST PASSED" "$work/boot.log" && echo "package install test: OK" && exit 0
echo "package install test: FAILED (nspawn exit $status)"
tail -60 "$work/boot.log"
exit 1
