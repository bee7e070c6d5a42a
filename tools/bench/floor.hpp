// The floor reference: what a server process spends per request when N paced clients each send
// one request per display period, with nothing to do but answer. Measured for a plain Unix-socket
// echo (epoll, read, write) and for a Cap'n Proto server with one empty method, in the same run
// as the daemon, so that the daemon's CPU per client frame can be read as a multiple of what the
// transport alone costs on this machine (docs/BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <string>

#include "xrc/result.hpp"

namespace xrc::bench {

enum class FloorTransport { socket, capnp };

struct FloorOptions {
  FloorTransport transport = FloorTransport::socket;
  uint32_t clients = 1;
  double refreshHz = 90;
  double seconds = 2;
  // All clients send at the same instant of each period (as clients paced to one display do), or
  // spread evenly over the period.
  bool staggered = false;
  std::string selfExe;  // this program, started again as the server (see runFloorServer)
  std::string dir;      // where the server's socket goes
};

struct FloorResult {
  uint64_t requests = 0;  // answered in the measured window
  double serverCpuUsPerRequest = 0;
  double serverWakeupsPerRequest = 0;
  int64_t windowFromNs = 0, windowToNs = 0;  // CLOCK_MONOTONIC: the measured window
};

Result<FloorResult> measureFloor(const FloorOptions& options);

// The server side, run in its own process (`xr-compositor-bench --floor-server TRANSPORT
// --floor-socket PATH`): serves until killed. Returns only on a setup error.
int runFloorServer(FloorTransport transport, const std::string& socketPath);

}  // namespace xrc::bench
