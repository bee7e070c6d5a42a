// The refresh period of a runtime that paces the daemon, from each frame's predicted display
// period (XrFrameState::predictedDisplayPeriod): the latest period, except when it is a whole
// multiple (2x, 3x, ...) of the refresh period tracked so far, which is the runtime pacing a slow
// application at a fraction of the display's rate. A runtime's placeholder period for an
// application's first frames (Monado 25: 16 ms whatever the display runs at) gives way at the
// first real one, and a display whose rate really changes to another rate is followed at once.
//
// A change to exactly a fraction of the rate is taken for pacing however long it lasts: the
// runtime does not say which it is, and the daemon's latch wait is bounded by half this period
// after xrWaitFrame. Taking the multiple for the rate would lengthen that wait to half the
// throttled period, which the runtime counts as the daemon's work, so it would keep pacing the
// daemon at the fraction after the load that slowed it is gone. Holding the shorter period
// costs, on a display that really halved its rate, a latch earlier than needed. Pure logic.
#pragma once

#include <cmath>
#include <cstdint>

namespace xrc {

class RefreshTracker {
 public:
  // One frame's predicted display period (ns, > 0). Returns the refresh period now.
  int64_t add(int64_t periodNs) {
    previousNs_ = latestNs_;
    latestNs_ = periodNs;
    if (periodNs_ > 0) {
      const double ratio = double(periodNs) / double(periodNs_);
      const double multiple = std::round(ratio);
      if (multiple >= 2 && std::fabs(ratio - multiple) < 0.05) return periodNs_;
    }
    periodNs_ = periodNs;
    return periodNs_;
  }
  int64_t periodNs() const { return periodNs_; }  // 0 before the first frame
  // The last two frames had the same period: past a runtime's placeholder.
  bool settled() const { return previousNs_ != 0 && previousNs_ == latestNs_; }
  void reset() { *this = RefreshTracker{}; }

 private:
  int64_t periodNs_ = 0;
  int64_t latestNs_ = 0, previousNs_ = 0;
};

}  // namespace xrc
