#include "performance_metrics.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace xrc::openxr {

std::optional<CpuTimes> readCpuTimes() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return std::nullopt;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  uint64_t values[8] = {};
  for (uint64_t& v : values) {
    if (!(fields >> v)) return std::nullopt;
  }
  CpuTimes t;
  for (uint64_t v : values) t.total += v;
  t.busy = t.total - values[3] - values[4];
  return t;
}

std::optional<float> cpuUtilization(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total || after.busy < before.busy) return std::nullopt;
  return float(100.0 * double(after.busy - before.busy) / double(after.total - before.total));
}

std::optional<float> PerformanceMetrics::sampleCpuUtilization() {
  auto now = readCpuTimes();
  if (!now) return std::nullopt;
  std::optional<float> result;
  if (lastCpu_) result = cpuUtilization(*lastCpu_, *now);
  if (!result && lastCpu_) return std::nullopt;  // no time passed: keep the older sample
  lastCpu_ = now;
  return result;
}

}  // namespace xrc::openxr
