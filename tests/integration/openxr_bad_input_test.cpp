// The runtime face through the real OpenXR loader, driven the way a careless app would: each bad
// call gets the error the spec names, and the session keeps working afterwards.
#include <dlfcn.h>
#include <gtest/gtest.h>

// OpenXR's idiom `XrThing thing{XR_TYPE_THING};` value-initialises the rest on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define XR_USE_GRAPHICS_API_VULKAN 1
#include <vulkan/vulkan.h>
// openxr_platform.h needs the Vulkan types first.
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "harness.hpp"
#include "loader_interface.hpp"
#include "openxr_session_fixture.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

// OpenXR 1.1 values the 1.0.20 headers lack (registry values; client-lib/openxr/openxr_1_1.hpp).
constexpr auto kLocalFloor = XrReferenceSpaceType(1000426000);
constexpr auto kTypeSpacesLocateInfo = XrStructureType(1000471000);
constexpr auto kTypeSpaceLocations = XrStructureType(1000471001);
struct SpacesLocateInfo {
  XrStructureType type;
  const void* next;
  XrSpace baseSpace;
  XrTime time;
  uint32_t spaceCount;
  const XrSpace* spaces;
};
struct SpaceLocationData {
  XrSpaceLocationFlags locationFlags;
  XrPosef pose;
};
struct SpaceLocations {
  XrStructureType type;
  void* next;
  uint32_t locationCount;
  SpaceLocationData* locations;
};
using PFN_LocateSpaces = XrResult(XRAPI_PTR*)(XrSession, const SpacesLocateInfo*, SpaceLocations*);

// XR_EXTX_overlay: an overlay session is visible over the primary app but never focused, and
// the daemon lists it as an overlay at its placement. Out-of-range placements are refused.
TEST_F(OpenXrSession, OverlaySessionIsVisibleButNotFocused) {
  XrSessionCreateInfoOverlayEXTX overlay{XR_TYPE_SESSION_CREATE_INFO_OVERLAY_EXTX, nullptr, 0, 5000};
  {
    ASSERT_NO_FATAL_FAILURE(createVulkan());
    XrGraphicsBindingVulkan2KHR binding{
        XR_TYPE_GRAPHICS_BINDING_VULKAN2_KHR, &overlay, vkInstance_, physical_, device_, 0, 0};
    XrSessionCreateInfo info{XR_TYPE_SESSION_CREATE_INFO, &binding, 0, system_};
    XrSession session = XR_NULL_HANDLE;
    EXPECT_EQ(xrCreateSession(instance_, &info, &session), XR_ERROR_VALIDATION_FAILURE);
    vkDestroyDevice(device_, nullptr);
    vkDestroyInstance(vkInstance_, nullptr);
    device_ = VK_NULL_HANDLE;
    vkInstance_ = VK_NULL_HANDLE;
  }
  overlay.sessionLayersPlacement = 7;
  ASSERT_NO_FATAL_FAILURE(createSession(&overlay));
  auto control = daemon_.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status);
  ASSERT_EQ(status.value().clients.size(), 1u);
  EXPECT_EQ(status.value().clients[0].role, control::SessionRole::overlay);
  EXPECT_EQ(status.value().clients[0].overlayPlacement, 7u);
  EXPECT_EQ(status.value().primaryClientId, 0u);

  ASSERT_NO_FATAL_FAILURE(beginSession());
  for (int i = 0; i < 3; ++i) {
    XrFrameState state{XR_TYPE_FRAME_STATE};
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    EXPECT_TRUE(state.shouldRender);
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_EQ(endFrame(state.predictedDisplayTime, {}), XR_SUCCESS);
  }
  const std::vector<XrSessionState> states = pollSessionStates();
  const std::vector<XrSessionState> want{XR_SESSION_STATE_IDLE, XR_SESSION_STATE_READY, XR_SESSION_STATE_SYNCHRONIZED,
                                         XR_SESSION_STATE_VISIBLE};
  EXPECT_EQ(states, want);
}

TEST_F(OpenXrSession, InstanceLevelMistakes) {
  XrPath path = XR_NULL_PATH;
  EXPECT_EQ(xrStringToPath(instance_, "/user//hand", &path), XR_ERROR_PATH_FORMAT_INVALID);
  char buffer[64];
  uint32_t count = 0;
  EXPECT_EQ(xrPathToString(instance_, 4242, sizeof buffer, &count, buffer), XR_ERROR_PATH_INVALID);
  XrSystemGetInfo handheld{XR_TYPE_SYSTEM_GET_INFO, nullptr, XR_FORM_FACTOR_HANDHELD_DISPLAY};
  XrSystemId system = 0;
  EXPECT_EQ(xrGetSystem(instance_, &handheld, &system), XR_ERROR_FORM_FACTOR_UNSUPPORTED);
  XrSystemProperties props{XR_TYPE_SYSTEM_PROPERTIES};
  EXPECT_EQ(xrGetSystemProperties(instance_, system_ + 1, &props), XR_ERROR_SYSTEM_INVALID);
  // Sessions need the graphics requirements queried first.
  XrSessionCreateInfo info{XR_TYPE_SESSION_CREATE_INFO, nullptr, 0, system_};
  XrSession session = XR_NULL_HANDLE;
  EXPECT_EQ(xrCreateSession(instance_, &info, &session), XR_ERROR_GRAPHICS_REQUIREMENTS_CALL_MISSING);
  ASSERT_NO_FATAL_FAILURE(createVulkan());
  EXPECT_EQ(xrCreateSession(instance_, &info, &session), XR_ERROR_GRAPHICS_DEVICE_INVALID);  // no binding
  // An extension function of an extension not enabled is not handed out.
  PFN_xrVoidFunction f = nullptr;
  EXPECT_EQ(xrGetInstanceProcAddr(instance_, "xrConvertTimespecTimeToTimeKHR", &f), XR_ERROR_FUNCTION_UNSUPPORTED);
}

TEST(OpenXrInstance, UnknownExtensionsAreRefused) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  ::setenv("XR_RUNTIME_JSON", binary("XRC_OPENXR_MANIFEST").c_str(), 1);
  ::setenv("XR_COMPOSITOR_SOCKET", daemon.socket().c_str(), 1);
  XrInstance instance = XR_NULL_HANDLE;  // (the loader allows one instance at a time)
  EXPECT_EQ(createInstance({"XR_ACME_teleporter"}, &instance), XR_ERROR_EXTENSION_NOT_PRESENT);
}

