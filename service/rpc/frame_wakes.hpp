// When a waitFrame answer may leave (KJ thread): at the wake the FramePacer planned, but not
// before the display has latched the frame before the one it hands out. A client woken before
// that latch could commit its next frame first and supersede the frame that was due
// (FrameScheduler::whenLatched).
#pragma once

#include <kj/async.h>
#include <kj/function.h>
#include <kj/timer.h>

#include <cstdint>

#include "../backends/backend.hpp"
#include "../compositor/frame_scheduler.hpp"

namespace xrc {

// A timer at `ns` on CLOCK_MONOTONIC (monotonicNowNs()). KJ's event loop reads that clock for its
// timer (kj::systemPreciseMonotonicClock), so the deadline is a TimePoint that far from KJ's
// origin. A delay (afterDelay) counts from the timer's reading at the start of the event loop's
// turn instead, and so fires early by however long the turn had run: a second wake-up to wait
// out the rest.
inline kj::Promise<void> atMonotonicNs(kj::Timer& timer, int64_t ns) {
  return timer.atTime(kj::origin<kj::TimePoint>() + ns * kj::NANOSECONDS);
}

// When the daemon's periodic housekeeping (hung-client checks, the connection sweep) next runs,
// at most `intervalNs` after `nowNs`: the next vsync of `clock` on a grid of whole periods about
// `intervalNs` apart, counted from the clock's origin. A headless display's waitFrame answers
// leave at its vsyncs, so the housekeeping shares their wake-up of the event loop, and timers of
// one interval share theirs, instead of each waking it on its own.
inline int64_t housekeepingWakeNs(const DisplayClock& clock, int64_t nowNs, int64_t intervalNs) {
  if (clock.periodNs <= 0 || clock.periodNs >= intervalNs || nowNs < clock.originNs) return nowNs + intervalNs;
  const int64_t step = intervalNs / clock.periodNs * clock.periodNs;
  return clock.originNs + ((nowNs - clock.originNs) / step + 1) * step;
}

// Once the display has latched vsync `vsyncNs`: at once in the usual case, else when the display
// thread's select() says so, and never more than a quarter of a display period late (a display
// loop that is late by more than that has missed its vsync anyway). A display that latches on
// demand (FrameScheduler::latchesOnDemand) is latched here, once the vsync has come.
kj::Promise<void> afterLatch(FrameScheduler& scheduler, kj::Timer& timer, int64_t vsyncNs, int64_t periodNs);

// The wake of a waitFrame answer planned for `wakeNs`, whose frame must follow the display's latch
// of vsync `latchedBeforeNs`: a timer at the wake, then afterLatch(). `overtakes` says, when
// asked at the wake, whether the session has a frame that its next one could overtake (none
// before its first endFrame; an endFrame may come in while the wait is pending).
//
// Where the display latches at the vsync itself (headless, a window), the wake and the latch are
// the same moment on two threads, and the answer waits for whichever comes second. Letting the
// display thread's select() wake the answer instead of the timer was measured (docs/BENCHMARKS.md,
// "On the 2-core VM: the price of a wake-up"): no CPU saved, and in sanitized builds on a loaded machine the
// answers reached clients later more often; not kept.
kj::Promise<void> waitFrameWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                                int64_t periodNs, kj::Function<bool()> overtakes);

}  // namespace xrc
