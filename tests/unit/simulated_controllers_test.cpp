// The headless display's simulated controllers: what the operator may set, and what it refuses.
#include <gtest/gtest.h>

#include <cmath>

#include "input/simulated_controllers.hpp"

namespace xrc {
namespace {

TEST(SimulatedControllers, StartAsTwoSimpleControllersAtRest) {
  SimulatedControllers c;
  auto s = c.snapshot();
  EXPECT_TRUE(s.present);
  for (const auto& hand : s.hands) {
    EXPECT_EQ(hand.profile, SimulatedControllers::kDefaultProfile);
    EXPECT_TRUE(hand.components.empty());
    EXPECT_TRUE(hand.grip.has_value());
  }
}

TEST(SimulatedControllers, ComponentsKeepTheirChangeTimeAndAreClamped) {
  SimulatedControllers c;
  ASSERT_TRUE(c.setComponent(1, "/input/select/click", 1, 0, 100));
  ASSERT_TRUE(c.setComponent(1, "/input/select/click", 1, 0, 200));  // no change
  ASSERT_TRUE(c.setComponent(0, "/input/thumbstick", -3, 0.5f, 300));
  auto s = c.snapshot();
  ASSERT_NE(s.hands[1].component("/input/select/click"), nullptr);
  EXPECT_EQ(s.hands[1].component("/input/select/click")->changedNs, 100);
  EXPECT_EQ(s.hands[0].component("/input/thumbstick")->x, -1);
  EXPECT_EQ(s.hands[0].component("/input/thumbstick")->y, 0.5f);
  // A new device starts at rest.
  ASSERT_TRUE(c.setProfile(1, "/interaction_profiles/oculus/touch_controller"));
  EXPECT_EQ(c.snapshot().hands[1].component("/input/select/click"), nullptr);
}

TEST(SimulatedControllers, RefusesBadInputWithoutChangingAnything) {
  SimulatedControllers c;
  EXPECT_FALSE(c.setComponent(2, "/input/select/click", 1, 0, 1));
  EXPECT_FALSE(c.setComponent(0, "select/click", 1, 0, 1));
  EXPECT_FALSE(c.setComponent(0, "/input/Select\n", 1, 0, 1));
  EXPECT_FALSE(c.setComponent(0, "/input/" + std::string(200, 'a'), 1, 0, 1));
  EXPECT_FALSE(c.setComponent(0, "/input/x", NAN, 0, 1));
  EXPECT_FALSE(c.setProfile(0, "/user/hand/left"));
  Pose bad;
  bad.orientation = {0, 0, 0, 0};
  EXPECT_FALSE(c.setPose(0, bad, bad));
  EXPECT_TRUE(c.snapshot().hands[0].components.empty());
  ASSERT_TRUE(c.setProfile(0, "none"));
  EXPECT_EQ(c.setComponent(0, "/input/select/click", 1, 0, 1).error().code, ErrorCode::callOrder);
  for (int i = 0; i < int(kMaxComponentsPerHand); ++i) {
    ASSERT_TRUE(c.setComponent(1, "/input/c" + std::to_string(i), 1, 0, 1));
  }
  EXPECT_EQ(c.setComponent(1, "/input/one_more", 1, 0, 1).error().code, ErrorCode::exhausted);
}

TEST(SimulatedControllers, HapticPulsesAreCounted) {
  SimulatedControllers c;
  ASSERT_TRUE(c.haptic(1, "/output/haptic", {50'000'000, 160, 0.5f}));
  ASSERT_TRUE(c.stopHaptic(1, "/output/haptic"));
  EXPECT_FALSE(c.haptic(1, "/output/haptic", {1, 0, 2.0f}));
  EXPECT_FALSE(c.haptic(1, "/input/select", {1, 0, 0.5f}));
  auto h = c.haptics();
  EXPECT_EQ(h[1].pulses, 1u);
  EXPECT_EQ(h[1].stops, 1u);
  EXPECT_EQ(h[1].last.amplitude, 0.5f);
  EXPECT_EQ(h[0].pulses, 0u);
}

}  // namespace
}  // namespace xrc
