#include "rpc_cpu_keeper.hpp"

#include <sched.h>

#include <fmt/format.h>

#include "xrc/monotonic_clock.hpp"

#include "../log.hpp"
#include "../platform/cpu_affinity.hpp"

namespace xrc {
namespace {

// The CPUs the daemon may use, or none (logged) where the kernel would not say.
std::vector<int> daemonCpus() {
  auto allowed = platform::allowedCpus();
  if (!allowed) {
    log::warn("rpc_cpu auto: {}; the RPC thread runs wherever the scheduler puts it", allowed.error().message);
    return {};
  }
  return std::move(allowed).value();
}

}  // namespace

RpcCpuKeeper::RpcCpuKeeper(RpcCpuSettings settings) : policy_(daemonCpus(), settings) {
  if (auto cpus = platform::readCpuTimes()) atStart_ = std::move(cpus).value();
}

Result<RpcCpuKeeper::Sample> RpcCpuKeeper::sample(int64_t nowNs) {
  auto thread = platform::readCallingThreadSchedule();
  if (!thread) return thread.error();
  auto cpus = platform::readCpuTimes();
  if (!cpus) return cpus.error();
  return Sample{nowNs, thread.value(), std::move(cpus).value()};
}

void RpcCpuKeeper::start() {
  if (policy_.allowed().size() == 1) {
    log::debug("rpc_cpu auto: the daemon may use one CPU only; the RPC thread runs there");
  }
  if (policy_.allowed().size() < 2) return;
  auto now = sample(monotonicNowNs());
  if (!now) {
    log::info("rpc_cpu auto: {}; the RPC thread runs wherever the scheduler puts it", now.error().message);
    return;
  }
  // A kernel without CONFIG_SCHED_INFO reads zeros: a thread that has run has been put on a CPU.
  if (now.value().thread.runs == 0) {
    log::info(
        "rpc_cpu auto: this kernel does not say how long a thread waits for a CPU (schedstat reads zeros), "
        "so a busy CPU could not be left; the RPC thread runs wherever the scheduler puts it");
    return;
  }
  const RpcCpuPolicy::Choice choice = policy_.start(::sched_getcpu(), busyBetween(atStart_, now.value().cpus));
  active_ = true;
  if (choice.cpu < 0) {
    policy_.moved(choice);
    log::info("rpc_cpu auto: {}; the RPC thread runs wherever the scheduler puts it until one is", choice.why);
  } else if (apply(choice)) {
    log::info("RPC thread kept on CPU {} ({}; rpc_cpu auto)", choice.cpu, choice.why);
  }
}

void RpcCpuKeeper::stop(const std::string& why) {
  const int kept = platform::keptCpu();
  log::warn("rpc_cpu auto: {}; the RPC thread is no longer moved and stays {}", why,
            kept >= 0 ? fmt::format("on CPU {}", kept) : std::string("where the scheduler puts it"));
  active_ = false;
}

bool RpcCpuKeeper::apply(const RpcCpuPolicy::Choice& choice) {
  // Not keepCallingThreadOn: that checks the CPU against the thread's own set, one CPU once kept.
  Status applied = platform::letCallingThreadRunOn(choice.cpu >= 0 ? std::vector<int>{choice.cpu} : policy_.allowed());
  if (!applied && choice.cpu < 0) {
    // The daemon's cpuset shrank past every CPU it started with: every CPU, as the kernel allows.
    std::vector<int> every(CPU_SETSIZE);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) every[size_t(cpu)] = cpu;
    applied = platform::letCallingThreadRunOn(every);
  }
  if (!applied) {
    stop(applied.error().message);
    return false;
  }
  policy_.moved(choice);
  return true;
}

void RpcCpuKeeper::tick(int64_t nowNs, bool watching) {
  if (!active_) return;
  if (!watching) {
    last_.reset();
    return;
  }
  if (last_ && nowNs - last_->ns < kWindowNs) return;
  // Kept, the thread runs on its CPU alone unless something outside changed that (taskset, a
  // cpuset that no longer has the CPU): that one decides now.
  if (const int kept = platform::keptCpu(); policy_.cpu() >= 0 && kept != policy_.cpu()) {
    stop(fmt::format("the RPC thread was kept on CPU {}, and its CPUs were changed from outside", policy_.cpu()));
    return;
  }
  auto now = sample(nowNs);
  if (!now) {
    stop(now.error().message);
    return;
  }
  if (last_) {
    const platform::ThreadSchedule waited{now.value().thread.ranNs - last_->thread.ranNs,
                                          now.value().thread.waitedNs - last_->thread.waitedNs,
                                          now.value().thread.runs - last_->thread.runs};
    const int from = policy_.cpu();
    const RpcCpuPolicy::Choice choice = policy_.step(waited, busyBetween(last_->cpus, now.value().cpus));
    if (choice.changed && apply(choice)) {
      if (choice.cpu >= 0 && from >= 0) {
        log::info("RPC thread moved from CPU {} to CPU {}: {}", from, choice.cpu, choice.why);
      } else if (choice.cpu >= 0) {
        log::info("RPC thread kept on CPU {} (it ran wherever the scheduler put it): {}", choice.cpu, choice.why);
      } else {
        log::warn(
            "RPC thread left to the scheduler: {}; looked at again after {} s with clients, and kept on a CPU "
            "then if one is idle enough",
            choice.why, policy_.settings().retryWindows * kWindowNs / 1'000'000'000);
      }
    }
  }
  last_ = std::move(now).value();
}

}  // namespace xrc
