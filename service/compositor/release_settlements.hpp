// Settlements of releases answered before their copy (1.13, timeline mode: an endFrame's releases
// are answered once accepted, so that the client's next frame does not wait for its own
// rendering). Each release settles later, once its copy or pass-through is submitted or it failed,
// and its settlement waits here for the session's next frame timing (or settleReleases answer):
// the client acquires that image again only once it has it, so its GPU never waits for a
// copying_done signal that was not submitted.
//
// Bounded: a client following the protocol has a frame timing between any two endFrames, so few
// wait here. One that does not cannot make the daemon keep them without end: past kMaxKept the
// oldest are dropped (that client's acquire of those images then times out) and counted.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "xrc/result.hpp"

namespace xrc {

class ReleaseSettlements {
 public:
  struct Settlement {
    uint32_t swapchainId = 0;
    uint32_t index = 0;
    Status status;
  };
  static constexpr size_t kMaxKept = 1024;

  // A release answered early was accepted; its settlement is still to come.
  void accepted() { unsettled_++; }
  // It settled: kept for the next take.
  void settled(uint32_t swapchainId, uint32_t index, Status status);
  // Everything settled since the last take, oldest first; empties the log.
  std::vector<Settlement> take();
  // Releases answered early whose settlement has not come yet.
  uint32_t unsettled() const { return unsettled_; }
  // Settlements dropped over kMaxKept since the daemon started.
  uint64_t dropped() const { return dropped_; }

 private:
  std::deque<Settlement> kept_;
  uint32_t unsettled_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace xrc
