#include "timeline.hpp"

namespace xrc::gpu {

Result<std::unique_ptr<Timeline>> Timeline::create(VkDevice device) {
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateSemaphore(device, &info, nullptr, &semaphore), "vkCreateSemaphore(timeline)"); !s) {
    return s.error();
  }
  auto timeline = std::make_unique<Timeline>();
  timeline->semaphore_ = vk::Semaphore(device, semaphore);
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
