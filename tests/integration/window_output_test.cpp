// The window output (--backend window, --mirror window) on X11 under Xvfb: the window shows exactly what the headless
// display composes (a screenshot of the X server against the display's read-back), a resize
// storm while a client renders leaves one swapchain and a bounded number of present semaphores
// behind with the validation layer (synchronization validation included) clean, and closing the
// window ends the output, never the daemon or its clients. Skipped where Xvfb is not installed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr const char* kXvfb = "/usr/bin/Xvfb";
constexpr uint32_t kWidth = 512, kHeight = 256;  // two 256x256 views side by side

struct FreeReply {
  void operator()(void* p) const { std::free(p); }
};
template <typename T>
using Reply = std::unique_ptr<T, FreeReply>;

// A private X server, and a connection to it that plays the user: finds the daemon's window,
// takes screenshots, resizes and closes it.
class XServer {
 public:
  explicit XServer(const TempDir& dir) {
    // -displayfd: the server picks a free display and prints its number once it accepts.
    server_ = std::make_unique<Process>(
        std::vector<std::string>{kXvfb, "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"},
        std::map<std::string, std::string>{}, dir.path + "/xvfb.log");
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline && display_.empty()) {
      const std::string out = server_->output();
      const size_t end = out.find('\n');
      if (end != std::string::npos && end > 0 && std::isdigit(static_cast<unsigned char>(out[0]))) {
        display_ = ":" + out.substr(0, end);
      } else {
        std::this_thread::sleep_for(50ms);
      }
    }
    if (display_.empty()) return;
    connection_ = xcb_connect(display_.c_str(), nullptr);
    if (xcb_connection_has_error(connection_) != 0) display_.clear();
  }
  ~XServer() {
    if (connection_ != nullptr) xcb_disconnect(connection_);
  }
  bool ready() const { return !display_.empty(); }
  const std::string& display() const { return display_; }
  std::string output() const { return server_->output(); }

  // The top-level window titled `title`; 0 if there is none.
  xcb_window_t findWindow(const std::string& title) {
    const xcb_window_t root = xcb_setup_roots_iterator(xcb_get_setup(connection_)).data->root;
    Reply<xcb_query_tree_reply_t> tree(xcb_query_tree_reply(connection_, xcb_query_tree(connection_, root), nullptr));
    if (!tree) return 0;
    const xcb_window_t* children = xcb_query_tree_children(tree.get());
    for (int i = 0; i < xcb_query_tree_children_length(tree.get()); ++i) {
      Reply<xcb_get_property_reply_t> name(xcb_get_property_reply(
          connection_, xcb_get_property(connection_, 0, children[i], XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 0, 64),
          nullptr));
      if (!name) continue;
      const std::string value(static_cast<const char*>(xcb_get_property_value(name.get())),
                              size_t(xcb_get_property_value_length(name.get())));
      if (value == title) return children[i];
    }
    return 0;
  }
  xcb_window_t waitForWindow(const std::string& title) {
    for (int i = 0; i < 200; ++i) {
      if (xcb_window_t w = findWindow(title)) return w;
      std::this_thread::sleep_for(50ms);
    }
    return 0;
  }

  // The window's pixels as R G B A bytes (alpha 255), or empty.
  std::vector<uint8_t> screenshot(xcb_window_t window, uint32_t width, uint32_t height) {
    Reply<xcb_get_image_reply_t> image(xcb_get_image_reply(
        connection_,
        xcb_get_image(connection_, XCB_IMAGE_FORMAT_Z_PIXMAP, window, 0, 0, uint16_t(width), uint16_t(height), ~0u),
        nullptr));
    if (!image || image->depth != 24) return {};
    const uint8_t* bgrx = xcb_get_image_data(image.get());
    if (size_t(xcb_get_image_data_length(image.get())) < size_t(width) * height * 4) return {};
    std::vector<uint8_t> rgba(size_t(width) * height * 4);
    for (size_t i = 0; i < size_t(width) * height; ++i) {
      rgba[i * 4 + 0] = bgrx[i * 4 + 2];
      rgba[i * 4 + 1] = bgrx[i * 4 + 1];
      rgba[i * 4 + 2] = bgrx[i * 4 + 0];
      rgba[i * 4 + 3] = 255;
    }
    return rgba;
  }

  void resize(xcb_window_t window, uint32_t width, uint32_t height) {
    const uint32_t values[] = {width, height};
    xcb_configure_window(connection_, window, XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT, values);
    xcb_flush(connection_);
  }

  // What a window manager sends when the user clicks the close button.
  void requestClose(xcb_window_t window) {
    auto atom = [&](const char* name) {
      Reply<xcb_intern_atom_reply_t> r(xcb_intern_atom_reply(
          connection_, xcb_intern_atom(connection_, 0, uint16_t(std::strlen(name)), name), nullptr));
      return r ? r->atom : xcb_atom_t(XCB_ATOM_NONE);
    };
    xcb_client_message_event_t event{};
    event.response_type = XCB_CLIENT_MESSAGE;
    event.format = 32;
    event.window = window;
    event.type = atom("WM_PROTOCOLS");
    event.data.data32[0] = atom("WM_DELETE_WINDOW");
    xcb_send_event(connection_, 0, window, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char*>(&event));
    xcb_flush(connection_);
  }

 private:
  std::unique_ptr<Process> server_;
  std::string display_;
  xcb_connection_t* connection_ = nullptr;
};

