#include "shared_swapchain.hpp"

#include <algorithm>
#include <array>

#include "../log.hpp"

namespace xrc::gpu {

namespace {
constexpr uint64_t toNs(std::chrono::milliseconds ms) { return uint64_t(ms.count()) * 1000000ull; }

// A semaphore exportable as OPAQUE_FD (binary, or a timeline starting at 0), and its fd.
Status createExportedSemaphore(GpuDevice& gpu, VkSemaphoreType type, vk::Semaphore& semaphore, UniqueFd& fd) {
  VkDevice device = gpu.device();
  auto created = vk::createSemaphore(device, type, /*exportOpaqueFd=*/true);
  if (!created) return created.error();
  semaphore = std::move(created).value();
  VkSemaphoreGetFdInfoKHR semFd{};
  semFd.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  semFd.semaphore = semaphore.get();
  semFd.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int sfd = -1;
  if (auto s = vk::check(gpu.getSemaphoreFd(device, &semFd, &sfd), "vkGetSemaphoreFdKHR"); !s) return s;
  fd = UniqueFd(sfd);
  return {};
}
}  // namespace

Result<std::unique_ptr<SharedSwapchain>> SharedSwapchain::create(GpuDevice& gpu, Timeline& copyTimeline,
                                                                 const VkImageCreateInfo& info, uint32_t count,
                                                                 SyncMode mode, std::vector<ExportedImage>& exported,
                                                                 ExportedTimelines& timelines, bool hostCopyTarget) {
  auto swapchain = std::make_unique<SharedSwapchain>(gpu, copyTimeline, mode);
  swapchain->hostCopyTarget_ = hostCopyTarget;
  swapchain->info_ = info;
  swapchain->images_.resize(count);
  VkDevice device = gpu.device();

  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = gpu.copyQueue().family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) {
    return s.error();
  }
  swapchain->pool_ = vk::CommandPool(device, pool);

  if (gpu.timestampsOnCopyQueue()) {
    VkQueryPoolCreateInfo queryInfo{};
    queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queryInfo.queryCount = 2 * count;
    VkQueryPool queries = VK_NULL_HANDLE;
    if (auto s = vk::check(vkCreateQueryPool(device, &queryInfo, nullptr, &queries), "vkCreateQueryPool"); !s) {
      return s.error();
    }
    swapchain->timestamps_ = vk::QueryPool(device, queries);
    vkResetQueryPool(device, queries, 0, 2 * count);
  }

  if (mode == SyncMode::timeline) {
    swapchain->renderingTimeline_ = std::make_shared<vk::Semaphore>();
    if (auto s = createExportedSemaphore(gpu, VK_SEMAPHORE_TYPE_TIMELINE, *swapchain->renderingTimeline_,
                                         timelines.renderingFd);
        !s) {
      return s.error();
    }
    if (auto s =
            createExportedSemaphore(gpu, VK_SEMAPHORE_TYPE_TIMELINE, swapchain->copyingTimeline_, timelines.copyingFd);
        !s) {
      return s.error();
    }
  }
  exported.clear();
  exported.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (auto s = swapchain->createImage(i, exported[i]); !s) return s.error();
  }
  return swapchain;
}

SharedSwapchain::~SharedSwapchain() {
  // Command buffers go with the pool; a copy still in flight must finish before the images go.
  (void)waitIdle(std::chrono::milliseconds(2000));
  if (gpu_.hostCopies() && mode_ == SyncMode::host) {
    const bool usable = !images_.empty() && images_.front().hostTransfer;
    log::info(
        "shared swapchain {}x{} format {} ({} layers, {} mips): {} copies made on the host (mean {:.1f} us on the "
        "calling thread), {} on the copy queue{}",
        info_.extent.width, info_.extent.height, int(info_.format), info_.arrayLayers, info_.mipLevels, hostCopies_,
        hostCopies_ > 0 ? double(hostCopyNs_) / double(hostCopies_) / 1e3 : 0.0, queueCopies_,
        usable                                            ? ""
        : vk::imageBytes(info_) > gpu_.hostCopyMaxBytes() ? " (its images are over host_copy_max_kib)"
        : hostCopyTarget_                                 ? " (its format or usage allows no host transfer)"
                                                          : " (its runtime images allow no host copy)");
  }
}

