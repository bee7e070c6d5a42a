// CopyBatch: copies that join within a window are let go together when it ends; off, at once.
#include "rpc/copy_batch.hpp"

#include <gtest/gtest.h>
#include <kj/async.h>
#include <kj/timer.h>

#include "manual_timer_loop.hpp"

namespace xrc {
namespace {

using std::chrono::microseconds;

using Loop = test::ManualTimerLoop;

TEST(CopyBatch, OffLetsEachCopyGoAtOnce) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(0));
  auto copy = batch.join();
  EXPECT_TRUE(copy.poll(l.waitScope));
  EXPECT_EQ(batch.batches(), 0u);
  EXPECT_EQ(batch.copies(), 0u);
}

TEST(CopyBatch, CopiesJoiningWithinTheWindowGoTogetherWhenItEnds) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(3000));
  bool firstGone = false, secondGone = false, thirdGone = false;
  auto first = batch.join().then([&] { firstGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(2000 * kj::MICROSECONDS);
  auto second = batch.join().then([&] { secondGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(999 * kj::MICROSECONDS);
  EXPECT_FALSE(firstGone);
  EXPECT_FALSE(secondGone);
  EXPECT_EQ(batch.batches(), 1u);
  EXPECT_EQ(batch.copies(), 2u);

  l.advance(1 * kj::MICROSECONDS);  // the window of the first copy ends: both go
  EXPECT_TRUE(firstGone);
  EXPECT_TRUE(secondGone);

  // A copy after it starts the next batch, with a window of its own.
  auto third = batch.join().then([&] { thirdGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(2999 * kj::MICROSECONDS);
  EXPECT_FALSE(thirdGone);
  l.advance(1 * kj::MICROSECONDS);
  EXPECT_TRUE(thirdGone);
  EXPECT_EQ(batch.batches(), 2u);
  EXPECT_EQ(batch.copies(), 3u);
}

TEST(CopyBatch, ACopyDroppedBeforeItsBatchGoesLeavesTheOthersInIt) {
  Loop l;
  bool kept = false;
  kj::Promise<void> keptCopy = nullptr;
  {
    CopyBatch batch(l.timer, microseconds(1000));
    auto dropped = batch.join();
    keptCopy = batch.join().then([&] { kept = true; }).eagerlyEvaluate(nullptr);
    // `dropped` (a session that went away) and the batch itself go before the window ends.
  }
  l.advance(1000 * kj::MICROSECONDS);
  EXPECT_TRUE(kept);
}

}  // namespace
}  // namespace xrc