// An X server, a daemon with the window output on it (under the validation layer) and its
// window, found by title.
struct Windowed {
  TempDir dir;
  XServer x{dir};
  std::unique_ptr<Daemon> daemon;
  xcb_window_t window = 0;

  // Empty when all is up; else what went wrong. `args`: how the daemon is told to open it.
  std::string start(const std::vector<std::string>& args = {"--backend", "window"}) {
    if (!x.ready()) return "Xvfb did not start:\n" + x.output();
    auto env = validationEnv();
    env["DISPLAY"] = x.display();
    env["WAYLAND_DISPLAY"] = "";  // X11, even inside a Wayland session
    daemon = std::make_unique<Daemon>(dir, args, env);
    if (!daemon->ready()) return "the daemon did not start:\n" + daemon->process().output();
    window = x.waitForWindow("xr-compositor");
    if (window == 0) return "no window titled xr-compositor";
    return {};
  }
  // A demo client, already displayed.
  std::unique_ptr<Process> runningDemo(const DemoSpec& spec) {
    auto demo = startDemo(*daemon, dir, spec);
    if (!demo->waitForOutput("connected", 30s) || !keepsBeingDisplayed(*daemon, spec.name)) return nullptr;
    return demo;
  }
};

std::optional<control::WindowOutputStatus> windowStatus(Daemon& daemon) {
  auto control = daemon.control();
  if (!control) return std::nullopt;
  auto status = control->status();
  if (!status) return std::nullopt;
  return status.value().windowOutput;
}

// A screenshot of the window against a display read-back of the same size, R G B (the window
// has no alpha): how many pixels differ (the first described) and how many colours the
// read-back has (the demo's pattern has hundreds).
struct ShotComparison {
  size_t mismatches = 0;
  std::string first;
  size_t colors = 0;
};
ShotComparison compareShot(const control::Pixels& display, const std::vector<uint8_t>& shot) {
  ShotComparison out;
  std::set<uint32_t> colors;
  for (uint32_t y = 0; y < display.height; ++y) {
    for (uint32_t x = 0; x < display.width; ++x) {
      const size_t at = (size_t(y) * display.width + x) * 4;
      uint32_t want = 0, got = 0;
      std::memcpy(&want, &display.data[at], 3);
      std::memcpy(&got, &shot[at], 3);
      colors.insert(want);
      if (want != got && out.mismatches++ == 0)
        out.first = fmt::format("({},{}): got {:06x} want {:06x}", x, y, got, want);
    }
  }
  out.colors = colors.size();
  return out;
}

