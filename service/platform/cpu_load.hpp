// What the kernel says about CPU load: each CPU's busy and total time (/proc/stat), and how long
// the calling thread waited for a CPU while it could run (/proc/thread-self/schedstat). The
// daemon's RPC thread, kept on one CPU, looks at these to leave a CPU that something else took
// (rpc/rpc_cpu_keeper.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "xrc/result.hpp"

namespace xrc::platform {

// One CPU's time since boot, in the kernel's clock ticks.
struct CpuTimes {
  int cpu = 0;
  uint64_t busy = 0;   // user, nice, system, irq, softirq, steal
  uint64_t total = 0;  // busy, idle and iowait
};

// The per-CPU lines ("cpuN ...") of /proc/stat's text, ascending by CPU; an error naming the line
// where one does not read as such.
Result<std::vector<CpuTimes>> parseCpuTimes(std::string_view procStat);
Result<std::vector<CpuTimes>> readCpuTimes();

// A thread's scheduling since it started (/proc/<pid>/task/<tid>/schedstat).
struct ThreadSchedule {
  uint64_t ranNs = 0;     // on a CPU
  uint64_t waitedNs = 0;  // runnable, waiting for one (the run queue)
  uint64_t runs = 0;      // times it was put on a CPU
};

Result<ThreadSchedule> parseThreadSchedule(std::string_view schedstat);
// The calling thread's. Some kernels keep no such count (CONFIG_SCHED_INFO off): an error then.
Result<ThreadSchedule> readCallingThreadSchedule();

}  // namespace xrc::platform