// xr-compositorctl set-active-runtime: the loader then finds us without XR_RUNTIME_JSON; another
// runtime's choice is not clobbered without --force; unset removes only ours.
TEST(OpenXrInstance, SetActiveRuntimeMakesTheLoaderFindUs) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  const std::string config = dir.path + "/config";
  const std::string active = config + "/openxr/1/active_runtime.json";
  auto ctl = [&](const std::vector<std::string>& args) { return runCtl(dir, args, {{"XDG_CONFIG_HOME", config}}); };
  // Another runtime is the user's choice: refused, and the file is left alone.
  const std::string other = dir.path + "/monado.json";
  std::ofstream(other)
      << R"({"file_format_version": "1.0.0", "runtime": {"name": "Monado", "library_path": "/nope.so"}})";
  std::filesystem::create_directories(config + "/openxr/1");
  std::filesystem::create_symlink(other, active);
  auto refused = ctl({"set-active-runtime", "--manifest", binary("XRC_OPENXR_MANIFEST")});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.output.find("belongs to another runtime ('Monado'"), std::string::npos) << refused.output;
  EXPECT_EQ(std::filesystem::read_symlink(active), other);
  EXPECT_EQ(ctl({"unset-active-runtime", "--manifest", binary("XRC_OPENXR_MANIFEST")}).exitCode, 1);
  // Forced: ours now.
  auto forced = ctl({"set-active-runtime", "--force", "--manifest", binary("XRC_OPENXR_MANIFEST")});
  ASSERT_EQ(forced.exitCode, 0) << forced.output;

  ::unsetenv("XR_RUNTIME_JSON");
  ::setenv("XDG_CONFIG_HOME", config.c_str(), 1);
  ::setenv("XR_COMPOSITOR_SOCKET", daemon.socket().c_str(), 1);
  XrInstance instance = XR_NULL_HANDLE;
  ASSERT_EQ(createInstance({}, &instance), XR_SUCCESS);
  XrInstanceProperties props{XR_TYPE_INSTANCE_PROPERTIES};
  ASSERT_EQ(xrGetInstanceProperties(instance, &props), XR_SUCCESS);
  EXPECT_STREQ(props.runtimeName, "xr-compositor");
  xrDestroyInstance(instance);
  ::unsetenv("XDG_CONFIG_HOME");

  auto unset = ctl({"unset-active-runtime", "--manifest", binary("XRC_OPENXR_MANIFEST")});
  EXPECT_EQ(unset.exitCode, 0) << unset.output;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(active)));
}

TEST(OpenXrInstance, CreationFailsClearlyWithoutTheDaemon) {
  TempDir dir;
  ::setenv("XR_RUNTIME_JSON", binary("XRC_OPENXR_MANIFEST").c_str(), 1);
  ::setenv("XR_COMPOSITOR_SOCKET", (dir.path + "/nobody-listens.sock").c_str(), 1);
  XrInstance instance = XR_NULL_HANDLE;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(createInstance({}, &instance), XR_ERROR_RUNTIME_UNAVAILABLE);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // a clear failure, not a hang
}

TEST_F(OpenXrSession, SessionAndFrameCallOrder) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  EXPECT_EQ(xrWaitFrame(session_, nullptr, &state), XR_ERROR_SESSION_NOT_RUNNING);
  XrSessionBeginInfo mono{XR_TYPE_SESSION_BEGIN_INFO, nullptr, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_MONO};
  EXPECT_EQ(xrBeginSession(session_, &mono), XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED);
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrSessionBeginInfo stereo{XR_TYPE_SESSION_BEGIN_INFO, nullptr, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
  EXPECT_EQ(xrBeginSession(session_, &stereo), XR_ERROR_SESSION_RUNNING);
  EXPECT_EQ(xrEndSession(session_), XR_ERROR_SESSION_NOT_STOPPING);
  EXPECT_EQ(xrBeginFrame(session_, nullptr), XR_ERROR_CALL_ORDER_INVALID);
  EXPECT_EQ(endFrame(1, {}), XR_ERROR_CALL_ORDER_INVALID);

  // Image order: wait and release need an acquired, then a waited image.
  XrSwapchainImageWaitInfo wait{XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO, nullptr, 1000000000};
  EXPECT_EQ(xrWaitSwapchainImage(swapchain_, &wait), XR_ERROR_CALL_ORDER_INVALID);
  EXPECT_EQ(xrReleaseSwapchainImage(swapchain_, nullptr), XR_ERROR_CALL_ORDER_INVALID);

  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  EXPECT_GT(state.predictedDisplayTime, 0);
  EXPECT_GT(state.predictedDisplayPeriod, 0);
  ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  EXPECT_EQ(xrBeginFrame(session_, nullptr), XR_FRAME_DISCARDED);  // the first frame never ended
  EXPECT_EQ(endFrame(state.predictedDisplayTime, {}), XR_SUCCESS);

  // Shutdown as the spec orders it, with the state events to show for it.
  ASSERT_EQ(xrRequestExitSession(session_), XR_SUCCESS);
  ASSERT_EQ(xrEndSession(session_), XR_SUCCESS);
  const std::vector<XrSessionState> states = pollSessionStates();
  const std::vector<XrSessionState> want{
      XR_SESSION_STATE_IDLE,    XR_SESSION_STATE_READY,   XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_VISIBLE,
      XR_SESSION_STATE_FOCUSED, XR_SESSION_STATE_VISIBLE, XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_STOPPING,
      XR_SESSION_STATE_IDLE,    XR_SESSION_STATE_EXITING};
  EXPECT_EQ(states, want);
}

TEST_F(OpenXrSession, BadLayersAreRefusedAndTheSessionCarriesOn) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
  XrCompositionLayerProjectionView views[2] = {view(0, 32), view(32, 32)};
  XrCompositionLayerProjection projection{XR_TYPE_COMPOSITION_LAYER_PROJECTION, nullptr, 0, local_, 2, views};
  auto* layer = reinterpret_cast<const XrCompositionLayerBaseHeader*>(&projection);
  const XrTime t = state.predictedDisplayTime;
  // Nothing was ever released into the swapchain.
  EXPECT_EQ(endFrame(t, {layer}), XR_ERROR_LAYER_INVALID);
  ASSERT_NO_FATAL_FAILURE(cycleImage());
  EXPECT_EQ(endFrame(0, {layer}), XR_ERROR_TIME_INVALID);
  EXPECT_EQ(endFrame(t, {layer}, XR_ENVIRONMENT_BLEND_MODE_ADDITIVE), XR_ERROR_ENVIRONMENT_BLEND_MODE_UNSUPPORTED);
  EXPECT_EQ(endFrame(t, std::vector<const XrCompositionLayerBaseHeader*>(17, layer)), XR_ERROR_LAYER_LIMIT_EXCEEDED);
  EXPECT_EQ(endFrame(t, {nullptr}), XR_ERROR_LAYER_INVALID);
  views[1] = view(48, 32);  // 48 + 32 > 64
  EXPECT_EQ(endFrame(t, {layer}), XR_ERROR_SWAPCHAIN_RECT_INVALID);
  views[1] = view(32, 32);
  views[0].pose.orientation = {0, 0, 0, 0};
  EXPECT_EQ(endFrame(t, {layer}), XR_ERROR_POSE_INVALID);
  views[0].pose.orientation = {0, 0, 0, 1};
  projection.viewCount = 1;
  EXPECT_EQ(endFrame(t, {layer}), XR_ERROR_VALIDATION_FAILURE);
  projection.viewCount = 2;
  XrSpace gone = XR_NULL_HANDLE;
  XrReferenceSpaceCreateInfo spaceInfo{
      XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, XR_REFERENCE_SPACE_TYPE_STAGE, {{0, 0, 0, 1}, {0, 0, 0}}};
  ASSERT_EQ(xrCreateReferenceSpace(session_, &spaceInfo, &gone), XR_SUCCESS);
  ASSERT_EQ(xrDestroySpace(gone), XR_SUCCESS);
  projection.space = gone;
  EXPECT_EQ(endFrame(t, {layer}), XR_ERROR_HANDLE_INVALID);
  projection.space = local_;
  XrCompositionLayerQuad quad{XR_TYPE_COMPOSITION_LAYER_QUAD};
  quad.space = local_;
  quad.eyeVisibility = XR_EYE_VISIBILITY_BOTH;
  quad.subImage = view().subImage;
  quad.pose = {{0, 0, 0, 1}, {0, 0, -1}};
  quad.size = {std::nanf(""), 1};
  EXPECT_EQ(endFrame(t, {reinterpret_cast<const XrCompositionLayerBaseHeader*>(&quad)}), XR_ERROR_VALIDATION_FAILURE);

  // Every refusal left the frame begun: the good frame goes through and reaches the daemon.
  ASSERT_EQ(endFrame(t, {layer}), XR_SUCCESS);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_NO_FATAL_FAILURE(cycleImage());
    ASSERT_EQ(endFrame(state.predictedDisplayTime, {layer}), XR_SUCCESS);
  }
  EXPECT_TRUE(daemon_.waitForStatus(
      [](const control::DaemonStatus& s) { return s.clients.size() == 1 && s.clients[0].framesSubmitted == 6; }, 5s));
}

