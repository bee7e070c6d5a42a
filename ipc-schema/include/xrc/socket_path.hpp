// Where clients find the daemon: --socket, else $XR_COMPOSITOR_SOCKET, else
// $XDG_RUNTIME_DIR/xr-compositor/socket.
#pragma once

#include <sys/un.h>

#include <chrono>
#include <string>

#include "xrc/result.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc {

inline constexpr const char* kSocketEnv = "XR_COMPOSITOR_SOCKET";

// `explicitPath` wins when non-empty.
Result<std::string> resolveSocketPath(const std::string& explicitPath);

// The address of the Unix socket at `path`; a path that does not fit (or is empty) is an
// invalidArgument error, never truncated.
Result<sockaddr_un> unixSocketAddress(const std::string& path);

// A blocking connection to the Unix socket at `path`, made without blocking: a listener whose
// backlog is full (a daemon that stopped accepting) is retried until `timeout`, then a
// `timeout` error says so, instead of hanging in connect(). No listener: `notFound`.
Result<UniqueFd> connectUnixSocket(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace xrc
