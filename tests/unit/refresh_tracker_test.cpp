// The openxr backend's view of its runtime's refresh rate (RefreshTracker): placeholder periods of
// a runtime's first frames and throttled frames of a slow application are not the display's rate.
#include <gtest/gtest.h>

#include "backends/openxr/refresh_tracker.hpp"

namespace xrc {
namespace {

constexpr int64_t k20Hz = 50'000'000;
constexpr int64_t k90Hz = 11'111'111;
constexpr int64_t kPlaceholder = 16'000'000;  // Monado 25's app pacer, first frames

TEST(RefreshTracker, AShorterPlaceholderGivesWayAtTheFirstRealFrame) {
  RefreshTracker refresh;
  EXPECT_EQ(refresh.periodNs(), 0);
  EXPECT_FALSE(refresh.settled());
  EXPECT_EQ(refresh.add(kPlaceholder), kPlaceholder);
  EXPECT_EQ(refresh.add(k20Hz), k20Hz);  // 50 ms is no whole multiple of 16 ms
  EXPECT_FALSE(refresh.settled());
  EXPECT_EQ(refresh.add(k20Hz), k20Hz);
  EXPECT_TRUE(refresh.settled());
}

TEST(RefreshTracker, ALongerPlaceholderGivesWayAtTheFirstRealFrame) {
  RefreshTracker refresh;
  refresh.add(kPlaceholder);
  EXPECT_EQ(refresh.add(k90Hz), k90Hz);
}

TEST(RefreshTracker, ThrottledFramesOfASlowApplicationAreNotTheRefreshRate) {
  RefreshTracker refresh;
  for (int i = 0; i < 10; ++i) refresh.add(k90Hz);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(refresh.add(2 * k90Hz), k90Hz);
}

TEST(RefreshTracker, ARealChangeOfRateIsFollowedAndResetForgetsTheOldRuntime) {
  RefreshTracker refresh;
  for (int i = 0; i < 10; ++i) refresh.add(k90Hz);
  EXPECT_EQ(refresh.add(k20Hz), k20Hz);  // 4.5 periods: not a throttled application
  EXPECT_EQ(refresh.add(k90Hz), k90Hz);  // and back
  refresh.reset();
  EXPECT_EQ(refresh.periodNs(), 0);
  EXPECT_EQ(refresh.add(2 * k90Hz), 2 * k90Hz);
  EXPECT_EQ(refresh.add(k90Hz), k90Hz);
}

// A daemon paced at half the rate for a long time (its frames ran long under load) still knows
// the display's rate: its latch wait, bounded by half the refresh period, stays short enough
// for the runtime to give it every vsync again once the load is gone.
TEST(RefreshTracker, ThrottlingForLongIsNotTakenForTheRate) {
  RefreshTracker refresh;
  for (int i = 0; i < 10; ++i) refresh.add(k90Hz);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(refresh.add(2 * k90Hz), k90Hz) << "frame " << i;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(refresh.add(3 * k90Hz), k90Hz) << "frame " << i;
  EXPECT_EQ(refresh.add(k90Hz), k90Hz);
}

}  // namespace
}  // namespace xrc