TEST_F(OpenXrSession, SpacesAndViewsFollowTheDaemonsSystem) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  XrSpace stage = XR_NULL_HANDLE, view = XR_NULL_HANDLE;
  XrReferenceSpaceCreateInfo info{
      XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, XR_REFERENCE_SPACE_TYPE_STAGE, {{0, 0, 0, 1}, {0, 0, 0}}};
  ASSERT_EQ(xrCreateReferenceSpace(session_, &info, &stage), XR_SUCCESS);
  info.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_VIEW;
  ASSERT_EQ(xrCreateReferenceSpace(session_, &info, &view), XR_SUCCESS);
  info.poseInReferenceSpace.orientation = {0, 0, 0, 2};
  XrSpace bad = XR_NULL_HANDLE;
  EXPECT_EQ(xrCreateReferenceSpace(session_, &info, &bad), XR_ERROR_POSE_INVALID);

  // The headless head rests at LOCAL's origin, 1.6 m above the stage floor.
  XrSpaceLocation location{XR_TYPE_SPACE_LOCATION};
  ASSERT_EQ(xrLocateSpace(view, stage, state.predictedDisplayTime, &location), XR_SUCCESS);
  EXPECT_NEAR(location.pose.position.y, 1.6f, 1e-5);
  EXPECT_TRUE(location.locationFlags & XR_SPACE_LOCATION_POSITION_VALID_BIT);
  ASSERT_EQ(xrLocateSpace(view, local_, state.predictedDisplayTime, &location), XR_SUCCESS);
  EXPECT_NEAR(location.pose.position.y, 0.f, 1e-5);
  EXPECT_EQ(xrLocateSpace(view, stage, 0, &location), XR_ERROR_TIME_INVALID);
  // A time no xrWaitFrame answered is asked of the daemon.
  ASSERT_EQ(xrLocateSpace(view, stage, state.predictedDisplayTime + 12345, &location), XR_SUCCESS);
  EXPECT_NEAR(location.pose.position.y, 1.6f, 1e-5);

  XrViewLocateInfo locate{XR_TYPE_VIEW_LOCATE_INFO, nullptr, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO,
                          state.predictedDisplayTime, local_};
  XrViewState viewState{XR_TYPE_VIEW_STATE};
  XrView views[2] = {{XR_TYPE_VIEW}, {XR_TYPE_VIEW}};
  uint32_t count = 0;
  EXPECT_EQ(xrLocateViews(session_, &locate, &viewState, 1, &count, views), XR_ERROR_SIZE_INSUFFICIENT);
  ASSERT_EQ(xrLocateViews(session_, &locate, &viewState, 2, &count, views), XR_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_NEAR(views[1].pose.position.x - views[0].pose.position.x, 0.063f, 1e-5);  // the IPD
  EXPECT_LT(views[0].fov.angleLeft, 0.f);
  EXPECT_GT(views[0].fov.angleRight, 0.f);

  XrExtent2Df bounds{};
  EXPECT_EQ(xrGetReferenceSpaceBoundsRect(session_, XR_REFERENCE_SPACE_TYPE_STAGE, &bounds), XR_SUCCESS);
  EXPECT_GT(bounds.width, 0.f);
  EXPECT_EQ(xrGetReferenceSpaceBoundsRect(session_, XR_REFERENCE_SPACE_TYPE_LOCAL, &bounds),
            XR_SPACE_BOUNDS_UNAVAILABLE);
  ASSERT_EQ(xrDestroySpace(view), XR_SUCCESS);
  EXPECT_EQ(xrLocateSpace(view, stage, state.predictedDisplayTime, &location), XR_ERROR_HANDLE_INVALID);
}

// A recenter on the daemon reaches the app as OpenXR's reference space change for LOCAL, at the
// display time of the frame that first carries it, once.
TEST_F(OpenXrSession, RecenterIsAReferenceSpaceChangeOfLocal) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  auto control = daemon_.control();
  ASSERT_TRUE(control);
  ASSERT_TRUE(control->recenter());

  std::vector<XrEventDataReferenceSpaceChangePending> changes;
  for (int frame = 0; frame < 3; ++frame) {
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_EQ(endFrame(state.predictedDisplayTime, {}), XR_SUCCESS);
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    XrEventDataBuffer event{XR_TYPE_EVENT_DATA_BUFFER};
    while (xrPollEvent(instance_, &event) == XR_SUCCESS) {
      if (event.type == XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING) {
        changes.push_back(reinterpret_cast<XrEventDataReferenceSpaceChangePending&>(event));
        if (changes.size() == 1) {
          EXPECT_EQ(changes[0].changeTime, state.predictedDisplayTime);
        }
      }
      event = {XR_TYPE_EVENT_DATA_BUFFER};
    }
  }
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].session, session_);
  EXPECT_EQ(changes[0].referenceSpaceType, XR_REFERENCE_SPACE_TYPE_LOCAL);
  EXPECT_TRUE(changes[0].poseValid);
  // The still head: LOCAL recentred onto itself.
  EXPECT_NEAR(changes[0].poseInPreviousSpace.orientation.w, 1.f, 1e-5);
  EXPECT_NEAR(changes[0].poseInPreviousSpace.position.y, 0.f, 1e-5);
}

// The common engine split: xrWaitFrame on a simulation thread, rendering (begin, swapchain,
// end) on a render thread, the two overlapping by one frame.
TEST_F(OpenXrSession, FrameLoopSplitAcrossThreads) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  constexpr int kFrames = 60;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<XrFrameState> waited;  // handed from the simulation to the render thread
  int begun = 0;
  std::vector<XrResult> failures;
  auto fail = [&](XrResult r) {
    std::lock_guard<std::mutex> lock(mutex);
    failures.push_back(r);
  };
  std::thread simulation([&] {
    for (int i = 0; i < kFrames; ++i) {
      {
        // The next xrWaitFrame may come once the previous frame was begun.
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return begun == i; });
      }
      XrFrameState state{XR_TYPE_FRAME_STATE};
      if (XrResult r = xrWaitFrame(session_, nullptr, &state); r != XR_SUCCESS) fail(r);
      std::lock_guard<std::mutex> lock(mutex);
      waited.push_back(state);
      changed.notify_all();
    }
  });
  std::thread render([&] {
    XrCompositionLayerProjectionView views[2] = {view(0, 32), view(32, 32)};
    XrCompositionLayerProjection projection{XR_TYPE_COMPOSITION_LAYER_PROJECTION, nullptr, 0, local_, 2, views};
    auto* layer = reinterpret_cast<const XrCompositionLayerBaseHeader*>(&projection);
    for (int i = 0; i < kFrames; ++i) {
      XrFrameState state;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return int(waited.size()) > i; });
        state = waited[size_t(i)];
      }
      if (XrResult r = xrBeginFrame(session_, nullptr); r != XR_SUCCESS) fail(r);
      {
        std::lock_guard<std::mutex> lock(mutex);
        begun = i + 1;
        changed.notify_all();
      }
      uint32_t index = 0;
      if (XrResult r = xrAcquireSwapchainImage(swapchain_, nullptr, &index); r != XR_SUCCESS) fail(r);
      XrSwapchainImageWaitInfo wait{XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO, nullptr, XR_INFINITE_DURATION};
      if (XrResult r = xrWaitSwapchainImage(swapchain_, &wait); r != XR_SUCCESS) fail(r);
      if (XrResult r = xrReleaseSwapchainImage(swapchain_, nullptr); r != XR_SUCCESS) fail(r);
      if (XrResult r = endFrame(state.predictedDisplayTime, {layer}); r != XR_SUCCESS) fail(r);
    }
  });
  simulation.join();
  render.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " calls failed, first: " << failures.front();
  EXPECT_TRUE(daemon_.waitForStatus(
      [](const control::DaemonStatus& s) {
        return s.clients.size() == 1 && s.clients[0].framesSubmitted == uint64_t(kFrames);
      },
      5s));
}

