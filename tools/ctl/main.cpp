// xr-compositorctl: the operator's view of xr-compositord.
//   xr-compositorctl [--socket PATH] status [--json]
//   xr-compositorctl [--socket PATH] watch [--interval S] [--count N]
//   xr-compositorctl [--socket PATH] set-primary ID
//   xr-compositorctl [--socket PATH] kick ID
//   xr-compositorctl [--socket PATH] recenter
//   xr-compositorctl set-active-runtime [--system] [--force] [--manifest PATH]
//   xr-compositorctl unset-active-runtime [--system] [--force]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

#include "../common/percentiles_json.hpp"
#include "active_runtime.hpp"
#include "xrc/client_text.hpp"
#include "xrc/control.hpp"

namespace {

using xrc::tools::percentilesJson;

// Field names are a stable interface (docs/OPERATIONS.md): add, never rename.
nlohmann::json toJson(const xrc::control::DaemonStatus& s) {
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& c : s.clients) {
    clients.push_back({{"id", c.id},
                       {"name", c.name},
                       {"pid", c.pid},
                       {"sync_mode", xrc::syncModeName(c.syncMode)},
                       {"role", xrc::control::sessionRoleName(c.role)},
                       {"overlay_placement", c.overlayPlacement},
                       {"frames_submitted", c.framesSubmitted},
                       {"frames_displayed", c.framesDisplayed},
                       {"frames_late", c.framesLate},
                       {"frames_dropped", c.framesDropped},
                       {"frames_hidden", c.framesHidden},
                       {"display_periods", c.displayPeriods},
                       {"releases", c.releases},
                       {"swapchains", c.swapchains},
                       {"gpu_copy_us", {{"p50", c.gpuCopyUsP50}, {"p99", c.gpuCopyUsP99}}},
                       {"release_rtt_us", percentilesJson(c.releaseUs)},
                       {"latency_us", percentilesJson(c.latencyUs)},
                       {"frame_interval_us", percentilesJson(c.frameIntervalUs)},
                       {"image_bytes", c.imageBytes},
                       {"hung", c.hung},
                       {"stalled_ms", c.stalledMs},
                       {"frames_stale", c.framesStale},
                       {"releases_skipped", c.releasesSkipped},
                       {"releases_render_timed_out", c.releasesRenderTimedOut},
                       {"copy_submissions", c.copySubmissions},
                       {"host_copies", c.hostCopies},
                       {"host_copy_us", percentilesJson(c.hostCopyUs)},
                       {"waits_answered_at_once", c.waitsAnsweredAtOnce},
                       {"frames_reprojected", c.framesReprojected}});
  }
  nlohmann::json haptics = nlohmann::json::array();
  for (const auto& h : s.haptics) {
    haptics.push_back({{"pulses", h.pulses},
                       {"stops", h.stops},
                       {"last_amplitude", h.last.amplitude},
                       {"last_duration_ns", h.last.durationNs},
                       {"last_frequency", h.last.frequency}});
  }
  nlohmann::json limitsHit = nlohmann::json::array();
  for (const auto& h : s.limitsHit) {
    limitsHit.push_back({{"limit", h.limit}, {"count", h.count}, {"seconds_ago", h.secondsAgo}});
  }
  nlohmann::json window = nullptr;
  if (s.windowOutput) {
    const auto& w = *s.windowOutput;
    window = {{"open", w.open},
              {"width", w.width},
              {"height", w.height},
              {"presents", w.presents},
              {"skipped", w.skipped},
              {"recreations", w.recreations},
              {"swapchains_live", w.swapchainsLive},
              {"present_semaphores_live", w.presentSemaphoresLive},
              {"max_submissions_in_flight", w.maxSubmissionsInFlight},
              {"backlog_drains", w.backlogDrains}};
  }
  return {{"daemon_version", s.daemonVersion},
          {"backend", s.backend},
          {"uptime_s", double(s.uptimeNs) / 1e9},
          {"refresh_hz", s.refreshHz},
          {"display_frames", s.displayFrames},
          {"missed_display_frames", s.missedDisplayFrames},
          {"display_frames_gpu_late", s.displayFramesGpuLate},
          {"display_frames_composed", s.displayFramesComposed},
          {"layer_views_culled", s.layerViewsCulled},
          {"gpu_queue_priority", s.gpuQueuePriority},
          {"rpc_thread_nice", s.rpcThreadNice},
          {"rpc_thread_cpu", s.rpcThreadCpu},
          {"rpc_thread_moves", s.rpcThreadMoves},
          {"display_work_us", percentilesJson(s.displayWorkUs)},
          {"display_wake_delay_us", percentilesJson(s.displayWakeDelayUs)},
          {"daemon_cpu_us_per_display_frame", percentilesJson(s.daemonCpuUsPerDisplayFrame)},
          {"daemon_cpu_us_per_client_frame", s.daemonCpuUsPerClientFrame},
          {"primary_client_id", s.primaryClientId},
          {"environment_blend_mode", xrc::blendModeName(s.environmentBlendMode)},
          {"haptics", haptics},
          {"accept_failures", s.acceptFailures},
          {"copy_batches", s.copyBatches},
          {"copies_batched", s.copiesBatched},
          {"frames_held", s.framesHeld},
          {"frames_held_past_latch", s.framesHeldPastLatch},
          {"copy_queue_submissions", s.copyQueueSubmissions},
          {"copy_batch_lead_us", s.copyBatchLeadUs},
          {"limits_hit", limitsHit},
          {"image_bytes", s.imageBytes},
          {"image_bytes_limit", s.imageBytesLimit},
          {"window_output", window},
          {"clients", clients}};
}

