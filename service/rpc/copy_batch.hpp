// Timeline mode: copies whose client rendering is done, held back briefly so that they reach the
// copy queue together. On a GPU time-sliced between many client processes every separate
// submission of the daemon's has its context scheduled on its own, between two of some client's;
// gathering copies into one burst makes the daemon's context run once per burst instead of once
// per copy (docs/BENCHMARKS.md). Two ways:
// - copy_batch_before_latch_us: copies are let go together that long before the display's next
//   latch; one that becomes ready nearer the latch goes at once. A copy is held only while it
//   could not be shown sooner, but it must still be submitted and its frame committed before the
//   latch: the event loop's timer wakes up to a millisecond late and a burst of many clients'
//   copies takes time, so with too short a lead a held frame misses its latch (docs/BENCHMARKS.md).
//   The settlement of the client's image (copying_done) waits up to a display period.
// - copy_batch_us (when set, it replaces the first): a batch opens with a copy and is let go that
//   long after; a held copy reaches the display up to the window later.
// Both are off (0) by default.
// KJ thread only.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "../backends/backend.hpp"

namespace xrc {

class CopyBatch {
 public:
  // `clock`: the display's, asked at every join (before-latch batching only; may be null else).
  CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::chrono::microseconds beforeLatch = {},
            std::function<DisplayClock()> clock = nullptr);

  // Resolves when the copy that asks may be submitted: at once when batching is off (or the
  // latch is too near), else when the batch it joins is let go.
  kj::Promise<void> join();

  // Before-latch batching: when the copies held now are let go (a copy ready now would go then),
  // without joining that batch; nullopt when a copy ready now would go at once, or later than
  // `notAfterNs` (CLOCK_MONOTONIC; a release's hung-client deadline). A release whose copy would
  // be held until then need not be waited for before it: whether its rendering is done can be
  // asked then, once (countHeldCopy() when it is).
  std::optional<kj::Promise<void>> heldCopiesLetGo(int64_t notAfterNs);
  void countHeldCopy() { state_->copies++; }

  uint64_t batches() const { return state_->batches; }  // opened (the latest may still take copies)
  uint64_t copies() const { return state_->copies; }    // that joined one (also those dropped since)

 private:
  struct State {
    bool taking = false;  // the latest batch takes copies until it is let go
    int64_t letGoNs = 0;  // before-latch batching: when the latest batch is let go
    uint64_t batches = 0;
    uint64_t copies = 0;
  };
  // Before-latch batching: when a copy ready now is let go; nullopt: at once.
  std::optional<kj::TimePoint> letGoBeforeLatch() const;
  // The branch of the open batch, opening one let go at `letGo` if none is.
  kj::Promise<void> batchLetGoAt(kj::TimePoint letGo);

  kj::Timer& timer_;
  std::chrono::microseconds window_;
  std::chrono::microseconds beforeLatch_;
  std::function<DisplayClock()> clock_;
  // Shared with the batch's timer continuation, which may run after this object is gone (a
  // session still holding a branch while the daemon shuts down).
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::optional<kj::ForkedPromise<void>> batch_;  // the latest batch
};

}  // namespace xrc
