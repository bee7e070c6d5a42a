#include <algorithm>

#include "internal.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::client {

namespace {
// The daemon answers a release within its own bounded waits (a free runtime image, then the
// copy: up to 2 s each) and names its error when one expires, so the answer is waited for as
// long as any call's: a daemon slowed down (a loaded machine, sanitizers) is not taken for a
// dead one, and its own error, not "no answer", reaches the application.
constexpr std::chrono::milliseconds kReleaseAnswerTimeout = RpcLink::kDefaultCallTimeout;

// What createSwapchain's answer carries, taken apart on the I/O thread.
struct ReceivedImage {
  uint64_t allocationSize = 0;
  uint32_t memoryTypeIndex = 0;
  bool dedicated = false;
  UniqueFd memory, renderingDone, copyingDone;
};
struct CreatedSwapchain {
  uint32_t id = 0;
  VkImageCreateInfo info{};
  std::vector<ReceivedImage> images;
  UniqueFd renderingTimeline, copyingTimeline;  // timeline mode
  std::optional<Error> error;                   // first fd that did not arrive
};

kj::Promise<Result<CreatedSwapchain>> sendCreateSwapchain(IoState& io, const SwapchainRequest& request, SyncMode mode) {
  const bool binary = mode == SyncMode::binary;
  auto call = io.session.createSwapchainRequest();
  toWire(request, call.initInfo());
  return call.send().then(
      [&io, binary,
       mode](capnp::Response<wire::Session::CreateSwapchainResults>&& r) -> kj::Promise<Result<CreatedSwapchain>> {
        if (auto s = fromWire(r.getError()); !s) return Result<CreatedSwapchain>(s.error());
        auto out = kj::heap<CreatedSwapchain>();
        out->id = r.getId();
        out->info = fromWire(r.getImage());
        auto images = r.getImages();
        out->images.resize(images.size());
        kj::Vector<kj::Promise<void>> fds;
        CreatedSwapchain* raw = out.get();
        auto take = [&fds, raw](wire::FdCarrier::Client carrier, UniqueFd* target, const char* what) {
          fds.add(receiveFd(kj::mv(carrier), what).then([raw, target](Result<UniqueFd> fd) {
            if (fd) {
              *target = std::move(fd).value();
            } else if (!raw->error) {
              raw->error = fd.error();
            }
          }));
        };
        for (uint32_t i = 0; i < images.size(); ++i) {
          auto shared = images[i];
          ReceivedImage& image = out->images[i];
          image.allocationSize = shared.getAllocationSize();
          image.memoryTypeIndex = shared.getMemoryTypeIndex();
          image.dedicated = shared.getDedicated();
          take(shared.getMemory(), &image.memory, "shared image memory");
          if (binary) {
            take(shared.getRenderingDone(), &image.renderingDone, "rendering_done");
            take(shared.getCopyingDone(), &image.copyingDone, "copying_done");
          }
        }
        if (mode == SyncMode::timeline) {
          take(r.getRenderingTimeline(), &out->renderingTimeline, "rendering_done timeline");
          take(r.getCopyingTimeline(), &out->copyingTimeline, "copying_done timeline");
        }
        io.swapchains.emplace(out->id, r.getSwapchain());
        // The fds belong to the answer's capabilities: keep the answer until they are dup()ed.
        return kj::joinPromises(fds.releaseAsArray())
            .attach(kj::mv(r))
            .then([&io, out = kj::mv(out)]() mutable -> Result<CreatedSwapchain> {
              if (out->error) {
                io.swapchains.erase(out->id);
                return *out->error;
              }
              return kj::mv(*out);
            });
      });
}
// Imports one of the daemon's exported semaphores; a successful import owns the fd.
Status importSemaphore(Connection::Impl& conn, VkSemaphoreType type, UniqueFd& fd, vk::Semaphore& target) {
  VkDevice device = conn.vulkan.device;
  auto created = vk::createSemaphore(device, type);
  if (!created) return created.error();
  target = std::move(created).value();
  VkImportSemaphoreFdInfoKHR importSem{};
  importSem.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
  importSem.semaphore = target.get();
  importSem.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  importSem.fd = fd.get();
  if (auto s = vk::check(conn.importSemaphoreFd(device, &importSem), "vkImportSemaphoreFdKHR"); !s) return s;
  fd.release();
  return {};
}
}  // namespace

