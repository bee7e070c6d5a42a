// The operator's side of xr-compositord: status, readbacks, primary switching and kicking
// (xr-compositorctl, tests).
// Only the daemon's own uid (or root) is let in.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xrc/input.hpp"
#include "xrc/pose.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/readback.hpp"
#include "xrc/result.hpp"

namespace xrc::control {

// See ClientStatus / DaemonStatus in xrc.capnp for what each figure means.
enum class SessionRole { primary, background, overlay };
const char* sessionRoleName(SessionRole role);

struct Percentiles {
  float p50 = 0, p99 = 0;
};

struct ClientStatus {
  uint32_t id = 0;
  std::string name;
  uint32_t pid = 0;
  SyncMode syncMode = SyncMode::host;
  uint64_t framesSubmitted = 0;
  uint32_t swapchains = 0;
  uint64_t releases = 0;
  float gpuCopyUsP50 = 0, gpuCopyUsP99 = 0;  // 0 when the device has no timestamps
  SessionRole role = SessionRole::background;
  uint32_t overlayPlacement = 0;
  uint64_t framesDisplayed = 0, framesLate = 0, framesDropped = 0, framesHidden = 0;
  uint32_t displayPeriods = 1;
  Percentiles releaseUs, latencyUs, frameIntervalUs;
  uint64_t imageBytes = 0;              // image memory its swapchains hold in the daemon (1.8)
  bool hung = false;                    // no frame calls for hung_client_timeout_ms (1.8)
  uint32_t stalledMs = 0;               // since its last frame call (1.8)
  uint64_t framesStale = 0;             // display frames that showed its last frame again: the next was late (1.8)
  uint64_t releasesRenderTimedOut = 0;  // timeline mode: rendering unfinished in time, not copied (1.11)
  uint64_t releasesSkipped = 0;         // acknowledged without a copy: over max_copy_mib_per_period (1.8)
  uint64_t copySubmissions = 0;         // queue submissions that carried its copies
  uint64_t hostCopies = 0;              // host mode: copies made on the daemon's thread (1.16)
  Percentiles hostCopyUs;               // their time on that thread (1.16)
  uint64_t waitsAnsweredAtOnce = 0;     // implied waits answered as their endFrame came (1.18)
  uint64_t framesReprojected = 0;       // display frames that rotated its projection to the head's pose then (1.10)
};

// A limit the daemon enforced, by config key (1.8).
struct LimitHit {
  std::string limit;
  uint64_t count = 0;
  float secondsAgo = 0;
};

// The desktop window the display is also shown in (1.10, --backend window).
struct WindowOutputStatus {
  bool open = false;  // false once closed
  uint32_t width = 0, height = 0;
  uint64_t presents = 0, skipped = 0, recreations = 0, backlogDrains = 0;
  uint32_t swapchainsLive = 0, presentSemaphoresLive = 0, maxSubmissionsInFlight = 0;
};

struct DaemonStatus {
  std::string daemonVersion;
  std::string backend;
  int64_t uptimeNs = 0;
  float refreshHz = 0;
  uint64_t displayFrames = 0;
  uint64_t layerViewsCulled = 0;       // skipped under an opaque projection view (1.4)
  uint64_t displayFramesGpuLate = 0;   // composed in time, finished on the GPU after the next vsync
  uint64_t displayFramesComposed = 0;  // 1.12: composed on the GPU (headless on-read: only those read)
  std::string gpuQueuePriority;        // the daemon's GPU queues' global priority (1.4)
  int32_t rpcThreadNice = 0;           // the CPU nice value of the daemon's RPC thread (1.19)
  int32_t rpcThreadCpu = -1;           // the CPU it is kept on, -1: several (1.21)
  uint32_t rpcThreadMoves = 0;         // rpc_cpu auto: moved off a busy CPU, left, kept again (1.22)
  uint32_t copyBatchLeadUs = 0;        // the let-go's lead before the latch now, 0: not batching (1.20)
  std::vector<ClientStatus> clients;
  uint64_t missedDisplayFrames = 0;
  Percentiles displayWorkUs, daemonCpuUsPerDisplayFrame;
  Percentiles displayWakeDelayUs;  // vsync -> display loop at work (headless)
  float daemonCpuUsPerClientFrame = 0;
  uint32_t primaryClientId = 0;  // 0: none
  uint32_t daemonPid = 0;
  // How the latest display frame met the environment (the bottom client frame's mode).
  EnvironmentBlendMode environmentBlendMode = EnvironmentBlendMode::opaque;
  std::vector<HapticStatus> haptics;            // per hand [left, right] (1.7; empty from older daemons)
  uint64_t acceptFailures = 0;                  // failed accept() calls: the daemon ran out of fds (1.7)
  uint64_t copyBatches = 0, copiesBatched = 0;  // copy batching: batches opened, copies that joined (1.14)
  // copy_batch_before_latch_us: frames held for a latch, and those committed after it (1.15)
  uint64_t framesHeld = 0, framesHeldPastLatch = 0;
  uint64_t copyQueueSubmissions = 0;               // vkQueueSubmit calls that carried clients' copies (1.17)
  std::vector<LimitHit> limitsHit;                 // (1.8)
  uint64_t imageBytes = 0, imageBytesLimit = 0;    // all clients' swapchain images (1.8)
  std::optional<WindowOutputStatus> windowOutput;  // none: no window output (1.10)
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
  Status setPrimary(uint32_t clientId);
  Status kick(uint32_t clientId);
  // Moves LOCAL to the head's current position and heading (headless backend).
  Status recenter();
  // Simulated controllers (headless, 1.7): a hand's device (`profile`, empty: keep it) and one
  // component's value (`component`, empty: none); where the hand's controller is.
  Status setInput(uint32_t hand, const std::string& profile, const std::string& component, float x, float y);
  Status setHandPose(uint32_t hand, const Pose& grip, const Pose& aim);

  struct Impl;
  explicit ControlClient(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace xrc::control
