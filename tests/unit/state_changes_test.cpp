// StateChanges (protocol 1.18, Session.watchState): a watch resolves at the next change, every
// waiting watch at once, the count says how many changes there were, and a watch whose call went
// away leaves the others working.
#include <gtest/gtest.h>
#include <kj/async.h>

#include "rpc/state_changes.hpp"

namespace xrc {
namespace {

TEST(StateChanges, EveryWaitingWatchResolvesAtTheNextChange) {
  kj::EventLoop loop;
  kj::WaitScope waitScope(loop);
  StateChanges changes;
  EXPECT_EQ(changes.count(), 0u);
  auto first = changes.next();
  auto second = changes.next();
  EXPECT_FALSE(first.poll(waitScope));
  EXPECT_FALSE(second.poll(waitScope));
  changes.changed();
  EXPECT_EQ(changes.count(), 1u);
  EXPECT_TRUE(first.poll(waitScope));
  EXPECT_TRUE(second.poll(waitScope));
  first.wait(waitScope);
  second.wait(waitScope);
  // A watch after that change waits for the next one.
  auto third = changes.next();
  EXPECT_FALSE(third.poll(waitScope));
  changes.changed();
  EXPECT_EQ(changes.count(), 2u);
  third.wait(waitScope);
}

TEST(StateChanges, AChangeWithNobodyWatchingOnlyCounts) {
  kj::EventLoop loop;
  kj::WaitScope waitScope(loop);
  StateChanges changes;
  changes.changed();
  changes.changed();
  EXPECT_EQ(changes.count(), 2u);
  auto watch = changes.next();
  EXPECT_FALSE(watch.poll(waitScope));
}

TEST(StateChanges, AnAbandonedWatchLeavesTheOthersWorking) {
  kj::EventLoop loop;
  kj::WaitScope waitScope(loop);
  StateChanges changes;
  {
    auto abandoned = changes.next();  // the client left: its call's promise is dropped
  }
  auto kept = changes.next();  // cleans the abandoned one out on its way in
  changes.changed();
  EXPECT_TRUE(kept.poll(waitScope));
  kept.wait(waitScope);
}

}  // namespace
}  // namespace xrc
