// The interaction profiles of OpenXR 1.0 (spec section 6.4) and the binding paths each accepts,
// so that xrSuggestInteractionProfileBindings can refuse what no device of a profile has.
#pragma once

#include <string_view>

namespace xrc::openxr {

bool isKnownInteractionProfile(std::string_view profilePath);
// A full binding path ("/user/hand/left/input/trigger/value") or one naming a component without
// its identifier ("/user/hand/left/input/trigger"), as OpenXR allows.
bool isBindingPathOfProfile(std::string_view profilePath, std::string_view bindingPath);
// /user/hand/left, /user/hand/right, /user/head, /user/gamepad, /user/treadmill.
bool isTopLevelUserPath(std::string_view path);

}  // namespace xrc::openxr
