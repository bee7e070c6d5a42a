#include "simulated_hmd.hpp"

#include <algorithm>
#include <cmath>

#include "../../log.hpp"
#include "xrc/protocol_rules.hpp"

namespace xrc {

namespace {
// A turn by `yaw` radians about +y (the stage's up), as a quaternion.
std::array<float, 4> yawRotation(double yaw) { return {0.f, float(std::sin(yaw / 2)), 0.f, float(std::cos(yaw / 2))}; }
}  // namespace

SimulatedHmd::SimulatedHmd(const SimulatedHmdOptions& options) : options_(options) {
  system_.backendName = "headless";
  system_.environmentBlendModes = options_.environmentBlendModes;
  system_.refreshHz = options_.refreshHz;
  const float halfFov = std::atan(kTanHalfFov);
  for (uint32_t i = 0; i < options_.viewCount; ++i) {
    // The largest view rect: twice the recommended size (as headset runtimes offer for
    // supersampling), not the 8192 a swapchain may have, so an app that renders at the maximum
    // does not make the daemon allocate and copy gigabytes per swapchain.
    ViewInfo view{options_.viewWidth,
                  options_.viewHeight,
                  std::min(2 * options_.viewWidth, kMaxExtent),
                  std::min(2 * options_.viewHeight, kMaxExtent),
                  {},
                  {},
                  {}};
    view.fov = {-halfFov, halfFov, halfFov, -halfFov};
    // Stereo eyes half an IPD left and right of the head.
    if (options_.viewCount == 2) view.eyeInHead.position[0] = (i == 0 ? -0.5f : 0.5f) * options_.ipd;
    system_.views.push_back(view);
  }
  system_.localInStage.position = {0, options_.eyeHeight, 0};
  system_.stageBoundsWidth = 4;
  system_.stageBoundsDepth = 4;
}

LocalSpace SimulatedHmd::localSpace() const {
  Lock lock(localMutex_);
  return local_.value_or(LocalSpace{system_.localInStage, 0});
}

Status SimulatedHmd::recenter() {
  const Pose head = headPoseAt(monotonicNowNs());
  // Heading: the yaw of the head's forward (-z) direction, projected on the floor.
  const auto forward = quatRotate(head.orientation, {0.f, 0.f, -1.f});
  const float yaw = std::atan2(-forward[0], -forward[2]);
  LocalSpace next;
  next.localInStage.orientation = yawRotation(yaw);
  next.localInStage.position = head.position;
  Lock lock(localMutex_);
  next.changes = local_ ? local_->changes + 1 : 1;
  local_ = next;
  log::info("recentered: LOCAL is now at ({:.3f}, {:.3f}, {:.3f}) in STAGE, heading {:.3f} rad", head.position[0],
            head.position[1], head.position[2], yaw);
  return {};
}

Pose SimulatedHmd::headPoseAt(int64_t timeNs) const {
  Pose head = system_.localInStage;
  if (!options_.headSway) return head;
  // yaw(t) = A sin(2 pi t / T), in double: t is nanoseconds since boot.
  constexpr double kSwayAmplitude = 0.3;  // radians, about 17 degrees
  constexpr double kSwayPeriodNs = 4e9;
  const double phase = std::fmod(double(timeNs), kSwayPeriodNs) / kSwayPeriodNs;
  const double yaw = kSwayAmplitude * std::sin(2.0 * M_PI * phase);
  head.orientation = yawRotation(yaw);
  return head;
}

}  // namespace xrc
