// The copies of one endFrame's releases that can start at once, submitted to the copy queue
// together once the frame's releases are all accepted and before the frame is committed: one
// vkQueueSubmit for the frame instead of one per released swapchain. On a driver that runs its
// queue on a thread of its own (lavapipe) that is one wake-up of that thread per frame, not one per
// view; on a GPU, one submission for the daemon's context to be scheduled for.
// KJ thread only.
#pragma once

#include <kj/async.h>
#include <kj/function.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "../compositor/client_registry.hpp"
#include "../gpu/shared_swapchain.hpp"

namespace xrc {

class EndFrameCopies {
 public:
  // What follows a copy's submission (or its failure): publishes it, or gives its runtime image
  // back. Runs within submit(), in the order the copies were added; its status is the copy's.
  using Settle = kj::Function<Status(Result<gpu::CopyResult>)>;

  // Each submission made is counted in `submissions` (the client's).
  explicit EndFrameCopies(std::atomic<uint64_t>& submissions) : submissions_(submissions) {}
  EndFrameCopies(const EndFrameCopies&) = delete;
  EndFrameCopies& operator=(const EndFrameCopies&) = delete;
  // Submits what it still holds: a copy prepared is never dropped unsubmitted.
  ~EndFrameCopies();

  // Holds `copy` (prepared by swapchain `swapchainId`) for the next submit(). Resolves, after
  // that submission, to what `settle` made of it.
  kj::Promise<Status> add(uint32_t swapchainId, gpu::PreparedCopy copy, Settle settle);
  // Whether a copy of that swapchain is held: a second one must not be prepared before the
  // first is submitted (its image may be the one the first reuses).
  bool holds(uint32_t swapchainId) const;
  // Submits the copies held, in one submission, and settles each.
  void submit();

 private:
  struct Held {
    uint32_t swapchainId;
    Settle settle;
    kj::Own<kj::PromiseFulfiller<Status>> settled;
  };

  std::vector<gpu::PreparedCopy> copies_;
  std::vector<Held> held_;  // one per copy, same order
  std::atomic<uint64_t>& submissions_;
};

// Timeline mode: the copies of one endFrame's releases, each prepared once its client rendering
// is done (the releases are handled one after another, in the session's order) and submitted
// together once the frame's last release is handled. The frame is shown only once all of them
// are submitted, so holding the first ones back does not delay it; what waits longer is the
// earlier releases' settlement (and the client's next acquire of those images): until the
// frame's last rendering is done, at most hung_client_timeout_ms. On a GPU time-sliced between
// client processes every submission of the daemon's is a turn of its context between two of
// some client's; with a swapchain per view (as OpenXR apps have) one per copy was two per frame
// (docs/BENCHMARKS.md, "Clients with a swapchain per view").
class RenderedFrameCopies {
 public:
  explicit RenderedFrameCopies(std::shared_ptr<ClientRecord> client)
      : client_(std::move(client)), copies_(client_->copySubmissions) {}

  EndFrameCopies& copies() { return copies_; }
  // One more release of the frame that will be handled later. The endFrame handler holds one
  // itself while it adds the frame's releases, so that none submits before all are counted.
  void expect() { ++expected_; }
  // One of them is handled: its copy added, or settled without one. The last submits the copies.
  void handled() {
    if (expected_ > 0 && --expected_ == 0) copies_.submit();
  }

 private:
  std::shared_ptr<ClientRecord> client_;  // its submission count outlives copies_
  EndFrameCopies copies_;
  uint32_t expected_ = 0;
};

}  // namespace xrc
