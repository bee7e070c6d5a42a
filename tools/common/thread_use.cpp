#include "thread_use.hpp"

#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace xrc::tools {

namespace {

// utime + stime from /proc/.../stat: whole clock ticks (10 ms), the fallback only.
double tickedCpuSeconds(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + (tid ? "/task/" + std::to_string(tid) : std::string()) + "/stat");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t nameEnd = content.rfind(')');
  if (nameEnd == std::string::npos || nameEnd + 2 > content.size()) return 0;  // the thread has ended
  std::istringstream rest(content.substr(nameEnd + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    if (!(rest >> field)) return 0;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

}  // namespace

double cpuSeconds(pid_t pid, pid_t tid) {
  if (tid != 0) {
    // The scheduler's own runtime of the thread, in ns (the first field of schedstat).
    std::ifstream schedstat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
    // Kernels without schedstats or delay accounting report zeros there.
    uint64_t ns = 0;
    if (schedstat >> ns && ns > 0) return double(ns) / 1e9;
    return tickedCpuSeconds(pid, tid);
  }
  // The process's CPU clock: every thread's runtime, those that ended included, in ns.
  clockid_t clock{};
  timespec now{};
  if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &now) == 0) {
    return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
  }
  return tickedCpuSeconds(pid, 0);
}

uint64_t contextSwitches(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  uint64_t total = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("voluntary_ctxt_switches:") || line.starts_with("nonvoluntary_ctxt_switches:")) {
      total += std::stoull(line.substr(line.find(':') + 1));
    }
  }
  return total;
}

std::map<std::string, ThreadUse> useByThread(pid_t pid) {
  std::map<std::string, ThreadUse> byName;
  const std::string taskDir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(taskDir, ec)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    const pid_t tid = std::stoi(entry.path().filename().string());
    if (tid == pid)
      name = "rpc-main";
    else if (name.starts_with("xr-compositord") || name.starts_with("xr-comp"))
      name = "driver";
    byName[name].cpuSeconds += cpuSeconds(pid, tid);
    byName[name].switches += contextSwitches(pid, tid);
  }
  return byName;
}

}  // namespace xrc::tools
