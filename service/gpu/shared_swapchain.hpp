// The daemon's half of a shared swapchain: exportable images (dedicated OPAQUE_FD allocations)
// with the exact create info of the runtime swapchain, per-image rendering_done / copying_done
// semaphores (binary mode) or one timeline pair (timeline mode), and the copy of a released image
// into a runtime image (seed 000).
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "../backends/backend.hpp"
#include "gpu_device.hpp"
#include "timeline.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::gpu {

struct ExportedImage {
  UniqueFd memoryFd;
  uint64_t allocationSize = 0;
  uint32_t memoryTypeIndex = 0;
  UniqueFd renderingDoneFd;  // binary mode only
  UniqueFd copyingDoneFd;    // binary mode only
};

// Timeline mode: the swapchain's rendering_done / copying_done timelines.
struct ExportedTimelines {
  UniqueFd renderingFd;
  UniqueFd copyingFd;
};

struct CopyResult {
  uint32_t runtimeIndex = 0;
  uint64_t copyValue = 0;  // copy timeline value signalled by this copy
  // GPU time of this copy (host mode) or of the image's previous one, when sampled.
  std::optional<double> gpuCopyUs;
  // Host mode, a copy that ran on the calling thread (vkCopyImageToImageEXT): its time there. Such
  // a copy is complete; its copyValue is signalled from the host already, and it is not submitted.
  std::optional<double> hostCopyUs;
  bool onHost() const { return hostCopyUs.has_value(); }
};

class SharedSwapchain;

// One copy recorded and ready for the copy queue: what its batch waits for and signals. The copy
// timeline's value is taken when it is submitted (submitCopies).
struct PreparedCopy {
  SharedSwapchain* swapchain = nullptr;
  uint32_t index = 0;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  bool timed = false;
  std::array<VkSemaphore, 2> waits{};
  std::array<uint64_t, 2> waitValues{};
  std::array<VkPipelineStageFlags, 2> waitStages{};
  uint32_t waitCount = 0;
  std::array<VkSemaphore, 3> signals{};
  std::array<uint64_t, 3> signalValues{};
  uint32_t signalCount = 0;  // the last one is the copy timeline
  CopyResult result;         // copyValue set once submitted
};

// Submits `copies` (prepared by their swapchains, in that order) to the copy queue as one
// submission: one vkQueueSubmit, and on a driver with a submit thread (lavapipe) one wake-up of it,
// for all of them. Each signals the next value of the copy timeline their swapchains share. On
// failure none is submitted. Copies made on the host already (result.onHost()) are left out; when all
// were, nothing is submitted.
Status submitCopies(std::span<PreparedCopy> copies);

class SharedSwapchain {
 public:
  // Creates `count` images like `info` and, in binary mode, their semaphores (in timeline mode,
  // the swapchain's pair, exported into `timelines`). Exports an fd set per image into
  // `exported` (the caller sends them; the swapchain keeps no fds).
  // Every submission of the swapchain's signals `copyTimeline`, and its images' reuse waits for it.
  // `hostCopyTarget`: its runtime images allow host copies, so in host mode its own images get
  // host transfer usage too where the device allows it (never where no copy could use it).
  static Result<std::unique_ptr<SharedSwapchain>> create(GpuDevice& gpu, Timeline& copyTimeline,
                                                         const VkImageCreateInfo& info, uint32_t count, SyncMode mode,
                                                         std::vector<ExportedImage>& exported,
                                                         ExportedTimelines& timelines, bool hostCopyTarget = false);
  SharedSwapchain(GpuDevice& gpu, Timeline& copyTimeline, SyncMode mode)
      : gpu_(gpu), copyTimeline_(copyTimeline), mode_(mode) {}
  ~SharedSwapchain();

  const VkImageCreateInfo& createInfo() const { return info_; }
  uint32_t imageCount() const { return uint32_t(images_.size()); }
  SyncMode syncMode() const { return mode_; }
  // Timeline mode: what the client's release of image `index` signals; the copy (or the
  // pass-through) of that release signals copying_done at the same value. Set before either.
  VkSemaphore renderingTimeline() const { return renderingTimeline_ ? renderingTimeline_->get() : VK_NULL_HANDLE; }
  // Keeps that semaphore alive (a wait for it may outlive the swapchain) without keeping the
  // swapchain: its teardown stays on the frame path's threads.
  std::shared_ptr<const void> renderingTimelineOwner() const { return renderingTimeline_; }
  void setReleaseValue(uint32_t index, uint64_t value) {
    if (index < images_.size()) images_[index].releaseValue = value;
  }