TEST_F(OpenXrSession, SecondWaitFrameWaitsForTheBeginOfTheFirst) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  std::atomic<bool> begun{false};
  std::thread render([&] {
    std::this_thread::sleep_for(300ms);
    begun = true;
    EXPECT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
  });
  XrFrameState next{XR_TYPE_FRAME_STATE};
  EXPECT_EQ(xrWaitFrame(session_, nullptr, &next), XR_SUCCESS);
  EXPECT_TRUE(begun.load()) << "xrWaitFrame returned before the previous frame's xrBeginFrame";
  EXPECT_GT(next.predictedDisplayTime, state.predictedDisplayTime);
  render.join();
}

// Bound only to a device the display does not have (the headless display's simulated controllers
// are simple controllers): the action is inactive, nothing is bound, no profile is current.
TEST_F(OpenXrSession, ActionsBoundToADeviceTheDisplayLacksAreInactive) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  XrActionSetCreateInfo setInfo{XR_TYPE_ACTION_SET_CREATE_INFO};
  std::strcpy(setInfo.actionSetName, "gameplay");
  std::strcpy(setInfo.localizedActionSetName, "Gameplay");
  XrActionSet set = XR_NULL_HANDLE;
  ASSERT_EQ(xrCreateActionSet(instance_, &setInfo, &set), XR_SUCCESS);
  XrPath left = XR_NULL_PATH, select = XR_NULL_PATH, simple = XR_NULL_PATH;
  ASSERT_EQ(xrStringToPath(instance_, "/user/hand/left", &left), XR_SUCCESS);
  ASSERT_EQ(xrStringToPath(instance_, "/user/hand/left/input/trigger/click", &select), XR_SUCCESS);
  ASSERT_EQ(xrStringToPath(instance_, "/interaction_profiles/htc/vive_controller", &simple), XR_SUCCESS);
  XrActionCreateInfo actionInfo{XR_TYPE_ACTION_CREATE_INFO};
  std::strcpy(actionInfo.actionName, "select");
  std::strcpy(actionInfo.localizedActionName, "Select");
  actionInfo.actionType = XR_ACTION_TYPE_BOOLEAN_INPUT;
  actionInfo.countSubactionPaths = 1;
  actionInfo.subactionPaths = &left;
  XrAction action = XR_NULL_HANDLE;
  ASSERT_EQ(xrCreateAction(set, &actionInfo, &action), XR_SUCCESS);
  XrActionSuggestedBinding binding{action, select};
  XrInteractionProfileSuggestedBinding suggested{XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING, nullptr, simple, 1,
                                                 &binding};
  ASSERT_EQ(xrSuggestInteractionProfileBindings(instance_, &suggested), XR_SUCCESS);
  XrActionStateGetInfo get{XR_TYPE_ACTION_STATE_GET_INFO, nullptr, action, XR_NULL_PATH};
  XrActionStateBoolean boolean{XR_TYPE_ACTION_STATE_BOOLEAN};
  EXPECT_EQ(xrGetActionStateBoolean(session_, &get, &boolean), XR_ERROR_ACTIONSET_NOT_ATTACHED);
  XrSessionActionSetsAttachInfo attach{XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO, nullptr, 1, &set};
  ASSERT_EQ(xrAttachSessionActionSets(session_, &attach), XR_SUCCESS);
  EXPECT_EQ(xrAttachSessionActionSets(session_, &attach), XR_ERROR_ACTIONSETS_ALREADY_ATTACHED);
  XrActiveActionSet active{set, XR_NULL_PATH};
  XrActionsSyncInfo sync{XR_TYPE_ACTIONS_SYNC_INFO, nullptr, 1, &active};
  EXPECT_EQ(xrSyncActions(session_, &sync), XR_SESSION_NOT_FOCUSED);  // not running yet
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  EXPECT_EQ(xrSyncActions(session_, &sync), XR_SUCCESS);
  boolean.isActive = XR_TRUE;
  ASSERT_EQ(xrGetActionStateBoolean(session_, &get, &boolean), XR_SUCCESS);
  EXPECT_EQ(boolean.isActive, XR_FALSE);
  XrActionStateFloat floating{XR_TYPE_ACTION_STATE_FLOAT};
  EXPECT_EQ(xrGetActionStateFloat(session_, &get, &floating), XR_ERROR_ACTION_TYPE_MISMATCH);
  XrBoundSourcesForActionEnumerateInfo sources{XR_TYPE_BOUND_SOURCES_FOR_ACTION_ENUMERATE_INFO, nullptr, action};
  uint32_t count = 99;
  ASSERT_EQ(xrEnumerateBoundSourcesForAction(session_, &sources, 0, &count, nullptr), XR_SUCCESS);
  EXPECT_EQ(count, 0u);
  XrInteractionProfileState profile{XR_TYPE_INTERACTION_PROFILE_STATE};
  ASSERT_EQ(xrGetCurrentInteractionProfile(session_, left, &profile), XR_SUCCESS);
  EXPECT_EQ(profile.interactionProfile, XR_NULL_PATH);
  ASSERT_EQ(xrDestroyActionSet(set), XR_SUCCESS);
  EXPECT_EQ(xrGetActionStateBoolean(session_, &get, &boolean), XR_ERROR_HANDLE_INVALID);
}

}  // namespace
}  // namespace xrc::test

namespace xrc::test {
namespace {

// What OpenXR 1.1 made core, as the extensions it came from (Debian's 1.0 loader refuses 1.1
// apps; OpenXrRuntimeDirect checks the 1.1 gating, the conformance stage runs 1.1 apps).
class OpenXrExtensionSession : public OpenXrSession {
 protected:
  std::vector<const char*> moreExtensions() const override {
    return {"XR_EXT_local_floor",
            "XR_KHR_locate_spaces",
            XR_KHR_VISIBILITY_MASK_EXTENSION_NAME,
            "XR_META_headset_id",
            "XR_EXT_user_presence",
            XR_EXT_HAND_TRACKING_EXTENSION_NAME,
            "XR_META_performance_metrics",
            XR_KHR_COMPOSITION_LAYER_CYLINDER_EXTENSION_NAME,
            XR_KHR_COMPOSITION_LAYER_EQUIRECT_EXTENSION_NAME,
            XR_KHR_COMPOSITION_LAYER_EQUIRECT2_EXTENSION_NAME,
            XR_EXT_EYE_GAZE_INTERACTION_EXTENSION_NAME};
  }
};

TEST_F(OpenXrExtensionSession, LocalFloorLiesUnderLocalAndLocateSpacesAgreesWithLocateSpace) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  uint32_t count = 0;
  XrReferenceSpaceType types[8];
  ASSERT_EQ(xrEnumerateReferenceSpaces(session_, 8, &count, types), XR_SUCCESS);
  EXPECT_NE(std::find(types, types + count, kLocalFloor), types + count);

