// The real daemon and four real demo clients (2 swapchains each: per-eye swapchains, a 2-layer
// array swapchain, depth swapchains, mip chains) for a few hundred frames; runtime images and
// the display output are read back and compared texel-exact with what each client rendered.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"
#include "pattern.hpp"
#include "xrc/client.hpp"

namespace xrc::test {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr uint32_t kView = 256;  // harness daemons run with --view-size 256x256
constexpr auto kLong = std::chrono::seconds(120);

struct Client {
  DemoSpec spec;
  std::unique_ptr<Process> process;
  DemoIdentity id;
};

// timeline wherever the GPU shares timeline semaphores (the H100), host on lavapipe.
std::string expectedSyncMode(const Daemon& daemon) {
  auto system = client::describe(daemon.socket());
  if (!system) return "host";
  return system.value().daemonHasTimelineSemaphoreFd ? "timeline" : "host";  // the demo's device enables them
}

void runFramePath(const std::map<std::string, std::string>& env, uint64_t frames,
                  const std::vector<std::string>& daemonArgs = {}) {
  TempDir dir;
  Daemon daemon(dir, daemonArgs, env);
  if (!daemon.ready() && daemon.process().output().find("needs VK_KHR_external_semaphore_fd") != std::string::npos) {
    GTEST_SKIP() << "the daemon's device shares no semaphores (lavapipe): the GPU machine runs this test";
  }
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  const auto forced = std::find(daemonArgs.begin(), daemonArgs.end(), "--sync-mode");
  const std::string syncMode =
      forced != daemonArgs.end() && forced + 1 != daemonArgs.end() ? *(forced + 1) : expectedSyncMode(daemon);

  std::vector<Client> clients(4);
  clients[0].spec = {"alpha", 11, frames, "separate", false, true, 32, 16, 16, 1};
  clients[1].spec = {"bravo", 22, frames, "array", true, false, 32, 80, 16, 1, 3};
  clients[2].spec = {"charlie", 33, frames, "separate", true, false, 32, 144, 16, 1, 2};
  clients[3].spec = {"delta", 44, frames, "separate", false, false, 32, 16, 80, 3, 1};
  // alpha connects first and so is the primary; the others are overlays with their quads.
  clients[0].process = startDemo(daemon, dir, clients[0].spec, env);
  ASSERT_TRUE(clients[0].process->waitForOutput("connected", kLong)) << clients[0].process->output();
  for (size_t i = 1; i < clients.size(); ++i) clients[i].process = startDemo(daemon, dir, clients[i].spec, env);
  const std::string done = "frames " + std::to_string(frames) + " ok";
  for (auto& c : clients) {
    ASSERT_TRUE(c.process->waitForOutput(done, kLong)) << c.spec.name << ":\n" << c.process->output();
    ASSERT_TRUE(parseIdentity(c.process->output(), c.id)) << c.process->output();
    EXPECT_EQ(c.id.syncMode, syncMode);
    ASSERT_EQ(c.id.swapchains.size(), c.spec.depth ? (c.spec.stereo == "array" ? 2u : 3u) : 2u);
  }

  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status) << status.error().describe();
  ASSERT_EQ(status.value().clients.size(), 4u);
  uint64_t clientSubmissions = 0;
  for (auto& c : clients) {
    auto* it = findClient(status.value(), c.id.clientId);
    ASSERT_NE(it, nullptr);
    clientSubmissions += it->copySubmissions;
    EXPECT_EQ(it->name, c.spec.name);
    EXPECT_EQ(it->pid, uint32_t(c.process->pid()));
    EXPECT_EQ(it->framesSubmitted, frames);
    EXPECT_EQ(it->releases, frames * c.id.swapchains.size());
    // The releases an endFrame carries go to the copy queue in one submission where they can be
    // copied at once, as they almost always can (timeline mode: once the last is rendered).
    EXPECT_LE(it->copySubmissions, frames + frames / 4)
        << c.spec.name << ": " << it->releases << " releases of " << c.id.swapchains.size() << " swapchains";
    // 1.18: clients ask for their waits to be answered at once unless told not to, and the daemon
    // does so only where the display latches on demand (not when it composes every frame). An
    // implied wait answered too late to use is asked for on its own for a while, so not every
    // frame's is.
    const auto atOnce = env.find("XRC_ANSWER_WAITS_AT_ONCE");
    const bool asked = atOnce == env.end() || atOnce->second != "0";
    const bool latchedOnDemand = std::find(daemonArgs.begin(), daemonArgs.end(), "every-frame") == daemonArgs.end();
    if (asked && latchedOnDemand) {
      // Sanitized builds on two cores run late often: there, that some were is enough.
      EXPECT_GE(it->waitsAnsweredAtOnce, kSanitized ? 1 : frames / 2) << c.spec.name;
    } else {
      EXPECT_EQ(it->waitsAnsweredAtOnce, 0u) << c.spec.name;
    }
  }
  // Daemon-wide, each submission once: without --copy-batch-copies-per-submission none carries two
  // clients' copies.
  EXPECT_EQ(status.value().copyQueueSubmissions, clientSubmissions);

