#include "gpu_device.hpp"

#include <algorithm>

#include "../log.hpp"

namespace xrc::gpu {

namespace {
VkQueueGlobalPriorityKHR toVulkan(QueuePriority priority) {
  switch (priority) {
    case QueuePriority::low:
      return VK_QUEUE_GLOBAL_PRIORITY_LOW_KHR;
    case QueuePriority::medium:
      return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
    case QueuePriority::high:
      return VK_QUEUE_GLOBAL_PRIORITY_HIGH_KHR;
    case QueuePriority::realtime:
      return VK_QUEUE_GLOBAL_PRIORITY_REALTIME_KHR;
  }
  return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
}

// The extension to name, or null: KHR and EXT define the same structure and values.
const char* globalPriorityExtension(VkPhysicalDevice physical) {
  if (vk::deviceHasExtension(physical, VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME)) {
    return VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME;
  }
  if (vk::deviceHasExtension(physical, VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME)) {
    return VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME;
  }
  return nullptr;
}

// VK_EXT_host_image_copy where it can save a queue submission: on Mesa's llvmpipe (lavapipe, whose
// queue runs on a thread of its own that each submission wakes, docs/BENCHMARKS.md), with the
// feature and the extensions it depends on under Vulkan 1.2. Empty when not to be enabled, with
// the reason in `why`.
std::vector<const char*> hostCopyExtensions(VkPhysicalDevice physical, bool wanted, std::string& why) {
  if (!wanted) {
    why = "off (--host-copies=off)";
    return {};
  }
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &driver;
  vkGetPhysicalDeviceProperties2(physical, &props2);
  if (props2.properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
    why = "off (not a CPU device)";
    return {};
  }
  // The daemon's shared images get VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT, the clients' imports of
  // the same memory do not (an app's device cannot be made to enable the extension). The spec
  // asks a dedicated import for an identical image; what makes the two compatible is that
  // llvmpipe lays an image out the same whatever its usage (no tiling, no compression), so only
  // that driver is trusted with it (docs/SYNC.md, "Host mode").
  if (driver.driverID != VK_DRIVER_ID_MESA_LLVMPIPE) {
    why = "off (a CPU device other than Mesa's llvmpipe)";
    return {};
  }
  std::vector<const char*> extensions{VK_EXT_HOST_IMAGE_COPY_EXTENSION_NAME, VK_KHR_COPY_COMMANDS_2_EXTENSION_NAME,
                                      VK_KHR_FORMAT_FEATURE_FLAGS_2_EXTENSION_NAME};
  for (const char* ext : extensions) {
    if (!vk::deviceHasExtension(physical, ext)) {
      why = fmt::format("off (the device has no {})", ext);
      return {};
    }
  }
  VkPhysicalDeviceHostImageCopyFeaturesEXT hostCopy{};
  hostCopy.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_IMAGE_COPY_FEATURES_EXT;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &hostCopy;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!hostCopy.hostImageCopy) {
    why = "off (no hostImageCopy feature)";
    return {};
  }
  return extensions;
}

std::string layoutList(const std::vector<VkImageLayout>& layouts) {
  std::string out;
  for (VkImageLayout l : layouts) out += fmt::format("{}{}", out.empty() ? "" : ",", int(l));
  return out;
}
}  // namespace

Result<std::unique_ptr<GpuDevice>> GpuDevice::create(const DeviceOptions& options) {
  auto device = std::make_unique<GpuDevice>();
  if (auto s = device->init(options); !s) return s.error();
  return device;
}

GpuDevice::~GpuDevice() = default;

std::vector<uint32_t> GpuDevice::queueFamilies() const {
  if (copyQueue_->family == graphicsQueue_->family) return {copyQueue_->family};
  return {copyQueue_->family, graphicsQueue_->family};
}

Status GpuDevice::init(const DeviceOptions& options) {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "xr-compositord";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  ici.enabledExtensionCount = uint32_t(options.instanceExtensions.size());
  ici.ppEnabledExtensionNames = options.instanceExtensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  if (options.factory != nullptr) {
    auto created = options.factory->createInstance(ici);
    if (!created) return created.error();
    instance = created.value();
  } else if (auto s = vk::check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance"); !s) {
    return s;
  }
  instance_.reset(instance);

  uint32_t count = 0;
  std::vector<VkPhysicalDevice> devices;
  if (options.factory != nullptr) {
    auto given = options.factory->physicalDevice(instance);
    if (!given) return given.error();
    devices.push_back(given.value());
  } else {
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    devices.resize(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
  }
  std::string seen;
  for (VkPhysicalDevice candidate : devices) {
    DeviceFacts facts = vk::queryDeviceFacts(candidate);
    seen += fmt::format(" '{}' ({})", facts.name, uuidToString(facts.deviceUuid));
    if (!options.deviceUuid.empty() && uuidToString(facts.deviceUuid) != options.deviceUuid) continue;
    bool ok = true;
    for (const char* ext : vk::requiredDeviceExtensions()) ok = ok && vk::deviceHasExtension(candidate, ext);
    if (!options.instanceExtensions.empty())
      ok = ok && vk::deviceHasExtension(candidate, VK_KHR_SWAPCHAIN_EXTENSION_NAME);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(candidate, &props);
    if (!ok || props.apiVersion < VK_API_VERSION_1_2) continue;
    physical_ = candidate;
    facts_ = facts;
    timestampPeriod_ = props.limits.timestampPeriod;
    break;
  }
  if (physical_ == VK_NULL_HANDLE) {
    return makeError(ErrorCode::unsupported, "no Vulkan 1.2 device with VK_KHR_external_memory_fd{}{}; devices:{}",
                     options.instanceExtensions.empty() ? "" : " and VK_KHR_swapchain",
                     options.deviceUuid.empty() ? "" : " and UUID " + options.deviceUuid,
                     seen.empty() ? " none" : seen);
  }
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  // Queue families: graphics for composition; for copies prefer compute without graphics.
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, families.data());
  uint32_t graphicsFamily = UINT32_MAX, computeFamily = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    const auto flags = families[i].queueFlags;
    if ((flags & VK_QUEUE_GRAPHICS_BIT) && graphicsFamily == UINT32_MAX) graphicsFamily = i;
    if ((flags & VK_QUEUE_COMPUTE_BIT) && !(flags & VK_QUEUE_GRAPHICS_BIT) && computeFamily == UINT32_MAX) {
      computeFamily = i;
    }
  }
  if (graphicsFamily == UINT32_MAX) return makeError(ErrorCode::unsupported, "device has no graphics queue");
  const bool separateCopyFamily = computeFamily != UINT32_MAX;
  const uint32_t copyFamily = separateCopyFamily ? computeFamily : graphicsFamily;
  // Same family: a second queue of it when there is one, else share the single queue.
  const bool separateCopyQueue = separateCopyFamily || families[graphicsFamily].queueCount > 1;
  copyTimestamps_ = families[copyFamily].timestampValidBits > 0;

  const float priorities[2] = {1.f, 1.f};
  std::vector<VkDeviceQueueCreateInfo> queueInfos;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = graphicsFamily;
  qi.queueCount = (!separateCopyFamily && separateCopyQueue) ? 2 : 1;
  qi.pQueuePriorities = priorities;
  queueInfos.push_back(qi);
  if (separateCopyFamily) {
    qi.queueFamilyIndex = computeFamily;
    qi.queueCount = 1;
    queueInfos.push_back(qi);
  }

  std::vector<const char*> extensions = vk::requiredDeviceExtensions();
  if (facts_.externalSemaphoreFd) extensions.push_back(vk::semaphoreFdExtension());
  const char* priorityExtension = globalPriorityExtension(physical_);
  if (priorityExtension != nullptr) extensions.push_back(priorityExtension);
  if (!options.instanceExtensions.empty()) extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  std::string hostCopyState;
  const std::vector<const char*> hostCopyExts = hostCopyExtensions(physical_, options.hostCopies, hostCopyState);
  hostCopies_ = !hostCopyExts.empty();
  hostCopyMaxBytes_ = options.hostCopyMaxBytes;
  for (const char* ext : hostCopyExts) {
    if (std::none_of(extensions.begin(), extensions.end(),
                     [&](const char* e) { return std::string_view(e) == std::string_view(ext); })) {
      extensions.push_back(ext);
    }
  }

  VkPhysicalDeviceHostImageCopyFeaturesEXT hostCopyFeatures{};
  hostCopyFeatures.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_IMAGE_COPY_FEATURES_EXT;
  hostCopyFeatures.hostImageCopy = VK_TRUE;
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.pNext = hostCopies_ ? &hostCopyFeatures : nullptr;
  features12.timelineSemaphore = VK_TRUE;
  features12.hostQueryReset = VK_TRUE;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &features12;
  dci.enabledExtensionCount = uint32_t(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  auto createDevice = [&]() -> Status {
    dci.queueCreateInfoCount = uint32_t(queueInfos.size());
    dci.pQueueCreateInfos = queueInfos.data();
    if (options.factory != nullptr) {
      auto created = options.factory->createDevice(physical_, dci);
      if (!created) return created.error();
      device = created.value();
      return {};
    }
    return vk::check(vkCreateDevice(physical_, &dci, nullptr, &device), "vkCreateDevice");
  };
  if (priorityExtension == nullptr) {
    if (auto s = createDevice(); !s) return s;
  } else {
    // Highest first; a refusal (VK_ERROR_NOT_PERMITTED, or INITIALIZATION_FAILED from drivers
    // that say it so) moves one step down. Medium is Vulkan's default: its failure is real.
    VkDeviceQueueGlobalPriorityCreateInfoKHR priorityInfo{};
    priorityInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_KHR;
    for (auto& q : queueInfos) q.pNext = &priorityInfo;
    for (QueuePriority p = options.maxQueuePriority;; p = QueuePriority(int(p) - 1)) {
      priorityInfo.globalPriority = toVulkan(p);
      Status s = createDevice();
      if (s) {
        queuePriority_ = p;
        break;
      }
      if (p <= QueuePriority::medium) return s;
      log::debug("GPU: queue priority {} refused ({}); trying lower", toString(p), s.error().message);
    }
  }
  device_.reset(device);

  ownedGraphicsQueue_ = std::make_unique<Queue>();
  ownedGraphicsQueue_->family = graphicsFamily;
  vkGetDeviceQueue(device, graphicsFamily, 0, &ownedGraphicsQueue_->queue);
  graphicsQueue_ = ownedGraphicsQueue_.get();
  if (separateCopyQueue) {
    ownedCopyQueue_ = std::make_unique<Queue>();
    ownedCopyQueue_->family = copyFamily;
    vkGetDeviceQueue(device, copyFamily, separateCopyFamily ? 0 : 1, &ownedCopyQueue_->queue);
    copyQueue_ = ownedCopyQueue_.get();
  } else {
    copyQueue_ = graphicsQueue_;
  }

  getMemoryFd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device, "vkGetMemoryFdKHR"));
  if (facts_.externalSemaphoreFd) {
    getSemaphoreFd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(device, "vkGetSemaphoreFdKHR"));
  }
  queryFormats();
  if (hostCopies_) {
    copyImageToImage =
        reinterpret_cast<PFN_vkCopyImageToImageEXT>(vkGetDeviceProcAddr(device, "vkCopyImageToImageEXT"));
    transitionImageLayout =
        reinterpret_cast<PFN_vkTransitionImageLayoutEXT>(vkGetDeviceProcAddr(device, "vkTransitionImageLayoutEXT"));
    VkPhysicalDeviceHostImageCopyPropertiesEXT hostCopy{};
    hostCopy.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_IMAGE_COPY_PROPERTIES_EXT;
    VkPhysicalDeviceProperties2 props2{};
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &hostCopy;
    vkGetPhysicalDeviceProperties2(physical_, &props2);
    hostCopySrcLayouts_.resize(hostCopy.copySrcLayoutCount);
    hostCopyDstLayouts_.resize(hostCopy.copyDstLayoutCount);
    hostCopy.pCopySrcLayouts = hostCopySrcLayouts_.data();
    hostCopy.pCopyDstLayouts = hostCopyDstLayouts_.data();
    vkGetPhysicalDeviceProperties2(physical_, &props2);
    hostCopySrcLayouts_.resize(hostCopy.copySrcLayoutCount);
    hostCopyDstLayouts_.resize(hostCopy.copyDstLayoutCount);
    if (copyImageToImage == nullptr || transitionImageLayout == nullptr) {
      hostCopies_ = false;
      hostCopyState = "off (the device's host image copy commands are missing)";
    } else {
      hostCopyState =
          fmt::format("on (VK_EXT_host_image_copy; images up to {} KiB; copy layouts src [{}] dst [{}])",
                      hostCopyMaxBytes_ >> 10, layoutList(hostCopySrcLayouts_), layoutList(hostCopyDstLayouts_));
    }
  }
  log::info("GPU: host-mode copies on the host: {}", hostCopyState);
  log::info(
      "GPU: '{}' device {} driver {}; copy queue family {}{}, graphics family {}; external "
      "semaphores: {}; queue priority {}",
      facts_.name, uuidToString(facts_.deviceUuid), uuidToString(facts_.driverUuid), copyFamily,
      separateCopyFamily ? " (compute-only)" : "", graphicsFamily, facts_.externalSemaphoreFd ? "yes" : "no",
      priorityExtension != nullptr ? toString(queuePriority_) : "medium (no global priority extension)");
  return {};
}

bool GpuDevice::hostCopySrcLayout(VkImageLayout layout) const {
  return std::find(hostCopySrcLayouts_.begin(), hostCopySrcLayouts_.end(), layout) != hostCopySrcLayouts_.end();
}

bool GpuDevice::hostCopyDstLayout(VkImageLayout layout) const {
  return std::find(hostCopyDstLayouts_.begin(), hostCopyDstLayouts_.end(), layout) != hostCopyDstLayouts_.end();
}

bool GpuDevice::hostTransferUsable(const VkImageCreateInfo& image, bool exportOpaqueFd) const {
  if (!hostCopies_ || image.samples != VK_SAMPLE_COUNT_1_BIT || vk::imageBytes(image) > hostCopyMaxBytes_) return false;
  VkFormatProperties3 features3{};
  features3.sType = VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3;
  VkFormatProperties2 features{};
  features.sType = VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2;
  features.pNext = &features3;
  vkGetPhysicalDeviceFormatProperties2(physical_, image.format, &features);
  const VkFormatFeatureFlags2 tilingFeatures =
      image.tiling == VK_IMAGE_TILING_LINEAR ? features3.linearTilingFeatures : features3.optimalTilingFeatures;
  if (!(tilingFeatures & VK_FORMAT_FEATURE_2_HOST_IMAGE_TRANSFER_BIT_EXT)) return false;
  VkPhysicalDeviceExternalImageFormatInfo extInfo{};
  extInfo.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO;
  extInfo.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkPhysicalDeviceImageFormatInfo2 info{};
  info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2;
  info.pNext = exportOpaqueFd ? &extInfo : nullptr;
  info.format = image.format;
  info.type = image.imageType;
  info.tiling = image.tiling;
  info.usage = image.usage | VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT;
  info.flags = image.flags;
  VkExternalImageFormatProperties external{};
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
  VkImageFormatProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
  props.pNext = exportOpaqueFd ? &external : nullptr;
  if (vkGetPhysicalDeviceImageFormatProperties2(physical_, &info, &props) != VK_SUCCESS) return false;
  const VkImageFormatProperties& limits = props.imageFormatProperties;
  if (limits.maxArrayLayers < image.arrayLayers || limits.maxMipLevels < image.mipLevels ||
      limits.maxExtent.width < image.extent.width || limits.maxExtent.height < image.extent.height) {
    return false;
  }
  // Still exported and imported as the shared image is without the usage.
  const VkExternalMemoryFeatureFlags shareable =
      VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
  return !exportOpaqueFd || (external.externalMemoryProperties.externalMemoryFeatures & shareable) == shareable;
}

void GpuDevice::queryFormats() {
  for (VkFormat format : vk::candidateSwapchainFormats()) {
    const bool depth = vk::isDepthFormat(format);
    VkPhysicalDeviceExternalImageFormatInfo extInfo{};
    extInfo.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO;
    extInfo.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkPhysicalDeviceImageFormatInfo2 info{};
    info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2;
    info.pNext = &extInfo;
    info.format = format;
    info.type = VK_IMAGE_TYPE_2D;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                 (depth ? VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT);
    VkExternalImageFormatProperties extProps{};
    extProps.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
    VkImageFormatProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
    props.pNext = &extProps;
    if (vkGetPhysicalDeviceImageFormatProperties2(physical_, &info, &props) != VK_SUCCESS) continue;
    const auto features = extProps.externalMemoryProperties.externalMemoryFeatures;
    if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) ||
        !(features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT)) {
      continue;
    }
    formats_.push_back(format);
    if (depth) depthFormats_.push_back(format);
  }
}

}  // namespace xrc::gpu
