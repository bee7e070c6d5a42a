// CopyBatch: copies that join within a window are let go together when it ends; before the latch,
// together a lead before the display's next latch (fixed, or adapting to held frames that missed
// it); off, at once.
#include "rpc/copy_batch.hpp"

#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/async.h>
#include <kj/timer.h>

#include <memory>
#include <utility>

#include "manual_timer_loop.hpp"
#include "rpc/monotonic_alarm.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {
namespace {

using std::chrono::microseconds;

using Loop = test::ManualTimerLoop;

TEST(CopyBatch, OffLetsEachCopyGoAtOnce) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(0));
  auto copy = batch.join();
  ASSERT_TRUE(copy.poll(l.waitScope));
  EXPECT_EQ(copy.wait(l.waitScope), 0);  // held for no latch
  EXPECT_EQ(batch.batches(), 0u);
  EXPECT_EQ(batch.copies(), 0u);
}

TEST(CopyBatch, CopiesJoiningWithinTheWindowGoTogetherWhenItEnds) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(3000));
  bool firstGone = false, secondGone = false, thirdGone = false;
  auto first = batch.join().then([&](int64_t) { firstGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(2000 * kj::MICROSECONDS);
  auto second = batch.join().then([&](int64_t) { secondGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(999 * kj::MICROSECONDS);
  EXPECT_FALSE(firstGone);
  EXPECT_FALSE(secondGone);
  EXPECT_EQ(batch.batches(), 1u);
  EXPECT_EQ(batch.copies(), 2u);

  l.advance(1 * kj::MICROSECONDS);  // the window of the first copy ends: both go
  EXPECT_TRUE(firstGone);
  EXPECT_TRUE(secondGone);

  // A copy after it starts the next batch, with a window of its own.
  auto third = batch.join().then([&](int64_t) { thirdGone = true; }).eagerlyEvaluate(nullptr);
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
    keptCopy = batch.join().then([&](int64_t) { kept = true; }).eagerlyEvaluate(nullptr);
    // `dropped` (a session that went away) and the batch itself go before the window ends.
  }
  l.advance(1000 * kj::MICROSECONDS);
  EXPECT_TRUE(kept);
}

// The display of these tests: 10 ms periods from `originNs`, frames taken `leadNs` before each vsync.
DisplayClock displayClock(const Loop& l, int64_t leadNs = 0) {
  const int64_t nowNs = (l.timer.now() - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS;
  return DisplayClock{nowNs + 10'000'000, 10'000'000, leadNs};
}

TEST(CopyBatch, BeforeLatchCopiesGoTogetherThatLongBeforeTheNextLatchAndNearerOnesAtOnce) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // vsyncs 10, 20, 30 ms from now
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [clock] { return clock; });
  bool firstGone = false, secondGone = false;
  int64_t firstLatchNs = 0;
  auto first = batch.join()
                   .then([&](int64_t latchNs) {
                     firstGone = true;
                     firstLatchNs = latchNs;
                   })
                   .eagerlyEvaluate(nullptr);
  l.advance(5000 * kj::MICROSECONDS);
  auto second = batch.join().then([&](int64_t) { secondGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(2999 * kj::MICROSECONDS);  // 7.999 ms
  EXPECT_FALSE(firstGone);
  EXPECT_FALSE(secondGone);
  l.advance(1 * kj::MICROSECONDS);  // 8 ms: 2 ms before the latch at 10 ms, both go
  EXPECT_TRUE(firstGone);
  EXPECT_TRUE(secondGone);
  EXPECT_EQ(firstLatchNs, clock.originNs);  // let go for the latch at 10 ms
  EXPECT_EQ(batch.batches(), 1u);
  EXPECT_EQ(batch.copies(), 2u);

  // Nearer the latch than 2 ms: at once, in no batch, held for no latch.
  l.advance(1500 * kj::MICROSECONDS);  // 9.5 ms
  auto near = batch.join();
  ASSERT_TRUE(near.poll(l.waitScope));
  EXPECT_EQ(near.wait(l.waitScope), 0);
  EXPECT_EQ(batch.copies(), 2u);

  // Past the latch: held for the next one's (vsync 20 ms, let go at 18 ms).
  bool thirdGone = false;
  l.advance(600 * kj::MICROSECONDS);  // 10.1 ms
  auto third = batch.join().then([&](int64_t) { thirdGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(7899 * kj::MICROSECONDS);  // 17.999 ms
  EXPECT_FALSE(thirdGone);
  l.advance(1 * kj::MICROSECONDS);
  EXPECT_TRUE(thirdGone);
  EXPECT_EQ(batch.batches(), 2u);
  EXPECT_EQ(batch.copies(), 3u);
}

TEST(CopyBatch, AHeldFrameCommittedPastItsLatchMovesTheNextLetGoEarlier) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // latches at 10, 20, 30 ms from now
  auto lead = std::make_shared<LetGoLead>(microseconds(2000), microseconds(6000));
  CopyBatch batch(l.timer, microseconds(0), lead, [clock] { return clock; });
  EXPECT_EQ(batch.leadNs(), 2'000'000);
  int64_t latchNs = 0;
  auto first = batch.join().then([&](int64_t at) { latchNs = at; }).eagerlyEvaluate(nullptr);
  l.advance(8000 * kj::MICROSECONDS);  // let go at 8 ms for the latch at 10
  ASSERT_EQ(latchNs, clock.originNs);
  // Its frame is committed 750 µs after that latch: the next let-go comes 1 ms earlier.
  batch.countHeldFrame(latchNs, latchNs + 750'000);
  EXPECT_EQ(batch.framesHeldPastLatch(), 1u);
  l.advance(3000 * kj::MICROSECONDS);  // 11 ms
  bool gone = false;
  auto second = batch.join().then([&](int64_t) { gone = true; }).eagerlyEvaluate(nullptr);
  EXPECT_EQ(batch.leadNs(), 3'000'000);
  l.advance(5999 * kj::MICROSECONDS);  // 16.999 ms
  EXPECT_FALSE(gone);
  l.advance(1 * kj::MICROSECONDS);  // 17 ms: 3 ms before the latch at 20
  EXPECT_TRUE(gone);
  // Status reports no lead where nothing is batched before the latch.
  CopyBatch windowed(l.timer, microseconds(1000), lead, [clock] { return clock; });
  EXPECT_EQ(windowed.leadNs(), 0);
}

TEST(CopyBatch, HeldCopiesLetGoSaysWhenTheCopiesHeldNowGoWithoutJoining) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // a latch at 10 ms
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [clock] { return clock; });
  const int64_t nowNs = (l.timer.now() - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS;
  // A release whose hung-client deadline comes before the let-go is not held that way.
  EXPECT_FALSE(batch.heldCopiesLetGo(nowNs + 7'999'999).has_value());
  auto held = batch.heldCopiesLetGo(nowNs + 8'000'000);
  ASSERT_TRUE(held.has_value());
  bool heldGone = false, joinedGone = false;
  auto heldDone = held->then([&](int64_t) { heldGone = true; }).eagerlyEvaluate(nullptr);
  l.advance(3000 * kj::MICROSECONDS);
  auto joined = batch.join().then([&](int64_t) { joinedGone = true; }).eagerlyEvaluate(nullptr);
  EXPECT_EQ(batch.batches(), 1u);  // the same batch
  EXPECT_EQ(batch.copies(), 1u);   // only the copy that joined
  l.advance(4999 * kj::MICROSECONDS);
  EXPECT_FALSE(heldGone);
  l.advance(1 * kj::MICROSECONDS);  // 8 ms: both go
  EXPECT_TRUE(heldGone);
  EXPECT_TRUE(joinedGone);
  batch.countHeldCopy();  // the release asked then was rendered
  EXPECT_EQ(batch.copies(), 2u);
  // Within the 2 ms before the latch, or with a window instead, nothing is held that way.
  EXPECT_FALSE(batch.heldCopiesLetGo(INT64_MAX).has_value());
  CopyBatch windowed(l.timer, microseconds(1000), microseconds(2000), [clock] { return clock; });
  EXPECT_FALSE(windowed.heldCopiesLetGo(INT64_MAX).has_value());
}

TEST(CopyBatch, BeforeLatchFollowsTheDisplaysLatchLead) {
  Loop l;
  // Frames are taken 3 ms before each vsync (10, 20 ms from now): latches at 7 and 17 ms.
  const DisplayClock clock = displayClock(l, 3'000'000);
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [clock] { return clock; });
  bool gone = false;
  auto copy = batch.join().then([&](int64_t) { gone = true; }).eagerlyEvaluate(nullptr);
  l.advance(4999 * kj::MICROSECONDS);
  EXPECT_FALSE(gone);
  l.advance(1 * kj::MICROSECONDS);  // 5 ms: 2 ms before the latch at 7 ms
  EXPECT_TRUE(gone);
  l.advance(1000 * kj::MICROSECONDS);  // 6 ms: nearer the latch than 2 ms
  EXPECT_TRUE(batch.join().poll(l.waitScope));
}

TEST(CopyBatch, BeforeLatchTakesANegativeLatchLeadAsNone) {
  Loop l;
  // A runtime's latch reported after its vsync: the vsync itself (10 ms) is the latch.
  const DisplayClock clock = displayClock(l, -3'000'000);
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [clock] { return clock; });
  bool gone = false;
  auto copy = batch.join().then([&](int64_t) { gone = true; }).eagerlyEvaluate(nullptr);
  l.advance(7999 * kj::MICROSECONDS);
  EXPECT_FALSE(gone);
  l.advance(1 * kj::MICROSECONDS);
  EXPECT_TRUE(gone);
}

TEST(CopyBatch, AWindowReplacesBatchingBeforeTheLatch) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // a latch at 10 ms: before-latch would let go at 8 ms
  CopyBatch batch(l.timer, microseconds(1000), microseconds(2000), [clock] { return clock; });
  bool gone = false;
  auto copy = batch.join().then([&](int64_t) { gone = true; }).eagerlyEvaluate(nullptr);
  l.advance(999 * kj::MICROSECONDS);
  EXPECT_FALSE(gone);
  l.advance(1 * kj::MICROSECONDS);  // the 1 ms window ends
  EXPECT_TRUE(gone);
}

TEST(CopyBatch, BeforeLatchWithoutADisplayPeriodLetsEachCopyGoAtOnce) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [] { return DisplayClock{}; });
  EXPECT_TRUE(batch.join().poll(l.waitScope));
  EXPECT_EQ(batch.batches(), 0u);
}

