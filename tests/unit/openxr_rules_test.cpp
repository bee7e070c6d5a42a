// The OpenXR face's rules without a daemon: path atoms, interaction profiles, the action registry,
// the session lifecycle, frame call order and the handle table.
#include <gtest/gtest.h>

#include <cstring>

#include "action_registry.hpp"
#include "handles.hpp"
#include "interaction_profiles.hpp"
#include "path_table.hpp"
#include "performance_metrics.hpp"
#include "session_state.hpp"

namespace xrc::openxr {
namespace {

TEST(PathTable, WellFormedPathsFollowTheSpec) {
  EXPECT_TRUE(isWellFormedPath("/user/hand/left"));
  EXPECT_TRUE(isWellFormedPath("/a.b-c_d/0"));
  EXPECT_FALSE(isWellFormedPath(""));
  EXPECT_FALSE(isWellFormedPath("/"));
  EXPECT_FALSE(isWellFormedPath("user/hand"));
  EXPECT_FALSE(isWellFormedPath("/user//hand"));
  EXPECT_FALSE(isWellFormedPath("/user/hand/"));
  EXPECT_FALSE(isWellFormedPath("/User/hand"));
  EXPECT_FALSE(isWellFormedPath("/user/../hand"));
  EXPECT_FALSE(isWellFormedPath("/user/hand left"));
  EXPECT_FALSE(isWellFormedPath("/" + std::string(XR_MAX_PATH_LENGTH, 'a')));
}

TEST(PathTable, InternsStringsAndRejectsUnknownAtoms) {
  PathTable table;
  XrPath a = XR_NULL_PATH, b = XR_NULL_PATH, again = XR_NULL_PATH;
  ASSERT_EQ(table.toPath("/user/hand/left", a), XR_SUCCESS);
  ASSERT_EQ(table.toPath("/user/hand/right", b), XR_SUCCESS);
  ASSERT_EQ(table.toPath("/user/hand/left", again), XR_SUCCESS);
  EXPECT_NE(a, XR_NULL_PATH);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, again);
  std::string text;
  ASSERT_EQ(table.toString(b, text), XR_SUCCESS);
  EXPECT_EQ(text, "/user/hand/right");
  EXPECT_EQ(table.toString(XR_NULL_PATH, text), XR_ERROR_PATH_INVALID);
  EXPECT_EQ(table.toString(b + 100, text), XR_ERROR_PATH_INVALID);
  XrPath bad = 0;
  EXPECT_EQ(table.toPath("no-slash", bad), XR_ERROR_PATH_FORMAT_INVALID);
  EXPECT_EQ(table.find("/never/interned"), XR_NULL_PATH);
}

TEST(InteractionProfiles, OpenXr11ProfilesAndGripSurfaceOnlyForOpenXr11Apps) {
  const char* cosmos = "/interaction_profiles/htc/vive_cosmos_controller";
  EXPECT_FALSE(isKnownInteractionProfile(cosmos, ProfileScope{kApi10, {}}));
  EXPECT_TRUE(isKnownInteractionProfile(cosmos, ProfileScope{kApi11, {}}));
  EXPECT_TRUE(
      isKnownInteractionProfile("/interaction_profiles/meta/touch_plus_controller", {XR_MAKE_VERSION(1, 1, 7), {}}));
  EXPECT_TRUE(isBindingPathOfProfile(cosmos, "/user/hand/left/input/x/click", ProfileScope{kApi11, {}}));
  EXPECT_FALSE(isBindingPathOfProfile(cosmos, "/user/hand/right/input/x/click", ProfileScope{kApi11, {}}));
  EXPECT_TRUE(
      isBindingPathOfProfile(cosmos, "/user/hand/right/input/thumbstick", ProfileScope{kApi11, {}}));  // vector2
  const char* simple = "/interaction_profiles/khr/simple_controller";
  EXPECT_FALSE(isBindingPathOfProfile(simple, "/user/hand/left/input/grip_surface/pose", ProfileScope{kApi10, {}}));
  EXPECT_TRUE(isBindingPathOfProfile(simple, "/user/hand/left/input/grip_surface/pose", ProfileScope{kApi11, {}}));
  // Extension profiles only with their extension.
  const char* gaze = "/interaction_profiles/ext/eye_gaze_interaction";
  EXPECT_FALSE(isKnownInteractionProfile(gaze, ProfileScope{kApi11, {}}));
  const ProfileScope withGaze{kApi10, {"XR_EXT_eye_gaze_interaction"}};
  EXPECT_TRUE(isBindingPathOfProfile(gaze, "/user/eyes_ext/input/gaze_ext/pose", withGaze));
  EXPECT_FALSE(isBindingPathOfProfile(gaze, "/user/hand/left/input/gaze_ext/pose", withGaze));
  EXPECT_FALSE(isKnownInteractionProfile("/interaction_profiles/htc/vive_tracker_htcx", ProfileScope{kApi11, {}}));
  EXPECT_TRUE(apiAtLeast(XR_MAKE_VERSION(1, 1, 0), kApi11));
  EXPECT_FALSE(apiAtLeast(XR_MAKE_VERSION(1, 0, 40), kApi11));
}

TEST(InteractionProfiles, BindingPathsBelongToTheirProfile) {
  const char* simple = "/interaction_profiles/khr/simple_controller";
  const char* touch = "/interaction_profiles/oculus/touch_controller";
  EXPECT_TRUE(isKnownInteractionProfile(simple));
  EXPECT_FALSE(isKnownInteractionProfile("/interaction_profiles/acme/blaster"));
  EXPECT_TRUE(isBindingPathOfProfile(simple, "/user/hand/left/input/select/click"));
  EXPECT_TRUE(isBindingPathOfProfile(simple, "/user/hand/right/output/haptic"));
  // A component without its identifier may be named.
  EXPECT_TRUE(isBindingPathOfProfile(simple, "/user/hand/left/input/select"));
  EXPECT_FALSE(isBindingPathOfProfile(simple, "/user/hand/left/input/trigger/value"));
  EXPECT_FALSE(isBindingPathOfProfile(simple, "/user/head/input/select/click"));
  // Touch controllers: X/Y on the left hand only, A/B on the right.
  EXPECT_TRUE(isBindingPathOfProfile(touch, "/user/hand/left/input/x/click"));
  EXPECT_FALSE(isBindingPathOfProfile(touch, "/user/hand/right/input/x/click"));
  EXPECT_TRUE(isBindingPathOfProfile(touch, "/user/hand/right/input/a/touch"));
  EXPECT_TRUE(isBindingPathOfProfile(touch, "/user/hand/left/input/squeeze/value"));
  EXPECT_TRUE(isTopLevelUserPath("/user/gamepad"));
  EXPECT_FALSE(isTopLevelUserPath("/user/hand"));
}

XrActionSetCreateInfo setInfo(const char* name, const char* localized) {
  XrActionSetCreateInfo info{};
  info.type = XR_TYPE_ACTION_SET_CREATE_INFO;
  std::strncpy(info.actionSetName, name, sizeof info.actionSetName - 1);
  std::strncpy(info.localizedActionSetName, localized, sizeof info.localizedActionSetName - 1);
  return info;
}

XrActionCreateInfo actionInfo(const char* name, const char* localized, XrActionType type,
                              const std::vector<XrPath>& subactions = {}) {
  XrActionCreateInfo info{};
  info.type = XR_TYPE_ACTION_CREATE_INFO;
  std::strncpy(info.actionName, name, sizeof info.actionName - 1);
  std::strncpy(info.localizedActionName, localized, sizeof info.localizedActionName - 1);
  info.actionType = type;
  info.countSubactionPaths = uint32_t(subactions.size());
  info.subactionPaths = subactions.data();
  return info;
}

class ActionRegistryTest : public ::testing::Test {
 protected:
  XrPath path(const char* text) {
    XrPath p = XR_NULL_PATH;
    EXPECT_EQ(paths.toPath(text, p), XR_SUCCESS) << text;
    return p;
  }
  PathTable paths;
  ActionRegistry registry{paths};
};

TEST_F(ActionRegistryTest, NamesAreValidatedAndUnique) {
  std::shared_ptr<ActionSet> set, other;
  ASSERT_EQ(registry.createActionSet(setInfo("gameplay", "Gameplay"), set), XR_SUCCESS);
  EXPECT_EQ(registry.createActionSet(setInfo("gameplay", "Other"), other), XR_ERROR_NAME_DUPLICATED);
  EXPECT_EQ(registry.createActionSet(setInfo("menu", "Gameplay"), other), XR_ERROR_LOCALIZED_NAME_DUPLICATED);
  EXPECT_EQ(registry.createActionSet(setInfo("Bad Name", "Bad"), other), XR_ERROR_PATH_FORMAT_INVALID);
  EXPECT_EQ(registry.createActionSet(setInfo("", "Nameless"), other), XR_ERROR_NAME_INVALID);
  EXPECT_EQ(registry.createActionSet(setInfo("empty", ""), other), XR_ERROR_LOCALIZED_NAME_INVALID);
  // A destroyed set frees its names.
  registry.destroyActionSet(set);
  EXPECT_EQ(registry.createActionSet(setInfo("gameplay", "Gameplay"), other), XR_SUCCESS);

  std::shared_ptr<Action> grab, dup;
  const std::vector<XrPath> hands{path("/user/hand/left"), path("/user/hand/right")};
  ASSERT_EQ(registry.createAction(*other, actionInfo("grab", "Grab", XR_ACTION_TYPE_FLOAT_INPUT, hands), grab),
            XR_SUCCESS);
  EXPECT_EQ(registry.createAction(*other, actionInfo("grab", "Grab 2", XR_ACTION_TYPE_FLOAT_INPUT), dup),
            XR_ERROR_NAME_DUPLICATED);
  EXPECT_EQ(registry.createAction(*other, actionInfo("grab2", "Grab", XR_ACTION_TYPE_FLOAT_INPUT), dup),
            XR_ERROR_LOCALIZED_NAME_DUPLICATED);
  EXPECT_EQ(registry.createAction(*other, actionInfo("", "Nameless", XR_ACTION_TYPE_FLOAT_INPUT), dup),
            XR_ERROR_NAME_INVALID);
  EXPECT_EQ(registry.createAction(*other, actionInfo("Bad Name", "Bad", XR_ACTION_TYPE_FLOAT_INPUT), dup),
            XR_ERROR_PATH_FORMAT_INVALID);
  EXPECT_EQ(registry.createAction(*other, actionInfo("typeless", "T", XrActionType(12345)), dup),
            XR_ERROR_VALIDATION_FAILURE);
  const std::vector<XrPath> notTopLevel{path("/user/hand/left/input")};
  EXPECT_EQ(registry.createAction(*other, actionInfo("sub", "Sub", XR_ACTION_TYPE_BOOLEAN_INPUT, notTopLevel), dup),
            XR_ERROR_PATH_UNSUPPORTED);
  const std::vector<XrPath> twice{hands[0], hands[0]};
  EXPECT_EQ(registry.createAction(*other, actionInfo("twice", "Twice", XR_ACTION_TYPE_BOOLEAN_INPUT, twice), dup),
            XR_ERROR_PATH_UNSUPPORTED);
  const std::vector<XrPath> unknown{XrPath(9999)};
  EXPECT_EQ(registry.createAction(*other, actionInfo("unk", "Unk", XR_ACTION_TYPE_BOOLEAN_INPUT, unknown), dup),
            XR_ERROR_PATH_INVALID);
}

TEST_F(ActionRegistryTest, BindingsAttachmentAndInactiveStates) {
  std::shared_ptr<ActionSet> set;
  ASSERT_EQ(registry.createActionSet(setInfo("gameplay", "Gameplay"), set), XR_SUCCESS);
  const std::vector<XrPath> hands{path("/user/hand/left"), path("/user/hand/right")};
  std::shared_ptr<Action> select, vibrate;
  ASSERT_EQ(registry.createAction(*set, actionInfo("select", "Select", XR_ACTION_TYPE_BOOLEAN_INPUT, hands), select),
            XR_SUCCESS);
  ASSERT_EQ(registry.createAction(*set, actionInfo("buzz", "Buzz", XR_ACTION_TYPE_VIBRATION_OUTPUT), vibrate),
            XR_SUCCESS);
  const XrPath simple = path("/interaction_profiles/khr/simple_controller");
  EXPECT_EQ(registry.suggestBindings(simple, {select.get()}, {path("/user/hand/left/input/select/click")}), XR_SUCCESS);
  EXPECT_EQ(registry.suggestBindings(simple, {select.get()}, {path("/user/hand/left/input/trigger/value")}),
            XR_ERROR_PATH_UNSUPPORTED);
  EXPECT_EQ(registry.suggestBindings(path("/interaction_profiles/acme/blaster"), {select.get()},
                                     {path("/user/hand/left/input/select/click")}),
            XR_ERROR_PATH_UNSUPPORTED);
  EXPECT_EQ(registry.suggestedProfiles(), 1u);

  std::vector<ActionSet*> attached;
  // Not attached yet: queries refuse.
  EXPECT_EQ(registry.checkQuery(attached, *select, XR_ACTION_TYPE_BOOLEAN_INPUT, XR_NULL_PATH),
            XR_ERROR_ACTIONSET_NOT_ATTACHED);
  ASSERT_EQ(registry.attach({set.get()}, attached), XR_SUCCESS);
  EXPECT_EQ(registry.attach({set.get()}, attached), XR_ERROR_ACTIONSETS_ALREADY_ATTACHED);
  // Attached sets are frozen.
  std::shared_ptr<Action> late;
  EXPECT_EQ(registry.createAction(*set, actionInfo("late", "Late", XR_ACTION_TYPE_BOOLEAN_INPUT), late),
            XR_ERROR_ACTIONSETS_ALREADY_ATTACHED);
  EXPECT_EQ(registry.suggestBindings(simple, {select.get()}, {path("/user/hand/right/input/select/click")}),
            XR_ERROR_ACTIONSETS_ALREADY_ATTACHED);
  // Queries: type and subaction path rules.
  EXPECT_EQ(registry.checkQuery(attached, *select, XR_ACTION_TYPE_BOOLEAN_INPUT, hands[1]), XR_SUCCESS);
  EXPECT_EQ(registry.checkQuery(attached, *select, XR_ACTION_TYPE_FLOAT_INPUT, XR_NULL_PATH),
            XR_ERROR_ACTION_TYPE_MISMATCH);
  EXPECT_EQ(registry.checkQuery(attached, *select, XR_ACTION_TYPE_BOOLEAN_INPUT, path("/user/head")),
            XR_ERROR_PATH_UNSUPPORTED);
  EXPECT_EQ(registry.checkQuery(attached, *vibrate, XR_ACTION_TYPE_VIBRATION_OUTPUT, hands[0]),
            XR_ERROR_PATH_UNSUPPORTED);
  EXPECT_EQ(registry.checkSync(attached, *set, hands[0]), XR_SUCCESS);
  EXPECT_EQ(registry.checkSync(attached, *set, path("/user/gamepad")), XR_ERROR_PATH_UNSUPPORTED);
  std::shared_ptr<ActionSet> loose;
  ASSERT_EQ(registry.createActionSet(setInfo("loose", "Loose"), loose), XR_SUCCESS);
  EXPECT_EQ(registry.checkSync(attached, *loose, XR_NULL_PATH), XR_ERROR_ACTIONSET_NOT_ATTACHED);
}

TEST(SessionLifecycle, RunsThroughTheSpecStatesInOrder) {
  SessionLifecycle s;
  StateList seen;
  s.created(seen);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_IDLE, XR_SESSION_STATE_READY}));
  EXPECT_EQ(s.end(seen), XR_ERROR_SESSION_NOT_RUNNING);
  EXPECT_EQ(s.requestExit(seen), XR_ERROR_SESSION_NOT_RUNNING);
  ASSERT_EQ(s.begin(), XR_SUCCESS);
  EXPECT_EQ(s.begin(), XR_ERROR_SESSION_RUNNING);
  seen.clear();
  s.frameWaited(true, true, seen);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_VISIBLE, XR_SESSION_STATE_FOCUSED}));
  seen.clear();
  s.frameWaited(true, true, seen);
  EXPECT_TRUE(seen.empty());
  s.frameWaited(false, false, seen);  // hidden: down the ladder one state at a time
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_VISIBLE, XR_SESSION_STATE_SYNCHRONIZED}));
  seen.clear();
  s.frameWaited(true, false, seen);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_VISIBLE}));
  EXPECT_EQ(s.end(seen), XR_ERROR_SESSION_NOT_STOPPING);
  seen.clear();
  ASSERT_EQ(s.requestExit(seen), XR_SUCCESS);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_STOPPING}));
  seen.clear();
  s.frameWaited(true, true, seen);  // after an exit request only down
  EXPECT_TRUE(seen.empty());
  ASSERT_EQ(s.end(seen), XR_SUCCESS);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_IDLE, XR_SESSION_STATE_EXITING}));
  EXPECT_FALSE(s.running());
}

