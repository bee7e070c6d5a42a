// The timeline mode's CPU-side waits for clients' rendering, on a real Vulkan device (lavapipe in
// CI): values reached are answered promptly, values never reached at their deadline, a new wait
// joins a long one without waiting behind it, and nothing is left unanswered at shutdown.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "gpu/gpu_device.hpp"
#include "gpu/rendering_waiter.hpp"
#include "gpu/timeline.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc::gpu {
namespace {

using namespace std::chrono_literals;

class RenderingWaiterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gpu = GpuDevice::create(DeviceOptions{});
    ASSERT_TRUE(gpu) << gpu.error().describe();
    gpu_ = std::move(gpu).value();
    auto waiter = RenderingWaiter::create(gpu_->device());
    ASSERT_TRUE(waiter) << waiter.error().describe();
    waiter_ = std::move(waiter).value();
  }

  std::unique_ptr<Timeline> timeline() {
    auto t = Timeline::create(gpu_->device());
    EXPECT_TRUE(t);
    return std::move(t).value();
  }
  void signal(const Timeline& t, uint64_t value) {
    auto signalled = vk::signalTimeline(gpu_->device(), t.get(), value);
    ASSERT_TRUE(signalled) << signalled.error().describe();
  }
  // Waits for `t` at `value` with the given deadline; the future says whether it was reached.
  std::future<bool> waitFor(const Timeline& t, uint64_t value, std::chrono::milliseconds deadline,
                            std::shared_ptr<const void> keepAlive = nullptr) {
    auto done = std::make_shared<std::promise<bool>>();
    auto future = done->get_future();
    waiter_->wait(t.get(), value, monotonicNowNs() + int64_t(deadline.count()) * 1'000'000, std::move(keepAlive),
                  [done](bool reached) { done->set_value(reached); });
    return future;
  }

  std::unique_ptr<GpuDevice> gpu_;
  std::unique_ptr<RenderingWaiter> waiter_;
};

TEST_F(RenderingWaiterTest, AValueReachedLaterIsAnsweredReached) {
  auto t = timeline();
  auto reached = waitFor(*t, 5, 10s);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(reached.wait_for(0ms), std::future_status::timeout) << "answered before the value was reached";
  signal(*t, 3);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(reached.wait_for(0ms), std::future_status::timeout) << "3 is not 5";
  signal(*t, 7);  // past the value counts
  ASSERT_EQ(reached.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(reached.get());
  EXPECT_EQ(waiter_->pending(), 0u);
}

TEST_F(RenderingWaiterTest, AValueAlreadyReachedIsAnsweredAtOnce) {
  auto t = timeline();
  signal(*t, 2);
  auto reached = waitFor(*t, 2, 10s);
  ASSERT_EQ(reached.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(reached.get());
}

TEST_F(RenderingWaiterTest, ReachedTellsWithoutWaitingWhetherAValueWasReached) {
  auto t = timeline();
  EXPECT_FALSE(waiter_->reached(t->get(), 1));
  signal(*t, 4);
  EXPECT_TRUE(waiter_->reached(t->get(), 3));
  EXPECT_TRUE(waiter_->reached(t->get(), 4));
  EXPECT_FALSE(waiter_->reached(t->get(), 5));
  EXPECT_EQ(waiter_->pending(), 0u);
}

TEST_F(RenderingWaiterTest, AValueNeverReachedIsAnsweredAtItsDeadline) {
  auto t = timeline();
  const auto start = std::chrono::steady_clock::now();
  auto keepAlive = std::make_shared<int>(1);
  auto reached = waitFor(*t, 1, 300ms, keepAlive);
  ASSERT_EQ(reached.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(reached.get());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  // The entry, and what it kept alive, are gone once answered.
  for (int i = 0; i < 100 && keepAlive.use_count() > 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(keepAlive.use_count(), 1);
}

TEST_F(RenderingWaiterTest, ANewWaitIsNotHeldBehindALongOne) {
  auto hung = timeline(), healthy = timeline();
  auto stuck = waitFor(*hung, 1, 60s);
  std::this_thread::sleep_for(50ms);  // the thread is inside its wait for `hung` now
  for (uint64_t v = 1; v <= 20; ++v) {
    auto frame = waitFor(*healthy, v, 60s);
    signal(*healthy, v);
    ASSERT_EQ(frame.wait_for(5s), std::future_status::ready) << "release " << v;
    EXPECT_TRUE(frame.get());
  }
  EXPECT_EQ(stuck.wait_for(0ms), std::future_status::timeout);
  EXPECT_EQ(waiter_->pending(), 1u);
  // Shutting down answers it, not reached.
  waiter_.reset();
  ASSERT_EQ(stuck.wait_for(0ms), std::future_status::ready);
  EXPECT_FALSE(stuck.get());
}

TEST_F(RenderingWaiterTest, ManyWaitsOnOneTimelineAreAnsweredAsItRises) {
  auto t = timeline();
  std::vector<std::future<bool>> frames;
  for (uint64_t v = 1; v <= 16; ++v) frames.push_back(waitFor(*t, v, 60s));
  signal(*t, 8);
  for (uint64_t v = 1; v <= 8; ++v) {
    ASSERT_EQ(frames[v - 1].wait_for(5s), std::future_status::ready) << v;
    EXPECT_TRUE(frames[v - 1].get());
  }
  EXPECT_EQ(frames[8].wait_for(100ms), std::future_status::timeout);
  signal(*t, 16);
  for (uint64_t v = 9; v <= 16; ++v) {
    ASSERT_EQ(frames[v - 1].wait_for(5s), std::future_status::ready) << v;
    EXPECT_TRUE(frames[v - 1].get());
  }
}

// Past kMaxBlockingEntries the thread polls: values reached are still answered reached, and
// waits past their deadline not reached, each on its own timeline.
TEST_F(RenderingWaiterTest, ManyPendingWaitsArePolledWithTheirDeadlines) {
  constexpr size_t kCount = RenderingWaiter::kMaxBlockingEntries * 3;
  std::vector<std::unique_ptr<Timeline>> timelines;
  std::vector<std::future<bool>> stuck, reached;
  for (size_t i = 0; i < kCount; ++i) {
    timelines.push_back(timeline());
    // The first is signalled below; the others stay short of their value.
    stuck.push_back(waitFor(*timelines.back(), 1, i == 0 ? std::chrono::milliseconds(60s) : 300ms));
  }
  for (size_t i = 0; i < kCount; ++i) {
    reached.push_back(waitFor(*timelines[i], 0, 60s));  // already there
  }
  for (auto& f : reached) {
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(f.get());
  }
  signal(*timelines[0], 1);
  ASSERT_EQ(stuck[0].wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(stuck[0].get());
  for (size_t i = 1; i < kCount; ++i) {
    ASSERT_EQ(stuck[i].wait_for(5s), std::future_status::ready) << i;
    EXPECT_FALSE(stuck[i].get()) << i;
  }
  EXPECT_EQ(waiter_->pending(), 0u);
}

}  // namespace
}  // namespace xrc::gpu
