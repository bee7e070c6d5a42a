// A KJ event loop on the test's thread whose timer moves only when the test says so, for code
// that waits on a kj::Timer (copy batching, waitFrame wakes).
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include "xrc/monotonic_clock.hpp"

namespace xrc::test {

struct ManualTimerLoop {
  kj::EventLoop loop;
  kj::WaitScope waitScope{loop};
  // Starts at CLOCK_MONOTONIC's now, as the daemon's event loop's timer reads that clock.
  kj::TimerImpl timer{kj::origin<kj::TimePoint>() + monotonicNowNs() * kj::NANOSECONDS};
  // Moves the clock on by `by` and runs what became ready.
  void advance(kj::Duration by) {
    timer.advanceTo(timer.now() + by);
    waitScope.poll();
  }
};

}  // namespace xrc::test
