// Cylinder, equirect and cube layers (protocol 1.6) on the headless display: a demo client submits one
// of its images as such a layer only, and every output pixel of both eyes is checked against the
// texel the layer's geometry puts there (or the cleared background where the layer is not).
#include <gtest/gtest.h>

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
constexpr float kHalfIpd = 0.0315f;
constexpr float kPi = 3.14159265f;

struct Shape {
  const char* kind;
  float radius;  // 0: infinitely far
};

// Where the eye's ray through output pixel (x, y) meets the demo's layer (centred on the head,
// facing -z; see tools/demo), as (u, v); nullopt where it misses. The same geometry as
// shaders/shape.comp, computed independently here.
// A cube's face and (u, v) for direction d, as Vulkan selects them (the faces are the demo's
// cube swapchain's layers 0..5).
std::array<double, 3> cubeFaceUv(const double d[3]) {
  const double ax = std::fabs(d[0]), ay = std::fabs(d[1]), az = std::fabs(d[2]);
  double face, sc, tc, ma;
  if (ax >= ay && ax >= az) {
    face = d[0] > 0 ? 0 : 1, sc = d[0] > 0 ? -d[2] : d[2], tc = -d[1], ma = ax;
  } else if (ay >= az) {
    face = d[1] > 0 ? 2 : 3, sc = d[0], tc = d[1] > 0 ? d[2] : -d[2], ma = ay;
  } else {
    face = d[2] > 0 ? 4 : 5, sc = d[2] > 0 ? d[0] : -d[0], tc = -d[1], ma = az;
  }
  return {face, 0.5 * (sc / ma + 1), 0.5 * (tc / ma + 1)};
}

std::optional<std::array<double, 2>> layerUv(const Shape& shape, uint32_t eye, uint32_t x, uint32_t y,
                                             uint32_t* face = nullptr) {
  const double tx = -1 + 2 * (x + 0.5) / kView, ty = 1 - 2 * (y + 0.5) / kView;  // 90-degree fov
  const double len = std::sqrt(tx * tx + ty * ty + 1);
  const double d[3] = {tx / len, ty / len, -1 / len};
  const double o[3] = {eye == 0 ? -kHalfIpd : kHalfIpd, 0, 0};
  const double r = shape.radius;
  double u = 0, v = 0;
  if (std::string(shape.kind) == "cube") {
    const auto fuv = cubeFaceUv(d);
    if (face != nullptr) *face = uint32_t(fuv[0]);
    return std::array<double, 2>{fuv[1], fuv[2]};
  }
  if (std::string(shape.kind) == "cylinder") {
    double hit[3];
    double radius = r;
    if (r == 0) {
      const double h = std::hypot(d[0], d[2]);
      for (int i = 0; i < 3; ++i) hit[i] = d[i] / h;
      radius = 1;
    } else {
      const double a = d[0] * d[0] + d[2] * d[2], b = o[0] * d[0] + o[2] * d[2], c = o[0] * o[0] + o[2] * o[2] - r * r;
      const double t = (-b + std::sqrt(b * b - a * c)) / a;
      for (int i = 0; i < 3; ++i) hit[i] = o[i] + t * d[i];
    }
    const double central = kPi / 2, height = radius * central / 1.0;
    u = std::atan2(hit[0], -hit[2]) / central + 0.5;
    v = 0.5 - hit[1] / height;
  } else {
    double dir[3] = {d[0], d[1], d[2]};
    if (r > 0) {
      const double b = o[0] * d[0], c = o[0] * o[0] - r * r;
      const double t = -b + std::sqrt(b * b - c);
      const double p[3] = {o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]};
      const double n = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
      for (int i = 0; i < 3; ++i) dir[i] = p[i] / n;
    }
    const double lon = std::atan2(dir[0], -dir[2]), polar = std::acos(std::clamp(dir[1], -1.0, 1.0));
    u = 4 * (lon / (2 * kPi) + 0.5) - 1.5;
    v = 2 * polar / kPi - 0.5;
  }
  if (u < 0 || v < 0 || u > 1 || v > 1) return std::nullopt;
  return std::array<double, 2>{u, v};
}

// Every output pixel of both eyes against the texel the layer's geometry puts there (or the
// cleared background where the layer is not), for the demo's frame `frame`.
struct ShapeCheck {
  size_t covered = 0, mismatches = 0;
  std::string first;
};