Status Swapchain::Impl::recordCommands(PerImage& per) {
  VkDevice device = connection->vulkan.device;
  VkCommandBuffer buffers[2];
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool.get();
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 2;
  if (auto s = vk::check(vkAllocateCommandBuffers(device, &alloc, buffers), "vkAllocateCommandBuffers"); !s) return s;
  per.acquireCommands = buffers[0];
  per.releaseCommands = buffers[1];
  const VkImageSubresourceRange all{vk::aspectMask(info.format), 0, info.mipLevels, 0, info.arrayLayers};
  const VkImageLayout attachment = vk::attachmentLayout(info.format);
  const bool depth = vk::isDepthFormat(info.format);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;

  // Acquire: UNDEFINED (old contents are not needed, so no ownership re-acquire from EXTERNAL)
  // to the attachment layout, as a full barrier so that the transition completes before any
  // application command.
  VkImageMemoryBarrier toAttachment{};
  toAttachment.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  toAttachment.srcAccessMask = 0;
  toAttachment.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  toAttachment.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  toAttachment.newLayout = attachment;
  toAttachment.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  toAttachment.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  toAttachment.image = per.image.get();
  toAttachment.subresourceRange = all;
  vkBeginCommandBuffer(per.acquireCommands, &begin);
  vkCmdPipelineBarrier(per.acquireCommands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                       0, nullptr, 0, nullptr, 1, &toAttachment);
  if (auto s = vk::check(vkEndCommandBuffer(per.acquireCommands), "vkEndCommandBuffer"); !s) return s;

  // Release: attachment layout -> TRANSFER_SRC_OPTIMAL and ownership to QUEUE_FAMILY_EXTERNAL,
  // after everything the application did (ALL_COMMANDS). The writes are made available so the
  // layout transition cannot race them; the semaphore/fence signal that follows is the memory
  // dependency the daemon's side relies on.
  VkImageMemoryBarrier toExternal = toAttachment;
  toExternal.srcAccessMask =
      depth ? VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
            : VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  toExternal.dstAccessMask = 0;
  toExternal.oldLayout = attachment;
  toExternal.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  toExternal.srcQueueFamilyIndex = connection->vulkan.queueFamilyIndex;
  toExternal.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  vkBeginCommandBuffer(per.releaseCommands, &begin);
  vkCmdPipelineBarrier(per.releaseCommands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0,
                       0, nullptr, 0, nullptr, 1, &toExternal);
  return vk::check(vkEndCommandBuffer(per.releaseCommands), "vkEndCommandBuffer");
}

Status Swapchain::Impl::submit(VkCommandBuffer commands, SemaphoreAt wait, SemaphoreAt signal, VkFence fence) {
  VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.waitSemaphoreCount = wait.semaphore != VK_NULL_HANDLE ? 1 : 0;
  submit.pWaitSemaphores = &wait.semaphore;
  submit.pWaitDstStageMask = &waitStage;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  submit.signalSemaphoreCount = signal.semaphore != VK_NULL_HANDLE ? 1 : 0;
  submit.pSignalSemaphores = &signal.semaphore;
  VkTimelineSemaphoreSubmitInfo values{};
  if (wait.value != 0 || signal.value != 0) {
    values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    values.waitSemaphoreValueCount = submit.waitSemaphoreCount;
    values.pWaitSemaphoreValues = &wait.value;
    values.signalSemaphoreValueCount = submit.signalSemaphoreCount;
    values.pSignalSemaphoreValues = &signal.value;
    submit.pNext = &values;
  }
  Lock lock(connection->queueMutex);
  return vk::check(vkQueueSubmit(connection->vulkan.queue, 1, &submit, fence), "vkQueueSubmit");
}

