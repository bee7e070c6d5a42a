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

  // Each submission made is counted once in each client's `submissions` counter that a copy in it
  // was added with (handOver() brings copies of several clients into one submission).
  EndFrameCopies() = default;
  EndFrameCopies(const EndFrameCopies&) = delete;
  EndFrameCopies& operator=(const EndFrameCopies&) = delete;
  // Submits what it still holds: a copy prepared is never dropped unsubmitted.
  ~EndFrameCopies();

  // Holds `copy` (prepared by copy.swapchain, for the client counted in `submissions`) for the
  // next submit(). Resolves, after that submission, to what `settle` made of it.
  kj::Promise<Status> add(gpu::PreparedCopy copy, Settle settle, std::atomic<uint64_t>& submissions);
  // Whether a copy of that swapchain is held: a second one must not be prepared before the
  // first is submitted (its image may be the one the first reuses).
  bool holds(const gpu::SharedSwapchain* swapchain) const;
  bool empty() const { return copies_.empty(); }
  size_t size() const { return copies_.size(); }
  // Submits the copies held, in one submission, and settles each.
  void submit();
  // Moves the copies held, in their order, behind those `into` holds: submitted and settled with
  // them.
  void handOver(EndFrameCopies& into);

 private:
  struct Held {
    Settle settle;
    kj::Own<kj::PromiseFulfiller<Status>> settled;
    std::atomic<uint64_t>* submissions;
  };

  std::vector<gpu::PreparedCopy> copies_;
  std::vector<Held> held_;  // one per copy, same order
};

// Timeline mode, --copy-batch-copies-per-submission N: the copies let go together (CopyBatch), from
// every session, in submissions of about N copies instead of one per client frame.
// At a let-go the held releases' continuations run one after another, each preparing its copy;
// rather than each frame submitting its own, they are gathered from the let-go until N copies are
// gathered, or the event loop has nothing else to run (kj::evalLast), and then submitted together:
// one vkQueueSubmit, and on a GPU one turn of the daemon's context, per N copies. A frame's copies
// are never split (a frame of many views may take a submission past N). The frames whose copies
// are gathered are committed after their submission (submitted()), as a frame is always committed
// after its copies are submitted: so a submission's first frames are committed later than without
// gathering; bounding a submission bounds how much later (gathering a whole let-go into one
// submission cost 64 GPU-bound clients on an H200 frames; docs/BENCHMARKS.md). KJ thread only.
class LetGoCopies {
 public:
  // `copiesPerSubmission`: a submission leaves once that many copies are gathered (0: none is
  // gathered, gatherUntilQueueEmpty() is a no-op).
  explicit LetGoCopies(uint32_t copiesPerSubmission) : copiesPerSubmission_(copiesPerSubmission) {}
  LetGoCopies(const LetGoCopies&) = delete;
  LetGoCopies& operator=(const LetGoCopies&) = delete;
  // Submits what was gathered.
  ~LetGoCopies() { submit(); }

  // At a let-go: copies handed over from now until the event queue is otherwise empty are
  // submitted then, together, or earlier once copiesPerSubmission of them are. A no-op while
  // gathering. Renderings the rendering waiter held for the let-go are answered through
  // cross-thread fulfillers, which KJ takes only after that (once its queue has run dry): their
  // copies go in submissions of their own right after. Waiting for them as well gathered more
  // copies but committed every frame of the let-go later still, and cost 64 GPU-bound clients
  // more frames and CPU on an H200 (docs/BENCHMARKS.md).
  void gatherUntilQueueEmpty();
  bool gathering() const { return gathering_; }
  // Where a copy or a frame's copies are handed over while gathering.
  EndFrameCopies& copies() { return copies_; }
  // Resolves once what is gathered now is submitted; at once when not gathering. Called once the
  // caller's copies are handed over: where that makes copiesPerSubmission, they are submitted now.
  kj::Promise<void> submitted();
  // Submits what is gathered and ends the gathering.
  void submit();

 private:
  // Submits what is gathered and answers those waiting for it; gathering goes on.
  void submitGathered();

  uint32_t copiesPerSubmission_;
  bool gathering_ = false;
  EndFrameCopies copies_;
  std::vector<kj::Own<kj::PromiseFulfiller<void>>> waiting_;
  kj::Promise<void> submission_ = nullptr;  // the gathering's end, at kj::evalLast
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
  // `letGo`: where the frame's copies go, when its last release is handled during a let-go.
  explicit RenderedFrameCopies(std::shared_ptr<ClientRecord> client, LetGoCopies* letGo = nullptr)
      : client_(std::move(client)), letGo_(letGo) {}

  EndFrameCopies& copies() { return copies_; }
  // One more release of the frame that will be handled later. The endFrame handler holds one
  // itself while it adds the frame's releases, so that none submits before all are counted.
  void expect() { ++expected_; }
  // One of them is handled: its copy added, or settled without one. The last submits the copies,
  // or hands them over to the let-go's gathering (LetGoCopies).
  void handled() {
    if (expected_ == 0 || --expected_ > 0) return;
    if (letGo_ != nullptr && letGo_->gathering()) {
      copies_.handOver(letGo_->copies());
    } else {
      copies_.submit();
    }
  }

 private:
  std::shared_ptr<ClientRecord> client_;  // its submission count outlives copies_
  LetGoCopies* letGo_;
  EndFrameCopies copies_;
  uint32_t expected_ = 0;
};

}  // namespace xrc
