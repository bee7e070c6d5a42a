// xr-compositorctl: the operator's view of xr-compositord.
//   xr-compositorctl [--socket PATH] status [--json]
//   xr-compositorctl set-active-runtime [--system] [--force] [--manifest PATH]
//   xr-compositorctl unset-active-runtime [--system] [--force]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "active_runtime.hpp"
#include "xrc/control.hpp"

namespace {

// Field names are a stable interface (docs/OPERATIONS.md): add, never rename.
nlohmann::json toJson(const xrc::control::DaemonStatus& s) {
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& c : s.clients) {
    clients.push_back({{"id", c.id},
                       {"name", c.name},
                       {"pid", c.pid},
                       {"sync_mode", xrc::syncModeName(c.syncMode)},
                       {"frames_submitted", c.framesSubmitted},
                       {"releases", c.releases},
                       {"swapchains", c.swapchains},
                       {"gpu_copy_us", {{"p50", c.gpuCopyUsP50}, {"p99", c.gpuCopyUsP99}}}});
  }
  return {{"daemon_version", s.daemonVersion},    {"backend", s.backend},
          {"uptime_s", double(s.uptimeNs) / 1e9}, {"refresh_hz", s.refreshHz},
          {"display_frames", s.displayFrames},    {"clients", clients}};
}

void printTable(const xrc::control::DaemonStatus& s) {
  fmt::print("xr-compositord {}  backend {}  up {:.1f} s  {:.0f} Hz  {} display frames\n", s.daemonVersion, s.backend,
             double(s.uptimeNs) / 1e9, s.refreshHz, s.displayFrames);
  fmt::print("{} client{}\n", s.clients.size(), s.clients.size() == 1 ? "" : "s");
  if (s.clients.empty()) return;
  fmt::print("{:>4}  {:<24} {:>8}  {:<6} {:>10} {:>10} {:>10} {:>14}\n", "ID", "NAME", "PID", "SYNC", "FRAMES",
             "RELEASES", "SWAPCHAINS", "GPU COPY p50");
  for (const auto& c : s.clients) {
    fmt::print("{:>4}  {:<24} {:>8}  {:<6} {:>10} {:>10} {:>10} {:>11.1f} us\n", c.id, c.name.substr(0, 24), c.pid,
               xrc::syncModeName(c.syncMode), c.framesSubmitted, c.releases, c.swapchains, c.gpuCopyUsP50);
  }
}



int activeRuntime(bool set, bool system, bool force, const std::string& manifestOption) {
  std::filesystem::path manifest = manifestOption;
  if (manifest.empty()) {
    auto found = xrc::tools::defaultRuntimeManifest();
    if (!found) {
      std::fprintf(stderr, "xr-compositorctl: %s\n", found.error().message.c_str());
      return 1;
    }
    manifest = found.value();
  }
  const auto file = system ? xrc::tools::systemActiveRuntimePath() : xrc::tools::userActiveRuntimePath();
  auto done = set ? xrc::tools::setActiveRuntime(file, manifest, force)
                  : xrc::tools::unsetActiveRuntime(file, manifest, force);
  if (!done) {
    std::fprintf(stderr, "xr-compositorctl: %s\n", done.error().message.c_str());
    return 1;
  }
  std::printf("%s\n", done.value().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  bool json = false;
  bool system = false, force = false;
  std::string manifest;
  CLI::App app{"xr-compositorctl: inspect xr-compositord"};
  app.add_option("--socket", socket, "Daemon socket (default $XR_COMPOSITOR_SOCKET or the default path)");
  auto* status = app.add_subcommand("status", "Show the daemon, its clients and their frame counts");
  status->add_flag("--json", json, "Machine-readable output (stable field names)");
  auto* setRuntime =
      app.add_subcommand("set-active-runtime", "Make xr-compositor the OpenXR runtime apps load (per user by default)");
  auto* unsetRuntime = app.add_subcommand("unset-active-runtime", "Stop making xr-compositor the active OpenXR runtime");
  for (auto* sub : {setRuntime, unsetRuntime}) {
    sub->add_flag("--system", system, "The system-wide choice (/etc/xdg/openxr/1) instead of the user's");
    sub->add_flag("--force", force, "Replace or remove another runtime's active_runtime.json");
    sub->add_option("--manifest", manifest, "Our runtime manifest (default: the installed one)");
  }
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  if (setRuntime->parsed() || unsetRuntime->parsed()) {
    return activeRuntime(setRuntime->parsed(), system, force, manifest);
  }

  auto control = xrc::control::ControlClient::connect(socket);
  if (!control) {
    std::fprintf(stderr, "xr-compositorctl: %s\n", control.error().message.c_str());
    return 1;
  }
  auto result = control.value()->status();
  if (!result) {
    std::fprintf(stderr, "xr-compositorctl: status: %s\n", result.error().message.c_str());
    return 1;
  }
  if (json) {
    std::printf("%s\n", toJson(result.value()).dump(2).c_str());
  } else {
    printTable(result.value());
  }
  return 0;
}
