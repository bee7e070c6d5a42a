// The OpenXR face's input mapping (InputMapper) as pure logic: current interaction profiles from the
// device and the app's suggestions, action states through bindings, sources, poses and names.
#include <gtest/gtest.h>

#include "input_mapper.hpp"

namespace xrc::openxr {
namespace {

constexpr const char* kSimple = "/interaction_profiles/khr/simple_controller";
constexpr const char* kTouch = "/interaction_profiles/oculus/touch_controller";

struct InputMapping : ::testing::Test {
  Action select{nullptr, "select", "Select", XR_ACTION_TYPE_BOOLEAN_INPUT, {}, false};
  Action trigger{nullptr, "trigger", "Trigger", XR_ACTION_TYPE_FLOAT_INPUT, {}, false};
  Action stick{nullptr, "stick", "Stick", XR_ACTION_TYPE_VECTOR2F_INPUT, {}, false};
  Action grip{nullptr, "grip", "Grip", XR_ACTION_TYPE_POSE_INPUT, {}, false};
  Action buzz{nullptr, "buzz", "Buzz", XR_ACTION_TYPE_VIBRATION_OUTPUT, {}, false};
  SuggestedBindings suggested{
      {kSimple,
       {{&select, "/user/hand/left/input/select/click"},
        {&select, "/user/hand/right/input/select/click"},
        {&grip, "/user/hand/right/input/grip/pose"},
        {&buzz, "/user/hand/right/output/haptic"}}},
      {kTouch,
       {{&select, "/user/hand/right/input/a/click"},
        {&trigger, "/user/hand/right/input/trigger"},
        {&stick, "/user/hand/right/input/thumbstick"},
        {&select, "/user/hand/left/input/trigger"}}},
  };
  std::vector<std::vector<std::string>> hands{{"/user/hand/left", "/user/hand/right"}};

  static InputSnapshot devices(const char* left, const char* right) {
    InputSnapshot in;
    in.present = true;
    in.hands[0].profile = left;
    in.hands[1].profile = right;
    return in;
  }
  void sync(InputMapper& m, std::vector<const Action*> actions, int64_t now) {
    std::vector<std::vector<std::string>> subactions(actions.size(), hands[0]);
    m.sync(actions, subactions, suggested, now);
  }
};

TEST_F(InputMapping, TheCurrentProfileIsTheDevicesWhenTheAppSuggestedIt) {
  InputMapper m;
  m.setInput(devices(kSimple, "/interaction_profiles/valve/index_controller"));
  EXPECT_TRUE(m.updateProfiles(suggested));
  EXPECT_EQ(m.profile(0), kSimple);
  EXPECT_EQ(m.profile(1), "");  // no suggestion for the index controller: nothing is current
  EXPECT_FALSE(m.updateProfiles(suggested));
  m.setInput(devices(kSimple, kTouch));
  EXPECT_TRUE(m.updateProfiles(suggested));
  EXPECT_EQ(m.profile(1), kTouch);
}

TEST_F(InputMapping, BooleansFloatsAndVectorsReadTheirBoundComponents) {
  InputMapper m;
  InputSnapshot in = devices(kSimple, kTouch);
  in.hands[1].components = {
      {"/input/a/click", 1, 0, 500}, {"/input/trigger/value", 0.75f, 0, 600}, {"/input/thumbstick", 0.5f, -0.25f, 700}};
  m.setInput(in);
  m.updateProfiles(suggested);
  sync(m, {&select, &trigger, &stick}, 1000);
  EXPECT_TRUE(m.state(select, "").active);
  EXPECT_EQ(m.state(select, "").x, 1);
  EXPECT_EQ(m.state(select, "/user/hand/left").x, 0);  // left select/click at rest
  EXPECT_TRUE(m.state(select, "/user/hand/left").active);
  EXPECT_EQ(m.state(select, "/user/hand/right").x, 1);
  EXPECT_FLOAT_EQ(m.state(trigger, "").x, 0.75f);  // "/input/trigger" reads the value
  EXPECT_FALSE(m.state(trigger, "/user/hand/left").active);
  EXPECT_FLOAT_EQ(m.state(stick, "/user/hand/right").x, 0.5f);
  EXPECT_FLOAT_EQ(m.state(stick, "/user/hand/right").y, -0.25f);
  EXPECT_EQ(m.state(select, "").lastChangeNs, 500);  // became active: the component's change time
  EXPECT_FALSE(m.state(select, "").changedSinceLastSync);
}

TEST_F(InputMapping, ChangesBetweenSyncsAreReportedWithTheirTime) {
  InputMapper m;
  InputSnapshot in = devices(kSimple, kSimple);
  m.setInput(in);
  m.updateProfiles(suggested);
  sync(m, {&select}, 1000);
  EXPECT_FALSE(m.state(select, "").changedSinceLastSync);
  in.hands[0].components = {{"/input/select/click", 1, 0, 1500}};
  m.setInput(in);
  sync(m, {&select}, 2000);
  EXPECT_TRUE(m.state(select, "").changedSinceLastSync);
  EXPECT_EQ(m.state(select, "").lastChangeNs, 1500);
  EXPECT_EQ(m.state(select, "/user/hand/left").x, 1);
  EXPECT_EQ(m.state(select, "/user/hand/right").x, 0);
  sync(m, {&select}, 3000);  // no change since
  EXPECT_FALSE(m.state(select, "").changedSinceLastSync);
  EXPECT_EQ(m.state(select, "").lastChangeNs, 1500);
  m.deactivate(select);
  EXPECT_FALSE(m.state(select, "").active);
}

TEST_F(InputMapping, AValueBoundToABooleanIsPressedFromHalfWay) {
  InputMapper m;
  InputSnapshot in = devices(kTouch, kTouch);
  in.hands[0].components = {{"/input/trigger/value", 0.4f, 0, 1}};
  m.setInput(in);
  m.updateProfiles(suggested);
  sync(m, {&select}, 10);
  EXPECT_EQ(m.state(select, "/user/hand/left").x, 0);
  in.hands[0].components = {{"/input/trigger/value", 0.6f, 0, 2}};
  m.setInput(in);
  sync(m, {&select}, 20);
  EXPECT_EQ(m.state(select, "/user/hand/left").x, 1);
}

TEST_F(InputMapping, PosesSourcesAndHapticOutputsFollowTheBindings) {
  InputMapper m;
  InputSnapshot in = devices(kSimple, kSimple);
  Pose right;
  right.position = {0.3f, 1.1f, -0.5f};
  in.hands[1].grip = right;
  m.setInput(in);
  m.updateProfiles(suggested);
  auto pose = m.pose(grip, "", suggested);
  ASSERT_TRUE(pose.has_value());
  EXPECT_FLOAT_EQ(pose->position[0], 0.3f);
  EXPECT_FALSE(m.pose(grip, "/user/hand/left", suggested).has_value());
  auto outputs = m.sources(buzz, "/user/hand/right", suggested);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].path(), "/user/hand/right/output/haptic");
  auto selects = m.sources(select, "", suggested);
  ASSERT_EQ(selects.size(), 2u);
  EXPECT_EQ(selects[0].path(), "/user/hand/left/input/select/click");
}

TEST(InputNames, SourcesHaveReadableNames) {
  EXPECT_EQ(localizedUserPath("/user/hand/left"), "Left Hand");
  EXPECT_EQ(localizedProfile(kSimple), "Simple Controller");
  EXPECT_EQ(localizedComponent("/input/select/click"), "Select Click");
  EXPECT_EQ(localizedComponent("/output/haptic"), "Haptic");
}

}  // namespace
}  // namespace xrc::openxr