  XrSpace floor = XR_NULL_HANDLE, stage = XR_NULL_HANDLE, view = XR_NULL_HANDLE;
  XrReferenceSpaceCreateInfo info{XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, kLocalFloor, {{0, 0, 0, 1}, {0, 0, 0}}};
  ASSERT_EQ(xrCreateReferenceSpace(session_, &info, &floor), XR_SUCCESS);
  info.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_STAGE;
  ASSERT_EQ(xrCreateReferenceSpace(session_, &info, &stage), XR_SUCCESS);
  info.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_VIEW;
  ASSERT_EQ(xrCreateReferenceSpace(session_, &info, &view), XR_SUCCESS);

  // The headless LOCAL is 1.6 m above the stage floor: LOCAL_FLOOR is right under it.
  XrSpaceLocation floorInLocal{XR_TYPE_SPACE_LOCATION}, floorInStage{XR_TYPE_SPACE_LOCATION};
  ASSERT_EQ(xrLocateSpace(floor, local_, state.predictedDisplayTime, &floorInLocal), XR_SUCCESS);
  EXPECT_NEAR(floorInLocal.pose.position.x, 0.f, 1e-5);
  EXPECT_NEAR(floorInLocal.pose.position.y, -1.6f, 1e-5);
  EXPECT_NEAR(floorInLocal.pose.position.z, 0.f, 1e-5);
  EXPECT_NEAR(floorInLocal.pose.orientation.w, 1.f, 1e-5);
  ASSERT_EQ(xrLocateSpace(floor, stage, state.predictedDisplayTime, &floorInStage), XR_SUCCESS);
  EXPECT_NEAR(floorInStage.pose.position.y, 0.f, 1e-5);

  PFN_xrVoidFunction f = nullptr;
  ASSERT_EQ(xrGetInstanceProcAddr(instance_, "xrLocateSpacesKHR", &f), XR_SUCCESS);
  auto locateSpaces = reinterpret_cast<PFN_LocateSpaces>(f);
  const XrSpace spaces[3] = {view, floor, local_};
  SpaceLocationData data[3] = {};
  SpacesLocateInfo locate{kTypeSpacesLocateInfo, nullptr, stage, state.predictedDisplayTime, 3, spaces};
  SpaceLocations out{kTypeSpaceLocations, nullptr, 3, data};
  ASSERT_EQ(locateSpaces(session_, &locate, &out), XR_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    XrSpaceLocation one{XR_TYPE_SPACE_LOCATION};
    ASSERT_EQ(xrLocateSpace(spaces[i], stage, state.predictedDisplayTime, &one), XR_SUCCESS);
    EXPECT_EQ(data[i].locationFlags, one.locationFlags) << i;
    EXPECT_NEAR(data[i].pose.position.y, one.pose.position.y, 1e-5) << i;
  }
  EXPECT_NEAR(data[0].pose.position.y, 1.6f, 1e-5);  // the head
  out.locationCount = 2;                             // must match spaceCount
  EXPECT_EQ(locateSpaces(session_, &locate, &out), XR_ERROR_VALIDATION_FAILURE);
  out.locationCount = 3;
  locate.time = 0;
  EXPECT_EQ(locateSpaces(session_, &locate, &out), XR_ERROR_TIME_INVALID);
}

// The headless views show all of their rectangular fields of view (90 degrees: tangents 1).
TEST_F(OpenXrExtensionSession, VisibilityMaskIsTheWholeViewRectangle) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  PFN_xrVoidFunction f = nullptr;
  ASSERT_EQ(xrGetInstanceProcAddr(instance_, "xrGetVisibilityMaskKHR", &f), XR_SUCCESS);
  auto getMask = reinterpret_cast<PFN_xrGetVisibilityMaskKHR>(f);
  const auto stereo = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
  XrVisibilityMaskKHR mask{XR_TYPE_VISIBILITY_MASK_KHR};
  ASSERT_EQ(getMask(session_, stereo, 1, XR_VISIBILITY_MASK_TYPE_HIDDEN_TRIANGLE_MESH_KHR, &mask), XR_SUCCESS);
  EXPECT_EQ(mask.vertexCountOutput, 3u);  // one triangle of zero area: nothing hidden
  EXPECT_EQ(mask.indexCountOutput, 3u);
  ASSERT_EQ(getMask(session_, stereo, 0, XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR, &mask), XR_SUCCESS);
  ASSERT_EQ(mask.vertexCountOutput, 4u);
  ASSERT_EQ(mask.indexCountOutput, 6u);
  std::vector<XrVector2f> vertices(4);
  std::vector<uint32_t> indices(6);
  mask.vertexCapacityInput = 4;
  mask.vertices = vertices.data();
  mask.indexCapacityInput = 5;
  mask.indices = indices.data();
  EXPECT_EQ(getMask(session_, stereo, 0, XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR, &mask),
            XR_ERROR_SIZE_INSUFFICIENT);
  mask.indexCapacityInput = 6;
  ASSERT_EQ(getMask(session_, stereo, 0, XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR, &mask), XR_SUCCESS);
  for (const XrVector2f& v : vertices) {
    EXPECT_NEAR(std::fabs(v.x), 1.f, 1e-4);
    EXPECT_NEAR(std::fabs(v.y), 1.f, 1e-4);
  }
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1, 2, 0, 2, 3}));
  EXPECT_EQ(getMask(session_, stereo, 2, XR_VISIBILITY_MASK_TYPE_LINE_LOOP_KHR, &mask), XR_ERROR_VALIDATION_FAILURE);
  EXPECT_EQ(getMask(session_, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_MONO, 0, XR_VISIBILITY_MASK_TYPE_LINE_LOOP_KHR, &mask),
            XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED);
}

// What the headless system says of its headset and user: a stable headset id, a user who is
// present (told when the session begins), no hand tracking.
TEST_F(OpenXrExtensionSession, HeadsetIdUserPresenceAndHandTrackingOfTheHeadlessSystem) {
  struct HeadsetId {  // XrSystemHeadsetIdPropertiesMETA (1.0.20 headers lack it)
    XrStructureType type;
    void* next;
    uint8_t id[16];
  } headset{XrStructureType(1000245000), nullptr, {}};
  struct UserPresence {  // XrSystemUserPresencePropertiesEXT
    XrStructureType type;
    void* next;
    XrBool32 supportsUserPresence;
  } presence{XrStructureType(1000470001), &headset, XR_FALSE};
  XrSystemHandTrackingPropertiesEXT hands{XR_TYPE_SYSTEM_HAND_TRACKING_PROPERTIES_EXT, &presence, XR_TRUE};
  XrSystemProperties props{XR_TYPE_SYSTEM_PROPERTIES, &hands};
  ASSERT_EQ(xrGetSystemProperties(instance_, system_, &props), XR_SUCCESS);
  const std::vector<uint8_t> id(headset.id, headset.id + 16);
  EXPECT_NE(id, std::vector<uint8_t>(16, 0));
  ASSERT_EQ(xrGetSystemProperties(instance_, system_, &props), XR_SUCCESS);
  EXPECT_EQ(std::vector<uint8_t>(headset.id, headset.id + 16), id);
  EXPECT_EQ(presence.supportsUserPresence, XR_TRUE);
  EXPECT_EQ(hands.supportsHandTracking, XR_FALSE);

  ASSERT_NO_FATAL_FAILURE(createSession());
  PFN_xrVoidFunction f = nullptr;
  ASSERT_EQ(xrGetInstanceProcAddr(instance_, "xrCreateHandTrackerEXT", &f), XR_SUCCESS);
  XrHandTrackerCreateInfoEXT trackerInfo{XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT, nullptr, XR_HAND_LEFT_EXT,
                                         XR_HAND_JOINT_SET_DEFAULT_EXT};
  XrHandTrackerEXT tracker = XR_NULL_HANDLE;
  EXPECT_EQ(reinterpret_cast<PFN_xrCreateHandTrackerEXT>(f)(session_, &trackerInfo, &tracker),
            XR_ERROR_FEATURE_UNSUPPORTED);

  ASSERT_NO_FATAL_FAILURE(beginSession());
  int presentEvents = 0;
  XrEventDataBuffer event{XR_TYPE_EVENT_DATA_BUFFER};
  while (xrPollEvent(instance_, &event) == XR_SUCCESS) {
    if (event.type == XrStructureType(1000470000)) {  // XrEventDataUserPresenceChangedEXT
      struct Changed {
        XrStructureType type;
        const void* next;
        XrSession session;
        XrBool32 isUserPresent;
      };
      EXPECT_EQ(reinterpret_cast<const Changed&>(event).isUserPresent, XR_TRUE);
      EXPECT_EQ(reinterpret_cast<const Changed&>(event).session, session_);
      ++presentEvents;
    }
    event = {XR_TYPE_EVENT_DATA_BUFFER};
  }
  EXPECT_EQ(presentEvents, 1);
}

