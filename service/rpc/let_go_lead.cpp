#include "let_go_lead.hpp"

#include <algorithm>

namespace xrc {

LetGoLead::LetGoLead(std::chrono::microseconds base, std::chrono::microseconds max)
    : baseNs_(std::chrono::nanoseconds(base).count()),
      maxNs_(std::max(baseNs_, int64_t(std::chrono::nanoseconds(max).count()))),
      leadNs_(baseNs_) {}

void LetGoLead::frameCommitted(int64_t mustCommitByNs, int64_t committedNs) {
  if (!adapts()) return;
  const int64_t lateness = committedNs - mustCommitByNs;
  int64_t worst = worstLatenessNs_.load(std::memory_order_relaxed);
  while (lateness > worst && !worstLatenessNs_.compare_exchange_weak(worst, lateness, std::memory_order_relaxed)) {
  }
}

void LetGoLead::adjust() {
  if (!adapts()) return;
  const int64_t worst = worstLatenessNs_.exchange(kNoFrame, std::memory_order_relaxed);
  if (worst == kNoFrame) return;  // no held frame committed since: nothing learnt
  const int64_t lead = leadNs_.load(std::memory_order_relaxed);
  int64_t next;
  if (worst > 0) {
    next = std::min(maxNs_, lead + worst + kGrowthMarginNs);
  } else {
    next = std::max(baseNs_, lead - std::min(kShrinkStepNs, -worst / 2));
  }
  leadNs_.store(next, std::memory_order_relaxed);
}

}  // namespace xrc
