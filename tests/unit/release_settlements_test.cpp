// Settlements of releases answered before their copy wait, bounded, for the next frame timing.
#include <gtest/gtest.h>

#include "compositor/release_settlements.hpp"

namespace xrc {
namespace {

TEST(ReleaseSettlements, AreTakenOnceInTheOrderTheySettled) {
  ReleaseSettlements log;
  log.accepted(3, 1);
  log.accepted(4, 0);
  log.accepted(4, 1);
  EXPECT_EQ(log.unsettled(), 3u);
  log.settled(3, 1, makeError(ErrorCode::timeout, "hung"));
  log.settled(4, 0, Status{});
  EXPECT_EQ(log.unsettled(), 1u);
  auto taken = log.take();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].swapchainId, 3u);
  EXPECT_EQ(taken[0].index, 1u);
  ASSERT_FALSE(taken[0].status);
  EXPECT_EQ(taken[0].status.error().code, ErrorCode::timeout);
  EXPECT_EQ(taken[1].swapchainId, 4u);
  EXPECT_TRUE(taken[1].status);
  EXPECT_TRUE(log.take().empty());
  log.settled(4, 1, Status{});
  EXPECT_EQ(log.unsettled(), 0u);
  EXPECT_EQ(log.take().size(), 1u);
}

TEST(ReleaseSettlements, KnowWhichImagesAreStillUnsettled) {
  ReleaseSettlements log;
  EXPECT_FALSE(log.isUnsettled(2, 0));
  log.accepted(2, 0);
  log.accepted(2, 1);
  EXPECT_TRUE(log.isUnsettled(2, 0));
  EXPECT_TRUE(log.isUnsettled(2, 1));
  EXPECT_FALSE(log.isUnsettled(3, 0));  // same index, another swapchain
  log.settled(2, 1, Status{});
  EXPECT_TRUE(log.isUnsettled(2, 0));
  EXPECT_FALSE(log.isUnsettled(2, 1));
  // Unsettled no more once settled, before anyone takes it.
  log.settled(2, 0, Status{});
  EXPECT_FALSE(log.isUnsettled(2, 0));
  EXPECT_EQ(log.take().size(), 2u);
}

TEST(ReleaseSettlements, KeepTheNewestAndCountTheDroppedWhenNobodyTakesThem) {
  ReleaseSettlements log;
  const uint32_t added = uint32_t(ReleaseSettlements::kMaxKept) + 10;
  for (uint32_t i = 0; i < added; ++i) {
    log.accepted(1, i);
    log.settled(1, i, Status{});
  }
  EXPECT_EQ(log.dropped(), 10u);
  EXPECT_EQ(log.unsettled(), 0u);
  auto taken = log.take();
  ASSERT_EQ(taken.size(), ReleaseSettlements::kMaxKept);
  EXPECT_EQ(taken.front().index, 10u);
  EXPECT_EQ(taken.back().index, added - 1);
}

}  // namespace
}  // namespace xrc
