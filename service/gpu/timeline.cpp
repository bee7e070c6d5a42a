#include "timeline.hpp"

namespace xrc::gpu {

Result<std::unique_ptr<Timeline>> Timeline::create(VkDevice device) {
  auto semaphore = vk::createSemaphore(device, VK_SEMAPHORE_TYPE_TIMELINE);
  if (!semaphore) return semaphore.error();
  auto timeline = std::make_unique<Timeline>();
  timeline->semaphore_ = std::move(semaphore).value();
  return timeline;
}

Status Timeline::wait(VkDevice device, uint64_t value, uint64_t timeoutNs) const {
  VkSemaphore semaphore = semaphore_.get();
  VkSemaphoreWaitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  VkResult r = vkWaitSemaphores(device, &info, timeoutNs);
  if (r == VK_TIMEOUT) return makeError(ErrorCode::timeout, "timeline value {} not reached in time", value);
  return vk::check(r, "vkWaitSemaphores");
}

}  // namespace xrc::gpu
