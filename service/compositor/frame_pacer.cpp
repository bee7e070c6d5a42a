#include "frame_pacer.hpp"

#include <algorithm>
#include <cmath>

namespace xrc {

namespace {
constexpr double kWorkSmoothing = 0.2;   // weight of the newest sample in the moving average
constexpr double kSlowDownMargin = 0.9;  // work above 90% of the budget: one more period
constexpr double kSpeedUpMargin = 0.7;   // work below 70% of a shorter budget: one period less
constexpr uint32_t kMaxPeriods = 8;      // slower clients are paced as if at 1/8 of the rate
}  // namespace

FramePacer::Plan FramePacer::next(int64_t nowNs, const DisplayClock& clock) {
  const int64_t period = clock.periodNs;
  if (lastWakeNs_ != 0 && nowNs > lastWakeNs_) {
    const double work = double(nowNs - lastWakeNs_);
    workEmaNs_ = workEmaNs_ == 0 ? work : workEmaNs_ + kWorkSmoothing * (work - workEmaNs_);
    if (workEmaNs_ > kSlowDownMargin * double(periods_ * period) && periods_ < kMaxPeriods) {
      periods_ = std::min<uint32_t>(kMaxPeriods, uint32_t(std::ceil(workEmaNs_ / kSlowDownMargin / double(period))));
    } else if (periods_ > 1 && workEmaNs_ < kSpeedUpMargin * double((periods_ - 1) * period)) {
      periods_--;
    }
  }
  const int64_t budget = int64_t(periods_) * period;
  // The earliest target the client can still make from now: a frame for vsync V is due when the
  // display latches it, `latchLeadNs` before V.
  int64_t predicted = clock.nextLatchedVsyncAfter(nowNs) + budget;
  if (lastPredictedNs_ != 0) {
    // The cadence: the first of its slots (whole budgets after the previous target) the client can
    // make, so that a client that fell behind keeps its rhythm. Then the vsync of the clock as it
    // is now at that slot. Over another runtime the display's vsyncs move (the runtime gives the
    // daemon every other one while its frames run long, or shifts it by one of its periods); a
    // target left between them would be latched at the one after, and by then the client's next
    // frame (woken by the latch wait's bound, afterLatch) would have superseded it: frame after
    // frame dropped. A vsync within a quarter period before the slot is the slot itself: a
    // runtime's predicted display times jitter from frame to frame, and taking the next vsync
    // would cost the client a frame.
    const int64_t tolerance = period / 4;
    const int64_t slots = std::max<int64_t>(1, (predicted - lastPredictedNs_ - tolerance + budget - 1) / budget);
    const int64_t slot = lastPredictedNs_ + slots * budget;
    const int64_t after = clock.nextVsyncAfter(slot - 1);
    predicted = slot - (after - period) <= tolerance ? after - period : after;
  }
  lastPredictedNs_ = predicted;
  Plan plan{predicted, predicted - clock.leadNs() - budget, periods_};
  lastWakeNs_ = std::max(nowNs, plan.wakeNs);
  return plan;
}

}  // namespace xrc
