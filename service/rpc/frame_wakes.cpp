#include "frame_wakes.hpp"

#include <algorithm>

#include "../common/cross_thread_answer.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {

namespace {

// Resolves once `scheduler` says the display latched vsync `vsyncNs` (or went idle); false where
// there is nothing to wait for (FrameScheduler::whenLatched).
kj::Maybe<kj::Promise<void>> latchOf(FrameScheduler& scheduler, int64_t vsyncNs, int64_t periodNs) {
  auto latched = crossThreadAnswer<void>();  // fulfilled on the display thread
  if (!scheduler.whenLatched(vsyncNs, periodNs, latched.fulfil)) return nullptr;
  return kj::mv(latched.promise);
}

kj::Promise<void> atWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                         int64_t periodNs, kj::Function<bool()> overtakes) {
  return timer.afterDelay(std::max<int64_t>(0, wakeNs - monotonicNowNs()) * kj::NANOSECONDS)
      .then([&scheduler, &timer, latchedBeforeNs, periodNs, overtakes = kj::mv(overtakes)]() mutable {
        if (!overtakes()) return kj::Promise<void>(kj::READY_NOW);
        return afterLatch(scheduler, timer, latchedBeforeNs, periodNs);
      });
}

}  // namespace

kj::Promise<void> afterLatch(FrameScheduler& scheduler, kj::Timer& timer, int64_t vsyncNs, int64_t periodNs) {
  // The first test allocates nothing in the usual case, where the display latched long ago.
  if (!scheduler.latchPending(vsyncNs, periodNs)) return kj::READY_NOW;
  KJ_IF_MAYBE (latched, latchOf(scheduler, vsyncNs, periodNs)) {
    return latched->exclusiveJoin(timer.afterDelay(periodNs / 4 * kj::NANOSECONDS));
  }
  return kj::READY_NOW;
}

kj::Promise<void> waitFrameWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                                int64_t periodNs, kj::Function<bool()> overtakes) {
  if (wakeNs != latchedBeforeNs || !overtakes()) {
    return atWake(scheduler, timer, wakeNs, latchedBeforeNs, periodNs, kj::mv(overtakes));
  }
  KJ_IF_MAYBE (latched, latchOf(scheduler, latchedBeforeNs, periodNs)) {
    const int64_t boundNs = std::max<int64_t>(0, wakeNs + periodNs / 4 - monotonicNowNs());
    return latched->exclusiveJoin(timer.afterDelay(boundNs * kj::NANOSECONDS))
        .then([&scheduler, &timer, wakeNs, latchedBeforeNs, periodNs, overtakes = kj::mv(overtakes)]() mutable {
          if (monotonicNowNs() >= wakeNs) return kj::Promise<void>(kj::READY_NOW);
          return atWake(scheduler, timer, wakeNs, latchedBeforeNs, periodNs, kj::mv(overtakes));
        });
  }
  return atWake(scheduler, timer, wakeNs, latchedBeforeNs, periodNs, kj::mv(overtakes));
}

}  // namespace xrc
