// xr-compositor-bench: runs N synthetic clients (xr-compositor-demo processes) against
// xr-compositord, either one it starts (--daemon) or one already serving (--socket), and reports
// the frame path's per-frame costs next to reference measurements taken in the same run
// (docs/BENCHMARKS.md).
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <thread>

#include "../common/percentiles_json.hpp"
#include "../common/process.hpp"
#include "../common/thread_use.hpp"
#include "floor.hpp"
#include "gpu_floor.hpp"
#include "references.hpp"
#include "xrc/client.hpp"
#include "xrc/control.hpp"

namespace {

using xrc::tools::cpuSeconds;
using xrc::tools::Process;
using xrc::tools::TempDir;
using xrc::tools::ThreadUse;
using xrc::tools::useByThread;

struct Options {
  std::string daemon;  // start this daemon per scenario...
  std::string socket;  // ...or use the one serving here
  std::string demo;
  std::vector<uint32_t> clients{1, 8};
  uint64_t frames = 600;
  double seconds = 0;  // > 0: frames = seconds x refresh rate
  std::string viewSize = "1440x1600";
  std::vector<std::string> daemonArgs;  // passed on to the daemon it starts
  std::string syncMode = "auto";
  std::string stereo = "array";  // array: one 2-layer swapchain per client; separate: one per view
  uint32_t quadPx = 0;           // > 0: each client also submits a quad layer
  uint32_t workMs = 0;           // simulated render time per frame (slower clients)
  uint32_t renderUs = 0;         // clients sleep this long between an image\'s wait and its release
  bool pattern = false;          // clients write the CPU test pattern (milliseconds per full-size frame)
  bool finishRender = false;     // clients wait for their rendering before release
  bool renderOnce = false;       // clients render each image once, then only cycle them
  uint32_t protocolMinor = xrc::kProtocolMinor;  // clients speak this minor (3: separate frame calls)
  uint32_t overlayAlpha = 255;                   // < 255: overlays are blended, so the display draws every layer
  bool floor = false;                            // also measure the floor reference at each client count
  double floorSeconds = 3;
  bool floorBesideGpuClients = false;  // with floor: the empty call again, beside as many GPU processes
  bool json = false;
};

double field(const std::string& text, const std::string& key) {
  auto pos = text.find(key + "=");
  return pos == std::string::npos ? -1 : std::stod(text.substr(pos + key.size() + 1));
}

std::optional<xrc::control::DaemonStatus> daemonStatus(const std::string& socket) {
  auto control = xrc::control::ControlClient::connect(socket);
  if (!control) return std::nullopt;
  auto status = control.value()->status();
  if (!status) return std::nullopt;
  return status.value();
}

nlohmann::json runScenario(const Options& o, uint32_t clients) {
  TempDir dir;
  std::unique_ptr<Process> ownDaemon;
  std::string socket = o.socket;
  if (socket.empty()) {
    socket = dir.path + "/bench.sock";
    std::vector<std::string> args{o.daemon,      "--socket", socket,        "--view-size", o.viewSize,
                                  "--sync-mode", o.syncMode, "--log-level", "warn"};
    // The clients and the bench's own status connections are one user's: room for all of them
    // (the default per-user limit is 64). --daemon-arg may still override.
    const uint32_t connections = clients + 16;
    args.insert(args.end(), {"--max-connections-per-uid", std::to_string(std::max<uint32_t>(64, connections)),
                             "--max-connections", std::to_string(std::max<uint32_t>(256, connections))});
    args.insert(args.end(), o.daemonArgs.begin(), o.daemonArgs.end());
    ownDaemon = std::make_unique<Process>(args, std::map<std::string, std::string>{}, dir.path + "/daemon.log");
    // --log-level warn hides the "serving" line: wait for the socket instead.
    for (int i = 0; i < 200 && ::access(socket.c_str(), F_OK) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  auto before = daemonStatus(socket);
  if (!before) {
    fmt::print(stderr, "no daemon answers on {}\n", socket);
    return {{"clients", clients}, {"ok", false}};
  }
  const pid_t daemonPid = pid_t(before->daemonPid);
  const uint64_t frames = o.seconds > 0 ? uint64_t(o.seconds * before->refreshHz) : o.frames;
  const double cpuBefore = cpuSeconds(daemonPid);
  const auto wallBefore = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Process>> demos;
  for (uint32_t i = 0; i < clients; ++i) {
    std::vector<std::string> argv{
        o.demo,           "--socket", socket,   "--frames", std::to_string(frames),     "--stats",
        "--hold",         "--stereo", o.stereo, "--name",   fmt::format("bench-{}", i), "--seed",
        std::to_string(i)};
    if (!o.pattern) argv.push_back("--clear-only");
    // Every client after the first is an overlay, so that every client's frames are displayed.
    if (i > 0) argv.insert(argv.end(), {"--overlay", std::to_string(i)});
    if (i > 0 && o.overlayAlpha < 255) argv.insert(argv.end(), {"--alpha", std::to_string(o.overlayAlpha)});
    if (o.quadPx > 0) argv.insert(argv.end(), {"--quad-px", std::to_string(o.quadPx)});
    if (o.workMs > 0) argv.insert(argv.end(), {"--work-ms", std::to_string(o.workMs)});
    if (o.finishRender) argv.push_back("--finish-render");
    if (o.renderOnce) argv.push_back("--render-once");
    if (o.renderUs > 0) argv.insert(argv.end(), {"--render-us", std::to_string(o.renderUs)});
    if (o.protocolMinor != xrc::kProtocolMinor)
      argv.insert(argv.end(), {"--protocol-minor", std::to_string(o.protocolMinor)});
    demos.push_back(std::make_unique<Process>(argv, std::map<std::string, std::string>{},
                                              dir.path + fmt::format("/demo{}.log", i), true));
  }
  nlohmann::json result{{"clients", clients}, {"frames_per_client", frames}, {"refresh_hz", before->refreshHz}};
  // Steady state: the daemon's CPU between every client having sent a fifth of its frames and
  // the first reaching four fifths, so that connection and swapchain setup are left out.
  // (Status is polled at 4 Hz: its own cost stays negligible.)
  struct Sample {
    double cpu = 0;
    std::map<std::string, ThreadUse> threads;
    uint64_t submitted = 0;
    std::chrono::steady_clock::time_point at;
    uint64_t missed = 0, gpuLate = 0;       // the display's counters then
    std::map<uint32_t, uint32_t> cadences;  // clients by their pacing cadence (display periods) then
  };
  auto sampleWhen = [&](auto predicate) -> std::optional<Sample> {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (std::chrono::steady_clock::now() < deadline) {
      // A client that ended early (refused, failed) would keep the count short for good.
      for (auto& d : demos) {
        if (!d->running() && d->output().find("release_us") == std::string::npos) {
          fmt::print(stderr, "a client ended before its frames:\n{}\n", d->output());
          return std::nullopt;
        }
      }
      auto status = daemonStatus(socket);
      if (status && status->clients.size() == clients) {
        uint64_t least = UINT64_MAX, most = 0, sum = 0;
        for (const auto& c : status->clients) {
          least = std::min(least, c.framesSubmitted);
          most = std::max(most, c.framesSubmitted);
          sum += c.framesSubmitted;
        }
        if (predicate(least, most)) {
          Sample sample{
              cpuSeconds(daemonPid),       useByThread(daemonPid),       sum, std::chrono::steady_clock::now(),
              status->missedDisplayFrames, status->displayFramesGpuLate, {}};
          for (const auto& c : status->clients) sample.cadences[c.displayPeriods]++;
          return sample;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return std::nullopt;
  };
  auto steadyFrom = sampleWhen([&](uint64_t least, uint64_t) { return least >= frames / 5; });
  auto steadyTo = sampleWhen([&](uint64_t, uint64_t most) { return most >= frames * 4 / 5; });
  std::vector<double> releaseP50, releaseP99, roundTrips, callsP50, socketWrites, renders;
  bool ok = true;
  for (auto& d : demos) {
    if (!d->waitForOutput("release_us", std::chrono::minutes(10))) {
      ok = false;
      fmt::print(stderr, "demo failed:\n{}\n", d->output());
      continue;
    }
    const std::string out = d->output();
    releaseP50.push_back(field(out, "p50"));
    releaseP99.push_back(field(out, "p99"));
    roundTrips.push_back(field(out, "round_trips_per_frame"));
    callsP50.push_back(field(out, "frame_calls_us_p50"));
    socketWrites.push_back(field(out, "socket_writes_per_frame"));
    renders.push_back(field(out, "renders_per_frame"));
  }
  const double cpuAfter = cpuSeconds(daemonPid);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallBefore).count();
  double copyP50 = 0, copyP99 = 0, hostCopyP50 = 0, hostCopyP99 = 0, latencyP50 = 0, latencyP99 = 0;
  uint64_t hostCopies = 0;
  uint64_t displayed = 0, late = 0, dropped = 0, stale = 0;
  std::string sync = "?";
  if (auto after = daemonStatus(socket)) {
    for (auto& c : after->clients) {
      copyP50 = std::max(copyP50, double(c.gpuCopyUsP50));
      copyP99 = std::max(copyP99, double(c.gpuCopyUsP99));
      hostCopyP50 = std::max(hostCopyP50, double(c.hostCopyUs.p50));
      hostCopyP99 = std::max(hostCopyP99, double(c.hostCopyUs.p99));
      hostCopies += c.hostCopies;
      latencyP50 = std::max(latencyP50, double(c.latencyUs.p50));
      latencyP99 = std::max(latencyP99, double(c.latencyUs.p99));
      displayed += c.framesDisplayed;
      late += c.framesLate;
      dropped += c.framesDropped;
      stale += c.framesStale;
      sync = xrc::syncModeName(c.syncMode);
    }
    result["display_frames"] = after->displayFrames - before->displayFrames;
    result["missed_display_frames"] = after->missedDisplayFrames - before->missedDisplayFrames;
    result["display_frames_gpu_late"] = after->displayFramesGpuLate - before->displayFramesGpuLate;
    result["gpu_queue_priority"] = after->gpuQueuePriority;
    result["rpc_thread_nice"] = after->rpcThreadNice;
    result["rpc_thread_cpu"] = after->rpcThreadCpu;
    result["rpc_thread_moves"] = after->rpcThreadMoves;
    result["copy_batch_lead_us"] = after->copyBatchLeadUs;
    result["display_work_us"] = xrc::tools::percentilesJson(after->displayWorkUs);
    result["display_wake_delay_us"] = xrc::tools::percentilesJson(after->displayWakeDelayUs);
    result["daemon_cpu_us_per_display_frame"] = xrc::tools::percentilesJson(after->daemonCpuUsPerDisplayFrame);
    // What copy batching (copy_batch_before_latch_us, on by default, or copy_batch_us) did in this run.
    result["copy_batches"] = after->copyBatches - before->copyBatches;
    result["copies_batched"] = after->copiesBatched - before->copiesBatched;
    result["frames_held"] = after->framesHeld - before->framesHeld;
    result["frames_held_past_latch"] = after->framesHeldPastLatch - before->framesHeldPastLatch;
    result["copy_queue_submissions"] = after->copyQueueSubmissions - before->copyQueueSubmissions;
  }
  result["frames_displayed"] = displayed;
  result["frames_late"] = late;
  result["frames_dropped"] = dropped;
  result["frames_stale"] = stale;
  result["latency_us"] = {{"p50", latencyP50}, {"p99", latencyP99}};
  for (auto& d : demos) d->closeStdin();
  for (auto& d : demos) d->wait(std::chrono::seconds(30));
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double totalFrames = double(clients) * double(frames);
  result["ok"] = ok;
  result["sync_mode"] = sync;
  result["stereo"] = o.stereo;
  result["client_render"] = o.renderOnce ? "once" : (o.pattern ? "pattern" : "clear");
  result["release_call_us"] = {
      {"p50", median(releaseP50)},
      {"p99", releaseP99.empty() ? 0 : *std::max_element(releaseP99.begin(), releaseP99.end())}};
  result["round_trips_per_frame"] = median(roundTrips);
  result["client_socket_writes_per_frame"] = median(socketWrites);
  result["client_renders_per_frame"] = median(renders);
  // The client side of a frame: beginFrame + acquire + release + endFrame (median of the clients' p50s).
  result["client_frame_calls_us_p50"] = median(callsP50);
  result["gpu_copy_us"] = {{"p50", copyP50}, {"p99", copyP99}};
  // Host mode on llvmpipe (--host-copies): copies made on the daemon's thread, and their time there.
  result["host_copies"] = hostCopies;
  result["host_copy_us"] = {{"p50", hostCopyP50}, {"p99", hostCopyP99}};
  result["daemon_cpu_us_per_client_frame_with_setup"] = (cpuAfter - cpuBefore) * 1e6 / totalFrames;
  result["wall_s"] = wall;
  if (steadyFrom && steadyTo && steadyTo->submitted > steadyFrom->submitted) {
    const double steadyFrames = double(steadyTo->submitted - steadyFrom->submitted);
    result["daemon_cpu_us_per_client_frame"] = (steadyTo->cpu - steadyFrom->cpu) * 1e6 / steadyFrames;
    // While every client runs (setup and teardown of many client processes stall the display
    // on their own: missed_display_frames above counts those too).
    const double steadySeconds = std::chrono::duration<double>(steadyTo->at - steadyFrom->at).count();
    result["steady_s"] = steadySeconds;
    result["client_frames_per_s_steady"] = steadySeconds > 0 ? steadyFrames / steadySeconds / clients : 0.0;
    result["missed_display_frames_steady"] = steadyTo->missed - steadyFrom->missed;
    result["display_frames_gpu_late_steady"] = steadyTo->gpuLate - steadyFrom->gpuLate;
    // How the pacer spaced the clients' targets at the window's end: every n-th vsync, clients.
    for (const auto& [periods, count] : steadyTo->cadences) {
      result["clients_by_display_periods_steady"][std::to_string(periods)] = count;
    }
    for (auto& [name, use] : steadyTo->threads) {
      const auto from = steadyFrom->threads.find(name);
      const ThreadUse start = from == steadyFrom->threads.end() ? ThreadUse{} : from->second;
      result["daemon_cpu_us_per_client_frame_by_thread"][name] =
          (use.cpuSeconds - start.cpuSeconds) * 1e6 / steadyFrames;
      result["daemon_wakeups_per_client_frame_by_thread"][name] = double(use.switches - start.switches) / steadyFrames;
    }
  } else {
    ok = false;
    fmt::print(stderr, "no steady-state window: the clients never all got going\n");
  }
  return result;
}

}  // namespace

// The floor reference at the scenario's client count and display rate, after the scenario (its
// daemon and clients gone), clients sending together as clients paced to one display do; the GPU
// floor's releases are waited for when the scenario ran in `host` mode, as client-lib's are.
struct FloorSetting {
  uint32_t clients;
  double refreshHz;
  bool hostSync;
  std::string dir;
};

xrc::bench::FloorOptions callFloorOptions(const Options& o, const FloorSetting& at,
                                          xrc::bench::FloorTransport transport) {
  xrc::bench::FloorOptions options;
  options.transport = transport;
  options.clients = at.clients;
  options.refreshHz = at.refreshHz;
  options.seconds = o.floorSeconds;
  options.selfExe = std::filesystem::read_symlink("/proc/self/exe").string();
  options.dir = at.dir;
  return options;
}

xrc::bench::GpuFloorOptions gpuFloorOptions(const Options& o, const FloorSetting& at, bool clear) {
  unsigned w = 0, h = 0;
  std::sscanf(o.viewSize.c_str(), "%ux%u", &w, &h);
  xrc::bench::GpuFloorOptions options;
  options.clients = at.clients;
  options.refreshHz = at.refreshHz;
  options.seconds = o.floorSeconds;
  options.clearWidth = clear ? w : 0;
  options.clearHeight = clear ? h : 0;
  options.releaseWaits = at.hostSync;
  options.swapchains = o.stereo == "separate" ? 2 : 1;
  options.selfExe = std::filesystem::read_symlink("/proc/self/exe").string();
  options.dir = at.dir;
  return options;
}

nlohmann::json callFloorJson(const xrc::bench::FloorResult& measured) {
  return {{"server_cpu_us_per_request", measured.serverCpuUsPerRequest},
          {"server_wakeups_per_request", measured.serverWakeupsPerRequest},
          {"requests", measured.requests}};
}

nlohmann::json gpuRateJson(const xrc::bench::GpuFloorResult& measured) {
  return {{"median", measured.framesPerSecondMedian}, {"min", measured.framesPerSecondMin}};
}

// The empty call measured again while as many GPU-floor processes (acquire, clear, release per
// period) run beside it. The scenario's daemon shares the machine with that many rendering
// processes; the plain floor runs on a machine otherwise idle. Which part of the daemon's cost
// above the plain floor is the machine's load and which is its own work is read from the two.
xrc::Result<nlohmann::json> measureCallBesideGpuClients(const Options& o, const FloorSetting& at) {
  // Seconds past the call's window: its server's start and its clients' connections, under load.
  constexpr double kSetupSeconds = 4;
  auto gpu = gpuFloorOptions(o, at, /*clear=*/true);
  gpu.seconds = o.floorSeconds + kSetupSeconds;
  xrc::Result<xrc::bench::FloorResult> call =
      xrc::makeError(xrc::ErrorCode::internal, "the GPU processes never started");
  gpu.whileRunning = [&] {
    // They start at the first period boundary 100 ms after being told (runGpuFloorClient).
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    call = xrc::bench::measureFloor(callFloorOptions(o, at, xrc::bench::FloorTransport::capnp));
  };
  auto ran = xrc::bench::measureGpuFloor(gpu);
  if (!ran) return ran.error();
  if (!call) return call.error();
  const auto& window = call.value();
  if (window.windowFromNs < ran.value().allRunningFromNs || window.windowToNs > ran.value().allRunningToNs) {
    const auto ms = [&](int64_t ns) { return double(ns - window.windowFromNs) / 1e6; };
    return xrc::makeError(xrc::ErrorCode::timeout,
                          "the GPU processes did not all run throughout the call's window (0 to {:.0f} ms): all ran "
                          "from {:.0f} to {:.0f} ms",
                          ms(window.windowToNs), ms(ran.value().allRunningFromNs), ms(ran.value().allRunningToNs));
  }
  auto json = callFloorJson(window);
  json["gpu_processes_frames_per_s"] = gpuRateJson(ran.value());
  return json;
}

nlohmann::json measureFloors(const Options& o, uint32_t clients, double refreshHz, bool hostSync) {
  nlohmann::json floor{{"clients_aligned", true}, {"gpu_release_waits", hostSync}};
  TempDir dir;
  const FloorSetting at{clients, refreshHz, hostSync, dir.path};
  using xrc::bench::FloorTransport;
  for (auto [transport, key] :
       {std::pair{FloorTransport::socket, "socket_echo"}, std::pair{FloorTransport::capnp, "capnp_call"}}) {
    auto measured = xrc::bench::measureFloor(callFloorOptions(o, at, transport));
    if (!measured) {
      floor[std::string(key) + "_error"] = measured.error().describe();
      continue;
    }
    floor[key] = callFloorJson(measured.value());
  }
  for (auto [clear, key] : {std::pair{false, "gpu_submits"}, std::pair{true, "gpu_submits_and_clear"}}) {
    auto measured = xrc::bench::measureGpuFloor(gpuFloorOptions(o, at, clear));
    if (!measured) {
      floor[std::string(key) + "_error"] = measured.error().describe();
      continue;
    }
    floor[key] = {{"frames_per_s_per_client", gpuRateJson(measured.value())},
                  {"acquires_per_frame", measured.value().acquiresPerFrame}};
  }
  if (o.floorBesideGpuClients) {
    constexpr const char* key = "capnp_call_beside_gpu_clients";
    auto measured = measureCallBesideGpuClients(o, at);
    if (measured) {
      floor[key] = std::move(measured).value();
    } else {
      floor[std::string(key) + "_error"] = measured.error().describe();
    }
  }
  return floor;
}

int main(int argc, char** argv) {
  // The floor reference's server (measureFloor starts this program again as it).
  if (argc == 5 && std::string_view(argv[1]) == "--floor-server" && std::string_view(argv[3]) == "--floor-socket") {
    const std::string_view transport = argv[2];
    if (transport != "socket" && transport != "capnp") return 2;
    return xrc::bench::runFloorServer(
        transport == "capnp" ? xrc::bench::FloorTransport::capnp : xrc::bench::FloorTransport::socket, argv[4]);
  }
  if (argc == 8 && std::string_view(argv[1]) == "--floor-gpu-client") {
    return xrc::bench::runGpuFloorClient(std::stoll(argv[2]), std::stod(argv[3]), uint32_t(std::stoul(argv[4])),
                                         uint32_t(std::stoul(argv[5])), std::string_view(argv[6]) == "1",
                                         uint32_t(std::stoul(argv[7])));
  }
  Options o;
  CLI::App app{"xr-compositor-bench: frame-path costs of xr-compositord with N demo clients"};
  auto* daemon = app.add_option("--daemon", o.daemon, "Start this xr-compositord for every scenario");
  app.add_option("--socket", o.socket, "Use the xr-compositord serving this socket instead")->excludes(daemon);
  app.add_option("--demo", o.demo, "Path to xr-compositor-demo")->required();
  app.add_option("--clients", o.clients, "Client counts to run (e.g. 1 8)")->capture_default_str();
  app.add_option("--frames", o.frames, "Frames per client")->capture_default_str();
  app.add_option("--seconds", o.seconds, "Run each scenario this long (overrides --frames)");
  app.add_option("--quad-px", o.quadPx, "Each client also submits a quad layer of this many pixels");
  app.add_option("--work-ms", o.workMs, "Simulated render time per client frame (ms)");
  app.add_flag("--pattern", o.pattern, "Clients render the CPU-written test pattern instead of a GPU clear");
  app.add_option("--protocol-minor", o.protocolMinor,
                 "Clients speak this protocol minor (3: acquire, wait and beginFrame as separate calls)")
      ->check(CLI::Range(0u, uint32_t(xrc::kProtocolMinor)));
  app.add_option("--overlay-alpha", o.overlayAlpha,
                 "Overlay clients render with this alpha (below 255 they are blended, so no layer is culled)")
      ->check(CLI::Range(0u, 255u));
  app.add_option("--render-us", o.renderUs,
                 "Clients sleep this long between an image's wait and its release (an application's frame "
                 "recording; without it the release follows the acquire within microseconds)");
  app.add_flag("--finish-render", o.finishRender,
               "Clients wait for their rendering to finish before releasing (rendering_done already signalled)");
  app.add_flag("--render-once", o.renderOnce,
               "Clients render each image once and then only acquire and release it: the daemon's cost without "
               "the clients' per-frame GPU work (many client processes time-slice one GPU)");
  app.add_option("--daemon-arg", o.daemonArgs,
                 "Pass this argument on to the daemon started with --daemon (repeatable; e.g. "
                 "--daemon-arg=--queue-priority=medium)")
      ->allow_extra_args(false);
  app.add_option("--view-size", o.viewSize, "Per-view size of each client's swapchains")->capture_default_str();
  app.add_option("--stereo", o.stereo,
                 "array: each client renders both views into one 2-layer swapchain (one copy per frame); separate: "
                 "a swapchain per view, as hello_xr does (two copies per frame, released with one endFrame)")
      ->check(CLI::IsMember({"array", "separate"}))
      ->capture_default_str();
  app.add_option("--sync-mode", o.syncMode, "auto, host, binary or timeline")->capture_default_str();
  app.add_flag("--floor", o.floor,
               "After each scenario, measure the floor: server CPU per request of a plain socket echo and of an "
               "empty Cap'n Proto call, with as many paced clients at the display's rate");
  app.add_flag("--floor-beside-gpu-clients", o.floorBesideGpuClients,
               "With --floor: measure the empty Cap'n Proto call again while as many processes as the scenario "
               "had clients do the GPU floor's work (acquire, clear, release) beside it: the transport's cost on "
               "the machine under that load");
  app.add_option("--floor-seconds", o.floorSeconds, "How long each floor measurement runs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--json", o.json, "JSON output");
  CLI11_PARSE(app, argc, argv);
  if (o.daemon.empty() == o.socket.empty()) {
    fmt::print(stderr, "xr-compositor-bench: give --daemon PATH or --socket PATH\n");
    return 2;
  }
  if (!o.socket.empty()) {
    // The daemon decides the view size: measure the references at its size.
    auto status = daemonStatus(o.socket);
    auto system = xrc::client::describe(o.socket);
    if (!status || !system) {
      fmt::print(stderr, "xr-compositor-bench: no daemon answers on {}\n", o.socket);
      return 1;
    }
    o.viewSize =
        fmt::format("{}x{}", system.value().views[0].recommendedWidth, system.value().views[0].recommendedHeight);
  }

  unsigned w = 0, h = 0;
  std::sscanf(o.viewSize.c_str(), "%ux%u", &w, &h);
  nlohmann::json report;
  const auto ping = xrc::bench::socketPingPong(20000);
  report["reference"]["socket_ping_pong_us"] = {{"p50", ping.p50}, {"p99", ping.p99}};
  std::string queue;
  auto copy = xrc::bench::referenceCopy(w, h, 2, 50, {}, queue);
  if (copy) {
    report["reference"]["gpu_copy_us"] = {{"p50", copy.value().p50}, {"p99", copy.value().p99}, {"queue", queue}};
  } else {
    report["reference"]["gpu_copy_error"] = copy.error().describe();
  }
  // Variants that tell where the daemon's copy time goes: external memory, the headless runtime
  // images' sharing, an idle GPU between copies.
  using Variant = std::pair<const char*, xrc::bench::ReferenceCopyOptions>;
  for (const auto& [key, options] :
       {Variant{"gpu_copy_exportable_us", {true, false, {}}}, Variant{"gpu_copy_like_headless_us", {false, true, {}}},
        Variant{"gpu_copy_paced_11ms_us", {false, false, std::chrono::milliseconds(11)}},
        Variant{"gpu_copy_written_source_us", {false, false, {}, true, false}},
        Variant{"gpu_copy_daemon_like_us", {false, true, {}, true, true}},
        Variant{"gpu_copy_cold_cache_us", {false, false, {}, true, false, true}},
        Variant{"gpu_copy_daemon_like_cold_cache_us", {false, true, {}, true, true, true}}}) {
    std::string variantQueue;
    auto variant = xrc::bench::referenceCopy(w, h, 2, 50, options, variantQueue);
    if (variant) report["reference"][key] = {{"p50", variant.value().p50}, {"p99", variant.value().p99}};
  }
  bool ok = true;
  for (uint32_t n : o.clients) {
    auto scenario = runScenario(o, n);
    ok = ok && scenario["ok"].get<bool>();
    if (o.floor && scenario.contains("refresh_hz")) {
      scenario["floor"] = measureFloors(o, n, scenario["refresh_hz"].get<double>(),
                                        scenario.value("sync_mode", std::string()) == "host");
    }
    report["scenarios"].push_back(scenario);
  }
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    auto p50 = [&](const char* key) {
      return report["reference"].contains(key) ? report["reference"][key]["p50"].get<double>() : -1.0;
    };
    fmt::print(
        "reference: socket ping-pong p50 {:.1f} us p99 {:.1f} us; GPU copy 2x{} ({}) p50 {:.1f} us, between exportable "
        "images {:.1f} us, like headless {:.1f} us, one per 11 ms {:.1f} us, cold cache {:.1f} us\n",
        ping.p50, ping.p99, o.viewSize, queue, copy ? copy.value().p50 : -1.0, p50("gpu_copy_exportable_us"),
        p50("gpu_copy_like_headless_us"), p50("gpu_copy_paced_11ms_us"), p50("gpu_copy_cold_cache_us"));
    // late: shown after their target vsync; dropped: superseded before they were shown; stale: a
    // client's last frame shown again, its next not ready.
    fmt::print("{:>7} {:>6} {:>14} {:>14} {:>10} {:>14} {:>14} {:>12} {:>14} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}\n",
               "clients", "sync", "release p50 us", "release p99 us", "rt/frame", "gpu copy p50", "gpu copy p99",
               "cpu us/frame", "display work us", "missed", "late", "dropped", "stale", "gpu-late", "wake p99");
    for (auto& s : report["scenarios"]) {
      if (!s.contains("sync_mode")) continue;
      fmt::print(
          "{:>7} {:>6} {:>14.1f} {:>14.1f} {:>10.2f} {:>14.1f} {:>14.1f} {:>12.1f} {:>14.1f} {:>8} {:>8} {:>8} {:>8} "
          "{:>8} {:>10.0f}\n",
          s["clients"].get<int>(), s["sync_mode"].get<std::string>(), s["release_call_us"]["p50"].get<double>(),
          s["release_call_us"]["p99"].get<double>(), s["round_trips_per_frame"].get<double>(),
          s["gpu_copy_us"]["p50"].get<double>(), s["gpu_copy_us"]["p99"].get<double>(),
          s.value("daemon_cpu_us_per_client_frame", -1.0),
          s.value("display_work_us", nlohmann::json{}).value("p50", 0.0), s.value("missed_display_frames", 0),
          s["frames_late"].get<uint64_t>(), s.value("frames_dropped", uint64_t(0)),
          s.value("frames_stale", uint64_t(0)), s.value("display_frames_gpu_late", uint64_t(0)),
          s.value("display_wake_delay_us", nlohmann::json{}).value("p99", 0.0));
    }
    auto printByThread = [&](const char* key, const char* what, int decimals) {
      for (auto& s : report["scenarios"]) {
        if (!s.contains(key)) continue;
        fmt::print("daemon {}/client frame by thread ({} clients):", what, s["clients"].get<int>());
        for (auto& [name, value] : s[key].items()) fmt::print(" {}={:.{}f}", name, value.get<double>(), decimals);
        fmt::print("\n");
      }
    };
    for (auto& s : report["scenarios"]) {
      if (!s.contains("client_frames_per_s_steady")) continue;
      fmt::print(
          "steady state ({} clients, all running, {:.1f} s): {:.1f} frames/s per client, {} missed vsyncs, {} "
          "display frames late on the GPU; commit to display p50 {:.0f} us, p99 {:.0f} us\n",
          s["clients"].get<int>(), s["steady_s"].get<double>(), s["client_frames_per_s_steady"].get<double>(),
          s["missed_display_frames_steady"].get<uint64_t>(), s["display_frames_gpu_late_steady"].get<uint64_t>(),
          s["latency_us"]["p50"].get<double>(), s["latency_us"]["p99"].get<double>());
      if (s.contains("clients_by_display_periods_steady")) {
        fmt::print("pacing cadence at the steady state's end ({} clients):", s["clients"].get<int>());
        for (auto& [periods, count] : s["clients_by_display_periods_steady"].items()) {
          fmt::print(" every {} vsync(s): {}", periods, count.get<uint32_t>());
        }
        fmt::print("\n");
      }
    }
    for (auto& s : report["scenarios"]) {
      if (s.value("copies_batched", uint64_t(0)) == 0) continue;
      fmt::print(
          "copy batches ({} clients): {} copies in {} batches; {} frames held for a latch, {} committed past it\n",
          s["clients"].get<int>(), s["copies_batched"].get<uint64_t>(), s["copy_batches"].get<uint64_t>(),
          s.value("frames_held", uint64_t(0)), s.value("frames_held_past_latch", uint64_t(0)));
    }
    for (auto& s : report["scenarios"]) {
      if (!s.contains("floor")) continue;
      const auto& f = s["floor"];
      auto cost = [&](const char* key) {
        return f.contains(key)
                   ? fmt::format("{:.1f} us ({:.2f} wake-ups)", f[key]["server_cpu_us_per_request"].get<double>(),
                                 f[key]["server_wakeups_per_request"].get<double>())
                   : std::string("failed: ") + f.value(std::string(key) + "_error", std::string("?"));
      };
      fmt::print(
          "floor ({} clients at {:.0f} Hz, together): server CPU per request: socket echo {}, empty Cap'n Proto "
          "call {}\n",
          s["clients"].get<int>(), s["refresh_hz"].get<double>(), cost("socket_echo"), cost("capnp_call"));
      if (f.contains("capnp_call_beside_gpu_clients") || f.contains("capnp_call_beside_gpu_clients_error")) {
        const char* key = "capnp_call_beside_gpu_clients";
        const std::string rate = f.contains(key)
                                     ? fmt::format(", those at {:.1f} frames/s",
                                                   f[key]["gpu_processes_frames_per_s"]["median"].get<double>())
                                     : std::string();
        fmt::print("floor beside {} GPU processes (acquire, clear, release per period): empty Cap'n Proto call {}{}\n",
                   s["clients"].get<int>(), cost(key), rate);
      }
      auto rate = [&](const char* key) {
        return f.contains(key)
                   ? fmt::format("{:.1f} (slowest {:.1f})", f[key]["frames_per_s_per_client"]["median"].get<double>(),
                                 f[key]["frames_per_s_per_client"]["min"].get<double>())
                   : std::string("failed: ") + f.value(std::string(key) + "_error", std::string("?"));
      };
      fmt::print(
          "GPU floor ({} processes, no compositor): frames/s per process with acquire+release submissions {}, "
          "with a clear too {}\n",
          s["clients"].get<int>(), rate("gpu_submits"), rate("gpu_submits_and_clear"));
    }
    printByThread("daemon_cpu_us_per_client_frame_by_thread", "CPU us", 1);
    printByThread("daemon_wakeups_per_client_frame_by_thread", "wake-ups", 2);
  }
  return ok ? 0 : 1;
}
