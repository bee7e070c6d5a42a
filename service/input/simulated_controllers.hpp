// Two simulated controllers for displays without real ones (headless): what an operator or a
// test script sets with `xr-compositorctl input ...` is what the focused client reads, so the whole
// input path (daemon -> client-lib -> OpenXR actions) runs without hardware, and a daemon stacked
// over this one forwards them like a headset's. Haptic pulses sent to them are counted (status)
// and logged. Any thread.
#pragma once

#include <array>
#include <string>

#include "xrc/input.hpp"
#include "xrc/result.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

class SimulatedControllers {
 public:
  static constexpr const char* kDefaultProfile = "/interaction_profiles/khr/simple_controller";

  SimulatedControllers();

  // `profile` "/interaction_profiles/<vendor>/<name>" gives the hand that device (its components
  // go back to rest); "none" takes it away.
  Status setProfile(uint32_t hand, const std::string& profile) XRC_EXCLUDES(mutex_);
  // A component relative to the hand ("/input/select/click", "/input/thumbstick"): x (and y for a
  // vector2). Values must be finite; clicks and triggers are clamped to 0..1, axes to -1..1.
  Status setComponent(uint32_t hand, const std::string& path, float x, float y, int64_t nowNs) XRC_EXCLUDES(mutex_);
  Status setPose(uint32_t hand, const Pose& grip, const Pose& aim) XRC_EXCLUDES(mutex_);
  InputSnapshot snapshot() const XRC_EXCLUDES(mutex_);

  Status haptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) XRC_EXCLUDES(mutex_);
  Status stopHaptic(uint32_t hand, const std::string& output) XRC_EXCLUDES(mutex_);
  std::array<HapticStatus, kHandCount> haptics() const XRC_EXCLUDES(mutex_);

 private:
  mutable Mutex mutex_;
  std::array<HandInput, kHandCount> hands_ XRC_GUARDED_BY(mutex_);
  std::array<HapticStatus, kHandCount> haptics_ XRC_GUARDED_BY(mutex_);
};

// Checks shared by the simulated controllers and the session's haptic calls: a hand index, and a
// path of lower-case letters, digits, '_' and '/' segments starting with `prefix`.
Status checkHand(uint32_t hand);
Status checkInputPath(const std::string& path, const char* prefix, const char* what);

}  // namespace xrc
