// The GPU floor reference: N processes, each with its own Vulkan device, doing per display period
// the GPU work a client does besides the daemon (client-lib's acquire and release submissions,
// the acquire waited for, the release too in `host` mode, and optionally a clear of a full
// swapchain image, as the demo's rendering), with no compositor at all. The rate they reach is the most any
// compositor with one process per client can get from this GPU (docs/BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "xrc/result.hpp"

namespace xrc::bench {

struct GpuFloorOptions {
  uint32_t clients = 1;
  double refreshHz = 90;
  double seconds = 3;
  // 0: only the two small submissions; else also clear a 2-layer image of this size each period.
  uint32_t clearWidth = 0, clearHeight = 0;
  // `host` mode: the release's submission is waited for too (a fence), as client-lib does there.
  bool releaseWaits = false;
  // 2: a swapchain per view (`--stereo separate`, as hello_xr has): each view's image is acquired,
  // waited for, cleared (its one layer) and released on its own, as client-lib does per swapchain.
  uint32_t swapchains = 1;
  std::string selfExe;  // this program, started again as each client (see runGpuFloorClient)
  std::string dir;      // the clients' logs
  // Called once every client has been told to start, while they run (`seconds` from their first
  // period on); what it measures runs beside their load. Its return is not waited for by them.
  std::function<void()> whileRunning;
};

struct GpuFloorResult {
  double framesPerSecondMedian = 0;  // periods each client completed per second: the median client
  double framesPerSecondMin = 0;     // and the slowest
  double acquiresPerFrame = 0;       // waited acquires per completed period, over all clients
  // CLOCK_MONOTONIC: the latest first period and the earliest last one of any client, the span in
  // which every client ran.
  int64_t allRunningFromNs = 0, allRunningToNs = 0;
};

Result<GpuFloorResult> measureGpuFloor(const GpuFloorOptions& options);

// One client process (`xr-compositor-bench --floor-gpu-client PERIOD_NS SECONDS WIDTH HEIGHT
// RELEASE_WAITS SWAPCHAINS`): creates its device, prints "ready", waits for stdin to close, runs,
// prints "completed=N acquires=M from=NS to=NS" (CLOCK_MONOTONIC: its first period's start, its
// last period's end).
int runGpuFloorClient(int64_t periodNs, double seconds, uint32_t clearWidth, uint32_t clearHeight, bool releaseWaits,
                      uint32_t swapchains);

}  // namespace xrc::bench
