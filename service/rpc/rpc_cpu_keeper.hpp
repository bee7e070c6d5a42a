// `rpc_cpu = auto` on the RPC thread: reads the kernel's counts (platform/cpu_load.hpp), asks
// RpcCpuPolicy where the thread goes, and keeps it there. RPC thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../platform/cpu_load.hpp"
#include "rpc_cpu_policy.hpp"

namespace xrc {

class RpcCpuKeeper {
 public:
  static constexpr int64_t kWindowNs = 1'000'000'000;

  // On the thread that will answer the clients, as the daemon starts: the CPUs it may use, and a
  // first sample of their load (the first choice looks at the load while the daemon started).
  explicit RpcCpuKeeper(RpcCpuSettings settings = {});
  RpcCpuKeeper(const RpcCpuKeeper&) = delete;
  RpcCpuKeeper& operator=(const RpcCpuKeeper&) = delete;

  // Once the daemon's other threads run (they would inherit the CPU): keeps the calling thread on
  // the idlest CPU. Does nothing, and says why in the log, where the daemon may use one CPU only or
  // the kernel does not count a thread's waits for a CPU.
  void start();
  // Called often (the daemon's housekeeping wakes); looks once a window while `watching` (while
  // clients are connected: an idle daemon's thread hardly runs, and reading costs it wake-ups).
  void tick(int64_t nowNs, bool watching);

  uint32_t moves() const { return policy_.moves(); }

 private:
  struct Sample {
    int64_t ns = 0;
    platform::ThreadSchedule thread;
    std::vector<platform::CpuTimes> cpus;
  };
  static Result<Sample> sample(int64_t nowNs);
  // Puts the thread where `choice` says and tells the policy; false, with the reason logged and
  // the keeper stopped, where the kernel refused.
  bool apply(const RpcCpuPolicy::Choice& choice);
  // Stops moving the thread, saying why and where it stays.
  void stop(const std::string& why);

  RpcCpuPolicy policy_;
  std::vector<platform::CpuTimes> atStart_;
  std::optional<Sample> last_;
  bool active_ = false;
};

}  // namespace xrc
