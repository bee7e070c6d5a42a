// Where the daemon's RPC thread runs when `rpc_cpu` is `auto` (the default). Left to the
// scheduler, a thread woken by a client's socket write is pulled towards the writer's CPU, so with
// many clients it starts nearly every turn on another CPU with cold caches; kept on one CPU it
// costs far less per client frame (docs/BENCHMARKS.md, "The RPC thread kept on one CPU"). But a
// thread kept on one CPU cannot leave it when something else takes it. So the thread is kept on
// the idlest CPU the daemon may use, and once a second, while clients are connected, its waits for
// that CPU are looked at: where the thread, runnable, waited on average `takenMeanWait` or more
// per turn, the CPU counts as taken and the thread moves to the idlest other CPU that is idle
// enough, or, with none, is left to the scheduler, and kept again `retryWindows` later.
// Pure logic; RpcCpuKeeper reads the kernel's counts and applies the choice.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../platform/cpu_load.hpp"

namespace xrc {

struct RpcCpuSettings {
  // A tenth of the let-go's default lead before the latch (copy_batch_before_latch_us): a CPU that
  // keeps the thread waiting that long per turn would soon make held frames miss their latch. On an
  // idle CPU the wait is a few µs; beside a CPU-bound process of the same nice value, 4-40 µs
  // (2-core VM, 2026-12-03).
  std::chrono::microseconds takenMeanWait{200};
  // Fewer turns in a window say too little about the CPU (an idle daemon's thread), unless they
  // waited minRuns x takenMeanWait in all: a CPU taken outright leaves the thread few turns.
  uint64_t minRuns = 10;
  // A CPU busier than this over the last window does not take the thread.
  double idleEnoughBusy = 0.5;
  // Left to the scheduler for want of an idle CPU: windows until it is kept again.
  uint32_t retryWindows = 30;
};

// A CPU's busy share (0..1) over a window.
struct CpuBusy {
  int cpu = 0;
  double busy = 0;
};

// Each CPU's busy share between two samples of /proc/stat: CPUs in both whose clock ticked.
std::vector<CpuBusy> busyBetween(std::span<const platform::CpuTimes> before, std::span<const platform::CpuTimes> after);

class RpcCpuPolicy {
 public:
  // `allowed`: the CPUs the daemon may run on.
  RpcCpuPolicy(std::vector<int> allowed, RpcCpuSettings settings);

  // Where the thread should go. The policy follows it only once it is there (moved()): a move
  // the kernel refused changes nothing.
  struct Choice {
    int cpu = -1;  // the CPU to keep the thread on; -1: left to the scheduler
    bool changed = false;
    std::string why;  // for the log, where changed
  };

  // The first CPU: the idlest allowed one that is idle enough in `busy`, or `current`, where the
  // thread already is and its caches are warm, where that is within 5 points of it (or `busy`
  // says nothing: a start too short for a clock tick).
  Choice start(int current, std::span<const CpuBusy> busy);
  // One window: how the thread waited (the counts' difference over the window) and how busy each
  // CPU was.
  Choice step(const platform::ThreadSchedule& waited, std::span<const CpuBusy> busy);
  // The thread went where `choice` said.
  void moved(const Choice& choice);

  int cpu() const { return cpu_; }
  const std::vector<int>& allowed() const { return allowed_; }
  const RpcCpuSettings& settings() const { return settings_; }
  // Times the thread was moved or left to the scheduler after it started, and kept again.
  uint32_t moves() const { return moves_; }

 private:
  // The idlest allowed CPU other than `except` that is idle enough, or -1.
  int idlest(std::span<const CpuBusy> busy, int except) const;
  bool allowed(int cpu) const;
  bool taken(const platform::ThreadSchedule& waited) const;

  std::vector<int> allowed_;
  RpcCpuSettings settings_;
  int cpu_ = -1;
  bool started_ = false;
  uint32_t moves_ = 0;
  uint32_t windowsUnkept_ = 0;  // windows the thread was left to the scheduler since it was kept
};

}  // namespace xrc
