// The daemon's CPU scheduling priority (its nice value, `nice` in the configuration). With more
// busy client processes than cores the RPC thread shares the CPUs with them; an operator may put
// it ahead of them (docs/OPERATIONS.md, docs/BENCHMARKS.md "CPU priority").
#pragma once

#include <sys/resource.h>

#include <string>

namespace xrc::platform {

// Linux's nice values: -20 (most favoured) .. 19.
inline constexpr int kLowestNice = -20;
inline constexpr int kHighestNice = 19;

// The lowest nice value that RLIMIT_NICE's soft limit `limit` lets a process without
// CAP_SYS_NICE set: 20 − limit, within -20..20 (20: it may not lower its nice value at all).
int lowestNiceAllowedBy(rlim_t limit);

// The nice value to try when `asked` was refused at nice `current` under RLIMIT_NICE `limit`:
// the nearest to `asked` the limit allows, or `current` when that is no lower.
int fallbackNice(int asked, int current, rlim_t limit);

struct NiceOutcome {
  int asked = 0;
  int before = 0;
  int applied = 0;
  std::string refusal;  // empty when `asked` was applied; else why not, for the log
};

// Sets the calling thread's nice value to `asked`, or where that is refused (no CAP_SYS_NICE,
// RLIMIT_NICE too low) the lowest RLIMIT_NICE allows. Threads created afterwards inherit it, so
// the daemon calls this before it starts any.
NiceOutcome applyNice(int asked);

// The calling thread's nice value.
int currentNice();

}  // namespace xrc::platform
