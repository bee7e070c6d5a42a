// How long before the display's latch the copies held for it are let go (before-latch copy
// batching, copy_batch_before_latch_us). The burst of many clients' copies and commits that
// follows a let-go takes time on the RPC thread, and that time varies: with 64 client processes
// on 16 cores the thread also waits for a core. With a fixed lead the frames of a long burst are
// committed after the latch they were held for, each costing its client a vsync
// (frames_held_past_latch). So, where copy_batch_before_latch_max_us allows, the lead adapts: after
// a held frame is committed late it grows by that lateness and a margin, up to the maximum; while
// held frames make their latch it shrinks back towards copy_batch_before_latch_us by a step per
// adjustment, never more than half the time the latest of them had to spare.
// Any thread: the frame worker and the RPC thread count commits, the rendering waiter reads it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace xrc {

class LetGoLead {
 public:
  // Added to a late frame's lateness when the lead grows: the burst's length varies by more than
  // the lateness of its last frame.
  static constexpr int64_t kGrowthMarginNs = 250'000;
  // The most the lead shrinks per adjustment (about one per display period while frames are held).
  static constexpr int64_t kShrinkStepNs = 25'000;

  // `max` not above `base`, or `base` 0 (batching off): the lead stays `base`.
  LetGoLead(std::chrono::microseconds base, std::chrono::microseconds max);
  LetGoLead(const LetGoLead&) = delete;
  LetGoLead& operator=(const LetGoLead&) = delete;

  int64_t leadNs() const { return leadNs_.load(std::memory_order_relaxed); }
  int64_t baseNs() const { return baseNs_; }  // copy_batch_before_latch_us: 0, no batching before the latch
  bool adapts() const { return baseNs_ > 0 && maxNs_ > baseNs_; }

  // A frame whose copies were held had to be committed by `mustCommitByNs` to lose no vsync, and
  // was committed at `committedNs` (CLOCK_MONOTONIC).
  void frameCommitted(int64_t mustCommitByNs, int64_t committedNs);
  // Follows the frames committed since the last adjustment, if any; called as a batch opens.
  void adjust();

 private:
  static constexpr int64_t kNoFrame = std::numeric_limits<int64_t>::min();
  const int64_t baseNs_;
  const int64_t maxNs_;
  std::atomic<int64_t> leadNs_;
  // The latest commit relative to its deadline since the last adjustment (> 0: late).
  std::atomic<int64_t> worstLatenessNs_{kNoFrame};
};

}  // namespace xrc