// The window of `daemon`'s status, presented a few more times from now (the window output's
// mailbox may hold one older frame).
bool presentedAgain(Daemon& daemon) {
  const uint64_t presentsNow = windowStatus(daemon).value_or(control::WindowOutputStatus{}).presents;
  return daemon.waitForStatus(
      [&](const control::DaemonStatus& s) { return s.windowOutput && s.windowOutput->presents > presentsNow + 10; },
      20s);
}

// `window`'s screenshot against `display`'s read-back, both kWidth x kHeight; `error` says what
// could not be read.
struct WindowAgainstDisplay : ShotComparison {
  std::string error;
};
WindowAgainstDisplay compareWindowWithDisplay(Daemon& display, XServer& x, xcb_window_t window) {
  WindowAgainstDisplay out;
  auto control = display.control();
  if (!control) {
    out.error = "no control connection to the display's daemon";
    return out;
  }
  auto read = control->readDisplay();
  if (!read) {
    out.error = read.error().describe();
    return out;
  }
  const auto& px = read.value().pixels;
  const std::vector<uint8_t> shot = x.screenshot(window, kWidth, kHeight);
  if (px.width != kWidth || px.height != kHeight) {
    out.error = fmt::format("the display is {}x{}, not {}x{}", px.width, px.height, kWidth, kHeight);
  } else if (shot.size() != size_t(kWidth) * kHeight * 4) {
    out.error = "no screenshot of the window";
  } else {
    static_cast<ShotComparison&>(out) = compareShot(px, shot);
  }
  return out;
}

// Daemon A (headless) and daemon B over A's runtime with the window mirror, under a private X
// server, and B's window, found by title.
struct MirroredOverRuntime {
  TempDir dirA, dirB;
  XServer x{dirB};
  std::unique_ptr<Daemon> a, b;
  xcb_window_t window = 0;

  // Empty when all is up; else what went wrong.
  std::string start() {
    if (!x.ready()) return "Xvfb did not start:\n" + x.output();
    a = std::make_unique<Daemon>(dirA);
    if (!a->ready()) return "daemon A did not start:\n" + a->process().output();
    b = startDaemonOver(*a, dirB, true, {"--mirror", "window"}, {{"DISPLAY", x.display()}, {"WAYLAND_DISPLAY", ""}});
    if (!b->ready()) return "daemon B did not start:\n" + b->process().output();
    window = x.waitForWindow("xr-compositor");
    if (window == 0) return "no window titled xr-compositor:\n" + b->process().output();
    return {};
  }
};

#define REQUIRE_XVFB() \
  if (!std::filesystem::exists(kXvfb)) GTEST_SKIP() << kXvfb << " is not installed (apt-get install xvfb)"

// The window backend, and the headless backend with a window mirror (the same thing by two names).
class WindowShows : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(WindowShows, WhatTheDisplayComposes) {
  REQUIRE_XVFB();
  Windowed w;
  ASSERT_EQ(w.start(GetParam()), "");
  auto& daemon = w.daemon;

  // A projection and a quad over it; once the last frame is up, the display repeats it.
  DemoSpec spec{"windowed", 5, 60};
  spec.quadPx = 64;
  spec.quadX = 40;
  spec.quadY = 100;
  auto demo = startDemo(*daemon, w.dir, spec);
  ASSERT_TRUE(demo->waitForOutput("frames 60 ok", 30s)) << demo->output();
  ASSERT_TRUE(presentedAgain(*daemon));

  const WindowAgainstDisplay compared = compareWindowWithDisplay(*daemon, w.x, w.window);
  ASSERT_EQ(compared.error, "");
  EXPECT_GT(compared.colors, 100u) << "the composition is not the demo's pattern";
  EXPECT_EQ(compared.mismatches, 0u) << "first at " << compared.first;

