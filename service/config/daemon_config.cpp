#include <sched.h>

#include "daemon_config.hpp"

#include "xrc/protocol_rules.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../gpu/queue_priority.hpp"
#include "../log.hpp"
#include "../platform/cpu_priority.hpp"

namespace xrc {

static_assert(kMaxCpus == CPU_SETSIZE, "rpc_cpu's bound is what a cpu_set_t can name");

namespace {

bool oneOf(const std::string& value, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (value == a) return true;
  }
  return false;
}

std::string where(const std::string& source, const toml::node& node) {
  return fmt::format("{}:{}", source, node.source().begin.line);
}

std::string limitNames() {
  std::string out;
  for (const LimitKey& k : limitKeys()) out += fmt::format("{}{}", out.empty() ? "" : ", ", k.key);
  return out;
}

}  // namespace

bool parseViewSize(const std::string& text, uint32_t& width, uint32_t& height) {
  unsigned a = 0, b = 0;
  char x = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &a, &x, &b, &rest) != 3 || x != 'x' || a < 1 || b < 1 || a > 8192 ||
      b > 8192) {
    return false;
  }
  width = a;
  height = b;
  return true;
}

namespace {

// What rpc_cpu may be, for every message that refuses a value.
std::string rpcCpuRule() { return fmt::format("must be auto, any or a CPU number below {}", kMaxCpus); }

}  // namespace

Result<int64_t> parseRpcCpu(std::string_view text) {
  if (text == "auto") return kRpcCpuAuto;
  if (text == "any") return kRpcCpuAny;
  int64_t cpu = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, cpu);
  if (text.empty() || ec != std::errc{} || rest != end || cpu < kRpcCpuAny || cpu >= kMaxCpus) {
    return makeError(ErrorCode::invalidArgument, "{} (got '{}')", rpcCpuRule(), std::string(text.substr(0, 40)));
  }
  return cpu;
}

Status validateConfig(const DaemonConfig& c, std::string_view p) {
  auto name = [&](const char* cli, const char* file) { return fmt::format("{}{}", p, p == "--" ? cli : file); };
  if (c.backend != "headless" && c.backend != "window" && c.backend != "openxr") {
    return makeError(ErrorCode::invalidArgument, "{}: unknown backend '{}' (available: headless, window, openxr)",
                     name("backend", "backend"), c.backend);
  }
  if (!(c.refreshHz >= 1.0 && c.refreshHz <= 1000.0)) {
    return makeError(ErrorCode::invalidArgument, "{} must be within 1..1000 (got {})", name("refresh-hz", "refresh_hz"),
                     c.refreshHz);
  }
  if (log::Level level; !log::parseLevel(c.logLevel, level)) {
    return makeError(ErrorCode::invalidArgument, "{} must be one of trace, debug, info, warn, error (got '{}')",
                     name("log-level", "log_level"), c.logLevel);
  }
  if (uint32_t w, h; !parseViewSize(c.viewSize, w, h)) {
    return makeError(ErrorCode::invalidArgument, "{} must be WIDTHxHEIGHT within 1..8192 (got '{}')",
                     name("view-size", "view_size"), c.viewSize);
  }
  if (!oneOf(c.syncMode, {"auto", "host", "binary", "timeline"})) {
    return makeError(ErrorCode::invalidArgument, "{} must be auto, host or binary (got '{}')",
                     name("sync-mode", "sync_mode"), c.syncMode);
  }
  if (auto modes = parseBlendModes(c.environmentBlendModes); !modes) {
    return makeError(ErrorCode::invalidArgument, "{}: {}", name("environment-blend-modes", "environment_blend_modes"),
                     modes.error().message);
  }
  if (!oneOf(c.mirror, {"none", "window"})) {
    return makeError(ErrorCode::invalidArgument, "{} must be none or window (got '{}')", name("mirror", "mirror"),
                     c.mirror);
  }
  if (!oneOf(c.headMotion, {"still", "sway"})) {
    return makeError(ErrorCode::invalidArgument, "{} must be still or sway (got '{}')",
                     name("head-motion", "head_motion"), c.headMotion);
  }
  if (!oneOf(c.compose, {"on-read", "every-frame"})) {
    return makeError(ErrorCode::invalidArgument, "{} must be on-read or every-frame (got '{}')",
                     name("compose", "compose"), c.compose);
  }
  if (gpu::QueuePriority parsed; !gpu::parseQueuePriority(c.queuePriority, parsed)) {
    return makeError(ErrorCode::invalidArgument, "{} must be low, medium, high or realtime (got '{}')",
                     name("queue-priority", "queue_priority"), c.queuePriority);
  }
  if (c.nice < platform::kLowestNice || c.nice > platform::kHighestNice) {
    return makeError(ErrorCode::invalidArgument, "{} must be within {}..{} (got {})", name("nice", "nice"),
                     platform::kLowestNice, platform::kHighestNice, c.nice);
  }
  if (c.rpcCpu < kRpcCpuAuto || c.rpcCpu >= kMaxCpus) {
    return makeError(ErrorCode::invalidArgument, "{} {} (got {})", name("rpc-cpu", "rpc_cpu"), rpcCpuRule(), c.rpcCpu);
  }
  if (!oneOf(c.hostCopies, {"auto", "off"})) {
    return makeError(ErrorCode::invalidArgument, "{} must be auto or off (got '{}')",
                     name("host-copies", "host_copies"), c.hostCopies);
  }
  // An integer option within 0..max: the first one outside names itself, its range and its value.
  struct Bounded {
    int64_t value, max;
    const char *cli, *file;
  };
  for (const Bounded& b :
       {Bounded{c.hostCopyMaxKib, kMaxHostCopyKib, "host-copy-max-kib", "host_copy_max_kib"},
        Bounded{c.shutdownGraceMs, 60000, "shutdown-grace-ms", "shutdown_grace_ms"},
        Bounded{c.copyBatchUs, kMaxCopyBatchUs, "copy-batch-us", "copy_batch_us"},
        Bounded{c.copyBatchBeforeLatchUs, kMaxCopyBatchUs, "copy-batch-before-latch-us", "copy_batch_before_latch_us"},
        Bounded{c.copyBatchBeforeLatchMaxUs, kMaxCopyBatchUs, "copy-batch-before-latch-max-us",
                "copy_batch_before_latch_max_us"},
        Bounded{c.copyBatchCopiesPerSubmission, kMaxCopiesPerSubmission, "copy-batch-copies-per-submission",
                "copy_batch_copies_per_submission"}}) {
    if (b.value < 0 || b.value > b.max) {
      return makeError(ErrorCode::invalidArgument, "{} must be within 0..{} (got {})", name(b.cli, b.file), b.max,
                       b.value);
    }
  }
  return validateLimits(c.limits, p);
}

