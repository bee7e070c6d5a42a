// One thread's stream of submissions on one queue, one at a time: a command buffer re-recorded
// for each, a fence the CPU waits on before re-recording it, and a timeline each submission
// signals for the GPU work that reads what it wrote (a window's present, a copy into an image it
// read). The display core's compositions and read-backs and the mirror's compositions go through
// one each. Single-threaded: its owner's thread only.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <memory>

#include "gpu_device.hpp"
#include "timeline.hpp"
#include "xrc/result.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::gpu {

// Something the submission waits for: a timeline value, before `stage`.
struct TimelineWait {
  VkSemaphore semaphore = VK_NULL_HANDLE;  // null: nothing
  uint64_t value = 0;
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
};

class SerialSubmitter {
 public:
  // `what` names the submissions in errors.
  static Result<std::unique_ptr<SerialSubmitter>> create(GpuDevice& gpu, Queue& queue, const char* what);
  SerialSubmitter(GpuDevice& gpu, Queue& queue, const char* what) : gpu_(gpu), queue_(queue), what_(what) {}
  // Waits for what is still in flight (bounded).
  ~SerialSubmitter();

  // Waits for the previous submission (bounded: an error past it), records `record` and submits
  // it after `wait`; the timeline value it signals is returned. Waiting here rather than right
  // after submitting keeps the caller from spinning in the driver for every submission.
  Result<uint64_t> submit(const TimelineWait& wait, const std::function<void(VkCommandBuffer)>& record);
  // Waits (bounded) for the submission in flight, if any.
  Status waitSubmitted();
  // A submission is in flight and the GPU has not finished it.
  bool running() const;
  Timeline& timeline() { return *timeline_; }
  uint64_t lastValue() const { return lastValue_; }

 private:
  Status init();

  GpuDevice& gpu_;
  Queue& queue_;
  const char* what_;
  std::unique_ptr<Timeline> timeline_;
  vk::CommandPool pool_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  vk::Fence fence_;
  bool submitted_ = false;  // fence_ is pending
  uint64_t lastValue_ = 0;
};

}  // namespace xrc::gpu
