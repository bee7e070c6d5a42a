// What a process's threads cost, from /proc: CPU time and how often each thread went off a CPU
// (slept or was preempted), the price of a wake-up being what it is on a VM (docs/BENCHMARKS.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace xrc::tools {

// CPU time of a process (its CPU clock) or of one of its threads (schedstat), in seconds, to the
// nanosecond: utime + stime count whole 10 ms ticks, ~37 µs per frame over the
// ~270 frames that a 5 s one-client bench run measures.
double cpuSeconds(pid_t pid, pid_t tid = 0);

// Context switches (voluntary + involuntary) of one thread: each time it slept or was preempted.
// Per frame they count a thread's wake-ups.
uint64_t contextSwitches(pid_t pid, pid_t tid);

struct ThreadUse {
  double cpuSeconds = 0;
  uint64_t switches = 0;
};

// CPU seconds and context switches of each thread of `pid`, summed by thread name (the daemon
// names its threads). The main thread, which runs the daemon's RPC event loop, is "rpc-main";
// unnamed threads (named after the program) belong to the Vulkan driver: "driver".
std::map<std::string, ThreadUse> useByThread(pid_t pid);

}  // namespace xrc::tools