// A let-go that has come while its continuation has not run yet (the loop busy past it): a copy
// ready then goes at once instead of joining a batch that is already due.
TEST(CopyBatch, ACopyReadyWhenTheBatchIsDueGoesAtOnce) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // latch at 10 ms
  CopyBatch batch(l.timer, microseconds(0), microseconds(1000), [clock] { return clock; });
  auto first = batch.join();  // let go at 9 ms
  // The clock moves past the latch, to 10.5 ms, without the loop running the batch's timer: a
  // copy ready now would be let go at 19 ms, before the next latch, and must not join the batch
  // still open for the latch that has passed.
  l.timer.advanceTo(l.timer.now() + 10500 * kj::MICROSECONDS);
  auto late = batch.join();
  ASSERT_TRUE(late.poll(l.waitScope));
  EXPECT_EQ(late.wait(l.waitScope), 0);  // not held
  EXPECT_EQ(batch.copies(), 1u);
  EXPECT_EQ(first.wait(l.waitScope), clock.originNs);
}

// Over another runtime the display clock follows its xrWaitFrame answers: when one moves the next
// latch earlier than the one a batch was opened for, the copies held in it go at once instead of
// at a let-go after the latch they are now due for.
TEST(CopyBatch, ABatchGoesAtOnceWhenTheDisplayClockMovesItsLatchEarlier) {
  Loop l;
  DisplayClock clock = displayClock(l);  // latch at 10 ms
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [&clock] { return clock; });
  bool firstGone = false;
  auto first = batch.join().then([&](int64_t) { firstGone = true; }).eagerlyEvaluate(nullptr);  // let go at 8 ms
  l.advance(1000 * kj::MICROSECONDS);
  EXPECT_FALSE(firstGone);
  clock.originNs -= 4'000'000;  // the latch is at 6 ms now: a copy ready now would be let go at 4 ms
  auto second = batch.join();
  ASSERT_TRUE(second.poll(l.waitScope));
  EXPECT_EQ(second.wait(l.waitScope), 0);  // at once
  l.waitScope.poll();
  EXPECT_TRUE(firstGone);  // and the batch held for the later let-go with it, the clock not moved
  EXPECT_EQ(batch.copies(), 1u);
  // The next copy opens a batch for the moved latch, let go at 4 ms.
  bool thirdGone = false;
  auto third = batch.join().then([&](int64_t) { thirdGone = true; }).eagerlyEvaluate(nullptr);
  EXPECT_EQ(batch.batches(), 2u);
  l.advance(2999 * kj::MICROSECONDS);  // 3.999 ms
  EXPECT_FALSE(thirdGone);
  l.advance(1 * kj::MICROSECONDS);
  EXPECT_TRUE(thirdGone);
}

