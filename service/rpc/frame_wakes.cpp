#include "frame_wakes.hpp"

#include <algorithm>

#include "../common/cross_thread_answer.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {

namespace {

// Resolves once `scheduler` says the display latched vsync `vsyncNs` (or went idle); false where
// there is nothing to wait for (FrameScheduler::whenLatched).
kj::Maybe<kj::Promise<void>> latchOf(FrameScheduler& scheduler, int64_t vsyncNs, int64_t periodNs) {
  // The first test allocates nothing in the usual case (the display latched long ago, or is idle).
  if (!scheduler.latchPending(vsyncNs, periodNs)) return nullptr;
  auto latched = crossThreadAnswer<void>();  // fulfilled on the display thread
  if (!scheduler.whenLatched(vsyncNs, periodNs, latched.fulfil)) return nullptr;
  // A waiter dropped unanswered (the scheduler gone first, at shutdown) counts as a release: the
  // wake's own checks follow, and the answer does not fail.
  return latched.promise.catch_([](kj::Exception&&) {});
}

}  // namespace

kj::Promise<void> afterLatch(FrameScheduler& scheduler, kj::Timer& timer, int64_t vsyncNs, int64_t periodNs) {
  if (scheduler.latchesOnDemand()) {
    // Nobody latches at the vsync itself: this wake does, once the vsync has come.
    if (vsyncNs > monotonicNowNs()) {
      return atMonotonicNs(timer, vsyncNs).then([&scheduler, &timer, vsyncNs, periodNs] {
        return afterLatch(scheduler, timer, vsyncNs, periodNs);
      });
    }
    scheduler.latchDue();  // then nothing is pending, unless the display is stalled
  }
  KJ_IF_MAYBE (latched, latchOf(scheduler, vsyncNs, periodNs)) {
    return latched->exclusiveJoin(timer.afterDelay(periodNs / 4 * kj::NANOSECONDS));
  }
  return kj::READY_NOW;
}

kj::Promise<void> waitFrameWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                                int64_t periodNs, kj::Function<bool()> overtakes) {
  return atMonotonicNs(timer, wakeNs)
      .then([&scheduler, &timer, latchedBeforeNs, periodNs, overtakes = kj::mv(overtakes)]() mutable {
        if (!overtakes()) return kj::Promise<void>(kj::READY_NOW);
        return afterLatch(scheduler, timer, latchedBeforeNs, periodNs);
      });
}

}  // namespace xrc
