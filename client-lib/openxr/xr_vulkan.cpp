// XR_KHR_vulkan_enable and XR_KHR_vulkan_enable2: the app's Vulkan instance and device must be on
// the daemon's physical device and carry what importing the shared images (and semaphores) needs.
#include <algorithm>
#include <cstring>

#include "entry_points.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::openxr {

namespace {

std::string joined(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) {
    if (!out.empty()) out += ' ';
    out += n;
  }
  return out;
}

// The app's list plus ours, without duplicates.
std::vector<const char*> withExtensions(uint32_t count, const char* const* names, const std::vector<const char*>& add) {
  std::vector<const char*> out(names, names + count);
  for (const char* extra : add) {
    if (std::none_of(out.begin(), out.end(), [&](const char* n) { return std::strcmp(n, extra) == 0; })) {
      out.push_back(extra);
    }
  }
  return out;
}

XrResult requirements(XrInstance handle, XrSystemId systemId, XrGraphicsRequirementsVulkanKHR* out) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  if (!hasType(out, XR_TYPE_GRAPHICS_REQUIREMENTS_VULKAN_KHR)) return XR_ERROR_VALIDATION_FAILURE;
  // Vulkan 1.0 with the extensions we name works; newest tested: 1.3.
  out->minApiVersionSupported = XR_MAKE_VERSION(1, 0, 0);
  out->maxApiVersionSupported = XR_MAKE_VERSION(1, 3, 0);
  Lock lock(instance->mutex);
  instance->graphicsRequirementsQueried = true;
  return XR_SUCCESS;
}

// Finds the daemon's device among `vkInstance`'s and remembers it for device creation.
XrResult graphicsDevice(Instance& instance, VkInstance vkInstance, VkPhysicalDevice* out) {
  if (vkInstance == VK_NULL_HANDLE || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (vk::PhysicalDeviceQueries::khr(vkInstance).properties2 == nullptr) {
    logError("xrGetVulkanGraphicsDeviceKHR",
             "the VkInstance lacks VK_KHR_get_physical_device_properties2 (see "
             "xrGetVulkanInstanceExtensionsKHR)");
    return XR_ERROR_VALIDATION_FAILURE;
  }
  VkPhysicalDevice device = client::findDaemonDevice(vkInstance, instance.system);
  if (device == VK_NULL_HANDLE) {
    logError("xrGetVulkanGraphicsDeviceKHR",
             "no Vulkan device of this instance is the daemon's ('" + instance.system.device.name + "')");
    return XR_ERROR_RUNTIME_FAILURE;
  }
  Lock lock(instance.mutex);
  instance.appVkInstance = vkInstance;
  instance.returnedPhysicalDevice = device;
  *out = device;
  return XR_SUCCESS;
}

}  // namespace

XrResult XRAPI_CALL GetVulkanGraphicsRequirementsKHR(XrInstance handle, XrSystemId systemId,
                                                     XrGraphicsRequirementsVulkanKHR* out) {
  return requirements(handle, systemId, out);
}

XrResult XRAPI_CALL GetVulkanGraphicsRequirements2KHR(XrInstance handle, XrSystemId systemId,
                                                      XrGraphicsRequirementsVulkanKHR* out) {
  return requirements(handle, systemId, out);
}

XrResult XRAPI_CALL GetVulkanInstanceExtensionsKHR(XrInstance handle, XrSystemId systemId, uint32_t capacity,
                                                   uint32_t* count, char* out) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  return enumerateString(joined(client::requiredInstanceExtensions()), capacity, count, out);
}

XrResult XRAPI_CALL GetVulkanDeviceExtensionsKHR(XrInstance handle, XrSystemId systemId, uint32_t capacity,
                                                 uint32_t* count, char* out) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  // The list depends on the device (semaphore sharing is optional), which the app has not chosen
  // yet: look at the daemon's device through a short-lived instance of our own.
  const auto instanceExtensions = client::requiredInstanceExtensions();
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_0;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  ici.enabledExtensionCount = uint32_t(instanceExtensions.size());
  ici.ppEnabledExtensionNames = instanceExtensions.data();
  VkInstance probe = VK_NULL_HANDLE;
  if (vkCreateInstance(&ici, nullptr, &probe) != VK_SUCCESS) return XR_ERROR_RUNTIME_FAILURE;
  std::vector<const char*> extensions;
  VkPhysicalDevice device = client::findDaemonDevice(probe, instance->system);
  if (device != VK_NULL_HANDLE) extensions = client::requiredDeviceExtensions(probe, device);
  vkDestroyInstance(probe, nullptr);
  if (device == VK_NULL_HANDLE) {
    logError("xrGetVulkanDeviceExtensionsKHR", "the daemon's Vulkan device is not visible to this process");
    return XR_ERROR_RUNTIME_FAILURE;
  }
  return enumerateString(joined(extensions), capacity, count, out);
}

XrResult XRAPI_CALL GetVulkanGraphicsDeviceKHR(XrInstance handle, XrSystemId systemId, VkInstance vkInstance,
                                               VkPhysicalDevice* out) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  return graphicsDevice(*instance, vkInstance, out);
}

