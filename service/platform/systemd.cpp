#include "systemd.hpp"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <cstring>

namespace xrc::platform {

Result<std::optional<UniqueFd>> takeActivatedSocket() {
  // unset_environment=1: children of the daemon must not think the fds are theirs.
  const int count = sd_listen_fds(1);
  if (count < 0) return makeError(ErrorCode::internal, "sd_listen_fds: {}", std::strerror(-count));
  if (count == 0) return std::optional<UniqueFd>{};
  if (count > 1) {
    for (int i = 0; i < count; ++i) UniqueFd close(SD_LISTEN_FDS_START + i);
    return makeError(ErrorCode::invalidArgument,
                     "systemd passed {} sockets; xr-compositord.socket must have exactly one ListenStream=", count);
  }
  UniqueFd fd(SD_LISTEN_FDS_START);
  if (sd_is_socket_unix(fd.get(), SOCK_STREAM, /*listening=*/1, nullptr, 0) <= 0) {
    return makeError(ErrorCode::invalidArgument,
                     "the socket systemd passed is not a listening AF_UNIX stream socket (check ListenStream=)");
  }
  return std::optional<UniqueFd>(std::move(fd));
}

std::string readyMessage(const std::string& status) { return "READY=1\nSTATUS=" + status; }
std::string statusMessage(const std::string& status) { return "STATUS=" + status; }
std::string stoppingMessage() { return "STOPPING=1\nSTATUS=shutting down"; }
std::string watchdogMessage() { return "WATCHDOG=1"; }

std::optional<std::chrono::microseconds> watchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

bool notify(const std::string& message) { return sd_notify(0, message.c_str()) > 0; }

}  // namespace xrc::platform
