// The daemon's nice value: what RLIMIT_NICE allows when the one asked for is refused, and that
// it is set for the calling thread (and those it starts) alone.
#include <gtest/gtest.h>

#include <thread>

#include "platform/cpu_priority.hpp"

namespace xrc::platform {
namespace {

TEST(CpuPriority, RlimitNiceAllowsTwentyMinusItsValue) {
  EXPECT_EQ(lowestNiceAllowedBy(0), 20);  // may not lower at all
  EXPECT_EQ(lowestNiceAllowedBy(1), 19);
  EXPECT_EQ(lowestNiceAllowedBy(20), 0);
  EXPECT_EQ(lowestNiceAllowedBy(30), -10);  // systemd's LimitNICE=-10
  EXPECT_EQ(lowestNiceAllowedBy(40), -20);
  EXPECT_EQ(lowestNiceAllowedBy(1000), -20);
  EXPECT_EQ(lowestNiceAllowedBy(RLIM_INFINITY), -20);
}

TEST(CpuPriority, ARefusedNiceFallsBackToTheLowestTheLimitAllowsNeverAboveTheCurrentOne) {
  EXPECT_EQ(fallbackNice(-10, 0, 25), -5);   // halfway there
  EXPECT_EQ(fallbackNice(-10, 0, 40), -10);  // the limit was not what refused it
  EXPECT_EQ(fallbackNice(-10, 0, 0), 0);     // no room: stays
  EXPECT_EQ(fallbackNice(-10, 0, 20), 0);
  EXPECT_EQ(fallbackNice(-10, -15, 40), -15);  // already lower: never raised by a fallback
  EXPECT_EQ(fallbackNice(-10, 5, 18), 2);
}

TEST(CpuPriority, RaisingTheNiceValueIsAlwaysAllowedAndStaysWithTheThread) {
  const int mine = currentNice();
  const int asked = std::min(mine + 3, kHighestNice);
  NiceOutcome outcome;
  int seenInThread = 0, seenByChild = 0;
  std::thread([&] {
    outcome = applyNice(asked);
    seenInThread = currentNice();
    std::thread([&] { seenByChild = currentNice(); }).join();
  }).join();
  EXPECT_EQ(outcome.asked, asked);
  EXPECT_EQ(outcome.before, mine);
  EXPECT_EQ(outcome.applied, asked);
  EXPECT_TRUE(outcome.refusal.empty()) << outcome.refusal;
  EXPECT_EQ(seenInThread, asked);
  EXPECT_EQ(seenByChild, asked);   // threads started afterwards inherit it
  EXPECT_EQ(currentNice(), mine);  // other threads keep theirs
}

TEST(CpuPriority, AskingForTheCurrentValueChangesNothing) {
  const int mine = currentNice();
  const NiceOutcome outcome = applyNice(mine);
  EXPECT_EQ(outcome.applied, mine);
  EXPECT_TRUE(outcome.refusal.empty());
}

}  // namespace
}  // namespace xrc::platform