TEST(PerformanceMetrics, AppFrameTimeAndCpuUtilization) {
  PerformanceMetrics m;
  EXPECT_FALSE(m.appCpuFrameMs());
  m.frameEnded(5'000'000);  // an end without a begin measures nothing
  EXPECT_FALSE(m.appCpuFrameMs());
  m.frameBegun(10'000'000);
  m.frameEnded(13'500'000);
  ASSERT_TRUE(m.appCpuFrameMs());
  EXPECT_FLOAT_EQ(*m.appCpuFrameMs(), 3.5f);
  EXPECT_FLOAT_EQ(*cpuUtilization({100, 400}, {150, 500}), 50.f);
  EXPECT_FALSE(cpuUtilization({100, 400}, {100, 400}));  // no time passed
  EXPECT_TRUE(readCpuTimes());                           // Linux: /proc/stat
}

TEST(SessionLifecycle, ExitBeforeTheFirstFramePassesThroughSynchronized) {
  SessionLifecycle s;
  StateList seen;
  s.created(seen);
  ASSERT_EQ(s.begin(), XR_SUCCESS);
  seen.clear();
  ASSERT_EQ(s.requestExit(seen), XR_SUCCESS);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_STOPPING}));
}

TEST(SessionLifecycle, DaemonShutdownStopsTheSessionLikeAnExitRequest) {
  SessionLifecycle s;
  StateList seen;
  s.created(seen);
  seen.clear();
  s.daemonStopping(seen);  // not running: nothing to stop
  EXPECT_TRUE(seen.empty());
  ASSERT_EQ(s.begin(), XR_SUCCESS);
  s.frameWaited(true, true, seen);
  seen.clear();
  s.daemonStopping(seen);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_VISIBLE, XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_STOPPING}));
  seen.clear();
  s.daemonStopping(seen);  // once
  EXPECT_TRUE(seen.empty());
  ASSERT_EQ(s.end(seen), XR_SUCCESS);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_IDLE, XR_SESSION_STATE_EXITING}));
}

