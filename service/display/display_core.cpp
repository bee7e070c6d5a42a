#include "display_core.hpp"

#include <algorithm>
#include <cstring>

#include "../gpu/barriers.hpp"
#include "../gpu/composable_image.hpp"
#include "../input/simulated_controllers.hpp"
#include "../log.hpp"
#include "xrc/protocol_rules.hpp"

namespace xrc::display {

namespace {

using gpu::barrier;
using gpu::imageBarrier;

}  // namespace

// Runtime images of the headless "runtime". Their bookkeeping is guarded by the backend's
// stateMutex_.
class LocalSwapchain final : public RuntimeSwapchain {
 public:
  struct PerImage : gpu::ComposableImage {
    bool latest = false;     // holds the swapchain's newest content (readable, not reusable)
    int displayHolds = 0;    // committed frames that show it
    int pins = 0;            // pending readbacks
    uint64_t copyValue = 0;  // copy timeline value that completes its content
    uint64_t lastRead = 0;   // compose timeline value of the last graphics-queue read
  };

  const VkImageCreateInfo& createInfo() const override { return info; }
  uint32_t imageCount() const override { return uint32_t(images.size()); }
  bool hostTransfer() const override {
    return !images.empty() && (images.front().info.usage & VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT) != 0;
  }

  VkImageCreateInfo info{};
  std::vector<PerImage> images;
  uint32_t next = 0;
};

Result<std::unique_ptr<DisplayCore>> DisplayCore::create(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline,
                                                         FrameScheduler& scheduler, Headset& headset, Output& output,
                                                         const DisplayCoreOptions& options) {
  auto core = std::make_unique<DisplayCore>(gpu, copyTimeline, scheduler, headset, output, options);
  if (auto s = core->init(); !s) return s.error();
  return core;
}

DisplayCore::DisplayCore(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline, FrameScheduler& scheduler, Headset& headset,
                         Output& output, const DisplayCoreOptions& options)
    : gpu_(gpu),
      copyTimeline_(copyTimeline),
      scheduler_(scheduler),
      headset_(headset),
      output_(output),
      options_(options) {}

InputSnapshot DisplayCore::input(int64_t) const {
  const SimulatedControllers* controllers = headset_.simulatedControllers();
  return controllers != nullptr ? controllers->snapshot() : InputSnapshot{};
}

Status DisplayCore::applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
  if (SimulatedControllers* controllers = headset_.simulatedControllers())
    return controllers->haptic(hand, output, pulse);
  return Backend::applyHaptic(hand, output, pulse);
}

Status DisplayCore::stopHaptic(uint32_t hand, const std::string& output) {
  if (SimulatedControllers* controllers = headset_.simulatedControllers()) return controllers->stopHaptic(hand, output);
  return Backend::stopHaptic(hand, output);
}

std::array<HapticStatus, kHandCount> DisplayCore::haptics() const {
  const SimulatedControllers* controllers = headset_.simulatedControllers();
  return controllers != nullptr ? controllers->haptics() : std::array<HapticStatus, kHandCount>{};
}

DisplayCore::~DisplayCore() {
  stop();
  if (auto s = waitSubmitted(); !s) log::error("display shutdown: {}", s.error().describe());
  // The output's last presents read its image, which may go right after this.
  output_.finish();
}

Status DisplayCore::init() {
  VkDevice device = gpu_.device();
  composeEveryFrame_ = options_.composeEveryFrame || output_.showsCompositions();
  latchOnDemand_ = !composeEveryFrame_;
  auto submitter = gpu::SerialSubmitter::create(gpu_, gpu_.graphicsQueue(), "display submission");
  if (!submitter) return submitter.error();
  submitter_ = std::move(submitter).value();

  const OutputImage target = output_.image();
  DisplayLayout layout;
  layout.views = headset_.systemInfo().views;
  if (layout.views.empty() || target.width % layout.views.size() != 0) {
    return makeError(ErrorCode::invalidArgument, "the output ({}x{}) does not hold {} views side by side", target.width,
                     target.height, layout.views.size());
  }
  layout.viewWidth = target.width / uint32_t(layout.views.size());
  layout.viewHeight = target.height;
  layout.reprojection = options_.reprojection;
  // Runtime images are read where the core keeps them; the renderer holds none.
  auto renderer =
      LayerRenderer::create(device, target.image, target.view, std::move(layout), [](const LayerView& view) {
        auto& sc = static_cast<LocalSwapchain&>(*view.swapchain);
        const auto& image = sc.images[view.runtimeIndex];
        return SourceImage{image.image.get(), image.view.get(), sc.info.format};
      });
  if (!renderer) return renderer.error();
  renderer_.emplace(std::move(renderer).value());
  return {};
}