Status SharedSwapchain::createImage(uint32_t index, ExportedImage& out) {
  VkDevice device = gpu_.device();
  PerImage& per = images_[index];

  VkExternalMemoryImageCreateInfo external{};
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO;
  external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkImageCreateInfo info = info_;
  info.pNext = &external;
  // The daemon's image alone: the create info the client imports with (info_) stays without it.
  // On llvmpipe (the only driver where host copies are on) usage changes nothing of the image's
  // memory layout; formally a dedicated import names an image identical to the exported one's.
  if (mode_ == SyncMode::host && hostCopyTarget_ && gpu_.hostTransferUsable(info, /*exportOpaqueFd=*/true)) {
    info.usage |= VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT;
    per.hostTransfer = true;
  }
  VkImage image = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage(shared)"); !s) return s;
  per.image = vk::Image(device, image);

  vk::MemoryPlacement placement;
  auto memory = vk::bindDeviceLocalMemory(device, gpu_.memory(), image, "shared", /*exportOpaqueFd=*/true, &placement);
  if (!memory) return memory.error();
  per.memory = std::move(memory).value();

  VkMemoryGetFdInfoKHR fdInfo{};
  fdInfo.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  fdInfo.memory = per.memory.get();
  fdInfo.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  if (auto s = vk::check(gpu_.getMemoryFd(device, &fdInfo, &fd), "vkGetMemoryFdKHR"); !s) return s;
  out.memoryFd = UniqueFd(fd);
  out.allocationSize = placement.size;
  out.memoryTypeIndex = placement.typeIndex;

  if (mode_ == SyncMode::binary) {
    if (auto s = createExportedSemaphore(gpu_, VK_SEMAPHORE_TYPE_BINARY, per.renderingDone, out.renderingDoneFd); !s) {
      return s;
    }
    if (auto s = createExportedSemaphore(gpu_, VK_SEMAPHORE_TYPE_BINARY, per.copyingDone, out.copyingDoneFd); !s) {
      return s;
    }
  }

  return {};
}

Result<VkCommandBuffer> SharedSwapchain::copyCommands(PerImage& per, uint32_t index, const RuntimeImageLease& lease,
                                                      bool timed) {
  std::vector<RecordedCopy>& variants = timed ? per.timedCopies : per.copies;
  if (lease.index >= variants.size()) variants.resize(lease.index + 1);
  RecordedCopy& copy = variants[lease.index];
  if (copy.commands == VK_NULL_HANDLE) {
    VkCommandBufferAllocateInfo cbInfo{};
    cbInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cbInfo.commandPool = pool_.get();
    cbInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbInfo.commandBufferCount = 1;
    if (auto s =
            vk::check(vkAllocateCommandBuffers(gpu_.device(), &cbInfo, &copy.commands), "vkAllocateCommandBuffers");
        !s) {
      return s.error();
    }
  }
  if (copy.destination != lease.image || copy.ownerFamily != lease.ownerFamily) {
    recordCopy(copy.commands, per, index, lease, timed);
    copy.destination = lease.image;
    copy.ownerFamily = lease.ownerFamily;
  }
  return copy.commands;
}