ShapeCheck checkShapePixels(const Pixels& px, const Shape& shape, uint32_t seed, uint64_t frame) {
  ShapeCheck check;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        uint32_t got;
        std::memcpy(&got, px.data.data() + (size_t(y) * px.width + eye * kView + x) * 4, 4);
        uint32_t face = 0;
        const auto uv = layerUv(shape, eye, x, y, &face);
        const bool cube = std::string(shape.kind) == "cube";
        // The cube swapchain is the demo's third (after the two eyes'); the others use eye 0's.
        const pattern::Key key{seed, cube ? 2u : 0u, frame, cube ? face : 0u, 0};
        // The GPU's float math may land one texel over at texel edges, and a pixel off at the
        // layer's border: any of the neighbouring texels (or the background there) is right.
        bool ok = false;
        const double sx = uv ? (*uv)[0] * kView : 0, sy = uv ? (*uv)[1] * kView : 0;
        // A cube has no border: its faces meet (a texel of the neighbouring face is as right).
        const bool border = !uv || (!cube && (sx < 1 || sy < 1 || sx > kView - 1 || sy > kView - 1));
        if (!uv || border) ok = got == 0xff000000u;  // cleared to opaque black
        if (uv) {
          check.covered++;
          for (int dy = -1; dy <= 1 && !ok; ++dy) {
            for (int dx = -1; dx <= 1 && !ok; ++dx) {
              const int tx = std::clamp(int(sx) + dx, 0, int(kView) - 1),
                        ty = std::clamp(int(sy) + dy, 0, int(kView) - 1);
              ok = got == pattern::color(key, uint32_t(tx), uint32_t(ty));
              // At a cube's edge the GPU may pick the neighbouring face.
              for (uint32_t f = 0; cube && f < 6 && !ok; ++f) {
                ok = got == pattern::color({seed, 2u, frame, f, 0}, uint32_t(tx), uint32_t(ty)) &&
                     (sx < 1 || sy < 1 || sx > kView - 1 || sy > kView - 1);
              }
            }
          }
        }
        if (!ok && check.mismatches++ == 0) {
          check.first = fmt::format("eye {} ({},{}): got {:08x}, layer uv {}", eye, x, y, got,
                                    uv ? fmt::format("({:.4f}, {:.4f})", (*uv)[0], (*uv)[1]) : "none");
        }
      }
    }
  }
  return check;
}

DemoSpec shapedDemo(const Shape& shape, uint64_t stall) {
  DemoSpec spec;
  spec.name = "shaped";
  spec.seed = 41;
  spec.frames = 1000000;
  spec.projection = false;
  spec.stallAfter = stall;  // the last frame stays on the display
  spec.shape = shape.kind;
  spec.shapeRadius = shape.radius;
  return spec;
}

class ShapedLayers : public ::testing::TestWithParam<Shape> {};

TEST_P(ShapedLayers, EveryPixelShowsTheTexelItsRayHits) {
  const Shape shape = GetParam();
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  constexpr uint64_t kStall = 20;
  const DemoSpec spec = shapedDemo(shape, kStall);
  auto demo = startDemo(daemon, dir, spec);
  ASSERT_TRUE(demo->waitForOutput("stalled after 20 frames", 120s)) << demo->output();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  Result<DisplaySnapshot> display = makeError(ErrorCode::notFound, "no display frame yet");
  for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
    display = control->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    if (display.value().shown.size() == 1 && display.value().shown[0].releaseOrdinal == kStall - 1) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(display.value().shown.size(), 1u);
  ASSERT_EQ(display.value().shown[0].releaseOrdinal, kStall - 1);
  const auto& px = display.value().pixels;
  ASSERT_EQ(px.width, 2 * kView);
  const ShapeCheck check = checkShapePixels(px, shape, spec.seed, kStall - 1);
  EXPECT_GT(check.covered, size_t(kView * kView / 2));  // the layer fills much of each eye
  EXPECT_EQ(check.mismatches, 0u) << check.first;
}

// The same layers from a client of daemon B, which runs `--backend openxr` over daemon A's
// OpenXR runtime face: B forwards them as XR_KHR_composition_layer_cylinder / _equirect / _cube
// layers, and A's display must show exactly what it shows for a client of its own.
class ShapedLayersThroughOpenXr : public ::testing::TestWithParam<Shape> {};

TEST_P(ShapedLayersThroughOpenXr, ReachTheRuntimeAsTheirOwnLayerType) {
  const Shape shape = GetParam();
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto over = startDaemonOver(a, dirB);
  Daemon& b = *over;
  ASSERT_TRUE(b.ready()) << b.process().output();
  constexpr uint64_t kStall = 20;
  const DemoSpec spec = shapedDemo(shape, kStall);
  auto demo = startDemo(b, dirB, spec);
  ASSERT_TRUE(demo->waitForOutput("stalled after 20 frames", 120s)) << demo->output() << b.process().output();
  auto control = a.control();
  ASSERT_TRUE(control);
  // B keeps handing A its client's last frame; A shows it once B's copy of it arrived.
  ShapeCheck check;
  check.mismatches = 1;
  check.first = "no display frame read";
  for (auto deadline = std::chrono::steady_clock::now() + 60s;
       check.mismatches > 0 && std::chrono::steady_clock::now() < deadline;) {
    auto display = control->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    if (display.value().shown.size() == 1)
      check = checkShapePixels(display.value().pixels, shape, spec.seed, kStall - 1);
    if (check.mismatches > 0) std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(check.covered, size_t(kView * kView / 2));
  EXPECT_EQ(check.mismatches, 0u) << check.first << "\n" << b.process().output();
  EXPECT_EQ(b.process().output().find("left out of its frames"), std::string::npos) << b.process().output();
}

std::string shapeName(const ::testing::TestParamInfo<Shape>& info) {
  return fmt::format("{}{}", info.param.kind,
                     info.param.radius == 0 ? std::string("AtInfinity") : fmt::format("Radius{}m", info.param.radius));
}

INSTANTIATE_TEST_SUITE_P(CylinderEquirectCube, ShapedLayers,
                         ::testing::Values(Shape{"cylinder", 0}, Shape{"cylinder", 2}, Shape{"equirect", 0},
                                           Shape{"equirect", 3}, Shape{"cube", 0}),
                         shapeName);
INSTANTIATE_TEST_SUITE_P(CylinderEquirectCube, ShapedLayersThroughOpenXr,
                         ::testing::Values(Shape{"cylinder", 2}, Shape{"equirect", 3}, Shape{"cube", 0}), shapeName);

}  // namespace
}  // namespace xrc::test