// XR_META_performance_metrics: the app's CPU time per frame, measured by the runtime once enabled.
TEST_F(OpenXrExtensionSession, PerformanceMetricsMeasureTheAppsFrames) {
  struct State {  // XrPerformanceMetricsStateMETA
    XrStructureType type;
    const void* next;
    XrBool32 enabled;
  };
  struct Counter {  // XrPerformanceMetricsCounterMETA
    XrStructureType type;
    const void* next;
    uint64_t counterFlags;
    int32_t counterUnit;
    uint32_t uintValue;
    float floatValue;
  };
  using Paths = XrResult(XRAPI_PTR*)(XrInstance, uint32_t, uint32_t*, XrPath*);
  using SetState = XrResult(XRAPI_PTR*)(XrSession, const State*);
  using Query = XrResult(XRAPI_PTR*)(XrSession, XrPath, Counter*);
  auto paths = proc<Paths>(instance_, "xrEnumeratePerformanceMetricsCounterPathsMETA");
  auto setState = proc<SetState>(instance_, "xrSetPerformanceMetricsStateMETA");
  auto query = proc<Query>(instance_, "xrQueryPerformanceMetricsCounterMETA");
  uint32_t count = 0;
  ASSERT_EQ(paths(instance_, 0, &count, nullptr), XR_SUCCESS);
  ASSERT_EQ(count, 2u);
  XrPath frametime = XR_NULL_PATH, unknown = XR_NULL_PATH;
  ASSERT_EQ(xrStringToPath(instance_, "/perfmetrics_meta/app/cpu_frametime", &frametime), XR_SUCCESS);
  ASSERT_EQ(xrStringToPath(instance_, "/perfmetrics_meta/app/teleport_rate", &unknown), XR_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(createSession());
  Counter counter{XrStructureType(1000232002), nullptr, 0, 0, 0, 0};
  EXPECT_EQ(query(session_, frametime, &counter), XR_ERROR_VALIDATION_FAILURE);  // not enabled
  const State on{XrStructureType(1000232001), nullptr, XR_TRUE};
  ASSERT_EQ(setState(session_, &on), XR_SUCCESS);
  ASSERT_EQ(query(session_, frametime, &counter), XR_SUCCESS);
  EXPECT_EQ(counter.counterFlags, 0u);  // no frame yet
  EXPECT_EQ(query(session_, unknown, &counter), XR_ERROR_PATH_UNSUPPORTED);

  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
  ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
  std::this_thread::sleep_for(5ms);
  ASSERT_EQ(endFrame(state.predictedDisplayTime, {}), XR_SUCCESS);
  ASSERT_EQ(query(session_, frametime, &counter), XR_SUCCESS);
  EXPECT_EQ(counter.counterFlags, 0x5u);  // any value + float value valid
  EXPECT_EQ(counter.counterUnit, 2);      // milliseconds
  EXPECT_GE(counter.floatValue, 5.f);
}

// Cylinder, equirect and equirect2 layers are validated and reach the daemon (their pixels:
// ShapedLayers); without their extensions they are XR_ERROR_LAYER_INVALID.
TEST_F(OpenXrExtensionSession, CylinderAndEquirectLayersAreCheckedAndSubmitted) {
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_NO_FATAL_FAILURE(startFrameWithAnImage(state));
  XrCompositionLayerCylinderKHR cylinder{XR_TYPE_COMPOSITION_LAYER_CYLINDER_KHR};
  cylinder.space = local_;
  cylinder.eyeVisibility = XR_EYE_VISIBILITY_BOTH;
  cylinder.subImage = view().subImage;
  cylinder.pose = {{0, 0, 0, 1}, {0, 0, 0}};
  cylinder.radius = INFINITY;
  cylinder.centralAngle = 1.5f;
  cylinder.aspectRatio = 1;
  XrCompositionLayerEquirectKHR equirect{XR_TYPE_COMPOSITION_LAYER_EQUIRECT_KHR};
  equirect.space = local_;
  equirect.eyeVisibility = XR_EYE_VISIBILITY_LEFT;
  equirect.subImage = view().subImage;
  equirect.pose = {{0, 0, 0, 1}, {0, 0, 0}};
  equirect.radius = 0;
  equirect.scale = {1, 1};
  XrCompositionLayerEquirect2KHR equirect2{XR_TYPE_COMPOSITION_LAYER_EQUIRECT2_KHR};
  equirect2.space = local_;
  equirect2.eyeVisibility = XR_EYE_VISIBILITY_RIGHT;
  equirect2.subImage = view().subImage;
  equirect2.pose = {{0, 0, 0, 1}, {0, 0, 0}};
  equirect2.radius = 10;
  equirect2.centralHorizontalAngle = 1.5f;
  equirect2.upperVerticalAngle = 0.5f;
  equirect2.lowerVerticalAngle = -0.5f;
  auto header = [](const auto& layer) { return reinterpret_cast<const XrCompositionLayerBaseHeader*>(&layer); };
  XrCompositionLayerCylinderKHR badCylinder = cylinder;
  badCylinder.radius = -1;
  EXPECT_EQ(endFrame(state.predictedDisplayTime, {header(badCylinder)}), XR_ERROR_VALIDATION_FAILURE);
  XrCompositionLayerEquirect2KHR badEquirect2 = equirect2;
  badEquirect2.lowerVerticalAngle = 0.7f;  // above the upper one
  EXPECT_EQ(endFrame(state.predictedDisplayTime, {header(badEquirect2)}), XR_ERROR_VALIDATION_FAILURE);
  ASSERT_EQ(endFrame(state.predictedDisplayTime, {header(cylinder), header(equirect), header(equirect2)}), XR_SUCCESS);
  EXPECT_TRUE(daemon_.waitForStatus(
      [](const control::DaemonStatus& s) { return s.clients.size() == 1 && s.clients[0].framesSubmitted == 1; }, 5s));
}

TEST_F(OpenXrSession, CylinderLayersNeedTheirExtension) {
  XrFrameState state{XR_TYPE_FRAME_STATE};
  ASSERT_NO_FATAL_FAILURE(startFrameWithAnImage(state));
  XrCompositionLayerCylinderKHR cylinder{XR_TYPE_COMPOSITION_LAYER_CYLINDER_KHR};
  cylinder.space = local_;
  cylinder.subImage = view().subImage;
  cylinder.pose = {{0, 0, 0, 1}, {0, 0, 0}};
  cylinder.centralAngle = 1;
  cylinder.aspectRatio = 1;
  EXPECT_EQ(endFrame(state.predictedDisplayTime, {reinterpret_cast<const XrCompositionLayerBaseHeader*>(&cylinder)}),
            XR_ERROR_LAYER_INVALID);
}

// XR_EXT_eye_gaze_interaction: no eye tracker, but apps may bind the gaze pose and make its space.
TEST_F(OpenXrExtensionSession, EyeGazeProfileBindsWithoutAnEyeTracker) {
  XrSystemEyeGazeInteractionPropertiesEXT gaze{XR_TYPE_SYSTEM_EYE_GAZE_INTERACTION_PROPERTIES_EXT, nullptr, XR_TRUE};
  XrSystemProperties props{XR_TYPE_SYSTEM_PROPERTIES, &gaze};
  ASSERT_EQ(xrGetSystemProperties(instance_, system_, &props), XR_SUCCESS);
  EXPECT_EQ(gaze.supportsEyeGazeInteraction, XR_FALSE);
  XrActionSetCreateInfo setInfo{XR_TYPE_ACTION_SET_CREATE_INFO};
  std::strcpy(setInfo.actionSetName, "gameplay");
  std::strcpy(setInfo.localizedActionSetName, "Gameplay");
  XrActionSet set = XR_NULL_HANDLE;
  ASSERT_EQ(xrCreateActionSet(instance_, &setInfo, &set), XR_SUCCESS);
  XrActionCreateInfo actionInfo{XR_TYPE_ACTION_CREATE_INFO};
  std::strcpy(actionInfo.actionName, "user_intent");
  std::strcpy(actionInfo.localizedActionName, "User Intent");
  actionInfo.actionType = XR_ACTION_TYPE_POSE_INPUT;
  XrAction intent = XR_NULL_HANDLE;
  ASSERT_EQ(xrCreateAction(set, &actionInfo, &intent), XR_SUCCESS);
  XrPath profile = XR_NULL_PATH, pose = XR_NULL_PATH;
  ASSERT_EQ(xrStringToPath(instance_, "/interaction_profiles/ext/eye_gaze_interaction", &profile), XR_SUCCESS);
  ASSERT_EQ(xrStringToPath(instance_, "/user/eyes_ext/input/gaze_ext/pose", &pose), XR_SUCCESS);
  XrActionSuggestedBinding binding{intent, pose};
  XrInteractionProfileSuggestedBinding suggested{XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING, nullptr, profile, 1,
                                                 &binding};
  EXPECT_EQ(xrSuggestInteractionProfileBindings(instance_, &suggested), XR_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(createSession());
  XrSessionActionSetsAttachInfo attach{XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO, nullptr, 1, &set};
  ASSERT_EQ(xrAttachSessionActionSets(session_, &attach), XR_SUCCESS);
  XrActionSpaceCreateInfo spaceInfo{
      XR_TYPE_ACTION_SPACE_CREATE_INFO, nullptr, intent, XR_NULL_PATH, {{0, 0, 0, 1}, {0, 0, 0}}};
  XrSpace gazeSpace = XR_NULL_HANDLE;
  EXPECT_EQ(xrCreateActionSpace(session_, &spaceInfo, &gazeSpace), XR_SUCCESS);
}

// Without XR_META_headset_id the chained structure is left alone.
TEST_F(OpenXrSession, HeadsetIdNeedsItsExtension) {
  struct HeadsetId {
    XrStructureType type;
    void* next;
    uint8_t id[16];
  } headset{XrStructureType(1000245000), nullptr, {}};
  XrSystemProperties props{XR_TYPE_SYSTEM_PROPERTIES, &headset};
  ASSERT_EQ(xrGetSystemProperties(instance_, system_, &props), XR_SUCCESS);
  EXPECT_EQ(std::vector<uint8_t>(headset.id, headset.id + 16), std::vector<uint8_t>(16, 0));
}

// OpenXR 1.0 apps get neither without the extensions; layer names are the loader's business.
TEST_F(OpenXrSession, OpenXr11FeaturesNeedOpenXr11OrTheirExtensions) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  XrSpace floor = XR_NULL_HANDLE;
  XrReferenceSpaceCreateInfo info{XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, kLocalFloor, {{0, 0, 0, 1}, {0, 0, 0}}};
  EXPECT_EQ(xrCreateReferenceSpace(session_, &info, &floor), XR_ERROR_REFERENCE_SPACE_UNSUPPORTED);
  info.referenceSpaceType = XrReferenceSpaceType(0x7fff0000);
  EXPECT_EQ(xrCreateReferenceSpace(session_, &info, &floor), XR_ERROR_REFERENCE_SPACE_UNSUPPORTED);
  PFN_xrVoidFunction f = nullptr;
  EXPECT_EQ(xrGetInstanceProcAddr(instance_, "xrLocateSpaces", &f), XR_ERROR_FUNCTION_UNSUPPORTED);
  XrSystemGetInfo unknownFormFactor{XR_TYPE_SYSTEM_GET_INFO, nullptr, XrFormFactor(0x7fff0000)};
  XrSystemId system = 0;
  EXPECT_EQ(xrGetSystem(instance_, &unknownFormFactor, &system), XR_ERROR_FORM_FACTOR_UNSUPPORTED);

  ASSERT_EQ(xrDestroySession(session_), XR_SUCCESS);
  session_ = XR_NULL_HANDLE;
  ASSERT_EQ(xrDestroyInstance(instance_), XR_SUCCESS);
  instance_ = XR_NULL_HANDLE;
  ASSERT_EQ(createInstance({"XR_EXT_local_floor", "XR_KHR_locate_spaces"}, &instance_, XR_MAKE_VERSION(1, 0, 0),
                           {"XR_APILAYER_LUNARG_core_validation"}),
            XR_SUCCESS);
  EXPECT_EQ(xrGetInstanceProcAddr(instance_, "xrLocateSpacesKHR", &f), XR_SUCCESS);
}

// Image order per OpenXR 10.1.4, and static swapchains: one image, acquired once.
TEST_F(OpenXrSession, SwapchainImageOrderAndStaticSwapchains) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  uint32_t images = 0;
  ASSERT_EQ(xrEnumerateSwapchainImages(swapchain_, 0, &images, nullptr), XR_SUCCESS);
  uint32_t index = 0;
  for (uint32_t i = 0; i < images; ++i) ASSERT_EQ(xrAcquireSwapchainImage(swapchain_, nullptr, &index), XR_SUCCESS);
  EXPECT_EQ(xrAcquireSwapchainImage(swapchain_, nullptr, &index), XR_ERROR_CALL_ORDER_INVALID);
  XrSwapchainImageWaitInfo wait{XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO, nullptr, XR_INFINITE_DURATION};
  ASSERT_EQ(xrWaitSwapchainImage(swapchain_, &wait), XR_SUCCESS);
  EXPECT_EQ(xrWaitSwapchainImage(swapchain_, &wait), XR_ERROR_CALL_ORDER_INVALID);  // one waited at a time
  ASSERT_EQ(xrReleaseSwapchainImage(swapchain_, nullptr), XR_SUCCESS);
  EXPECT_EQ(xrReleaseSwapchainImage(swapchain_, nullptr), XR_ERROR_CALL_ORDER_INVALID);
  ASSERT_EQ(xrWaitSwapchainImage(swapchain_, &wait), XR_SUCCESS);

  XrSwapchain still = createColorSwapchain(XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT);
  ASSERT_NE(still, XR_NULL_HANDLE);
  ASSERT_EQ(xrEnumerateSwapchainImages(still, 0, &images, nullptr), XR_SUCCESS);
  EXPECT_EQ(images, 1u);
  ASSERT_EQ(xrAcquireSwapchainImage(still, nullptr, &index), XR_SUCCESS);
  ASSERT_EQ(xrWaitSwapchainImage(still, &wait), XR_SUCCESS);
  ASSERT_EQ(xrReleaseSwapchainImage(still, nullptr), XR_SUCCESS);
  EXPECT_EQ(xrAcquireSwapchainImage(still, nullptr, &index), XR_ERROR_CALL_ORDER_INVALID);

  // Its one release is shown frame after frame.
  ASSERT_NO_FATAL_FAILURE(beginSession());
  XrCompositionLayerQuad quad{XR_TYPE_COMPOSITION_LAYER_QUAD};
  quad.space = local_;
  quad.eyeVisibility = XR_EYE_VISIBILITY_BOTH;
  quad.subImage.swapchain = still;
  quad.subImage.imageRect = {{0, 0}, {64, 64}};
  quad.pose = {{0, 0, 0, 1}, {0, 0, -1}};
  quad.size = {1, 1};
  XrCompositionLayerQuad empty = quad;
  empty.size = {0, 0};  // valid, shows nothing
  for (int i = 0; i < 3; ++i) {
    XrFrameState state{XR_TYPE_FRAME_STATE};
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_EQ(endFrame(state.predictedDisplayTime, {reinterpret_cast<const XrCompositionLayerBaseHeader*>(&quad),
                                                    reinterpret_cast<const XrCompositionLayerBaseHeader*>(&empty)}),
              XR_SUCCESS);
  }
  EXPECT_TRUE(daemon_.waitForStatus(
      [](const control::DaemonStatus& s) { return s.clients.size() == 1 && s.clients[0].framesSubmitted == 3; }, 5s));
}

