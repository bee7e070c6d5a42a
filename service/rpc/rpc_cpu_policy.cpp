#include "rpc_cpu_policy.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace xrc {

std::vector<CpuBusy> busyBetween(std::span<const platform::CpuTimes> before,
                                 std::span<const platform::CpuTimes> after) {
  std::vector<CpuBusy> out;
  for (const platform::CpuTimes& a : after) {
    auto b = std::find_if(before.begin(), before.end(), [&](const platform::CpuTimes& t) { return t.cpu == a.cpu; });
    // A counter that went backwards (a CPU taken offline and back) says nothing, as no tick does.
    if (b == before.end() || a.total <= b->total || a.busy < b->busy) continue;
    out.push_back({a.cpu, std::min(1.0, double(a.busy - b->busy) / double(a.total - b->total))});
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

bool RpcCpuPolicy::taken(const platform::ThreadSchedule& waited) const {
  if (waited.runs == 0) return false;
  const auto meanWait = std::chrono::nanoseconds(waited.waitedNs / waited.runs);
  const auto total = std::chrono::nanoseconds(waited.waitedNs);
  return meanWait >= settings_.takenMeanWait &&
         (waited.runs >= settings_.minRuns || total >= settings_.takenMeanWait * settings_.minRuns);
}

RpcCpuPolicy::Choice RpcCpuPolicy::start(int current, std::span<const CpuBusy> busy) {
  const auto busyOf = [&](int cpu) {
    auto b = std::find_if(busy.begin(), busy.end(), [&](const CpuBusy& x) { return x.cpu == cpu; });
    return b == busy.end() ? -1.0 : b->busy;
  };
  int chosen = idlest(busy, -1);
  if (allowed(current)) {
    const double here = busyOf(current);
    if (busy.empty() ||
        (chosen >= 0 && here >= 0 && here <= settings_.idleEnoughBusy && here <= busyOf(chosen) + 0.05)) {
      chosen = current;
    }
  }
  if (chosen < 0) {
    return {-1, false, fmt::format("no CPU it may use was at most {:.0f} % busy", settings_.idleEnoughBusy * 100)};
  }
  return {chosen, true,
          busy.empty() ? "where it ran as the daemon started" : "the idlest CPU it may use as the daemon started"};
}

RpcCpuPolicy::Choice RpcCpuPolicy::step(const platform::ThreadSchedule& waited, std::span<const CpuBusy> busy) {
  if (cpu_ < 0) {
    if (++windowsUnkept_ < settings_.retryWindows) return {-1, false, {}};
    windowsUnkept_ = 0;
    const int next = idlest(busy, -1);
    if (next < 0) return {-1, false, {}};
    return {next, true, fmt::format("CPU {} was at most {:.0f} % busy", next, settings_.idleEnoughBusy * 100)};
  }
  if (!taken(waited)) return {cpu_, false, {}};
  const std::string waits = fmt::format(
      "it waited {} µs on average in each of its {} turns for CPU {}",
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::nanoseconds(waited.waitedNs / waited.runs))
          .count(),
      waited.runs, cpu_);
  const int next = idlest(busy, cpu_);
  if (next < 0) {
    return {-1, true,
            fmt::format("{}, and no other CPU it may use was at most {:.0f} % busy", waits,
                        settings_.idleEnoughBusy * 100)};
  }
  return {next, true, waits};
}

void RpcCpuPolicy::moved(const Choice& choice) {
  if (started_ && choice.cpu != cpu_) ++moves_;
  started_ = true;
  cpu_ = choice.cpu;
  windowsUnkept_ = 0;
}

}  // namespace xrc
