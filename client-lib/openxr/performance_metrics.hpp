// XR_META_performance_metrics counters that this runtime measures itself, without a round trip:
// the app's CPU time per frame (xrBeginFrame to xrEndFrame of the last ended frame) and the
// machine's CPU utilization since the previous query (/proc/stat). Kept per session.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xrc::openxr {

inline constexpr std::string_view kAppCpuFrametimePath = "/perfmetrics_meta/app/cpu_frametime";
inline constexpr std::string_view kDeviceCpuUtilizationPath = "/perfmetrics_meta/device/cpu_utilization_average";

// Busy and total jiffies of all CPUs, from the first line of /proc/stat.
struct CpuTimes {
  uint64_t busy = 0, total = 0;
};
std::optional<CpuTimes> readCpuTimes();
// Utilization in percent between two samples (nullopt when no time passed).
std::optional<float> cpuUtilization(const CpuTimes& before, const CpuTimes& after);

class PerformanceMetrics {
 public:
  void setEnabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }
  void frameBegun(int64_t nowNs) { begunNs_ = nowNs; }
  void frameEnded(int64_t nowNs) {
    if (begunNs_) lastCpuFrameMs_ = float(double(nowNs - *begunNs_) / 1e6);
    begunNs_.reset();
  }
  std::optional<float> appCpuFrameMs() const { return lastCpuFrameMs_; }
  // Since the previous call (or since metrics were enabled): nullopt on the first call.
  std::optional<float> sampleCpuUtilization();

 private:
  bool enabled_ = false;
  std::optional<int64_t> begunNs_;
  std::optional<float> lastCpuFrameMs_;
  std::optional<CpuTimes> lastCpu_;
};

}  // namespace xrc::openxr
