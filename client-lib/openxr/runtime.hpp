// The objects behind the OpenXR face's handles and helpers shared by its entry points. Each entry
// point (xr_*.cpp) validates its handles and structures, then acts on these objects; the daemon
// is reached only through client-lib's Connection and Swapchain.
#pragma once

#define XR_USE_GRAPHICS_API_VULKAN 1
#define XR_USE_TIMESPEC 1
#include <time.h>
#include <vulkan/vulkan.h>
// After the Vulkan and time headers: the platform header uses their types.
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "action_registry.hpp"
#include "call_stats.hpp"
#include "handles.hpp"
#include "input_mapper.hpp"
#include "openxr_1_1.hpp"
#include "openxr_newer_extensions.hpp"
#include "path_table.hpp"
#include "performance_metrics.hpp"
#include "session_state.hpp"
#include "xrc/client.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc::openxr {

inline constexpr XrSystemId kSystemId = 1;
inline constexpr const char* kRuntimeName = "xr-compositor";

struct Session;

struct Instance {
  static constexpr HandleType kHandleType = HandleType::instance;
  uint64_t handle = 0;
  std::string applicationName;
  XrVersion apiVersion = kApi10;     // the app's, as it asked at creation (1.0 or 1.1)
  std::set<std::string> extensions;  // enabled at creation
  std::string socketPath;            // empty: client-lib's default resolution
  client::SystemDescription system;  // asked of the daemon at creation
  PathTable paths;
  ActionRegistry actions{paths};

  Mutex mutex;
  std::deque<XrEventDataBuffer> events XRC_GUARDED_BY(mutex);
  bool graphicsRequirementsQueried XRC_GUARDED_BY(mutex) = false;
  VkInstance appVkInstance XRC_GUARDED_BY(mutex) = VK_NULL_HANDLE;  // of the last graphics-device query
  VkPhysicalDevice returnedPhysicalDevice XRC_GUARDED_BY(mutex) = VK_NULL_HANDLE;
  // Devices xrCreateVulkanDeviceKHR made with timeline semaphores enabled: their sessions may use
  // the `timeline` sync mode (an app's own device, XR_KHR_vulkan_enable, gets binary at most).
  std::set<VkDevice> timelineDevices XRC_GUARDED_BY(mutex);
  uint64_t sessionHandle XRC_GUARDED_BY(mutex) = 0;  // one session at a time
  std::vector<uint64_t> actionSetHandles XRC_GUARDED_BY(mutex);
  bool lossReported XRC_GUARDED_BY(mutex) = false;

  bool enabled(const char* extension) const { return extensions.count(extension) != 0; }
  // LOCAL_FLOOR exists for this app: OpenXR 1.1, or XR_EXT_local_floor enabled.
  bool hasLocalFloor() const { return apiAtLeast(apiVersion, kApi11) || enabled(XR_EXT_LOCAL_FLOOR_EXTENSION_NAME); }
  void pushEvent(const XrEventDataBuffer& event);
  // xrDestroySession: the session's events still queued are not delivered (their handle is gone).
  void dropSessionEvents(XrSession session);
};

struct Session {
  static constexpr HandleType kHandleType = HandleType::session;
  std::shared_ptr<Instance> instance;
  uint64_t handle = 0;