void SharedSwapchain::recordCopy(VkCommandBuffer cb, PerImage& per, uint32_t index, const RuntimeImageLease& lease,
                                 bool timed) {
  const VkImage destination = lease.image;
  const VkImageAspectFlags aspect = vk::aspectMask(info_.format);
  const VkImageSubresourceRange all{aspect, 0, info_.mipLevels, 0, info_.arrayLayers};
  const uint32_t copyFamily = gpu_.copyQueue().family;

  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;  // submitted again and again
  vkBeginCommandBuffer(cb, &begin);
  if (timed) vkCmdResetQueryPool(cb, timestamps_.get(), 2 * index, 2);

  // 1. Acquire the shared image from QUEUE_FAMILY_EXTERNAL: the client released it in
  //    TRANSFER_SRC_OPTIMAL, so old == new layout (no transition). The rendering_done wait (binary),
  //    the host wait on the rendering_done timeline + this submission (timeline) or the client's
  //    fence + this submission (host) already made its writes visible.
  VkImageMemoryBarrier acquire{};
  acquire.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  acquire.srcAccessMask = 0;
  acquire.dstAccessMask = 0;
  acquire.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  acquire.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  acquire.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  acquire.dstQueueFamilyIndex = copyFamily;
  acquire.image = per.image.get();
  acquire.subresourceRange = all;
  // srcStage TRANSFER (seed 000 says TOP_OF_PIPE): the rendering_done wait is at TRANSFER, and
  // only a first scope that includes it orders the acquire after the wait.
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1,
                       &acquire);

  // 2. Destination to TRANSFER_DST_OPTIMAL; old contents are discarded (every texel is copied).
  //    srcStage TRANSFER chains with the wait on the backend's semaphore (its last read of this
  //    image); the copy's access is TRANSFER_WRITE.
  VkImageMemoryBarrier toDst{};
  toDst.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  toDst.srcAccessMask = 0;
  toDst.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  toDst.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  toDst.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  toDst.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  toDst.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  toDst.image = destination;
  toDst.subresourceRange = all;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1,
                       &toDst);

  // The timestamps bracket the copy command alone, exactly as the bench's reference copy does.
  // They are written at TRANSFER: a TOP_OF_PIPE timestamp would latch before the semaphore waits
  // (which block TRANSFER) and count the client's rendering as copy time.
  if (timed) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, timestamps_.get(), 2 * index);

  // 3. Copy every mip level, all array layers at once.
  std::vector<VkImageCopy> regions(info_.mipLevels);
  for (uint32_t mip = 0; mip < info_.mipLevels; ++mip) {
    VkImageCopy& r = regions[mip];
    r.srcSubresource = {aspect, mip, 0, info_.arrayLayers};
    r.dstSubresource = {aspect, mip, 0, info_.arrayLayers};
    r.extent = {std::max(1u, info_.extent.width >> mip), std::max(1u, info_.extent.height >> mip), 1};
  }
  vkCmdCopyImage(cb, per.image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, destination,
                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, uint32_t(regions.size()), regions.data());
  if (timed) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, timestamps_.get(), 2 * index + 1);

  // 4. Destination back to its attachment layout. The copy's writes must be available before the
  //    layout transition (srcAccess TRANSFER_WRITE); nothing later in this batch reads it. An
  //    image another family owns goes back to it: this is the release half of that transfer.
  VkImageMemoryBarrier toAttachment = toDst;
  toAttachment.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  toAttachment.dstAccessMask = 0;
  toAttachment.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  toAttachment.newLayout = vk::attachmentLayout(info_.format);
  if (lease.ownerFamily != VK_QUEUE_FAMILY_IGNORED && lease.ownerFamily != copyFamily) {
    toAttachment.srcQueueFamilyIndex = copyFamily;
    toAttachment.dstQueueFamilyIndex = lease.ownerFamily;
  }
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0,
                       nullptr, 1, &toAttachment);

  vkEndCommandBuffer(cb);
}

std::optional<double> SharedSwapchain::readCopyTime(uint32_t index) {
  if (!timestamps_) return std::nullopt;
  std::array<uint64_t, 2> ticks{};
  VkResult r = vkGetQueryPoolResults(gpu_.device(), timestamps_.get(), 2 * index, 2, sizeof(ticks), ticks.data(),
                                     sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS || ticks[1] < ticks[0]) return std::nullopt;
  return double(ticks[1] - ticks[0]) * gpu_.timestampPeriodNs() / 1000.0;
}

bool SharedSwapchain::readyForCopy(uint32_t index) {
  if (index >= images_.size()) return false;
  const PerImage& per = images_[index];
  return !per.submitted || copyTimeline_.reached(per.submittedValue);
}

Result<std::optional<double>> SharedSwapchain::finishCopy(uint32_t index, std::chrono::milliseconds timeout) {
  if (index >= images_.size()) return makeError(ErrorCode::internal, "copy of image {} out of range", index);
  std::optional<double> gpuCopyUs;
  if (auto s = waitPrevious(images_[index], index, timeout, &gpuCopyUs); !s) return s.error();
  return gpuCopyUs;
}

