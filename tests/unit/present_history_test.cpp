// PresentHistory (seed 003) against a fake presentation engine that hands images back in
// adversarial orders (the same image again and again, random images, presents processed only
// after long delays) and swapchains recreated at random: no semaphore is reused and no swapchain
// destroyed while the engine still has a present waiting on it, and what is kept stays bounded;
// with the proof that completed submissions give, and with present fences
// (VK_EXT_swapchain_maintenance1) instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "present/present_history.hpp"

namespace xrc::present {
namespace {

using Semaphore = uint32_t;
using Swapchain = uint32_t;

// The presentation engine, as far as the proof relies on it. Normally an image is handed back
// only once its previous presents were processed and (FIFO) another image replaced it on screen.
// With Order::early (immediate mode) it may be handed back while its previous present is still
// queued: the acquire then signals only once that present is processed, and a submission that
// used the image completes no earlier (acquireSignalled), as Vulkan allows.
class FakePresentationEngine {
 public:
  enum class Mode { fifo, immediate };
  enum class Order { random, sameImageFirst, early };

  FakePresentationEngine(Mode mode, Order order, uint32_t seed) : mode_(mode), order_(order), rng_(seed) {}

  void addSwapchain(Swapchain id, uint32_t imageCount) { images_[id].assign(imageCount, Image{}); }

  // The image, and the present sequence number after which its acquire signals.
  std::pair<uint32_t, uint64_t> acquire(Swapchain id) {
    auto& images = images_[id];
    for (;;) {
      std::vector<uint32_t> candidates;
      for (uint32_t i = 0; i < images.size(); ++i) {
        const bool handedBack = !images[i].acquired && images[i].queued == 0 && !onScreen(id, i);
        const bool early = order_ == Order::early && !images[i].acquired && !onScreen(id, i);
        if (handedBack || early) candidates.push_back(i);
      }
      if (!candidates.empty()) {
        uint32_t pick = candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng_)];
        if (order_ == Order::sameImageFirst && lastFreed_ && lastFreed_->first == id &&
            std::find(candidates.begin(), candidates.end(), lastFreed_->second) != candidates.end()) {
          pick = lastFreed_->second;
        }
        images[pick].acquired = true;
        return {pick, images[pick].lastSeq};
      }
      // Nothing to hand back: the engine must make progress (vkAcquireNextImageKHR blocks).
      EXPECT_FALSE(queue_.empty()) << "acquire with no image free and nothing queued";
      if (queue_.empty()) return {0, 0};
      processOne();
    }
  }

  // `serial`: the frame's, which the present's fence reports once the present is processed.
  void queuePresent(Swapchain id, uint32_t image, Semaphore semaphore, uint64_t serial) {
    auto& img = images_[id][image];
    img.acquired = false;
    img.queued++;
    img.lastSeq = ++seq_;
    pendingWaits_[semaphore]++;
    queue_.push_back({id, image, semaphore, seq_, serial});
  }

  // The frames whose present fences signalled since the last call.
  std::vector<uint64_t> takeSignalledFences() { return std::exchange(signalled_, {}); }

  // The acquire that returned `after` has signalled: every present up to it was processed.
  void acquireSignalled(uint64_t after) {
    while (processedSeq_ < after && !queue_.empty()) processOne();
  }

  // Processes none, some or all queued presents; long stretches of none.
  void progress() {
    const uint32_t roll = std::uniform_int_distribution<uint32_t>(0, 9)(rng_);
    const size_t n = roll < 4 ? 0 : roll < 8 ? 1 : queue_.size();
    for (size_t i = 0; i < n && !queue_.empty(); ++i) processOne();
  }
  void processAll() {
    while (!queue_.empty()) processOne();
  }

  int pendingWaits(Semaphore s) const {
    auto it = pendingWaits_.find(s);
    return it == pendingWaits_.end() ? 0 : it->second;
  }
  // Queued presents of it, or (while the output runs) its image on screen.
  bool inUse(Swapchain id, bool countScreen) const {
    for (const auto& p : queue_) {
      if (p.swapchain == id) return true;
    }
    return countScreen && screen_ && screen_->first == id;
  }
  void destroy(Swapchain id) { images_.erase(id); }

 private:
  struct Image {
    bool acquired = false;
    uint32_t queued = 0;   // presents of it the engine has not processed
    uint64_t lastSeq = 0;  // its latest present's sequence number
  };
  struct Present {
    Swapchain swapchain;
    uint32_t image;
    Semaphore semaphore;
    uint64_t seq;
    uint64_t serial;
  };

  bool onScreen(Swapchain id, uint32_t image) const {
    return mode_ == Mode::fifo && screen_ && *screen_ == std::make_pair(id, image);
  }
  void processOne() {
    const Present p = queue_.front();
    queue_.pop_front();
    pendingWaits_[p.semaphore]--;
    processedSeq_ = p.seq;
    auto it = images_.find(p.swapchain);
    if (it != images_.end()) it->second[p.image].queued--;
    if (mode_ == Mode::fifo) screen_ = {p.swapchain, p.image};
    lastFreed_ = {p.swapchain, p.image};
    signalled_.push_back(p.serial);
  }

