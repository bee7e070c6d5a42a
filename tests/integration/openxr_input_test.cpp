// Controller input end to end on the headless daemon: xr-compositorctl drives its simulated
// controllers, an OpenXR app reads them through its actions (states with change times, the
// current interaction profile and its change event, bound sources and their names, pose action
// spaces) and its haptics reach the daemon's status. Only the focused session gets input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "openxr_session_fixture.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

class OpenXrInput : public OpenXrSession {
 protected:
  void SetUp() override {
    OpenXrSession::SetUp();
    for (const char* p : {"/user/hand/left", "/user/hand/right", "/interaction_profiles/khr/simple_controller"}) {
      XrPath path = XR_NULL_PATH;
      ASSERT_EQ(xrStringToPath(instance_, p, &path), XR_SUCCESS);
      paths_.push_back(path);
    }
  }
  XrPath left() const { return paths_[0]; }
  XrPath right() const { return paths_[1]; }
  XrPath simple() const { return paths_[2]; }
  XrPath path(const char* text) {
    XrPath out = XR_NULL_PATH;
    EXPECT_EQ(xrStringToPath(instance_, text, &out), XR_SUCCESS);
    return out;
  }

  XrAction action(const char* name, XrActionType type) {
    XrActionCreateInfo info{XR_TYPE_ACTION_CREATE_INFO};
    std::strcpy(info.actionName, name);
    std::strcpy(info.localizedActionName, name);
    info.actionType = type;
    info.countSubactionPaths = 2;
    info.subactionPaths = paths_.data();
    XrAction out = XR_NULL_HANDLE;
    EXPECT_EQ(xrCreateAction(set_, &info, &out), XR_SUCCESS);
    return out;
  }

  // A gameplay set on the simple controller: select (both hands), "squeeze" a float read from the
  // right select click, the right grip pose and the right haptic output.
  void createActions() {
    XrActionSetCreateInfo setInfo{XR_TYPE_ACTION_SET_CREATE_INFO};
    std::strcpy(setInfo.actionSetName, "gameplay");
    std::strcpy(setInfo.localizedActionSetName, "Gameplay");
    ASSERT_EQ(xrCreateActionSet(instance_, &setInfo, &set_), XR_SUCCESS);
    select_ = action("select", XR_ACTION_TYPE_BOOLEAN_INPUT);
    squeeze_ = action("squeeze", XR_ACTION_TYPE_FLOAT_INPUT);
    grip_ = action("grip", XR_ACTION_TYPE_POSE_INPUT);
    buzz_ = action("buzz", XR_ACTION_TYPE_VIBRATION_OUTPUT);
    std::vector<XrActionSuggestedBinding> bindings{
        {select_, path("/user/hand/left/input/select/click")},   {select_, path("/user/hand/right/input/select/click")},
        {squeeze_, path("/user/hand/right/input/select/click")}, {grip_, path("/user/hand/right/input/grip/pose")},
        {buzz_, path("/user/hand/right/output/haptic")},
    };
    XrInteractionProfileSuggestedBinding suggested{XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING, nullptr, simple(),
                                                   uint32_t(bindings.size()), bindings.data()};
    ASSERT_EQ(xrSuggestInteractionProfileBindings(instance_, &suggested), XR_SUCCESS);
    XrSessionActionSetsAttachInfo attach{XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO, nullptr, 1, &set_};
    ASSERT_EQ(xrAttachSessionActionSets(session_, &attach), XR_SUCCESS);
  }