Result<PreparedCopy> SharedSwapchain::prepareCopy(uint32_t index, const RuntimeImageLease& lease,
                                                  std::chrono::milliseconds timeout) {
  if (index >= images_.size()) return makeError(ErrorCode::internal, "copy of image {} out of range", index);
  PerImage& per = images_[index];
  PreparedCopy copy;
  copy.swapchain = this;
  copy.index = index;
  copy.result.runtimeIndex = lease.index;

  // The command buffer of this image's previous copy must be done before submitting another. In
  // binary mode that copy signalled copying_done which the client waited for before rendering
  // again, so this is (almost always) already signalled.
  if (auto s = waitPrevious(per, index, timeout, &copy.result.gpuCopyUs); !s) return s.error();

  if (mode_ == SyncMode::host) {
    if (const std::optional<HostCopy> done = hostCopy(per, lease)) {
      copy.result.copyValue = done->copyValue;  // signalled already: the composition waits for nothing
      copy.result.hostCopyUs = done->us;
      return copy;
    }
  }

  copy.timed = timestamps_ && per.copiesUntilTimed == 0;
  auto commands = copyCommands(per, index, lease, copy.timed);
  if (!commands) return commands.error();
  copy.commands = commands.value();

  if (mode_ == SyncMode::binary) {
    copy.waits[copy.waitCount] = per.renderingDone.get();
    copy.waitStages[copy.waitCount++] = VK_PIPELINE_STAGE_TRANSFER_BIT;
  }
  if (lease.waitSemaphore != VK_NULL_HANDLE) {
    copy.waits[copy.waitCount] = lease.waitSemaphore;
    copy.waitValues[copy.waitCount] = lease.waitValue;
    copy.waitStages[copy.waitCount++] = VK_PIPELINE_STAGE_TRANSFER_BIT;
  }
  if (mode_ == SyncMode::binary) copy.signals[copy.signalCount++] = per.copyingDone.get();
  if (mode_ == SyncMode::timeline) {
    // The client's rendering is complete already: the daemon waited for it on the CPU.
    copy.signals[copy.signalCount] = copyingTimeline_.get();
    copy.signalValues[copy.signalCount++] = per.releaseValue;
  }
  copy.signals[copy.signalCount++] = copyTimeline_.get();  // its value is taken at submission
  return copy;
}

Status submitCopies(std::span<PreparedCopy> copies) {
  const size_t queued =
      size_t(std::count_if(copies.begin(), copies.end(), [](const PreparedCopy& c) { return !c.result.onHost(); }));
  if (queued == 0) return {};
  // One device and one copy timeline serve every swapchain of the daemon.
  GpuDevice& gpu = copies.front().swapchain->gpu_;
  Timeline& copyTimeline = copies.front().swapchain->copyTimeline_;
  std::vector<VkTimelineSemaphoreSubmitInfo> values(queued);
  std::vector<VkSubmitInfo> submits(queued);
  {
    // Copies are submitted from more than one thread: the timeline's values must rise in the
    // order the queue executes them, so they are taken under the queue's lock.
    Queue& queue = gpu.copyQueue();
    Lock lock(queue.submitMutex);
    size_t i = 0;
    for (PreparedCopy& copy : copies) {
      if (copy.result.onHost()) continue;
      copy.result.copyValue = copyTimeline.next();
      copy.signalValues[copy.signalCount - 1] = copy.result.copyValue;
      VkTimelineSemaphoreSubmitInfo& timeline = values[i];
      timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
      timeline.waitSemaphoreValueCount = copy.waitCount;
      timeline.pWaitSemaphoreValues = copy.waitValues.data();
      timeline.signalSemaphoreValueCount = copy.signalCount;
      timeline.pSignalSemaphoreValues = copy.signalValues.data();
      VkSubmitInfo& submit = submits[i];
      submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
      submit.pNext = &timeline;
      submit.waitSemaphoreCount = copy.waitCount;
      submit.pWaitSemaphores = copy.waits.data();
      submit.pWaitDstStageMask = copy.waitStages.data();
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &copy.commands;
      submit.signalSemaphoreCount = copy.signalCount;
      submit.pSignalSemaphores = copy.signals.data();
      ++i;
    }
    if (auto s = vk::check(vkQueueSubmit(queue.queue, uint32_t(submits.size()), submits.data(), VK_NULL_HANDLE),
                           "vkQueueSubmit(copy)");
        !s) {
      return s;
    }
  }
  gpu.countCopySubmission();
  for (PreparedCopy& copy : copies) {
    if (copy.result.onHost()) continue;
    copy.swapchain->queueCopies_++;
    SharedSwapchain::PerImage& per = copy.swapchain->images_[copy.index];
    per.submitted = true;
    per.submittedValue = copy.result.copyValue;
    per.timedInFlight = copy.timed;
    if (copy.swapchain->timestamps_) {
      per.copiesUntilTimed = copy.timed ? SharedSwapchain::kCopyTimeSampleInterval - 1 : per.copiesUntilTimed - 1;
    }
  }
  return {};
}

