// Failures of releases answered before their copy wait, bounded, for the next frame timing.
#include <gtest/gtest.h>

#include "compositor/release_failures.hpp"

namespace xrc {
namespace {

Error timeout(const char* what) { return makeError(ErrorCode::timeout, "{}", what); }

TEST(ReleaseFailures, AreTakenOnceInTheOrderTheyHappened) {
  ReleaseFailures log;
  EXPECT_TRUE(log.empty());
  log.add(3, 1, timeout("first"));
  log.add(4, 0, makeError(ErrorCode::notFound, "second"));
  EXPECT_FALSE(log.empty());
  auto taken = log.take();
  ASSERT_EQ(taken.failures.size(), 2u);
  EXPECT_EQ(taken.failures[0].swapchainId, 3u);
  EXPECT_EQ(taken.failures[0].index, 1u);
  EXPECT_EQ(taken.failures[0].error.code, ErrorCode::timeout);
  EXPECT_EQ(taken.failures[0].error.message, "first");
  EXPECT_EQ(taken.failures[1].swapchainId, 4u);
  EXPECT_EQ(taken.failures[1].error.code, ErrorCode::notFound);
  EXPECT_EQ(taken.dropped, 0u);
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(log.take().failures.empty());
}

TEST(ReleaseFailures, KeepTheNewestAndCountTheDroppedWhenNobodyTakesThem) {
  ReleaseFailures log;
  const uint32_t added = ReleaseFailures::kMaxKept + 10;
  for (uint32_t i = 0; i < added; ++i) log.add(1, i, timeout("hung"));
  auto taken = log.take();
  ASSERT_EQ(taken.failures.size(), ReleaseFailures::kMaxKept);
  EXPECT_EQ(taken.dropped, 10u);
  EXPECT_EQ(taken.failures.front().index, 10u);
  EXPECT_EQ(taken.failures.back().index, added - 1);
  // The count starts over with the next take.
  log.add(1, 0, timeout("again"));
  EXPECT_EQ(log.take().dropped, 0u);
}

}  // namespace
}  // namespace xrc