  // The connection is thread-safe (client-lib runs its own I/O thread); it is set at creation
  // and reset only by xrDestroySession, which the app may not call concurrently with others.
  std::unique_ptr<client::Connection> connection;
  // Guards the face's own state below; never held across a blocking wait for the daemon.
  Mutex mutex;
  std::condition_variable_any frameBegun;  // xrBeginFrame happened (see xrWaitFrame)
  std::unique_ptr<CallStats> stats;        // set at creation (XRC_OPENXR_STATS), locked inside
  client::VulkanBinding vulkan;
  SessionLifecycle lifecycle XRC_GUARDED_BY(mutex);
  FrameOrder frames XRC_GUARDED_BY(mutex);
  std::vector<ActionSet*> attachedSets XRC_GUARDED_BY(mutex);
  std::vector<std::shared_ptr<ActionSet>> attachedSetsKeepAlive XRC_GUARDED_BY(mutex);
  // Head poses of recent predicted display times (from waitFrame answers), newest last.
  std::deque<std::pair<int64_t, Pose>> headPoses XRC_GUARDED_BY(mutex);
  // The last timing the daemon gave, to keep pacing the app locally once the daemon is gone.
  int64_t lastPredictedNs XRC_GUARDED_BY(mutex) = 0;
  int64_t periodNs XRC_GUARDED_BY(mutex) = 11'111'111;
  // LOCAL in STAGE as the daemon last said (connect, then waitFrame answers), and its count of
  // LOCAL moves (none until the first waitFrame answer).
  Pose localInStage XRC_GUARDED_BY(mutex);
  std::optional<uint32_t> localSpaceChanges XRC_GUARDED_BY(mutex);
  std::vector<uint64_t> childHandles XRC_GUARDED_BY(mutex);  // spaces and swapchains
  PerformanceMetrics metrics XRC_GUARDED_BY(mutex);          // XR_META_performance_metrics
  // The daemon's controllers (each waitFrame answer of a focused session) and the action states
  // they give this session's actions.
  InputMapper input XRC_GUARDED_BY(mutex);
  // The app's suggested bindings as of xrAttachSessionActionSets: fixed for the session from then
  // on, so input is mapped without rebuilding them per call.
  SuggestedBindings suggested XRC_GUARDED_BY(mutex);
  // The views of the latest waitFrame answer that had them (a runtime under the daemon), else the
  // system description's.
  std::vector<EyeView> views XRC_GUARDED_BY(mutex);
};

// The current interaction profiles follow the daemon's input and the app's suggestions; when one
// changes, the app gets XrEventDataInteractionProfileChanged. Only in xrSyncActions (OpenXR
// queues that event there, the conformance layer checks it); needs attached action sets.
void noticeInteractionProfiles(Session& session) XRC_REQUIRES(session.mutex);

struct Space {
  static constexpr HandleType kHandleType = HandleType::space;
  std::shared_ptr<Session> session;
  bool isAction = false;
  XrReferenceSpaceType referenceType = XR_REFERENCE_SPACE_TYPE_LOCAL;
  std::shared_ptr<Action> action;
  XrPath subactionPath = XR_NULL_PATH;
  Pose offset;  // pose of this space in the reference (or action) space
};

struct SwapchainObject {
  static constexpr HandleType kHandleType = HandleType::swapchain;
  std::shared_ptr<Session> session;
  // OpenXR makes the app synchronize calls on one swapchain; client-lib does the rest.
  std::unique_ptr<client::Swapchain> impl;
  uint32_t width = 0, height = 0, arraySize = 0;
  uint32_t faceCount = 1;  // 6: a cube map
  bool isStatic = false;   // XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT: one acquire in its lifetime
  std::atomic<bool> everReleased{false};
  // OpenXR's order rules for acquire / wait / release (spec 10.1.4), checked before client-lib
  // runs: at most imageCount acquired, one image waited at a time.
  Mutex orderMutex;
  uint32_t acquiredNotWaited XRC_GUARDED_BY(orderMutex) = 0;
  bool waitedNotReleased XRC_GUARDED_BY(orderMutex) = false;
  bool everAcquired XRC_GUARDED_BY(orderMutex) = false;
};

struct ActionSetObject {
  static constexpr HandleType kHandleType = HandleType::actionSet;
  std::shared_ptr<Instance> instance;
  std::shared_ptr<ActionSet> set;
  std::vector<uint64_t> actionHandles;  // guarded by instance->mutex
};

struct ActionObject {
  static constexpr HandleType kHandleType = HandleType::action;
  std::shared_ptr<Instance> instance;
  std::shared_ptr<Action> action;
};

