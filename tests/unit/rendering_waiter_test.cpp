// The timeline mode's CPU-side waits for clients' rendering, on a real Vulkan device (lavapipe in
// CI): values reached are answered promptly, values never reached at their deadline, a new wait
// joins a long one without waiting behind it, and nothing is left unanswered at shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

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
                            std::shared_ptr<const void> keepAlive = nullptr,
                            RenderingWaiter::WhenReached whenReached = RenderingWaiter::WhenReached::answer) {
    auto done = std::make_shared<std::promise<bool>>();
    auto future = done->get_future();
    waiter_->wait(
        t.get(), value, monotonicNowNs() + int64_t(deadline.count()) * 1'000'000, std::move(keepAlive),
        [done](RenderingWaiter::Answer a) { done->set_value(a.reached); }, whenReached);
    return future;
  }
  // A waiter whose copies would be let go at what `letGoFor` says. Its look-ahead is an hour unless
  // given: it looks at renderings that would be held however far off their let-go is, so that a
  // test sees them found and held.
  void useLetGo(RenderingWaiter::LetGoFor letGoFor, SleepBeforeLetGo sleep = {std::chrono::hours(1)}) {
    waiter_.reset();
    auto waiter = RenderingWaiter::create(gpu_->device(), std::move(letGoFor), sleep);
    ASSERT_TRUE(waiter) << waiter.error().describe();
    waiter_ = std::move(waiter).value();
  }
  // Until the waiter holds `count` renderings found done (bounded: false after 5 s).
  bool holds(size_t count) {
    for (int i = 0; i < 500; ++i) {
      if (waiter_->held() == count) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  // A wait held for a let-go whose whole answer the future gives.
  std::future<RenderingWaiter::Answer> waitAnswer(const Timeline& t, uint64_t value) {
    auto answer = std::make_shared<std::promise<RenderingWaiter::Answer>>();
    auto future = answer->get_future();
    waiter_->wait(
        t.get(), value, monotonicNowNs() + 60'000'000'000, nullptr,
        [answer](RenderingWaiter::Answer a) { answer->set_value(a); }, RenderingWaiter::WhenReached::holdForLetGo);
    return future;
  }
  static constexpr int64_t kLatchNs = 123'456'789;  // named by the let-go, carried to the answer

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

// A rendering whose copy a batch would hold anyway is answered at the batch's let-go (answerHeld),
// not when found done: the event loop is woken once per batch, not once per rendering.
TEST_F(RenderingWaiterTest, ARenderingHeldForALetGoIsAnsweredThereNotWhenFound) {
  useLetGo([](int64_t readyNs) { return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs}; });
  auto t = timeline();
  auto held = waitAnswer(*t, 1);
  signal(*t, 1);
  ASSERT_TRUE(holds(1)) << "the rendering was not found done and held";
  EXPECT_EQ(held.wait_for(0ms), std::future_status::timeout) << "answered before its let-go";
  EXPECT_EQ(waiter_->pending(), 1u);
  waiter_->answerHeld();  // the batch is let go
  ASSERT_EQ(held.wait_for(0ms), std::future_status::ready) << "answerHeld answers on the calling thread";
  const RenderingWaiter::Answer a = held.get();
  EXPECT_TRUE(a.reached);
  EXPECT_TRUE(a.atLetGo);
  EXPECT_EQ(a.latchNs, kLatchNs);
  EXPECT_EQ(waiter_->pending(), 0u);
}

// Not yet done at answerHeld: a held wait stays a wait until its rendering is done, then is held.
TEST_F(RenderingWaiterTest, AnswerHeldLeavesRenderingsNotYetDone) {
  useLetGo([](int64_t readyNs) { return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs}; });
  auto t = timeline();
  auto held = waitAnswer(*t, 1);
  std::this_thread::sleep_for(20ms);
  waiter_->answerHeld();
  EXPECT_EQ(held.wait_for(50ms), std::future_status::timeout);
  EXPECT_EQ(waiter_->pending(), 1u);
  EXPECT_EQ(waiter_->held(), 0u);
  signal(*t, 1);
  ASSERT_TRUE(holds(1));
  waiter_->answerHeld();
  ASSERT_EQ(held.wait_for(0ms), std::future_status::ready);
  EXPECT_TRUE(held.get().atLetGo);
}

