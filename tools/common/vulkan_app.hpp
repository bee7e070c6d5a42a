// A minimal Vulkan application context for the project's own clients (demo, bench, tests):
// instance + the daemon's physical device + a device with the extensions client-lib asks for.
#pragma once

#include <memory>
#include <string>

#include "xrc/client.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::tools {

class VulkanApp {
 public:
  // Picks the device the daemon reported in `system`.
  static Result<std::unique_ptr<VulkanApp>> create(const client::SystemDescription& system, const std::string& name);
  VulkanApp() = default;
  ~VulkanApp();

  client::VulkanBinding binding() const;
  VkDevice device() const { return device_.get(); }
  VkPhysicalDevice physical() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queueFamily() const { return family_; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }

 private:
  vk::InstanceOwner instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  bool timelineSemaphores_ = false;
  vk::DeviceOwner device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
};

}  // namespace xrc::tools