  // Every runtime swapchain image holds the client's last frame, texel for texel.
  for (auto& c : clients) {
    for (uint32_t i = 0; i < c.id.swapchains.size(); ++i) {
      auto read = control->readSwapchain(c.id.clientId, c.id.swapchains[i]);
      ASSERT_TRUE(read) << read.error().describe();
      EXPECT_EQ(read.value().releaseOrdinal, frames - 1);
      EXPECT_EQ(read.value().pixels.mips,
                i < (c.spec.depth ? c.id.swapchains.size() - 1 : c.id.swapchains.size()) ? c.spec.mips : 1u);
      std::string first;
      EXPECT_EQ(countPatternMismatches(read.value().pixels, c.spec.seed, i, frames - 1, &first), 0u)
          << c.spec.name << " swapchain " << i << ": " << first;
    }
  }

  // The display output: alpha's projection everywhere, each client's quad at its place on top.
  auto display = control->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  const auto& px = display.value().pixels;
  ASSERT_EQ(px.width, 2 * kView);
  ASSERT_EQ(px.height, kView);
  for (auto& c : clients) {
    EXPECT_TRUE(std::any_of(display.value().shown.begin(), display.value().shown.end(),
                            [&](const control::ShownLayer& l) { return l.clientId == c.id.clientId; }))
        << c.spec.name << " is not on the display";
  }
  std::vector<DisplayQuad> quads;
  for (auto& c : clients) quads.push_back({c.spec.seed, c.spec.quadX, c.spec.quadY, c.spec.quadPx});
  std::string first;
  const size_t mismatches = countDisplayMismatches(px, kView, clients[0].spec.seed, frames - 1, quads, &first);
  std::string shown;
  for (const auto& l : display.value().shown) {
    shown += fmt::format(" [client {} frame {} swapchain {} ordinal {}]", l.clientId, l.frameId, l.swapchainId,
                         l.releaseOrdinal);
  }
  EXPECT_EQ(mismatches, 0u) << "first at " << first << "; shown:" << shown;

  for (auto& c : clients) {
    c.process->closeStdin();
    EXPECT_EQ(c.process->wait(std::chrono::seconds(30)), 0) << c.process->output();
  }
  EXPECT_TRUE(
      daemon.waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, std::chrono::seconds(10)));
  daemon.process().signal(SIGTERM);
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(20)), 0) << daemon.process().output();

  if (env.count("VK_INSTANCE_LAYERS") != 0) {
    EXPECT_FALSE(hasValidationMessages(daemon.process().output())) << daemon.process().output();
    for (auto& c : clients) {
      EXPECT_FALSE(hasValidationMessages(c.process->output())) << c.spec.name << ":\n" << c.process->output();
    }
  }
}

