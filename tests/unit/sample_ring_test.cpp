#include <gtest/gtest.h>

#include "compositor/client_registry.hpp"

namespace xrc {
namespace {

TEST(SampleRing, PercentilesOverTheWindow) {
  SampleRing ring(4);
  EXPECT_EQ(ring.percentile(50), 0);
  for (double v : {10.0, 20.0, 30.0, 40.0}) ring.add(v);
  EXPECT_EQ(ring.percentile(50), 20.0);
  EXPECT_EQ(ring.percentile(100), 40.0);
  ring.add(50.0);  // replaces the oldest (10)
  EXPECT_EQ(ring.count(), 4u);
  EXPECT_EQ(ring.percentile(0), 20.0);
  EXPECT_EQ(ring.percentile(100), 50.0);
}

TEST(ClientRegistry, IdsAreUniqueAndRemovalIsExact) {
  ClientRegistry registry;
  auto a = registry.add({"a", 1, 0, SyncMode::host});
  auto b = registry.add({"b", 2, 0, SyncMode::binary});
  EXPECT_NE(a->id, b->id);
  EXPECT_EQ(registry.snapshot().size(), 2u);
  registry.remove(a->id);
  EXPECT_EQ(registry.find(a->id), nullptr);
  EXPECT_EQ(registry.find(b->id)->name, "b");
}

}  // namespace
}  // namespace xrc
