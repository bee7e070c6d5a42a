// Timeline mode: copies whose client rendering is done, held back briefly so that they reach the
// copy queue together. On a GPU time-sliced between many client processes every separate
// submission of the daemon's has its context scheduled on its own, between two of some client's;
// gathering copies into one burst makes the daemon's context run once per burst instead of once
// per copy (docs/BENCHMARKS.md). Two ways:
// - copy_batch_before_latch_us: copies are let go together that long before the display's next
//   latch; one that becomes ready nearer the latch goes at once. A copy is held only while it
//   could not be shown sooner, but it must still be submitted and its frame committed before the
//   latch: a burst of many clients' copies and commits takes time on one thread, so with too short
//   a lead a held frame misses its latch (docs/BENCHMARKS.md). The daemon's let-go is woken by a
//   timerfd (MonotonicAlarm) to the µs; the event loop's own timer would wake up to 1 ms late.
//   The settlement of the client's image (copying_done) waits up to a display period.
// - copy_batch_us (when set, it replaces the first): a batch opens with a copy and is let go that
//   long after; a held copy reaches the display up to the window later.
// The first is 2000 µs by default, the second off (0). The first's lead may adapt to how long the
// bursts take (LetGoLead, copy_batch_before_latch_max_us).
// A held frame is one whose commit waited for a batch; one committed after the latch its batch was
// let go for, where its own target's latch was no later, missed a vsync it would have made
// (framesHeldPastLatch): what the before-latch lead must be long enough for.
// KJ thread only, but for the held-frame counts (also counted where the frame worker commits).
#pragma once

#include <kj/async.h>

#include <kj/timer.h>
#include <atomic>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "../backends/backend.hpp"
#include "let_go_lead.hpp"
#include "monotonic_alarm.hpp"

namespace xrc {

class CopyBatch {
 public:
  // `clock`: the display's, asked at every join (before-latch batching only; may be null else).
  // `alarm`: wakes the event loop at a batch's let-go to the µs (the daemon's); without it,
  // `timer` does (to the ms, rounded up: a test's manual timer).
  // `lead`: the let-go's lead before the latch (shared with the rendering waiter), which may
  // adapt; its base 0 (or a window) batches nothing before the latch.
  CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::shared_ptr<LetGoLead> lead,
            std::function<DisplayClock()> clock = nullptr, std::shared_ptr<MonotonicAlarm> alarm = nullptr);
  // A fixed lead of `beforeLatch`.
  CopyBatch(kj::Timer& timer, std::chrono::microseconds window, std::chrono::microseconds beforeLatch = {},
            std::function<DisplayClock()> clock = nullptr, std::shared_ptr<MonotonicAlarm> alarm = nullptr);
  ~CopyBatch();
  CopyBatch(const CopyBatch&) = delete;
  CopyBatch& operator=(const CopyBatch&) = delete;

  // Runs at each batch's let-go: the rendering waiter answers the renderings it found done and
  // held for it (RenderingWaiter::answerHeld); their copies go right after the batch's.
  void runAtLetGo(std::function<void()> hook) { state_->atLetGo = std::move(hook); }

  // Before-latch batching, for a copy ready at some time: the display's next latch then, and the
  // let-go before it (which may have passed).
  struct LatchAndLetGo {
    int64_t latchNs = 0;
    int64_t letGoNs = 0;
  };
  // A CopyBatch of these settings, for a copy ready at `readyNs` (CLOCK_MONOTONIC) on the display
  // `clock`: nullopt when it batches nothing before the latch (off, a window instead, no display
  // period); a let-go not after `readyNs` means at once. Any thread.
  // Whether these settings batch before the latch (a window replaces it; 0 is off).
  // `lead`: the let-go's lead before the latch now (LetGoLead::leadNs).
  static std::optional<LatchAndLetGo> letGoForCopyReadyAt(const DisplayClock& clock, std::chrono::microseconds window,
                                                          std::chrono::nanoseconds lead, int64_t readyNs);

  // Resolves when the copy that asks may be submitted: at once when batching is off (or the
  // latch is too near), else when the batch it joins is let go. Its value: the latch the batch
  // was let go for (CLOCK_MONOTONIC ns), 0 when not held or held for a window (copy_batch_us).
  kj::Promise<int64_t> join();

  // Before-latch batching: when the copies held now are let go (a copy ready now would go then),
  // without joining that batch; nullopt when a copy ready now would go at once, or later than
  // `notAfterNs` (CLOCK_MONOTONIC; a release's hung-client deadline). A release whose copy would
  // be held until then need not be waited for before it: whether its rendering is done can be
  // asked then, once (countHeldCopy() when it is).
  // Resolves, as join()'s, with the latch the copies are let go for.
  std::optional<kj::Promise<int64_t>> heldCopiesLetGo(int64_t notAfterNs);
  void countHeldCopy() { state_->copies++; }

  // A frame whose commit waited for a batch let go for `latchNs` was committed at `committedNs`.
  // Any thread. The lead adapts to it.
  void countHeldFrame(int64_t latchNs, int64_t committedNs) {
    state_->framesHeld.fetch_add(1, std::memory_order_relaxed);
    if (committedNs > latchNs) state_->framesHeldPastLatch.fetch_add(1, std::memory_order_relaxed);
    lead_->frameCommitted(latchNs, committedNs);
  }
  // The let-go's lead before the latch now; 0 while batching nothing before the latch.
  int64_t leadNs() const { return batchesBeforeLatch() ? lead_->leadNs() : 0; }

  uint64_t batches() const { return state_->batches; }  // opened (the latest may still take copies)
  uint64_t copies() const { return state_->copies; }    // that joined one (also those dropped since)
  uint64_t framesHeld() const { return state_->framesHeld.load(std::memory_order_relaxed); }
  uint64_t framesHeldPastLatch() const { return state_->framesHeldPastLatch.load(std::memory_order_relaxed); }

 private:
  bool batchesBeforeLatch() const { return window_.count() <= 0 && lead_->baseNs() > 0; }
  struct State {
    bool taking = false;  // the latest batch takes copies until it is let go
    int64_t letGoNs = 0;  // before-latch batching: when the latest batch is let go
    uint64_t batches = 0;
    uint64_t copies = 0;
    std::atomic<uint64_t> framesHeld{0};
    std::atomic<uint64_t> framesHeldPastLatch{0};
    std::function<void()> atLetGo;
  };
  struct LetGo {
    kj::TimePoint at;
    int64_t latchNs = 0;  // 0: a window's
  };

  // Before-latch batching: when a copy ready now is let go; nullopt: at once. Lets the open batch
  // go at once where the display clock has moved its latch earlier.
  std::optional<LetGo> letGoBeforeLatch();
  // The branch of the open batch, opening one let go at `letGo` if none is.
  kj::Promise<int64_t> batchLetGoAt(LetGo letGo);

  kj::Timer& timer_;
  std::chrono::microseconds window_;
  std::function<DisplayClock()> clock_;
  std::shared_ptr<MonotonicAlarm> alarm_;
  std::shared_ptr<LetGoLead> lead_;
  // Shared with the batch's timer continuation, which may run after this object is gone (a
  // session still holding a branch while the daemon shuts down).
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::optional<kj::ForkedPromise<int64_t>> batch_;  // the latest batch
  kj::Own<kj::PromiseFulfiller<void>> letGoNow_;     // lets the latest batch go before its wake
};

}  // namespace xrc
