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
// loop that is late by more than that has missed its vsync anyway).
kj::Promise<void> afterLatch(FrameScheduler& scheduler, kj::Timer& timer, int64_t vsyncNs, int64_t periodNs);

// The wake of a waitFrame answer planned for `wakeNs`, whose frame must follow the display's latch
// of vsync `latchedBeforeNs`. `overtakes` says, when asked, whether the session has a frame that its
// next one could overtake (none before its first endFrame).
//
// Where the wake is that very vsync (no latch lead: the display composes at the vsync itself,
// headless or a window), two threads would wake at the same moment, the RPC thread on its timer
// and the display thread for its select(), and the answer waits for the second. So the display
// thread's select() wakes the answer itself: one wake-up of the RPC thread per frame instead of up
// to two. A timer a quarter period past the wake bounds that wait, and a release before the wake
// (the display went idle meanwhile) still waits for the wake. Elsewhere, and where nothing will
// latch (an idle or stalled display, a latch taken already), a timer wakes it, followed by
// afterLatch().
kj::Promise<void> waitFrameWake(FrameScheduler& scheduler, kj::Timer& timer, int64_t wakeNs, int64_t latchedBeforeNs,
                                int64_t periodNs, kj::Function<bool()> overtakes);

}  // namespace xrc
