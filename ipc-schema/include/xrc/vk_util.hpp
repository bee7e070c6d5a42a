// Vulkan helpers shared by the daemon and the client library: result checking, RAII for
// device-owned handles, format facts, and the exact shared-image create info.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <utility>
#include <vector>

#include "xrc/protocol_rules.hpp"
#include "xrc/result.hpp"

namespace xrc::vk {

const char* resultName(VkResult result);

inline Status check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return {};
  return makeError(ErrorCode::internal, "{} failed: {}", what, resultName(result));
}

// Owns one device-level Vulkan handle; Destroy is vkDestroyX/vkFreeMemory.
template <typename Handle, void (*Destroy)(VkDevice, Handle, const VkAllocationCallbacks*)>
class DeviceHandle {
 public:
  DeviceHandle() = default;
  DeviceHandle(VkDevice device, Handle handle) : device_(device), handle_(handle) {}
  DeviceHandle(DeviceHandle&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, VK_NULL_HANDLE)) {}
  DeviceHandle& operator=(DeviceHandle&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
    }
    return *this;
  }
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;
  ~DeviceHandle() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != VK_NULL_HANDLE; }
  void reset() {
    if (handle_ != VK_NULL_HANDLE) Destroy(device_, handle_, nullptr);
    handle_ = VK_NULL_HANDLE;
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  Handle handle_ = VK_NULL_HANDLE;
};

using Image = DeviceHandle<VkImage, vkDestroyImage>;
using Buffer = DeviceHandle<VkBuffer, vkDestroyBuffer>;
using Memory = DeviceHandle<VkDeviceMemory, vkFreeMemory>;
using Semaphore = DeviceHandle<VkSemaphore, vkDestroySemaphore>;
using Fence = DeviceHandle<VkFence, vkDestroyFence>;
using Event = DeviceHandle<VkEvent, vkDestroyEvent>;
using CommandPool = DeviceHandle<VkCommandPool, vkDestroyCommandPool>;
using QueryPool = DeviceHandle<VkQueryPool, vkDestroyQueryPool>;
using ImageView = DeviceHandle<VkImageView, vkDestroyImageView>;
using Sampler = DeviceHandle<VkSampler, vkDestroySampler>;
using ShaderModule = DeviceHandle<VkShaderModule, vkDestroyShaderModule>;
using DescriptorSetLayout = DeviceHandle<VkDescriptorSetLayout, vkDestroyDescriptorSetLayout>;
using DescriptorPool = DeviceHandle<VkDescriptorPool, vkDestroyDescriptorPool>;
using PipelineLayout = DeviceHandle<VkPipelineLayout, vkDestroyPipelineLayout>;
using Pipeline = DeviceHandle<VkPipeline, vkDestroyPipeline>;

// Owns a VkInstance / VkDevice (destroyed last by whoever holds them).
class InstanceOwner {
 public:
  InstanceOwner() = default;
  InstanceOwner(const InstanceOwner&) = delete;
  InstanceOwner& operator=(const InstanceOwner&) = delete;
  ~InstanceOwner() { reset(VK_NULL_HANDLE); }
  VkInstance get() const { return instance_; }
  void reset(VkInstance instance) {
    if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
    instance_ = instance;
  }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
};

class DeviceOwner {
 public:
  DeviceOwner() = default;
  DeviceOwner(const DeviceOwner&) = delete;
  DeviceOwner& operator=(const DeviceOwner&) = delete;
  ~DeviceOwner() { reset(VK_NULL_HANDLE); }
  VkDevice get() const { return device_; }
  void reset(VkDevice device) {
    if (device_ != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device_);
      vkDestroyDevice(device_, nullptr);
    }
    device_ = device;
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
};

