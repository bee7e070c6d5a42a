// Reference measurements taken in the same run as the benchmark, so results are read as ratios:
// a raw Unix-socket ping-pong and a GPU image copy on the compute-queue fast path.
#pragma once

#include <chrono>

#include <optional>
#include <string>

#include "xrc/result.hpp"

namespace xrc::bench {

struct Percentiles {
  double p50 = 0, p99 = 0;
};

// 64-byte ping-pong over a socketpair between two processes (round trip).
Percentiles socketPingPong(int iterations);

struct ReferenceCopyOptions {
  // Both images OPAQUE_FD-exportable dedicated allocations, like the daemon's shared images, to
  // separate the cost of external memory (drivers may lay it out differently) from the daemon's.
  bool exportable = false;
  // Source exportable, destination shared CONCURRENT by the copy and the graphics family: the
  // images the headless daemon copies between (its runtime images are read by composition).
  bool likeHeadless = false;
  // Pause between copies: 11 ms is one copy per frame at 90 Hz, the GPU idle in between, as the
  // daemon's copies with one client (0: back to back).
  std::chrono::milliseconds spacing{0};
  // The source holds written (pseudo-random) texels and keeps them between copies, as the
  // daemon's source holds what the client rendered; else it is a never-written image that each
  // copy transitions from UNDEFINED, which a GPU with compression may read almost for free.
  bool writtenSource = false;
  // With `likeHeadless`: each copy acquires the source from QUEUE_FAMILY_EXTERNAL and releases it
  // back afterwards, as the daemon does with the clients' images.
  bool externalAcquire = false;
  // Before each copy (outside the timed span) write a buffer larger than the GPU's last-level
  // cache, so the copy starts with neither image cached: the state the daemon's copies meet when
  // several clients have rendered since. Back-to-back copies of the same two images otherwise
  // run partly from cache (an H100's L2 holds 50 MB; a 2x1440x1600 copy touches 37 MB).
  bool coldCache = false;
};

// vkCmdCopyImage of a `layers` x width x height RGBA8 image on a compute-only queue when the
// device has one (else the graphics queue), GPU time by timestamp queries.
Result<Percentiles> referenceCopy(uint32_t width, uint32_t height, uint32_t layers, int iterations,
                                  const ReferenceCopyOptions& options, std::string& queueUsed);

}  // namespace xrc::bench