  Mode mode_;
  Order order_;
  std::mt19937 rng_;
  std::map<Swapchain, std::vector<Image>> images_;
  std::deque<Present> queue_;
  std::map<Semaphore, int> pendingWaits_;
  std::optional<std::pair<Swapchain, uint32_t>> screen_;
  std::optional<std::pair<Swapchain, uint32_t>> lastFreed_;
  uint64_t seq_ = 0, processedSeq_ = 0;
  std::vector<uint64_t> signalled_;
};

// What tells the history a present was processed: completed submissions that acquired the same
// image later (seed 003), or each present's own fence.
enum class Proof { acquires, presentFences };

struct Outcome {
  size_t semaphoresCreated = 0;
  size_t maxLiveSemaphores = 0;
  size_t maxOldSwapchains = 0;
  size_t swapchainsDestroyed = 0;
  size_t backlogDrains = 0;
};

// Runs `frames` frames the way the window output does (CPU pacing two frames deep) and checks
// every semaphore handed back for reuse and every swapchain handed back for destruction.
Outcome run(FakePresentationEngine::Mode mode, FakePresentationEngine::Order order, uint32_t seed, uint32_t imageCount,
            double recreateChance, size_t maxOld, uint64_t frames, Proof proof = Proof::acquires) {
  FakePresentationEngine pe(mode, order, seed);
  PresentHistory<Semaphore, Swapchain> history(maxOld);
  std::mt19937 rng(seed * 7 + 1);
  Outcome out;
  std::set<Semaphore> live;
  Swapchain current = 1;
  pe.addSwapchain(current, imageCount);
  history.beginSwapchain(current, imageCount);
  // At shutdown, after the queue went idle, the swapchain on screen is destroyed too.
  auto destroy = [&](std::vector<PresentHistory<Semaphore, Swapchain>::Retired> retired, bool shutdown = false) {
    for (const auto& r : retired) {
      if (r.swapchain != 0) {
        // A present fence proves only the present processed, not its image off screen, which
        // VK_EXT_swapchain_maintenance1 allows; the acquire proof keeps the screen's too.
        EXPECT_FALSE(pe.inUse(r.swapchain, !shutdown && proof == Proof::acquires))
            << "swapchain " << r.swapchain << " destroyed while the engine uses it";
        pe.destroy(r.swapchain);
        out.swapchainsDestroyed++;
      }
      for (Semaphore s : r.semaphores) {
        EXPECT_EQ(pe.pendingWaits(s), 0) << "semaphore " << s << " destroyed before the engine waited on it";
        live.erase(s);
      }
    }
  };
  std::vector<uint64_t> acquireSignalsAfter;  // per frame
  for (uint64_t serial = 0; serial < frames; ++serial) {
    if (serial >= 2) {
      // CPU pacing: frame N waits for N-2's fence; that submission waited for its acquire.
      pe.acquireSignalled(acquireSignalsAfter[serial - 2]);
      if (proof == Proof::acquires) history.completed(serial - 2);
    }
    if (proof == Proof::presentFences) {
      for (uint64_t processed : pe.takeSignalledFences()) history.presentProcessed(processed);
    }
    destroy(history.takeRetired());
    if (history.backlogFull()) {
      pe.processAll();  // vkQueueWaitIdle
      destroy(history.drainOld());
      out.backlogDrains++;
    }
    if (std::bernoulli_distribution(recreateChance)(rng)) {
      ++current;
      pe.addSwapchain(current, imageCount);
      history.beginSwapchain(current, imageCount);
    }
    Semaphore semaphore;
    if (auto reused = history.takeFree()) {
      semaphore = *reused;
      EXPECT_EQ(pe.pendingWaits(semaphore), 0) << "semaphore " << semaphore << " reused while still waited on";
    } else {
      semaphore = Semaphore(++out.semaphoresCreated);
      live.insert(semaphore);
    }
    const auto [image, signalsAfter] = pe.acquire(current);
    acquireSignalsAfter.push_back(signalsAfter);
    pe.queuePresent(current, image, semaphore, serial);
    history.presented(image, serial, semaphore);
    pe.progress();
    out.maxLiveSemaphores = std::max(out.maxLiveSemaphores, live.size());
    out.maxOldSwapchains = std::max(out.maxOldSwapchains, history.oldSwapchains());
  }
  pe.processAll();
  destroy(history.drainAll(), true);
  EXPECT_TRUE(live.empty()) << live.size() << " semaphores never handed back";
  return out;
}

using Mode = FakePresentationEngine::Mode;
using Order = FakePresentationEngine::Order;

