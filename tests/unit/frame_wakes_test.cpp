// waitFrameWake: when a waitFrame answer leaves, relative to its planned wake and the display's
// latch of the frame before. The display's select() runs on this thread here; the KJ timer is a
// manual one. The code under test reads the real clock for the wake and its bounds: the margins
// below leave this thread tens of milliseconds to be descheduled in (a loaded machine) before a
// test could mistake one wake for another.
#include "rpc/frame_wakes.hpp"

#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/async.h>
#include <kj/timer.h>

#include <chrono>
#include <thread>

#include "manual_timer_loop.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc {
namespace {

constexpr int64_t kPeriod = 200'000'000;  // 5 Hz: a quarter period is 50 ms
constexpr int64_t kMs = 1'000'000;

using Loop = test::ManualTimerLoop;

// A display that latched the vsync before `vsyncNs` and is due to latch `vsyncNs` next.
void displayBefore(FrameScheduler& scheduler, int64_t vsyncNs) { scheduler.select(vsyncNs - kPeriod, kPeriod); }

// waitFrameWake for a wake at `vsyncNs`, the vsync whose latch it follows; sets `woken` when it
// resolves.
kj::Promise<void> wakeAt(Loop& l, FrameScheduler& scheduler, int64_t vsyncNs, bool& woken, bool overtakes = true) {
  return waitFrameWake(scheduler, l.timer, vsyncNs, vsyncNs, kPeriod, [overtakes] { return overtakes; })
      .then([&woken] { woken = true; })
      .eagerlyEvaluate(nullptr);
}

TEST(FrameWakes, AWakeBeforeTheLatchWaitsForTheLatch) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 100 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken);
  l.advance(50 * kj::MILLISECONDS);
  EXPECT_FALSE(woken) << "answered before its wake";
  l.advance(55 * kj::MILLISECONDS);  // the timer's wake: the display has not latched yet
  EXPECT_FALSE(woken) << "answered before the display latched the frame before";
  scheduler.select(vsync, kPeriod);
  l.waitScope.poll();
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, AStalledDisplayDelaysTheWakeByAQuarterPeriodAtMost) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 100 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken);
  l.advance(105 * kj::MILLISECONDS);
  EXPECT_FALSE(woken);
  l.advance((kPeriod / 4 / kMs - 10) * kj::MILLISECONDS);
  EXPECT_FALSE(woken);
  l.advance(15 * kj::MILLISECONDS);  // a quarter period past the wake
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, ADisplayGoingIdleBeforeTheWakeStillWaitsForTheWake) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 1000 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken);
  scheduler.displayIdle();  // releases the latch waiter well before the wake
  l.waitScope.poll();
  EXPECT_FALSE(woken) << "answered before its wake";
  l.advance(1005 * kj::MILLISECONDS);
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, ALatchBeforeTheWakeStillWaitsForTheWake) {
  // A display whose clock runs ahead of the pacer's: its select() for the vsync comes early.
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 1000 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken);
  scheduler.select(vsync, kPeriod);
  l.waitScope.poll();
  EXPECT_FALSE(woken) << "answered before its wake";
  l.advance(1005 * kj::MILLISECONDS);
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, ASessionThatNeverEndedAFrameWaitsForNoLatch) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 100 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken, /*overtakes=*/false);
  l.advance(50 * kj::MILLISECONDS);
  EXPECT_FALSE(woken);
  l.advance(55 * kj::MILLISECONDS);
  EXPECT_TRUE(woken) << "waited for a latch although there is no frame to overtake";
}

TEST(FrameWakes, AnIdleDisplayLeavesTheWakeToTheTimer) {
  Loop l;
  FrameScheduler scheduler;  // never selected: idle
  const int64_t vsync = monotonicNowNs() + 100 * kMs;
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken);
  l.advance(50 * kj::MILLISECONDS);
  EXPECT_FALSE(woken);
  l.advance(55 * kj::MILLISECONDS);
  EXPECT_TRUE(woken);
}

// The daemon's event loop times its timer with the clock the daemon keeps its times in, which
// atMonotonicNs() relies on.
TEST(FrameWakes, KjsEventLoopTimesItsTimerOnTheMonotonicClock) {
  auto io = kj::setupAsyncIo();
  const int64_t before = monotonicNowNs();
  const int64_t kjNs = (io.provider->getTimer().now() - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS;
  const int64_t after = monotonicNowNs();
  // The timer's reading is the loop's, taken when it was set up (just before `before`).
  EXPECT_LE(kjNs, after);
  EXPECT_GT(kjNs, before - 1'000 * kMs);
}

// A wake planned while the event loop's turn has run a while (here 30 ms) comes at its time, not
// that much early: a delay counted from the timer's reading at the turn's start would.
TEST(FrameWakes, AWakeIsNotEarlyByTheTimeItsTurnHasRun) {
  Loop l;
  FrameScheduler scheduler;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const int64_t vsync = monotonicNowNs() + 100 * kMs;
  bool woken = false;
  auto wake = wakeAt(l, scheduler, vsync, woken, /*overtakes=*/false);
  l.advance(105 * kj::MILLISECONDS);
  EXPECT_FALSE(woken) << "woken before its time";
  l.advance(100 * kj::MILLISECONDS);
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, HousekeepingRunsOnAGridOfVsyncs) {
  const DisplayClock clock{1'000 * kMs, 50 * kMs};
  const int64_t interval = 250 * kMs;
  for (int64_t now : {1'000 * kMs, 1'003 * kMs, 1'249 * kMs, 1'250 * kMs, 1'777 * kMs}) {
    const int64_t wake = housekeepingWakeNs(clock, now, interval);
    EXPECT_GT(wake, now);
    EXPECT_LE(wake, now + interval);
    EXPECT_EQ((wake - clock.originNs) % interval, 0) << now;
  }
  // Two timers of one interval set at different times share their wake-ups.
  EXPECT_EQ(housekeepingWakeNs(clock, 1'010 * kMs, interval), housekeepingWakeNs(clock, 1'190 * kMs, interval));
  // At 90 Hz: whole periods, about the interval apart.
  const DisplayClock fast{0, 11'111'111};
  const int64_t wake = housekeepingWakeNs(fast, 5'000 * kMs, interval);
  EXPECT_EQ(wake % fast.periodNs, 0);
  EXPECT_EQ(housekeepingWakeNs(fast, wake, interval) - wake, 22 * fast.periodNs);
  // No usable clock, or periods longer than the interval: the interval itself.
  EXPECT_EQ(housekeepingWakeNs(DisplayClock{}, 7 * kMs, interval), 7 * kMs + interval);
  EXPECT_EQ(housekeepingWakeNs(DisplayClock{0, 500 * kMs}, 7 * kMs, interval), 7 * kMs + interval);
}

}  // namespace
}  // namespace xrc
