// rpc_cpu auto: the RPC thread is kept on the idlest CPU, stays there while its waits for it are
// short, moves to the idlest other CPU that is idle enough once they are long, is left to the
// scheduler when none is, and is kept again some windows later. The policy follows a choice only
// once the thread is there.
#include "rpc/rpc_cpu_policy.hpp"

#include <gtest/gtest.h>

namespace xrc {
namespace {

using platform::CpuTimes;
using platform::ThreadSchedule;

// `runs` turns in a window, each waiting `meanWaitUs` on average for its CPU.
ThreadSchedule waits(uint64_t runs, uint64_t meanWaitUs) { return {runs * 50'000, runs * meanWaitUs * 1000, runs}; }

// A policy started on `cpu` (kept there).
RpcCpuPolicy startedOn(std::vector<int> allowed, int cpu, RpcCpuSettings settings = {}) {
  RpcCpuPolicy policy(std::move(allowed), settings);
  std::vector<CpuBusy> busy;
  for (int c = 0; c < 16; ++c) busy.push_back({c, c == cpu ? 0.0 : 0.3});
  const RpcCpuPolicy::Choice first = policy.start(cpu, busy);
  EXPECT_EQ(first.cpu, cpu);
  policy.moved(first);
  return policy;
}

TEST(RpcCpuPolicy, BusyShareIsTheBusyTicksOverAllOfEachCpuBetweenTwoSamples) {
  const std::vector<CpuTimes> before{{0, 100, 1000}, {1, 50, 1000}, {2, 0, 1000}, {4, 500, 900}};
  const std::vector<CpuTimes> after{{0, 150, 1100}, {1, 50, 1100}, {3, 10, 20}, {2, 0, 1000}, {4, 10, 100}};
  const std::vector<CpuBusy> busy = busyBetween(before, after);
  // CPU 3 was not in the first sample, CPU 2's clock did not tick, CPU 4's counters went back.
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_EQ(busy[0].cpu, 0);
  EXPECT_DOUBLE_EQ(busy[0].busy, 0.5);
  EXPECT_EQ(busy[1].cpu, 1);
  EXPECT_DOUBLE_EQ(busy[1].busy, 0.0);
}

TEST(RpcCpuPolicy, StartsOnTheIdlestCpuItMayUseOrWhereItIsWhenThatIsNearlyAsIdle) {
  const std::vector<CpuBusy> busy{{0, 0.40}, {1, 0.10}, {2, 0.02}, {3, 0.00}};
  RpcCpuPolicy far({0, 1, 2}, {});  // CPU 3, the idlest, is not the daemon's
  const RpcCpuPolicy::Choice first = far.start(0, busy);
  EXPECT_EQ(first.cpu, 2);
  EXPECT_TRUE(first.changed);
  EXPECT_EQ(far.cpu(), -1);  // not there until it is moved
  far.moved(first);
  EXPECT_EQ(far.cpu(), 2);
  EXPECT_EQ(far.moves(), 0u);  // the first CPU is no move
  RpcCpuPolicy near({0, 1, 2, 3}, {});
  EXPECT_EQ(near.start(2, busy).cpu, 2);  // 2 points above the idlest: its caches are warm
  // Nothing measured (a start shorter than a clock tick): where it is.
  EXPECT_EQ(near.start(1, std::vector<CpuBusy>{}).cpu, 1);
}

TEST(RpcCpuPolicy, DoesNotStartOnABusyCpuEvenWhereItIsNorWhenEveryOneIsBusy) {
  RpcCpuSettings settings;
  RpcCpuPolicy policy({0, 1}, settings);
  EXPECT_EQ(policy.start(0, std::vector<CpuBusy>{{0, 0.52}, {1, 0.49}}).cpu, 1);
  const RpcCpuPolicy::Choice none = policy.start(0, std::vector<CpuBusy>{{0, 0.9}, {1, 0.8}});
  EXPECT_EQ(none.cpu, -1);
  EXPECT_NE(none.why.find("no CPU it may use was at most 50 % busy"), std::string::npos) << none.why;
}

TEST(RpcCpuPolicy, StaysWhileItsWaitsAreShortOrTooFewToTell) {
  RpcCpuPolicy policy = startedOn({0, 1, 2}, 1);
  const std::vector<CpuBusy> busy{{0, 0.0}, {1, 0.9}, {2, 0.0}};
  EXPECT_FALSE(policy.step(waits(2000, 199), busy).changed);  // just under 200 µs per turn
  EXPECT_FALSE(policy.step(waits(9, 220), busy).changed);     // nine turns, 1.98 ms in all
  EXPECT_FALSE(policy.step(ThreadSchedule{}, busy).changed);  // no turn at all
  EXPECT_EQ(policy.cpu(), 1);
  EXPECT_EQ(policy.moves(), 0u);
}

TEST(RpcCpuPolicy, MovesAtTheThresholdAndWhenFewTurnsWaitedLong) {
  const std::vector<CpuBusy> busy{{0, 0.0}, {1, 0.9}};
  RpcCpuPolicy atThreshold = startedOn({0, 1}, 1);
  EXPECT_EQ(atThreshold.step(waits(10, 200), busy).cpu, 0);
  // A CPU taken outright leaves the thread few turns: three of 5 ms each say enough.
  RpcCpuPolicy starved = startedOn({0, 1}, 1);
  const RpcCpuPolicy::Choice moved = starved.step(waits(3, 5000), busy);
  EXPECT_TRUE(moved.changed);
  EXPECT_EQ(moved.cpu, 0);
  EXPECT_NE(moved.why.find("it waited 5000 µs on average in each of its 3 turns for CPU 1"), std::string::npos)
      << moved.why;
}

TEST(RpcCpuPolicy, MovesToTheIdlestOtherCpuOnceItsCpuKeepsItWaiting) {
  RpcCpuPolicy policy = startedOn({0, 1, 2, 3}, 1);
  // Its own CPU may look the idlest by ticks (a share of them is the thread's own): it still leaves.
  const RpcCpuPolicy::Choice moved =
      policy.step(waits(100, 900), std::vector<CpuBusy>{{0, 0.45}, {1, 0.0}, {2, 0.2}, {3, 0.6}});
  EXPECT_TRUE(moved.changed);
  EXPECT_EQ(moved.cpu, 2);
  EXPECT_NE(moved.why.find("it waited 900 µs on average in each of its 100 turns for CPU 1"), std::string::npos)
      << moved.why;
  EXPECT_EQ(policy.cpu(), 1);  // a move the kernel refused would change nothing
  EXPECT_EQ(policy.moves(), 0u);
  policy.moved(moved);
  EXPECT_EQ(policy.cpu(), 2);
  EXPECT_EQ(policy.moves(), 1u);
}

TEST(RpcCpuPolicy, IsLeftToTheSchedulerWithNoIdleCpuAndKeptAgainLater) {
  RpcCpuSettings settings;
  settings.retryWindows = 3;
  RpcCpuPolicy policy = startedOn({0, 1}, 0, settings);
  const std::vector<CpuBusy> busy{{0, 0.95}, {1, 0.7}};
  const RpcCpuPolicy::Choice left = policy.step(waits(50, 2000), busy);
  EXPECT_TRUE(left.changed);
  EXPECT_EQ(left.cpu, -1);
  EXPECT_NE(left.why.find("no other CPU it may use was at most 50 % busy"), std::string::npos) << left.why;
  policy.moved(left);
  EXPECT_EQ(policy.moves(), 1u);
  // Left for `retryWindows` windows whatever happens; then kept again where a CPU is idle enough.
  EXPECT_FALSE(policy.step(waits(50, 0), std::vector<CpuBusy>{{0, 0.0}, {1, 0.0}}).changed);
  EXPECT_FALSE(policy.step(waits(50, 0), busy).changed);
  EXPECT_FALSE(policy.step(waits(50, 0), busy).changed);  // the third window: no CPU idle, still left
  EXPECT_EQ(policy.cpu(), -1);
  EXPECT_FALSE(policy.step(waits(50, 0), busy).changed);
  EXPECT_FALSE(policy.step(waits(50, 0), busy).changed);
  const RpcCpuPolicy::Choice again = policy.step(waits(50, 0), std::vector<CpuBusy>{{0, 0.8}, {1, 0.1}});
  EXPECT_TRUE(again.changed);
  EXPECT_EQ(again.cpu, 1);
  policy.moved(again);
  EXPECT_EQ(policy.moves(), 2u);
}

}  // namespace
}  // namespace xrc
