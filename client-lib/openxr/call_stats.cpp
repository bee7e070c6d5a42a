#include "call_stats.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace xrc::openxr {

namespace {
const char* callName(Call call) {
  static const char* kNames[] = {"xrWaitFrame",          "xrBeginFrame",
                                 "xrEndFrame",           "xrAcquireSwapchainImage",
                                 "xrWaitSwapchainImage", "xrReleaseSwapchainImage",
                                 "xrLocateViews",        "xrLocateSpace",
                                 "xrSyncActions"};
  return kNames[size_t(call)];
}

double percentileUs(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  const size_t k = std::min(values.size() - 1, size_t(p * double(values.size())));
  std::nth_element(values.begin(), values.begin() + long(k), values.end());
  return double(values[k]) / 1000.0;
}
}  // namespace

std::unique_ptr<CallStats> CallStats::fromEnvironment() {
  const char* path = std::getenv("XRC_OPENXR_STATS");
  if (path == nullptr || *path == '\0') return nullptr;
  std::string file = path;
  if (auto at = file.find("%p"); at != std::string::npos) file.replace(at, 2, std::to_string(::getpid()));
  return std::make_unique<CallStats>(file);
}

void CallStats::record(Call call, std::chrono::nanoseconds duration, std::chrono::nanoseconds cpu) {
  Lock lock(mutex_);
  auto& list = samples_[size_t(call)];
  if (list.size() < kMaxSamples) list.push_back(duration.count());
  cpuNs_[size_t(call)] += cpu.count();
}

void CallStats::frameBoundary(uint64_t blockingRoundTrips) {
  Lock lock(mutex_);
  if (sawFrame_ && roundTripsPerFrame_.size() < kMaxSamples) {
    roundTripsPerFrame_.push_back(blockingRoundTrips - lastRoundTrips_);
  }
  sawFrame_ = true;
  lastRoundTrips_ = blockingRoundTrips;
}

std::string CallStats::summary() const {
  Lock lock(mutex_);
  nlohmann::json out;
  out["frames"] = roundTripsPerFrame_.size();
  uint64_t total = 0, most = 0;
  for (uint64_t n : roundTripsPerFrame_) {
    total += n;
    most = std::max(most, n);
  }
  out["blocking_round_trips_per_frame"] = {
      {"mean", roundTripsPerFrame_.empty() ? 0.0 : double(total) / double(roundTripsPerFrame_.size())}, {"max", most}};
  int64_t cpuNs = 0;
  for (size_t c = 0; c < size_t(Call::count); ++c) {
    const auto& list = samples_[c];
    if (list.empty()) continue;
    out["calls"][callName(Call(c))] = {{"count", list.size()},
                                       {"p50_us", percentileUs(list, 0.5)},
                                       {"p99_us", percentileUs(list, 0.99)},
                                       {"cpu_us", double(cpuNs_[c]) / 1000.0}};
    cpuNs += cpuNs_[c];
  }
  // The calls' CPU on the app's threads per frame (one xrWaitFrame per frame).
  const size_t frames = samples_[size_t(Call::waitFrame)].size();
  out["app_thread_cpu_us_per_frame"] = frames == 0 ? 0.0 : double(cpuNs) / 1000.0 / double(frames);
  return out.dump(2);
}

CallStats::~CallStats() {
  std::ofstream file(path_);
  file << summary() << "\n";
  if (!file) std::fprintf(stderr, "[xr-compositor runtime] cannot write stats to %s\n", path_.c_str());
}

}  // namespace xrc::openxr
