// MonotonicAlarm: the event loop woken at an absolute CLOCK_MONOTONIC time through a timerfd.
#include "rpc/monotonic_alarm.hpp"

#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <chrono>
#include <thread>

#include "xrc/monotonic_clock.hpp"

namespace xrc {
namespace {

struct AlarmLoop {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  std::shared_ptr<MonotonicAlarm> alarm;
  AlarmLoop() {
    auto created = MonotonicAlarm::create(*io.lowLevelProvider);
    if (created) alarm = std::move(created).value();
  }
};

TEST(MonotonicAlarm, WakesNoSoonerThanTheTimeAsked) {
  AlarmLoop l;
  ASSERT_TRUE(l.alarm);
  const int64_t atNs = monotonicNowNs() + 3'000'000;
  l.alarm->at(atNs).wait(l.io.waitScope);
  EXPECT_GE(monotonicNowNs(), atNs);
  // And again, armed anew.
  const int64_t nextNs = monotonicNowNs() + 1'500'000;
  l.alarm->at(nextNs).wait(l.io.waitScope);
  EXPECT_GE(monotonicNowNs(), nextNs);
}

// Waits for `wake`, and says whether it came within `bound` (a wake-up asked for now, not one
// left armed for a minute).
bool wokeWithin(kj::Promise<void> wake, kj::WaitScope& scope, kj::Timer& timer, kj::Duration bound) {
  return wake.then([] { return true; }).exclusiveJoin(timer.afterDelay(bound).then([] { return false; })).wait(scope);
}

TEST(MonotonicAlarm, ATimePastWakesAtOnce) {
  AlarmLoop l;
  ASSERT_TRUE(l.alarm);
  auto& timer = l.io.provider->getTimer();
  EXPECT_TRUE(wokeWithin(l.alarm->at(monotonicNowNs() - 1'000'000), l.io.waitScope, timer, 5 * kj::SECONDS));
  // The clock's start: passed too (0 would disarm a timerfd).
  EXPECT_TRUE(wokeWithin(l.alarm->at(0), l.io.waitScope, timer, 5 * kj::SECONDS));
}

// A wake-up dropped after its time came leaves an expiration unread; arming again clears it.
TEST(MonotonicAlarm, ArmingAgainForgetsADroppedWakeUpsExpiration) {
  AlarmLoop l;
  ASSERT_TRUE(l.alarm);
  {
    auto dropped = l.alarm->at(monotonicNowNs() + 1'000'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // it expires, unread
  }
  const int64_t atNs = monotonicNowNs() + 200'000'000;
  auto next = l.alarm->at(atNs);
  EXPECT_FALSE(next.poll(l.io.waitScope)) << "woken by the dropped wake-up's expiration";
  next.wait(l.io.waitScope);
  EXPECT_GE(monotonicNowNs(), atNs);
}

TEST(MonotonicAlarm, ASecondWakeUpWhileOneIsPendingFailsAndADroppedOneFreesIt) {
  AlarmLoop l;
  ASSERT_TRUE(l.alarm);
  {
    auto first = l.alarm->at(monotonicNowNs() + 60'000'000'000);  // a minute away
    EXPECT_FALSE(first.poll(l.io.waitScope));
    auto second = l.alarm->at(monotonicNowNs());
    EXPECT_ANY_THROW(second.wait(l.io.waitScope));
  }
  // The first dropped: the alarm takes a new time, which replaces the minute's.
  const int64_t atNs = monotonicNowNs() + 1'000'000;
  EXPECT_TRUE(wokeWithin(l.alarm->at(atNs), l.io.waitScope, l.io.provider->getTimer(), 30 * kj::SECONDS));
  EXPECT_GE(monotonicNowNs(), atNs);
}

}  // namespace
}  // namespace xrc
