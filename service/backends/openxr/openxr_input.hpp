// The runtime's controllers, forwarded: on the daemon's own session this binds every input and
// output of the standard controller profiles (khr/simple, oculus/touch, valve/index, htc/vive,
// microsoft/motion; as the OpenXR registry lists their components) to actions of one action set,
// syncs them every display frame and reads each hand's current profile, component states (with
// their change times) and grip and aim poses into the InputSnapshot the focused client gets.
// Haptics go back to the runtime on the bound output. Owned by the runtime connection: its
// actions and spaces live on that instance and session.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "openxr_instance.hpp"
#include "xr_util.hpp"
#include "xrc/input.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

class OpenXrInputBinding {
 public:
  // Before the session's first xrSyncActions; `stage` is where poses are located.
  static Result<std::unique_ptr<OpenXrInputBinding>> create(const OpenXrInstance& xr, XrSession session, XrSpace stage);
  OpenXrInputBinding(const OpenXrInstance& xr, XrSession session, XrSpace stage)
      : xr_(xr), session_(session), stage_(stage) {}  // then bind(), as create() does
  ~OpenXrInputBinding();
  OpenXrInputBinding(const OpenXrInputBinding&) = delete;
  OpenXrInputBinding& operator=(const OpenXrInputBinding&) = delete;

  // Display thread, once per frame after xrWaitFrame: xrSyncActions and the states, the poses
  // located at `displayTime`. Not focused (the runtime gives the daemon no input): not present.
  void sync(XrTime displayTime) XRC_EXCLUDES(mutex_);
  InputSnapshot snapshot() const XRC_EXCLUDES(mutex_);  // any thread

  // Any thread: a vibration on `output` ("/output/haptic") of a hand.
  Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse);
  Status stopHaptic(uint32_t hand, const std::string& output);

  struct Component {
    std::string subpath;  // "/input/trigger/value"
    XrActionType type;
    XrAction action = XR_NULL_HANDLE;
  };

 private:
  Status bind();
  bool hasComponent(const std::string& profile, size_t hand, const Component& component) const;

  const OpenXrInstance& xr_;
  XrSession session_;
  XrSpace stage_;
  XrActionSet set_ = XR_NULL_HANDLE;
  std::array<XrPath, kHandCount> hands_{};
  std::vector<Component> components_;  // booleans, floats, vector2s
  XrAction grip_ = XR_NULL_HANDLE, aim_ = XR_NULL_HANDLE, haptic_ = XR_NULL_HANDLE;
  std::array<oxr::SpaceOwner, kHandCount> gripSpaces_, aimSpaces_;

  mutable Mutex mutex_;
  InputSnapshot snapshot_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc
