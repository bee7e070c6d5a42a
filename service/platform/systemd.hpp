// The daemon's side of systemd: socket activation and sd_notify state. Outside systemd every
// call is a no-op (no NOTIFY_SOCKET, no LISTEN_FDS), so the daemon runs the same way by hand.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "xrc/result.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::platform {

// The listening socket systemd passed (LISTEN_FDS), if any. More than one fd, or one that is not
// a listening AF_UNIX stream socket, is an error: the unit's .socket file is wrong.
Result<std::optional<UniqueFd>> takeActivatedSocket();

// Formats the notification messages (pure; unit-tested).
std::string readyMessage(const std::string& status);
std::string statusMessage(const std::string& status);
std::string stoppingMessage();
std::string watchdogMessage();

// systemd's watchdog interval for this process (WATCHDOG_USEC, checked against WATCHDOG_PID),
// if the unit set WatchdogSec=.
std::optional<std::chrono::microseconds> watchdogInterval();

// Sends `message` to $NOTIFY_SOCKET when set; returns whether it was delivered.
bool notify(const std::string& message);

}  // namespace xrc::platform
