// waitFrameWake: when a waitFrame answer leaves, relative to its planned wake and the display's
// latch of the frame before. The display's select() runs on this thread here; the KJ timer is a
// manual one, so a wake that needs it is seen to need it.
#include "rpc/frame_wakes.hpp"

#include <gtest/gtest.h>
#include <kj/async.h>
#include <kj/timer.h>

#include <chrono>
#include <thread>

#include "xrc/monotonic_clock.hpp"

namespace xrc {
namespace {

constexpr int64_t kPeriod = 50'000'000;  // 20 Hz
constexpr int64_t kMs = 1'000'000;

struct Loop {
  kj::EventLoop loop;
  kj::WaitScope waitScope{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};
  void advanceMs(int64_t ms) {
    timer.advanceTo(timer.now() + ms * kj::MILLISECONDS);
    waitScope.poll();
  }
};

// A display that latched the vsync before `vsyncNs` and is due to latch `vsyncNs` next.
void displayBefore(FrameScheduler& scheduler, int64_t vsyncNs) { scheduler.select(vsyncNs - kPeriod, kPeriod); }

void sleepUntil(int64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns - monotonicNowNs())); }

TEST(FrameWakes, AWakeAtTheLatchedVsyncIsWokenByTheDisplaysSelectAlone) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 2 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, vsync, vsync, kPeriod, [] {
                return true;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  sleepUntil(vsync + kMs);
  l.waitScope.poll();
  EXPECT_FALSE(woken) << "woken before the display latched the frame before";
  scheduler.select(vsync, kPeriod);
  l.waitScope.poll();
  // No timer was needed: the manual one has not moved.
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, AStalledDisplayDelaysTheWakeByAQuarterPeriodAtMost) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 2 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, vsync, vsync, kPeriod, [] {
                return true;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  sleepUntil(vsync + kMs);
  l.advanceMs(kPeriod / 4 / kMs - 5);
  EXPECT_FALSE(woken);
  l.advanceMs(10);
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, ADisplayGoingIdleBeforeTheWakeStillWaitsForTheWake) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 200 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, vsync, vsync, kPeriod, [] {
                return true;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  scheduler.displayIdle();  // releases the latch waiter well before the wake
  l.waitScope.poll();
  EXPECT_FALSE(woken) << "answered before its wake";
  l.advanceMs(205);
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, AWakeBeforeTheLatchIsATimersAndThenWaitsForTheLatch) {
  // Over another runtime the frame is due a latch lead before the vsync it is latched for.
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 10 * kMs;
  const int64_t wakeNs = vsync - 5 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, wakeNs, vsync, kPeriod, [] {
                return true;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  l.advanceMs(6);  // past the wake: the latch is still to come
  EXPECT_FALSE(woken);
  scheduler.select(vsync, kPeriod);
  l.waitScope.poll();
  EXPECT_TRUE(woken);
}

TEST(FrameWakes, ASessionThatNeverEndedAFrameWaitsForNoLatch) {
  Loop l;
  FrameScheduler scheduler;
  const int64_t vsync = monotonicNowNs() + 20 * kMs;
  displayBefore(scheduler, vsync);
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, vsync, vsync, kPeriod, [] {
                return false;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  l.advanceMs(10);
  EXPECT_FALSE(woken);
  l.advanceMs(15);
  EXPECT_TRUE(woken) << "waited for a latch although there is no frame to overtake";
}

TEST(FrameWakes, AnIdleDisplayLeavesTheWakeToTheTimer) {
  Loop l;
  FrameScheduler scheduler;  // never selected: idle
  const int64_t vsync = monotonicNowNs() + 20 * kMs;
  bool woken = false;
  auto wake = waitFrameWake(scheduler, l.timer, vsync, vsync, kPeriod, [] {
                return true;
              }).then([&] {
                  woken = true;
                }).eagerlyEvaluate(nullptr);
  l.advanceMs(10);
  EXPECT_FALSE(woken);
  l.advanceMs(15);
  EXPECT_TRUE(woken);
}

}  // namespace
}  // namespace xrc
