#include "interaction_profiles.hpp"

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

namespace xrc::openxr {

namespace {

struct Profile {
  std::string_view path;
  std::vector<std::string_view> userPaths;
  std::vector<std::string_view> components;  // below each user path: "/input/x/click"
  // Components only one hand has (touch controller buttons): {user path, component}.
  std::vector<std::pair<std::string_view, std::string_view>> handSpecific;
};

const std::vector<Profile>& profiles() {
  static const std::vector<Profile> table = [] {
    const std::vector<std::string_view> hands{"/user/hand/left", "/user/hand/right"};
    const std::vector<std::string_view> poses{"/input/grip/pose", "/input/aim/pose"};
    auto join = [](std::vector<std::string_view> a, std::initializer_list<std::string_view> b) {
      a.insert(a.end(), b);
      return a;
    };
    std::vector<Profile> t;
    t.push_back({"/interaction_profiles/khr/simple_controller", hands,
                 join(poses, {"/input/select/click", "/input/menu/click", "/output/haptic"}),
                 {}});
    t.push_back({"/interaction_profiles/google/daydream_controller", hands,
                 join(poses, {"/input/select/click", "/input/trackpad/x", "/input/trackpad/y", "/input/trackpad/click",
                              "/input/trackpad/touch"}),
                 {}});
    t.push_back({"/interaction_profiles/htc/vive_controller", hands,
                 join(poses, {"/input/system/click", "/input/squeeze/click", "/input/menu/click",
                              "/input/trigger/click", "/input/trigger/value", "/input/trackpad/x", "/input/trackpad/y",
                              "/input/trackpad/click", "/input/trackpad/touch", "/output/haptic"}),
                 {}});
    t.push_back({"/interaction_profiles/htc/vive_pro",
                 {"/user/head"},
                 {"/input/system/click", "/input/volume_up/click", "/input/volume_down/click", "/input/mute_mic/click"},
                 {}});
    t.push_back({"/interaction_profiles/microsoft/motion_controller", hands,
                 join(poses, {"/input/menu/click", "/input/squeeze/click", "/input/trigger/value",
                              "/input/thumbstick/x", "/input/thumbstick/y", "/input/thumbstick/click",
                              "/input/trackpad/x", "/input/trackpad/y", "/input/trackpad/click", "/input/trackpad/touch",
                              "/output/haptic"}),
                 {}});
    t.push_back({"/interaction_profiles/microsoft/xbox_controller",
                 {"/user/gamepad"},
                 {"/input/menu/click", "/input/view/click", "/input/a/click", "/input/b/click", "/input/x/click",
                  "/input/y/click", "/input/dpad_down/click", "/input/dpad_right/click", "/input/dpad_up/click",
                  "/input/dpad_left/click", "/input/shoulder_left/click", "/input/shoulder_right/click",
                  "/input/thumbstick_left/click", "/input/thumbstick_right/click", "/input/trigger_left/value",
                  "/input/trigger_right/value", "/input/thumbstick_left/x", "/input/thumbstick_left/y",
                  "/input/thumbstick_right/x", "/input/thumbstick_right/y", "/output/haptic_left",
                  "/output/haptic_right", "/output/haptic_left_trigger", "/output/haptic_right_trigger"},
                 {}});
    t.push_back({"/interaction_profiles/oculus/go_controller", hands,
                 join(poses, {"/input/system/click", "/input/trigger/click", "/input/back/click", "/input/trackpad/x",
                              "/input/trackpad/y", "/input/trackpad/click", "/input/trackpad/touch"}),
                 {}});
    t.push_back({"/interaction_profiles/oculus/touch_controller", hands,
                 join(poses, {"/input/squeeze/value", "/input/trigger/value", "/input/trigger/touch",
                              "/input/thumbstick/x", "/input/thumbstick/y", "/input/thumbstick/click",
                              "/input/thumbstick/touch", "/input/thumbrest/touch", "/output/haptic"}),
                 {{"/user/hand/left", "/input/x/click"},
                  {"/user/hand/left", "/input/x/touch"},
                  {"/user/hand/left", "/input/y/click"},
                  {"/user/hand/left", "/input/y/touch"},
                  {"/user/hand/left", "/input/menu/click"},
                  {"/user/hand/right", "/input/a/click"},
                  {"/user/hand/right", "/input/a/touch"},
                  {"/user/hand/right", "/input/b/click"},
                  {"/user/hand/right", "/input/b/touch"},
                  {"/user/hand/right", "/input/system/click"}}});
    t.push_back({"/interaction_profiles/valve/index_controller", hands,
                 join(poses, {"/input/system/click", "/input/system/touch", "/input/a/click", "/input/a/touch",
                              "/input/b/click", "/input/b/touch", "/input/squeeze/value", "/input/squeeze/force",
                              "/input/trigger/click", "/input/trigger/value", "/input/trigger/touch",
                              "/input/thumbstick/x", "/input/thumbstick/y", "/input/thumbstick/click",
                              "/input/thumbstick/touch", "/input/trackpad/x", "/input/trackpad/y",
                              "/input/trackpad/force", "/input/trackpad/touch", "/output/haptic"}),
                 {}});
    return t;
  }();
  return table;
}

const Profile* findProfile(std::string_view path) {
  for (const Profile& p : profiles()) {
    if (p.path == path) return &p;
  }
  return nullptr;
}

// `component` is `leaf` or `leaf` without its last path component (the identifier).
bool matchesComponent(std::string_view leaf, std::string_view component) {
  if (leaf == component) return true;
  const size_t slash = leaf.rfind('/');
  return slash != std::string_view::npos && slash > 0 && leaf.substr(0, slash) == component &&
         leaf.substr(0, 7) == "/input/";
}

}  // namespace

bool isKnownInteractionProfile(std::string_view profilePath) { return findProfile(profilePath) != nullptr; }

bool isBindingPathOfProfile(std::string_view profilePath, std::string_view bindingPath) {
  const Profile* profile = findProfile(profilePath);
  if (profile == nullptr) return false;
  for (std::string_view user : profile->userPaths) {
    if (bindingPath.substr(0, user.size()) != user) continue;
    const std::string_view rest = bindingPath.substr(user.size());
    for (std::string_view component : profile->components) {
      if (matchesComponent(component, rest)) return true;
    }
    for (const auto& [handUser, component] : profile->handSpecific) {
      if (handUser == user && matchesComponent(component, rest)) return true;
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
