// The daemon's settings: defaults, then /etc/xr-compositor/config.toml, then the user's
// $XDG_CONFIG_HOME/xr-compositor/config.toml (or --config FILE instead of both), then the
// command line. One set of validation rules for all of them; errors name the file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "limits.hpp"
#include "xrc/result.hpp"

namespace xrc {

// The longest copy_batch_us and copy_batch_before_latch_us: a display period at 90 Hz.
inline constexpr int64_t kMaxCopyBatchUs = 11000;
// The most copies gathered into one submission (copy_batch_copies_per_submission): every
// client's views at 64 clients.
inline constexpr int64_t kMaxCopiesPerSubmission = 256;
// The largest host_copy_max_kib: 64 MiB, some 6 ms of the RPC thread on lavapipe.
inline constexpr int64_t kMaxHostCopyKib = 65536;
// rpc_cpu's bound: glibc's CPU_SETSIZE, the CPUs its cpu_set_t can name (checked in daemon_config.cpp).
inline constexpr int64_t kMaxCpus = 1024;
// rpc_cpu's two values that are not a CPU: kept on the idlest CPU and moved off a busy one (auto),
// or left to the scheduler (any).
inline constexpr int64_t kRpcCpuAuto = -2;
inline constexpr int64_t kRpcCpuAny = -1;

struct DaemonConfig {
  std::string backend = "headless";
  std::string socket;  // empty: $XR_COMPOSITOR_SOCKET, else $XDG_RUNTIME_DIR/xr-compositor/socket
  double refreshHz = 90.0;
  std::string logLevel = "info";
  std::string viewSize = "1440x1600";
  std::string syncMode = "auto";
  std::string deviceUuid;
  int64_t shutdownGraceMs = 1000;
  int64_t copyBatchUs = 0;  // timeline mode: copies held up to this long to be submitted together (0: off)
  // Timeline mode, unless copyBatchUs is set: copies held to be submitted together this long
  // before the display's next latch (0: off). On by default: on a GPU time-sliced between client
  // processes it saves the daemon's context a turn per copy, and, with clients that prepare their
  // acquires, costs them no frames (docs/BENCHMARKS.md).
  int64_t copyBatchBeforeLatchUs = 2000;
  // The longest that lead grows to after held frames were committed past their latch (LetGoLead);
  // it shrinks back to copyBatchBeforeLatchUs while they are not. Not above it: the lead is fixed,
  // the default: growing it (up to 6000) bought nothing measurable at 64 clients on an H200
  // (docs/BENCHMARKS.md, "Copy batching before the latch").
  int64_t copyBatchBeforeLatchMaxUs = 0;
  // Timeline mode: the copies of a let-go (either batching), of every client, gathered into queue
  // submissions of this many copies (LetGoCopies); 0: one submission per client frame.
  int64_t copyBatchCopiesPerSubmission = 0;
  std::string environmentBlendModes = "opaque";  // headless: the display's, preferred first
  std::string mirror = "none";                   // headless: none | window (the display also shown in a window)
  std::string headMotion = "still";              // headless: still | sway (the simulated head turns to and fro)
  std::string compose = "on-read";               // headless: on-read | every-frame (when the display is composed)
  std::string queuePriority = "high";            // highest GPU queue priority to ask for: low|medium|high|realtime
  // The daemon's CPU nice value (all its threads), -20..19: the lowest RLIMIT_NICE allows where
  // this one is refused. 0 by default: below the clients' it gained nothing measurable with 64
  // clients on 16 cores, where run-to-run spread dominates (docs/BENCHMARKS.md, "CPU priority").
  int64_t nice = 0;
  // Where the RPC thread runs: kRpcCpuAuto (auto, the default) keeps it on the idlest CPU and
  // moves it off one that keeps it waiting (rpc/rpc_cpu_policy.hpp); kRpcCpuAny (any) leaves it to
  // the scheduler; a CPU number keeps it there whatever else runs on it.
  int64_t rpcCpu = kRpcCpuAuto;
  // auto: host-mode copies run on the daemon's thread (VK_EXT_host_image_copy) where the device is
  // Mesa's llvmpipe (lavapipe) with it; off: always on the copy queue.
  std::string hostCopies = "auto";
  // Host copies only of images (all layers and mips) up to this size: larger ones go to the copy
  // queue, so that no client's image holds the RPC thread long (0: none on the host).
  int64_t hostCopyMaxKib = 4096;
  bool openxrOverlay = false;  // openxr: the daemon's session is an overlay (XR_EXTX_overlay)
  bool reprojection = true;    // headless: projection views shown at another head orientation are rotated to it
  Limits limits;

  bool operator==(const DaemonConfig&) const = default;
};

// "WxH" with each side 1..8192 (view_size / --view-size); nothing else may follow.
bool parseViewSize(const std::string& text, uint32_t& width, uint32_t& height);

// rpc_cpu's text: auto, any or a CPU number (-1: any); an error saying what it may be, to follow
// the option's name.
Result<int64_t> parseRpcCpu(std::string_view text);

// Every value within its documented range. `prefix` is how options are named in messages
// ("--" for the command line, "" for files).
Status validateConfig(const DaemonConfig& config, std::string_view prefix = "--");

// Applies one TOML document (keys as in docs/OPERATIONS.md: refresh_hz, log_level, ...) over
// `config`. Unknown keys, wrong types and values out of range are errors naming `source`, the
// line and the key; on error `config` is left as it was.
Status applyToml(std::string_view text, const std::string& source, DaemonConfig& config);

// The files read when no --config is given: the system file, then the user's.
std::vector<std::string> defaultConfigFiles();

// Applies `files` in order over `base`. A file that does not exist is skipped; one that exists
// but cannot be read is an error.
Result<DaemonConfig> loadConfigFiles(const std::vector<std::string>& files, DaemonConfig base);

// What differs between two configurations, by key, for reload messages.
std::vector<std::string> changedKeys(const DaemonConfig& before, const DaemonConfig& after);

}  // namespace xrc