TEST(FramePath, FourClientsPixelExact) { runFramePath({}, 300); }

// Host mode whatever the device shares; on a driver with host copies (the trixie root's lavapipe)
// the colour swapchains' copies run on the host and the depth ones on the queue. Composing every
// display frame keeps compositions in flight while releases are copied, so host copies also meet
// runtime images the composition still reads (and go to the queue then).
TEST(FramePath, FourClientsPixelExactInHostMode) { runFramePath({}, 300, {"--sync-mode", "host"}); }
TEST(FramePath, FourClientsPixelExactInHostModeComposingEveryFrame) {
  runFramePath({}, 300, {"--sync-mode", "host", "--compose", "every-frame"});
}

// 1.18: clients ask for their waits to be answered as their endFrame arrives and sleep to each
// wake themselves (the tests above). Told not to, they are answered at the wake: the same pixels,
// every runtime image and the display. A display that composes every frame latches at its vsyncs,
// so it answers at the wake whatever is asked.
TEST(FramePath, FourClientsPixelExactWithWaitsAnsweredAtTheirWake) {
  runFramePath({{"XRC_ANSWER_WAITS_AT_ONCE", "0"}}, 300);
}
TEST(FramePath, WaitsAskedAtOnceAreAnsweredAtTheirWakeWhenComposingEveryFrame) {
  runFramePath({}, 120, {"--compose", "every-frame"});
}

// Whether the daemon copies host-mode releases on its own thread (llvmpipe with
// VK_EXT_host_image_copy), as its start-up log says.
bool hostCopiesOn(Daemon& daemon) {
  return daemon.process().output().find("host-mode copies on the host: on") != std::string::npos;
}

// Starts `c`, waits for its last frame (it then holds its session) and reads its identity: a
// host-mode client.
void runHostModeClient(const Daemon& daemon, const TempDir& dir, Client& c, uint64_t frames) {
  c.process = startDemo(daemon, dir, c.spec);
  ASSERT_TRUE(c.process->waitForOutput("frames " + std::to_string(frames) + " ok", kLong)) << c.process->output();
  ASSERT_TRUE(parseIdentity(c.process->output(), c.id)) << c.process->output();
  EXPECT_EQ(c.id.syncMode, "host");
}

// On Mesa's llvmpipe with VK_EXT_host_image_copy (Mesa 24.1 on), host-mode copies run on the
// daemon's thread instead of the copy queue (docs/SYNC.md, "Host mode"): no copy submission, the
// same pixels, and each copy's time in the status. Where the daemon says host copies are off it
// is skipped, unless XRC_REQUIRE_HOST_COPIES is set (tests/monado/run-monado.sh runs it in the
// Debian trixie root, whose Mesa has them).
TEST(FramePath, HostCopiesWhereTheDriverHasThem) {
  TempDir dir;
  Daemon daemon(dir, {"--sync-mode", "host"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  if (!hostCopiesOn(daemon)) {
    if (std::getenv("XRC_REQUIRE_HOST_COPIES") != nullptr) FAIL() << daemon.process().output();
    GTEST_SKIP() << "the daemon's device copies on its queue here (no llvmpipe with VK_EXT_host_image_copy)";
  }
  constexpr uint64_t kFrames = 120;
  Client c;
  c.spec = {"echo", 55, kFrames, "separate", false, true, 32, 16, 16, 1};
  ASSERT_NO_FATAL_FAILURE(runHostModeClient(daemon, dir, c, kFrames));

  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status) << status.error().describe();
  auto* client = findClient(status.value(), c.id.clientId);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->releases, kFrames * c.id.swapchains.size());
  EXPECT_EQ(client->copySubmissions, 0u) << "copies went to the copy queue";
  EXPECT_EQ(client->hostCopies, client->releases);
  EXPECT_GT(client->hostCopyUs.p50, 0.f) << "host copies report their time";
  for (uint32_t i = 0; i < c.id.swapchains.size(); ++i) {
    auto read = control->readSwapchain(c.id.clientId, c.id.swapchains[i]);
    ASSERT_TRUE(read) << read.error().describe();
    EXPECT_EQ(read.value().releaseOrdinal, kFrames - 1);
    std::string first;
    EXPECT_EQ(countPatternMismatches(read.value().pixels, c.spec.seed, i, kFrames - 1, &first), 0u)
        << "swapchain " << i << ": " << first;
  }
  auto display = control->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  std::string first;
  EXPECT_EQ(countDisplayMismatches(display.value().pixels, kView, c.spec.seed, kFrames - 1,
                                   {{c.spec.seed, c.spec.quadX, c.spec.quadY, c.spec.quadPx}}, &first),
            0u)
      << "first at " << first;
  c.process->closeStdin();
  EXPECT_EQ(c.process->wait(std::chrono::seconds(30)), 0) << c.process->output();
  daemon.process().signal(SIGTERM);
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(20)), 0) << daemon.process().output();
}

