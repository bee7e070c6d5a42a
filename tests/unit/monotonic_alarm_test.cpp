// MonotonicAlarm: the event loop woken at an absolute CLOCK_MONOTONIC time through a timerfd.
#include "rpc/monotonic_alarm.hpp"

#include <gtest/gtest.h>
#include <kj/async-io.h>

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

TEST(MonotonicAlarm, ATimePastWakesAtOnce) {
  AlarmLoop l;
  ASSERT_TRUE(l.alarm);
  auto past = l.alarm->at(monotonicNowNs() - 1'000'000);
  EXPECT_TRUE(past.poll(l.io.waitScope));
  past.wait(l.io.waitScope);
  auto zero = l.alarm->at(0);  // the clock's start: passed too (0 would disarm a timerfd)
  EXPECT_TRUE(zero.poll(l.io.waitScope));
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
  l.alarm->at(atNs).wait(l.io.waitScope);
  EXPECT_GE(monotonicNowNs(), atNs);
}

}  // namespace
}  // namespace xrc