// Exiting before the first frame still passes through SYNCHRONIZED; a destroyed session's
// queued events are not delivered.
TEST_F(OpenXrSession, ExitBeforeTheFirstFrameAndEventsOfADestroyedSession) {
  ASSERT_NO_FATAL_FAILURE(createSession());
  ASSERT_NO_FATAL_FAILURE(beginSession());
  ASSERT_EQ(xrRequestExitSession(session_), XR_SUCCESS);
  ASSERT_EQ(xrEndSession(session_), XR_SUCCESS);
  const std::vector<XrSessionState> want{XR_SESSION_STATE_IDLE,         XR_SESSION_STATE_READY,
                                         XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_STOPPING,
                                         XR_SESSION_STATE_IDLE,         XR_SESSION_STATE_EXITING};
  EXPECT_EQ(pollSessionStates(), want);

  ASSERT_EQ(xrDestroySession(session_), XR_SUCCESS);
  session_ = XR_NULL_HANDLE;
  XrGraphicsBindingVulkan2KHR binding{XR_TYPE_GRAPHICS_BINDING_VULKAN2_KHR};
  binding.instance = vkInstance_;
  binding.physicalDevice = physical_;
  binding.device = device_;
  XrSessionCreateInfo info{XR_TYPE_SESSION_CREATE_INFO, &binding, 0, system_};
  ASSERT_EQ(xrCreateSession(instance_, &info, &session_), XR_SUCCESS);  // IDLE, READY queued...
  ASSERT_EQ(xrDestroySession(session_), XR_SUCCESS);
  session_ = XR_NULL_HANDLE;
  EXPECT_TRUE(pollSessionStates().empty());  // ...and dropped with it
}

}  // namespace
}  // namespace xrc::test

