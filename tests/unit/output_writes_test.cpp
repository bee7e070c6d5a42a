// OutputWrites: the composition records a write-after-write barrier only between writes to
// overlapping pixels of the display output.
#include <gtest/gtest.h>

#include "display/output_writes.hpp"

namespace xrc::display {
namespace {

TEST(OutputWrites, SideBySideViewsNeedNoBarrier) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({0, 0, 320, 240}));    // left eye
  EXPECT_FALSE(writes.write({320, 0, 640, 240}));  // right eye: disjoint
}

TEST(OutputWrites, OverlappingWriteWaitsForTheEarlierOne) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({0, 0, 320, 240}));
  EXPECT_TRUE(writes.write({100, 100, 140, 140}));  // a quad over the left eye
}

TEST(OutputWrites, EdgesThatTouchDoNotOverlap) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({0, 0, 10, 10}));
  EXPECT_FALSE(writes.write({10, 0, 20, 10}));
  EXPECT_FALSE(writes.write({0, 10, 10, 20}));
}

TEST(OutputWrites, ABarrierOrdersEverythingBeforeIt) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({0, 0, 320, 240}));
  EXPECT_FALSE(writes.write({320, 0, 640, 240}));
  EXPECT_TRUE(writes.write({300, 0, 340, 10}));  // spans both eyes: one barrier
  // After it only the spanning write is pending: the left eye again touches nothing pending.
  EXPECT_FALSE(writes.write({0, 100, 100, 200}));
  EXPECT_TRUE(writes.write({330, 5, 335, 8}));
}

TEST(OutputWrites, EmptyRectanglesWriteNothing) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({5, 5, 5, 50}));
  EXPECT_FALSE(writes.write({0, 0, 100, 100}));
}

TEST(OutputWrites, TheWholeOutputClearedFirstOrdersTheLayersAfterIt) {
  OutputWrites writes;
  EXPECT_FALSE(writes.write({0, 0, 640, 240}));  // the clear
  EXPECT_TRUE(writes.write({10, 10, 50, 50}));
  EXPECT_FALSE(writes.write({330, 10, 370, 50}));  // the same quad in the right eye
}

}  // namespace
}  // namespace xrc::display