// Host mode, on llvmpipe with VK_EXT_host_image_copy (GpuDevice::hostCopies): the copy of a
// release on the calling thread, saving the copy queue's thread a wake-up (on lavapipe one costs
// more than the copy's memcpy). Only where nothing needs waiting for, as a submission would:
//  - the shared image: the client waited for its rendering's fence before it sent the release
//    (client-lib release(), host mode), and left it in TRANSFER_SRC_OPTIMAL, released to
//    QUEUE_FAMILY_EXTERNAL (host copies need no ownership transfer: VK_EXT_host_image_copy has
//    host access use the image as laid out for its layout, the same on every queue family). Its
//    own previous copy is complete (prepareCopy waited for it).
//  - the runtime image: its last read by the composition (the lease's waitSemaphore at
//    waitValue) is complete, looked at without waiting; and no copy is in flight on the copy
//    queue, which orders copies into the same runtime image there but not against the host (an
//    earlier copy into this image may not have been read by any composition).
// The runtime image is written in the layout the composition expects after a copy
// (vk::attachmentLayout); its old contents are discarded, as the queue copy does. The display's
// submission that reads it comes later (releaseImage, under the display's lock): a queue
// submission makes the host's earlier writes visible to it.
std::optional<SharedSwapchain::HostCopy> SharedSwapchain::hostCopy(PerImage& per, const RuntimeImageLease& lease) {
  // Images over DeviceOptions::hostCopyMaxBytes have no host transfer usage (hostTransferUsable).
  if (!per.hostTransfer || !lease.hostTransfer || lease.ownerFamily != VK_QUEUE_FAMILY_IGNORED) return std::nullopt;
  const VkImageLayout srcLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  const VkImageLayout dstLayout = vk::attachmentLayout(info_.format);
  if (!gpu_.hostCopySrcLayout(srcLayout) || !gpu_.hostCopyDstLayout(dstLayout)) return std::nullopt;
  VkDevice device = gpu_.device();
  if (lease.waitSemaphore != VK_NULL_HANDLE && lease.waitValue > 0) {
    uint64_t value = 0;
    if (vkGetSemaphoreCounterValue(device, lease.waitSemaphore, &value) != VK_SUCCESS || value < lease.waitValue) {
      return std::nullopt;
    }
  }
  // Under the copy queue's submit lock, with every copy value handed out reached: no copy into
  // this runtime image is still running on the queue (one abandoned after a timed-out wait may
  // be), and the value this copy signals from the host is above every other, as a timeline needs.
  Queue& queue = gpu_.copyQueue();
  Lock lock(queue.submitMutex);
  if (!copyTimeline_.reached(copyTimeline_.last())) return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  const VkImageAspectFlags aspect = vk::aspectMask(info_.format);
  VkHostImageLayoutTransitionInfoEXT toDst{};
  toDst.sType = VK_STRUCTURE_TYPE_HOST_IMAGE_LAYOUT_TRANSITION_INFO_EXT;
  toDst.image = lease.image;
  toDst.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;  // discarded: every texel is copied
  toDst.newLayout = dstLayout;
  toDst.subresourceRange = {aspect, 0, info_.mipLevels, 0, info_.arrayLayers};
  if (VkResult r = gpu_.transitionImageLayout(device, 1, &toDst); r != VK_SUCCESS) {
    log::warn("vkTransitionImageLayoutEXT failed ({}); copying on the copy queue", int(r));
    return std::nullopt;
  }
  std::vector<VkImageCopy2> regions(info_.mipLevels);
  for (uint32_t mip = 0; mip < info_.mipLevels; ++mip) {
    VkImageCopy2& r = regions[mip];
    r.sType = VK_STRUCTURE_TYPE_IMAGE_COPY_2;
    r.srcSubresource = {aspect, mip, 0, info_.arrayLayers};
    r.dstSubresource = {aspect, mip, 0, info_.arrayLayers};
    r.extent = {std::max(1u, info_.extent.width >> mip), std::max(1u, info_.extent.height >> mip), 1};
  }
  VkCopyImageToImageInfoEXT copy{};
  copy.sType = VK_STRUCTURE_TYPE_COPY_IMAGE_TO_IMAGE_INFO_EXT;
  copy.srcImage = per.image.get();
  copy.srcImageLayout = srcLayout;
  copy.dstImage = lease.image;
  copy.dstImageLayout = dstLayout;
  copy.regionCount = uint32_t(regions.size());
  copy.pRegions = regions.data();
  if (VkResult r = gpu_.copyImageToImage(device, &copy); r != VK_SUCCESS) {
    log::warn("vkCopyImageToImageEXT failed ({}); copying on the copy queue", int(r));
    return std::nullopt;
  }
  // A value of its own, as a queue copy has: a publication of the runtime image is told from the
  // next by its value (readbacks pin the one they looked up).
  const uint64_t value = copyTimeline_.next();
  if (auto s = copyTimeline_.signalOnHost(value); !s) {
    // Whatever waits for the value runs into its bound; the image is written all the same.
    log::error("a copy made on the host could not signal its value {}: {}", value, s.error().describe());
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started);
  hostCopies_++;
  hostCopyNs_ += uint64_t(ns.count());
  return HostCopy{double(ns.count()) / 1000.0, value};
}

