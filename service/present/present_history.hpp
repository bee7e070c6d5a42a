// Seed 003: when a present semaphore may be reused and when a replaced swapchain may be
// destroyed. Vulkan never says when the presentation engine (PE) has waited on the semaphore of
// a vkQueuePresentKHR. But the CPU pacing waits for the fence of frame N-2 before frame N, and
// a submission that used image I waited on the semaphore vkAcquireNextImageKHR signalled for I:
// once it completes, the PE had handed I back, so it had processed every earlier present of I,
// and the semaphores of those presents are free. A swapchain that was replaced gets no more
// submissions to prove anything; it (with its remaining semaphores) is freed once the first
// present of its successor is proven processed, and a bounded backlog of such swapchains makes
// the caller idle the queue and free them all.
//
// Where VK_EXT_swapchain_maintenance1 gives each present a fence, a signalled fence is a second,
// direct proof (presentProcessed): that present's semaphore is free at once, and an old swapchain
// whose presents all have it is freed without waiting for its successor. Both proofs may be
// given; either frees.
//
// Pure bookkeeping over any handle types (Vulkan's, or a test's fakes): the caller creates and
// destroys; this says when.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

namespace xrc::present {

template <typename Semaphore, typename Swapchain>
class PresentHistory {
 public:
  // A swapchain no present uses any more, with the semaphores its presents waited on.
  struct Retired {
    Swapchain swapchain{};
    std::vector<Semaphore> semaphores;
  };

  explicit PresentHistory(size_t maxOldSwapchains) : maxOld_(maxOldSwapchains) {}

  // Presents go to `swapchain` (with `imageCount` images) from now on. The current one, if any,
  // joins the old swapchains awaiting proof.
  void beginSwapchain(Swapchain swapchain, uint32_t imageCount) {
    if (current_) old_.push_back(retire(std::move(*current_)));
    current_.emplace();
    current_->swapchain = swapchain;
    current_->images.resize(imageCount);
  }

  // Frame `serial` presented image `index` of the current swapchain, waiting on `semaphore`.
  // Also call it when vkQueuePresentKHR failed with OUT_OF_DATE or SUBOPTIMAL: the semaphore
  // wait is still carried out.
  void presented(uint32_t index, uint64_t serial, Semaphore semaphore) {
    auto& history = current_->images.at(index);
    history.push_back({semaphore, serial});
    if (!current_->firstPresent) current_->firstPresent = Use{semaphore, serial};
    inUse_++;
  }

  // The submission of frame `serial` has completed (its fence signalled), and so has every
  // earlier one. Frees what that proves unused.
  void completed(uint64_t serial) {
    if (!current_) return;
    for (auto& history : current_->images) {
      // The newest present of this image whose submission completed: its acquire was waited
      // on, so every present of the image before it was processed.
      size_t proven = 0;
      for (size_t i = 0; i < history.size(); ++i) {
        if (history[i].serial <= serial) proven = i;
      }
      for (size_t i = 0; i < proven; ++i) {
        if (current_->firstPresent && history.front().serial == current_->firstPresent->serial) {
          firstPresentProven();
        }
        free_.push_back(history.front().semaphore);
        history.pop_front();
        inUse_--;
      }
    }
  }

  // A present semaphore proven unused, to reuse; none when none is.
  std::optional<Semaphore> takeFree() {
    if (free_.empty()) return std::nullopt;
    Semaphore s = free_.front();
    free_.pop_front();
    return s;
  }

  // The present of frame `serial` has been processed: its present fence (VK_EXT_swapchain_
  // maintenance1) signalled, so the presentation engine is done with its semaphore. Frees that
  // semaphore, or, for an old swapchain, the swapchain once none of its presents is unproven.
  void presentProcessed(uint64_t serial) {
    if (current_) {
      for (auto& history : current_->images) {
        for (auto it = history.begin(); it != history.end(); ++it) {
          if (it->serial != serial) continue;
          if (current_->firstPresent && current_->firstPresent->serial == serial) firstPresentProven();
          free_.push_back(it->semaphore);
          history.erase(it);
          inUse_--;
          return;
        }
      }
    }
    for (auto old = old_.begin(); old != old_.end(); ++old) {
      auto& pending = old->pending;
      auto it = std::find_if(pending.begin(), pending.end(), [&](const Use& u) { return u.serial == serial; });
      if (it == pending.end()) continue;
      old->proven.push_back(it->semaphore);
      pending.erase(it);
      if (pending.empty()) {
        provenOld_.push_back(toRetired(std::move(*old)));
        old_.erase(old);
      }
      return;
    }
  }

  // A semaphore taken for a present that did not happen (the acquire failed): never waited on.
  void giveBack(Semaphore semaphore) { free_.push_front(semaphore); }

  // Old swapchains proven unused: the caller destroys them and their semaphores.
  std::vector<Retired> takeRetired() { return std::exchange(provenOld_, {}); }

  // More old swapchains wait for proof than the bound allows: the caller idles the queue (every
  // present it made is then processed) and calls drainOld().
  bool backlogFull() const { return old_.size() > maxOld_; }
  // After the queue went idle: every old swapchain, to destroy.
  std::vector<Retired> drainOld() {
    std::vector<Retired> out = takeRetired();
    for (auto& r : old_) out.push_back(toRetired(std::move(r)));
    old_.clear();
    return out;
  }

  // Everything (current swapchain included), for destruction after the queue went idle; free
  // semaphores come as entries without a swapchain.
  std::vector<Retired> drainAll() {
    if (current_) old_.push_back(retire(std::move(*current_)));
    current_.reset();
    std::vector<Retired> out = drainOld();
    for (Semaphore s : free_) out.push_back({Swapchain{}, {s}});
    free_.clear();
    return out;
  }

  size_t oldSwapchains() const { return old_.size() + provenOld_.size(); }
  // Semaphores of the current swapchain's presents not yet proven processed.
  size_t semaphoresInUse() const { return inUse_; }
  size_t freeSemaphores() const { return free_.size(); }

 private:
  struct Use {
    Semaphore semaphore{};
    uint64_t serial = 0;
  };
  struct Current {
    Swapchain swapchain{};
    std::vector<std::deque<Use>> images;
    std::optional<Use> firstPresent;  // until proven processed
  };

  // A replaced swapchain: the presents it holds wait for proof.
  struct Old {
    Swapchain swapchain{};
    std::vector<Use> pending;       // presents not yet proven processed
    std::vector<Semaphore> proven;  // semaphores of presents proven processed
  };

  Old retire(Current&& c) {
    Old r{c.swapchain, {}, {}};
    for (auto& history : c.images) {
      for (const Use& u : history) r.pending.push_back(u);
      inUse_ -= history.size();
    }
    return r;
  }
  static Retired toRetired(Old&& old) {
    Retired r{old.swapchain, std::move(old.proven)};
    for (const Use& u : old.pending) r.semaphores.push_back(u.semaphore);
    return r;
  }

  // The successor of every old swapchain has had its first present processed, so every present
  // made to them before it was processed too.
  void firstPresentProven() {
    current_->firstPresent.reset();
    for (auto& r : old_) provenOld_.push_back(toRetired(std::move(r)));
    old_.clear();
  }

  size_t maxOld_;
  std::optional<Current> current_;
  std::vector<Old> old_;            // replaced, waiting for their successor's first present
  std::vector<Retired> provenOld_;  // proven unused, not yet taken
  std::deque<Semaphore> free_;
  size_t inUse_ = 0;
};

}  // namespace xrc::present