  // One frame (wait, begin, end with no layers) and the session's events meanwhile.
  void frame() {
    XrFrameState state{XR_TYPE_FRAME_STATE};
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_EQ(endFrame(state.predictedDisplayTime, {}), XR_SUCCESS);
    lastDisplayTime_ = state.predictedDisplayTime;
    XrEventDataBuffer event{XR_TYPE_EVENT_DATA_BUFFER};
    while (xrPollEvent(instance_, &event) == XR_SUCCESS) {
      if (event.type == XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED) {
        state_ = reinterpret_cast<XrEventDataSessionStateChanged&>(event).state;
      } else if (event.type == XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED) {
        EXPECT_EQ(reinterpret_cast<XrEventDataInteractionProfileChanged&>(event).session, session_);
        profileChanges_++;
      }
      event = {XR_TYPE_EVENT_DATA_BUFFER};
    }
  }
  // Frames until the session is FOCUSED (bounded).
  void untilFocused() {
    for (int i = 0; i < 100 && state_ != XR_SESSION_STATE_FOCUSED; ++i) ASSERT_NO_FATAL_FAILURE(frame());
    ASSERT_EQ(state_, XR_SESSION_STATE_FOCUSED);
  }
  XrResult sync() {
    XrActiveActionSet active{set_, XR_NULL_PATH};
    XrActionsSyncInfo info{XR_TYPE_ACTIONS_SYNC_INFO, nullptr, 1, &active};
    return xrSyncActions(session_, &info);
  }
  XrActionStateBoolean boolean(XrAction a, XrPath subaction) {
    XrActionStateGetInfo get{XR_TYPE_ACTION_STATE_GET_INFO, nullptr, a, subaction};
    XrActionStateBoolean out{XR_TYPE_ACTION_STATE_BOOLEAN};
    EXPECT_EQ(xrGetActionStateBoolean(session_, &get, &out), XR_SUCCESS);
    return out;
  }
  // Frames (and syncs) until `done` holds after a sync, bounded.
  template <typename Done>
  bool syncUntil(Done done) {
    for (int i = 0; i < 60; ++i) {
      frame();
      EXPECT_EQ(sync(), XR_SUCCESS);
      if (done()) return true;
    }
    return false;
  }

  // Frames until the grip action's space (for `subaction`) is located in STAGE at x = `x`.
  XrSpaceLocation locateGripUntil(XrPath subaction, float x) {
    XrActionSpaceCreateInfo spaceInfo{
        XR_TYPE_ACTION_SPACE_CREATE_INFO, nullptr, grip_, subaction, {{0, 0, 0, 1}, {0, 0, 0}}};
    XrSpace gripSpace = XR_NULL_HANDLE;
    EXPECT_EQ(xrCreateActionSpace(session_, &spaceInfo, &gripSpace), XR_SUCCESS);
    XrReferenceSpaceCreateInfo stageInfo{
        XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, XR_REFERENCE_SPACE_TYPE_STAGE, {{0, 0, 0, 1}, {0, 0, 0}}};
    XrSpace stage = XR_NULL_HANDLE;
    EXPECT_EQ(xrCreateReferenceSpace(session_, &stageInfo, &stage), XR_SUCCESS);
    XrSpaceLocation location{XR_TYPE_SPACE_LOCATION};
    EXPECT_TRUE(syncUntil([&] {
      EXPECT_EQ(xrLocateSpace(gripSpace, stage, lastDisplayTime_, &location), XR_SUCCESS);
      return (location.locationFlags & XR_SPACE_LOCATION_POSITION_VALID_BIT) != 0 &&
             std::fabs(location.pose.position.x - x) < 1e-4f;
    }));
    xrDestroySpace(gripSpace);
    xrDestroySpace(stage);
    return location;
  }

  std::vector<XrPath> paths_;
  XrActionSet set_ = XR_NULL_HANDLE;
  XrAction select_ = XR_NULL_HANDLE, squeeze_ = XR_NULL_HANDLE, grip_ = XR_NULL_HANDLE, buzz_ = XR_NULL_HANDLE;
  XrSessionState state_ = XR_SESSION_STATE_UNKNOWN;
  int profileChanges_ = 0;
  XrTime lastDisplayTime_ = 0;
};