Result<std::shared_ptr<RuntimeSwapchain>> DisplayCore::createSwapchain(const VkImageCreateInfo& requested) {
  auto swapchain = std::make_shared<LocalSwapchain>();
  swapchain->images.resize(3);
  for (auto& per : swapchain->images) {
    auto image = gpu::createComposableImage(gpu_, requested, "runtime");
    if (!image) return image.error();
    static_cast<gpu::ComposableImage&>(per) = std::move(image).value();
  }
  swapchain->info = swapchain->images.front().info;
  return std::shared_ptr<RuntimeSwapchain>(std::move(swapchain));
}

std::optional<RuntimeImageLease> DisplayCore::freeImageLocked(LocalSwapchain& swapchain) {
  for (uint32_t n = 0; n < swapchain.imageCount(); ++n) {
    const uint32_t i = (swapchain.next + n) % swapchain.imageCount();
    auto& per = swapchain.images[i];
    if (per.latest || per.displayHolds > 0 || per.pins > 0) continue;
    swapchain.next = (i + 1) % swapchain.imageCount();
    return RuntimeImageLease{i,
                             per.image.get(),
                             submitter_->timeline().get(),
                             per.lastRead,
                             VK_QUEUE_FAMILY_IGNORED,
                             (per.info.usage & VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT) != 0};
  }
  return std::nullopt;
}

std::optional<RuntimeImageLease> DisplayCore::tryAcquireImage(RuntimeSwapchain& base) {
  latchDue();  // a vsync that passed may have let go of an image
  Lock lock(stateMutex_);
  return freeImageLocked(static_cast<LocalSwapchain&>(base));
}

Result<RuntimeImageLease> DisplayCore::acquireImage(RuntimeSwapchain& base, std::chrono::milliseconds timeout) {
  auto& swapchain = static_cast<LocalSwapchain&>(base);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    latchDue();  // a vsync that passed may have let go of an image
    Lock lock(stateMutex_);
    if (auto lease = freeImageLocked(swapchain)) return *lease;
    // Latched on demand, nobody latches the next vsync, which may let go of one: wait until then
    // at most, and latch it.
    auto until = deadline;
    if (latchOnDemand_) {
      const auto vsync = std::chrono::steady_clock::time_point(
          std::chrono::nanoseconds(output_.clock().nextVsyncAfter(monotonicNowNs())));
      until = std::min(until, vsync);
    }
    if (stateChanged_.wait_until(lock.native(), until) == std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline) {
      return makeError(ErrorCode::timeout, "no runtime image became free within {} ms", timeout.count());
    }
  }
}

void DisplayCore::releaseImage(RuntimeSwapchain& base, uint32_t index, uint64_t copyValue) {
  auto& swapchain = static_cast<LocalSwapchain&>(base);
  Lock lock(stateMutex_);
  for (auto& per : swapchain.images) per.latest = false;
  swapchain.images[index].latest = true;
  swapchain.images[index].copyValue = copyValue;
  stateChanged_.notify_all();
}

void DisplayCore::adjustHolds(const CommittedFrame& frame, int delta) {
  for (const auto& layer : frame.layers) {
    for (const auto& view : layer.views) {
      static_cast<LocalSwapchain&>(*view.swapchain).images[view.runtimeIndex].displayHolds += delta;
    }
  }
}

void DisplayCore::release(const std::vector<CommittedFrame>& frames) {
  for (const auto& frame : frames) adjustHolds(frame, -1);
  if (!frames.empty()) stateChanged_.notify_all();
}

