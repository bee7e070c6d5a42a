// Leveled logging. On a terminal (or any plain stderr): "xr-compositord [level] message" lines.
// Under systemd (stderr is the journal stream named by $JOURNAL_STREAM): structured journal
// entries with PRIORITY and, for client events, XRC_CLIENT_ID / XRC_CLIENT_PID / XRC_CLIENT_NAME.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xrc::log {

enum class Level { trace, debug, info, warn, error };

void setLevel(Level level);
bool parseLevel(std::string_view text, Level& out);
bool enabled(Level level);
// Which client a message is about (journal fields; absent for daemon-wide messages).
struct ClientFields {
  uint32_t id = 0;
  uint32_t pid = 0;
  std::string name;
};

void write(Level level, std::string_view message, const ClientFields* client = nullptr);
// The journal entry's fields for a message (pure; unit-tested): MESSAGE, PRIORITY (syslog
// levels), SYSLOG_IDENTIFIER and the client's fields.
std::vector<std::string> journalFields(Level level, std::string_view message, const ClientFields* client);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void client(Level level, const ClientFields& fields, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...), &fields);
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::debug, f, std::forward<Args>(a)...);
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::info, f, std::forward<Args>(a)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::warn, f, std::forward<Args>(a)...);
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) {
  at(Level::error, f, std::forward<Args>(a)...);
}

}  // namespace xrc::log
