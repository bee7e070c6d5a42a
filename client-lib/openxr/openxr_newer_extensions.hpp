// Extensions newer than Debian 12's OpenXR headers (1.0.20), declared from the registry's values
// (xr.xml): XrUuidEXT, XR_META_headset_id, XR_EXT_user_presence and XR_META_performance_metrics.
// With headers that have them nothing is declared again.
#pragma once

#include <openxr/openxr.h>

extern "C" {

#ifndef XR_EXT_uuid
#define XR_UUID_SIZE_EXT 16
typedef struct XrUuidEXT {
  uint8_t data[XR_UUID_SIZE_EXT];
} XrUuidEXT;
#endif

#ifndef XR_META_headset_id
#define XR_META_headset_id 1
#define XR_META_headset_id_SPEC_VERSION 2
#define XR_META_HEADSET_ID_EXTENSION_NAME "XR_META_headset_id"
inline constexpr XrStructureType XR_TYPE_SYSTEM_HEADSET_ID_PROPERTIES_META = XrStructureType(1000245000);
typedef struct XrSystemHeadsetIdPropertiesMETA {
  XrStructureType type;
  void* XR_MAY_ALIAS next;
  XrUuidEXT id;
} XrSystemHeadsetIdPropertiesMETA;
#endif

#ifndef XR_EXT_user_presence
#define XR_EXT_user_presence 1
#define XR_EXT_user_presence_SPEC_VERSION 1
#define XR_EXT_USER_PRESENCE_EXTENSION_NAME "XR_EXT_user_presence"
inline constexpr XrStructureType XR_TYPE_EVENT_DATA_USER_PRESENCE_CHANGED_EXT = XrStructureType(1000470000);
inline constexpr XrStructureType XR_TYPE_SYSTEM_USER_PRESENCE_PROPERTIES_EXT = XrStructureType(1000470001);
typedef struct XrEventDataUserPresenceChangedEXT {
  XrStructureType type;
  const void* XR_MAY_ALIAS next;
  XrSession session;
  XrBool32 isUserPresent;
} XrEventDataUserPresenceChangedEXT;
typedef struct XrSystemUserPresencePropertiesEXT {
  XrStructureType type;
  void* XR_MAY_ALIAS next;
  XrBool32 supportsUserPresence;
} XrSystemUserPresencePropertiesEXT;
#endif
}

extern "C" {
#ifndef XR_META_performance_metrics
#define XR_META_performance_metrics 1
#define XR_META_performance_metrics_SPEC_VERSION 2
#define XR_META_PERFORMANCE_METRICS_EXTENSION_NAME "XR_META_performance_metrics"
inline constexpr XrStructureType XR_TYPE_PERFORMANCE_METRICS_STATE_META = XrStructureType(1000232001);
inline constexpr XrStructureType XR_TYPE_PERFORMANCE_METRICS_COUNTER_META = XrStructureType(1000232002);
typedef enum XrPerformanceMetricsCounterUnitMETA {
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_GENERIC_META = 0,
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_PERCENTAGE_META = 1,
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_MILLISECONDS_META = 2,
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_BYTES_META = 3,
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_HERTZ_META = 4,
  XR_PERFORMANCE_METRICS_COUNTER_UNIT_MAX_ENUM_META = 0x7FFFFFFF
} XrPerformanceMetricsCounterUnitMETA;
typedef XrFlags64 XrPerformanceMetricsCounterFlagsMETA;
inline constexpr XrPerformanceMetricsCounterFlagsMETA XR_PERFORMANCE_METRICS_COUNTER_ANY_VALUE_VALID_BIT_META = 0x1;
inline constexpr XrPerformanceMetricsCounterFlagsMETA XR_PERFORMANCE_METRICS_COUNTER_UINT_VALUE_VALID_BIT_META = 0x2;
inline constexpr XrPerformanceMetricsCounterFlagsMETA XR_PERFORMANCE_METRICS_COUNTER_FLOAT_VALUE_VALID_BIT_META = 0x4;
typedef struct XrPerformanceMetricsStateMETA {
  XrStructureType type;
  const void* XR_MAY_ALIAS next;
  XrBool32 enabled;
} XrPerformanceMetricsStateMETA;
typedef struct XrPerformanceMetricsCounterMETA {
  XrStructureType type;
  const void* XR_MAY_ALIAS next;
  XrPerformanceMetricsCounterFlagsMETA counterFlags;
  XrPerformanceMetricsCounterUnitMETA counterUnit;
  uint32_t uintValue;
  float floatValue;
} XrPerformanceMetricsCounterMETA;
typedef XrResult(XRAPI_PTR* PFN_xrEnumeratePerformanceMetricsCounterPathsMETA)(XrInstance, uint32_t, uint32_t*,
                                                                               XrPath*);
typedef XrResult(XRAPI_PTR* PFN_xrSetPerformanceMetricsStateMETA)(XrSession, const XrPerformanceMetricsStateMETA*);
typedef XrResult(XRAPI_PTR* PFN_xrGetPerformanceMetricsStateMETA)(XrSession, XrPerformanceMetricsStateMETA*);
typedef XrResult(XRAPI_PTR* PFN_xrQueryPerformanceMetricsCounterMETA)(XrSession, XrPath,
                                                                      XrPerformanceMetricsCounterMETA*);
#endif
}