void DisplayCore::commitFrame(CommittedFrame frame) {
  if (!latchOnDemand_) {
    commitToScheduler(std::move(frame));
    return;
  }
  // The vsyncs before this commit are latched without it; latching is held off until it is in.
  Lock latch(latchMutex_);
  const int64_t now = monotonicNowNs();
  latchDueLocked(now);
  if (nextLatchNs_ == 0) nextLatchNs_ = output_.clock().nextVsyncAfter(now);  // idle until now
  commitToScheduler(std::move(frame));
}

void DisplayCore::commitToScheduler(CommittedFrame frame) {
  // The scheduler holds the frame until a newer one replaces it; its images stay unleasable.
  Lock lock(stateMutex_);
  adjustHolds(frame, +1);
  release(scheduler_.commit(std::move(frame), monotonicNowNs()));
  if (idle_) {
    idle_ = false;
    // Latched on demand, the loop's backstop wakes at the same pace idle or not.
    if (!latchOnDemand_) boost::asio::post(io_, [this] { wakeFromIdle(); });
  }
}

void DisplayCore::removeClient(uint32_t clientId) {
  {
    Lock lock(reprojectedMutex_);
    reprojected_.erase(clientId);
  }
  latchDue();  // the vsyncs before it left still show its frames
  Lock lock(stateMutex_);
  release(scheduler_.removeClient(clientId));
}

uint64_t DisplayCore::framesReprojected(uint32_t clientId) const {
  Lock lock(reprojectedMutex_);
  auto it = reprojected_.find(clientId);
  return it == reprojected_.end() ? 0 : it->second;
}

void DisplayCore::latchDue() {
  if (!latchOnDemand_) return;
  Lock latch(latchMutex_);
  latchDueLocked(monotonicNowNs());
}

void DisplayCore::latchDueLocked(int64_t nowNs) {
  if (nextLatchNs_ == 0 || stalledForTest_.load()) return;
  const DisplayClock clock = output_.clock();
  // Normally latched at most one backstop interval late. Much later than that (the daemon was
  // stopped, the machine stalled), the vsyncs in between count as missed, not as a burst.
  const int64_t maxBehindNs = 2 * std::chrono::duration_cast<std::chrono::nanoseconds>(options_.idleWake).count();
  if (nowNs - nextLatchNs_ > maxBehindNs) nextLatchNs_ = clock.nextVsyncAfter(nowNs - clock.periodNs);
  while (nextLatchNs_ != 0 && nextLatchNs_ <= nowNs) {
    if (tick(nextLatchNs_)) {
      nextLatchNs_ = 0;  // idle: the next commit restarts latching
    } else {
      nextLatchNs_ = clock.nextVsyncAfter(nextLatchNs_);
    }
  }
}

void DisplayCore::start() {
  nextTickNs_ = output_.clock().nextVsyncAfter(monotonicNowNs());
  if (latchOnDemand_) {
    {
      Lock latch(latchMutex_);
      nextLatchNs_ = nextTickNs_;
    }
    // What changes what a vsync shows, or reads what it showed, latches the vsyncs before first.
    scheduler_.setLatchOnDemand([this] { latchDue(); });
    // The loop itself only wakes as a backstop (stats, idling, the health monitor's liveness).
    nextTickNs_ = monotonicNowNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(options_.idleWake).count();
  }
  scheduleTick();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "xrc-display");
    io_.run();
  });
}

void DisplayCore::stop() {
  if (latchOnDemand_) scheduler_.setLatchOnDemand(nullptr);  // waits for a latch under way
  if (!thread_.joinable()) return;
  io_.stop();
  thread_.join();
}

