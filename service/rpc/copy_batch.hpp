// Timeline mode: copies whose client rendering is done, held back briefly so that they reach the
// copy queue together (copy_batch_us). On a GPU time-sliced between many client processes every
// separate submission of the daemon's has its context scheduled on its own, between two of some
// client's; gathering the copies that become ready within a window into one burst makes the
// daemon's context run once per window instead of once per copy (docs/BENCHMARKS.md, 64
// clients). Off (0) by default: a held copy reaches the display up to the window later.
// KJ thread only.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace xrc {

class CopyBatch {
 public:
  CopyBatch(kj::Timer& timer, std::chrono::microseconds window);

  // Resolves when the copy that asks may be submitted: at once when batching is off, else when
  // the batch it joins is let go, `window` after that batch's first copy joined.
  kj::Promise<void> join();

  uint64_t batches() const { return state_->batches; }  // opened (the latest may still take copies)
  uint64_t copies() const { return state_->copies; }    // that joined one (also those dropped since)

 private:
  struct State {
    bool taking = false;  // the latest batch takes copies until its window ends
    uint64_t batches = 0;
    uint64_t copies = 0;
  };

  kj::Timer& timer_;
  std::chrono::microseconds window_;
  // Shared with the batch's timer continuation, which may run after this object is gone (a
  // session still holding a branch while the daemon shuts down).
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::optional<kj::ForkedPromise<void>> batch_;  // the latest batch
};

}  // namespace xrc
