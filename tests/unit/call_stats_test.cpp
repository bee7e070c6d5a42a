// The runtime face's optional call statistics (XRC_OPENXR_STATS): each call's CPU time on the
// calling thread is summed per call and per frame, and what a call spends asleep is not CPU.
#include "call_stats.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace xrc::openxr {
namespace {

using namespace std::chrono_literals;

TEST(CallStats, SumsEachCallsCpuPerCallAndPerFrame) {
  CallStats stats("/dev/null");
  for (int frame = 0; frame < 4; ++frame) {
    stats.record(Call::waitFrame, 10ms, 100us);
    stats.record(Call::endFrame, 20us, 50us);
  }
  stats.record(Call::locateViews, 5us, 30us);
  const auto summary = nlohmann::json::parse(stats.summary());
  EXPECT_DOUBLE_EQ(summary["calls"]["xrWaitFrame"]["cpu_us"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(summary["calls"]["xrEndFrame"]["cpu_us"].get<double>(), 200.0);
  EXPECT_EQ(summary["calls"]["xrWaitFrame"]["count"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(summary["app_thread_cpu_us_per_frame"].get<double>(), (400.0 + 200.0 + 30.0) / 4);
}

TEST(CallStats, ATimerCountsTheThreadsCpuNotItsSleep) {
  CallStats stats("/dev/null");
  {
    CallTimer timer(&stats, Call::waitFrame);
    std::this_thread::sleep_for(50ms);
  }
  {
    CallTimer timer(&stats, Call::endFrame);
    const auto until = std::chrono::steady_clock::now() + 20ms;
    volatile uint64_t spins = 0;
    while (std::chrono::steady_clock::now() < until) spins = spins + 1;
  }
  const auto summary = nlohmann::json::parse(stats.summary());
  // The sleep took 50 ms of wall time and almost no CPU; the spin 20 ms of both (less only where
  // this thread was descheduled meanwhile).
  EXPECT_GE(summary["calls"]["xrWaitFrame"]["p50_us"].get<double>(), 50'000.0);
  EXPECT_LT(summary["calls"]["xrWaitFrame"]["cpu_us"].get<double>(), 10'000.0);
  EXPECT_GT(summary["calls"]["xrEndFrame"]["cpu_us"].get<double>(), 5'000.0);
}

TEST(CallStats, NoFramesNoCpuPerFrame) {
  CallStats stats("/dev/null");
  stats.record(Call::endFrame, 20us, 50us);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(stats.summary())["app_thread_cpu_us_per_frame"].get<double>(), 0.0);
}

}  // namespace
}  // namespace xrc::openxr
