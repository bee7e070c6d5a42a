// The RPC thread's CPU (rpc_cpu): a CPU the process may not use is refused, naming those it may;
// an allowed one is taken by the calling thread alone, and threads it starts inherit it.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "platform/cpu_affinity.hpp"

namespace xrc::platform {
namespace {

TEST(CpuAffinity, TheAllowedCpusIncludeTheOneThisThreadRunsOn) {
  const std::vector<int> allowed = allowedCpus().value();
  ASSERT_FALSE(allowed.empty());
  EXPECT_TRUE(std::is_sorted(allowed.begin(), allowed.end()));
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), ::sched_getcpu()), allowed.end());
}

TEST(CpuAffinity, ACpuTheProcessMayNotUseIsRefusedNamingTheOnesItMay) {
  const std::vector<int> allowed = allowedCpus().value();
  int outside = 0;
  while (std::find(allowed.begin(), allowed.end(), outside) != allowed.end()) ++outside;
  std::thread([&] {
    auto s = keepCallingThreadOn(outside);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::invalidArgument);
    EXPECT_NE(s.error().message.find("CPU " + std::to_string(outside) + " is not one this process may run on ("),
              std::string::npos)
        << s.error().message;
    EXPECT_EQ(allowedCpus().value(), allowed);  // nothing changed
  }).join();
  EXPECT_FALSE(cpuAllowed(-1));
  for (int cpu : allowed) EXPECT_TRUE(cpuAllowed(cpu)) << cpu;
}

TEST(CpuAffinity, TheCallingThreadAloneIsKeptThereAndThreadsItStartsInheritIt) {
  const std::vector<int> allowed = allowedCpus().value();
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU: kept and not kept look the same";
  const int cpu = allowed.back();
  std::vector<int> kept, started;
  int ranOn = -1, keptReported = -2;
  std::thread([&] {
    ASSERT_TRUE(keepCallingThreadOn(cpu));
    kept = allowedCpus().value();
    keptReported = keptCpu();
    ranOn = ::sched_getcpu();
    std::thread([&] { started = allowedCpus().value(); }).join();
  }).join();
  EXPECT_EQ(kept, std::vector<int>{cpu});
  EXPECT_EQ(ranOn, cpu);
  EXPECT_EQ(keptReported, cpu);
  EXPECT_EQ(keptCpu(), -1);  // this thread may still run on several
  EXPECT_EQ(started, std::vector<int>{cpu});
  EXPECT_EQ(allowedCpus().value(), allowed);  // this thread, which started it, is where it was
}

}  // namespace
}  // namespace xrc::platform
