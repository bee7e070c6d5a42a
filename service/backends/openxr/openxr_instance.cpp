#include "openxr_instance.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "../../log.hpp"

namespace xrc {

namespace oxr {

std::string resultName(XrInstance instance, XrResult result) {
  char name[XR_MAX_RESULT_STRING_SIZE] = {};
  if (instance == XR_NULL_HANDLE || xrResultToString(instance, result, name) != XR_SUCCESS) {
    return fmt::format("XrResult {}", int(result));
  }
  return name;
}

Status check(XrInstance instance, XrResult result, const char* what) {
  if (XR_SUCCEEDED(result)) return {};
  ErrorCode code = ErrorCode::internal;
  switch (result) {
    case XR_TIMEOUT_EXPIRED:
      code = ErrorCode::timeout;
      break;
    case XR_ERROR_EXTENSION_NOT_PRESENT:
    case XR_ERROR_FORM_FACTOR_UNSUPPORTED:
    case XR_ERROR_FORM_FACTOR_UNAVAILABLE:
    case XR_ERROR_SWAPCHAIN_FORMAT_UNSUPPORTED:
    case XR_ERROR_RUNTIME_UNAVAILABLE:
    case XR_ERROR_FEATURE_UNSUPPORTED:
      code = ErrorCode::unsupported;
      break;
    default:
      break;
  }
  return makeError(code, "{}: {}", what, resultName(instance, result));
}

}  // namespace oxr

namespace {

constexpr const char* kRequiredExtensions[] = {XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME,
                                               XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME};

}  // namespace

Result<std::unique_ptr<OpenXrInstance>> OpenXrInstance::create(bool overlay) {
  auto instance = std::make_unique<OpenXrInstance>();
  if (auto s = instance->init(overlay); !s) return s.error();
  return instance;
}

template <typename Pfn>
Status OpenXrInstance::load(const char* name, Pfn& out) {
  PFN_xrVoidFunction function = nullptr;
  if (auto s = check(xrGetInstanceProcAddr(instance_.get(), name, &function), name); !s) return s;
  out = reinterpret_cast<Pfn>(function);
  return {};
}

Status OpenXrInstance::init(bool overlay) {
  uint32_t count = 0;
  if (auto s = oxr::check(XR_NULL_HANDLE, xrEnumerateInstanceExtensionProperties(nullptr, 0, &count, nullptr),
                          "xrEnumerateInstanceExtensionProperties (is an OpenXR runtime active?)");
      !s) {
    return s;
  }
  std::vector<XrExtensionProperties> available(count, oxr::make<XrExtensionProperties>(XR_TYPE_EXTENSION_PROPERTIES));
  xrEnumerateInstanceExtensionProperties(nullptr, count, &count, available.data());
  for (const char* needed : kRequiredExtensions) {
    if (std::none_of(available.begin(), available.end(),
                     [&](const XrExtensionProperties& e) { return std::strcmp(e.extensionName, needed) == 0; })) {
      return makeError(ErrorCode::unsupported, "the OpenXR runtime lacks {}", needed);
    }
  }

  std::vector<const char*> enabled(std::begin(kRequiredExtensions), std::end(kRequiredExtensions));
  // Optional: the client layers and layer data the runtime takes are forwarded as they are (the
  // rest is left out of the runtime's frame, see docs/OPERATIONS.md), and its visibility masks
  // reach the clients.
  const std::pair<const char*, bool*> optional[] = {
      {XR_KHR_COMPOSITION_LAYER_DEPTH_EXTENSION_NAME, &layerExtensions_.depth},
      {XR_KHR_COMPOSITION_LAYER_CYLINDER_EXTENSION_NAME, &layerExtensions_.cylinder},
      {XR_KHR_COMPOSITION_LAYER_EQUIRECT_EXTENSION_NAME, &layerExtensions_.equirect},
      {XR_KHR_COMPOSITION_LAYER_EQUIRECT2_EXTENSION_NAME, &layerExtensions_.equirect2},
      {XR_KHR_COMPOSITION_LAYER_CUBE_EXTENSION_NAME, &layerExtensions_.cube},
      {XR_KHR_COMPOSITION_LAYER_COLOR_SCALE_BIAS_EXTENSION_NAME, &layerExtensions_.colorScaleBias},
      {XR_KHR_VISIBILITY_MASK_EXTENSION_NAME, &visibilityMask_},
  };
  for (const auto& [name, flag] : optional) {
    if (std::any_of(available.begin(), available.end(), [name = name](const XrExtensionProperties& e) {
          return std::strcmp(e.extensionName, name) == 0;
        })) {
      enabled.push_back(name);
      *flag = true;
    }
  }
  if (overlay) {
    if (std::none_of(available.begin(), available.end(), [](const XrExtensionProperties& e) {
          return std::strcmp(e.extensionName, XR_EXTX_OVERLAY_EXTENSION_NAME) == 0;
        })) {
      return makeError(ErrorCode::unsupported, "--openxr-overlay: the OpenXR runtime lacks {}",
                       XR_EXTX_OVERLAY_EXTENSION_NAME);
    }
    enabled.push_back(XR_EXTX_OVERLAY_EXTENSION_NAME);
    overlay_ = true;
  }

  auto info = oxr::make<XrInstanceCreateInfo>(XR_TYPE_INSTANCE_CREATE_INFO);
  std::strncpy(info.applicationInfo.applicationName, "xr-compositord", XR_MAX_APPLICATION_NAME_SIZE - 1);
  info.applicationInfo.applicationVersion = 1;
  std::strncpy(info.applicationInfo.engineName, "xr-compositor", XR_MAX_ENGINE_NAME_SIZE - 1);
  info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
  info.enabledExtensionCount = uint32_t(enabled.size());
  info.enabledExtensionNames = enabled.data();
  XrInstance instance = XR_NULL_HANDLE;
  if (auto s = oxr::check(XR_NULL_HANDLE, xrCreateInstance(&info, &instance), "xrCreateInstance"); !s) return s;
  instance_ = oxr::InstanceOwner(instance);

  auto properties = oxr::make<XrInstanceProperties>(XR_TYPE_INSTANCE_PROPERTIES);
  if (auto s = check(xrGetInstanceProperties(instance, &properties), "xrGetInstanceProperties"); !s) return s;
  runtimeName_ = fmt::format("{} {}.{}.{}", properties.runtimeName, XR_VERSION_MAJOR(properties.runtimeVersion),
                             XR_VERSION_MINOR(properties.runtimeVersion), XR_VERSION_PATCH(properties.runtimeVersion));

  auto systemInfo = oxr::make<XrSystemGetInfo>(XR_TYPE_SYSTEM_GET_INFO);
  systemInfo.formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY;
  if (auto s = check(xrGetSystem(instance, &systemInfo, &system_), "xrGetSystem(HMD)"); !s) return s;
  auto systemProperties = oxr::make<XrSystemProperties>(XR_TYPE_SYSTEM_PROPERTIES);
  if (auto s = check(xrGetSystemProperties(instance, system_, &systemProperties), "xrGetSystemProperties"); !s) {
    return s;
  }
  systemName_ = systemProperties.systemName;
  maxLayerCount_ = systemProperties.graphicsProperties.maxLayerCount;

  if (auto s = load("xrGetVulkanGraphicsRequirements2KHR", getRequirements_); !s) return s;
  if (auto s = load("xrCreateVulkanInstanceKHR", createVkInstance_); !s) return s;
  if (auto s = load("xrGetVulkanGraphicsDevice2KHR", getVkDevice_); !s) return s;
  if (auto s = load("xrCreateVulkanDeviceKHR", createVkDevice_); !s) return s;
  if (auto s = load("xrConvertTimespecTimeToTimeKHR", toXrTime_); !s) return s;
  if (auto s = load("xrConvertTimeToTimespecTimeKHR", toTimespec_); !s) return s;
  if (visibilityMask_) {
    if (auto s = load("xrGetVisibilityMaskKHR", getVisibilityMask_); !s) return s;
  }

  // Required before a session may be created; the daemon needs Vulkan 1.2 (timeline semaphores).
  auto requirements = oxr::make<XrGraphicsRequirementsVulkan2KHR>(XR_TYPE_GRAPHICS_REQUIREMENTS_VULKAN2_KHR);
  if (auto s = check(getRequirements_(instance, system_, &requirements), "xrGetVulkanGraphicsRequirements2KHR"); !s) {
    return s;
  }
  if (XR_VERSION_MAJOR(requirements.maxApiVersionSupported) == 1 &&
      XR_VERSION_MINOR(requirements.maxApiVersionSupported) < 2) {
    return makeError(ErrorCode::unsupported, "the OpenXR runtime supports Vulkan up to {}.{}; the daemon needs 1.2",
                     XR_VERSION_MAJOR(requirements.maxApiVersionSupported),
                     XR_VERSION_MINOR(requirements.maxApiVersionSupported));
  }
  log::info("OpenXR runtime '{}', system '{}' (at most {} layers per frame)", runtimeName_, systemName_,
            maxLayerCount_);
  return {};
}

Result<VkInstance> OpenXrInstance::createInstance(const VkInstanceCreateInfo& info) {
  auto create = oxr::make<XrVulkanInstanceCreateInfoKHR>(XR_TYPE_VULKAN_INSTANCE_CREATE_INFO_KHR);
  create.systemId = system_;
  create.pfnGetInstanceProcAddr = &vkGetInstanceProcAddr;
  create.vulkanCreateInfo = &info;
  VkInstance instance = VK_NULL_HANDLE;
  VkResult vkResult = VK_SUCCESS;
  if (auto s = check(createVkInstance_(instance_.get(), &create, &instance, &vkResult), "xrCreateVulkanInstanceKHR");
      !s) {
    return s.error();
  }
  if (auto s = vk::check(vkResult, "vkCreateInstance (through xrCreateVulkanInstanceKHR)"); !s) return s.error();
  return instance;
}

Result<VkPhysicalDevice> OpenXrInstance::physicalDevice(VkInstance instance) {
  auto get = oxr::make<XrVulkanGraphicsDeviceGetInfoKHR>(XR_TYPE_VULKAN_GRAPHICS_DEVICE_GET_INFO_KHR);
  get.systemId = system_;
  get.vulkanInstance = instance;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  if (auto s = check(getVkDevice_(instance_.get(), &get, &physical), "xrGetVulkanGraphicsDevice2KHR"); !s) {
    return s.error();
  }
  return physical;
}

Result<VkDevice> OpenXrInstance::createDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo& info) {
  auto create = oxr::make<XrVulkanDeviceCreateInfoKHR>(XR_TYPE_VULKAN_DEVICE_CREATE_INFO_KHR);
  create.systemId = system_;
  create.pfnGetInstanceProcAddr = &vkGetInstanceProcAddr;
  create.vulkanPhysicalDevice = physical;
  create.vulkanCreateInfo = &info;
  VkDevice device = VK_NULL_HANDLE;
  VkResult vkResult = VK_SUCCESS;
  if (auto s = check(createVkDevice_(instance_.get(), &create, &device, &vkResult), "xrCreateVulkanDeviceKHR"); !s) {
    return s.error();
  }
  if (auto s = vk::check(vkResult, "vkCreateDevice (through xrCreateVulkanDeviceKHR)"); !s) return s.error();
  return device;
}