Result<CopyResult> SharedSwapchain::copyToRuntime(uint32_t index, const RuntimeImageLease& lease,
                                                  std::chrono::milliseconds timeout, bool waitInHostMode,
                                                  bool* queued) {
  auto prepared = prepareCopy(index, lease, timeout);
  if (!prepared) return prepared.error();
  if (auto s = submitCopies(std::span(&prepared.value(), 1)); !s) return s.error();
  if (queued != nullptr) *queued = !prepared.value().result.onHost();
  CopyResult result = prepared.value().result;
  if (mode_ == SyncMode::host && waitInHostMode) {
    // Host mode: no copying_done semaphore, so the client may only reuse the image once the copy
    // is complete; the release answer waits for it.
    if (auto s = waitPrevious(images_[index], index, timeout, &result.gpuCopyUs); !s) return s.error();
  }
  return result;
}

Status SharedSwapchain::waitPrevious(PerImage& per, uint32_t index, std::chrono::milliseconds timeout,
                                     std::optional<double>* gpuCopyUs) {
  if (!per.submitted) return {};
  if (!copyTimeline_.reached(per.submittedValue)) {
    if (auto s = copyTimeline_.wait(per.submittedValue, toNs(timeout)); !s) {
      if (s.error().code != ErrorCode::timeout) return s;
      return makeError(ErrorCode::timeout, "previous copy of image {} did not finish within {} ms", index,
                       timeout.count());
    }
  }
  // Only sampled copies are timed: reading the queries costs a software driver (lavapipe) a
  // round trip to its queue thread on the caller's thread, which cost the RPC thread more than
  // the rest of a release.
  if (gpuCopyUs != nullptr && per.timedInFlight) *gpuCopyUs = readCopyTime(index);
  per.timedInFlight = false;
  per.submitted = false;
  return {};
}

Status SharedSwapchain::passThrough(uint32_t index, std::chrono::milliseconds timeout) {
  if (mode_ == SyncMode::host || index >= images_.size()) return {};
  PerImage& per = images_[index];
  if (auto s = waitPrevious(per, index, timeout, nullptr); !s) return s;
  const bool binary = mode_ == SyncMode::binary;
  VkSemaphore wait = per.renderingDone.get();
  VkSemaphore signal = binary ? per.copyingDone.get() : copyingTimeline_.get();
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  // The copy timeline too, as every submission of the image's: its reuse waits for that value.
  std::array<VkSemaphore, 2> signals{signal, copyTimeline_.get()};
  std::array<uint64_t, 2> signalValues{per.releaseValue, 0};
  VkTimelineSemaphoreSubmitInfo values{};
  values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  values.signalSemaphoreValueCount = uint32_t(signals.size());
  values.pSignalSemaphoreValues = signalValues.data();
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &values;
  // Timeline mode puts no wait on a client's semaphore into the queue, not even here.
  submit.waitSemaphoreCount = binary ? 1 : 0;
  submit.pWaitSemaphores = &wait;
  submit.pWaitDstStageMask = &stage;
  submit.signalSemaphoreCount = uint32_t(signals.size());
  submit.pSignalSemaphores = signals.data();
  Queue& queue = gpu_.copyQueue();
  Lock lock(queue.submitMutex);
  signalValues[1] = copyTimeline_.next();
  if (auto s = vk::check(vkQueueSubmit(queue.queue, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit(pass-through)"); !s) {
    return s;
  }
  per.submitted = true;
  per.submittedValue = signalValues[1];
  return {};
}

bool SharedSwapchain::idle() {
  for (uint32_t i = 0; i < images_.size(); ++i) {
    if (!readyForCopy(i)) return false;
  }
  return true;
}

Status SharedSwapchain::waitIdle(std::chrono::milliseconds timeout) {
  for (PerImage& per : images_) {
    if (!per.submitted) continue;
    if (auto s = copyTimeline_.wait(per.submittedValue, toNs(timeout)); !s) {
      return makeError(ErrorCode::timeout, "copy still in flight at swapchain destruction ({})", s.error().message);
    }
    per.submitted = false;
  }
  return {};
}

}  // namespace xrc::gpu