// What the rendering waiter asks from its own thread: when a copy ready then would be let go.
TEST(CopyBatch, LetGoForACopyReadyAtATimeFollowsTheLatchAndTheSettings) {
  const DisplayClock clock{10'000'000, 10'000'000, 0};  // vsyncs (and latches) at 10, 20, 30 ms
  const auto letGo = [&](microseconds window, microseconds before, int64_t readyNs) -> std::pair<int64_t, int64_t> {
    const auto at = CopyBatch::letGoForCopyReadyAt(clock, window, before, readyNs);
    return at ? std::pair{at->letGoNs, at->latchNs} : std::pair{int64_t(-1), int64_t(-1)};
  };
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(letGo(microseconds(0), microseconds(2000), 5'000'000), P(8'000'000, 10'000'000));  // 2 ms before
  // Within the lead: a let-go that has passed (at once), for the same latch.
  EXPECT_EQ(letGo(microseconds(0), microseconds(2000), 8'500'000), P(8'000'000, 10'000'000));
  EXPECT_EQ(letGo(microseconds(0), microseconds(2000), 10'100'000), P(18'000'000, 20'000'000));  // the next
  EXPECT_EQ(letGo(microseconds(0), microseconds(0), 5'000'000), P(-1, -1));                      // off
  EXPECT_EQ(letGo(microseconds(1000), microseconds(2000), 5'000'000), P(-1, -1));                // a window
  EXPECT_FALSE(CopyBatch::letGoForCopyReadyAt(DisplayClock{}, microseconds(0), microseconds(2000), 5'000'000));
  const DisplayClock led{10'000'000, 10'000'000, 3'000'000};  // latched 3 ms before each vsync
  const auto ledAt = CopyBatch::letGoForCopyReadyAt(led, microseconds(0), microseconds(2000), 1'000'000);
  ASSERT_TRUE(ledAt);
  EXPECT_EQ(ledAt->letGoNs, 5'000'000);
  EXPECT_EQ(ledAt->latchNs, 7'000'000);
}

