#include "rpc_cpu_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace xrc {

std::vector<CpuBusy> busyBetween(std::span<const platform::CpuTimes> before,
                                 std::span<const platform::CpuTimes> after) {
  std::vector<CpuBusy> out;
  for (const platform::CpuTimes& a : after) {
    auto b = std::find_if(before.begin(), before.end(), [&](const platform::CpuTimes& t) { return t.cpu == a.cpu; });
    if (b == before.end()) continue;
    // A counter that went backwards (a CPU taken offline and back) counts as no tick.
    const uint64_t total = a.total > b->total ? a.total - b->total : 0;
    const uint64_t busy = a.busy > b->busy ? a.busy - b->busy : 0;
    out.push_back({a.cpu, total == 0 ? 0.0 : std::min(1.0, double(busy) / double(total))});
  }
  return out;
}

RpcCpuPolicy::RpcCpuPolicy(std::vector<int> allowed, RpcCpuSettings settings)
    : allowed_(std::move(allowed)), settings_(settings) {}

bool RpcCpuPolicy::allowed(int cpu) const { return std::find(allowed_.begin(), allowed_.end(), cpu) != allowed_.end(); }

int RpcCpuPolicy::idlest(std::span<const CpuBusy> busy, int except) const {
  int best = -1;
  double bestBusy = 2;
  for (const CpuBusy& b : busy) {
    if (b.cpu == except || !allowed(b.cpu) || b.busy > settings_.idleEnoughBusy) continue;
    if (b.busy < bestBusy) {
      best = b.cpu;
      bestBusy = b.busy;
    }
  }
  return best;
}

RpcCpuPolicy::Choice RpcCpuPolicy::start(int current, std::span<const CpuBusy> busy) {
  int chosen = idlest(busy, -1);
  if (chosen >= 0 && allowed(current)) {
    auto here = std::find_if(busy.begin(), busy.end(), [&](const CpuBusy& b) { return b.cpu == current; });
    auto best = std::find_if(busy.begin(), busy.end(), [&](const CpuBusy& b) { return b.cpu == chosen; });
    if (here != busy.end() && here->busy <= best->busy + 0.05) chosen = current;
  }
  cpu_ = chosen;
  if (chosen < 0) {
    return {-1, false, fmt::format("no CPU it may use was at most {:.0f} % busy", settings_.idleEnoughBusy * 100)};
  }
  return {chosen, true, fmt::format("the idlest CPU it may use as the daemon started")};
}

RpcCpuPolicy::Choice RpcCpuPolicy::step(const platform::ThreadSchedule& waited, std::span<const CpuBusy> busy) {
  if (cpu_ < 0) {
    if (++windowsLeft_ < settings_.retryWindows) return {-1, false, {}};
    windowsLeft_ = 0;
    const int next = idlest(busy, -1);
    if (next < 0) return {-1, false, {}};
    cpu_ = next;
    ++moves_;
    return {next, true, fmt::format("CPU {} was at most {:.0f} % busy", next, settings_.idleEnoughBusy * 100)};
  }
  if (waited.runs < settings_.minRuns) return {cpu_, false, {}};
  const auto meanWait = std::chrono::nanoseconds(waited.waitedNs / waited.runs);
  if (meanWait < settings_.takenMeanWait) return {cpu_, false, {}};
  const int from = cpu_;
  const std::string waits =
      fmt::format("it waited {} µs on average in each of its {} turns for CPU {}",
                  std::chrono::duration_cast<std::chrono::microseconds>(meanWait).count(), waited.runs, from);
  cpu_ = idlest(busy, from);
  windowsLeft_ = 0;
  ++moves_;
  if (cpu_ < 0) {
    return {-1, true,
            fmt::format("{}, and no other CPU it may use was at most {:.0f} % busy", waits,
                        settings_.idleEnoughBusy * 100)};
  }
  return {cpu_, true, waits};
}

}  // namespace xrc
