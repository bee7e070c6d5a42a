// Extensions that describe the system or its user: XR_META_headset_id, XR_EXT_user_presence and
// XR_EXT_hand_tracking. What each reports comes from the daemon's backend:
// - headset id: a UUID naming the display the daemon presents (its backend), stable across
//   calls, runs and machines, as the extension asks of a headset model's id;
// - user presence: the headless backend's simulated user always wears the headset, so its
//   sessions learn "present" when they begin; other backends do not report presence (yet), so
//   the system says it does not support it;
// - hand tracking: no backend tracks hands (yet): the system says so and trackers cannot be made;
// - eye gaze interaction: likewise no eye tracker: its profile binds, its pose is never active.
#include <cstring>

#include "entry_points.hpp"

namespace xrc::openxr {

namespace {

// Two 64-bit FNV-1a hashes of `text` as a name-based UUID (version 8, RFC 9562 variant).
XrUuidEXT nameUuid(const std::string& text) {
  auto fnv = [&text](uint64_t hash) {
    for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
    return hash;
  };
  const uint64_t parts[2] = {fnv(0xcbf29ce484222325ull), fnv(0x84222325cbf29ce4ull)};
  XrUuidEXT uuid{};
  std::memcpy(uuid.data, parts, sizeof uuid.data);
  uuid.data[6] = uint8_t((uuid.data[6] & 0x0f) | 0x80);
  uuid.data[8] = uint8_t((uuid.data[8] & 0x3f) | 0x80);
  return uuid;
}

bool reportsUserPresence(const Instance& instance) { return instance.system.backend == "headless"; }

}  // namespace

void fillSystemExtensionProperties(const Instance& instance, XrSystemProperties& properties) {
  for (auto* next = static_cast<XrBaseOutStructure*>(properties.next); next != nullptr; next = next->next) {
    if (next->type == XR_TYPE_SYSTEM_HEADSET_ID_PROPERTIES_META &&
        instance.enabled(XR_META_HEADSET_ID_EXTENSION_NAME)) {
      reinterpret_cast<XrSystemHeadsetIdPropertiesMETA*>(next)->id =
          nameUuid("xr-compositor display: " + instance.system.backend);
    } else if (next->type == XR_TYPE_SYSTEM_USER_PRESENCE_PROPERTIES_EXT &&
               instance.enabled(XR_EXT_USER_PRESENCE_EXTENSION_NAME)) {
      reinterpret_cast<XrSystemUserPresencePropertiesEXT*>(next)->supportsUserPresence =
          reportsUserPresence(instance) ? XR_TRUE : XR_FALSE;
    } else if (next->type == XR_TYPE_SYSTEM_EYE_GAZE_INTERACTION_PROPERTIES_EXT &&
               instance.enabled(XR_EXT_EYE_GAZE_INTERACTION_EXTENSION_NAME)) {
      // No backend tracks eyes yet: the profile can be bound, its pose is never active.
      reinterpret_cast<XrSystemEyeGazeInteractionPropertiesEXT*>(next)->supportsEyeGazeInteraction = XR_FALSE;
    } else if (next->type == XR_TYPE_SYSTEM_HAND_TRACKING_PROPERTIES_EXT &&
               instance.enabled(XR_EXT_HAND_TRACKING_EXTENSION_NAME)) {
      reinterpret_cast<XrSystemHandTrackingPropertiesEXT*>(next)->supportsHandTracking = XR_FALSE;
    }
  }
}

void sessionBegan(Session& session) {
  const Instance& instance = *session.instance;
  if (!instance.enabled(XR_EXT_USER_PRESENCE_EXTENSION_NAME) || !reportsUserPresence(instance)) return;
  XrEventDataBuffer buffer{};
  auto& event = reinterpret_cast<XrEventDataUserPresenceChangedEXT&>(buffer);
  event.type = XR_TYPE_EVENT_DATA_USER_PRESENCE_CHANGED_EXT;
  event.session = fromRaw<XrSession>(session.handle);
  event.isUserPresent = XR_TRUE;
  session.instance->pushEvent(buffer);
}

XrResult XRAPI_CALL CreateHandTrackerEXT(XrSession handle, const XrHandTrackerCreateInfoEXT* info,
                                         XrHandTrackerEXT* tracker) {
  if (!lookup<Session>(handle)) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT) || tracker == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if ((info->hand != XR_HAND_LEFT_EXT && info->hand != XR_HAND_RIGHT_EXT) ||
      info->handJointSet != XR_HAND_JOINT_SET_DEFAULT_EXT) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  return XR_ERROR_FEATURE_UNSUPPORTED;  // supportsHandTracking is false
}

// No tracker is ever made, so every tracker handle is invalid.
XrResult XRAPI_CALL DestroyHandTrackerEXT(XrHandTrackerEXT) { return XR_ERROR_HANDLE_INVALID; }
XrResult XRAPI_CALL LocateHandJointsEXT(XrHandTrackerEXT, const XrHandJointsLocateInfoEXT*, XrHandJointLocationsEXT*) {
  return XR_ERROR_HANDLE_INVALID;
}

}  // namespace xrc::openxr