bool isDepthFormat(VkFormat format);
VkImageAspectFlags aspectMask(VkFormat format);
// Bytes per texel for the formats the daemon offers (0 for others).
uint32_t texelSize(VkFormat format);
// Bytes of one image made with `info`: its texels over all mips, layers and samples (formats
// whose size is unknown, such as the depth-stencil ones, count as 16 bytes a texel, the largest
// offered). Drivers add alignment, so this is a floor of what the memory costs.
uint64_t imageBytes(const VkImageCreateInfo& info);
// Attachment layout an image of this format rests in while the app owns it.
VkImageLayout attachmentLayout(VkFormat format);

// The shared image's create info for a validated request. TRANSFER_SRC and the format's
// attachment usage are always added (the daemon copies out of the image; the frame path keeps it
// in the attachment layout while the application owns it).
VkImageCreateInfo sharedImageCreateInfo(const SwapchainRequest& request);

// Formats the daemon may offer, preferred first.
const std::vector<VkFormat>& candidateSwapchainFormats();

uint32_t findMemoryType(const VkPhysicalDeviceMemoryProperties& props, uint32_t typeBits, VkMemoryPropertyFlags wanted);

// Where an allocation landed: what an importer of exported memory must be told.
struct MemoryPlacement {
  VkDeviceSize size = 0;
  uint32_t typeIndex = 0;
};

// Allocates device-local memory for `image` and binds it; `exportOpaqueFd` makes it a dedicated,
// OPAQUE_FD-exportable allocation (the image must have been created for external memory).
// `placement`, when given, receives the allocation's size and memory type.
Result<Memory> bindDeviceLocalMemory(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkImage image,
                                     const char* what, bool exportOpaqueFd = false,
                                     MemoryPlacement* placement = nullptr);

// A color view of `image`'s first mip level and its first `layers` layers.
Result<ImageView> createImageView(VkDevice device, VkImage image, VkFormat format, VkImageViewType type,
                                  uint32_t layers);

// A buffer bound to its own allocation of a memory type with `memoryFlags`.
struct DeviceBuffer {
  Memory memory;  // declared first: freed after the buffer is destroyed
  Buffer buffer;
};
Result<DeviceBuffer> createBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize size,
                                  VkBufferUsageFlags usage, VkMemoryPropertyFlags memoryFlags);

// A host-visible, coherent buffer, mapped for its whole life (staging and readback).
struct HostBuffer {
  Memory memory;  // declared first: freed after the buffer is destroyed
  Buffer buffer;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};
Result<HostBuffer> createHostBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize size,
                                    VkBufferUsageFlags usage);

// A binary semaphore, or a timeline one starting at 0; exportable as OPAQUE_FD when asked.
Result<Semaphore> createSemaphore(VkDevice device, VkSemaphoreType type, bool exportOpaqueFd = false);
// Signals timeline `semaphore` to `value` from the host.
Status signalTimeline(VkDevice device, VkSemaphore semaphore, uint64_t value);

// Device extensions both ends need for sharing images (and, optionally, semaphores).
std::vector<const char*> requiredDeviceExtensions();
const char* semaphoreFdExtension();

bool deviceHasExtension(VkPhysicalDevice device, const char* name);

// The two Vulkan 1.1 physical-device queries, from the core (instances of version >= 1.1) or
// from their KHR extensions (version 1.0 instances, such as the ones OpenXR apps often create,
// which must then enable kQueryInstanceExtensions).
struct PhysicalDeviceQueries {
  PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
  PFN_vkGetPhysicalDeviceExternalSemaphoreProperties externalSemaphoreProperties = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;
  static PhysicalDeviceQueries core();
  // Null members where `instance` did not enable the extensions.
  static PhysicalDeviceQueries khr(VkInstance instance);
};
inline constexpr const char* kQueryInstanceExtensions[] = {VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME,
                                                           VK_KHR_EXTERNAL_MEMORY_CAPABILITIES_EXTENSION_NAME,
                                                           VK_KHR_EXTERNAL_SEMAPHORE_CAPABILITIES_EXTENSION_NAME};

DeviceFacts queryDeviceFacts(VkPhysicalDevice device,
                             const PhysicalDeviceQueries& queries = PhysicalDeviceQueries::core());

}  // namespace xrc::vk
