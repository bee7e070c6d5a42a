// A KJ event loop on the test's thread whose timer moves only when the test says so, for code
// that waits on a kj::Timer (copy batching, waitFrame wakes).
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

namespace xrc::test {

struct ManualTimerLoop {
  kj::EventLoop loop;
  kj::WaitScope waitScope{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};
  // Moves the clock on by `by` and runs what became ready.
  void advance(kj::Duration by) {
    timer.advanceTo(timer.now() + by);
    waitScope.poll();
  }
};

}  // namespace xrc::test