Status applyToml(std::string_view text, const std::string& source, DaemonConfig& config) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return makeError(ErrorCode::invalidArgument, "{}:{}:{}: {}", source, e.source().begin.line, e.source().begin.column,
                     e.description());
  }
  DaemonConfig next = config;
  for (auto&& [key, node] : table) {
    const std::string k(key.str());
    auto text = [&](std::string& out) -> Status {
      if (!node.is_string()) {
        return makeError(ErrorCode::invalidArgument, "{}: '{}' must be a string", where(source, node), k);
      }
      out = *node.value<std::string>();
      return {};
    };
    auto integer = [&](int64_t& out) -> Status {
      if (!node.is_integer()) {
        return makeError(ErrorCode::invalidArgument, "{}: '{}' must be an integer", where(source, node), k);
      }
      out = *node.value<int64_t>();
      return {};
    };
    auto flag = [&](bool& out) -> Status {
      if (!node.is_boolean()) {
        return makeError(ErrorCode::invalidArgument, "{}: '{}' must be true or false", where(source, node), k);
      }
      out = *node.value<bool>();
      return {};
    };
    Status s;
    if (k == "backend") {
      s = text(next.backend);
    } else if (k == "socket") {
      s = text(next.socket);
    } else if (k == "log_level") {
      s = text(next.logLevel);
    } else if (k == "view_size") {
      s = text(next.viewSize);
    } else if (k == "sync_mode") {
      s = text(next.syncMode);
    } else if (k == "device_uuid") {
      s = text(next.deviceUuid);
    } else if (k == "environment_blend_modes") {
      s = text(next.environmentBlendModes);
    } else if (k == "mirror") {
      s = text(next.mirror);
    } else if (k == "head_motion") {
      s = text(next.headMotion);
    } else if (k == "compose") {
      s = text(next.compose);
    } else if (k == "queue_priority") {
      s = text(next.queuePriority);
    } else if (k == "host_copies") {
      s = text(next.hostCopies);
    } else if (k == "refresh_hz") {
      if (!node.is_number()) {
        return makeError(ErrorCode::invalidArgument, "{}: 'refresh_hz' must be a number", where(source, node));
      }
      next.refreshHz = *node.value<double>();
    } else if (k == "copy_batch_copies_per_submission") {
      s = integer(next.copyBatchCopiesPerSubmission);
    } else if (k == "openxr_overlay") {
      s = flag(next.openxrOverlay);
    } else if (k == "reprojection") {
      s = flag(next.reprojection);
    } else if (k == "shutdown_grace_ms") {
      s = integer(next.shutdownGraceMs);
    } else if (k == "copy_batch_us") {
      s = integer(next.copyBatchUs);
    } else if (k == "nice") {
      s = integer(next.nice);
    } else if (k == "rpc_cpu") {
      // A word or a number, read by the rules --rpc-cpu's text is (-1 still says any).
      if (!node.is_string() && !node.is_integer()) {
        return makeError(ErrorCode::invalidArgument, "{}: 'rpc_cpu' must be \"auto\", \"any\" or an integer",
                         where(source, node));
      }
      auto parsed = parseRpcCpu(node.is_string() ? *node.value<std::string>() : std::to_string(*node.value<int64_t>()));
      if (!parsed)
        return makeError(ErrorCode::invalidArgument, "{}: rpc_cpu {}", where(source, node), parsed.error().message);
      next.rpcCpu = parsed.value();
    } else if (k == "host_copy_max_kib") {
      s = integer(next.hostCopyMaxKib);
    } else if (k == "copy_batch_before_latch_us") {
      s = integer(next.copyBatchBeforeLatchUs);
    } else if (k == "copy_batch_before_latch_max_us") {
      s = integer(next.copyBatchBeforeLatchMaxUs);
    } else if (const LimitKey* limit = findLimitKey(k)) {
      s = integer(next.limits.*limit->member);
    } else {
      return makeError(
          ErrorCode::invalidArgument,
          "{}: unknown key '{}' (known: backend, socket, refresh_hz, log_level, view_size, sync_mode, "
          "device_uuid, shutdown_grace_ms, copy_batch_us, copy_batch_before_latch_us, copy_batch_before_latch_max_us, "
          "copy_batch_copies_per_submission, mirror, "
          "head_motion, compose, environment_blend_modes, queue_priority, nice, rpc_cpu, host_copies, "
          "host_copy_max_kib, "
          "reprojection, "
          "openxr_overlay, or a limit: {})",
          where(source, node), k, limitNames());
    }
    if (!s) return s;
    // Range checks right away, so the message can name this file's line.
    if (auto v = validateConfig(next, ""); !v) {
      return makeError(ErrorCode::invalidArgument, "{}: {}", where(source, node), v.error().message);
    }
  }
  config = next;
  return {};
}

