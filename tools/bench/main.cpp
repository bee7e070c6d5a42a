// xr-compositor-bench: starts xr-compositord and N demo clients, and reports the frame path's
// per-frame costs next to reference measurements taken in the same run (docs/BENCHMARKS.md).
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "../common/process.hpp"
#include "references.hpp"
#include "xrc/control.hpp"

namespace {

using xrc::tools::Process;
using xrc::tools::TempDir;

struct Options {
  std::string daemon;
  std::string demo;
  std::vector<uint32_t> clients{1, 8};
  uint64_t frames = 600;
  std::string viewSize = "1440x1600";
  std::string syncMode = "auto";
  bool json = false;
};

// utime + stime of a process (or of one of its threads), in seconds.
double cpuSeconds(pid_t pid, pid_t tid = 0) {
  std::ifstream in("/proc/" + std::to_string(pid) + (tid ? "/task/" + std::to_string(tid) : std::string()) + "/stat");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(content.substr(content.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    rest >> field;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// CPU seconds of each thread of `pid`, summed by thread name (the daemon names its threads).
std::map<std::string, double> cpuSecondsByThread(pid_t pid) {
  std::map<std::string, double> byName;
  const std::string taskDir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(taskDir, ec)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    const pid_t tid = std::stoi(entry.path().filename().string());
    // The main thread runs the RPC event loop; other unnamed threads belong to the Vulkan driver.
    if (tid == pid)
      name = "rpc-main";
    else if (name.starts_with("xr-compositord") || name.starts_with("xr-comp"))
      name = "driver";
    byName[name] += cpuSeconds(pid, tid);
  }
  return byName;
}

double field(const std::string& text, const std::string& key) {
  auto pos = text.find(key + "=");
  return pos == std::string::npos ? -1 : std::stod(text.substr(pos + key.size() + 1));
}

nlohmann::json runScenario(const Options& o, uint32_t clients) {
  TempDir dir;
  const std::string socket = dir.path + "/bench.sock";
  Process daemon(
      {o.daemon, "--socket", socket, "--view-size", o.viewSize, "--sync-mode", o.syncMode, "--log-level", "warn"}, {},
      dir.path + "/daemon.log");
  // --log-level warn hides the "serving" line: wait for the socket instead.
  for (int i = 0; i < 200 && ::access(socket.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double cpuBefore = cpuSeconds(daemon.pid());
  const auto threadsBefore = cpuSecondsByThread(daemon.pid());
  const auto wallBefore = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Process>> demos;
  for (uint32_t i = 0; i < clients; ++i) {
    demos.push_back(std::make_unique<Process>(
        std::vector<std::string>{o.demo, "--socket", socket, "--frames", std::to_string(o.frames), "--stats", "--hold",
                                 "--stereo", "array", "--name", fmt::format("bench-{}", i), "--seed",
                                 std::to_string(i)},
        std::map<std::string, std::string>{}, dir.path + fmt::format("/demo{}.log", i), true));
  }
  nlohmann::json result{{"clients", clients}, {"frames_per_client", o.frames}};
  std::vector<double> releaseP50, releaseP99, roundTrips;
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
  }
  const double cpuAfter = cpuSeconds(daemon.pid());
  auto threadsAfter = cpuSecondsByThread(daemon.pid());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallBefore).count();
  auto control = xrc::control::ControlClient::connect(socket);
  double copyP50 = 0, copyP99 = 0;
  std::string sync = "?";
  if (control) {
    if (auto status = control.value()->status()) {
      for (auto& c : status.value().clients) {
        copyP50 = std::max(copyP50, double(c.gpuCopyUsP50));
        copyP99 = std::max(copyP99, double(c.gpuCopyUsP99));
        sync = xrc::syncModeName(c.syncMode);
      }
    }
  }
  for (auto& d : demos) d->closeStdin();
  for (auto& d : demos) d->wait(std::chrono::seconds(30));
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double totalFrames = double(clients) * double(o.frames);
  result["ok"] = ok;
  result["sync_mode"] = sync;
  result["release_call_us"] = {
      {"p50", median(releaseP50)},
      {"p99", releaseP99.empty() ? 0 : *std::max_element(releaseP99.begin(), releaseP99.end())}};
  result["round_trips_per_frame"] = median(roundTrips);
  result["gpu_copy_us"] = {{"p50", copyP50}, {"p99", copyP99}};
  result["daemon_cpu_us_per_client_frame"] = (cpuAfter - cpuBefore) * 1e6 / totalFrames;
  result["wall_s"] = wall;
  for (auto& [name, seconds] : threadsAfter) {
    const auto before = threadsBefore.find(name);
    const double spent = seconds - (before == threadsBefore.end() ? 0 : before->second);
    result["daemon_cpu_us_per_client_frame_by_thread"][name] = spent * 1e6 / totalFrames;
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"xr-compositor-bench: frame-path costs of xr-compositord with N demo clients"};
  app.add_option("--daemon", o.daemon, "Path to xr-compositord")->required();
  app.add_option("--demo", o.demo, "Path to xr-compositor-demo")->required();
  app.add_option("--clients", o.clients, "Client counts to run (e.g. 1 8)")->capture_default_str();
  app.add_option("--frames", o.frames, "Frames per client")->capture_default_str();
  app.add_option("--view-size", o.viewSize, "Per-view size; each client submits a 2-layer swapchain of it")
      ->capture_default_str();
  app.add_option("--sync-mode", o.syncMode, "auto, host or binary")->capture_default_str();
  app.add_flag("--json", o.json, "JSON output");
  CLI11_PARSE(app, argc, argv);

  unsigned w = 0, h = 0;
  std::sscanf(o.viewSize.c_str(), "%ux%u", &w, &h);
  nlohmann::json report;
  const auto ping = xrc::bench::socketPingPong(20000);
  report["reference"]["socket_ping_pong_us"] = {{"p50", ping.p50}, {"p99", ping.p99}};
  std::string queue;
  auto copy = xrc::bench::referenceCopy(w, h, 2, 50, false, queue);
  if (copy) {
    report["reference"]["gpu_copy_us"] = {{"p50", copy.value().p50}, {"p99", copy.value().p99}, {"queue", queue}};
  } else {
    report["reference"]["gpu_copy_error"] = copy.error().describe();
  }
  auto exportableCopy = xrc::bench::referenceCopy(w, h, 2, 50, true, queue);
  if (exportableCopy) {
    report["reference"]["gpu_copy_exportable_us"] = {{"p50", exportableCopy.value().p50},
                                                     {"p99", exportableCopy.value().p99}};
  }
  bool ok = true;
  for (uint32_t n : o.clients) {
    auto scenario = runScenario(o, n);
    ok = ok && scenario["ok"].get<bool>();
    report["scenarios"].push_back(scenario);
  }
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    fmt::print(
        "reference: socket ping-pong p50 {:.1f} us p99 {:.1f} us; GPU copy 2x{} ({}) p50 {:.1f} us, between exportable "
        "images {:.1f} us\n",
        ping.p50, ping.p99, o.viewSize, queue, copy ? copy.value().p50 : -1.0,
        exportableCopy ? exportableCopy.value().p50 : -1.0);
    fmt::print("{:>7} {:>6} {:>14} {:>14} {:>10} {:>14} {:>14} {:>12}\n", "clients", "sync", "release p50 us",
               "release p99 us", "rt/frame", "gpu copy p50", "gpu copy p99", "cpu us/frame");
    for (auto& s : report["scenarios"]) {
      fmt::print("{:>7} {:>6} {:>14.1f} {:>14.1f} {:>10.2f} {:>14.1f} {:>14.1f} {:>12.1f}\n", s["clients"].get<int>(),
                 s["sync_mode"].get<std::string>(), s["release_call_us"]["p50"].get<double>(),
                 s["release_call_us"]["p99"].get<double>(), s["round_trips_per_frame"].get<double>(),
                 s["gpu_copy_us"]["p50"].get<double>(), s["gpu_copy_us"]["p99"].get<double>(),
                 s["daemon_cpu_us_per_client_frame"].get<double>());
    }
    for (auto& s : report["scenarios"]) {
      fmt::print("daemon CPU us/client frame by thread ({} clients):", s["clients"].get<int>());
      for (auto& [name, us] : s["daemon_cpu_us_per_client_frame_by_thread"].items()) {
        fmt::print(" {}={:.1f}", name, us.get<double>());
      }
      fmt::print("\n");
    }
  }
  return ok ? 0 : 1;
}
