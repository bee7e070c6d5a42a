// Failures of releases that were answered before their copy (1.13, timeline mode: an endFrame's
// releases are answered once accepted, so that the client's next frame does not wait for its own
// rendering). A failure found later (rendering unfinished after hung_client_timeout_ms, the
// swapchain destroyed first, a failed copy) waits here for the session's next frame timing.
// Bounded: a client that never asks for frame timing cannot make the daemon keep failures without
// end; past kMaxKept the oldest are dropped and counted.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "xrc/result.hpp"

namespace xrc {

class ReleaseFailures {
 public:
  struct Failure {
    uint32_t swapchainId = 0;
    uint32_t index = 0;
    Error error;
  };
  struct Taken {
    std::vector<Failure> failures;  // oldest first
    uint32_t dropped = 0;           // older failures dropped since the last take
  };
  static constexpr size_t kMaxKept = 64;

  void add(uint32_t swapchainId, uint32_t index, Error error);
  // Everything kept, and the count dropped, since the last take; empties the log.
  Taken take();
  bool empty() const { return kept_.empty() && dropped_ == 0; }

 private:
  std::deque<Failure> kept_;
  uint32_t dropped_ = 0;
};

}  // namespace xrc