std::vector<std::string> defaultConfigFiles() {
  std::vector<std::string> files{"/etc/xr-compositor/config.toml"};
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg != nullptr && *xdg == '/') {
    files.push_back(std::string(xdg) + "/xr-compositor/config.toml");
  } else if (home != nullptr && *home != '\0') {
    files.push_back(std::string(home) + "/.config/xr-compositor/config.toml");
  }
  return files;
}

Result<DaemonConfig> loadConfigFiles(const std::vector<std::string>& files, DaemonConfig base) {
  for (const std::string& file : files) {
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
      return makeError(ErrorCode::invalidArgument, "configuration file '{}' is not a regular file", file);
    }
    std::ifstream in(file);
    if (!in) {
      if (errno == ENOENT) continue;
      return makeError(ErrorCode::invalidArgument, "cannot read configuration file '{}': {}", file,
                       std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    if (auto s = applyToml(text.str(), file, base); !s) return s.error();
  }
  return base;
}

std::vector<std::string> changedKeys(const DaemonConfig& a, const DaemonConfig& b) {
  std::vector<std::string> out;
  if (a.backend != b.backend) out.push_back("backend");
  if (a.socket != b.socket) out.push_back("socket");
  if (a.refreshHz != b.refreshHz) out.push_back("refresh_hz");
  if (a.logLevel != b.logLevel) out.push_back("log_level");
  if (a.viewSize != b.viewSize) out.push_back("view_size");
  if (a.syncMode != b.syncMode) out.push_back("sync_mode");
  if (a.deviceUuid != b.deviceUuid) out.push_back("device_uuid");
  if (a.shutdownGraceMs != b.shutdownGraceMs) out.push_back("shutdown_grace_ms");
  if (a.copyBatchUs != b.copyBatchUs) out.push_back("copy_batch_us");
  if (a.copyBatchBeforeLatchUs != b.copyBatchBeforeLatchUs) out.push_back("copy_batch_before_latch_us");
  if (a.copyBatchBeforeLatchMaxUs != b.copyBatchBeforeLatchMaxUs) out.push_back("copy_batch_before_latch_max_us");
  if (a.copyBatchCopiesPerSubmission != b.copyBatchCopiesPerSubmission) {
    out.push_back("copy_batch_copies_per_submission");
  }
  if (a.mirror != b.mirror) out.push_back("mirror");
  if (a.headMotion != b.headMotion) out.push_back("head_motion");
  if (a.compose != b.compose) out.push_back("compose");
  if (a.environmentBlendModes != b.environmentBlendModes) out.push_back("environment_blend_modes");
  if (a.queuePriority != b.queuePriority) out.push_back("queue_priority");
  if (a.nice != b.nice) out.push_back("nice");
  if (a.rpcCpu != b.rpcCpu) out.push_back("rpc_cpu");
  if (a.hostCopies != b.hostCopies) out.push_back("host_copies");
  if (a.hostCopyMaxKib != b.hostCopyMaxKib) out.push_back("host_copy_max_kib");
  if (a.openxrOverlay != b.openxrOverlay) out.push_back("openxr_overlay");
  if (a.reprojection != b.reprojection) out.push_back("reprojection");
  changedLimitKeys(a.limits, b.limits, out);
  return out;
}

}  // namespace xrc