TEST_F(OpenXrInput, ScriptedPressesValuesPosesAndHapticsReachTheFocusedApp) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(createActions());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  ASSERT_NO_FATAL_FAILURE(untilFocused());
  EXPECT_EQ(profileChanges_, 0);  // announced only by xrSyncActions
  ASSERT_EQ(sync(), XR_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(frame());
  // The simulated simple controllers are current in both hands, announced by an event.
  EXPECT_EQ(profileChanges_, 1);
  XrInteractionProfileState profile{XR_TYPE_INTERACTION_PROFILE_STATE};
  ASSERT_EQ(xrGetCurrentInteractionProfile(session_, right(), &profile), XR_SUCCESS);
  EXPECT_EQ(profile.interactionProfile, simple());
  auto idle = boolean(select_, XR_NULL_PATH);
  EXPECT_TRUE(idle.isActive);
  EXPECT_FALSE(idle.currentState);

  // A press of the right select button, through xr-compositorctl.
  const XrTime beforePress = lastDisplayTime_;
  auto ctl = runCtl(dir_, {"--socket", daemon_.socket(), "input", "right", "/input/select/click", "1"});
  ASSERT_EQ(ctl.exitCode, 0) << ctl.output;
  ASSERT_TRUE(syncUntil([&] { return boolean(select_, right()).currentState == XR_TRUE; }));
  auto pressed = boolean(select_, right());
  EXPECT_TRUE(pressed.isActive);
  EXPECT_TRUE(pressed.changedSinceLastSync);
  EXPECT_GT(pressed.lastChangeTime, 0);
  EXPECT_LT(pressed.lastChangeTime, lastDisplayTime_);
  EXPECT_GT(pressed.lastChangeTime, beforePress - 1'000'000'000);
  EXPECT_FALSE(boolean(select_, left()).currentState);  // the other hand is still at rest
  EXPECT_TRUE(boolean(select_, XR_NULL_PATH).currentState);
  XrActionStateGetInfo getSqueeze{XR_TYPE_ACTION_STATE_GET_INFO, nullptr, squeeze_, XR_NULL_PATH};
  XrActionStateFloat squeeze{XR_TYPE_ACTION_STATE_FLOAT};
  ASSERT_EQ(xrGetActionStateFloat(session_, &getSqueeze, &squeeze), XR_SUCCESS);
  EXPECT_TRUE(squeeze.isActive);
  EXPECT_FLOAT_EQ(squeeze.currentState, 1.0f);
  frame();
  ASSERT_EQ(sync(), XR_SUCCESS);
  EXPECT_FALSE(boolean(select_, right()).changedSinceLastSync);  // no change since

  // Bound sources and their names.
  XrBoundSourcesForActionEnumerateInfo sourcesInfo{XR_TYPE_BOUND_SOURCES_FOR_ACTION_ENUMERATE_INFO, nullptr, select_};
  uint32_t count = 0;
  ASSERT_EQ(xrEnumerateBoundSourcesForAction(session_, &sourcesInfo, 0, &count, nullptr), XR_SUCCESS);
  ASSERT_EQ(count, 2u);
  std::vector<XrPath> sources(count);
  ASSERT_EQ(xrEnumerateBoundSourcesForAction(session_, &sourcesInfo, count, &count, sources.data()), XR_SUCCESS);
  EXPECT_EQ(sources[1], path("/user/hand/right/input/select/click"));
  XrInputSourceLocalizedNameGetInfo nameInfo{XR_TYPE_INPUT_SOURCE_LOCALIZED_NAME_GET_INFO, nullptr, sources[1],
                                             XR_INPUT_SOURCE_LOCALIZED_NAME_USER_PATH_BIT |
                                                 XR_INPUT_SOURCE_LOCALIZED_NAME_INTERACTION_PROFILE_BIT |
                                                 XR_INPUT_SOURCE_LOCALIZED_NAME_COMPONENT_BIT};
  char name[128] = {};
  ASSERT_EQ(xrGetInputSourceLocalizedName(session_, &nameInfo, sizeof(name), &count, name), XR_SUCCESS);
  EXPECT_STREQ(name, "Right Hand Simple Controller Select Click");

  // The grip pose action's space follows the controller.
  auto control = daemon_.control();
  ASSERT_TRUE(control);
  Pose at;
  at.position = {0.3f, 1.1f, -0.5f};
  ASSERT_TRUE(control->setHandPose(1, at, at));
  const XrSpaceLocation location = locateGripUntil(XR_NULL_PATH, 0.3f);
  EXPECT_NEAR(location.pose.position.y, 1.1f, 1e-5f);
  EXPECT_NEAR(location.pose.position.z, -0.5f, 1e-5f);

  // A haptic pulse reaches the display's right controller.
  XrHapticVibration vibration{XR_TYPE_HAPTIC_VIBRATION, nullptr, 40'000'000, XR_FREQUENCY_UNSPECIFIED, 0.6f};
  XrHapticActionInfo hapticInfo{XR_TYPE_HAPTIC_ACTION_INFO, nullptr, buzz_, XR_NULL_PATH};
  ASSERT_EQ(xrApplyHapticFeedback(session_, &hapticInfo, reinterpret_cast<XrHapticBaseHeader*>(&vibration)),
            XR_SUCCESS);
  ASSERT_EQ(xrStopHapticFeedback(session_, &hapticInfo), XR_SUCCESS);
  auto status = control->status();
  ASSERT_TRUE(status);
  ASSERT_EQ(status.value().haptics.size(), 2u);
  EXPECT_EQ(status.value().haptics[0].pulses, 0u);
  EXPECT_EQ(status.value().haptics[1].pulses, 1u);
  EXPECT_EQ(status.value().haptics[1].stops, 1u);
  EXPECT_FLOAT_EQ(status.value().haptics[1].last.amplitude, 0.6f);
  EXPECT_EQ(status.value().haptics[1].last.durationNs, 40'000'000);

  // A device the app has no bindings for: no profile is current, the actions go inactive.
  const int changesBefore = profileChanges_;
  ASSERT_TRUE(control->setInput(1, "/interaction_profiles/oculus/touch_controller", "", 0, 0));
  ASSERT_TRUE(syncUntil([&] { return !boolean(select_, right()).isActive; }));
  ASSERT_NO_FATAL_FAILURE(frame());  // polls the event that sync queued
  EXPECT_EQ(profileChanges_, changesBefore + 1);
  ASSERT_EQ(xrGetCurrentInteractionProfile(session_, right(), &profile), XR_SUCCESS);
  EXPECT_EQ(profile.interactionProfile, XR_NULL_PATH);
  EXPECT_TRUE(boolean(select_, left()).isActive);
}

// The operator's input commands check what they are given and leave the controllers as they were.
TEST_F(OpenXrInput, BadInputCommandsAreRefusedClearly) {
  auto control = daemon_.control();
  ASSERT_TRUE(control);
  EXPECT_FALSE(control->setInput(2, "", "/input/select/click", 1, 0));
  auto bad = control->setInput(0, "", "/input/select/click\n\x1b[31m", 1, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::invalidArgument);
  EXPECT_FALSE(control->setInput(0, "not-a-profile", "", 0, 0));
  EXPECT_FALSE(control->setInput(0, "", "/input/select/click", NAN, 0));
  Pose invalid;
  invalid.orientation = {0, 0, 0, 0};
  EXPECT_FALSE(control->setHandPose(0, invalid, invalid));
  auto ctl = runCtl(dir_, {"--socket", daemon_.socket(), "input", "left"});
  EXPECT_NE(ctl.exitCode, 0);
  ctl = runCtl(dir_, {"--socket", daemon_.socket(), "input", "middle", "/input/select/click"});
  EXPECT_NE(ctl.exitCode, 0);
  ctl = runCtl(dir_, {"--socket", daemon_.socket(), "hand-pose", "left", "0", "1.2", "-0.3"});
  EXPECT_EQ(ctl.exitCode, 0) << ctl.output;
}

// A session that is not focused (a background session behind the demo's primary) reads no input
// and cannot vibrate; once it is made the primary, it reads the controllers.
TEST_F(OpenXrInput, OnlyTheFocusedSessionGetsInput) {
  DemoSpec primary;
  primary.name = "primary";
  primary.frames = 100000;
  auto demo = startDemo(daemon_, dir_, primary);
  ASSERT_TRUE(daemon_.waitForStatus([](const control::DaemonStatus& s) { return s.clients.size() == 1; }, 10s));
  auto control = daemon_.control();
  ASSERT_TRUE(control);
  ASSERT_TRUE(control->setInput(0, "", "/input/select/click", 1, 0));
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(createActions());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  for (int i = 0; i < 10; ++i) ASSERT_NO_FATAL_FAILURE(frame());
  EXPECT_NE(state_, XR_SESSION_STATE_FOCUSED);
  EXPECT_EQ(sync(), XR_SESSION_NOT_FOCUSED);
  EXPECT_FALSE(boolean(select_, left()).isActive);
  XrHapticVibration vibration{XR_TYPE_HAPTIC_VIBRATION, nullptr, XR_MIN_HAPTIC_DURATION, XR_FREQUENCY_UNSPECIFIED,
                              1.0f};
  XrHapticActionInfo hapticInfo{XR_TYPE_HAPTIC_ACTION_INFO, nullptr, buzz_, XR_NULL_PATH};
  EXPECT_EQ(xrApplyHapticFeedback(session_, &hapticInfo, reinterpret_cast<XrHapticBaseHeader*>(&vibration)),
            XR_SESSION_NOT_FOCUSED);

  auto status = control->status();
  ASSERT_TRUE(status);
  const control::ClientStatus* app = findClient(status.value(), "xrc-bad-input");
  ASSERT_NE(app, nullptr);
  ASSERT_TRUE(control->setPrimary(app->id));
  ASSERT_NO_FATAL_FAILURE(untilFocused());
  ASSERT_TRUE(syncUntil([&] { return boolean(select_, left()).currentState == XR_TRUE; }));
  status = control->status();
  ASSERT_TRUE(status);
  EXPECT_EQ(status.value().haptics[1].pulses, 0u);
}

// Daemon B (--backend openxr) over daemon A (headless): B binds A's controllers through our
// runtime face and forwards them to its own focused client, and that client's haptics travel back.
class OpenXrInputThroughTwoDaemons : public OpenXrInput {
 protected:
  Daemon& target() override { return *upper_; }
  void SetUp() override {
    ASSERT_TRUE(daemon_.ready()) << daemon_.process().output();
    upper_ = std::make_unique<Daemon>(upperDir_, std::vector<std::string>{"--backend", "openxr"},
                                      openxrEnv(daemon_.socket()));
    OpenXrInput::SetUp();
  }
  TempDir upperDir_;
  std::unique_ptr<Daemon> upper_;
};

TEST_F(OpenXrInputThroughTwoDaemons, PressesPosesAndHapticsTravelBothHops) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(createActions());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  ASSERT_NO_FATAL_FAILURE(untilFocused());
  ASSERT_TRUE(syncUntil([&] {
    XrInteractionProfileState profile{XR_TYPE_INTERACTION_PROFILE_STATE};
    EXPECT_EQ(xrGetCurrentInteractionProfile(session_, right(), &profile), XR_SUCCESS);
    return profile.interactionProfile == simple();
  }));
  EXPECT_FALSE(boolean(select_, right()).currentState);

  auto lower = daemon_.control();
  ASSERT_TRUE(lower);
  ASSERT_TRUE(lower->setInput(1, "", "/input/select/click", 1, 0));
  Pose at;
  at.position = {-0.25f, 1.3f, -0.45f};
  ASSERT_TRUE(lower->setHandPose(1, at, at));
  ASSERT_TRUE(syncUntil([&] { return boolean(select_, right()).currentState == XR_TRUE; }));
  EXPECT_FALSE(boolean(select_, left()).currentState);
  auto pressed = boolean(select_, right());
  EXPECT_GT(pressed.lastChangeTime, 0);

  const XrSpaceLocation location = locateGripUntil(right(), -0.25f);
  EXPECT_NEAR(location.pose.position.y, 1.3f, 1e-4f);

  XrHapticVibration vibration{XR_TYPE_HAPTIC_VIBRATION, nullptr, 20'000'000, 200.0f, 0.8f};
  XrHapticActionInfo hapticInfo{XR_TYPE_HAPTIC_ACTION_INFO, nullptr, buzz_, right()};
  ASSERT_EQ(xrApplyHapticFeedback(session_, &hapticInfo, reinterpret_cast<XrHapticBaseHeader*>(&vibration)),
            XR_SUCCESS);
  // B sent it to its runtime (A's face), which sent it to A's simulated right controller.
  ASSERT_TRUE(daemon_.waitForStatus(
      [](const control::DaemonStatus& s) { return s.haptics.size() == 2 && s.haptics[1].pulses == 1; }, 5s));
  auto status = lower->status();
  ASSERT_TRUE(status);
  EXPECT_FLOAT_EQ(status.value().haptics[1].last.amplitude, 0.8f);
  EXPECT_FLOAT_EQ(status.value().haptics[1].last.frequency, 200.0f);
  auto upperStatus = upper_->control()->status();
  ASSERT_TRUE(upperStatus);
  EXPECT_EQ(upperStatus.value().haptics[1].pulses, 1u);
}

}  // namespace
}  // namespace xrc::test