  auto window = windowStatus(*daemon);
  ASSERT_TRUE(window);
  EXPECT_TRUE(window->open);
  EXPECT_EQ(window->width, kWidth);
  EXPECT_EQ(window->height, kHeight);
  EXPECT_EQ(window->swapchainsLive, 1u);
  EXPECT_LE(window->maxSubmissionsInFlight, 2u) << "more than one composition queued beyond the one on the GPU";
  demo->closeStdin();
  EXPECT_EQ(demo->wait(30s), 0) << demo->output();
  EXPECT_EQ(problemsIn(daemon->process().output()), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(WindowOutput, WindowShows,
                         ::testing::Values(std::vector<std::string>{"--backend", "window"},
                                           std::vector<std::string>{"--mirror", "window"}),
                         [](const auto& info) { return info.param[0] == "--backend" ? "Backend" : "Mirror"; });

// Hundreds of size changes while a client renders: every one may recreate the swapchain; old
// swapchains and present semaphores are destroyed as seed 003 proves them unused (or the
// bounded backlog idles the queue), so once the storm is over one swapchain and a few present
// semaphores remain, at the window's final size, and nothing went wrong on the way.
TEST(WindowOutput, AResizeStormLeavesNothingBehind) {
  REQUIRE_XVFB();
  Windowed w;
  ASSERT_EQ(w.start(), "");
  auto& daemon = w.daemon;
  auto demo = w.runningDemo(DemoSpec{"storm", 9, 1'000'000});
  ASSERT_TRUE(demo);

  for (uint32_t i = 0; i < 300; ++i) {
    w.x.resize(w.window, 64 + (i * 37) % 700, 48 + (i * 53) % 500);
    std::this_thread::sleep_for(3ms);
  }
  const uint32_t finalWidth = 300, finalHeight = 200;  // another aspect: letterboxed
  w.x.resize(w.window, finalWidth, finalHeight);
  ASSERT_TRUE(daemon->waitForStatus(
      [&](const control::DaemonStatus& s) {
        const auto& out = s.windowOutput;
        return out && out->width == finalWidth && out->height == finalHeight && out->swapchainsLive == 1;
      },
      30s))
      << daemon->process().output();
  ASSERT_TRUE(keepsBeingDisplayed(*daemon, "storm")) << demo->output();
  auto status = windowStatus(*daemon);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->open);
  EXPECT_GE(status->recreations, 10u) << "the storm hardly recreated the swapchain";
  // Seed 003: at most three present semaphores per image of the current swapchain (and a few
  // free for reuse); the old swapchains' went with them.
  EXPECT_LE(status->presentSemaphoresLive, 3u * 5 + 2);
  EXPECT_LE(status->maxSubmissionsInFlight, 2u);
  std::printf("resize storm: %llu recreations, %llu backlog drains, %u present semaphores live after, %llu skipped\n",
              static_cast<unsigned long long>(status->recreations),
              static_cast<unsigned long long>(status->backlogDrains), status->presentSemaphoresLive,
              static_cast<unsigned long long>(status->skipped));
  EXPECT_EQ(problemsIn(daemon->process().output()), std::vector<std::string>{});
}

TEST(WindowOutput, ClosingTheWindowEndsTheOutputNotTheDaemon) {
  REQUIRE_XVFB();
  Windowed w;
  ASSERT_EQ(w.start(), "");
  auto& daemon = w.daemon;
  auto demo = w.runningDemo(DemoSpec{"stays", 3, 1'000'000});
  ASSERT_TRUE(demo);

  w.x.requestClose(w.window);
  ASSERT_TRUE(daemon->waitForStatus(windowOutputEnded, 20s)) << daemon->process().output();
  EXPECT_TRUE(daemon->process().waitForOutput("window output closed", 5s));
  for (int i = 0; i < 40 && w.x.findWindow("xr-compositor") != 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(w.x.findWindow("xr-compositor"), 0u) << "the window is still there";
  // The display, the client and the daemon go on.
  EXPECT_TRUE(keepsBeingDisplayed(*daemon, "stays")) << demo->output();
  EXPECT_TRUE(daemon->process().running());
  EXPECT_EQ(problemsIn(daemon->process().output()), std::vector<std::string>{});
}

// The openxr backend's mirror: daemon B runs over daemon A's runtime with `--mirror window`; its
// window shows what B sends A, which A composes into its display. The two agree pixel for pixel.
TEST(WindowOutput, TheOpenXrBackendsMirrorShowsWhatItSendsItsRuntime) {
  REQUIRE_XVFB();
  MirroredOverRuntime m;
  ASSERT_EQ(m.start(), "");
  auto& a = *m.a;
  auto& b = m.b;

  DemoSpec spec{"mirrored", 7, 60};
  spec.quadPx = 48;
  spec.quadX = 150;
  spec.quadY = 30;
  auto demo = startDemo(*b, m.dirB, spec);
  ASSERT_TRUE(demo->waitForOutput("frames 60 ok", 60s)) << demo->output() << b->process().output();
  ASSERT_TRUE(presentedAgain(*b)) << b->process().output();

  // What A composed from B's layers against B's window.
  const WindowAgainstDisplay compared = compareWindowWithDisplay(a, m.x, m.window);
  ASSERT_EQ(compared.error, "");
  EXPECT_GT(compared.colors, 100u) << "A does not show the demo's pattern";
  EXPECT_EQ(compared.mismatches, 0u) << "first at " << compared.first;

  auto status = windowStatus(*b);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->open);
  EXPECT_EQ(status->swapchainsLive, 1u);
  EXPECT_LE(status->maxSubmissionsInFlight, 2u);
  demo->closeStdin();
  EXPECT_EQ(demo->wait(30s), 0) << demo->output();
  EXPECT_EQ(problemsIn(b->process().output()), std::vector<std::string>{});
  // Shut down in order: the mirror lets go of B's runtime swapchains, B leaves A cleanly.
  b->process().signal(SIGTERM);
  EXPECT_EQ(b->process().wait(20s), 0) << b->process().output();
  EXPECT_EQ(problemsIn(a.process().output()), std::vector<std::string>{});
}

// Closing the openxr backend's mirror window ends the mirror only: the backend goes on sending
// its client's frames to the runtime.
TEST(WindowOutput, ClosingTheOpenXrBackendsMirrorEndsTheMirrorOnly) {
  REQUIRE_XVFB();
  MirroredOverRuntime m;
  ASSERT_EQ(m.start(), "");
  auto& a = *m.a;
  auto& b = m.b;
  auto demo = startDemo(*b, m.dirB, DemoSpec{"goes-on", 4, 1'000'000});
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  ASSERT_TRUE(keepsBeingDisplayed(*b, "goes-on")) << "A: " << progressLine(a) << "\n"
                                                  << demo->output() << "\n=== B ===\n"
                                                  << b->process().output() << "\n=== A ===\n"
                                                  << a.process().output();

  m.x.requestClose(m.window);
  ASSERT_TRUE(b->waitForStatus(windowOutputEnded, 20s)) << b->process().output();
  EXPECT_TRUE(b->process().waitForOutput("window output closed", 5s));
  // B's client is still displayed, and A still shows B.
  EXPECT_TRUE(keepsBeingDisplayed(*b, "goes-on")) << demo->output();
  EXPECT_TRUE(keepsBeingDisplayed(a, "xr-compositord")) << a.process().output();
  EXPECT_TRUE(b->process().running());
  EXPECT_EQ(problemsIn(b->process().output()), std::vector<std::string>{});
}

TEST(WindowOutput, WithoutAWindowSystemTheDaemonSaysSoAndExits) {
  TempDir dir;
  Daemon daemon(dir, {"--backend", "window"}, {{"DISPLAY", ""}, {"WAYLAND_DISPLAY", ""}});
  EXPECT_FALSE(daemon.ready());
  EXPECT_NE(daemon.process().wait(20s), 0);
  EXPECT_NE(daemon.process().output().find("neither WAYLAND_DISPLAY nor DISPLAY is set"), std::string::npos)
      << daemon.process().output();
}

}  // namespace
}  // namespace xrc::test