// --host-copy-max-kib: images over it (all their layers and mips counted) go to the copy queue,
// the others are copied on the host, side by side in one daemon; the one on the host is an
// odd-sized, mip-chained array swapchain (every layer and level copied, rows of an odd width).
// Checked texel-exact in the runtime images, and by the status of each client.
TEST(FramePath, HostCopiesKeepToTheirBound) {
  TempDir dir;
  Daemon daemon(dir, {"--sync-mode", "host", "--host-copy-max-kib", "128"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  if (!hostCopiesOn(daemon)) {
    if (std::getenv("XRC_REQUIRE_HOST_COPIES") != nullptr) FAIL() << daemon.process().output();
    GTEST_SKIP() << "the daemon's device copies on its queue here (no llvmpipe with VK_EXT_host_image_copy)";
  }
  EXPECT_NE(daemon.process().output().find("images up to 128 KiB"), std::string::npos) << daemon.process().output();
  constexpr uint64_t kFrames = 90;
  // RGBA8. 97x61, 2 layers, 3 mips: 60.3 KiB, within the bound. 256x256 per swapchain (256 KiB):
  // over it. 128x128, 2 layers, 2 mips: 160 KiB, over it by its second layer and mip (one layer
  // of its first level is 64 KiB).
  std::vector<Client> clients(3);
  clients[0].spec = {"odd", 62, kFrames, "array"};
  clients[0].spec.mips = 3;
  clients[0].spec.extraArgs = {"--width", "97", "--height", "61"};
  clients[1].spec = {"large", 61, kFrames, "separate"};
  clients[2].spec = {"layered", 63, kFrames, "array"};
  clients[2].spec.mips = 2;
  clients[2].spec.extraArgs = {"--width", "128", "--height", "128"};
  // One after the other: while a copy of one client is in flight on the copy queue, the other's
  // goes there too (a host copy is not ordered against the queue's copies).
  for (Client& c : clients) ASSERT_NO_FATAL_FAILURE(runHostModeClient(daemon, dir, c, kFrames));

  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto status = control->status();
  ASSERT_TRUE(status) << status.error().describe();
  const auto* odd = findClient(status.value(), clients[0].id.clientId);
  ASSERT_NE(odd, nullptr);
  for (size_t i : {1, 2}) {
    const auto* over = findClient(status.value(), clients[i].id.clientId);
    ASSERT_NE(over, nullptr);
    EXPECT_EQ(over->releases, kFrames * clients[i].id.swapchains.size());
    EXPECT_EQ(over->hostCopies, 0u) << clients[i].spec.name << ": an image over the bound was copied on the host";
    EXPECT_GT(over->copySubmissions, 0u);
  }
  EXPECT_EQ(odd->releases, kFrames);
  EXPECT_EQ(odd->hostCopies, odd->releases) << "an image within the bound went to the queue";
  EXPECT_EQ(odd->copySubmissions, 0u);
  EXPECT_GT(odd->hostCopyUs.p50, 0.f);
  // Daemon-wide, the queue submissions are the two larger clients' (a host copy is none).
  uint64_t queued = 0;
  for (size_t i : {1, 2}) queued += findClient(status.value(), clients[i].id.clientId)->copySubmissions;
  EXPECT_EQ(status.value().copyQueueSubmissions, queued);
  for (const Client& c : clients) {
    for (uint32_t i = 0; i < c.id.swapchains.size(); ++i) {
      auto read = control->readSwapchain(c.id.clientId, c.id.swapchains[i]);
      ASSERT_TRUE(read) << read.error().describe();
      EXPECT_EQ(read.value().releaseOrdinal, kFrames - 1);
      EXPECT_EQ(read.value().pixels.mips, c.spec.mips);
      std::string first;
      EXPECT_EQ(countPatternMismatches(read.value().pixels, c.spec.seed, i, kFrames - 1, &first), 0u)
          << c.spec.name << " swapchain " << i << ": " << first;
    }
  }
  for (Client& c : clients) {
    c.process->closeStdin();
    EXPECT_EQ(c.process->wait(std::chrono::seconds(30)), 0) << c.process->output();
  }
  daemon.process().signal(SIGTERM);
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(20)), 0) << daemon.process().output();
}