void DisplayCore::scheduleTick() {
  const uint64_t generation = ++tickGeneration_;
  timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(nextTickNs_)));
  timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    // Re-arming cancels a pending wait, but not one whose handler its expiry had already queued.
    if (ec || generation != tickGeneration_) return;
    if (latchOnDemand_) {
      // The backstop: latches what nobody asked for (stats stay current, an idle display goes
      // idle) and counts a loop round for the health monitor.
      {
        Lock latch(latchMutex_);
        if (!stalledForTest_.load()) loopIterations_++;
        latchDueLocked(monotonicNowNs());
      }
      nextTickNs_ = monotonicNowNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(options_.idleWake).count();
      scheduleTick();
      return;
    }
    bool idle = false;
    if (!stalledForTest_.load()) {
      Lock latch(latchMutex_);
      idle = tick(nextTickNs_);
    }
    if (idle) {
      nextTickNs_ = output_.clock().nextVsyncAfter(
          monotonicNowNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(options_.idleWake).count());
    } else {
      // Skip vsyncs we are already past (a stalled tick counts as missed, not as a burst).
      nextTickNs_ = std::max(nextTickNs_ + output_.clock().periodNs,
                             output_.clock().nextVsyncAfter(monotonicNowNs()) - output_.clock().periodNs);
      nextTickNs_ = output_.clock().nextVsyncAfter(nextTickNs_ - 1);
    }
    scheduleTick();
  });
}

void DisplayCore::wakeFromIdle() {
  nextTickNs_ = output_.clock().nextVsyncAfter(monotonicNowNs());
  scheduleTick();
}

bool DisplayCore::tick(int64_t vsyncNs) {
  const int64_t start = monotonicNowNs();
  loopIterations_++;
  // The previous display frame could not have been shown at its vsync: its composition still runs
  // on the GPU a vsync later (it waited for copies that wait for clients' rendering, or the GPU was
  // busy), or, where frames are composed only when read, the copies it shows were not done then.
  if (composeEveryFrame_ ? submitter_->running()
                         : unreadFrame_ && !copyTimeline_.reached(unreadFrame_->composition.copyValue)) {
    displayFramesGpuLate_++;
  }
  std::vector<CommittedFrame> frames;
  bool idle = false;
  {
    Lock lock(stateMutex_);
    DisplaySelection selection = scheduler_.select(vsyncNs, output_.clock().periodNs);
    release(selection.released);
    frames = std::move(selection.shown);
    // Nothing to show, nothing coming, and the output shows nothing already: composing would
    // give the same black image again, so the loop sleeps until commitFrame wakes it.
    idle = idle_ = frames.empty() && !selection.framesQueued && outputBlank_;
    if (idle) scheduler_.displayIdle();
    for (const auto& frame : frames) adjustHolds(frame, +1);  // held while recorded and submitted, or until read
    // The frame no read composed is superseded: its images may take copies again.
    if (unreadFrame_ && !idle) {
      release(unreadFrame_->frames);
      unreadFrame_.reset();
    }
  }
  if (idle) {
    // The window keeps being presented, slowly: it follows resizes and close requests. (Latched
    // on demand there is no window, and this may be any thread.)
    if (!latchOnDemand_) presentOutput();
    return true;
  }
  Composition composition = plan(frames, vsyncNs);
  outputBlank_ = frames.empty();
  if (composeEveryFrame_) {
    const Status composed = compose(frames, composition);
    if (!composed) log::error("display composition failed: {}", composed.error().describe());
    outputBlank_ = composed && frames.empty();
    if (composed) shown_ = std::move(composition.shown);  // what the output image now shows
    {
      // compose() recorded each image's lastRead, which a copy into it waits for on the GPU, so the
      // images are free for leasing as soon as the composition is submitted.
      Lock lock(stateMutex_);
      release(frames);
    }
    // After the holds are let go: the window's pacing may wait, the clients' images need not.
    if (composed) presentOutput();
    inFlight_ = std::move(frames);  // keeps their swapchains alive until the GPU is done with them
  } else {
    // Nobody looks at this output: the frame is composed if and when it is read, from the images
    // held until the next display frame (the scheduler holds the same frames until then anyway).
    shown_ = composition.shown;
    unreadFrame_ = UnreadFrame{std::move(frames), std::move(composition), false};
  }
  displayFrames_++;
  // Latched on demand, a display frame is settled whenever asked: no wake-up at its vsync.
  scheduler_.displayed(monotonicNowNs() - start,
                       latchOnDemand_ ? std::nullopt : std::optional<int64_t>(start - vsyncNs));
  return false;
}