XrViewConfigurationType systemViewConfiguration(const Instance& instance);
// Instance handle + system id checks shared by the system-level entry points.
XrResult lookupSystem(XrInstance handle, XrSystemId systemId, std::shared_ptr<Instance>& out);

// --- helpers --------------------------------------------------------------------------------------

// XrTime is CLOCK_MONOTONIC in nanoseconds, the daemon's clock: xrc::monotonicNowNs().

XrResult toXrResult(const Error& error);
void logError(const char* function, const std::string& message);

template <typename T, typename Xr>
std::shared_ptr<T> lookup(Xr handle) {
  if (handle == XR_NULL_HANDLE) return nullptr;
  return Handles::get().find<T>(toRaw(handle));
}

// The caller's structure has the expected type (XR_ERROR_VALIDATION_FAILURE otherwise).
template <typename S>
bool hasType(const S* s, XrStructureType type) {
  return s != nullptr && s->type == type;
}

// A chained structure of `type` in `next`, or null.
const void* findInChain(const void* next, XrStructureType type);

// The two-call idiom of enumerations (OpenXR 1.0, 2.11).
template <typename T>
XrResult enumerate(const std::vector<T>& items, uint32_t capacity, uint32_t* count, T* out) {
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  *count = uint32_t(items.size());
  if (capacity == 0) return XR_SUCCESS;
  if (out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < items.size()) return XR_ERROR_SIZE_INSUFFICIENT;
  for (size_t i = 0; i < items.size(); ++i) out[i] = items[i];
  return XR_SUCCESS;
}
XrResult enumerateString(const std::string& text, uint32_t capacity, uint32_t* count, char* out);

inline Pose toPose(const XrPosef& p) {
  Pose out;
  out.orientation = {p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w};
  out.position = {p.position.x, p.position.y, p.position.z};
  return out;
}
inline XrPosef toXr(const Pose& p) {
  return {{p.orientation[0], p.orientation[1], p.orientation[2], p.orientation[3]},
          {p.position[0], p.position[1], p.position[2]}};
}

inline void eraseHandle(std::vector<uint64_t>& handles, uint64_t handle) {
  handles.erase(std::remove(handles.begin(), handles.end(), handle), handles.end());
}
// xrDestroySpace / xrDestroySwapchain: the child leaves its session's list, then the table.
void destroyChild(Session& session, uint64_t handle);

// The daemon is still there: XR_ERROR_SESSION_LOST once it is gone (after LOSS_PENDING).
XrResult checkConnection(Session& session) XRC_REQUIRES(session.mutex);
// Notices a lost daemon: LOSS_PENDING and instance loss events, once.
void noticeLoss(Session& session) XRC_REQUIRES(session.mutex);
// A call to the daemon failed: a lost connection becomes LOSS_PENDING + XR_ERROR_SESSION_LOST,
// anything else is logged and mapped. `appCallOrder`: a call-order error is the app's mistake
// (XR_ERROR_CALL_ORDER_INVALID, not logged), even once the daemon is gone.
XrResult daemonCallFailed(Session& session, const char* function, const Error& error, bool appCallOrder = false)
    XRC_REQUIRES(session.mutex);
void queueStates(Session& session, const StateList& states);

// LOCAL_FLOOR in STAGE: LOCAL's (gravity-aligned) pose, lowered to the floor, which is STAGE's
// y = 0 plane.
inline Pose localFloorOf(const Pose& localInStage) {
  Pose floor = localInStage;
  floor.position[1] = 0;
  return floor;
}

// Head pose in STAGE at `time`: from a recent waitFrame answer, else one round trip.
XrResult headPoseAt(Session& session, XrTime time, Pose& out) XRC_REQUIRES(session.mutex);
// A space's pose in STAGE at `time`; `located` false for action spaces (nothing bound).
XrResult spaceInStage(Session& session, const Space& space, XrTime time, Pose& out, bool& located)
    XRC_REQUIRES(session.mutex);

}  // namespace xrc::openxr
