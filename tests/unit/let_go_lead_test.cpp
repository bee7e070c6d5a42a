// LetGoLead: the let-go's lead grows after a held frame was committed past its latch, by that
// lateness and a margin up to the maximum, and shrinks back while held frames make their latch.
#include "rpc/let_go_lead.hpp"

#include <gtest/gtest.h>

namespace xrc {
namespace {

using std::chrono::microseconds;

constexpr int64_t kLatchNs = 1'000'000'000;

TEST(LetGoLead, StaysAtItsBaseWhileHeldFramesMakeTheirLatch) {
  LetGoLead lead(microseconds(2000), microseconds(6000));
  EXPECT_TRUE(lead.adapts());
  EXPECT_EQ(lead.leadNs(), 2'000'000);
  lead.frameCommitted(kLatchNs, kLatchNs - 500'000);
  lead.adjust();
  EXPECT_EQ(lead.leadNs(), 2'000'000);
}

TEST(LetGoLead, GrowsByTheWorstLatenessAndAMarginUpToItsMaximum) {
  LetGoLead lead(microseconds(2000), microseconds(6000));
  lead.frameCommitted(kLatchNs, kLatchNs + 300'000);
  lead.frameCommitted(kLatchNs, kLatchNs + 700'000);  // the worst of the burst
  lead.frameCommitted(kLatchNs, kLatchNs - 100'000);
  lead.adjust();
  EXPECT_EQ(lead.leadNs(), 2'000'000 + 700'000 + LetGoLead::kGrowthMarginNs);
  lead.frameCommitted(kLatchNs, kLatchNs + 9'000'000);  // a burst far behind: capped
  lead.adjust();
  EXPECT_EQ(lead.leadNs(), 6'000'000);
}

TEST(LetGoLead, LearnsNothingFromAnAdjustmentWithoutCommittedFrames) {
  LetGoLead lead(microseconds(2000), microseconds(6000));
  lead.frameCommitted(kLatchNs, kLatchNs + 1'000'000);
  lead.adjust();
  const int64_t grown = lead.leadNs();
  lead.adjust();  // no held frame committed since: neither grows again nor shrinks
  EXPECT_EQ(lead.leadNs(), grown);
}

TEST(LetGoLead, ShrinksBackByAStepNeverMoreThanHalfTheTimeToSpare) {
  LetGoLead lead(microseconds(2000), microseconds(6000));
  lead.frameCommitted(kLatchNs, kLatchNs + 1'000'000);
  lead.adjust();
  const int64_t grown = lead.leadNs();               // 3.25 ms
  lead.frameCommitted(kLatchNs, kLatchNs - 10'000);  // 10 µs to spare: shrinks by 5
  lead.adjust();
  EXPECT_EQ(lead.leadNs(), grown - 5'000);
  lead.frameCommitted(kLatchNs, kLatchNs - 2'000'000);  // plenty to spare: a whole step
  lead.adjust();
  EXPECT_EQ(lead.leadNs(), grown - 5'000 - LetGoLead::kShrinkStepNs);
  for (int i = 0; i < 1000; ++i) {
    lead.frameCommitted(kLatchNs, kLatchNs - 2'000'000);
    lead.adjust();
  }
  EXPECT_EQ(lead.leadNs(), 2'000'000);  // never below its base
}

TEST(LetGoLead, AMaximumNotAboveTheBaseOrNoBatchingKeepsItFixed) {
  for (auto [base, max] : {std::pair{2000, 2000}, std::pair{2000, 0}, std::pair{0, 6000}}) {
    LetGoLead lead{microseconds(base), microseconds(max)};
    EXPECT_FALSE(lead.adapts());
    lead.frameCommitted(kLatchNs, kLatchNs + 1'000'000);
    lead.adjust();
    EXPECT_EQ(lead.leadNs(), int64_t(base) * 1000) << base << " " << max;
  }
}

}  // namespace
}  // namespace xrc
