// Leveled logging to stderr ("[level] message"); the journal integration comes with the systemd work.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace xrc::log {

enum class Level { trace, debug, info, warn, error };

void setLevel(Level level);
bool parseLevel(std::string_view text, Level& out);
bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
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
