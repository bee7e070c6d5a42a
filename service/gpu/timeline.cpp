#include "timeline.hpp"

#include "../log.hpp"

namespace xrc::gpu {

namespace {
// Past this, the submission that was to signal the last value never ran (a failed submit, a lost
// device): destroying the semaphore then is no worse than not.
constexpr uint64_t kDestroyWaitNs = 2'000'000'000ull;
}  // namespace

Result<std::unique_ptr<Timeline>> Timeline::create(VkDevice device) {
  auto semaphore = vk::createSemaphore(device, VK_SEMAPHORE_TYPE_TIMELINE);
  if (!semaphore) return semaphore.error();
  return std::make_unique<Timeline>(device, std::move(semaphore).value());
}

Status Timeline::wait(uint64_t value, uint64_t timeoutNs) const {
  VkSemaphore semaphore = semaphore_.get();
  VkSemaphoreWaitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  VkResult r = vkWaitSemaphores(device_, &info, timeoutNs);
  if (r == VK_TIMEOUT) return makeError(ErrorCode::timeout, "timeline value {} not reached in time", value);
  return vk::check(r, "vkWaitSemaphores");
}

Status Timeline::signalOnHost(uint64_t value) {
  VkSemaphoreSignalInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  info.semaphore = semaphore_.get();
  info.value = value;
  return vk::check(vkSignalSemaphore(device_, &info), "vkSignalSemaphore(copy timeline)");
}

bool Timeline::reached(uint64_t value) const {
  if (value <= seenReached_.load(std::memory_order_relaxed)) return true;
  uint64_t now = 0;
  if (vkGetSemaphoreCounterValue(device_, semaphore_.get(), &now) != VK_SUCCESS) return false;
  uint64_t seen = seenReached_.load(std::memory_order_relaxed);
  while (now > seen && !seenReached_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  return now >= value;
}

Timeline::~Timeline() {
  // A fence proves its batch done, but drivers that emulate timeline semaphores (Mesa's common
  // runtime, lavapipe) record the batch's timeline signal on their submit thread after handing
  // the batch to the device, so the fence can signal while that thread is still to touch the
  // semaphore. Reaching the last value proves it is done with it.
  if (last_.load() == 0) return;
  if (auto s = wait(last_.load(), kDestroyWaitNs); !s) {
    log::warn("destroying a timeline semaphore whose value {} was never reached: {}", last_.load(),
              s.error().describe());
  }
}

}  // namespace xrc::gpu
