// Bounded waits that count only time this process could run.
//
// An application stopped (SIGSTOP, a debugger) or not scheduled for longer than a wait's bound
// must not find, once resumed, a timeout for an answer its I/O thread (or its driver's queue
// thread) is about to deliver: those threads were stopped too. So a wait runs in slices, and a
// slice that took much longer than asked counts for two slices only.
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace xrc::client {

class RunnableBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kSlice{100};

  explicit RunnableBudget(std::chrono::nanoseconds timeout)
      : left_(std::chrono::duration_cast<Clock::duration>(timeout)) {}
  bool exhausted() const { return left_ <= Clock::duration::zero(); }
  // How long the next slice may wait.
  Clock::duration slice() const { return std::clamp<Clock::duration>(left_, Clock::duration::zero(), kSlice); }
  // Charges a slice that began at `start`: what it took, at most two slices.
  void charge(Clock::time_point start) { left_ -= std::min<Clock::duration>(Clock::now() - start, 2 * kSlice); }

 private:
  Clock::duration left_;
};

// Waits on `cv` until `ready()` or until `timeout` of runnable time has passed; returns ready().
template <typename Predicate>
bool waitRunnable(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, std::chrono::nanoseconds timeout,
                  Predicate ready) {
  RunnableBudget budget(timeout);
  while (!ready() && !budget.exhausted()) {
    const auto start = RunnableBudget::Clock::now();
    cv.wait_for(lock, budget.slice(), ready);
    budget.charge(start);
  }
  return ready();
}

// vkWaitForFences on all of `count` fences, counted the same way: VK_TIMEOUT once `timeout` has
// passed.
inline VkResult waitFencesRunnable(VkDevice device, const VkFence* fences, uint32_t count,
                                   std::chrono::nanoseconds timeout) {
  RunnableBudget budget(timeout);
  for (;;) {
    const auto start = RunnableBudget::Clock::now();
    const auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(budget.slice());
    const VkResult r = vkWaitForFences(device, count, fences, VK_TRUE, uint64_t(slice.count()));
    if (r != VK_TIMEOUT) return r;
    budget.charge(start);
    if (budget.exhausted()) return VK_TIMEOUT;
  }
}

inline VkResult waitFenceRunnable(VkDevice device, VkFence fence, std::chrono::nanoseconds timeout) {
  return waitFencesRunnable(device, &fence, 1, timeout);
}

}  // namespace xrc::client
