#include "window_presenter.hpp"

#include <algorithm>
#include <cmath>

#include "../gpu/barriers.hpp"
#include "../log.hpp"

namespace xrc::present {

namespace {
constexpr uint64_t kFenceTimeoutNs = 2'000'000'000ull;  // a presentation blit longer than this: a broken GPU
// An image not handed back within this is a missed window frame, not a stalled display loop.
constexpr uint64_t kAcquireTimeoutNs = 5'000'000ull;

constexpr VkImageSubresourceRange kColor{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};

// Plain 8-bit UNORM first: the composition holds display-ready values, and copying them into
// an sRGB image would encode them a second time.
VkSurfaceFormatKHR chooseFormat(const std::vector<VkSurfaceFormatKHR>& formats) {
  for (VkFormat want : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM}) {
    for (const auto& f : formats) {
      if (f.format == want) return f;
    }
  }
  return formats.front();
}

// Mailbox (newest wins, never blocks), else immediate, else FIFO (always there).
VkPresentModeKHR choosePresentMode(const std::vector<VkPresentModeKHR>& modes) {
  for (VkPresentModeKHR want : {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR}) {
    if (std::find(modes.begin(), modes.end(), want) != modes.end()) return want;
  }
  return VK_PRESENT_MODE_FIFO_KHR;
}
}  // namespace

Result<std::unique_ptr<WindowPresenter>> WindowPresenter::create(gpu::GpuDevice& gpu,
                                                                 std::unique_ptr<NativeWindow> window) {
  auto presenter = std::make_unique<WindowPresenter>(gpu, std::move(window));
  if (auto s = presenter->init(); !s) return s.error();
  return presenter;
}

WindowPresenter::WindowPresenter(gpu::GpuDevice& gpu, std::unique_ptr<NativeWindow> window)
    : gpu_(gpu), window_(std::move(window)) {}

WindowPresenter::~WindowPresenter() {
  if (window_) close(true);
}

Status WindowPresenter::init() {
  VkDevice device = gpu_.device();
  const char* system = windowSystemName(window_->system());
  auto surface = window_->createSurface(gpu_.instance());
  if (!surface) return surface.error();
  surface_ = surface.value();
  VkBool32 supported = VK_FALSE;
  vkGetPhysicalDeviceSurfaceSupportKHR(gpu_.physical(), gpu_.graphicsQueue().family, surface_, &supported);
  if (!supported) {
    return makeError(ErrorCode::unsupported, "the GPU's graphics queue cannot present to this {} window", system);
  }
  uint32_t count = 0;
  vkGetPhysicalDeviceSurfaceFormatsKHR(gpu_.physical(), surface_, &count, nullptr);
  std::vector<VkSurfaceFormatKHR> formats(count);
  vkGetPhysicalDeviceSurfaceFormatsKHR(gpu_.physical(), surface_, &count, formats.data());
  if (formats.empty()) return makeError(ErrorCode::unsupported, "the {} window's surface offers no formats", system);
  surfaceFormat_ = chooseFormat(formats);
  vkGetPhysicalDeviceSurfacePresentModesKHR(gpu_.physical(), surface_, &count, nullptr);
  std::vector<VkPresentModeKHR> modes(count);
  vkGetPhysicalDeviceSurfacePresentModesKHR(gpu_.physical(), surface_, &count, modes.data());
  presentMode_ = choosePresentMode(modes);

  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = gpu_.graphicsQueue().family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) return s;
  pool_ = vk::CommandPool(device, pool);
  for (Slot& slot : slots_) {
    VkCommandBufferAllocateInfo cbInfo{};
    cbInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cbInfo.commandPool = pool;
    cbInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbInfo.commandBufferCount = 1;
    if (auto s = vk::check(vkAllocateCommandBuffers(device, &cbInfo, &slot.commands), "vkAllocateCommandBuffers"); !s) {
      return s;
    }
    VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0};
    VkFence fence = VK_NULL_HANDLE;
    if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s;
    slot.fence = vk::Fence(device, fence);
    VkSemaphoreCreateInfo semInfo{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, nullptr, 0};
    VkSemaphore sem = VK_NULL_HANDLE;
    if (auto s = vk::check(vkCreateSemaphore(device, &semInfo, nullptr, &sem), "vkCreateSemaphore"); !s) return s;
    slot.acquired = vk::Semaphore(device, sem);
  }
  VkFenceCreateInfo idleInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0};
  VkFence idle = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateFence(device, &idleInfo, nullptr, &idle), "vkCreateFence"); !s) return s;
  idleFence_ = vk::Fence(device, idle);
  if (auto s = recreateSwapchain(); !s) return s;
  log::info("window output: {}x{} on {}, present mode {}, format {}", extent_.width, extent_.height, system,
            presentMode_ == VK_PRESENT_MODE_MAILBOX_KHR     ? "mailbox"
            : presentMode_ == VK_PRESENT_MODE_IMMEDIATE_KHR ? "immediate"
                                                            : "fifo",
            int(surfaceFormat_.format));
  return {};
}