void DisplayCore::presentOutput() {
  const OutputImage target = output_.image();
  output_.present({target.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, target.width, target.height,
                   submitter_->timeline().get(), composedValue_});
}

Status DisplayCore::waitSubmitted() {
  if (auto s = submitter_->waitSubmitted(); !s) return s;
  inFlight_.clear();
  return {};
}

Status DisplayCore::submit(uint64_t copyValue, const std::function<void(VkCommandBuffer)>& record,
                           uint64_t& composeValue) {
  // The previous submission (normally a composition one vsync ago, long finished) is waited for
  // first: what it kept alive goes.
  if (auto s = waitSubmitted(); !s) return s;
  auto value = submitter_->submit({copyTimeline_.get(), copyValue, VK_PIPELINE_STAGE_TRANSFER_BIT}, record);
  if (!value) return value.error();
  composeValue = value.value();
  return {};
}

Composition DisplayCore::plan(const std::vector<CommittedFrame>& frames, int64_t vsyncNs) {
  Composition composition = renderer_->plan(frames, headset_.headPoseAt(vsyncNs));
  layerViewsCulled_ += composition.culled;
  if (!composition.reprojectedClients.empty()) {
    Lock lock(reprojectedMutex_);
    for (uint32_t id : composition.reprojectedClients) reprojected_[id]++;
  }
  return composition;
}

Status DisplayCore::compose(const std::vector<CommittedFrame>& frames, const Composition& composition) {
  // The descriptor sets the previous composition used are reset by beginFrame().
  if (auto s = waitSubmitted(); !s) return s;
  if (auto s = renderer_->beginFrame(); !s) return s;
  Status recordStatus;
  uint64_t composeValue = 0;
  auto record = [&](VkCommandBuffer cb) { renderer_->record(cb, frames, composition, recordStatus); };
  if (auto s = submit(composition.copyValue, record, composeValue); !s) return s;
  if (!recordStatus) log::error("display composition: {}", recordStatus.error().describe());
  outputLayout_ = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  composedValue_ = composeValue;
  displayFramesComposed_++;
  Lock lock(stateMutex_);
  size_t at = 0;
  for (const auto& frame : frames) {
    for (const auto& layer : frame.layers) {
      for (const auto& view : layer.views) {
        // A culled view was not read: a copy into its image need not wait for this composition.
        if (composition.drawn[at++])
          static_cast<LocalSwapchain&>(*view.swapchain).images[view.runtimeIndex].lastRead = composeValue;
      }
    }
  }
  return {};
}

Result<Pixels> DisplayCore::readImage(VkImage image, VkFormat format, uint32_t width, uint32_t height, uint32_t layers,
                                      uint32_t mips, VkImageLayout restingLayout, uint64_t copyValue,
                                      uint64_t& composeValue) {
  VkDevice device = gpu_.device();
  const uint32_t texel = vk::texelSize(format);
  if (texel == 0) return makeError(ErrorCode::unsupported, "readback of format {} is not supported", int(format));
  std::vector<VkBufferImageCopy> regions;
  VkDeviceSize size = 0;
  const VkImageAspectFlags aspect = vk::isDepthFormat(format) ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT;
  for (uint32_t mip = 0; mip < mips; ++mip) {
    VkBufferImageCopy region{};
    region.bufferOffset = size;
    region.imageSubresource = {aspect, mip, 0, layers};
    region.imageExtent = {std::max(1u, width >> mip), std::max(1u, height >> mip), 1};
    regions.push_back(region);
    size += VkDeviceSize(region.imageExtent.width) * region.imageExtent.height * layers * texel;
  }
  auto readback = vk::createHostBuffer(device, gpu_.memory(), size, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  if (!readback) return readback.error();
  VkBuffer buffer = readback.value().buffer.get();

  const VkImageSubresourceRange range{vk::aspectMask(format), 0, mips, 0, layers};
  auto record = [&](VkCommandBuffer cb) {
    if (restingLayout != VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL) {
      barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
              {imageBarrier(image, restingLayout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 0, VK_ACCESS_TRANSFER_READ_BIT,
                            range)});
    }
    vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, uint32_t(regions.size()),
                           regions.data());
    if (restingLayout != VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL) {
      barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
              {imageBarrier(image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, restingLayout, 0, 0, range)});
    }
    VkBufferMemoryBarrier toHost{};
    toHost.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
    toHost.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    toHost.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    toHost.buffer = buffer;
    toHost.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &toHost, 0,
                         nullptr);
  };
  if (auto s = submit(copyValue, record, composeValue); !s) return s.error();
  if (auto s = waitSubmitted(); !s) return s.error();

  Pixels pixels;
  pixels.width = width;
  pixels.height = height;
  pixels.layers = layers;
  pixels.mips = mips;
  pixels.format = format;
  pixels.data.resize(size);
  std::memcpy(pixels.data.data(), readback.value().mapped, size);
  return pixels;
}