  // One thread at a time (the session's frame path: its RPC thread or the frame worker).
  // Records and submits the copy of shared image `index` into the runtime image leased from the
  // backend, per seed 000; in host mode waits for it (bounded) unless `waitInHostMode` is false,
  // when the caller must call finishCopy() before the client may reuse the image.
  // `queued`, where given, says whether a submission to the copy queue was made (also when the
  // wait after it failed).
  Result<CopyResult> copyToRuntime(uint32_t index, const RuntimeImageLease& lease, std::chrono::milliseconds timeout,
                                   bool waitInHostMode = true, bool* queued = nullptr);
  // The first half of copyToRuntime: waits (bounded) for the image's previous copy and records
  // this one, for submitCopies. Until that submission is made, nothing of this image may be.
  // Host mode, where both images allow it and the runtime image's last reader is done: copies on
  // the calling thread instead (the result is onHost(), complete; see hostCopy()).
  Result<PreparedCopy> prepareCopy(uint32_t index, const RuntimeImageLease& lease, std::chrono::milliseconds timeout);
  // True when a copy of `index` can be recorded and submitted without waiting: the image's
  // previous copy (whose command buffer is reused) has finished.
  bool readyForCopy(uint32_t index);
  // Host mode: waits (bounded) for the copy copyToRuntime(..., false) submitted; its GPU time.
  Result<std::optional<double>> finishCopy(uint32_t index, std::chrono::milliseconds timeout);
  // Binary mode, when a released image cannot be copied: consumes rendering_done and signals
  // copying_done anyway, so the client's next acquire of the image does not wait forever and
  // its next release does not signal a signalled semaphore. Timeline mode: signals copying_done
  // at the release's value, after the copies before it. No-op in host mode.
  Status passThrough(uint32_t index, std::chrono::milliseconds timeout);
  // Waits (bounded) until no copy of this swapchain is in flight; before destruction.
  Status waitIdle(std::chrono::milliseconds timeout);
  // True when no copy of this swapchain is in flight (never waits).
  bool idle();

 private:
  // The copy of one shared image into one runtime image, recorded once and submitted again for
  // every release that leases that runtime image: recording it cost the RPC thread more than the
  // submit does (docs/BENCHMARKS.md, history, 2026-11-22). Never pending when reused: the shared image's
  // previous copy, whichever runtime image it went to, is complete before the next is submitted.
  struct RecordedCopy {
    VkCommandBuffer commands = VK_NULL_HANDLE;       // from pool_
    VkImage destination = VK_NULL_HANDLE;            // what it was recorded for (re-recorded if the
    uint32_t ownerFamily = VK_QUEUE_FAMILY_IGNORED;  // backend ever leases it differently)
  };
  // One copy in this many of each image is timed: it runs the variant of the copy that writes
  // timestamps, and its GPU time is read back. Timestamps are not free: on lavapipe each one
  // flushes the rasterizer and wakes its threads, which cost more than the copy's memcpy.
  static constexpr uint32_t kCopyTimeSampleInterval = 8;
  struct PerImage {
    vk::Memory memory;  // declared first: destroyed after the image bound to it
    vk::Image image;
    vk::Semaphore renderingDone;
    vk::Semaphore copyingDone;
    uint64_t releaseValue = 0;              // timeline mode
    std::vector<RecordedCopy> copies;       // by runtime image index, grown as each is first leased
    std::vector<RecordedCopy> timedCopies;  // the same with timestamps around the copy command
    // The copy timeline's value that the image's last submission signals: reached, the image
    // and its command buffers are free again (one value per submission, so a batch of copies
    // needs no fence of its own).
    uint64_t submittedValue = 0;
    bool submitted = false;      // a submission of this image's may still be running
    bool timedInFlight = false;  // the last copy submitted was a timed one, not yet read back
    // Copies of this image to pass before the next is timed: the first ones (cold, the first use
    // of its memory and command buffers) are not, as they would stand out in a sampled p99.
    uint32_t copiesUntilTimed = kCopyTimeSampleInterval - 1;
    bool hostTransfer = false;  // created with VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT (not in info_)
  };

  Status createImage(uint32_t index, ExportedImage& out);
  // Host mode: copies shared image `index` into the leased runtime image on this thread with
  // VK_EXT_host_image_copy when it can without waiting (see shared_swapchain.cpp), signalling the
  // next copy-timeline value from the host; nullopt: it did not, and the copy goes to the queue.
  struct HostCopy {
    double us = 0;           // on the calling thread
    uint64_t copyValue = 0;  // signalled
  };
  std::optional<HostCopy> hostCopy(PerImage& image, const RuntimeImageLease& lease);
  std::optional<double> readCopyTime(uint32_t index);
  // Waits for the image's previous submission (its command buffer is reused).
  Status waitPrevious(PerImage& image, uint32_t index, std::chrono::milliseconds timeout,
                      std::optional<double>* gpuCopyUs);
  // The command buffer that copies shared image `index` into the leased runtime image; `timed`:
  // the variant that writes timestamps around the copy command.
  Result<VkCommandBuffer> copyCommands(PerImage& image, uint32_t index, const RuntimeImageLease& lease, bool timed);
  void recordCopy(VkCommandBuffer cb, PerImage& image, uint32_t index, const RuntimeImageLease& lease, bool timed);

  friend Status submitCopies(std::span<PreparedCopy>);

  GpuDevice& gpu_;
  Timeline& copyTimeline_;
  SyncMode mode_;
  VkImageCreateInfo info_{};
  std::vector<PerImage> images_;
  vk::CommandPool pool_;
  vk::QueryPool timestamps_;                          // two per image: before and after the copy
  std::shared_ptr<vk::Semaphore> renderingTimeline_;  // timeline mode
  vk::Semaphore copyingTimeline_;                     // timeline mode
  bool hostCopyTarget_ = false;                       // its runtime images allow host copies
  uint64_t hostCopies_ = 0;                           // copies made on the host, and on the copy queue
  uint64_t queueCopies_ = 0;
  uint64_t hostCopyNs_ = 0;  // the host copies' time on the calling thread, together
};

}  // namespace xrc::gpu