// With no batch let go to take it, the thread answers a held rendering itself at its let-go,
// never before (when its copy would have gone), as held for that latch.
TEST_F(RenderingWaiterTest, AHeldRenderingNoBatchTakesIsAnsweredAtItsLetGo) {
  std::atomic<int64_t> letGoNs{0};
  useLetGo([&](int64_t readyNs) {
    int64_t expected = 0;
    letGoNs.compare_exchange_strong(expected, readyNs + 150'000'000);  // 150 ms after it is found
    return RenderingWaiter::LetGo{letGoNs.load(), kLatchNs};
  });
  auto t = timeline();
  auto answeredNs = std::make_shared<std::promise<int64_t>>();
  auto answered = answeredNs->get_future();
  waiter_->wait(
      t->get(), 1, monotonicNowNs() + 60'000'000'000, nullptr,
      [answeredNs](RenderingWaiter::Answer a) {
        answeredNs->set_value(a.reached && a.atLetGo && a.latchNs == kLatchNs ? monotonicNowNs() : -1);
      },
      RenderingWaiter::WhenReached::holdForLetGo);
  signal(*t, 1);
  ASSERT_EQ(answered.wait_for(5s), std::future_status::ready);
  const int64_t at = answered.get();
  ASSERT_GT(at, 0) << "answered not reached, or not as held for its latch";
  EXPECT_GE(at, letGoNs.load()) << "answered before its let-go";
  EXPECT_EQ(waiter_->pending(), 0u);
}

// Over another runtime the display clock follows its xrWaitFrame: when it moves the latch
// earlier, a held rendering goes at the new let-go, not the one it was held for.
TEST_F(RenderingWaiterTest, AHeldRenderingFollowsALetGoTheClockMovesEarlier) {
  std::atomic<bool> moved{false};
  std::atomic<int64_t> newLetGoNs{0};
  useLetGo([&](int64_t readyNs) {
    if (!moved.load()) return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs};
    int64_t expected = 0;
    newLetGoNs.compare_exchange_strong(expected, readyNs + 50'000'000);
    return RenderingWaiter::LetGo{newLetGoNs.load(), kLatchNs - 1};
  });
  auto t = timeline();
  auto held = waitAnswer(*t, 1);
  signal(*t, 1);
  ASSERT_TRUE(holds(1));
  moved = true;  // the thread reads the clock again within its longest sleep (100 ms)
  ASSERT_EQ(held.wait_for(5s), std::future_status::ready) << "still held for the old let-go";
  const RenderingWaiter::Answer a = held.get();
  EXPECT_TRUE(a.atLetGo);
  EXPECT_EQ(a.latchNs, kLatchNs - 1);
  EXPECT_GE(monotonicNowNs(), newLetGoNs.load()) << "answered before the new let-go";
}

// Found done within the lead before the latch (no let-go ahead), or asked to be answered at once:
// answered when found, as without batching.
TEST_F(RenderingWaiterTest, ARenderingWithNoLetGoAheadOrNotHeldIsAnsweredAtOnce) {
  useLetGo([](int64_t) { return RenderingWaiter::LetGo{0, kLatchNs}; });
  auto t = timeline();
  signal(*t, 1);
  auto noLetGo = waitAnswer(*t, 1);
  ASSERT_EQ(noLetGo.wait_for(5s), std::future_status::ready);
  const RenderingWaiter::Answer a = noLetGo.get();
  EXPECT_TRUE(a.reached);
  EXPECT_FALSE(a.atLetGo);

  useLetGo([](int64_t readyNs) { return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs}; });
  auto t2 = timeline();
  signal(*t2, 1);
  auto notHeld = waitFor(*t2, 1, 60s);
  ASSERT_EQ(notHeld.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(notHeld.get());
}

