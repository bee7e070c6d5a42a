// Where clients find the daemon: --socket, else $XR_COMPOSITOR_SOCKET, else
// $XDG_RUNTIME_DIR/xr-compositor/socket.
#pragma once

#include <string>

#include "xrc/result.hpp"

namespace xrc {

inline constexpr const char* kSocketEnv = "XR_COMPOSITOR_SOCKET";

// `explicitPath` wins when non-empty.
Result<std::string> resolveSocketPath(const std::string& explicitPath);

}  // namespace xrc
