// The interaction profiles of OpenXR 1.0 and 1.1 (registry table in interaction_profile_table.cpp)
// and the binding paths each accepts, so that xrSuggestInteractionProfileBindings can refuse what
// no device of a profile has. An app sees the profiles and components of the API version its
// instance was created with.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "openxr_1_1.hpp"

namespace xrc::openxr {

struct ProfileComponent {
  std::string_view userPath;  // empty: every user path of the profile has it
  std::string_view subpath;   // "/input/trigger/value"
  XrActionType type;
  XrVersion since;
};

struct InteractionProfileInfo {
  std::string_view path;
  XrVersion since;
  std::vector<std::string_view> userPaths;
  std::vector<ProfileComponent> components;
  std::string_view extension = {};  // non-empty: offered only with this extension enabled
};

// What an app may bind to: its API version and enabled extensions.
struct ProfileScope {
  XrVersion api = kApi10;
  std::set<std::string> extensions = {};
};

const std::vector<InteractionProfileInfo>& interactionProfileTable();
const InteractionProfileInfo* findInteractionProfile(std::string_view profilePath, const ProfileScope& scope);

bool isKnownInteractionProfile(std::string_view profilePath, const ProfileScope& scope = {});
// A full binding path ("/user/hand/left/input/trigger/value") or one naming a component without
// its identifier ("/user/hand/left/input/trigger"), as OpenXR allows.
bool isBindingPathOfProfile(std::string_view profilePath, std::string_view bindingPath, const ProfileScope& scope = {});
// /user/hand/left, /user/hand/right, /user/head, /user/gamepad, /user/treadmill, /user/eyes_ext.
bool isTopLevelUserPath(std::string_view path);

}  // namespace xrc::openxr
