#include "openxr_input.hpp"

#include <algorithm>
#include <map>

#include "../../log.hpp"
#include "interaction_profiles.hpp"

namespace xrc {

namespace {

// The controllers the daemon forwards (at least these, as the product promises).
constexpr std::array<std::string_view, 5> kForwardedProfiles{
    "/interaction_profiles/khr/simple_controller", "/interaction_profiles/oculus/touch_controller",
    "/interaction_profiles/valve/index_controller", "/interaction_profiles/htc/vive_controller",
    "/interaction_profiles/microsoft/motion_controller"};

constexpr std::array<const char*, kHandCount> kHandPaths{"/user/hand/left", "/user/hand/right"};

// OpenXR 1.0 components of the forwarded profiles a hand can have. A vector2's /x and /y are
// left out: the vector2 carries both, and clients read them from it.
bool forwarded(const openxr::ProfileComponent& c) {
  if (c.since != openxr::kApi10) return false;
  if (c.type == XR_ACTION_TYPE_FLOAT_INPUT && (c.subpath.ends_with("/x") || c.subpath.ends_with("/y"))) {
    return false;
  }
  return true;
}

// "/input/trigger/value" -> "input_trigger_value": a valid, unique action name.
std::string actionName(std::string_view subpath) {
  std::string out(subpath.substr(1));
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

Result<XrAction> createAction(const OpenXrInstance& xr, XrActionSet set, const std::string& name, XrActionType type,
                              const std::array<XrPath, kHandCount>& hands) {
  auto info = oxr::make<XrActionCreateInfo>(XR_TYPE_ACTION_CREATE_INFO);
  std::snprintf(info.actionName, sizeof(info.actionName), "%s", name.c_str());
  std::snprintf(info.localizedActionName, sizeof(info.localizedActionName), "%s", name.c_str());
  info.actionType = type;
  info.countSubactionPaths = uint32_t(hands.size());
  info.subactionPaths = hands.data();
  XrAction action = XR_NULL_HANDLE;
  if (auto s = xr.check(xrCreateAction(set, &info, &action), "xrCreateAction"); !s) return s.error();
  return action;
}

}  // namespace

Result<std::unique_ptr<OpenXrInputBinding>> OpenXrInputBinding::create(const OpenXrInstance& xr, XrSession session,
                                                                       XrSpace stage) {
  auto binding = std::make_unique<OpenXrInputBinding>(xr, session, stage);
  if (auto s = binding->bind(); !s) return s.error();
  return binding;
}

OpenXrInputBinding::~OpenXrInputBinding() {
  for (auto& space : gripSpaces_) space.reset();
  for (auto& space : aimSpaces_) space.reset();
  if (set_ != XR_NULL_HANDLE) xrDestroyActionSet(set_);  // and its actions
}

Status OpenXrInputBinding::bind() {
  const XrInstance inst = xr_.handle();
  for (size_t h = 0; h < kHandCount; ++h) {
    if (auto s = xr_.check(xrStringToPath(inst, kHandPaths[h], &hands_[h]), "xrStringToPath"); !s) return s;
  }
  auto setInfo = oxr::make<XrActionSetCreateInfo>(XR_TYPE_ACTION_SET_CREATE_INFO);
  std::snprintf(setInfo.actionSetName, sizeof(setInfo.actionSetName), "xrc_forwarded");
  std::snprintf(setInfo.localizedActionSetName, sizeof(setInfo.localizedActionSetName), "xr-compositor clients");
  if (auto s = xr_.check(xrCreateActionSet(inst, &setInfo, &set_), "xrCreateActionSet"); !s) return s;

  // One action per distinct component, one per pose kind, one for haptics.
  std::map<std::string, XrAction> bySubpath;
  for (std::string_view profilePath : kForwardedProfiles) {
    const auto* profile = openxr::findInteractionProfile(profilePath, {});
    if (profile == nullptr) continue;
    for (const auto& c : profile->components) {
      if (!forwarded(c) || c.type == XR_ACTION_TYPE_POSE_INPUT || c.type == XR_ACTION_TYPE_VIBRATION_OUTPUT) continue;
      const std::string subpath(c.subpath);
      if (bySubpath.count(subpath)) continue;
      auto action = createAction(xr_, set_, actionName(subpath), c.type, hands_);
      if (!action) return action.error();
      bySubpath[subpath] = action.value();
      components_.push_back(Component{subpath, c.type, action.value()});
    }
  }
  auto grip = createAction(xr_, set_, "grip_pose", XR_ACTION_TYPE_POSE_INPUT, hands_);
  auto aim = createAction(xr_, set_, "aim_pose", XR_ACTION_TYPE_POSE_INPUT, hands_);
  auto haptic = createAction(xr_, set_, "haptic", XR_ACTION_TYPE_VIBRATION_OUTPUT, hands_);
  if (!grip || !aim || !haptic) return !grip ? grip.error() : !aim ? aim.error() : haptic.error();
  grip_ = grip.value();
  aim_ = aim.value();
  haptic_ = haptic.value();

  for (std::string_view profilePath : kForwardedProfiles) {
    const auto* profile = openxr::findInteractionProfile(profilePath, {});
    if (profile == nullptr) continue;
    std::vector<XrActionSuggestedBinding> bindings;
    for (const auto& c : profile->components) {
      if (!forwarded(c)) continue;
      XrAction action = c.subpath == "/input/grip/pose"           ? grip_
                        : c.subpath == "/input/aim/pose"          ? aim_
                        : c.subpath == "/output/haptic"           ? haptic_
                        : bySubpath.count(std::string(c.subpath)) ? bySubpath[std::string(c.subpath)]
                                                                  : XR_NULL_HANDLE;
      if (action == XR_NULL_HANDLE) continue;
      for (const char* hand : kHandPaths) {
        if (!c.userPath.empty() && c.userPath != hand) continue;
        XrPath path = XR_NULL_PATH;
        const std::string full = std::string(hand) + std::string(c.subpath);
        if (auto s = xr_.check(xrStringToPath(inst, full.c_str(), &path), "xrStringToPath"); !s) return s;
        bindings.push_back({action, path});
      }
    }
    XrPath profileAtom = XR_NULL_PATH;
    const std::string profileText(profilePath);
    if (auto s = xr_.check(xrStringToPath(inst, profileText.c_str(), &profileAtom), "xrStringToPath"); !s) return s;
    auto suggested = oxr::make<XrInteractionProfileSuggestedBinding>(XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING);
    suggested.interactionProfile = profileAtom;
    suggested.countSuggestedBindings = uint32_t(bindings.size());
    suggested.suggestedBindings = bindings.data();
    // A runtime without one of these profiles refuses its suggestion; the others still count.
    if (XrResult r = xrSuggestInteractionProfileBindings(inst, &suggested); XR_FAILED(r)) {
      log::warn("the OpenXR runtime refused bindings for {}: {}", profilePath, oxr::resultName(inst, r));
    }
  }
  auto attach = oxr::make<XrSessionActionSetsAttachInfo>(XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO);
  attach.countActionSets = 1;
  attach.actionSets = &set_;
  if (auto s = xr_.check(xrAttachSessionActionSets(session_, &attach), "xrAttachSessionActionSets"); !s) return s;
  for (size_t h = 0; h < kHandCount; ++h) {
    for (auto [action, out] : {std::pair{grip_, &gripSpaces_[h]}, std::pair{aim_, &aimSpaces_[h]}}) {
      auto info = oxr::make<XrActionSpaceCreateInfo>(XR_TYPE_ACTION_SPACE_CREATE_INFO);
      info.action = action;
      info.subactionPath = hands_[h];
      info.poseInActionSpace.orientation.w = 1;
      XrSpace space = XR_NULL_HANDLE;
      if (auto s = xr_.check(xrCreateActionSpace(session_, &info, &space), "xrCreateActionSpace"); !s) return s;
      *out = oxr::SpaceOwner(space);
    }
  }
  return {};
}

bool OpenXrInputBinding::hasComponent(const std::string& profile, size_t hand, const Component& component) const {
  const auto* info = openxr::findInteractionProfile(profile, {});
  if (info == nullptr) return false;
  return std::any_of(info->components.begin(), info->components.end(), [&](const openxr::ProfileComponent& c) {
    return c.subpath == component.subpath && c.type == component.type &&
           (c.userPath.empty() || c.userPath == kHandPaths[hand]);
  });
}

void OpenXrInputBinding::sync(XrTime displayTime) {
  const XrInstance inst = xr_.handle();
  auto active = XrActiveActionSet{set_, XR_NULL_PATH};
  auto syncInfo = oxr::make<XrActionsSyncInfo>(XR_TYPE_ACTIONS_SYNC_INFO);
  syncInfo.countActiveActionSets = 1;
  syncInfo.activeActionSets = &active;
  InputSnapshot next;
  const XrResult synced = xrSyncActions(session_, &syncInfo);
  if (synced == XR_SUCCESS) {
    next.present = true;
    for (size_t h = 0; h < kHandCount; ++h) {
      HandInput& hand = next.hands[h];
      auto current = oxr::make<XrInteractionProfileState>(XR_TYPE_INTERACTION_PROFILE_STATE);
      if (XR_FAILED(xrGetCurrentInteractionProfile(session_, hands_[h], &current)) ||
          current.interactionProfile == XR_NULL_PATH) {
        continue;
      }
      char text[XR_MAX_PATH_LENGTH] = {};
      uint32_t length = 0;
      if (XR_FAILED(xrPathToString(inst, current.interactionProfile, sizeof(text), &length, text))) continue;
      hand.profile = text;
      auto changedNs = [&](XrTime t) {
        auto ns = t > 0 ? xr_.toMonotonicNs(t) : Result<int64_t>(0);
        return ns ? ns.value() : 0;
      };
      for (const Component& c : components_) {
        if (!hasComponent(hand.profile, h, c)) continue;
        auto get = oxr::make<XrActionStateGetInfo>(XR_TYPE_ACTION_STATE_GET_INFO);
        get.action = c.action;
        get.subactionPath = hands_[h];
        if (c.type == XR_ACTION_TYPE_BOOLEAN_INPUT) {
          auto s = oxr::make<XrActionStateBoolean>(XR_TYPE_ACTION_STATE_BOOLEAN);
          if (XR_SUCCEEDED(xrGetActionStateBoolean(session_, &get, &s)) && s.isActive) {
            hand.components.push_back({c.subpath, s.currentState ? 1.0f : 0.0f, 0, changedNs(s.lastChangeTime)});
          }
        } else if (c.type == XR_ACTION_TYPE_FLOAT_INPUT) {
          auto s = oxr::make<XrActionStateFloat>(XR_TYPE_ACTION_STATE_FLOAT);
          if (XR_SUCCEEDED(xrGetActionStateFloat(session_, &get, &s)) && s.isActive) {
            hand.components.push_back({c.subpath, s.currentState, 0, changedNs(s.lastChangeTime)});
          }
        } else if (c.type == XR_ACTION_TYPE_VECTOR2F_INPUT) {
          auto s = oxr::make<XrActionStateVector2f>(XR_TYPE_ACTION_STATE_VECTOR2F);
          if (XR_SUCCEEDED(xrGetActionStateVector2f(session_, &get, &s)) && s.isActive) {
            hand.components.push_back({c.subpath, s.currentState.x, s.currentState.y, changedNs(s.lastChangeTime)});
          }
        }
      }
      auto locate = [&](XrSpace space) -> std::optional<Pose> {
        auto location = oxr::make<XrSpaceLocation>(XR_TYPE_SPACE_LOCATION);
        constexpr XrSpaceLocationFlags kValid =
            XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
        if (XR_FAILED(xrLocateSpace(space, stage_, displayTime, &location)) ||
            (location.locationFlags & kValid) != kValid) {
          return std::nullopt;
        }
        Pose p;
        p.orientation = {location.pose.orientation.x, location.pose.orientation.y, location.pose.orientation.z,
                         location.pose.orientation.w};
        p.position = {location.pose.position.x, location.pose.position.y, location.pose.position.z};
        return p;
      };
      hand.grip = locate(gripSpaces_[h].get());
      hand.aim = locate(aimSpaces_[h].get());
    }
  } else if (synced != XR_SESSION_NOT_FOCUSED) {
    log::debug("xrSyncActions: {}", oxr::resultName(inst, synced));
  }
  Lock lock(mutex_);
  snapshot_ = std::move(next);
}

InputSnapshot OpenXrInputBinding::snapshot() const {
  Lock lock(mutex_);
  return snapshot_;
}

Status OpenXrInputBinding::applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
  if (hand >= kHandCount || output != "/output/haptic") {
    return makeError(ErrorCode::unsupported, "the OpenXR runtime's controllers have only /output/haptic");
  }
  auto info = oxr::make<XrHapticActionInfo>(XR_TYPE_HAPTIC_ACTION_INFO);
  info.action = haptic_;
  info.subactionPath = hands_[hand];
  auto vibration = oxr::make<XrHapticVibration>(XR_TYPE_HAPTIC_VIBRATION);
  vibration.duration = pulse.durationNs;
  vibration.frequency = pulse.frequency;
  vibration.amplitude = pulse.amplitude;
  return xr_.check(xrApplyHapticFeedback(session_, &info, reinterpret_cast<const XrHapticBaseHeader*>(&vibration)),
                   "xrApplyHapticFeedback");
}

Status OpenXrInputBinding::stopHaptic(uint32_t hand, const std::string& output) {
  if (hand >= kHandCount || output != "/output/haptic") {
    return makeError(ErrorCode::unsupported, "the OpenXR runtime's controllers have only /output/haptic");
  }
  auto info = oxr::make<XrHapticActionInfo>(XR_TYPE_HAPTIC_ACTION_INFO);
  info.action = haptic_;
  info.subactionPath = hands_[hand];
  return xr_.check(xrStopHapticFeedback(session_, &info), "xrStopHapticFeedback");
}

}  // namespace xrc
