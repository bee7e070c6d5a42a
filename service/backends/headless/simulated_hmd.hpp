// The headless output's headset: a simulated stereo HMD whose head rests at LOCAL's origin (or
// turns to and fro, for tests of pose timing and reprojection), with two simulated controllers
// an operator drives (xr-compositorctl input).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../../display/headset.hpp"
#include "../../input/simulated_controllers.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

struct SimulatedHmdOptions {
  uint32_t viewCount = 2;
  uint32_t viewWidth = 1440;
  uint32_t viewHeight = 1600;
  double refreshHz = 90.0;
  float eyeHeight = 1.6f;  // meters above the stage floor; the head stays there, looking down -z
  float ipd = 0.063f;      // meters between the two eyes (stereo)
  // The head turns left and right (yaw, kSwayAmplitude radians every kSwayPeriod), a function of
  // the time asked for: lets tests tell a pose located at one time from another.
  bool headSway = false;
  // What the simulated display offers, preferred first. Its environment is black, so the three
  // modes compose alike; the mode of each display frame shows in the status.
  std::vector<EnvironmentBlendMode> environmentBlendModes{EnvironmentBlendMode::opaque};
};

class SimulatedHmd final : public display::Headset {
 public:
  // Symmetric 90-degree fields of view.
  static constexpr float kTanHalfFov = 1.0f;

  explicit SimulatedHmd(const SimulatedHmdOptions& options);

  const SystemInfo& systemInfo() const override { return system_; }
  Pose headPoseAt(int64_t timeNs) const override;
  LocalSpace localSpace() const override XRC_EXCLUDES(localMutex_);
  // LOCAL moves to the head: its position, and its heading (yaw) only, so LOCAL stays level.
  Status recenter() override XRC_EXCLUDES(localMutex_);
  SimulatedControllers* simulatedControllers() override { return &controllers_; }

 private:
  SimulatedHmdOptions options_;
  SystemInfo system_;
  SimulatedControllers controllers_;
  mutable Mutex localMutex_;
  std::optional<LocalSpace> local_ XRC_GUARDED_BY(localMutex_);  // none: never recentered
};

}  // namespace xrc
