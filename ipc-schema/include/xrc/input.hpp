// Controller input as the daemon publishes it with each frame's timing (xrc.capnp InputState):
// per hand, the device's interaction profile, the components that are not at rest, and the grip
// and aim poses. Shared by the daemon's backends and the client library.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pose.hpp"

namespace xrc {

enum class Hand : uint8_t { left = 0, right = 1 };
inline constexpr size_t kHandCount = 2;

struct InputComponentState {
  std::string path;  // relative to the hand: "/input/select/click"
  float x = 0, y = 0;
  int64_t changedNs = 0;  // CLOCK_MONOTONIC
};

struct HandInput {
  std::string profile;  // "/interaction_profiles/..."; empty: no device in this hand
  std::vector<InputComponentState> components;
  std::optional<Pose> grip, aim;  // in STAGE

  const InputComponentState* component(const std::string& path) const {
    for (const auto& c : components) {
      if (c.path == path) return &c;
    }
    return nullptr;
  }
};

struct InputSnapshot {
  std::array<HandInput, kHandCount> hands;
  bool present = false;  // false: no input was published (an unfocused session, an older daemon)
};

struct HapticPulse {
  int64_t durationNs = -1;  // -1: the device's minimum
  float frequency = 0;      // 0: the device's default
  float amplitude = 0;      // 0..1
};

struct HapticStatus {
  uint64_t pulses = 0, stops = 0;
  HapticPulse last;
};

// Limits of what a client or an operator may publish (simulated controllers).
inline constexpr size_t kMaxInputPathLength = 128;
inline constexpr size_t kMaxComponentsPerHand = 64;

}  // namespace xrc
