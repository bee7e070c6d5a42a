// Every OpenXR function the runtime implements, in namespace xrc::openxr (never exported under
// their xr* names: those belong to the loader). entry.cpp maps names to them.
#pragma once

#include "runtime.hpp"

namespace xrc::openxr {

// instance, system, paths, strings, events (xr_instance.cpp)
XrResult XRAPI_CALL EnumerateInstanceExtensionProperties(const char*, uint32_t, uint32_t*, XrExtensionProperties*);
XrResult XRAPI_CALL EnumerateApiLayerProperties(uint32_t, uint32_t*, XrApiLayerProperties*);
XrResult XRAPI_CALL CreateInstance(const XrInstanceCreateInfo*, XrInstance*);
XrResult XRAPI_CALL DestroyInstance(XrInstance);
XrResult XRAPI_CALL GetInstanceProperties(XrInstance, XrInstanceProperties*);
XrResult XRAPI_CALL PollEvent(XrInstance, XrEventDataBuffer*);
XrResult XRAPI_CALL ResultToString(XrInstance, XrResult, char[XR_MAX_RESULT_STRING_SIZE]);
XrResult XRAPI_CALL StructureTypeToString(XrInstance, XrStructureType, char[XR_MAX_STRUCTURE_NAME_SIZE]);
XrResult XRAPI_CALL GetSystem(XrInstance, const XrSystemGetInfo*, XrSystemId*);
XrResult XRAPI_CALL GetSystemProperties(XrInstance, XrSystemId, XrSystemProperties*);
XrResult XRAPI_CALL EnumerateEnvironmentBlendModes(XrInstance, XrSystemId, XrViewConfigurationType, uint32_t, uint32_t*,
                                                   XrEnvironmentBlendMode*);
XrResult XRAPI_CALL EnumerateViewConfigurations(XrInstance, XrSystemId, uint32_t, uint32_t*, XrViewConfigurationType*);
XrResult XRAPI_CALL GetViewConfigurationProperties(XrInstance, XrSystemId, XrViewConfigurationType,
                                                   XrViewConfigurationProperties*);
XrResult XRAPI_CALL EnumerateViewConfigurationViews(XrInstance, XrSystemId, XrViewConfigurationType, uint32_t,
                                                    uint32_t*, XrViewConfigurationView*);
XrResult XRAPI_CALL StringToPath(XrInstance, const char*, XrPath*);
XrResult XRAPI_CALL PathToString(XrInstance, XrPath, uint32_t, uint32_t*, char*);
XrResult XRAPI_CALL ConvertTimespecTimeToTimeKHR(XrInstance, const struct timespec*, XrTime*);
XrResult XRAPI_CALL ConvertTimeToTimespecTimeKHR(XrInstance, XrTime, struct timespec*);

// graphics (xr_vulkan.cpp)
XrResult XRAPI_CALL GetVulkanGraphicsRequirementsKHR(XrInstance, XrSystemId, XrGraphicsRequirementsVulkanKHR*);
XrResult XRAPI_CALL GetVulkanGraphicsRequirements2KHR(XrInstance, XrSystemId, XrGraphicsRequirementsVulkanKHR*);
XrResult XRAPI_CALL GetVulkanInstanceExtensionsKHR(XrInstance, XrSystemId, uint32_t, uint32_t*, char*);
XrResult XRAPI_CALL GetVulkanDeviceExtensionsKHR(XrInstance, XrSystemId, uint32_t, uint32_t*, char*);
XrResult XRAPI_CALL GetVulkanGraphicsDeviceKHR(XrInstance, XrSystemId, VkInstance, VkPhysicalDevice*);
XrResult XRAPI_CALL CreateVulkanInstanceKHR(XrInstance, const XrVulkanInstanceCreateInfoKHR*, VkInstance*, VkResult*);
XrResult XRAPI_CALL CreateVulkanDeviceKHR(XrInstance, const XrVulkanDeviceCreateInfoKHR*, VkDevice*, VkResult*);
XrResult XRAPI_CALL GetVulkanGraphicsDevice2KHR(XrInstance, const XrVulkanGraphicsDeviceGetInfoKHR*, VkPhysicalDevice*);

// sessions and frames (xr_session.cpp)
XrResult XRAPI_CALL CreateSession(XrInstance, const XrSessionCreateInfo*, XrSession*);
XrResult XRAPI_CALL DestroySession(XrSession);
XrResult XRAPI_CALL BeginSession(XrSession, const XrSessionBeginInfo*);
XrResult XRAPI_CALL EndSession(XrSession);
XrResult XRAPI_CALL RequestExitSession(XrSession);
XrResult XRAPI_CALL WaitFrame(XrSession, const XrFrameWaitInfo*, XrFrameState*);
XrResult XRAPI_CALL BeginFrame(XrSession, const XrFrameBeginInfo*);
XrResult XRAPI_CALL EndFrame(XrSession, const XrFrameEndInfo*);

// spaces and views (xr_space.cpp)
XrResult XRAPI_CALL EnumerateReferenceSpaces(XrSession, uint32_t, uint32_t*, XrReferenceSpaceType*);
XrResult XRAPI_CALL CreateReferenceSpace(XrSession, const XrReferenceSpaceCreateInfo*, XrSpace*);
XrResult XRAPI_CALL GetReferenceSpaceBoundsRect(XrSession, XrReferenceSpaceType, XrExtent2Df*);
XrResult XRAPI_CALL CreateActionSpace(XrSession, const XrActionSpaceCreateInfo*, XrSpace*);
XrResult XRAPI_CALL LocateSpace(XrSpace, XrSpace, XrTime, XrSpaceLocation*);
XrResult XRAPI_CALL DestroySpace(XrSpace);
XrResult XRAPI_CALL LocateViews(XrSession, const XrViewLocateInfo*, XrViewState*, uint32_t, uint32_t*, XrView*);
XrResult XRAPI_CALL LocateSpaces(XrSession, const XrSpacesLocateInfo*, XrSpaceLocations*);  // 1.1, KHR_locate_spaces

// system and user extensions (xr_system_extensions.cpp): headset id, user presence, hands
void fillSystemExtensionProperties(const Instance& instance, XrSystemProperties& properties);
void sessionBegan(Session& session);  // XR_EXT_user_presence's first event
XrResult XRAPI_CALL CreateHandTrackerEXT(XrSession, const XrHandTrackerCreateInfoEXT*, XrHandTrackerEXT*);
XrResult XRAPI_CALL DestroyHandTrackerEXT(XrHandTrackerEXT);
XrResult XRAPI_CALL LocateHandJointsEXT(XrHandTrackerEXT, const XrHandJointsLocateInfoEXT*, XrHandJointLocationsEXT*);

// XR_META_performance_metrics (xr_performance_metrics.cpp)
XrResult XRAPI_CALL EnumeratePerformanceMetricsCounterPathsMETA(XrInstance, uint32_t, uint32_t*, XrPath*);
XrResult XRAPI_CALL SetPerformanceMetricsStateMETA(XrSession, const XrPerformanceMetricsStateMETA*);
XrResult XRAPI_CALL GetPerformanceMetricsStateMETA(XrSession, XrPerformanceMetricsStateMETA*);
XrResult XRAPI_CALL QueryPerformanceMetricsCounterMETA(XrSession, XrPath, XrPerformanceMetricsCounterMETA*);

// XR_KHR_visibility_mask (xr_visibility_mask.cpp)
XrResult XRAPI_CALL GetVisibilityMaskKHR(XrSession, XrViewConfigurationType, uint32_t, XrVisibilityMaskTypeKHR,
                                         XrVisibilityMaskKHR*);

// swapchains (xr_swapchain.cpp)
XrResult XRAPI_CALL EnumerateSwapchainFormats(XrSession, uint32_t, uint32_t*, int64_t*);
XrResult XRAPI_CALL CreateSwapchain(XrSession, const XrSwapchainCreateInfo*, XrSwapchain*);
XrResult XRAPI_CALL DestroySwapchain(XrSwapchain);
XrResult XRAPI_CALL EnumerateSwapchainImages(XrSwapchain, uint32_t, uint32_t*, XrSwapchainImageBaseHeader*);
XrResult XRAPI_CALL AcquireSwapchainImage(XrSwapchain, const XrSwapchainImageAcquireInfo*, uint32_t*);
XrResult XRAPI_CALL WaitSwapchainImage(XrSwapchain, const XrSwapchainImageWaitInfo*);
XrResult XRAPI_CALL ReleaseSwapchainImage(XrSwapchain, const XrSwapchainImageReleaseInfo*);

// actions (xr_action.cpp)
XrResult XRAPI_CALL CreateActionSet(XrInstance, const XrActionSetCreateInfo*, XrActionSet*);
XrResult XRAPI_CALL DestroyActionSet(XrActionSet);
XrResult XRAPI_CALL CreateAction(XrActionSet, const XrActionCreateInfo*, XrAction*);
XrResult XRAPI_CALL DestroyAction(XrAction);
XrResult XRAPI_CALL SuggestInteractionProfileBindings(XrInstance, const XrInteractionProfileSuggestedBinding*);
XrResult XRAPI_CALL AttachSessionActionSets(XrSession, const XrSessionActionSetsAttachInfo*);
XrResult XRAPI_CALL GetCurrentInteractionProfile(XrSession, XrPath, XrInteractionProfileState*);
XrResult XRAPI_CALL GetActionStateBoolean(XrSession, const XrActionStateGetInfo*, XrActionStateBoolean*);
XrResult XRAPI_CALL GetActionStateFloat(XrSession, const XrActionStateGetInfo*, XrActionStateFloat*);
XrResult XRAPI_CALL GetActionStateVector2f(XrSession, const XrActionStateGetInfo*, XrActionStateVector2f*);
XrResult XRAPI_CALL GetActionStatePose(XrSession, const XrActionStateGetInfo*, XrActionStatePose*);
XrResult XRAPI_CALL SyncActions(XrSession, const XrActionsSyncInfo*);
XrResult XRAPI_CALL EnumerateBoundSourcesForAction(XrSession, const XrBoundSourcesForActionEnumerateInfo*, uint32_t,
                                                   uint32_t*, XrPath*);
XrResult XRAPI_CALL GetInputSourceLocalizedName(XrSession, const XrInputSourceLocalizedNameGetInfo*, uint32_t,
                                                uint32_t*, char*);
XrResult XRAPI_CALL ApplyHapticFeedback(XrSession, const XrHapticActionInfo*, const XrHapticBaseHeader*);
XrResult XRAPI_CALL StopHapticFeedback(XrSession, const XrHapticActionInfo*);

}  // namespace xrc::openxr
