#include "rpc_cpu_keeper.hpp"

#include <sched.h>

#include "xrc/monotonic_clock.hpp"

#include "../log.hpp"
#include "../platform/cpu_affinity.hpp"

namespace xrc {

RpcCpuKeeper::RpcCpuKeeper(RpcCpuSettings settings) : policy_({}, settings) {
  if (auto allowed = platform::allowedCpus()) allowed_ = std::move(allowed).value();
  policy_ = RpcCpuPolicy(allowed_, settings);
  if (auto cpus = platform::readCpuTimes()) atStart_ = std::move(cpus).value();
}

std::optional<RpcCpuKeeper::Sample> RpcCpuKeeper::sample(int64_t nowNs) {
  auto thread = platform::readCallingThreadSchedule();
  auto cpus = platform::readCpuTimes();
  if (!thread || !cpus) return std::nullopt;
  return Sample{nowNs, thread.value(), std::move(cpus).value()};
}

void RpcCpuKeeper::start() {
  if (allowed_.size() < 2) {
    log::debug("rpc_cpu auto: the daemon may use one CPU only; the RPC thread runs there");
    return;
  }
  auto now = sample(monotonicNowNs());
  // A kernel without CONFIG_SCHED_INFO reads zeros: a thread that has run has been put on a CPU.
  if (!now || now->thread.runs == 0 || atStart_.empty()) {
    log::info(
        "rpc_cpu auto: this kernel does not say how long a thread waits for a CPU, so a busy CPU could "
        "not be left; the RPC thread runs wherever the scheduler puts it");
    return;
  }
  const std::vector<CpuBusy> busy = busyBetween(atStart_, now->cpus);
  const RpcCpuPolicy::Choice choice = policy_.start(::sched_getcpu(), busy);
  if (choice.cpu < 0) {
    log::info("rpc_cpu auto: {}; the RPC thread runs wherever the scheduler puts it", choice.why);
  } else if (!apply(choice)) {
    return;
  } else {
    log::info("RPC thread kept on CPU {} ({}; rpc_cpu auto)", choice.cpu, choice.why);
  }
  active_ = true;
}

bool RpcCpuKeeper::apply(const RpcCpuPolicy::Choice& choice) {
  // Not keepCallingThreadOn: that checks the CPU against the thread's own set, one CPU once kept.
  const Status applied = platform::letCallingThreadRunOn(choice.cpu >= 0 ? std::vector<int>{choice.cpu} : allowed_);
  if (!applied) {
    // The daemon's CPUs changed under it (its cpuset): no longer watched.
    log::warn("rpc_cpu auto: {}; the RPC thread stays where it is, no longer moved", applied.error().message);
    active_ = false;
    return false;
  }
  return true;
}

void RpcCpuKeeper::tick(int64_t nowNs, bool watching) {
  if (!active_) return;
  if (!watching) {
    last_.reset();
    return;
  }
  if (last_ && nowNs - last_->ns < kWindowNs) return;
  auto now = sample(nowNs);
  if (!now) return;
  if (last_) {
    const platform::ThreadSchedule waited{now->thread.ranNs - last_->thread.ranNs,
                                          now->thread.waitedNs - last_->thread.waitedNs,
                                          now->thread.runs - last_->thread.runs};
    const int from = policy_.cpu();
    const RpcCpuPolicy::Choice choice = policy_.step(waited, busyBetween(last_->cpus, now->cpus));
    if (choice.changed && apply(choice)) {
      if (choice.cpu >= 0 && from >= 0) {
        log::info("RPC thread moved from CPU {} to CPU {}: {}", from, choice.cpu, choice.why);
      } else if (choice.cpu >= 0) {
        log::info("RPC thread kept on CPU {} again: {}", choice.cpu, choice.why);
      } else {
        log::warn("RPC thread left to the scheduler: {}; kept on a CPU again once one is idle", choice.why);
      }
    }
  }
  last_ = std::move(now);
}

}  // namespace xrc
