// The operator's side of xr-compositord: status and readbacks (xr-compositorctl, tests).
// Only the daemon's own uid (or root) is let in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xrc/protocol_rules.hpp"
#include "xrc/readback.hpp"
#include "xrc/result.hpp"

namespace xrc::control {

struct ClientStatus {
  uint32_t id = 0;
  std::string name;
  uint32_t pid = 0;
  SyncMode syncMode = SyncMode::host;
  uint64_t framesSubmitted = 0;
  uint32_t swapchains = 0;
  uint64_t releases = 0;
  float gpuCopyUsP50 = 0, gpuCopyUsP99 = 0;  // 0 when the device has no timestamps
};

struct DaemonStatus {
  std::string daemonVersion;
  std::string backend;
  int64_t uptimeNs = 0;
  float refreshHz = 0;
  uint64_t displayFrames = 0;
  std::vector<ClientStatus> clients;
};

using xrc::Pixels;
using xrc::ShownLayer;

struct SwapchainReadback {
  Pixels pixels;
  uint64_t releaseOrdinal = 0;
};

using DisplayReadback = xrc::DisplaySnapshot;

class ControlClient {
 public:
  static Result<std::unique_ptr<ControlClient>> connect(const std::string& socketPath = {});
  ~ControlClient();

  Result<DaemonStatus> status();
  Result<SwapchainReadback> readSwapchain(uint32_t clientId, uint32_t swapchainId);
  Result<DisplayReadback> readDisplay();

  struct Impl;
  explicit ControlClient(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace xrc::control
