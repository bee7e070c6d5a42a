// Instance, system, path, string, time and event entry points.
#include <openxr/openxr_reflection.h>

#include <cstring>

#include "entry_points.hpp"

namespace xrc::openxr {

namespace {

struct ExtensionInfo {
  const char* name;
  uint32_t version;
};
constexpr ExtensionInfo kExtensions[] = {
    {XR_KHR_VULKAN_ENABLE_EXTENSION_NAME, XR_KHR_vulkan_enable_SPEC_VERSION},
    {XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME, XR_KHR_vulkan_enable2_SPEC_VERSION},
    {XR_KHR_CONVERT_TIMESPEC_TIME_EXTENSION_NAME, XR_KHR_convert_timespec_time_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_DEPTH_EXTENSION_NAME, XR_KHR_composition_layer_depth_SPEC_VERSION},
    {XR_EXTX_OVERLAY_EXTENSION_NAME, XR_EXTX_overlay_SPEC_VERSION},
    {XR_EXT_LOCAL_FLOOR_EXTENSION_NAME, XR_EXT_local_floor_SPEC_VERSION},
    {XR_KHR_LOCATE_SPACES_EXTENSION_NAME, XR_KHR_locate_spaces_SPEC_VERSION},
    {XR_KHR_VISIBILITY_MASK_EXTENSION_NAME, XR_KHR_visibility_mask_SPEC_VERSION},
    {XR_META_HEADSET_ID_EXTENSION_NAME, XR_META_headset_id_SPEC_VERSION},
    {XR_EXT_USER_PRESENCE_EXTENSION_NAME, XR_EXT_user_presence_SPEC_VERSION},
    {XR_EXT_HAND_TRACKING_EXTENSION_NAME, XR_EXT_hand_tracking_SPEC_VERSION},
    {XR_META_PERFORMANCE_METRICS_EXTENSION_NAME, XR_META_performance_metrics_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_CYLINDER_EXTENSION_NAME, XR_KHR_composition_layer_cylinder_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_EQUIRECT_EXTENSION_NAME, XR_KHR_composition_layer_equirect_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_EQUIRECT2_EXTENSION_NAME, XR_KHR_composition_layer_equirect2_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_CUBE_EXTENSION_NAME, XR_KHR_composition_layer_cube_SPEC_VERSION},
    {XR_KHR_COMPOSITION_LAYER_COLOR_SCALE_BIAS_EXTENSION_NAME, XR_KHR_composition_layer_color_scale_bias_SPEC_VERSION},
    {XR_EXT_EYE_GAZE_INTERACTION_EXTENSION_NAME, XR_EXT_eye_gaze_interaction_SPEC_VERSION},
};

bool isSupportedExtension(const char* name) {
  for (const auto& e : kExtensions) {
    if (std::strcmp(e.name, name) == 0) return true;
  }
  return false;
}

template <size_t N>
void copyString(char (&out)[N], const std::string& text) {
  std::snprintf(out, N, "%s", text.c_str());
}

uint32_t viewCountOf(XrViewConfigurationType type) {
  switch (type) {
    case XR_VIEW_CONFIGURATION_TYPE_PRIMARY_MONO:
      return 1;
    case XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO:
      return 2;
    default:
      return 0;
  }
}

}  // namespace

XrViewConfigurationType systemViewConfiguration(const Instance& instance) {
  return instance.system.views.size() == 1 ? XR_VIEW_CONFIGURATION_TYPE_PRIMARY_MONO
                                           : XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
}

XrResult lookupSystem(XrInstance handle, XrSystemId systemId, std::shared_ptr<Instance>& out) {
  out = lookup<Instance>(handle);
  if (!out) return XR_ERROR_HANDLE_INVALID;
  if (systemId != kSystemId) return XR_ERROR_SYSTEM_INVALID;
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateInstanceExtensionProperties(const char* layerName, uint32_t capacity, uint32_t* count,
                                                         XrExtensionProperties* properties) {
  if (layerName != nullptr) return XR_ERROR_API_LAYER_NOT_PRESENT;
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  constexpr uint32_t n = uint32_t(std::size(kExtensions));
  *count = n;
  if (capacity == 0) return XR_SUCCESS;
  if (properties == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < n) return XR_ERROR_SIZE_INSUFFICIENT;
  for (uint32_t i = 0; i < n; ++i) {
    if (properties[i].type != XR_TYPE_EXTENSION_PROPERTIES) return XR_ERROR_VALIDATION_FAILURE;
    std::snprintf(properties[i].extensionName, XR_MAX_EXTENSION_NAME_SIZE, "%s", kExtensions[i].name);
    properties[i].extensionVersion = kExtensions[i].version;
  }
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateApiLayerProperties(uint32_t, uint32_t* count, XrApiLayerProperties*) {
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  *count = 0;  // a runtime has no layers; the loader lists them
  return XR_SUCCESS;
}

XrResult XRAPI_CALL CreateInstance(const XrInstanceCreateInfo* info, XrInstance* out) {
  if (!hasType(info, XR_TYPE_INSTANCE_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (info->createFlags != 0) return XR_ERROR_VALIDATION_FAILURE;
  const auto& app = info->applicationInfo;
  if (strnlen(app.applicationName, XR_MAX_APPLICATION_NAME_SIZE) == 0 ||
      strnlen(app.applicationName, XR_MAX_APPLICATION_NAME_SIZE) == XR_MAX_APPLICATION_NAME_SIZE) {
    return XR_ERROR_NAME_INVALID;
  }
  // OpenXR 1.0 and 1.1 are implemented; any patch of them is accepted (patches add no API).
  if (XR_VERSION_MAJOR(app.apiVersion) != 1 || XR_VERSION_MINOR(app.apiVersion) > 1) {
    return XR_ERROR_API_VERSION_UNSUPPORTED;
  }
  // enabledApiLayerNames are the loader's business: it has already inserted the layers it found
  // (the CTS always enables its conformance layer by name), so a runtime ignores them.
  auto instance = std::make_shared<Instance>();
  instance->apiVersion = app.apiVersion;
  instance->applicationName =
      std::string(app.applicationName, strnlen(app.applicationName, XR_MAX_APPLICATION_NAME_SIZE));
  for (uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
    const char* name = info->enabledExtensionNames[i];
    if (name == nullptr || !isSupportedExtension(name)) return XR_ERROR_EXTENSION_NOT_PRESENT;
    instance->extensions.insert(name);
  }
  instance->actions.setScope({app.apiVersion, instance->extensions});
  // The daemon must be there now: an app asking for an instance without it gets a clear failure
  // instead of a session that never becomes ready.
  auto system = client::describe(instance->socketPath);
  if (!system) {
    logError("xrCreateInstance", "xr-compositord is not reachable: " + system.error().describe());
    return XR_ERROR_RUNTIME_UNAVAILABLE;
  }
  instance->system = std::move(system).value();
  if (instance->system.views.empty()) {
    logError("xrCreateInstance", "the daemon describes a system without views");
    return XR_ERROR_RUNTIME_FAILURE;
  }
  instance->handle = Handles::get().add(instance);
  *out = fromRaw<XrInstance>(instance->handle);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL DestroyInstance(XrInstance handle) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  uint64_t session = 0;
  std::vector<uint64_t> sets;
  {
    Lock lock(instance->mutex);
    session = instance->sessionHandle;
    sets = instance->actionSetHandles;
  }
  if (session != 0) DestroySession(fromRaw<XrSession>(session));
  for (uint64_t set : sets) DestroyActionSet(fromRaw<XrActionSet>(set));
  Handles::get().remove(instance->handle);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL GetInstanceProperties(XrInstance handle, XrInstanceProperties* properties) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(properties, XR_TYPE_INSTANCE_PROPERTIES)) return XR_ERROR_VALIDATION_FAILURE;
  properties->runtimeVersion = XR_MAKE_VERSION(0, 1, 0);
  copyString(properties->runtimeName, kRuntimeName);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL PollEvent(XrInstance handle, XrEventDataBuffer* buffer) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(buffer, XR_TYPE_EVENT_DATA_BUFFER)) return XR_ERROR_VALIDATION_FAILURE;
  uint64_t sessionHandle = 0;
  {
    Lock lock(instance->mutex);
    sessionHandle = instance->sessionHandle;
  }
  // An app idling in its event loop must still learn that the daemon left.
  if (auto session = Handles::get().find<Session>(sessionHandle)) {
    Lock lock(session->mutex);
    if (session->connection && !session->lifecycle.lost() && session->connection->lost()) noticeLoss(*session);
  }
  Lock lock(instance->mutex);
  if (instance->events.empty()) return XR_EVENT_UNAVAILABLE;
  const XrEventDataBuffer event = instance->events.front();
  instance->events.pop_front();
  std::memcpy(buffer, &event, sizeof event);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL ResultToString(XrInstance handle, XrResult value, char out[XR_MAX_RESULT_STRING_SIZE]) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
#define XRC_RESULT_CASE(name, number)                           \
  case name:                                                    \
    std::snprintf(out, XR_MAX_RESULT_STRING_SIZE, "%s", #name); \
    return XR_SUCCESS;
  switch (value) { XR_LIST_ENUM_XrResult(XRC_RESULT_CASE) default : break; }
#undef XRC_RESULT_CASE
  std::snprintf(out, XR_MAX_RESULT_STRING_SIZE, "XR_UNKNOWN_%s_%d", XR_SUCCEEDED(value) ? "SUCCESS" : "FAILURE",
                int(value));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL StructureTypeToString(XrInstance handle, XrStructureType value,
                                          char out[XR_MAX_STRUCTURE_NAME_SIZE]) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
#define XRC_TYPE_CASE(name, number)                              \
  case name:                                                     \
    std::snprintf(out, XR_MAX_STRUCTURE_NAME_SIZE, "%s", #name); \
    return XR_SUCCESS;
  switch (value) { XR_LIST_ENUM_XrStructureType(XRC_TYPE_CASE) default : break; }
#undef XRC_TYPE_CASE
  std::snprintf(out, XR_MAX_STRUCTURE_NAME_SIZE, "XR_UNKNOWN_STRUCTURE_TYPE_%d", int(value));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL GetSystem(XrInstance handle, const XrSystemGetInfo* info, XrSystemId* systemId) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SYSTEM_GET_INFO) || systemId == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  switch (info->formFactor) {
    case XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY:
      *systemId = kSystemId;
      return XR_SUCCESS;
    default:
      // Handheld displays and form factors this runtime does not know of alike.
      return XR_ERROR_FORM_FACTOR_UNSUPPORTED;
  }
}

XrResult XRAPI_CALL GetSystemProperties(XrInstance handle, XrSystemId systemId, XrSystemProperties* properties) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  if (!hasType(properties, XR_TYPE_SYSTEM_PROPERTIES)) return XR_ERROR_VALIDATION_FAILURE;
  const auto& system = instance->system;
  properties->systemId = kSystemId;
  properties->vendorId = 0;
  copyString(properties->systemName, std::string(kRuntimeName) + " (" + system.backend + ")");
  properties->graphicsProperties.maxLayerCount = system.maxLayers;
  properties->graphicsProperties.maxSwapchainImageWidth = system.views.front().maxWidth;
  properties->graphicsProperties.maxSwapchainImageHeight = system.views.front().maxHeight;
  properties->trackingProperties.orientationTracking = XR_TRUE;
  properties->trackingProperties.positionTracking = XR_TRUE;
  fillSystemExtensionProperties(*instance, *properties);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateViewConfigurations(XrInstance handle, XrSystemId systemId, uint32_t capacity,
                                                uint32_t* count, XrViewConfigurationType* types) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  return enumerate(std::vector<XrViewConfigurationType>{systemViewConfiguration(*instance)}, capacity, count, types);
}

XrResult XRAPI_CALL GetViewConfigurationProperties(XrInstance handle, XrSystemId systemId, XrViewConfigurationType type,
                                                   XrViewConfigurationProperties* properties) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  if (!hasType(properties, XR_TYPE_VIEW_CONFIGURATION_PROPERTIES)) return XR_ERROR_VALIDATION_FAILURE;
  if (type != systemViewConfiguration(*instance)) return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  properties->viewConfigurationType = type;
  properties->fovMutable = XR_FALSE;  // the compositor does not reproject to other fields of view
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateViewConfigurationViews(XrInstance handle, XrSystemId systemId,
                                                    XrViewConfigurationType type, uint32_t capacity, uint32_t* count,
                                                    XrViewConfigurationView* views) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  if (type != systemViewConfiguration(*instance) || viewCountOf(type) == 0) {
    return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  }
  const auto& described = instance->system.views;
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  *count = uint32_t(described.size());
  if (capacity == 0) return XR_SUCCESS;
  if (views == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < described.size()) return XR_ERROR_SIZE_INSUFFICIENT;
  for (size_t i = 0; i < described.size(); ++i) {
    if (views[i].type != XR_TYPE_VIEW_CONFIGURATION_VIEW) return XR_ERROR_VALIDATION_FAILURE;
    views[i].recommendedImageRectWidth = described[i].recommendedWidth;
    views[i].recommendedImageRectHeight = described[i].recommendedHeight;
    views[i].maxImageRectWidth = described[i].maxWidth;
    views[i].maxImageRectHeight = described[i].maxHeight;
    views[i].recommendedSwapchainSampleCount = 1;
    views[i].maxSwapchainSampleCount = 1;
  }
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateEnvironmentBlendModes(XrInstance handle, XrSystemId systemId, XrViewConfigurationType type,
                                                   uint32_t capacity, uint32_t* count, XrEnvironmentBlendMode* modes) {
  std::shared_ptr<Instance> instance;
  if (XrResult r = lookupSystem(handle, systemId, instance); XR_FAILED(r)) return r;
  if (type != systemViewConfiguration(*instance)) return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  // The daemon's display's modes, its preferred first (a daemon before protocol 1.3: opaque).
  std::vector<XrEnvironmentBlendMode> supported;
  for (EnvironmentBlendMode mode : instance->system.environmentBlendModes) {
    supported.push_back(XrEnvironmentBlendMode(mode));
  }
  if (supported.empty()) supported.push_back(XR_ENVIRONMENT_BLEND_MODE_OPAQUE);
  return enumerate(supported, capacity, count, modes);
}

XrResult XRAPI_CALL StringToPath(XrInstance handle, const char* text, XrPath* path) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (text == nullptr || path == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  return instance->paths.toPath(std::string_view(text, strnlen(text, XR_MAX_PATH_LENGTH)), *path);
}

XrResult XRAPI_CALL PathToString(XrInstance handle, XrPath path, uint32_t capacity, uint32_t* count, char* out) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  std::string text;
  if (XrResult r = instance->paths.toString(path, text); XR_FAILED(r)) return r;
  return enumerateString(text, capacity, count, out);
}

XrResult XRAPI_CALL ConvertTimespecTimeToTimeKHR(XrInstance handle, const struct timespec* ts, XrTime* time) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (ts == nullptr || time == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000) return XR_ERROR_TIME_INVALID;
  const XrTime t = XrTime(ts->tv_sec) * 1000000000 + ts->tv_nsec;
  if (t <= 0) return XR_ERROR_TIME_INVALID;
  *time = t;  // XrTime is CLOCK_MONOTONIC nanoseconds, the clock timespecs here are taken from
  return XR_SUCCESS;
}

XrResult XRAPI_CALL ConvertTimeToTimespecTimeKHR(XrInstance handle, XrTime time, struct timespec* ts) {
  if (!lookup<Instance>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (ts == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (time <= 0) return XR_ERROR_TIME_INVALID;
  ts->tv_sec = time_t(time / 1000000000);
  ts->tv_nsec = long(time % 1000000000);
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
