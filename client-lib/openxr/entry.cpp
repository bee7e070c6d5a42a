// The runtime's two exported symbols: loader negotiation and xrGetInstanceProcAddr, which maps
// function names onto the implementations in entry_points.hpp.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "entry_points.hpp"
#include "loader_interface.hpp"

namespace xrc::openxr {

namespace {

struct Entry {
  const char* name;
  PFN_xrVoidFunction function;
  const char* extension;     // null: core
  XrVersion since = kApi10;  // core functions: the API version that added them
};

// The static_cast checks each implementation against the function pointer type of its name.
#define XRC_CORE(name) \
  { "xr" #name, reinterpret_cast<PFN_xrVoidFunction>(static_cast<PFN_xr##name>(&name)), nullptr }
#define XRC_EXT(name, ext) \
  { "xr" #name, reinterpret_cast<PFN_xrVoidFunction>(static_cast<PFN_xr##name>(&name)), ext }
#define XRC_CORE_1_1(name) \
  { "xr" #name, reinterpret_cast<PFN_xrVoidFunction>(static_cast<PFN_xr##name>(&name)), nullptr, kApi11 }

XrResult XRAPI_CALL GetInstanceProcAddr(XrInstance instance, const char* name, PFN_xrVoidFunction* function);

const Entry kEntries[] = {
    XRC_CORE(GetInstanceProcAddr),
    XRC_CORE(EnumerateInstanceExtensionProperties),
    XRC_CORE(EnumerateApiLayerProperties),
    XRC_CORE(CreateInstance),
    XRC_CORE(DestroyInstance),
    XRC_CORE(GetInstanceProperties),
    XRC_CORE(PollEvent),
    XRC_CORE(ResultToString),
    XRC_CORE(StructureTypeToString),
    XRC_CORE(GetSystem),
    XRC_CORE(GetSystemProperties),
    XRC_CORE(EnumerateEnvironmentBlendModes),
    XRC_CORE(CreateSession),
    XRC_CORE(DestroySession),
    XRC_CORE(EnumerateReferenceSpaces),
    XRC_CORE(CreateReferenceSpace),
    XRC_CORE(GetReferenceSpaceBoundsRect),
    XRC_CORE(CreateActionSpace),
    XRC_CORE(LocateSpace),
    XRC_CORE(DestroySpace),
    XRC_CORE(EnumerateViewConfigurations),
    XRC_CORE(GetViewConfigurationProperties),
    XRC_CORE(EnumerateViewConfigurationViews),
    XRC_CORE(EnumerateSwapchainFormats),
    XRC_CORE(CreateSwapchain),
    XRC_CORE(DestroySwapchain),
    XRC_CORE(EnumerateSwapchainImages),
    XRC_CORE(AcquireSwapchainImage),
    XRC_CORE(WaitSwapchainImage),
    XRC_CORE(ReleaseSwapchainImage),
    XRC_CORE(BeginSession),
    XRC_CORE(EndSession),
    XRC_CORE(RequestExitSession),
    XRC_CORE(WaitFrame),
    XRC_CORE(BeginFrame),
    XRC_CORE(EndFrame),
    XRC_CORE(LocateViews),
    XRC_CORE(StringToPath),
    XRC_CORE(PathToString),
    XRC_CORE(CreateActionSet),
    XRC_CORE(DestroyActionSet),
    XRC_CORE(CreateAction),
    XRC_CORE(DestroyAction),
    XRC_CORE(SuggestInteractionProfileBindings),
    XRC_CORE(AttachSessionActionSets),
    XRC_CORE(GetCurrentInteractionProfile),
    XRC_CORE(GetActionStateBoolean),
    XRC_CORE(GetActionStateFloat),
    XRC_CORE(GetActionStateVector2f),
    XRC_CORE(GetActionStatePose),
    XRC_CORE(SyncActions),
    XRC_CORE(EnumerateBoundSourcesForAction),
    XRC_CORE(GetInputSourceLocalizedName),
    XRC_CORE(ApplyHapticFeedback),
    XRC_CORE(StopHapticFeedback),
    XRC_CORE_1_1(LocateSpaces),
    XRC_EXT(GetVulkanInstanceExtensionsKHR, XR_KHR_VULKAN_ENABLE_EXTENSION_NAME),
    XRC_EXT(GetVulkanDeviceExtensionsKHR, XR_KHR_VULKAN_ENABLE_EXTENSION_NAME),
    XRC_EXT(GetVulkanGraphicsDeviceKHR, XR_KHR_VULKAN_ENABLE_EXTENSION_NAME),
    XRC_EXT(GetVulkanGraphicsRequirementsKHR, XR_KHR_VULKAN_ENABLE_EXTENSION_NAME),
    XRC_EXT(CreateVulkanInstanceKHR, XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME),
    XRC_EXT(CreateVulkanDeviceKHR, XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME),
    XRC_EXT(GetVulkanGraphicsDevice2KHR, XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME),
    XRC_EXT(ConvertTimespecTimeToTimeKHR, XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME),
    XRC_EXT(ConvertTimeToTimespecTimeKHR, XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME),
    XRC_EXT(GetVisibilityMaskKHR, XR_KHR_VISIBILITY_MASK_EXTENSION_NAME),
    XRC_EXT(CreateHandTrackerEXT, XR_EXT_HAND_TRACKING_EXTENSION_NAME),
    XRC_EXT(DestroyHandTrackerEXT, XR_EXT_HAND_TRACKING_EXTENSION_NAME),
    XRC_EXT(LocateHandJointsEXT, XR_EXT_HAND_TRACKING_EXTENSION_NAME),
    XRC_EXT(EnumeratePerformanceMetricsCounterPathsMETA, XR_META_PERFORMANCE_METRICS_EXTENSION_NAME),
    XRC_EXT(SetPerformanceMetricsStateMETA, XR_META_PERFORMANCE_METRICS_EXTENSION_NAME),
    XRC_EXT(GetPerformanceMetricsStateMETA, XR_META_PERFORMANCE_METRICS_EXTENSION_NAME),
    XRC_EXT(QueryPerformanceMetricsCounterMETA, XR_META_PERFORMANCE_METRICS_EXTENSION_NAME),
};

#undef XRC_CORE
#undef XRC_EXT
#undef XRC_CORE_1_1

// XR_KHR_vulkan_enable2's xrGetVulkanGraphicsRequirements2KHR shares its implementation and
// function pointer type with the enable version.
const Entry kAliases[] = {
    {"xrGetVulkanGraphicsRequirements2KHR",
     reinterpret_cast<PFN_xrVoidFunction>(
         static_cast<PFN_xrGetVulkanGraphicsRequirements2KHR>(&GetVulkanGraphicsRequirements2KHR)),
     XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME},
    // XR_KHR_locate_spaces is the extension OpenXR 1.1 promoted xrLocateSpaces from.
    {"xrLocateSpacesKHR", reinterpret_cast<PFN_xrVoidFunction>(static_cast<PFN_xrLocateSpacesKHR>(&LocateSpaces)),
     XR_KHR_LOCATE_SPACES_EXTENSION_NAME},
};

const Entry* findEntry(std::string_view name) {
  for (const Entry& e : kEntries) {
    if (name == e.name) return &e;
  }
  for (const Entry& e : kAliases) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

XrResult XRAPI_CALL GetInstanceProcAddr(XrInstance instanceHandle, const char* name, PFN_xrVoidFunction* function) {
  if (name == nullptr || function == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  *function = nullptr;
  const Entry* entry = findEntry(name);
  if (instanceHandle == XR_NULL_HANDLE) {
    // The loader asks for the pre-instance functions this way; the core validation layer asks for
    // every function with a null instance while it builds its dispatch table, so answer all.
    if (entry == nullptr) return XR_ERROR_FUNCTION_UNSUPPORTED;
    *function = entry->function;
    return XR_SUCCESS;
  }
  auto instance = lookup<Instance>(instanceHandle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (entry == nullptr) return XR_ERROR_FUNCTION_UNSUPPORTED;
  if (entry->extension != nullptr && !instance->enabled(entry->extension)) return XR_ERROR_FUNCTION_UNSUPPORTED;
  if (!apiAtLeast(instance->apiVersion, entry->since)) return XR_ERROR_FUNCTION_UNSUPPORTED;
  *function = entry->function;
  return XR_SUCCESS;
}

}  // namespace

}  // namespace xrc::openxr

extern "C" __attribute__((visibility("default"))) XrResult XRAPI_CALL
xrNegotiateLoaderRuntimeInterface(const XrNegotiateLoaderInfo* loaderInfo, XrNegotiateRuntimeRequest* runtimeRequest) {
  if (loaderInfo == nullptr || runtimeRequest == nullptr ||
      loaderInfo->structType != XR_LOADER_INTERFACE_STRUCT_LOADER_INFO ||
      loaderInfo->structVersion != XR_LOADER_INFO_STRUCT_VERSION || loaderInfo->structSize != sizeof *loaderInfo ||
      runtimeRequest->structType != XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST ||
      runtimeRequest->structVersion != XR_RUNTIME_INFO_STRUCT_VERSION ||
      runtimeRequest->structSize != sizeof *runtimeRequest) {
    return XR_ERROR_INITIALIZATION_FAILED;
  }
  if (loaderInfo->minInterfaceVersion > XR_CURRENT_LOADER_RUNTIME_VERSION ||
      loaderInfo->maxInterfaceVersion < XR_CURRENT_LOADER_RUNTIME_VERSION ||
      XR_VERSION_MAJOR(loaderInfo->maxApiVersion) < 1 || XR_VERSION_MAJOR(loaderInfo->minApiVersion) > 1) {
    return XR_ERROR_INITIALIZATION_FAILED;
  }
  runtimeRequest->runtimeInterfaceVersion = XR_CURRENT_LOADER_RUNTIME_VERSION;
  // The newest version both sides know: 1.1 (with the registry patch this runtime follows).
  runtimeRequest->runtimeApiVersion = std::min(loaderInfo->maxApiVersion, xrc::openxr::kRuntimeApiVersion);
  runtimeRequest->getInstanceProcAddr = &xrc::openxr::GetInstanceProcAddr;
  return XR_SUCCESS;
}
