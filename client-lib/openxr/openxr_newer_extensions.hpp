// Extensions newer than Debian 12's OpenXR headers (1.0.20), declared from the registry's values
// (xr.xml): XrUuidEXT, XR_META_headset_id and XR_EXT_user_presence. With headers that have them nothing is
// declared again.
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
