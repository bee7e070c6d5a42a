// The daemon's Vulkan instance and device: device selection, the copy and graphics queues (each
// with its submit mutex; they may be the same VkQueue), and facts the protocol needs.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "host_image_copy.hpp"
#include "queue_priority.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/thread_annotations.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::gpu {

// A VkQueue plus the mutex that serializes every submission to it (seed 004's sync mutex).
struct Queue {
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  Mutex submitMutex;
};

// Who creates the VkInstance and VkDevice and picks the physical device. By default the daemon
// does; under an OpenXR runtime (XR_KHR_vulkan_enable2) the runtime does, adding what it needs.
class VulkanFactory {
 public:
  virtual ~VulkanFactory() = default;
  virtual Result<VkInstance> createInstance(const VkInstanceCreateInfo& info) = 0;
  // The device to use; null: choose among all devices as the daemon does by default.
  virtual Result<VkPhysicalDevice> physicalDevice(VkInstance instance) = 0;
  virtual Result<VkDevice> createDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo& info) = 0;
};

struct DeviceOptions {
  std::string deviceUuid;            // empty: first device with the needed extensions
  VulkanFactory* factory = nullptr;  // null: plain vkCreateInstance/vkCreateDevice
  // The highest queue priority to ask for. A GPU time-sliced between many client processes
  // serves the display late when the compositor's queues rank no higher than the clients'
  // (docs/BENCHMARKS.md, "32–64 clients": high cut missed vsyncs with 64 clients on the H100 by 1.6-4x;
  // realtime made every submission slower there). Drivers refuse what the process may not have;
  // each lower one is tried in turn, down to medium (Vulkan's default).
  QueuePriority maxQueuePriority = QueuePriority::high;
  // Instance extensions an output needs (the window's surface); with any, the device gets
  // VK_KHR_swapchain too.
  std::vector<const char*> instanceExtensions;
  // On Mesa's llvmpipe (lavapipe) with VK_EXT_host_image_copy, host-mode copies may run on the
  // calling thread instead of the copy queue (--host-copies=auto); false: never (off).
  bool hostCopies = true;
  // Only of images up to this many bytes (host_copy_max_kib): a host copy holds the calling
  // thread (the RPC thread, which answers every client) for its whole memcpy, ~0.1 ms per MiB on
  // lavapipe; larger images go to the copy queue's thread.
  uint64_t hostCopyMaxBytes = uint64_t(4096) << 10;
};

class GpuDevice {
 public:
  static Result<std::unique_ptr<GpuDevice>> create(const DeviceOptions& options);
  GpuDevice() = default;  // use create()
  ~GpuDevice();

  VkInstance instance() const { return instance_.get(); }
  VkPhysicalDevice physical() const { return physical_; }
  VkDevice device() const { return device_.get(); }
  const DeviceFacts& facts() const { return facts_; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
  float timestampPeriodNs() const { return timestampPeriod_; }
  bool timestampsOnCopyQueue() const { return copyTimestamps_; }
  // The global priority the queues were created with (medium where the driver has no
  // VK_EXT/KHR_global_priority).
  QueuePriority queuePriority() const { return queuePriority_; }

  // Copies of client images run here: a compute-capable queue, preferably compute-only
  // (notes/stack-facts.md: the graphics queue's copy path is 17x slower on the H100).
  Queue& copyQueue() { return *copyQueue_; }
  // Composition of the headless display (blits) runs here.
  Queue& graphicsQueue() { return *graphicsQueue_; }
  bool queuesShared() const { return copyQueue_ == graphicsQueue_; }
  std::vector<uint32_t> queueFamilies() const;

  // Formats usable for shared swapchains on this device (export + attachment + copy).
  const std::vector<int64_t>& swapchainFormats() const { return formats_; }
  const std::vector<int64_t>& depthFormats() const { return depthFormats_; }

  // VK_EXT_host_image_copy is enabled (llvmpipe has it, and the option allows it).
  bool hostCopies() const { return hostCopies_; }
  uint64_t hostCopyMaxBytes() const { return hostCopyMaxBytes_; }
  // Whether an image like `info` (exportable as OPAQUE_FD where `exportOpaqueFd`) may also have
  // VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT: host copies are on, it is single-sampled and within
  // DeviceOptions::hostCopyMaxBytes, its format has the host transfer feature and the device
  // supports the image with that usage added.
  bool hostTransferUsable(const VkImageCreateInfo& info, bool exportOpaqueFd) const;
  // Whether the device can copy on the host from / into an image in `layout`.
  bool hostCopySrcLayout(VkImageLayout layout) const;
  bool hostCopyDstLayout(VkImageLayout layout) const;
  PFN_vkCopyImageToImageEXT copyImageToImage = nullptr;
  PFN_vkTransitionImageLayoutEXT transitionImageLayout = nullptr;

  PFN_vkGetMemoryFdKHR getMemoryFd = nullptr;
  PFN_vkGetSemaphoreFdKHR getSemaphoreFd = nullptr;

  // vkQueueSubmit calls that carried clients' copies (submitCopies), since the device was made.
  uint64_t copySubmissions() const { return copySubmissions_.load(std::memory_order_relaxed); }
  void countCopySubmission() { copySubmissions_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Status init(const DeviceOptions& options);
  void queryFormats();

  vk::InstanceOwner instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  vk::DeviceOwner device_;
  DeviceFacts facts_;
  VkPhysicalDeviceMemoryProperties memory_{};
  float timestampPeriod_ = 1.f;
  bool copyTimestamps_ = false;
  QueuePriority queuePriority_ = QueuePriority::medium;
  std::unique_ptr<Queue> ownedCopyQueue_;
  std::unique_ptr<Queue> ownedGraphicsQueue_;
  Queue* copyQueue_ = nullptr;
  Queue* graphicsQueue_ = nullptr;
  std::vector<int64_t> formats_;
  std::vector<int64_t> depthFormats_;
  bool hostCopies_ = false;
  uint64_t hostCopyMaxBytes_ = 0;
  std::atomic<uint64_t> copySubmissions_{0};
  std::vector<VkImageLayout> hostCopySrcLayouts_;
  std::vector<VkImageLayout> hostCopyDstLayouts_;
};

}  // namespace xrc::gpu