XrResult XRAPI_CALL GetVulkanGraphicsDevice2KHR(XrInstance handle, const XrVulkanGraphicsDeviceGetInfoKHR* info,
                                                VkPhysicalDevice* out) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_VULKAN_GRAPHICS_DEVICE_GET_INFO_KHR)) return XR_ERROR_VALIDATION_FAILURE;
  if (info->systemId != kSystemId) return XR_ERROR_SYSTEM_INVALID;
  return graphicsDevice(*instance, info->vulkanInstance, out);
}

XrResult XRAPI_CALL CreateVulkanInstanceKHR(XrInstance handle, const XrVulkanInstanceCreateInfoKHR* info,
                                            VkInstance* vkInstance, VkResult* vkResult) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_VULKAN_INSTANCE_CREATE_INFO_KHR) || vkInstance == nullptr || vkResult == nullptr ||
      info->pfnGetInstanceProcAddr == nullptr || info->vulkanCreateInfo == nullptr || info->createFlags != 0) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->systemId != kSystemId) return XR_ERROR_SYSTEM_INVALID;
  const VkInstanceCreateInfo& appInfo = *info->vulkanCreateInfo;
  const auto extensions = withExtensions(appInfo.enabledExtensionCount, appInfo.ppEnabledExtensionNames,
                                         client::requiredInstanceExtensions());
  VkInstanceCreateInfo ici = appInfo;
  ici.enabledExtensionCount = uint32_t(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  auto create =
      reinterpret_cast<PFN_vkCreateInstance>(info->pfnGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance"));
  if (create == nullptr) return XR_ERROR_RUNTIME_FAILURE;
  *vkResult = create(&ici, info->vulkanAllocator, vkInstance);
  return XR_SUCCESS;  // the Vulkan outcome is in *vkResult, as the extension specifies
}

XrResult XRAPI_CALL CreateVulkanDeviceKHR(XrInstance handle, const XrVulkanDeviceCreateInfoKHR* info,
                                          VkDevice* vkDevice, VkResult* vkResult) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_VULKAN_DEVICE_CREATE_INFO_KHR) || vkDevice == nullptr || vkResult == nullptr ||
      info->pfnGetInstanceProcAddr == nullptr || info->vulkanCreateInfo == nullptr || info->createFlags != 0) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->systemId != kSystemId) return XR_ERROR_SYSTEM_INVALID;
  VkInstance vkInstance = VK_NULL_HANDLE;
  {
    Lock lock(instance->mutex);
    if (info->vulkanPhysicalDevice == VK_NULL_HANDLE ||
        info->vulkanPhysicalDevice != instance->returnedPhysicalDevice) {
      logError("xrCreateVulkanDeviceKHR", "the physical device is not the one xrGetVulkanGraphicsDevice2KHR returned");
      return XR_ERROR_VALIDATION_FAILURE;
    }
    vkInstance = instance->appVkInstance;
  }
  const VkDeviceCreateInfo& appInfo = *info->vulkanCreateInfo;
  const auto extensions = withExtensions(appInfo.enabledExtensionCount, appInfo.ppEnabledExtensionNames,
                                         client::requiredDeviceExtensions(vkInstance, info->vulkanPhysicalDevice));
  VkDeviceCreateInfo dci = appInfo;
  dci.enabledExtensionCount = uint32_t(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  // Timeline semaphores, for the `timeline` sync mode: added at the head of the app's chain,
  // unless the app's chain already has a structure that says whether they are on (a chain may
  // not name that feature twice, and the app's own structures are not ours to change).
  bool chainNamesTimeline = false, chainEnablesTimeline = false;
  for (auto* p = static_cast<const VkBaseInStructure*>(appInfo.pNext); p != nullptr; p = p->pNext) {
    if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
      chainNamesTimeline = true;
      chainEnablesTimeline =
          chainEnablesTimeline || reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(p)->timelineSemaphore;
    } else if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES) {
      chainNamesTimeline = true;
      chainEnablesTimeline = chainEnablesTimeline ||
                             reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(p)->timelineSemaphore;
    }
  }
  const bool timelineAvailable = client::timelineSemaphoresAvailable(vkInstance, info->vulkanPhysicalDevice);
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  timeline.pNext = const_cast<void*>(appInfo.pNext);
  timeline.timelineSemaphore = VK_TRUE;
  if (timelineAvailable && !chainNamesTimeline) dci.pNext = &timeline;
  auto create = reinterpret_cast<PFN_vkCreateDevice>(info->pfnGetInstanceProcAddr(vkInstance, "vkCreateDevice"));
  if (create == nullptr) return XR_ERROR_RUNTIME_FAILURE;
  *vkResult = create(info->vulkanPhysicalDevice, &dci, info->vulkanAllocator, vkDevice);
  if (*vkResult == VK_SUCCESS && timelineAvailable && (chainEnablesTimeline || !chainNamesTimeline)) {
    Lock lock(instance->mutex);
    instance->timelineDevices.insert(*vkDevice);
  }
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
