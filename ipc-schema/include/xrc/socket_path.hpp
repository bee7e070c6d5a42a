// Where clients find the daemon: --socket, else $XR_COMPOSITOR_SOCKET, else
// $XDG_RUNTIME_DIR/xr-compositor/socket.
#pragma once

#include <sys/un.h>

#include <string>

#include "xrc/result.hpp"

namespace xrc {

inline constexpr const char* kSocketEnv = "XR_COMPOSITOR_SOCKET";

// `explicitPath` wins when non-empty.
Result<std::string> resolveSocketPath(const std::string& explicitPath);

// The address of the Unix socket at `path`; a path that does not fit (or is empty) is an
// invalidArgument error, never truncated.
Result<sockaddr_un> unixSocketAddress(const std::string& path);

}  // namespace xrc
