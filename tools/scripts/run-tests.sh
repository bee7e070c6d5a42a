#!/usr/bin/env bash
# Builds xr-compositor and runs every test: the normal build (with the OpenXR CTS through the
# runtime where $XRC_OPENXR_CTS names one, and the daemon over Monado in a trixie root), then the
# same suites under AddressSanitizer+UndefinedBehaviorSanitizer and under ThreadSanitizer, then
# builds the Debian packages and tests them installed under a booted systemd.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/scripts/deps.sh
xrc_install_deps --tests

# Backends and outputs never include the compositor core (docs/OPERATIONS.md, "Outputs").
tools/scripts/check-layering.sh
# The C++ sources are as clang-format (.clang-format) writes them.
tools/scripts/check-format.sh
# No KJ continuation is passed by name (KJ would keep a reference to it).
tools/scripts/check-kj-continuations.sh

xrc_build build
xrc_test build

# The Khronos OpenXR conformance suite through our runtime against a headless daemon, in every
# configuration (skipped, with a message, without a CTS in $XRC_OPENXR_CTS).
tests/conformance/run-conformance.sh build

# The daemon over a real OpenXR runtime: Monado 25 in a Debian trixie root, with the demo and
# hello_xr through `--backend openxr` (needs root and the Debian archive; skipped, with a message,
# without them; XRC_SKIP_MONADO=1 skips it).
tests/monado/run-monado.sh build

suppressions=$PWD/tests/sanitizers
xrc_build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
# The Vulkan loader dlclose()s the driver at vkDestroyInstance, which leaves its process-lifetime
# allocations unattributable; preloading keeps it mapped so the leak suppressions can name it
# (our own code stays fully leak-checked). The validation-layer run is left to the normal build:
# the layer cannot be preloaded (it exports the loader's entry points) and is dlclosed too.
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so GTEST_FILTER='-*UnderSynchronizationValidation' \
  ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 \
  LSAN_OPTIONS=suppressions=$suppressions/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 xrc_test build-asan

xrc_build build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$suppressions/tsan.supp" \
  xrc_test build-tsan

# Packages: build the .debs, install them into a clean Debian 12 root and check them under a
# real systemd booted there (needs root and the Debian archive; XRC_SKIP_PACKAGE_TEST=1 skips).
if [ "${XRC_SKIP_PACKAGE_TEST:-0}" != 1 ]; then
  dist=$(mktemp -d /var/tmp/xrc-dist-XXXXXX)
  packaging/build-deb.sh "$dist"
  packaging/test-install.sh "$dist"
  rm -rf "$dist"
fi