TEST(SessionLifecycle, LossIsReportedOnceAndEndsTheLifecycle) {
  SessionLifecycle s;
  StateList seen;
  s.created(seen);
  ASSERT_EQ(s.begin(), XR_SUCCESS);
  seen.clear();
  s.lose(seen);
  s.lose(seen);
  EXPECT_EQ(seen, (StateList{XR_SESSION_STATE_LOSS_PENDING}));
  EXPECT_EQ(s.requestExit(seen), XR_ERROR_SESSION_LOST);
  EXPECT_EQ(s.end(seen), XR_ERROR_SESSION_LOST);
}

TEST(FrameOrder, WaitBeginEndAndDiscards) {
  FrameOrder f;
  uint64_t id = 0;
  EXPECT_EQ(f.begin(id), XR_ERROR_CALL_ORDER_INVALID);
  EXPECT_EQ(f.end(id), XR_ERROR_CALL_ORDER_INVALID);
  EXPECT_FALSE(f.waitedNotBegun());
  f.waited(1, 100);
  EXPECT_TRUE(f.waitedNotBegun());
  ASSERT_EQ(f.begin(id), XR_SUCCESS);
  EXPECT_FALSE(f.waitedNotBegun());
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(f.begin(id), XR_ERROR_CALL_ORDER_INVALID);  // no new wait
  f.waited(2, 200);
  EXPECT_EQ(f.begin(id), XR_FRAME_DISCARDED);  // frame 1 never ended
  EXPECT_EQ(id, 2u);
  ASSERT_EQ(f.end(id), XR_SUCCESS);
  EXPECT_EQ(id, 2u);
  EXPECT_EQ(f.end(id), XR_ERROR_CALL_ORDER_INVALID);
}

struct Widget {
  static constexpr HandleType kHandleType = HandleType::space;
  int value = 7;
};
struct Gadget {
  static constexpr HandleType kHandleType = HandleType::swapchain;
};

TEST(Handles, StaleForgedAndMistypedHandlesAreRefused) {
  auto& handles = Handles::get();
  const uint64_t w = handles.add(std::make_shared<Widget>());
  ASSERT_NE(handles.find<Widget>(w), nullptr);
  EXPECT_EQ(handles.find<Widget>(w)->value, 7);
  EXPECT_EQ(handles.find<Gadget>(w), nullptr);         // right value, wrong type
  EXPECT_EQ(handles.find<Widget>(w + 1000), nullptr);  // never issued
  handles.remove(w);
  EXPECT_EQ(handles.find<Widget>(w), nullptr);  // destroyed
  const uint64_t again = handles.add(std::make_shared<Widget>());
  EXPECT_NE(again, w);  // values are not reused
  handles.remove(again);
}

}  // namespace
}  // namespace xrc::openxr