Status WindowPresenter::recreateSwapchain() {
  VkSurfaceCapabilitiesKHR caps{};
  if (auto s = vk::check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(gpu_.physical(), surface_, &caps),
                         "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
      !s) {
    return s;
  }
  VkExtent2D extent = caps.currentExtent;
  if (extent.width == UINT32_MAX) {  // the window's size is whatever the swapchain's is
    const WindowEvents now = window_->poll();
    extent = {std::clamp(now.width, caps.minImageExtent.width, caps.maxImageExtent.width),
              std::clamp(now.height, caps.minImageExtent.height, caps.maxImageExtent.height)};
  }
  if (extent.width == 0 || extent.height == 0) {
    recreate_ = true;  // minimized: nothing to present to until it has a size again
    return {};
  }
  if ((caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0) {
    return makeError(ErrorCode::unsupported, "the {} window's swapchain images cannot be copied into",
                     windowSystemName(window_->system()));
  }
  uint32_t imageCount = std::max(caps.minImageCount + 1, 3u);
  if (caps.maxImageCount != 0) imageCount = std::min(imageCount, caps.maxImageCount);
  VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
  if ((caps.supportedCompositeAlpha & alpha) == 0) {
    alpha = VkCompositeAlphaFlagBitsKHR(caps.supportedCompositeAlpha & -caps.supportedCompositeAlpha);
  }
  VkSwapchainCreateInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
  info.surface = surface_;
  info.minImageCount = imageCount;
  info.imageFormat = surfaceFormat_.format;
  info.imageColorSpace = surfaceFormat_.colorSpace;
  info.imageExtent = extent;
  info.imageArrayLayers = 1;
  info.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = alpha;
  info.presentMode = presentMode_;
  info.clipped = VK_TRUE;
  info.oldSwapchain = swapchain_;
  VkSwapchainKHR created = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateSwapchainKHR(gpu_.device(), &info, nullptr, &created), "vkCreateSwapchainKHR"); !s) {
    return s;
  }
  uint32_t count = 0;
  vkGetSwapchainImagesKHR(gpu_.device(), created, &count, nullptr);
  images_.resize(count);
  vkGetSwapchainImagesKHR(gpu_.device(), created, &count, images_.data());
  const bool first = swapchain_ == VK_NULL_HANDLE;
  swapchain_ = created;
  extent_ = extent;
  history_.beginSwapchain(created, count);  // the previous one now awaits proof
  recreate_ = false;
  updateStats([&](PresenterStats& s) {
    s.open = true;
    s.width = extent.width;
    s.height = extent.height;
    s.swapchainsLive++;
    if (!first) s.recreations++;
  });
  return {};
}

Status WindowPresenter::retire(Slot& slot) {
  if (!slot.pending) return {};
  VkFence fence = slot.fence.get();
  const VkResult r = vkWaitForFences(gpu_.device(), 1, &fence, VK_TRUE, kFenceTimeoutNs);
  if (r != VK_SUCCESS) {
    return makeError(ErrorCode::timeout, "window presentation blit did not finish: {}", vk::resultName(r));
  }
  vkResetFences(gpu_.device(), 1, &fence);
  slot.pending = false;
  history_.completed(slot.serial);
  destroy(history_.takeRetired());
  return {};
}

