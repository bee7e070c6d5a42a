#include "serial_submitter.hpp"

#include "../log.hpp"

namespace xrc::gpu {

namespace {
constexpr uint64_t kGpuTimeoutNs = 2'000'000'000ull;  // 2 s: a GPU that takes longer is broken
}  // namespace

Result<std::unique_ptr<SerialSubmitter>> SerialSubmitter::create(GpuDevice& gpu, Queue& queue, const char* what) {
  auto submitter = std::make_unique<SerialSubmitter>(gpu, queue, what);
  if (auto s = submitter->init(); !s) return s.error();
  return submitter;
}

SerialSubmitter::~SerialSubmitter() {
  if (auto s = waitSubmitted(); !s) log::error("{} at shutdown: {}", what_, s.error().describe());
}

Status SerialSubmitter::init() {
  VkDevice device = gpu_.device();
  auto timeline = Timeline::create(device);
  if (!timeline) return timeline.error();
  timeline_ = std::move(timeline).value();
  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = queue_.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) return s;
  pool_ = vk::CommandPool(device, pool);
  VkCommandBufferAllocateInfo cbInfo{};
  cbInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbInfo.commandPool = pool;
  cbInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbInfo.commandBufferCount = 1;
  if (auto s = vk::check(vkAllocateCommandBuffers(device, &cbInfo, &commands_), "vkAllocateCommandBuffers"); !s) {
    return s;
  }
  VkFenceCreateInfo fenceInfo{};
  fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s;
  fence_ = vk::Fence(device, fence);
  return {};
}

bool SerialSubmitter::running() const {
  return submitted_ && vkGetFenceStatus(gpu_.device(), fence_.get()) == VK_NOT_READY;
}

Status SerialSubmitter::waitSubmitted() {
  if (!submitted_) return {};
  VkFence fence = fence_.get();
  VkResult r = vkWaitForFences(gpu_.device(), 1, &fence, VK_TRUE, kGpuTimeoutNs);
  if (r != VK_SUCCESS) return makeError(ErrorCode::timeout, "{} did not finish: {}", what_, vk::resultName(r));
  vkResetFences(gpu_.device(), 1, &fence);
  submitted_ = false;
  return {};
}

Result<uint64_t> SerialSubmitter::submit(const TimelineWait& wait, const std::function<void(VkCommandBuffer)>& record) {
  if (auto s = waitSubmitted(); !s) return s.error();
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(commands_, &begin);
  record(commands_);
  vkEndCommandBuffer(commands_);

  const uint64_t value = timeline_->next();
  VkSemaphore signal = timeline_->get();
  VkTimelineSemaphoreSubmitInfo values{};
  values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  values.signalSemaphoreValueCount = 1;
  values.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &values;
  if (wait.semaphore != VK_NULL_HANDLE) {
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &wait.value;
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &wait.semaphore;
    submit.pWaitDstStageMask = &wait.stage;
  }
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands_;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &signal;
  {
    Lock lock(queue_.submitMutex);
    if (auto s = vk::check(vkQueueSubmit(queue_.queue, 1, &submit, fence_.get()), "vkQueueSubmit"); !s) {
      return makeError(s.error().code, "{}: {}", what_, s.error().message);
    }
  }
  submitted_ = true;
  lastValue_ = value;
  return value;
}

}  // namespace xrc::gpu
