// The clock of the wire contract: every time on the wire (predicted display times, XrTime) is
// CLOCK_MONOTONIC in nanoseconds, read the same way by the daemon, client-lib and the tests.
#pragma once

#include <time.h>

#include <cstdint>

namespace xrc {

inline int64_t monotonicNowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace xrc
