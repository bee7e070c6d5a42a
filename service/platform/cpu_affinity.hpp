// Which CPU the daemon's RPC thread runs on (`rpc_cpu` in the configuration). Left to the
// scheduler, a thread woken by a Unix-socket write is pulled towards the writer's CPU, so with
// many client processes the RPC thread starts nearly every turn on another CPU, its caches cold:
// on a 16-CPU H200 machine with 64 clients it moved ~3000 times in a run, and kept on one CPU it
// spent 1.5-1.9x less CPU per client frame (docs/BENCHMARKS.md, "The RPC thread kept on one CPU").
#pragma once

#include <vector>

#include "xrc/result.hpp"

namespace xrc::platform {

// The CPUs the calling thread may run on (its affinity mask), ascending; an error when the kernel
// would not say (sched_getaffinity).
Result<std::vector<int>> allowedCpus();

// Whether the calling thread may run on `cpu`: an error naming the CPUs it may run on if not.
Status cpuAllowed(int cpu);

// Keeps the calling thread on `cpu` alone. Threads it starts afterwards inherit that, so the
// daemon calls this once its other threads run. An error, changing nothing, when `cpu` is not
// one the thread may run on (a cgroup's cpuset, taskset, systemd's CPUAffinity=).
Status keepCallingThreadOn(int cpu);

// Lets the calling thread run on any of `cpus` again (those the process may use).
Status letCallingThreadRunOn(const std::vector<int>& cpus);

// The CPU the calling thread is kept on, or -1 where it may run on several (or the kernel would
// not say): what status reports as the RPC thread's CPU.
int keptCpu();

}  // namespace xrc::platform
