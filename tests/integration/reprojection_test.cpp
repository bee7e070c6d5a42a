// Rotational reprojection on the headless display: a client whose projection views say they were
// rendered with the head turned (demo --view-yaw) is shown rotated to the display's head
// orientation (the still simulated head looks straight ahead): every pixel of both eyes is the
// texel its ray hits in the view as rendered, and black where the ray leaves it. With
// --no-reprojection the same frames are shown as rendered. The status counts reprojected frames.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "harness.hpp"
#include "pattern.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kView = 256;  // harness daemons run with --view-size 256x256
constexpr uint64_t kFrames = 20;
constexpr float kYaw = 0.2f;  // radians: the views claim the head was turned this far left
constexpr uint32_t kBlack = 0xff000000u;

// The texel the display shows at eye pixel (x, y), or black, by the shader's own math: the
// display eye's ray (fov tangents +-1) turned by the inverse of the rendered yaw and projected
// through the rendered fov (client-lib's default, +-0.785 rad).
std::optional<std::pair<uint32_t, uint32_t>> sourceTexel(uint32_t x, uint32_t y, float yaw) {
  const double fx = (x + 0.5) / kView, fy = (y + 0.5) / kView;
  const double rx = -1 + 2 * fx, ry = 1 - 2 * fy, rz = -1;
  // Rotation by -yaw about +y.
  const double a = -double(yaw);
  const double dx = rx * std::cos(a) + rz * std::sin(a), dz = -rx * std::sin(a) + rz * std::cos(a), dy = ry;
  if (dz > -1e-6) return std::nullopt;
  const double tx = dx / -dz, ty = dy / -dz, t = std::tan(0.785);
  const double u = (tx + t) / (2 * t), v = (t - ty) / (2 * t);
  if (u < 0 || u > 1 || v < 0 || v > 1) return std::nullopt;
  return std::make_pair(std::min(uint32_t(u * kView), kView - 1), std::min(uint32_t(v * kView), kView - 1));
}

struct Shown {
  Pixels pixels;
  uint64_t framesReprojected = 0;
};

// A daemon (with `args`), the demo claiming kYaw, its last frame read back once it is up.
Shown showYawedFrames(const std::vector<std::string>& args, DemoSpec& spec) {
  Shown out;
  TempDir dir;
  Daemon daemon(dir, args);
  EXPECT_TRUE(daemon.ready()) << daemon.process().output();
  if (!daemon.ready()) return out;
  spec = DemoSpec{"yawed", 7, kFrames};
  spec.viewYaw = kYaw;
  auto demo = startDemo(daemon, dir, spec);
  EXPECT_TRUE(demo->waitForOutput(fmt::format("frames {} ok", kFrames), 30s)) << demo->output();
  // Every frame has reached the display (or was superseded there).
  EXPECT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        const auto* c = findClient(s, "yawed");
        return c != nullptr && c->framesDisplayed + c->framesDropped + c->framesHidden == kFrames;
      },
      30s));
  auto control = daemon.control();
  EXPECT_TRUE(control);
  if (!control) return out;
  auto display = control->readDisplay();
  EXPECT_TRUE(display) << display.error().describe();
  if (display) out.pixels = display.value().pixels;
  auto status = control->status();
  EXPECT_TRUE(status);
  if (status) {
    if (const auto* c = findClient(status.value(), "yawed")) out.framesReprojected = c->framesReprojected;
  }
  EXPECT_EQ(problemsIn(daemon.process().output()), std::vector<std::string>{});
  return out;
}

uint32_t pixelAt(const Pixels& px, uint32_t eye, uint32_t x, uint32_t y) {
  uint32_t got;
  std::memcpy(&got, &px.data[(size_t(y) * px.width + eye * kView + x) * 4], 4);
  return got;
}

TEST(Reprojection, AViewRenderedForAnotherHeadingIsRotatedToTheDisplays) {
  DemoSpec spec;
  const Shown shown = showYawedFrames({}, spec);
  ASSERT_EQ(shown.pixels.width, 2 * kView);
  size_t mismatches = 0, black = 0;
  std::string first;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        const auto src = sourceTexel(x, y, kYaw);
        const uint32_t want =
            src ? pattern::color({spec.seed, eye, kFrames - 1, 0, 0}, src->first, src->second) : kBlack;
        const uint32_t got = pixelAt(shown.pixels, eye, x, y);
        black += got == kBlack;
        if (got != want && mismatches++ == 0) {
          first = fmt::format("eye {} ({},{}): got {:08x} want {:08x}", eye, x, y, got, want);
        }
      }
    }
  }
  // Rays that fall within float rounding of a texel edge may pick the neighbour.
  EXPECT_LE(mismatches, size_t(2 * kView * kView) / 200) << "first at " << first;
  // Turned 0.2 rad, the view leaves a band of each eye uncovered (black): ~26 columns at tan 0.2.
  EXPECT_GT(black, size_t(2 * kView * 20));
  EXPECT_GT(shown.framesReprojected, 0u);
}

TEST(Reprojection, OffTheViewIsShownAsRendered) {
  DemoSpec spec;
  const Shown shown = showYawedFrames({"--no-reprojection"}, spec);
  ASSERT_EQ(shown.pixels.width, 2 * kView);
  size_t mismatches = 0;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        mismatches += pixelAt(shown.pixels, eye, x, y) != pattern::color({spec.seed, eye, kFrames - 1, 0, 0}, x, y);
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(shown.framesReprojected, 0u);
}

// A view rendered at the display's own orientation is copied as before, not reprojected.
TEST(Reprojection, AViewAtTheDisplaysOrientationIsNotReprojected) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto demo = startDemo(daemon, dir, DemoSpec{"straight", 3, kFrames});
  ASSERT_TRUE(demo->waitForOutput(fmt::format("frames {} ok", kFrames), 30s)) << demo->output();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status);
  const auto* c = findClient(status.value(), "straight");
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->framesDisplayed, 0u);
  EXPECT_EQ(c->framesReprojected, 0u);
}

}  // namespace
}  // namespace xrc::test