void WindowPresenter::idle() {
  std::array<Slot*, 2> bySerial{&slots_[0], &slots_[1]};
  std::sort(bySerial.begin(), bySerial.end(), [](Slot* a, Slot* b) { return a->serial < b->serial; });
  for (Slot* slot : bySerial) {
    if (auto s = retire(*slot); !s) log::error("window output: {}", s.error().describe());
  }
  // Presents are queue operations too: once the queue has run everything submitted before an
  // empty submission, the engine has waited on every present semaphore (seed 003: what ANGLE's
  // vkQueueWaitIdle does when the old-swapchain backlog is full). The empty submission's fence is
  // waited for outside the queue's lock, and bounded, so copies keep being submitted meanwhile.
  VkFence fence = idleFence_.get();
  if (fence == VK_NULL_HANDLE) return;  // init failed before anything was submitted
  {
    gpu::Queue& queue = gpu_.graphicsQueue();
    Lock lock(queue.submitMutex);
    if (vkQueueSubmit(queue.queue, 0, nullptr, fence) != VK_SUCCESS) return;
  }
  const VkResult r = vkWaitForFences(gpu_.device(), 1, &fence, VK_TRUE, kFenceTimeoutNs);
  if (r != VK_SUCCESS) log::error("window output: the queue did not go idle: {}", vk::resultName(r));
  vkResetFences(gpu_.device(), 1, &fence);
}

void WindowPresenter::destroy(std::vector<History::Retired> retired) {
  if (retired.empty()) return;
  uint32_t swapchains = 0, semaphores = 0;
  for (auto& r : retired) {
    for (VkSemaphore s : r.semaphores) vkDestroySemaphore(gpu_.device(), s, nullptr);
    semaphores += uint32_t(r.semaphores.size());
    if (r.swapchain != VK_NULL_HANDLE) {
      vkDestroySwapchainKHR(gpu_.device(), r.swapchain, nullptr);
      swapchains++;
    }
  }
  updateStats([&](PresenterStats& s) {
    s.swapchainsLive -= swapchains;
    s.presentSemaphoresLive -= semaphores;
  });
}

Result<VkSemaphore> WindowPresenter::presentSemaphore() {
  if (auto reused = history_.takeFree()) return *reused;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, nullptr, 0};
  VkSemaphore sem = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateSemaphore(gpu_.device(), &info, nullptr, &sem), "vkCreateSemaphore"); !s) {
    return s.error();
  }
  updateStats([](PresenterStats& s) { s.presentSemaphoresLive++; });
  return sem;
}

void WindowPresenter::record(VkCommandBuffer cb, const PresentSource& source, VkImage target) {
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &begin);
  // The acquire semaphore is waited on at the transfer stage; the layout change chains to it.
  gpu::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
               {gpu::imageBarrier(target, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                                  VK_ACCESS_TRANSFER_WRITE_BIT, kColor)});
  // Scaled to fit, centred; the bars black.
  const double scale = std::min(double(extent_.width) / source.width, double(extent_.height) / source.height);
  const int32_t w = std::max<int32_t>(1, int32_t(std::lround(source.width * scale)));
  const int32_t h = std::max<int32_t>(1, int32_t(std::lround(source.height * scale)));
  const int32_t x = (int32_t(extent_.width) - w) / 2, y = (int32_t(extent_.height) - h) / 2;
  if (w != int32_t(extent_.width) || h != int32_t(extent_.height)) {
    VkClearColorValue black{};
    black.float32[3] = 1.f;
    vkCmdClearColorImage(cb, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1, &kColor);
    VkMemoryBarrier waw{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &waw, 0, nullptr, 0,
                         nullptr);
  }
  VkImageBlit blit{};
  blit.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  blit.srcOffsets[1] = {int32_t(source.width), int32_t(source.height), 1};
  blit.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  blit.dstOffsets[0] = {x, y, 0};
  blit.dstOffsets[1] = {x + w, y + h, 1};
  const bool exact = w == int32_t(source.width) && h == int32_t(source.height);
  vkCmdBlitImage(cb, source.image, source.layout, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &blit,
                 exact ? VK_FILTER_NEAREST : VK_FILTER_LINEAR);
  gpu::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
               {gpu::imageBarrier(target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
                                  VK_ACCESS_TRANSFER_WRITE_BIT, 0, kColor)});
  vkEndCommandBuffer(cb);
}

