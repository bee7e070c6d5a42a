// The refresh period of a runtime that paces the daemon: the shortest display period (XrFrameState
// predictedDisplayPeriod) among its last frames. Runtimes may give an application's first frames a
// placeholder period (Monado 25: 16 ms whatever the display runs at) and may pace a slow
// application at a multiple of the refresh period; the minimum over a window of recent frames
// ignores both once they pass, and follows a display whose rate really changes. Pure logic.
#pragma once

#include <algorithm>
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
    return periodNs_ = *std::min_element(periods_.begin(), periods_.end());
  }
  int64_t periodNs() const { return periodNs_; }  // 0 before the first frame
  void reset() {
    periods_.clear();
    periodNs_ = 0;
  }

 private:
  std::deque<int64_t> periods_;
  int64_t periodNs_ = 0;
};

}  // namespace xrc
