// The kernel's counts the RPC thread's keeper reads: each CPU's busy and total ticks from
// /proc/stat, and a thread's time on and waiting for a CPU from its schedstat.
#include "platform/cpu_load.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

#include "platform/cpu_affinity.hpp"

namespace xrc::platform {
namespace {

TEST(CpuLoad, ProcStatGivesEachCpusBusyAndTotalTicksInCpuOrder) {
  const char* text =
      "cpu  10 0 10 100 0 0 0 0 0 0\n"
      "cpu1 1 2 3 40 5 6 7 8 9 10\n"
      "cpu0 1 0 1 10 0 0 0\n"
      "intr 12345 0 1\n"
      "ctxt 999\n";
  auto parsed = parseCpuTimes(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed.value().size(), 2u);
  EXPECT_EQ(parsed.value()[0].cpu, 0);
  EXPECT_EQ(parsed.value()[0].busy, 2u);
  EXPECT_EQ(parsed.value()[0].total, 12u);
  EXPECT_EQ(parsed.value()[1].cpu, 1);
  EXPECT_EQ(parsed.value()[1].busy, 1u + 2 + 3 + 6 + 7 + 8);  // guest time is already in user's
  EXPECT_EQ(parsed.value()[1].total, 27u + 40 + 5);
}

TEST(CpuLoad, AProcStatCpuLineWithTooFewTimesIsAnError) {
  auto parsed = parseCpuTimes("cpu0 1 2 3\n");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("/proc/stat line 1 is not a CPU's times"), std::string::npos)
      << parsed.error().message;
}

TEST(CpuLoad, ThisMachinesCpusIncludeTheOnesThisProcessMayUse) {
  auto times = readCpuTimes();
  ASSERT_TRUE(times) << times.error().message;
  const std::vector<int> allowed = allowedCpus().value();
  for (int cpu : allowed) {
    bool found = false;
    for (const CpuTimes& t : times.value()) found = found || (t.cpu == cpu && t.total >= t.busy);
    EXPECT_TRUE(found) << cpu;
  }
}

TEST(CpuLoad, ASchedstatIsTimeOnACpuTimeWaitingAndTurns) {
  auto parsed = parseThreadSchedule("1910447 365631 12\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed.value().ranNs, 1910447u);
  EXPECT_EQ(parsed.value().waitedNs, 365631u);
  EXPECT_EQ(parsed.value().runs, 12u);
  EXPECT_FALSE(parseThreadSchedule("12 34"));
}

TEST(CpuLoad, TheCallingThreadsCountsGrowAsItRuns) {
  auto before = readCallingThreadSchedule();
  ASSERT_TRUE(before) << before.error().message;
  if (before.value().runs == 0) GTEST_SKIP() << "this kernel keeps no per-thread scheduling counts";
  for (int i = 0; i < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto after = readCallingThreadSchedule();
  ASSERT_TRUE(after);
  EXPECT_GE(after.value().runs, before.value().runs + 3);  // each sleep ends in a turn of its own
  EXPECT_GT(after.value().ranNs, before.value().ranNs);
  EXPECT_GE(after.value().waitedNs, before.value().waitedNs);
}

}  // namespace
}  // namespace xrc::platform