// Renderings the waiter held for a let-go are answered at it, before the batch's branches resolve.
TEST(CopyBatch, ALetGoRunsItsHookBeforeTheBatchsCopiesGo) {
  Loop l;
  const DisplayClock clock = displayClock(l);  // latch at 10 ms
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000), [clock] { return clock; });
  int hookRuns = 0;
  bool hookRanFirst = false;
  batch.runAtLetGo([&] { hookRuns++; });
  auto copy = batch.join().then([&](int64_t) { hookRanFirst = hookRuns == 1; }).eagerlyEvaluate(nullptr);
  l.advance(7999 * kj::MICROSECONDS);
  EXPECT_EQ(hookRuns, 0);
  l.advance(1 * kj::MICROSECONDS);  // 8 ms: let go
  EXPECT_EQ(hookRuns, 1);
  EXPECT_TRUE(hookRanFirst);
}

TEST(CopyBatch, HeldFramesCommittedAfterTheirLatchAreCountedAsPast) {
  Loop l;
  CopyBatch batch(l.timer, microseconds(0), microseconds(2000));
  batch.countHeldFrame(10'000'000, 9'000'000);   // before its latch
  batch.countHeldFrame(10'000'000, 10'000'000);  // at it: still taken
  batch.countHeldFrame(10'000'000, 10'000'001);  // after: missed it
  EXPECT_EQ(batch.framesHeld(), 3u);
  EXPECT_EQ(batch.framesHeldPastLatch(), 1u);
}

// The daemon's let-go: a timerfd the event loop watches (MonotonicAlarm), not the loop's own timer.
TEST(CopyBatch, WithAnAlarmBeforeLatchCopiesGoNoSoonerThanTheirLetGo) {
  auto io = kj::setupAsyncIo();
  auto alarm = MonotonicAlarm::create(*io.lowLevelProvider);
  ASSERT_TRUE(alarm) << alarm.error().describe();
  // A latch 400 ms out, let go 200 ms before it: far enough for a loaded machine to join in time.
  const int64_t startNs = monotonicNowNs();
  const DisplayClock clock{startNs + 400'000'000, 400'000'000, 0};
  CopyBatch batch(
      io.provider->getTimer(), microseconds(0), microseconds(200'000), [clock] { return clock; },
      std::move(alarm).value());
  auto first = batch.join();
  auto second = batch.join();
  const int64_t latchNs = first.wait(io.waitScope);
  const int64_t goneNs = monotonicNowNs();
  EXPECT_EQ(latchNs, clock.originNs);
  EXPECT_GE(goneNs, latchNs - 200'000'000);
  EXPECT_EQ(second.wait(io.waitScope), latchNs);
  EXPECT_EQ(batch.batches(), 1u);
}

}  // namespace
}  // namespace xrc
