// Rigid poses (unit quaternion + position) and the little math that spaces need. Shared by the
// daemon (backends publish head poses), the client library and the OpenXR face (which locates
// spaces relative to each other without asking the daemon).
#pragma once

#include <array>
#include <cmath>

namespace xrc {

struct Pose {
  std::array<float, 4> orientation{0, 0, 0, 1};  // x y z w
  std::array<float, 3> position{0, 0, 0};
};

// One view of the display at a moment: where the eye is in the head, and what it sees.
struct EyeView {
  Pose eyeInHead;
  std::array<float, 4> fov{};  // angleLeft angleRight angleUp angleDown (radians)
};

// Valid as OpenXR requires of a pose given to it: finite, and a quaternion of unit length
// (within 1%, as the OpenXR core validation layer tolerates).
inline bool isValidPose(const Pose& p) {
  float norm = 0;
  for (float c : p.orientation) {
    if (!std::isfinite(c)) return false;
    norm += c * c;
  }
  for (float c : p.position) {
    if (!std::isfinite(c)) return false;
  }
  return std::fabs(norm - 1.0f) <= 0.01f;
}

inline std::array<float, 4> quatMultiply(const std::array<float, 4>& a, const std::array<float, 4>& b) {
  return {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1], a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
          a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3], a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
}

inline std::array<float, 3> quatRotate(const std::array<float, 4>& q, const std::array<float, 3>& v) {
  // v' = v + 2w(u x v) + 2u x (u x v), u = q.xyz
  const std::array<float, 3> u{q[0], q[1], q[2]};
  const std::array<float, 3> t{2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
                               2 * (u[0] * v[1] - u[1] * v[0])};
  return {v[0] + q[3] * t[0] + (u[1] * t[2] - u[2] * t[1]), v[1] + q[3] * t[1] + (u[2] * t[0] - u[0] * t[2]),
          v[2] + q[3] * t[2] + (u[0] * t[1] - u[1] * t[0])};
}

inline std::array<float, 4> normalized(std::array<float, 4> q) {
  const float n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0) {
    for (float& c : q) c /= n;
  }
  return q;
}

// `aInB` then `bInC` gives `aInC`: compose(bInC, aInB).
inline Pose compose(const Pose& bInC, const Pose& aInB) {
  Pose out;
  out.orientation = normalized(quatMultiply(bInC.orientation, aInB.orientation));
  const auto rotated = quatRotate(bInC.orientation, aInB.position);
  for (int i = 0; i < 3; ++i) out.position[size_t(i)] = rotated[size_t(i)] + bInC.position[size_t(i)];
  return out;
}

inline Pose inverse(const Pose& p) {
  Pose out;
  out.orientation = {-p.orientation[0], -p.orientation[1], -p.orientation[2], p.orientation[3]};
  const auto rotated = quatRotate(out.orientation, p.position);
  out.position = {-rotated[0], -rotated[1], -rotated[2]};
  return out;
}

}  // namespace xrc