namespace xrc::test {
namespace {

// The runtime library loaded as a 1.1 loader would load it (Debian's loader is 1.0): it
// negotiates 1.1, accepts 1.0 and 1.1 apps, refuses later versions, and hands out xrLocateSpaces
// only to 1.1 instances.
TEST(OpenXrRuntimeDirect, NegotiatesOpenXr11AndGatesItsFunctionsByTheAppsVersion) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  ::setenv("XR_COMPOSITOR_SOCKET", daemon.socket().c_str(), 1);
  const auto library =
      std::filesystem::path(binary("XRC_OPENXR_MANIFEST")).parent_path() / "libxr-compositor-openxr.so";
  void* runtime = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(runtime, nullptr) << dlerror();
  using Negotiate = XrResult(XRAPI_PTR*)(const XrNegotiateLoaderInfo*, XrNegotiateRuntimeRequest*);
  auto negotiate = reinterpret_cast<Negotiate>(dlsym(runtime, "xrNegotiateLoaderRuntimeInterface"));
  ASSERT_NE(negotiate, nullptr);
  XrNegotiateLoaderInfo loader{XR_LOADER_INTERFACE_STRUCT_LOADER_INFO,
                               XR_LOADER_INFO_STRUCT_VERSION,
                               sizeof(XrNegotiateLoaderInfo),
                               1,
                               1,
                               XR_MAKE_VERSION(1, 0, 0),
                               XR_MAKE_VERSION(1, 1, 41)};
  XrNegotiateRuntimeRequest request{XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST,
                                    XR_RUNTIME_INFO_STRUCT_VERSION,
                                    sizeof(XrNegotiateRuntimeRequest),
                                    0,
                                    0,
                                    nullptr};
  ASSERT_EQ(negotiate(&loader, &request), XR_SUCCESS);
  EXPECT_EQ(XR_VERSION_MINOR(request.runtimeApiVersion), 1u);
  PFN_xrGetInstanceProcAddr gipa = request.getInstanceProcAddr;
  PFN_xrVoidFunction f = nullptr;
  ASSERT_EQ(gipa(XR_NULL_HANDLE, "xrCreateInstance", &f), XR_SUCCESS);
  auto create = reinterpret_cast<PFN_xrCreateInstance>(f);
  ASSERT_EQ(gipa(XR_NULL_HANDLE, "xrDestroyInstance", &f), XR_SUCCESS);
  auto destroy = reinterpret_cast<PFN_xrDestroyInstance>(f);

  auto instanceFor = [&](XrVersion version, XrInstance* out) {
    XrInstanceCreateInfo info{XR_TYPE_INSTANCE_CREATE_INFO};
    std::strcpy(info.applicationInfo.applicationName, "xrc-direct");
    info.applicationInfo.apiVersion = version;
    const char* layer = "XR_APILAYER_KHRONOS_runtime_conformance";  // named, as the CTS does
    info.enabledApiLayerCount = 1;
    info.enabledApiLayerNames = &layer;
    return create(&info, out);
  };
  XrInstance instance = XR_NULL_HANDLE;
  EXPECT_EQ(instanceFor(XR_MAKE_VERSION(1, 2, 0), &instance), XR_ERROR_API_VERSION_UNSUPPORTED);
  EXPECT_EQ(instanceFor(XR_MAKE_VERSION(2, 0, 0), &instance), XR_ERROR_API_VERSION_UNSUPPORTED);
  ASSERT_EQ(instanceFor(XR_MAKE_VERSION(1, 1, 0), &instance), XR_SUCCESS);
  EXPECT_EQ(gipa(instance, "xrLocateSpaces", &f), XR_SUCCESS);
  EXPECT_EQ(gipa(instance, "xrLocateSpacesKHR", &f), XR_ERROR_FUNCTION_UNSUPPORTED);  // extension not enabled
  ASSERT_EQ(destroy(instance), XR_SUCCESS);
  ASSERT_EQ(instanceFor(XR_MAKE_VERSION(1, 0, 34), &instance), XR_SUCCESS);
  EXPECT_EQ(gipa(instance, "xrLocateSpaces", &f), XR_ERROR_FUNCTION_UNSUPPORTED);
  ASSERT_EQ(destroy(instance), XR_SUCCESS);
  // The runtime stays loaded: its handle table and client-lib threads live for the process.
}

}  // namespace
}  // namespace xrc::test