Result<std::unique_ptr<Swapchain>> Connection::createSwapchain(const SwapchainRequest& request) {
  if (auto s = impl_->takeAsyncError(); !s) return s.error();
  const SyncMode mode = impl_->syncMode;
  const bool binary = mode == SyncMode::binary;
  auto reply = impl_->link->call<CreatedSwapchain>(
      [request, mode](IoState& io) { return sendCreateSwapchain(io, request, mode); }, "createSwapchain");
  impl_->roundTrips++;
  if (!reply) return reply.error();
  CreatedSwapchain& created = reply.value();

  auto sc = std::make_unique<Swapchain::Impl>();
  sc->connection = impl_.get();
  sc->id = created.id;
  sc->info = created.info;
  const VulkanBinding& vkb = impl_->vulkan;
  VkDevice device = vkb.device;
  auto& images = created.images;

  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.queueFamilyIndex = vkb.queueFamilyIndex;
  VkCommandPool pool;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) {
    return s.error();
  }
  sc->pool = vk::CommandPool(device, pool);
  sc->perImage.resize(images.size());
  VkPhysicalDeviceMemoryProperties memoryProps;
  vkGetPhysicalDeviceMemoryProperties(vkb.physicalDevice, &memoryProps);

  for (uint32_t i = 0; i < images.size(); ++i) {
    ReceivedImage& shared = images[i];
    auto& per = sc->perImage[i];
    VkExternalMemoryImageCreateInfo external{};
    external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO;
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkImageCreateInfo info = sc->info;
    info.pNext = &external;
    VkImage image;
    if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage(import)"); !s)
      return s.error();
    per.image = vk::Image(device, image);
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(device, image, &req);
    const uint32_t type = shared.memoryTypeIndex;
    if (type >= memoryProps.memoryTypeCount || !(req.memoryTypeBits & (1u << type)) ||
        shared.allocationSize < req.size) {
      return makeError(ErrorCode::deviceMismatch,
                       "shared image {}: memory type {} / size {} do not fit this device (bits 0x{:x}, size {})", i,
                       type, shared.allocationSize, req.memoryTypeBits, req.size);
    }
    UniqueFd& fd = shared.memory;
    VkMemoryDedicatedAllocateInfo dedicated{};
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
    dedicated.image = image;
    VkImportMemoryFdInfoKHR import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
    import.pNext = shared.dedicated ? &dedicated : nullptr;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    import.fd = fd.get();
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &import;
    alloc.allocationSize = shared.allocationSize;
    alloc.memoryTypeIndex = type;
    VkDeviceMemory memory;
    if (auto s = vk::check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory(import)"); !s) {
      return s.error();
    }
    fd.release();  // a successful import owns the fd
    per.memory = vk::Memory(device, memory);
    if (auto s = vk::check(vkBindImageMemory(device, image, memory, 0), "vkBindImageMemory"); !s) return s.error();

    if (binary) {
      if (auto s = importSemaphore(*impl_, VK_SEMAPHORE_TYPE_BINARY, shared.renderingDone, per.renderingDone); !s) {
        return s.error();
      }
      if (auto s = importSemaphore(*impl_, VK_SEMAPHORE_TYPE_BINARY, shared.copyingDone, per.copyingDone); !s) {
        return s.error();
      }
    }
    VkFenceCreateInfo fenceInfo{};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    fenceInfo.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    VkFence fence;
    if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s.error();
    per.fence = vk::Fence(device, fence);
    fenceInfo.flags = 0;
    if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s.error();
    per.releaseFence = vk::Fence(device, fence);
    if (auto s = sc->recordCommands(per); !s) return s.error();
    sc->images.push_back(image);
  }
  if (mode == SyncMode::timeline) {
    if (auto s = importSemaphore(*impl_, VK_SEMAPHORE_TYPE_TIMELINE, created.renderingTimeline, sc->renderingTimeline);
        !s) {
      return s.error();
    }
    if (auto s = importSemaphore(*impl_, VK_SEMAPHORE_TYPE_TIMELINE, created.copyingTimeline, sc->copyingTimeline);
        !s) {
      return s.error();
    }
  }
  sc->cycle = std::make_unique<ImageCycle>(uint32_t(images.size()));
  sc->answers = std::make_shared<ReleaseAnswers>(uint32_t(images.size()));
  return std::make_unique<Swapchain>(std::move(sc));
}