Status OpenXrInstance::adoptVulkan(VkInstance instance, VkPhysicalDevice physical) {
  auto named = physicalDevice(instance);
  if (!named) return named.error();
  if (named.value() != physical) {
    return makeError(ErrorCode::deviceMismatch,
                     "the OpenXR runtime now wants another Vulkan device than the one the daemon runs on");
  }
  return {};
}

Result<int64_t> OpenXrInstance::toMonotonicNs(XrTime time) const {
  timespec ts{};
  if (auto s = check(toTimespec_(instance_.get(), time, &ts), "xrConvertTimeToTimespecTimeKHR"); !s) {
    return s.error();
  }
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Result<XrTime> OpenXrInstance::toXrTime(int64_t monotonicNs) const {
  timespec ts{};
  ts.tv_sec = time_t(monotonicNs / 1000000000);
  ts.tv_nsec = long(monotonicNs % 1000000000);
  XrTime time = 0;
  if (auto s = check(toXrTime_(instance_.get(), &ts, &time), "xrConvertTimespecTimeToTimeKHR"); !s) return s.error();
  return time;
}

Result<VisibilityMask> OpenXrInstance::visibilityMaskOf(XrSession session, uint32_t view,
                                                        XrVisibilityMaskTypeKHR type) const {
  if (getVisibilityMask_ == nullptr) return makeError(ErrorCode::unsupported, "XR_KHR_visibility_mask is not enabled");
  auto mask = oxr::make<XrVisibilityMaskKHR>(XR_TYPE_VISIBILITY_MASK_KHR);
  if (auto s = check(getVisibilityMask_(session, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, view, type, &mask),
                     "xrGetVisibilityMaskKHR");
      !s) {
    return s.error();
  }
  if (mask.vertexCountOutput > kMaxVisibilityMaskVertices || mask.indexCountOutput > 3 * kMaxVisibilityMaskVertices) {
    return makeError(ErrorCode::exhausted,
                     "the runtime's visibility mask has {} vertices, {} indices (at most {} taken)",
                     mask.vertexCountOutput, mask.indexCountOutput, kMaxVisibilityMaskVertices);
  }
  std::vector<XrVector2f> vertices(mask.vertexCountOutput);
  VisibilityMask out;
  out.type = uint32_t(type);
  out.indices.resize(mask.indexCountOutput);
  mask.vertexCapacityInput = uint32_t(vertices.size());
  mask.vertices = vertices.data();
  mask.indexCapacityInput = uint32_t(out.indices.size());
  mask.indices = out.indices.data();
  if (!vertices.empty() && !out.indices.empty()) {
    if (auto s = check(getVisibilityMask_(session, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, view, type, &mask),
                       "xrGetVisibilityMaskKHR");
        !s) {
      return s.error();
    }
  }
  vertices.resize(std::min<size_t>(vertices.size(), mask.vertexCountOutput));
  out.indices.resize(std::min<size_t>(out.indices.size(), mask.indexCountOutput));
  for (const XrVector2f& v : vertices) {
    out.vertices.push_back(v.x);
    out.vertices.push_back(v.y);
  }
  if (auto s = validateVisibilityMask(out); !s) return s.error();
  return out;
}

}  // namespace xrc
