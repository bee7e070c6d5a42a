// The refresh period of a runtime that paces the daemon, from each frame's predicted display
// period (XrFrameState::predictedDisplayPeriod): the latest period, except when it is a whole
// multiple (2x, 3x, ...) of a shorter one among the last frames, which is the runtime pacing a
// slow application at a fraction of the display's rate. A runtime's placeholder period for an
// application's first frames (Monado 25: 16 ms whatever the display runs at) gives way at the first
// real one, and a display whose rate really changes is followed at once (a halving of the rate
// only once the faster frames left the window). Pure logic.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>

namespace xrc {

class RefreshTracker {
 public:
  static constexpr size_t kWindow = 32;  // frames: 1.6 s at 20 Hz, 0.36 s at 90 Hz

  // One frame's predicted display period (ns, > 0). Returns the refresh period now.
  int64_t add(int64_t periodNs) {
    periods_.push_back(periodNs);
    if (periods_.size() > kWindow) periods_.pop_front();
    const int64_t shortest = *std::min_element(periods_.begin(), periods_.end());
    const double ratio = double(periodNs) / double(shortest);
    const double multiple = std::round(ratio);
    periodNs_ = multiple >= 2 && std::fabs(ratio - multiple) < 0.05 ? shortest : periodNs;
    return periodNs_;
  }
  int64_t periodNs() const { return periodNs_; }  // 0 before the first frame
  // The last two frames had the same period: past a runtime's placeholder.
  bool settled() const { return periods_.size() >= 2 && periods_.back() == periods_[periods_.size() - 2]; }
  void reset() {
    periods_.clear();
    periodNs_ = 0;
  }

 private:
  std::deque<int64_t> periods_;
  int64_t periodNs_ = 0;
};

}  // namespace xrc