// Binary mode: the copies an endFrame carries wait for their own rendering_done semaphores within
// the one submission they share.
TEST(FramePath, FourClientsPixelExactInBinaryMode) { runFramePath({}, 300, {"--sync-mode", "binary"}); }

// Every display frame composed, so that the validation layers see the composition's reads of
// runtime images race the copies into them at every frame, not only at the one read back.
TEST(FramePath, FourClientsUnderSynchronizationValidation) {
  runFramePath(validationEnv(), 120, {"--compose", "every-frame"});
}

// A client killed mid-frame leaves no fds (and with them no shared memory or semaphores) behind,
// and the other client keeps rendering.
TEST(FramePath, SigkilledClientLeavesNothingBehind) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto control = daemon.control();  // the control connection itself is part of the baseline
  ASSERT_TRUE(control);
  const int baseline = daemon.fdCount();

  DemoSpec survivorSpec{"survivor", 5, 400, "separate", false, true, 0, 0, 0, 1};
  auto survivor = startDemo(daemon, dir, survivorSpec);
  DemoSpec victimSpec{"victim", 6, 100000, "array", true, true, 0, 0, 0, 1};
  auto victim = startDemo(daemon, dir, victimSpec);
  ASSERT_TRUE(daemon.waitForStatus(
      [](const control::DaemonStatus& s) {
        return s.clients.size() == 2 &&
               std::all_of(s.clients.begin(), s.clients.end(), [](auto& c) { return c.framesSubmitted > 20; });
      },
      kLong))
      << victim->output();
  EXPECT_GT(daemon.fdCount(), baseline);
  victim->signal(SIGKILL);
  ASSERT_EQ(victim->wait(std::chrono::seconds(10)), 128 + SIGKILL);

  ASSERT_TRUE(survivor->waitForOutput("frames 400 ok", kLong)) << survivor->output();
  DemoIdentity survivorId;
  ASSERT_TRUE(parseIdentity(survivor->output(), survivorId));
  auto read = control->readSwapchain(survivorId.clientId, survivorId.swapchains[0]);
  ASSERT_TRUE(read) << read.error().describe();
  EXPECT_EQ(countPatternMismatches(read.value().pixels, 5, 0, 399), 0u);

  survivor->closeStdin();
  EXPECT_EQ(survivor->wait(std::chrono::seconds(20)), 0);
  ASSERT_TRUE(
      daemon.waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, std::chrono::seconds(10)));
  // Teardown of GPU objects runs on the frame worker after the disconnect: give it a moment.
  for (int i = 0; i < 100 && daemon.fdCount() != baseline; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(daemon.fdCount(), baseline);
}

}  // namespace
}  // namespace xrc::test
