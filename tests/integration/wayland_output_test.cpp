// The window output on Wayland, under a private headless weston (kiosk shell, which makes every
// toplevel fill its output): the daemon's window is configured to the compositor's size and
// presented at it, with the validation layer clean, and the compositor going away ends the
// output, never the daemon or its clients. Skipped where weston is not installed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "harness.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr const char* kWeston = "/usr/bin/weston";
constexpr uint32_t kOutputWidth = 640, kOutputHeight = 400;

// A headless weston on a socket of its own in `dir`.
class Weston {
 public:
  explicit Weston(const TempDir& dir) : socket_(dir.path + "/wayland-xrc") {
    server_ = std::make_unique<Process>(
        std::vector<std::string>{kWeston, "--backend=headless-backend.so", "--shell=kiosk-shell.so", "--no-config",
                                 "--idle-time=0", "--socket=wayland-xrc", "--width=" + std::to_string(kOutputWidth),
                                 "--height=" + std::to_string(kOutputHeight)},
        std::map<std::string, std::string>{{"XDG_RUNTIME_DIR", dir.path}}, dir.path + "/weston.log");
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline && !std::filesystem::exists(socket_) && server_->running()) {
      std::this_thread::sleep_for(50ms);
    }
  }
  bool ready() const { return std::filesystem::exists(socket_); }
  // WAYLAND_DISPLAY may be an absolute path.
  const std::string& socket() const { return socket_; }
  std::string output() const { return server_->output(); }
  void stop() {
    server_->signal(SIGTERM);
    server_->wait(10s);
  }

 private:
  std::string socket_;
  std::unique_ptr<Process> server_;
};

struct OnWayland {
  TempDir dir;
  Weston weston{dir};
  std::unique_ptr<Daemon> daemon;

  // Empty when all is up; else what went wrong.
  std::string start() {
    if (!weston.ready()) return "weston did not start:\n" + weston.output();
    auto env = validationEnv();
    env["WAYLAND_DISPLAY"] = weston.socket();
    env["DISPLAY"] = "";  // Wayland is chosen first anyway; no X server to fall back to
    daemon = std::make_unique<Daemon>(dir, std::vector<std::string>{"--mirror", "window"}, env);
    if (!daemon->ready()) return "the daemon did not start:\n" + daemon->process().output();
    return {};
  }
};

#define REQUIRE_WESTON() \
  if (!std::filesystem::exists(kWeston)) GTEST_SKIP() << kWeston << " is not installed (apt-get install weston)"

TEST(WaylandOutput, TheWindowIsPresentedAtTheSizeTheCompositorGivesIt) {
  REQUIRE_WESTON();
  OnWayland w;
  ASSERT_EQ(w.start(), "");
  auto& daemon = w.daemon;
  auto demo = startDemo(*daemon, w.dir, DemoSpec{"onwayland", 5, 1'000'000});
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  ASSERT_TRUE(keepsBeingDisplayed(*daemon, "onwayland")) << demo->output();
  // The kiosk shell fills its output with the window: a resize from the 512x256 it asked for.
  ASSERT_TRUE(daemon->waitForStatus(
      [](const control::DaemonStatus& s) {
        const auto& out = s.windowOutput;
        return out && out->open && out->width == kOutputWidth && out->height == kOutputHeight && out->presents > 60 &&
               out->swapchainsLive == 1;
      },
      30s))
      << daemon->process().output() << "\nweston:\n"
      << w.weston.output();
  EXPECT_TRUE(daemon->process().waitForOutput("on Wayland", 1s)) << daemon->process().output();
  const auto status = daemon->control()->status();
  ASSERT_TRUE(status);
  EXPECT_LE(status.value().windowOutput->maxSubmissionsInFlight, 2u);
  EXPECT_TRUE(demo->running()) << demo->output();
  EXPECT_EQ(problemsIn(daemon->process().output()), std::vector<std::string>{});
}

TEST(WaylandOutput, TheCompositorGoingAwayEndsTheOutputNotTheDaemon) {
  REQUIRE_WESTON();
  OnWayland w;
  ASSERT_EQ(w.start(), "");
  auto& daemon = w.daemon;
  auto demo = startDemo(*daemon, w.dir, DemoSpec{"stays", 3, 1'000'000});
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  ASSERT_TRUE(daemon->waitForStatus(
      [](const control::DaemonStatus& s) { return s.windowOutput && s.windowOutput->presents > 10; }, 30s));

  w.weston.stop();
  ASSERT_TRUE(daemon->waitForStatus(windowOutputEnded, 20s)) << daemon->process().output();
  EXPECT_TRUE(daemon->process().waitForOutput("window output closed", 5s));
  EXPECT_TRUE(keepsBeingDisplayed(*daemon, "stays")) << demo->output();
  EXPECT_TRUE(daemon->process().running());
}

}  // namespace
}  // namespace xrc::test
