// Color scale and bias (protocol 1.9, XR_KHR_composition_layer_color_scale_bias): every texel of
// a layer becomes texel * scale + bias before it is blended. A demo client submits its projection
// with a scale and bias that darken, saturate and shift the channels; every display pixel of both
// eyes is checked against the pattern so transformed: on the headless display, opaque and
// blended, and through daemon B (`--backend openxr`), which forwards the struct to daemon A's
// OpenXR runtime face.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"
#include "pattern.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kView = 256;  // harness daemons run with --view-size 256x256
constexpr uint64_t kStall = 20;
// Green saturates above half intensity; red and blue are compressed and lifted. Values a half
// float holds exactly (the display's shaders take them so).
const std::vector<float> kScale{0.5f, 1.f, 0.25f, 1.f};
const std::vector<float> kBias{0.25f, 0.5f, 0.5f, 0.f};

uint32_t scaleAndBias(uint32_t texel) {
  uint32_t out = 0;
  for (int k = 0; k < 4; ++k) {
    const float v = float((texel >> (8 * k)) & 0xff) / 255.f * kScale[k] + kBias[k];
    out |= uint32_t(std::lround(std::clamp(v, 0.f, 1.f) * 255.f)) << (8 * k);
  }
  return out;
}

struct Case {
  const char* name;
  bool throughOpenXr;  // the client is daemon B's, B runs over A
  uint32_t alpha;      // < 255: the projection is blended over A's cleared (opaque black) output
};

// Pixels of both eyes that differ from the demo's frame kStall - 1, transformed.
size_t mismatches(const Pixels& px, const DemoSpec& spec, std::string& first) {
  size_t count = 0;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        const uint32_t texel = pattern::color({spec.seed, eye, kStall - 1, 0, 0, spec.alpha}, x, y);
        const uint32_t colored = scaleAndBias(texel);
        const uint32_t want = spec.alpha < 255 ? blendOver(colored, 0xff000000u) : colored;
        uint32_t got;
        std::memcpy(&got, px.data.data() + (size_t(y) * px.width + eye * kView + x) * 4, 4);
        if (!closeEnough(got, want, 2) && count++ == 0) {
          first = fmt::format("eye {} ({},{}): texel {:08x}, got {:08x}, want {:08x}", eye, x, y, texel, got, want);
        }
      }
    }
  }
  return count;
}

class ColorScaleBias : public ::testing::TestWithParam<Case> {};

TEST_P(ColorScaleBias, EveryPixelIsTheTexelScaledAndBiased) {
  const Case c = GetParam();
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  std::unique_ptr<Daemon> b;
  if (c.throughOpenXr) {
    // Without the core validation layer between B and A: Debian 12's (1.0.20) refuses
    // XrCompositionLayerColorScaleBiasKHR in a layer's next chain
    // (VUID-XrCompositionLayerProjection-next-next), which the extension puts there.
    b = startDaemonOver(a, dirB, /*coreValidation=*/false);
    ASSERT_TRUE(b->ready()) << b->process().output();
  }
  const Daemon& target = b ? *b : a;
  DemoSpec spec{"colored", 61, 1000000};
  spec.alpha = c.alpha;
  spec.stallAfter = kStall;  // the last frame stays on the display
  spec.colorScale = kScale;
  spec.colorBias = kBias;
  auto demo = startDemo(target, b ? dirB : dirA, spec);
  ASSERT_TRUE(demo->waitForOutput("stalled after 20 frames", 120s)) << demo->output();
  auto control = a.control();
  ASSERT_TRUE(control);
  // Until A shows the last frame (through B: until B's copy of it arrived).
  size_t wrong = 1;
  std::string first = "no display frame read";
  for (auto deadline = std::chrono::steady_clock::now() + 60s;
       wrong > 0 && std::chrono::steady_clock::now() < deadline;) {
    auto display = control->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    const auto& shown = display.value().shown;
    const bool last =
        !shown.empty() &&
        (b || std::all_of(shown.begin(), shown.end(), [](const auto& l) { return l.releaseOrdinal == kStall - 1; }));
    if (last) wrong = mismatches(display.value().pixels, spec, first);
    if (wrong > 0) std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(wrong, 0u) << first << (b ? "\n" + b->process().output() : "");
}

INSTANTIATE_TEST_SUITE_P(OpaqueBlendedForwarded, ColorScaleBias,
                         ::testing::Values(Case{"opaque", false, 255}, Case{"blended", false, 128},
                                           Case{"throughOpenXrBackend", true, 255}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xrc::test
