#include "simulated_controllers.hpp"

#include <algorithm>
#include <cmath>

#include "../log.hpp"

namespace xrc {

namespace {

const char* handName(uint32_t hand) { return hand == 0 ? "left" : "right"; }

// A controller held in front of the user, at the height of a standing user's hands (STAGE).
Pose restingPose(uint32_t hand) {
  Pose p;
  p.position = {hand == 0 ? -0.2f : 0.2f, 1.2f, -0.4f};
  return p;
}

}  // namespace

Status checkHand(uint32_t hand) {
  if (hand >= kHandCount)
    return makeError(ErrorCode::invalidArgument, "hand {} is neither 0 (left) nor 1 (right)", hand);
  return {};
}

Status checkInputPath(const std::string& path, const char* prefix, const char* what) {
  const std::string_view p(path);
  const bool wellFormed =
      p.size() <= kMaxInputPathLength && p.starts_with(prefix) && p.size() > std::strlen(prefix) && p.back() != '/' &&
      p.find("//") == std::string_view::npos && std::all_of(p.begin(), p.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '/' || c == '-' || c == '.';
      });
  if (!wellFormed) {
    return makeError(ErrorCode::invalidArgument, "{} must be a path under {} of at most {} characters a-z 0-9 _ - . /",
                     what, prefix, kMaxInputPathLength);
  }
  return {};
}

SimulatedControllers::SimulatedControllers() {
  for (uint32_t h = 0; h < kHandCount; ++h) {
    hands_[h].profile = kDefaultProfile;
    hands_[h].grip = restingPose(h);
    hands_[h].aim = restingPose(h);
  }
}

Status SimulatedControllers::setProfile(uint32_t hand, const std::string& profile) {
  if (auto s = checkHand(hand); !s) return s;
  if (profile != "none") {
    if (auto s = checkInputPath(profile, "/interaction_profiles/", "the profile"); !s) return s;
  }
  Lock lock(mutex_);
  HandInput& h = hands_[hand];
  const std::string next = profile == "none" ? "" : profile;
  if (h.profile != next) {
    h.profile = next;
    h.components.clear();
    log::info("simulated {} controller: {}", handName(hand), next.empty() ? "none" : next);
  }
  return {};
}

Status SimulatedControllers::setComponent(uint32_t hand, const std::string& path, float x, float y, int64_t nowNs) {
  if (auto s = checkHand(hand); !s) return s;
  if (auto s = checkInputPath(path, "/input/", "the component"); !s) return s;
  if (!std::isfinite(x) || !std::isfinite(y)) {
    return makeError(ErrorCode::invalidArgument, "the value of {} must be finite", path);
  }
  // Axes (thumbstick, trackpad and their x/y) are -1..1; everything else (clicks, touches,
  // values, forces) 0..1.
  const bool axis = path.find("stick") != std::string::npos || path.find("trackpad") != std::string::npos;
  const float lo = axis ? -1.0f : 0.0f;
  x = std::clamp(x, lo, 1.0f);
  y = std::clamp(y, lo, 1.0f);
  Lock lock(mutex_);
  HandInput& h = hands_[hand];
  if (h.profile.empty()) return makeError(ErrorCode::callOrder, "the {} hand has no controller", handName(hand));
  auto it = std::find_if(h.components.begin(), h.components.end(),
                         [&](const InputComponentState& c) { return c.path == path; });
  if (it == h.components.end()) {
    if (h.components.size() >= kMaxComponentsPerHand) {
      return makeError(ErrorCode::exhausted, "a simulated controller has at most {} components", kMaxComponentsPerHand);
    }
    h.components.push_back(InputComponentState{path, 0, 0, 0});
    it = h.components.end() - 1;
  }
  if (it->x != x || it->y != y) {
    it->x = x;
    it->y = y;
    it->changedNs = nowNs;
  }
  return {};
}

Status SimulatedControllers::setPose(uint32_t hand, const Pose& grip, const Pose& aim) {
  if (auto s = checkHand(hand); !s) return s;
  if (!isValidPose(grip) || !isValidPose(aim)) {
    return makeError(ErrorCode::invalidArgument, "controller poses must be finite with unit quaternions");
  }
  Lock lock(mutex_);
  hands_[hand].grip = grip;
  hands_[hand].aim = aim;
  return {};
}

InputSnapshot SimulatedControllers::snapshot() const {
  InputSnapshot out;
  out.present = true;
  Lock lock(mutex_);
  out.hands = hands_;
  return out;
}

Status SimulatedControllers::haptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
  if (auto s = checkHand(hand); !s) return s;
  if (auto s = checkInputPath(output, "/output/", "the output"); !s) return s;
  if (!std::isfinite(pulse.amplitude) || pulse.amplitude < 0 || pulse.amplitude > 1 ||
      !std::isfinite(pulse.frequency) || pulse.frequency < 0 || pulse.durationNs < -1) {
    return makeError(ErrorCode::invalidArgument,
                     "a haptic pulse needs an amplitude within 0..1, a frequency >= 0 and a duration >= -1");
  }
  Lock lock(mutex_);
  if (hands_[hand].profile.empty())
    return makeError(ErrorCode::unsupported, "the {} hand has no controller", handName(hand));
  HapticStatus& h = haptics_[hand];
  h.pulses++;
  h.last = pulse;
  log::info("haptic pulse on the simulated {} controller's {}: amplitude {:.2f}, {} ns, {:.0f} Hz", handName(hand),
            output, pulse.amplitude, pulse.durationNs, pulse.frequency);
  return {};
}

Status SimulatedControllers::stopHaptic(uint32_t hand, const std::string& output) {
  if (auto s = checkHand(hand); !s) return s;
  if (auto s = checkInputPath(output, "/output/", "the output"); !s) return s;
  Lock lock(mutex_);
  haptics_[hand].stops++;
  return {};
}

std::array<HapticStatus, kHandCount> SimulatedControllers::haptics() const {
  Lock lock(mutex_);
  return haptics_;
}

}  // namespace xrc
