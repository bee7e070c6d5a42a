#include "log.hpp"

#include <atomic>
#include <cstdio>

namespace xrc::log {
namespace {
std::atomic<Level> gLevel{Level::info};
const char* name(Level level) {
  switch (level) {
    case Level::trace:
      return "trace";
    case Level::debug:
      return "debug";
    case Level::info:
      return "info";
    case Level::warn:
      return "warn";
    case Level::error:
      return "error";
  }
  return "?";
}
}  // namespace

void setLevel(Level level) { gLevel = level; }
bool enabled(Level level) { return level >= gLevel.load(std::memory_order_relaxed); }

bool parseLevel(std::string_view text, Level& out) {
  for (Level l : {Level::trace, Level::debug, Level::info, Level::warn, Level::error}) {
    if (text == name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

void write(Level level, std::string_view message) {
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "xr-compositord [%s] %.*s\n", name(level), int(message.size()), message.data());
}

}  // namespace xrc::log
