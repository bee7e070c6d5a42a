// xr-compositor-bench end to end: it starts its own daemon and demo clients and reports what
// docs/BENCHMARKS.md describes, including the steady-state window in which every client runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace xrc::test {
namespace {

TEST(Bench, ReportsTheSteadyStateOfClientsThatAllRan) {
  TempDir dir;
  Process bench({binary("XRC_BENCH"), "--daemon", binary("XRC_DAEMON"), "--demo", binary("XRC_DEMO"), "--clients", "2",
                 "--seconds", "2", "--view-size", "64x64", "--json"},
                {}, dir.path + "/bench.log");
  ASSERT_EQ(bench.wait(std::chrono::seconds(120)), 0) << bench.output();
  const std::string out = bench.output();
  const auto json = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  ASSERT_EQ(json["scenarios"].size(), 1u) << out;
  const auto& s = json["scenarios"][0];
  EXPECT_TRUE(s.value("ok", false)) << s.dump();
  EXPECT_EQ(s.value("clients", 0), 2);
  // 2 s at 90 Hz: 180 frames per client; both clients are visible, so most are shown (sanitizer
  // builds on two cores drop some).
  EXPECT_EQ(s.value("frames_per_client", 0), 180);
  EXPECT_GT(s.value("frames_displayed", uint64_t(0)), 180u) << s.dump();
  // The window in which both run: a fifth to four fifths of their frames, at up to the display's rate.
  const double steady = s.value("steady_s", 0.0);
  EXPECT_GT(steady, 0.1) << s.dump();
  EXPECT_LT(steady, 2.0) << s.dump();
  const double rate = s.value("client_frames_per_s_steady", 0.0);
  EXPECT_GT(rate, 10.0) << s.dump();
  EXPECT_LT(rate, 95.0) << s.dump();
  // Window counts are part of the whole run's.
  EXPECT_LE(s.value("missed_display_frames_steady", uint64_t(1) << 40), s.value("missed_display_frames", uint64_t(0)));
  EXPECT_LE(s.value("display_frames_gpu_late_steady", uint64_t(1) << 40),
            s.value("display_frames_gpu_late", uint64_t(0)));
  EXPECT_GT(s.value("daemon_cpu_us_per_client_frame", 0.0), 0.0) << s.dump();
  EXPECT_TRUE(s.contains("display_wake_delay_us")) << s.dump();
  EXPECT_GT(s["gpu_copy_us"].value("p50", 0.0), 0.0) << s.dump();
}

}  // namespace
}  // namespace xrc::test
