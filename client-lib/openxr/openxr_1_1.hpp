// What OpenXR 1.1 adds to the 1.0 headers Debian 12 ships (libopenxr-dev 1.0.20), declared from
// the registry's values (xr.xml): the version macro, LOCAL_FLOOR (XR_EXT_local_floor), the
// xrLocateSpaces structures (XR_KHR_locate_spaces) and XR_KHR_maintenance1's result codes. With
// headers that already have them (XR_VERSION_1_1 defined) nothing here is declared again.
#pragma once

#include <openxr/openxr.h>

#ifndef XR_VERSION_1_1
#define XR_VERSION_1_1 1
#define XR_API_VERSION_1_0 XR_MAKE_VERSION(1, 0, XR_VERSION_PATCH(XR_CURRENT_API_VERSION))
#define XR_API_VERSION_1_1 XR_MAKE_VERSION(1, 1, XR_VERSION_PATCH(XR_CURRENT_API_VERSION))

extern "C" {

inline constexpr XrReferenceSpaceType XR_REFERENCE_SPACE_TYPE_LOCAL_FLOOR = XrReferenceSpaceType(1000426000);
inline constexpr XrStructureType XR_TYPE_SPACES_LOCATE_INFO = XrStructureType(1000471000);
inline constexpr XrStructureType XR_TYPE_SPACE_LOCATIONS = XrStructureType(1000471001);
inline constexpr XrStructureType XR_TYPE_SPACE_VELOCITIES = XrStructureType(1000471002);
inline constexpr XrResult XR_ERROR_PERMISSION_INSUFFICIENT = XrResult(-1000710000);
inline constexpr XrResult XR_ERROR_EXTENSION_DEPENDENCY_NOT_ENABLED = XrResult(-1000710001);

typedef struct XrSpacesLocateInfo {
  XrStructureType type;
  const void* XR_MAY_ALIAS next;
  XrSpace baseSpace;
  XrTime time;
  uint32_t spaceCount;
  const XrSpace* spaces;
} XrSpacesLocateInfo;

typedef struct XrSpaceLocationData {
  XrSpaceLocationFlags locationFlags;
  XrPosef pose;
} XrSpaceLocationData;

typedef struct XrSpaceLocations {
  XrStructureType type;
  void* XR_MAY_ALIAS next;
  uint32_t locationCount;
  XrSpaceLocationData* locations;
} XrSpaceLocations;

typedef struct XrSpaceVelocityData {
  XrSpaceVelocityFlags velocityFlags;
  XrVector3f linearVelocity;
  XrVector3f angularVelocity;
} XrSpaceVelocityData;

typedef struct XrSpaceVelocities {
  XrStructureType type;
  void* XR_MAY_ALIAS next;
  uint32_t velocityCount;
  XrSpaceVelocityData* velocities;
} XrSpaceVelocities;

typedef XrResult(XRAPI_PTR* PFN_xrLocateSpaces)(XrSession session, const XrSpacesLocateInfo* locateInfo,
                                                XrSpaceLocations* spaceLocations);
}
#endif  // XR_VERSION_1_1

#ifndef XR_EXT_local_floor
#define XR_EXT_local_floor 1
#define XR_EXT_local_floor_SPEC_VERSION 1
#define XR_EXT_LOCAL_FLOOR_EXTENSION_NAME "XR_EXT_local_floor"
#endif

#ifndef XR_KHR_locate_spaces
#define XR_KHR_locate_spaces 1
#define XR_KHR_locate_spaces_SPEC_VERSION 1
#define XR_KHR_LOCATE_SPACES_EXTENSION_NAME "XR_KHR_locate_spaces"
typedef XrSpacesLocateInfo XrSpacesLocateInfoKHR;
typedef XrSpaceLocations XrSpaceLocationsKHR;
typedef XrSpaceVelocities XrSpaceVelocitiesKHR;
typedef PFN_xrLocateSpaces PFN_xrLocateSpacesKHR;
#endif

namespace xrc::openxr {
// The API versions this runtime implements, compared without their patch numbers.
inline constexpr XrVersion kApi10 = XR_MAKE_VERSION(1, 0, 0);
inline constexpr XrVersion kApi11 = XR_MAKE_VERSION(1, 1, 0);
inline constexpr XrVersion kRuntimeApiVersion = XR_MAKE_VERSION(1, 1, 41);
// `api` (an app's apiVersion) is at least `since` (major.minor).
inline constexpr bool apiAtLeast(XrVersion api, XrVersion since) {
  return XR_MAKE_VERSION(XR_VERSION_MAJOR(api), XR_VERSION_MINOR(api), 0) >= since;
}
}  // namespace xrc::openxr
