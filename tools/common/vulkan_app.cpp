#include "vulkan_app.hpp"

namespace xrc::tools {

Result<std::unique_ptr<VulkanApp>> VulkanApp::create(const client::SystemDescription& system, const std::string& name) {
  auto app = std::make_unique<VulkanApp>();
  VkApplicationInfo appInfo{};
  appInfo.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  appInfo.pApplicationName = name.c_str();
  appInfo.apiVersion = VK_API_VERSION_1_2;
  const auto instanceExtensions = client::requiredInstanceExtensions();
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &appInfo;
  ici.enabledExtensionCount = uint32_t(instanceExtensions.size());
  ici.ppEnabledExtensionNames = instanceExtensions.data();
  VkInstance instance;
  if (auto s = vk::check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance"); !s) return s.error();
  app->instance_.reset(instance);

  app->physical_ = client::findDaemonDevice(instance, system);
  if (app->physical_ == VK_NULL_HANDLE) {
    return makeError(ErrorCode::deviceMismatch, "no Vulkan device here matches the daemon's '{}' ({})",
                     system.device.name, uuidToString(system.device.deviceUuid));
  }
  vkGetPhysicalDeviceMemoryProperties(app->physical_, &app->memory_);
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(app->physical_, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(app->physical_, &count, families.data());
  app->family_ = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) {
      app->family_ = i;
      break;
    }
  }
  if (app->family_ == UINT32_MAX) return makeError(ErrorCode::unsupported, "no graphics queue");
  const float priority = 1.f;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = app->family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  const auto extensions = client::requiredDeviceExtensions(instance, app->physical_);
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qi;
  dci.enabledExtensionCount = uint32_t(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  // Timeline semaphores where they can be shared with the daemon: the `timeline` sync mode.
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  timeline.timelineSemaphore = VK_TRUE;
  app->timelineSemaphores_ = client::timelineSemaphoresAvailable(instance, app->physical_);
  if (app->timelineSemaphores_) dci.pNext = &timeline;
  VkDevice device;
  if (auto s = vk::check(vkCreateDevice(app->physical_, &dci, nullptr, &device), "vkCreateDevice"); !s) {
    return s.error();
  }
  app->device_.reset(device);
  vkGetDeviceQueue(device, app->family_, 0, &app->queue_);
  return app;
}

VulkanApp::~VulkanApp() = default;

client::VulkanBinding VulkanApp::binding() const {
  return client::VulkanBinding{instance_.get(), physical_, device_.get(), family_, queue_, timelineSemaphores_};
}

}  // namespace xrc::tools
