// A wake-up of the KJ event loop at an absolute CLOCK_MONOTONIC time, to within the kernel's timer
// slack (tens of µs). KJ's own timer gives epoll_wait its timeout in whole milliseconds, rounded
// up, so it fires up to a millisecond late: too coarse for a let-go that must come a given number
// of µs before the display's latch (CopyBatch). A timerfd armed at the absolute time, watched by
// the event loop like any fd, has no such rounding and no drift from the loop's turn.
// KJ thread only; one wake-up pending at a time.
#pragma once

#include <kj/async-io.h>
#include <kj/async.h>

#include <cstdint>
#include <memory>

#include "xrc/result.hpp"

namespace xrc {

class MonotonicAlarm {
 public:
  // Its timerfd watched by `io`'s event loop, which must outlive the alarm.
  static Result<std::shared_ptr<MonotonicAlarm>> create(kj::LowLevelAsyncIoProvider& io);
  explicit MonotonicAlarm(kj::Own<kj::AsyncInputStream> expirations, int fd)
      : expirations_(kj::mv(expirations)), fd_(fd) {}

  // Resolves at `ns` (monotonicNowNs()'s clock), at once if that has passed. A call while an
  // earlier wake-up is pending fails; dropping the promise cancels the wake-up. The alarm must
  // outlive the promise (CopyBatch attaches its shared_ptr to it).
  kj::Promise<void> at(int64_t ns);

 private:
  kj::Own<kj::AsyncInputStream> expirations_;  // owns the timerfd
  int fd_;                                     // the timerfd, to arm
  uint64_t expirationCount_ = 0;               // read from the timerfd
  bool pending_ = false;
};

}  // namespace xrc