bool DisplayCore::readRuntimeImage(std::shared_ptr<RuntimeSwapchain> base, uint32_t index, uint64_t copyValue,
                                   std::function<void(Result<Pixels>)> done) {
  auto swapchain = std::static_pointer_cast<LocalSwapchain>(base);
  {
    // Checked with the pin, under one lock: an image that is the newest cannot be leased for
    // another copy, and once pinned it stays unleasable until read.
    Lock lock(stateMutex_);
    auto& per = swapchain->images[index];
    if (!per.latest || per.copyValue != copyValue) return false;
    per.pins++;
  }
  boost::asio::post(io_, [this, swapchain, index, copyValue, done = std::move(done)] {
    const auto& info = swapchain->info;
    uint64_t composeValue = 0;
    auto result =
        readImage(swapchain->images[index].image.get(), info.format, info.extent.width, info.extent.height,
                  info.arrayLayers, info.mipLevels, vk::attachmentLayout(info.format), copyValue, composeValue);
    {
      Lock lock(stateMutex_);
      swapchain->images[index].pins--;
      swapchain->images[index].lastRead = std::max(swapchain->images[index].lastRead, composeValue);
      stateChanged_.notify_all();
    }
    done(std::move(result));
  });
  return true;
}

void DisplayCore::readDisplay(std::function<void(Result<DisplaySnapshot>)> done) {
  boost::asio::post(io_, [this, done = std::move(done)] {
    std::optional<UnreadFrame> toCompose;
    DisplaySnapshot snapshot;
    {
      Lock latch(latchMutex_);
      if (latchOnDemand_) latchDueLocked(monotonicNowNs());
      if (unreadFrame_ && !unreadFrame_->composed) {
        toCompose = *unreadFrame_;
        unreadFrame_->composed = true;
        // Held by this read too: a vsync latched meanwhile (on another thread) lets go of
        // unreadFrame_, and no copy may go into these images before the composition reading
        // them is submitted (compose() records each image's last read, which copies wait for).
        Lock lock(stateMutex_);
        for (const auto& frame : toCompose->frames) adjustHolds(frame, +1);
      }
      snapshot.shown = shown_;
      snapshot.displayFrame = displayFrames_.load();
    }
    if (toCompose) {
      // Composed as it would have been at its vsync: the same frames, images and plan.
      const Status composed = compose(toCompose->frames, toCompose->composition);
      {
        Lock lock(stateMutex_);
        release(toCompose->frames);
      }
      if (!composed) {
        done(composed.error());
        return;
      }
      // Kept alive until the composition is known done, even if the read-back below fails before
      // it waits: the next display frame lets go of unreadFrame_ without waiting for the GPU.
      inFlight_ = std::move(toCompose->frames);
    }
    if (outputLayout_ != VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL) {
      done(makeError(ErrorCode::callOrder, "nothing has been displayed yet"));
      return;
    }
    uint64_t composeValue = 0;
    const OutputImage target = output_.image();
    auto pixels = readImage(target.image, kOutputFormat, target.width, target.height, 1, 1,
                            VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 0, composeValue);
    if (!pixels) {
      done(pixels.error());
      return;
    }
    snapshot.pixels = std::move(pixels).value();
    done(std::move(snapshot));
  });
}

}  // namespace xrc::display
