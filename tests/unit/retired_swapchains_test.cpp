// RetiredSwapchains frees a destroyed swapchain only once its GPU work is done, and never waits
// for that while retiring or collecting.
#include <gtest/gtest.h>

#include <set>

#include "compositor/retired_swapchains.hpp"

namespace xrc {
namespace {

// Swapchains are told apart by id; `busy` holds the ids whose copies are still "in flight".
struct Fixture {
  std::set<uint32_t> busy;
  RetiredSwapchains retired{[this](SwapchainCore& core) { return busy.count(core.id) == 0; }};

  std::shared_ptr<SwapchainCore> make(uint32_t id, std::weak_ptr<SwapchainCore>& watch) {
    auto core = std::make_shared<SwapchainCore>();
    core->id = id;
    watch = core;
    return core;
  }
};

TEST(RetiredSwapchains, IdleSwapchainIsFreedAtOnce) {
  Fixture f;
  std::weak_ptr<SwapchainCore> watch;
  f.retired.retire(f.make(1, watch));
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(f.retired.kept(), 0u);
}

TEST(RetiredSwapchains, BusySwapchainIsKeptUntilItsCopiesFinish) {
  Fixture f;
  std::weak_ptr<SwapchainCore> one, two;
  f.busy = {1, 2};
  f.retired.retire(f.make(1, one));
  f.retired.retire(f.make(2, two));
  EXPECT_FALSE(one.expired());
  EXPECT_EQ(f.retired.collect(), 2u);
  f.busy.erase(2);
  EXPECT_EQ(f.retired.collect(), 1u);
  EXPECT_TRUE(two.expired());
  EXPECT_FALSE(one.expired());
  f.busy.clear();
  EXPECT_EQ(f.retired.collect(), 0u);
  EXPECT_TRUE(one.expired());
}

// Whoever collects hears of each swapchain kept (the daemon then looks again soon), and of no
// other.
TEST(RetiredSwapchains, TellsWhenItKeepsOne) {
  Fixture f;
  int told = 0;
  f.retired.onKept([&] { told++; });
  std::weak_ptr<SwapchainCore> idle, busy;
  f.retired.retire(f.make(1, idle));
  EXPECT_EQ(told, 0);
  f.busy = {2};
  f.retired.retire(f.make(2, busy));
  EXPECT_EQ(told, 1);
  f.busy.clear();
  EXPECT_EQ(f.retired.collect(), 0u);
  EXPECT_TRUE(busy.expired());
  EXPECT_EQ(told, 1);
}

TEST(RetiredSwapchains, DrainGivesUpAfterItsTimeoutAndKeepsWhatIsInFlight) {
  Fixture f;
  std::weak_ptr<SwapchainCore> stuck;
  f.busy = {7};
  f.retired.retire(f.make(7, stuck));
  EXPECT_EQ(f.retired.drain(std::chrono::milliseconds(20)), 1u);
  EXPECT_FALSE(stuck.expired());
  f.busy.clear();
  EXPECT_EQ(f.retired.drain(std::chrono::milliseconds(20)), 0u);
  EXPECT_TRUE(stuck.expired());
}

}  // namespace
}  // namespace xrc
