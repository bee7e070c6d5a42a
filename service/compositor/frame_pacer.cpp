#include "frame_pacer.hpp"

#include <algorithm>
#include <cmath>

namespace xrc {

namespace {
constexpr double kWorkSmoothing = 0.2;   // weight of the newest sample in the moving average
constexpr double kSlowDownMargin = 0.9;  // work above 90% of the budget: one more period
constexpr double kSpeedUpMargin = 0.7;   // work below 70% of a shorter budget: one period less
constexpr uint32_t kMaxPeriods = 8;      // slower clients are paced as if at 1/8 of the rate
// Targets at most one period beyond the cadence's: the display keeps one queued frame per client
// (a newer one supersedes it), and the headless display's runtime swapchains have three images
// (shown, queued, being copied into).
constexpr uint32_t kMaxDepth = 1;
}  // namespace

void FramePacer::renderingWaited(int64_t waitNs) {
  const double wait = double(std::max<int64_t>(0, waitNs));
  renderingWaitEmaNs_ =
      renderingWaitEmaNs_ == 0 ? wait : renderingWaitEmaNs_ + kWorkSmoothing * (wait - renderingWaitEmaNs_);
}

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
  // From the wake to the frame's commit: the client's work, then (timeline mode) the wait for its
  // rendering. Beyond 90 % of the time to the target's latch the target moves a period further;
  // below 70 % of one period less it comes back.
  if (renderingWaitEmaNs_ > 0) {
    const double reach = workEmaNs_ + renderingWaitEmaNs_;
    const auto ahead = [&](uint32_t depth) { return double(budget + int64_t(depth) * period); };
    if (reach > kSlowDownMargin * ahead(depth_) && depth_ < kMaxDepth) {
      const double needed = std::ceil((reach / kSlowDownMargin - double(budget)) / double(period));
      depth_ = uint32_t(std::clamp<double>(needed, depth_ + 1, kMaxDepth));
    } else if (depth_ > 0 && reach < kSpeedUpMargin * ahead(depth_ - 1)) {
      depth_--;
    }
  }
  // The earliest target the client can still make from now, and the cadence's next slot. A frame
  // for vsync V is due when the display latches it, `latchLeadNs` before V.
  const int64_t lead = std::max<int64_t>(0, clock.latchLeadNs);
  int64_t base = clock.nextVsyncAfter(nowNs + lead) + budget;
  if (lastBaseNs_ != 0) base = std::max(base, lastBaseNs_ + budget);
  // Keep targets on the cadence's grid when the client fell behind by more than a slot.
  if (lastBaseNs_ != 0 && (base - lastBaseNs_) % budget != 0) {
    base = lastBaseNs_ + ((base - lastBaseNs_) / budget + 1) * budget;
  }
  lastBaseNs_ = base;
  Plan plan{base + int64_t(depth_) * period, base - lead - budget, periods_};
  lastWakeNs_ = std::max(nowNs, plan.wakeNs);
  return plan;
}

}  // namespace xrc
