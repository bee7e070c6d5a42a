#include "xrc/socket_path.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

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

Result<UniqueFd> connectUnixSocket(const std::string& path, std::chrono::milliseconds timeout) {
  auto addr = unixSocketAddress(path);
  if (!addr) return addr.error();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return makeError(ErrorCode::internal, "socket(): {}", std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un)) == 0) {
      const int flags = ::fcntl(fd.get(), F_GETFL);
      if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
        return makeError(ErrorCode::internal, "fcntl(): {}", std::strerror(errno));
      }
      return fd;
    }
    // A Unix socket's connect() never completes later: EAGAIN means the backlog is full.
    if (errno != EAGAIN) {
      return makeError(ErrorCode::notFound, "cannot reach xr-compositord at '{}': {} (is the daemon running?)", path,
                       std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return makeError(ErrorCode::timeout,
                       "xr-compositord at '{}' is not accepting connections: its backlog stayed full for {} ms (is it "
                       "hung?)",
                       path, timeout.count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace xrc
