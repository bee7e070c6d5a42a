#include "xrc/socket_path.hpp"

#include <cstdlib>

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

}  // namespace xrc
