// The demo client's test pattern: a pure function of who rendered it and when, so that tests
// can check read-back pixels exactly. Frame-varying (moving bars) and different per client,
// swapchain, array layer and mip level.
#pragma once

#include <cstdint>

namespace xrc::pattern {

struct Key {
  uint32_t seed = 0;       // per client
  uint32_t swapchain = 0;  // index of the swapchain within the client (0, 1, ...)
  uint64_t ordinal = 0;    // which release of that swapchain (0-based): the frame number
  uint32_t layer = 0;
  uint32_t mip = 0;
  uint32_t alpha = 255;  // the same for every texel (blended layers)
};

// RGBA8, little-endian packed (R in the low byte), alpha from the key.
inline uint32_t color(const Key& k, uint32_t x, uint32_t y) {
  const uint32_t t = uint32_t(k.ordinal);
  const bool bar = ((x + t * 4u + k.seed * 8u) / 16u) % 4u == 0u;
  const uint32_t r = bar ? 255u : ((x * 3u + t * 5u + k.seed * 37u) & 0xffu);
  const uint32_t g = (y * 2u + k.layer * 96u + k.mip * 40u + k.swapchain * 20u) & 0xffu;
  const uint32_t b = ((x ^ y) + t * 7u + k.seed * 11u + k.swapchain * 64u) & 0xffu;
  return r | (g << 8) | (b << 16) | ((k.alpha & 0xffu) << 24);
}

// Exactly representable D32 value in [0, 1).
inline float depth(const Key& k, uint32_t x, uint32_t y) {
  const uint32_t v = (x * 7u + y * 13u + uint32_t(k.ordinal) * 5u + k.layer * 101u + k.mip * 3u + k.seed) % 1024u;
  return float(v) / 1024.0f;
}

}  // namespace xrc::pattern