void WindowPresenter::present(const PresentSource& source) {
  if (!window_) return;  // closed
  const WindowEvents events = window_->poll();
  if (events.closeRequested) {
    close();
    return;
  }
  if (events.resized) recreate_ = true;
  auto skip = [this] { updateStats([](PresenterStats& s) { s.skipped++; }); };

  Slot& slot = slots_[serial_ % slots_.size()];
  // CPU pacing: this slot's previous frame (two frames ago) must be done before it is reused.
  if (auto s = retire(slot); !s) {
    log::warn("window output: {}; frame not presented", s.error().describe());
    return skip();
  }
  if (history_.backlogFull()) {
    idle();
    destroy(history_.drainOld());
    updateStats([](PresenterStats& s) { s.backlogDrains++; });
  }
  if (recreate_) {
    if (auto s = recreateSwapchain(); !s) {
      log::error("window output: {}; the window output ends", s.error().describe());
      return close();
    }
    if (recreate_) return skip();  // minimized
  }
  auto semaphore = presentSemaphore();
  if (!semaphore) {
    log::error("window output: {}", semaphore.error().describe());
    return skip();
  }
  uint32_t index = 0;
  VkResult r =
      vkAcquireNextImageKHR(gpu_.device(), swapchain_, kAcquireTimeoutNs, slot.acquired.get(), VK_NULL_HANDLE, &index);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_TIMEOUT || r == VK_NOT_READY) {
    history_.giveBack(semaphore.value());
    if (r == VK_ERROR_OUT_OF_DATE_KHR) recreate_ = true;
    return skip();
  }
  if (r != VK_SUCCESS && r != VK_SUBOPTIMAL_KHR) {
    history_.giveBack(semaphore.value());
    log::error("window output: vkAcquireNextImageKHR failed: {}; the window output ends", vk::resultName(r));
    return close();
  }
  if (r == VK_SUBOPTIMAL_KHR) recreate_ = true;  // acquired: present it, recreate before the next

  record(slot.commands, source, images_[index]);
  const VkSemaphore waits[2] = {slot.acquired.get(), source.timeline};
  const uint64_t waitValues[2] = {0, source.value};
  const VkPipelineStageFlags stages[2] = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT};
  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = 2;
  timeline.pWaitSemaphoreValues = waitValues;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = 2;
  submit.pWaitSemaphores = waits;
  submit.pWaitDstStageMask = stages;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &slot.commands;
  submit.signalSemaphoreCount = 1;
  VkSemaphore presentWait = semaphore.value();
  submit.pSignalSemaphores = &presentWait;
  VkPresentInfoKHR presentInfo{};
  presentInfo.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR;
  presentInfo.waitSemaphoreCount = 1;
  presentInfo.pWaitSemaphores = &presentWait;
  presentInfo.swapchainCount = 1;
  presentInfo.pSwapchains = &swapchain_;
  presentInfo.pImageIndices = &index;
  bool submitted = false;
  {
    gpu::Queue& queue = gpu_.graphicsQueue();
    Lock lock(queue.submitMutex);
    r = vkQueueSubmit(queue.queue, 1, &submit, slot.fence.get());
    submitted = r == VK_SUCCESS;
    if (submitted) r = vkQueuePresentKHR(queue.queue, &presentInfo);
  }
  if (!submitted) {
    // The image stays acquired and its acquire semaphore signalled: nothing here can be reused
    // safely any more.
    log::error("window output: vkQueueSubmit failed: {}; the window output ends", vk::resultName(r));
    history_.giveBack(presentWait);
    return close();
  }
  slot.pending = true;
  slot.serial = serial_;
  // Also when out of date or suboptimal, the present's semaphore wait is carried out.
  history_.presented(index, serial_++, presentWait);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) {
    recreate_ = true;
  } else if (r != VK_SUCCESS) {
    log::error("window output: vkQueuePresentKHR failed: {}; the window output ends", vk::resultName(r));
    return close();
  }
  uint32_t inFlight = 0;
  for (const Slot& s : slots_) inFlight += s.pending && vkGetFenceStatus(gpu_.device(), s.fence.get()) == VK_NOT_READY;
  updateStats([&](PresenterStats& s) {
    s.presents++;
    s.maxSubmissionsInFlight = std::max(s.maxSubmissionsInFlight, inFlight);
  });
}

void WindowPresenter::close(bool shutdown) {
  idle();
  destroy(history_.drainAll());
  swapchain_ = VK_NULL_HANDLE;
  images_.clear();
  if (surface_ != VK_NULL_HANDLE) vkDestroySurfaceKHR(gpu_.instance(), surface_, nullptr);
  surface_ = VK_NULL_HANDLE;
  window_.reset();
  updateStats([](PresenterStats& s) { s.open = false; });
  if (!shutdown) log::info("window output closed; the display goes on without it");
}

PresenterStats WindowPresenter::stats() const {
  Lock lock(statsMutex_);
  return stats_;
}

void WindowPresenter::updateStats(const std::function<void(PresenterStats&)>& change) {
  Lock lock(statsMutex_);
  change(stats_);
}

}  // namespace xrc::present
