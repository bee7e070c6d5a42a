// Settlements of releases answered before their copy (1.13, timeline mode: an endFrame's releases
// are answered once accepted, so that the client's next frame does not wait for its own
// rendering). Each release settles later, once its copy or pass-through is submitted or it failed,
// and its settlement waits here for the session's next frame timing (or settleReleases answer):
// the client acquires that image again only once it has it, so its GPU never waits for a
// copying_done signal that was not submitted.
//
// Bounded: the unsettled ones by the session's images (an image released again must have been
// freed by its settlement's copy first); the settled ones because a client following the protocol
// has a frame timing between any two endFrames. One that does not cannot make the daemon keep
// them without end: past kMaxKept the oldest are dropped (that client's acquire of those images
// then times out) and counted.
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

  // A release of image `index` of swapchain `swapchainId` answered early was accepted; its
  // settlement is still to come.
  void accepted(uint32_t swapchainId, uint32_t index);
  // It settled: kept for the next take.
  void settled(uint32_t swapchainId, uint32_t index, Status status);
  // Everything settled since the last take, oldest first; empties the log.
  std::vector<Settlement> take();
  // Whether a release of that image answered early has not settled yet.
  bool isUnsettled(uint32_t swapchainId, uint32_t index) const;
  // Releases answered early whose settlement has not come yet.
  size_t unsettled() const { return unsettled_.size(); }
  // Settlements dropped over kMaxKept since the session started.
  uint64_t dropped() const { return dropped_; }

 private:
  struct Image {
    uint32_t swapchainId;
    uint32_t index;
    bool operator==(const Image&) const = default;
  };
  std::vector<Image> unsettled_;
  std::deque<Settlement> kept_;
  uint64_t dropped_ = 0;
};

}  // namespace xrc