std::string formatTable(const xrc::control::DaemonStatus& s) {
  std::string out = fmt::format(
      "xr-compositord {}  backend {}  up {:.1f} s  {:.0f} Hz  {} display frames ({} composed), {} missed, {} late on "
      "the GPU\n",
      s.daemonVersion, s.backend, double(s.uptimeNs) / 1e9, s.refreshHz, s.displayFrames, s.displayFramesComposed,
      s.missedDisplayFrames, s.displayFramesGpuLate);
  out += fmt::format(
      "display work p50 {:.0f} us  wake delay p99 {:.0f} us  daemon CPU {:.0f} us per display frame, {:.1f} us per "
      "client frame  blend {}  GPU priority {}  nice {}  RPC thread on {}{}\n",
      s.displayWorkUs.p50, s.displayWakeDelayUs.p99, s.daemonCpuUsPerDisplayFrame.p50, s.daemonCpuUsPerClientFrame,
      xrc::blendModeName(s.environmentBlendMode), s.gpuQueuePriority, s.rpcThreadNice,
      s.rpcThreadCpu >= 0 ? "CPU " + std::to_string(s.rpcThreadCpu) : std::string("any CPU"),
      s.rpcThreadMoves > 0 ? fmt::format(" (moved {}x)", s.rpcThreadMoves) : std::string());
  if (!s.limitsHit.empty()) {
    std::string hits;
    for (const auto& h : s.limitsHit) {
      hits += fmt::format("{}{} x{} ({:.0f} s ago)", hits.empty() ? "" : ", ", h.limit, h.count, h.secondsAgo);
    }
    out += fmt::format("limits hit: {}\n", hits);
  }
  if (s.windowOutput) {
    const auto& w = *s.windowOutput;
    out +=
        fmt::format("window {}  {}x{}  {} presents, {} skipped, {} recreations  {} swapchains, {} present semaphores\n",
                    w.open ? "open" : "closed", w.width, w.height, w.presents, w.skipped, w.recreations,
                    w.swapchainsLive, w.presentSemaphoresLive);
  }
  out += fmt::format("{} client{}\n", s.clients.size(), s.clients.size() == 1 ? "" : "s");
  if (s.clients.empty()) return out;
  out += fmt::format("{:>4}  {:<20} {:>8}  {:<6} {:<10} {:>9} {:>9} {:>6} {:>7} {:>5}  {:>12} {:>12} {:>12} {:>13}\n",
                     "ID", "NAME", "PID", "SYNC", "ROLE", "SUBMITTED", "DISPLAYED", "LATE", "DROPPED", "RATE",
                     "LATENCY p50", "RELEASE p50", "GPU COPY p50", "HOST COPY p50");
  for (const auto& c : s.clients) {
    std::string role = xrc::control::sessionRoleName(c.role);
    if (c.role == xrc::control::SessionRole::overlay) role += fmt::format(":{}", c.overlayPlacement);
    if (c.hung) role += ",hung";
    out += fmt::format(
        "{:>4}  {:<20} {:>8}  {:<6} {:<10} {:>9} {:>9} {:>6} {:>7} {:>5}  {:>9.0f} us {:>9.0f} us {:>9.1f} us "
        "{:>10.1f} us\n",
        c.id, xrc::utf8Prefix(c.name, 20), c.pid, xrc::syncModeName(c.syncMode), role, c.framesSubmitted,
        c.framesDisplayed, c.framesLate, c.framesDropped, fmt::format("1/{}", c.displayPeriods), c.latencyUs.p50,
        c.releaseUs.p50, c.gpuCopyUsP50, c.hostCopyUs.p50);
  }
  return out;
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
  auto done =
      set ? xrc::tools::setActiveRuntime(file, manifest, force) : xrc::tools::unsetActiveRuntime(file, manifest, force);
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
  auto* unsetRuntime =
      app.add_subcommand("unset-active-runtime", "Stop making xr-compositor the active OpenXR runtime");
  for (auto* sub : {setRuntime, unsetRuntime}) {
    sub->add_flag("--system", system, "The system-wide choice (/etc/xdg/openxr/1) instead of the user's");
    sub->add_flag("--force", force, "Replace or remove another runtime's active_runtime.json");
    sub->add_option("--manifest", manifest, "Our runtime manifest (default: the installed one)");
  }
  auto* watch = app.add_subcommand("watch", "Show status, refreshed in place until interrupted");
  double interval = 1.0;
  uint64_t count = 0;
  watch->add_option("--interval", interval, "Seconds between refreshes")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  watch->add_option("--count", count, "Stop after this many refreshes (0: never)");
  uint32_t clientId = 0;
  auto* setPrimary = app.add_subcommand("set-primary", "Make a normal session the primary (visible and focused)");
  setPrimary->add_option("id", clientId, "Client id (see status)")->required();
  auto* kick = app.add_subcommand("kick", "Disconnect one client");
  kick->add_option("id", clientId, "Client id (see status)")->required();
  auto* recenter = app.add_subcommand("recenter", "Move LOCAL space to where the head is now (headless backend)");
  auto* input =
      app.add_subcommand("input", "Drive a simulated controller (headless): its device, and one component's value");
  std::string handName, profile, component;
  std::vector<float> values;
  input->add_option("hand", handName, "left or right")->required()->check(CLI::IsMember({"left", "right"}));
  input->add_option("--profile", profile,
                    "Give the hand this device (/interaction_profiles/..., or none); its components go to rest");
  input->add_option("component", component, "A component of the hand's device, e.g. /input/select/click");
  input->add_option("value", values, "Its value: x, or x y for a vector2 (default 1)")->expected(0, 2);
  auto* handPose = app.add_subcommand("hand-pose", "Move a simulated controller (headless): where it is, in STAGE");
  std::vector<float> position;
  handPose->add_option("hand", handName, "left or right")->required()->check(CLI::IsMember({"left", "right"}));
  handPose->add_option("position", position, "x y z in meters")->required()->expected(3);
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
  auto& daemon = *control.value();
  if (setPrimary->parsed() || kick->parsed()) {
    const bool primary = setPrimary->parsed();
    auto done = primary ? daemon.setPrimary(clientId) : daemon.kick(clientId);
    if (!done) {
      std::fprintf(stderr, "xr-compositorctl: %s: %s\n", primary ? "set-primary" : "kick",
                   done.error().message.c_str());
      return 1;
    }
    std::printf(primary ? "client %u is the primary session\n" : "client %u disconnected\n", clientId);
    return 0;
  }
  if (recenter->parsed()) {
    if (auto done = daemon.recenter(); !done) {
      std::fprintf(stderr, "xr-compositorctl: recenter: %s\n", done.error().message.c_str());
      return 1;
    }
    std::printf("recentered\n");
    return 0;
  }
  if (input->parsed() || handPose->parsed()) {
    const uint32_t hand = handName == "left" ? 0 : 1;
    xrc::Status done;
    if (input->parsed()) {
      if (profile.empty() && component.empty()) {
        std::fprintf(stderr, "xr-compositorctl: input: give --profile, a component, or both\n");
        return 2;
      }
      done = daemon.setInput(hand, profile, component, values.empty() ? 1.0f : values[0],
                             values.size() > 1 ? values[1] : 0.0f);
    } else {
      xrc::Pose pose;
      pose.position = {position[0], position[1], position[2]};
      done = daemon.setHandPose(hand, pose, pose);
    }
    if (!done) {
      std::fprintf(stderr, "xr-compositorctl: %s: %s\n", input->parsed() ? "input" : "hand-pose",
                   done.error().message.c_str());
      return 1;
    }
    return 0;
  }
  if (watch->parsed()) {
    // Redraws in place: home the cursor, print, clear what the previous (longer) frame left.
    for (uint64_t n = 0; count == 0 || n < count; ++n) {
      if (n > 0) std::this_thread::sleep_for(std::chrono::duration<double>(interval));
      auto result = daemon.status();
      if (!result) {
        std::fprintf(stderr, "xr-compositorctl: watch: %s\n", result.error().message.c_str());
        return 1;
      }
      std::string frame = formatTable(result.value());
      for (size_t pos = frame.find('\n'); pos != std::string::npos; pos = frame.find('\n', pos + 4)) {
        frame.insert(pos, "\x1b[K");  // clear what a longer line of the previous frame left
      }
      std::printf("%s\x1b[H%s\x1b[J", n == 0 ? "\x1b[2J" : "", frame.c_str());
      std::fflush(stdout);
    }
    return 0;
  }
  auto result = daemon.status();
  if (!result) {
    std::fprintf(stderr, "xr-compositorctl: status: %s\n", result.error().message.c_str());
    return 1;
  }
  if (json) {
    std::printf("%s\n", toJson(result.value()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(formatTable(result.value()).c_str(), stdout);
  }
  return 0;
}
