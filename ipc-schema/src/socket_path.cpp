#include "xrc/socket_path.hpp"

#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace xrc {

Result<std::string> resolveSocketPath(const std::string& explicitPath) {
  if (!explicitPath.empty()) return explicitPath;
  if (const char* env = std::getenv(kSocketEnv); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  const char* runtimeDir = std::getenv("XDG_RUNTIME_DIR");
  if (runtimeDir == nullptr || *runtimeDir == '\0') {
    return makeError(ErrorCode::invalidArgument, "no socket path: pass --socket, set {} or set XDG_RUNTIME_DIR",
                     kSocketEnv);
  }
  return std::string(runtimeDir) + "/xr-compositor/socket";
}

Result<sockaddr_un> unixSocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return makeError(ErrorCode::invalidArgument, "socket path '{}' must be 1..{} bytes", path,
                     sizeof(address.sun_path) - 1);
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

}  // namespace xrc