TEST(PresentHistory, SemaphoresAreReusedOnlyOnceProvenWaitedOn) {
  for (Mode mode : {Mode::fifo, Mode::immediate}) {
    for (Order order : {Order::random, Order::sameImageFirst, Order::early}) {
      if (order == Order::early && mode == Mode::fifo) continue;  // modelled for immediate mode
      for (uint32_t images : {2u, 3u, 5u}) {
        for (uint32_t seed = 1; seed <= 20; ++seed) {
          const Outcome o = run(mode, order, seed, images, 0.0, 4, 2000);
          // Seed 003: a history of three per image, plus what waits for reuse.
          EXPECT_LE(o.maxLiveSemaphores, 3 * images + 2) << "images " << images << " seed " << seed;
          EXPECT_LE(o.semaphoresCreated, 3 * images + 2);
        }
      }
    }
  }
}

TEST(PresentHistory, TheSameImageHandedBackEveryFrameKeepsAFewSemaphores) {
  const Outcome o = run(Mode::immediate, Order::sameImageFirst, 3, 3, 0.0, 4, 1000);
  EXPECT_LE(o.semaphoresCreated, 5u);  // three in the history, one being reused, one at start-up
}

TEST(PresentHistory, OldSwapchainsAreDestroyedOnlyOnceTheirSuccessorPresented) {
  for (Mode mode : {Mode::fifo, Mode::immediate}) {
    for (uint32_t seed = 1; seed <= 30; ++seed) {
      const Outcome o =
          run(mode, mode == Mode::immediate && seed % 2 ? Order::early : Order::random, seed, 3, 0.05, 4, 3000);
      EXPECT_GT(o.swapchainsDestroyed, 50u);
      EXPECT_LE(o.maxOldSwapchains, 5u);
    }
  }
}

// A resize storm: a new swapchain every frame. Proof never comes in time, so the bounded backlog
// makes the caller idle the queue; nothing accumulates past it.
TEST(PresentHistory, ARecreationStormIsBoundedByTheBacklog) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Outcome o = run(Mode::fifo, Order::random, seed, 3, 1.0, 4, 500);
    EXPECT_GT(o.backlogDrains, 0u);
    EXPECT_LE(o.maxOldSwapchains, 5u);
    EXPECT_LE(o.maxLiveSemaphores, 3u * 8);
  }
}

TEST(PresentHistory, PresentFencesFreeWhatTheyProveAndBoundTheSame) {
  for (Mode mode : {Mode::fifo, Mode::immediate}) {
    for (Order order : {Order::random, Order::sameImageFirst, Order::early}) {
      if (order == Order::early && mode == Mode::fifo) continue;
      for (uint32_t seed = 1; seed <= 20; ++seed) {
        const Outcome o = run(mode, order, seed, 3, 0.05, 4, 3000, Proof::presentFences);
        EXPECT_LE(o.maxLiveSemaphores, 3 * 3 + 2) << "seed " << seed;
        EXPECT_GT(o.swapchainsDestroyed, 50u);
        EXPECT_LE(o.maxOldSwapchains, 5u);
      }
    }
  }
  // A storm: fences free old swapchains without waiting for a successor's first present.
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Outcome o = run(Mode::fifo, Order::random, seed, 3, 1.0, 4, 500, Proof::presentFences);
    EXPECT_LE(o.maxOldSwapchains, 5u);
    EXPECT_LE(o.maxLiveSemaphores, 3u * 8);
  }
}

TEST(PresentHistory, APresentFenceFreesItsSemaphoreAtOnceAndAnOldSwapchainWithItsLast) {
  PresentHistory<Semaphore, Swapchain> history(4);
  history.beginSwapchain(1, 2);
  history.presented(0, 0, 10);
  history.presented(1, 1, 11);
  history.presentProcessed(1);  // frame 1's fence: no later acquire needed
  EXPECT_EQ(history.takeFree(), std::optional<Semaphore>(11));
  history.beginSwapchain(2, 2);  // swapchain 1 still has frame 0's present unproven
  EXPECT_TRUE(history.takeRetired().empty());
  history.presented(0, 2, 12);
  history.presentProcessed(0);  // its last present processed: swapchain 1 may go
  auto retired = history.takeRetired();
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0].swapchain, 1u);
  EXPECT_EQ(retired[0].semaphores, std::vector<Semaphore>{10});
  EXPECT_EQ(history.semaphoresInUse(), 1u);
}

TEST(PresentHistory, NothingIsFreedBeforeAnySubmissionCompleted) {
  PresentHistory<Semaphore, Swapchain> history(4);
  history.beginSwapchain(1, 2);
  history.presented(0, 0, 10);
  history.presented(1, 1, 11);
  history.presented(0, 2, 12);
  EXPECT_FALSE(history.takeFree());
  history.completed(1);  // frame 2 has not completed: image 0's first present is unproven
  EXPECT_FALSE(history.takeFree());
  history.completed(2);  // frame 2 acquired image 0 again: its present of frame 0 was processed
  EXPECT_EQ(history.takeFree(), std::optional<Semaphore>(10));
  EXPECT_FALSE(history.takeFree());
  EXPECT_EQ(history.semaphoresInUse(), 2u);
}

}  // namespace
}  // namespace xrc::present
