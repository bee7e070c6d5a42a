// When a waitFrame answer may leave (KJ thread): at the wake the FramePacer planned, but not
// before the display has latched the frame before the one it hands out. A client woken before
// that latch could commit its next frame first and supersede the frame that was due
// (FrameScheduler::whenLatched).
#pragma once

#include <kj/async.h>
#include <kj/function.h>
#include <kj/timer.h>

#include <cstdint>

#include "../compositor/frame_scheduler.hpp"

namespace xrc {

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
// "Side by side with Monado"): no CPU saved, and in sanitized builds on a loaded machine the
// answers reached clients later more often; not kept.
kj::Promise<void> waitFrameWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                                int64_t periodNs, kj::Function<bool()> overtakes);

}  // namespace xrc
