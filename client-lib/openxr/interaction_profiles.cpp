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

const InteractionProfileInfo* findInteractionProfile(std::string_view profilePath, XrVersion api) {
  for (const InteractionProfileInfo& p : interactionProfileTable()) {
    if (p.path == profilePath) return apiAtLeast(api, p.since) ? &p : nullptr;
  }
  return nullptr;
}

bool isKnownInteractionProfile(std::string_view profilePath, XrVersion api) {
  return findInteractionProfile(profilePath, api) != nullptr;
}

bool isBindingPathOfProfile(std::string_view profilePath, std::string_view bindingPath, XrVersion api) {
  const InteractionProfileInfo* profile = findInteractionProfile(profilePath, api);
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
  static constexpr std::array<std::string_view, 5> kTopLevel{"/user/hand/left", "/user/hand/right", "/user/head",
                                                             "/user/gamepad", "/user/treadmill"};
  for (std::string_view p : kTopLevel) {
    if (p == path) return true;
  }
  return false;
}

}  // namespace xrc::openxr
