// The daemon runs on the allocator its build chose (meson.build: jemalloc, except under the
// sanitizers). This guards the link: a daemon built without it (the dependency dropped from the
// executable, or by the linker) would cost ~10 % more CPU per client frame with many clients on a
// small machine (docs/BENCHMARKS.md) without any other test noticing.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "harness.hpp"

namespace xrc::test {
namespace {

TEST(Allocator, TheDaemonRunsOnTheAllocatorItsBuildChose) {
  const std::string allocator = XRC_DAEMON_ALLOCATOR;
  if (allocator.empty()) GTEST_SKIP() << "a sanitizer build: the daemon uses the sanitizer's allocator";
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  std::ifstream maps("/proc/" + std::to_string(daemon.process().pid()) + "/maps");
  ASSERT_TRUE(maps) << "cannot read the daemon's memory map";
  bool mapped = false;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("lib" + allocator) != std::string::npos) mapped = true;
  }
  EXPECT_TRUE(mapped) << "lib" << allocator << " is not mapped into the daemon";
}

}  // namespace
}  // namespace xrc::test
