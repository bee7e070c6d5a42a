// The head the display core composes for (think Monado's xrt_device for the HMD): what the
// display is (views, refresh, stage, blend modes), where the head is at a time, LOCAL, and the
// controllers that come with it. The headless output's simulated HMD is one; a direct-to-headset
// output would wrap its tracker the same way.
#pragma once

#include <cstdint>

#include "../backends/backend.hpp"
#include "xrc/pose.hpp"
#include "xrc/result.hpp"

namespace xrc {
class SimulatedControllers;
}

namespace xrc::display {

class Headset {
 public:
  virtual ~Headset() = default;
  virtual const SystemInfo& systemInfo() const = 0;
  // Any thread, without waiting: the head's (predicted) pose in STAGE at `timeNs`.
  virtual Pose headPoseAt(int64_t timeNs) const = 0;
  // Any thread: LOCAL as of now.
  virtual LocalSpace localSpace() const = 0;
  // Any thread: moves LOCAL to the head (a recenter).
  virtual Status recenter() = 0;
  // Controllers an operator drives; null where the headset has none of its own.
  virtual SimulatedControllers* simulatedControllers() = 0;
};

}  // namespace xrc::display
