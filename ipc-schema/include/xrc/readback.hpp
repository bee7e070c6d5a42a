// Read-back images as the daemon produces them and the control client receives them.
#pragma once

#include <cstdint>
#include <vector>

namespace xrc {

struct Pixels {
  uint32_t width = 0, height = 0, layers = 0, mips = 1;
  int64_t format = 0;         // VkFormat
  std::vector<uint8_t> data;  // tightly packed: mip-major, then layer-major
};

// One sub-image on the headless display: whose frame, and which release produced it.
struct ShownLayer {
  uint32_t clientId = 0;
  uint64_t frameId = 0;
  uint32_t swapchainId = 0;
  uint64_t releaseOrdinal = 0;
  // False when an opaque projection view above filled this view's eye: the compositor skipped
  // it (it could not have shown a pixel).
  bool drawn = true;
  uint32_t depthSwapchainId = 0;  // a projection view's depth sub-image's swapchain (0: none; 1.7)
};

// The headless display output as of one composed display frame, and what it shows.
struct DisplaySnapshot {
  Pixels pixels;
  std::vector<ShownLayer> shown;
  uint64_t displayFrame = 0;
};

}  // namespace xrc
