#include "interaction_profiles.hpp"

#include <array>

namespace xrc::openxr {

namespace {

// `component` is `leaf` or `leaf` without its last path component (the identifier).
bool matchesComponent(std::string_view leaf, std::string_view component) {
  if (leaf == component) return true;
  const size_t slash = leaf.rfind('/');
  return slash != std::string_view::npos && slash > 0 && leaf.substr(0, slash) == component &&
         leaf.substr(0, 7) == "/input/";
}

}  // namespace

// Profiles of extensions this runtime offers (registry values), besides the core table.
const std::vector<InteractionProfileInfo>& extensionProfiles() {
  static const std::vector<InteractionProfileInfo> profiles = {
      {"/interaction_profiles/ext/eye_gaze_interaction",
       kApi10,
       {"/user/eyes_ext"},
       {{"", "/input/gaze_ext/pose", XR_ACTION_TYPE_POSE_INPUT, kApi10}},
       "XR_EXT_eye_gaze_interaction"},
  };
  return profiles;
}

const InteractionProfileInfo* findInteractionProfile(std::string_view profilePath, const ProfileScope& scope) {
  for (const auto* table : {&interactionProfileTable(), &extensionProfiles()}) {
    for (const InteractionProfileInfo& p : *table) {
      if (p.path != profilePath) continue;
      const bool offered = apiAtLeast(scope.api, p.since) &&
                           (p.extension.empty() || scope.extensions.count(std::string(p.extension)) != 0);
      return offered ? &p : nullptr;
    }
  }
  return nullptr;
}

bool isKnownInteractionProfile(std::string_view profilePath, const ProfileScope& scope) {
  return findInteractionProfile(profilePath, scope) != nullptr;
}

bool isBindingPathOfProfile(std::string_view profilePath, std::string_view bindingPath, const ProfileScope& scope) {
  const XrVersion api = scope.api;
  const InteractionProfileInfo* profile = findInteractionProfile(profilePath, scope);
  if (profile == nullptr) return false;
  for (std::string_view user : profile->userPaths) {
    if (bindingPath.substr(0, user.size()) != user) continue;
    const std::string_view rest = bindingPath.substr(user.size());
    for (const ProfileComponent& component : profile->components) {
      if (!component.userPath.empty() && component.userPath != user) continue;
      if (!apiAtLeast(api, component.since)) continue;
      if (matchesComponent(component.subpath, rest)) return true;
    }
  }
  return false;
}

bool isTopLevelUserPath(std::string_view path) {
  static constexpr std::array<std::string_view, 6> kTopLevel{"/user/hand/left", "/user/hand/right", "/user/head",
                                                             "/user/gamepad",   "/user/treadmill",  "/user/eyes_ext"};
  for (std::string_view p : kTopLevel) {
    if (p == path) return true;
  }
  return false;
}

}  // namespace xrc::openxr
