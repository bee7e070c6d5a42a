// XR_META_performance_metrics: the counters of performance_metrics.hpp, per session, while the
// app has enabled them.
#include "entry_points.hpp"

namespace xrc::openxr {

namespace {
const std::vector<std::string_view>& counterPaths() {
  static const std::vector<std::string_view> paths{kAppCpuFrametimePath, kDeviceCpuUtilizationPath};
  return paths;
}
}  // namespace

XrResult XRAPI_CALL EnumeratePerformanceMetricsCounterPathsMETA(XrInstance handle, uint32_t capacity, uint32_t* count,
                                                                XrPath* paths) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  std::vector<XrPath> out;
  for (std::string_view text : counterPaths()) {
    XrPath path = XR_NULL_PATH;
    if (XrResult r = instance->paths.toPath(text, path); XR_FAILED(r)) return r;
    out.push_back(path);
  }
  return enumerate(out, capacity, count, paths);
}

XrResult XRAPI_CALL SetPerformanceMetricsStateMETA(XrSession handle, const XrPerformanceMetricsStateMETA* state) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(state, XR_TYPE_PERFORMANCE_METRICS_STATE_META)) return XR_ERROR_VALIDATION_FAILURE;
  Lock lock(session->mutex);
  session->metrics.setEnabled(state->enabled == XR_TRUE);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL GetPerformanceMetricsStateMETA(XrSession handle, XrPerformanceMetricsStateMETA* state) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(state, XR_TYPE_PERFORMANCE_METRICS_STATE_META)) return XR_ERROR_VALIDATION_FAILURE;
  Lock lock(session->mutex);
  state->enabled = session->metrics.enabled() ? XR_TRUE : XR_FALSE;
  return XR_SUCCESS;
}

XrResult XRAPI_CALL QueryPerformanceMetricsCounterMETA(XrSession handle, XrPath path,
                                                       XrPerformanceMetricsCounterMETA* counter) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(counter, XR_TYPE_PERFORMANCE_METRICS_COUNTER_META)) return XR_ERROR_VALIDATION_FAILURE;
  std::string text;
  if (session->instance->paths.toString(path, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  Lock lock(session->mutex);
  if (!session->metrics.enabled()) return XR_ERROR_VALIDATION_FAILURE;  // xrSetPerformanceMetricsStateMETA first
  std::optional<float> value;
  if (text == kAppCpuFrametimePath) {
    counter->counterUnit = XR_PERFORMANCE_METRICS_COUNTER_UNIT_MILLISECONDS_META;
    value = session->metrics.appCpuFrameMs();
  } else if (text == kDeviceCpuUtilizationPath) {
    counter->counterUnit = XR_PERFORMANCE_METRICS_COUNTER_UNIT_PERCENTAGE_META;
    value = session->metrics.sampleCpuUtilization();
  } else {
    return XR_ERROR_PATH_UNSUPPORTED;
  }
  counter->counterFlags = 0;
  counter->uintValue = 0;
  counter->floatValue = 0;
  if (value) {  // nothing measured yet (no frame ended, a first utilization sample): no value
    counter->counterFlags = XR_PERFORMANCE_METRICS_COUNTER_ANY_VALUE_VALID_BIT_META |
                            XR_PERFORMANCE_METRICS_COUNTER_FLOAT_VALUE_VALID_BIT_META;
    counter->floatValue = *value;
  }
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