// Renderings that would only be held for a let-go further off than the look-ahead are not looked
// at before it: no pass over their timelines until then, none held, none answered; from the
// look-ahead on they are found, held, and answered at their let-go.
TEST_F(RenderingWaiterTest, RenderingsThatWouldBeHeldAreNotLookedAtUntilNearTheirLetGo) {
  // A look-ahead of 50 ms rather than the daemon's 1 ms: on a loaded machine the look must still
  // come before the let-go, or the renderings are answered at once instead of at it.
  const int64_t letGoNs = monotonicNowNs() + 400'000'000;
  useLetGo([letGoNs](int64_t) { return RenderingWaiter::LetGo{letGoNs, kLatchNs}; }, {50ms});
  constexpr size_t kCount = RenderingWaiter::kMaxBlockingEntries + 2;  // polled, not waited on
  std::vector<std::unique_ptr<Timeline>> timelines;
  std::vector<std::future<RenderingWaiter::Answer>> answers;
  for (size_t i = 0; i < kCount; ++i) {
    timelines.push_back(timeline());
    signal(*timelines.back(), 1);  // done before the wait: only a look finds it
    answers.push_back(waitAnswer(*timelines.back(), 1));
  }
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(waiter_->passes(), 0u) << "looked at renderings a let-go " << (letGoNs - monotonicNowNs()) / 1'000'000
                                   << " ms off would hold";
  EXPECT_EQ(waiter_->held(), 0u);
  EXPECT_EQ(waiter_->pending(), kCount);
  for (auto& a : answers) {
    ASSERT_EQ(a.wait_for(5s), std::future_status::ready) << "never looked at near the let-go";
    const RenderingWaiter::Answer answer = a.get();
    EXPECT_TRUE(answer.reached);
    EXPECT_TRUE(answer.atLetGo);
    EXPECT_EQ(answer.latchNs, kLatchNs);
  }
  EXPECT_GE(monotonicNowNs(), letGoNs) << "answered before the let-go";
  EXPECT_GE(waiter_->passes(), 1u);
  EXPECT_EQ(waiter_->pending(), 0u);
}

// A wait to be answered when done, joining renderings the thread sleeps over until their let-go,
// is answered when found, not at that let-go.
TEST_F(RenderingWaiterTest, AWaitAnsweredWhenDoneIsNotKeptForTheLetGoOfOthers) {
  // Sleeps of up to 10 s at a time: only the wait itself can end this one in time.
  useLetGo([](int64_t readyNs) { return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs}; }, {1ms, 10s});
  std::vector<std::unique_ptr<Timeline>> timelines;
  std::vector<std::future<RenderingWaiter::Answer>> held;
  for (size_t i = 0; i < RenderingWaiter::kMaxBlockingEntries + 2; ++i) {
    timelines.push_back(timeline());
    held.push_back(waitAnswer(*timelines.back(), 1));
  }
  std::this_thread::sleep_for(20ms);
  auto t = timeline();
  signal(*t, 1);
  auto now = waitFor(*t, 1, 60s);
  ASSERT_EQ(now.wait_for(3s), std::future_status::ready) << "kept for a let-go a minute off";
  EXPECT_TRUE(now.get());
  for (auto& h : held) EXPECT_EQ(h.wait_for(0ms), std::future_status::timeout);
}

// Shutting down answers held renderings as not reached, like every other pending wait: no copy
// starts after the waiter is gone.
TEST_F(RenderingWaiterTest, HeldRenderingsAreAnsweredNotReachedAtShutdown) {
  useLetGo([](int64_t readyNs) { return RenderingWaiter::LetGo{readyNs + 60'000'000'000, kLatchNs}; });
  auto t = timeline();
  auto held = waitAnswer(*t, 1);
  signal(*t, 1);
  ASSERT_TRUE(holds(1));
  EXPECT_EQ(held.wait_for(0ms), std::future_status::timeout);
  waiter_.reset();
  ASSERT_EQ(held.wait_for(0ms), std::future_status::ready);
  EXPECT_FALSE(held.get().reached);
}

}  // namespace
}  // namespace xrc::gpu