// --- Swapchain ---------------------------------------------------------------------------------

Swapchain::Swapchain(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Swapchain::~Swapchain() {
  Impl& sc = *impl_;
  // Our own GPU work on the images must be done before they go; the daemon's copies are its
  // business (it waits for them before freeing its side).
  RpcLink& link = *sc.connection->link;
  sc.connection->flushReleases();  // releases not sent yet
  if (sc.connection->settledLater) {
    // 1.13: their settlements may come with no frame timing any more; ask for them.
    for (uint32_t i = 0; i < sc.perImage.size(); ++i) {
      if (!sc.answers->isAnswered(i)) sc.connection->askForSettlement(sc.id, i);
    }
  }
  for (uint32_t i = 0; i < sc.perImage.size() && !link.disconnected(); ++i) {
    bool hadToWait = false;
    (void)sc.answers->waitAnswered(i, kReleaseAnswerTimeout, hadToWait);
  }
  {
    Lock lock(sc.connection->queueMutex);
    vkQueueWaitIdle(sc.connection->vulkan.queue);  // covers every submission of ours, fenced or not
  }
  const uint32_t id = sc.id;
  if (!link.disconnected()) {
    (void)link.call<bool>(
        [id](IoState& io) -> kj::Promise<Result<bool>> {
          auto it = io.swapchains.find(id);
          if (it == io.swapchains.end()) return Result<bool>(true);
          auto done = it->second.destroyRequest().send().then([](auto&&) { return Result<bool>(true); });
          io.swapchains.erase(it);
          io.releaseAnswers.erase(id);
          return done;
        },
        "destroy", kReleaseAnswerTimeout);
  } else {
    link.post([id](IoState& io) {
      io.swapchains.erase(id);
      io.releaseAnswers.erase(id);
    });
  }
}

uint32_t Swapchain::id() const { return impl_->id; }
const VkImageCreateInfo& Swapchain::imageCreateInfo() const { return impl_->info; }
const std::vector<VkImage>& Swapchain::images() const { return impl_->images; }

// Once the daemon is gone ("local mode") images keep cycling on this side only, without calls to
// the daemon and without waits on semaphores it would have signalled, so that an app can wind
// down its frame loop instead of failing or hanging (see docs/OPENXR.md, "When the daemon goes
// away").
Result<uint32_t> Swapchain::acquire() {
  Impl& sc = *impl_;
  Connection::Impl& conn = *sc.connection;
  const bool local = conn.link->disconnected();
  if (!local) {
    if (auto s = conn.takeAsyncError(); !s) return s.error();
  }
  const uint32_t index = sc.cycle->nextAcquireIndex();
  auto& per = sc.perImage[index];
  // Local rules first: acquiring beyond the image count fails here without a round trip.
  if (sc.cycle->state(index) == ImageCycle::State::acquired || sc.cycle->state(index) == ImageCycle::State::waited) {
    return sc.cycle->acquire(index).error();
  }
  if (local) {
    sc.answers->forget(index);
  } else if (sc.cycle->state(index) == ImageCycle::State::copying) {
    // The answer proves the copy that signals copying_done was submitted (binary, timeline) or
    // finished (host); with 1.13 in timeline mode it is the release's settlement. Usually long
    // there, so this costs no round trip; counted as one when it is not.
    bool hadToWait = false;
    // The release may still wait for a message to travel with (see release()).
    if (!sc.answers->isAnswered(index)) {
      conn.flushReleases();
      // 1.13: its settlement may come only with a frame timing; an acquire outside the frame
      // loop asks for it.
      if (conn.settledLater && !sc.answers->isAnswered(index)) conn.askForSettlement(sc.id, index);
    }
    const Status answer = sc.answers->waitAnswered(index, kReleaseAnswerTimeout, hadToWait);
    if (hadToWait) conn.roundTrips++;
    if (!answer && conn.link->disconnected()) {
      sc.answers->forget(index);  // the daemon went away meanwhile: carry on locally
    } else if (!answer) {
      // Timeline values only rise, so skipping the wait for this one costs nothing; a binary
      // semaphore the daemon did signal must still be waited (signalled twice is invalid).
      if (conn.syncMode == SyncMode::timeline) per.releaseFailed = true;
      return answer.error();
    }
  }
  if (sc.cycle->state(index) == ImageCycle::State::copying) (void)sc.cycle->copyDone(index);
  if (auto s = sc.cycle->acquire(index); !s) return s.error();

  if (per.acquireSubmitted) {
    per.acquireSubmitted = false;
    conn.acquiresPrepared++;
  } else if (auto s = sc.submitAcquire(index); !s) {
    return s.error();
  }
  sc.acquiredOrder.push_back(index);
  if (local || conn.combinedFrameCalls) return index;  // 1.4: release carries it

  conn.sendTracked(
      [id = sc.id, index](IoState& io) {
        auto call = io.swapchains.at(id).acquireRequest();
        call.setIndex(index);
        return call.send().then([](auto&& r) { return fromWire(r.getError()); });
      },
      "acquire");
  return index;
}

Status Swapchain::Impl::submitAcquire(uint32_t index, bool copyDone) {
  Connection::Impl& conn = *connection;
  PerImage& per = perImage[index];
  VkFence fence = per.fence.get();
  vkResetFences(conn.vulkan.device, 1, &fence);
  // Not once the daemon is gone, even if it went while we waited for the answer: a copy it had
  // not submitted by then never signals copying_done, and our queue would wait for it forever.
  const bool waitCopy = conn.syncMode != SyncMode::host && per.everAcquired && !conn.link->disconnected() &&
                        !per.releasedLocally && !per.releaseFailed && !copyDone;
  SemaphoreAt copied;
  if (waitCopy && conn.syncMode == SyncMode::binary) copied = {per.copyingDone.get(), 0};
  if (waitCopy && conn.syncMode == SyncMode::timeline) copied = {copyingTimeline.get(), per.releaseValue};
  if (auto s = submit(per.acquireCommands, copied, {}, fence); !s) return s;
  per.everAcquired = true;
  return {};
}

void Swapchain::Impl::prepareNextAcquire() {
  Connection::Impl& conn = *connection;
  // Binary mode: the copy's copying_done cannot be asked from the host, and a GPU wait for it
  // here would hold back the rest of the frame's work on the application's queue (the other
  // views, the other layers) until the daemon's copy ran.
  if (conn.syncMode == SyncMode::binary) return;
  const uint32_t index = cycle->nextAcquireIndex();
  PerImage& per = perImage[index];
  if (per.acquireSubmitted || conn.link->disconnected()) return;
  // Free, or its last release answered without error: the answer proves the copy out of it was
  // submitted (in host mode, done), so the transition, which discards the image's contents,
  // cannot overtake the daemon's read of them. An image the application holds (acquired or
  // waited) or one whose answer is not there yet waits for acquire().
  const ImageCycle::State state = cycle->state(index);
  if (state == ImageCycle::State::acquired || state == ImageCycle::State::waited) return;
  if (state == ImageCycle::State::copying && !answers->answeredWithoutError(index)) return;
  // Timeline mode: only once the copy is done (copying_done reached, asked without waiting), so
  // that the submission waits for nothing: a wait would hold back the rest of the frame's work on
  // the application's queue, and would stay in it if the daemon went away before its copy ran.
  bool copyDone = false;
  if (conn.syncMode == SyncMode::timeline && per.everAcquired) {
    uint64_t copied = 0;
    if (vkGetSemaphoreCounterValue(conn.vulkan.device, copyingTimeline.get(), &copied) != VK_SUCCESS ||
        copied < per.releaseValue) {
      return;
    }
    copyDone = true;
  }
  // A failed submission leaves the acquire to make its own, and report the error then.
  if (submitAcquire(index, copyDone)) per.acquireSubmitted = true;
}

Status Swapchain::wait(std::chrono::nanoseconds timeout) {
  Impl& sc = *impl_;
  Connection::Impl& conn = *sc.connection;
  const bool local = conn.link->disconnected();
  if (!local) {
    if (auto s = conn.takeAsyncError(); !s) return s;
  }
  if (sc.acquiredOrder.empty()) return makeError(ErrorCode::callOrder, "wait: no image is acquired");
  const uint32_t index = sc.acquiredOrder.front();
  VkFence fence = sc.perImage[index].fence.get();
  VkResult r = waitFenceRunnable(conn.vulkan.device, fence, timeout);
  if (r == VK_TIMEOUT) return makeError(ErrorCode::timeout, "wait: image {} not ready in time", index);
  if (auto s = vk::check(r, "vkWaitForFences"); !s) return s;
  if (auto s = sc.cycle->wait(index); !s) return s;
  sc.acquiredOrder.erase(sc.acquiredOrder.begin());
  sc.waitedOrder.push_back(index);
  if (local || conn.combinedFrameCalls) return {};  // 1.4: release carries it

  conn.sendTracked(
      [id = sc.id, index](IoState& io) {
        auto call = io.swapchains.at(id).waitRequest();
        call.setIndex(index);
        return call.send().then([](auto&& r) { return fromWire(r.getError()); });
      },
      "wait");
  return {};
}

Status Swapchain::release() {
  Impl& sc = *impl_;
  Connection::Impl& conn = *sc.connection;
  const bool local = conn.link->disconnected();
  if (!local) {
    if (auto s = conn.takeAsyncError(); !s) return s;
  }
  if (sc.waitedOrder.empty()) {
    return makeError(ErrorCode::callOrder, "release: {}",
                     sc.acquiredOrder.empty() ? "no image is acquired" : "the acquired image was not waited");
  }
  const uint32_t index = sc.waitedOrder.front();
  auto& per = sc.perImage[index];
  if (auto s = sc.cycle->release(index); !s) return s;
  sc.waitedOrder.erase(sc.waitedOrder.begin());
  VkDevice device = conn.vulkan.device;

  uint64_t renderingValue = 0;
  VkFence hostFence = VK_NULL_HANDLE;  // host mode, 1.5: waited for before the release leaves
  if (conn.syncMode == SyncMode::binary && !local) {
    if (auto s = sc.submit(per.releaseCommands, {}, {per.renderingDone.get(), 0}, VK_NULL_HANDLE); !s) return s;
  } else if (conn.syncMode == SyncMode::timeline && !local) {
    // The daemon waits for this value on the CPU before it copies (docs/SYNC.md).
    renderingValue = sc.lastRenderingValue + 1;
    if (auto s = sc.submit(per.releaseCommands, {}, {sc.renderingTimeline.get(), renderingValue}, VK_NULL_HANDLE); !s) {
      return s;
    }
    sc.lastRenderingValue = renderingValue;
    per.releaseValue = renderingValue;
  } else {
    // Host mode: the daemon cannot wait on our GPU, so the release is complete before it leaves.
    // Local mode too: nobody would wait on rendering_done (and it must not be signalled twice).
    VkFence fence = per.releaseFence.get();
    if (per.releaseFenceSubmitted) {
      // Its last submission was waited for before that release left (or below): signalled, and
      // this returns at once. Bounded all the same: reset it only once nothing signals it.
      const VkResult r = waitFenceRunnable(device, fence, kReleaseFenceTimeout);
      if (r == VK_TIMEOUT) {
        return makeError(ErrorCode::timeout, "release: the GPU did not finish image {}'s last release in time", index);
      }
      if (auto s = vk::check(r, "vkWaitForFences(last release)"); !s) return s;
      vkResetFences(device, 1, &fence);
      per.releaseFenceSubmitted = false;
    }
    if (auto s = sc.submit(per.releaseCommands, {}, {}, fence); !s) return s;
    per.releaseFenceSubmitted = true;
    // 1.5: the frame's endFrame carries the release and waits for this fence with its other
    // releases' in one wait (a wake-up per frame, not per swapchain; docs/SYNC.md).
    hostFence = !local && conn.oneCallFrames ? fence : VK_NULL_HANDLE;
    if (hostFence == VK_NULL_HANDLE) {
      VkResult r = waitFenceRunnable(device, fence, kReleaseFenceTimeout);
      if (r == VK_TIMEOUT)
        return makeError(ErrorCode::timeout, "release: the GPU did not finish image {} in time", index);
      if (auto s = vk::check(r, "vkWaitForFences(release)"); !s) return s;
    }
  }
  // This image's per-image fence is not reset here (seed 000 does): the submission of its next
  // acquire resets it right before it signals it (docs/SYNC.md, 12), made here for the next image
  // (prepareNextAcquire, below) or by acquire().

  per.releasedLocally = local;
  per.releaseFailed = false;
  if (local) {
    (void)sc.cycle->copyDone(index);
    return {};
  }

  sc.answers->sent(index);
  sc.prepareNextAcquire();
  if (conn.oneCallFrames) {
    // 1.5: the frame's endFrame carries it (docs/SYNC.md).
    Lock lock(conn.frameMutex);
    if (conn.unsentReleases.size() >= kMaxReleasesPerEndFrame) conn.sendUnsentReleases();
    conn.unsentReleases.push_back(UnsentRelease{sc.id, index, sc.answers, renderingValue, hostFence});
    return {};
  }
  // Not sent yet: the I/O thread builds it when the next message wakes it (the frame's endFrame,
  // normally, or an acquire of this image, which needs its answer) and both leave in one socket
  // write. The daemon cannot show the copy before that endFrame anyway, and this thread saves
  // the eventfd write and the wake-up it causes (docs/SYNC.md).
  conn.link->postDeferred(releaseCall(*conn.link, sc.answers, sc.id, index, conn.combinedFrameCalls, renderingValue));
  return {};
}

RpcLink::Work releaseCall(RpcLink& link, std::shared_ptr<ReleaseAnswers> answers, uint32_t id, uint32_t index,
                          bool alsoAcquireAndWait, uint64_t renderingValue) {
  return [link = &link, answers = std::move(answers), id, index, alsoAcquireAndWait, renderingValue](IoState& io) {
    auto call = io.swapchains.at(id).releaseRequest(capnp::MessageSize{10, 0});
    call.setIndex(index);
    call.setAlsoAcquireAndWait(alsoAcquireAndWait);
    call.setRenderingValue(renderingValue);
    io.tasks.add(call.send().then(
        [answers, index](auto&& r) { answers->answered(index, fromWire(r.getError())); },
        [link, answers, index](kj::Exception&& e) { answers->answered(index, connectionError(*link, e, "release")); }));
  };
}

}  // namespace xrc::client
