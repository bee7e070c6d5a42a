#!/usr/bin/env bash
# Builds xr-compositor and runs every test: the normal build, then the same suites under
# AddressSanitizer+UndefinedBehaviorSanitizer and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/scripts/deps.sh
xrc_install_deps

xrc_build build
meson test -C build --print-errorlogs

suppressions=$PWD/tests/sanitizers
xrc_build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$suppressions/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C build-asan --print-errorlogs

xrc_build build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$suppressions/tsan.supp" \
  meson test -C build-tsan --print-errorlogs
