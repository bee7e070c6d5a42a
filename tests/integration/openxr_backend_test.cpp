// The openxr backend, tested against the one OpenXR runtime these machines have: our own. Daemon A
// runs the headless backend; daemon B runs `--backend openxr` with the OpenXR loader pointed at
// our runtime manifest and A's socket, and the OpenXR core validation layer between B and the
// runtime. B's clients' pixels must arrive on A's display through both hops.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"
#include "pattern.hpp"
#include "raw_rpc.hpp"
#include "xrc/client.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::test {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

using namespace std::chrono_literals;

constexpr uint32_t kView = 256;  // daemon A runs with the harness's --view-size 256x256

// What B logs when the core validation layer or Vulkan validation complains about it.
void expectNoValidationProblems(Daemon& daemon) {
  const std::string out = daemon.process().output();
  const auto problems = problemsIn(out);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems.front();
}

// A session on the raw wire, to ask a daemon for head poses at chosen times.
struct RawSession {
  std::unique_ptr<RawRpc> link;
  wire::Session::Client session{nullptr};

  static RawSession open(const Daemon& daemon, const DeviceFacts& device) {
    RawSession raw;
    raw.link = RawRpc::open(daemon.socket());
    EXPECT_TRUE(raw.link);
    if (!raw.link) return raw;
    auto request = raw.link->bootstrap().connectRequest();
    auto info = request.initClient();
    info.initVersion().setMajor(kProtocolMajor);
    info.setName("locator");
    toWire(device, info.initDevice());
    auto response = request.send().wait(raw.link->waitScope());
    EXPECT_EQ(response.getError().getCode(), wire::ErrorCode::NONE) << response.getError().getMessage().cStr();
    raw.session = response.getSession();
    return raw;
  }

  // One waitFrame's per-frame views (1.7).
  std::vector<EyeView> waitFrameViews() {
    auto response = session.waitFrameRequest().send().wait(link->waitScope());
    EXPECT_EQ(response.getError().getCode(), wire::ErrorCode::NONE) << response.getError().getMessage().cStr();
    std::vector<EyeView> out;
    for (auto v : response.getTiming().getViews()) {
      EyeView view;
      view.eyeInHead = fromWire(v.getEyeInHead());
      for (uint32_t k = 0; k < 4 && k < v.getFov().size(); ++k) view.fov[k] = v.getFov()[k];
      out.push_back(view);
    }
    return out;
  }

  Pose locateHead(int64_t timeNs) {
    auto request = session.locateHeadRequest();
    request.setTime(timeNs);
    auto response = request.send().wait(link->waitScope());
    EXPECT_EQ(response.getError().getCode(), wire::ErrorCode::NONE) << response.getError().getMessage().cStr();
    return fromWire(response.getHeadInStage());
  }
};

// Daemon A with a swaying head, daemon B over it, and a raw session on each.
struct SwayingPair {
  TempDir dirA, dirB;
  std::unique_ptr<Daemon> a, b;
  client::SystemDescription system;
  RawSession onA, onB;

  void start() {
    a = std::make_unique<Daemon>(dirA, std::vector<std::string>{"--head-motion", "sway"});
    ASSERT_TRUE(a->ready()) << a->process().output();
    b = startDaemonOver(*a, dirB);
    ASSERT_TRUE(b->ready()) << b->process().output();
    auto described = client::describe(a->socket());
    ASSERT_TRUE(described) << described.error().describe();
    system = described.value();
    onA = RawSession::open(*a, system.device);
    onB = RawSession::open(*b, system.device);
    ASSERT_TRUE(onA.link && onB.link);
  }
};

void expectSamePose(const Pose& a, const Pose& b, const std::string& what) {
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(a.orientation[i], b.orientation[i], 1e-5f) << what << " orientation " << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(a.position[i], b.position[i], 1e-5f) << what << " position " << i;
}

TEST(OpenXrBackend, ClientPixelsArriveThroughBothHops) {
  TempDir dirA, dirB;
  Daemon a(dirA, {"--refresh-hz", "60"});
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto b = startDaemonOver(a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();
  EXPECT_NE(b->process().output().find("backend openxr"), std::string::npos) << b->process().output();

  // B's system description is A's (through the runtime): same views, A's display rate (B was
  // started with the default 90 Hz), A's formats.
  auto systemA = client::describe(a.socket());
  auto systemB = client::describe(b->socket());
  ASSERT_TRUE(systemA) << systemA.error().describe();
  ASSERT_TRUE(systemB) << systemB.error().describe();
  EXPECT_NEAR(systemB.value().refreshHz, 60.0, 0.5);
  EXPECT_EQ(systemB.value().swapchainFormats, systemA.value().swapchainFormats);
  ASSERT_EQ(systemB.value().views.size(), 2u);
  EXPECT_EQ(systemB.value().views[0].recommendedWidth, kView);
  EXPECT_EQ(systemB.value().views[0].recommendedHeight, kView);

  const uint64_t frames = 150;
  DemoSpec alpha{"alpha", 11, frames};
  DemoSpec bravo{"bravo", 22, frames};
  bravo.projection = false;
  bravo.quadPx = 48;
  bravo.quadX = 40;
  bravo.quadY = 64;
  bravo.overlay = 1;
  auto alphaProcess = startDemo(*b, dirB, alpha);
  ASSERT_TRUE(alphaProcess->waitForOutput("connected", 30s)) << alphaProcess->output();
  auto bravoProcess = startDemo(*b, dirB, bravo);
  const std::string done = "frames " + std::to_string(frames) + " ok";
  ASSERT_TRUE(alphaProcess->waitForOutput(done, 60s)) << alphaProcess->output() << b->process().output();
  ASSERT_TRUE(bravoProcess->waitForOutput(done, 60s)) << bravoProcess->output() << b->process().output();
  // B's session on A is focused, so B's primary client is too.
  EXPECT_NE(alphaProcess->output().find("visibility visible=1 focused=1"), std::string::npos) << alphaProcess->output();

  // Both demos now hold their last frame; give B and A a few display frames to show it.
  std::this_thread::sleep_for(200ms);
  auto controlA = a.control();
  ASSERT_TRUE(controlA);
  auto statusA = controlA->status();
  ASSERT_TRUE(statusA) << statusA.error().describe();
  ASSERT_EQ(statusA.value().clients.size(), 1u) << "A serves B alone";
  const auto& bOnA = statusA.value().clients[0];
  EXPECT_EQ(bOnA.name, "xr-compositord");
  EXPECT_EQ(bOnA.pid, uint32_t(b->process().pid()));
  EXPECT_GT(bOnA.framesDisplayed, frames / 2);
  // Every swapchain of B's clients is a swapchain of B's session on A.
  DemoIdentity alphaId, bravoId;
  ASSERT_TRUE(parseIdentity(alphaProcess->output(), alphaId));
  ASSERT_TRUE(parseIdentity(bravoProcess->output(), bravoId));
  EXPECT_EQ(bOnA.swapchains, alphaId.swapchains.size() + bravoId.swapchains.size());

  auto controlB = b->control();
  ASSERT_TRUE(controlB);
  auto statusB = controlB->status();
  ASSERT_TRUE(statusB) << statusB.error().describe();
  EXPECT_EQ(statusB.value().backend, "openxr");
  ASSERT_EQ(statusB.value().clients.size(), 2u);
  for (const auto& c : statusB.value().clients) {
    EXPECT_EQ(c.framesSubmitted, frames) << c.name;
    // Every frame is accounted for (one may still be queued for its display time).
    EXPECT_GE(c.framesDisplayed + c.framesDropped + c.framesHidden + 1, frames) << c.name;
    // How many reach the display is pacing quality, which the normal build checks: under a
    // sanitizer, B's display work on two cores took 14.5 ms a frame (p50, ASan), B fell to A's
    // every other vsync, and two thirds of the clients' frames were superseded before B showed
    // them.
    EXPECT_GT(c.framesDisplayed, kSanitized ? 0 : frames / 2)
        << c.name << ": dropped " << c.framesDropped << ", late " << c.framesLate << ", hidden " << c.framesHidden
        << ", stale " << c.framesStale << ", latency p50 " << c.latencyUs.p50 << " us, interval p50 "
        << c.frameIntervalUs.p50 << " us; B: " << statusB.value().displayFrames << " display frames, "
        << statusB.value().missedDisplayFrames << " missed, work p50/p99 " << statusB.value().displayWorkUs.p50 << "/"
        << statusB.value().displayWorkUs.p99 << " us, refresh " << statusB.value().refreshHz;
  }
  // B has no display of its own to read back, and says so.
  auto displayB = controlB->readDisplay();
  ASSERT_FALSE(displayB);
  EXPECT_EQ(displayB.error().code, ErrorCode::unsupported);

  // A's display: alpha's last frame in both eyes, bravo's quad on top, texel for texel.
  auto display = controlA->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  const auto& px = display.value().pixels;
  ASSERT_EQ(px.width, 2 * kView);
  ASSERT_EQ(px.height, kView);
  std::string first;
  const size_t mismatches = countDisplayMismatches(px, kView, alpha.seed, frames - 1,
                                                   {{bravo.seed, bravo.quadX, bravo.quadY, bravo.quadPx}}, &first);
  EXPECT_EQ(mismatches, 0u) << first;

  alphaProcess->closeStdin();
  bravoProcess->closeStdin();
  EXPECT_EQ(alphaProcess->wait(20s), 0) << alphaProcess->output();
  EXPECT_EQ(bravoProcess->wait(20s), 0) << bravoProcess->output();
  // B leaves A cleanly on SIGTERM: A sees its client go.
  b->process().signal(SIGTERM);
  EXPECT_EQ(b->process().wait(20s), 0) << b->process().output();
  EXPECT_TRUE(a.waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, 10s));
  expectNoValidationProblems(*b);
  EXPECT_NE(b->process().output().find("Core Validation output type"), std::string::npos)
      << "the OpenXR core validation layer did not run:\n"
      << b->process().output();
}

// Depth sub-images of B's client travel to A as XR_KHR_composition_layer_depth (our runtime face
// offers it): A's display reports each projection view's depth swapchain, as it does for a
// client of its own.
TEST(OpenXrBackend, DepthSubImagesReachTheRuntime) {
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto b = startDaemonOver(a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();
  const uint64_t frames = 40;
  DemoSpec deep{"deep", 5, frames};
  deep.depth = true;
  auto demo = startDemo(*b, dirB, deep);
  ASSERT_TRUE(demo->waitForOutput("frames " + std::to_string(frames) + " ok", 60s))
      << demo->output() << b->process().output();
  std::this_thread::sleep_for(200ms);
  auto controlA = a.control();
  ASSERT_TRUE(controlA);
  auto display = controlA->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  size_t withDepth = 0;
  for (const auto& shown : display.value().shown) {
    if (shown.depthSwapchainId == 0) continue;
    EXPECT_NE(shown.depthSwapchainId, shown.swapchainId);
    withDepth++;
  }
  EXPECT_EQ(withDepth, 2u) << "both views of B's projection layer carry depth on A";
  demo->closeStdin();
  EXPECT_EQ(demo->wait(20s), 0) << demo->output();
  expectNoValidationProblems(*b);

  // The same client straight on A (B gone, so that it is A's primary): its depth is reported the
  // same way.
  b->process().signal(SIGTERM);
  EXPECT_EQ(b->process().wait(20s), 0) << b->process().output();
  ASSERT_TRUE(a.waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, 10s));
  auto direct = startDemo(a, dirA, deep);
  ASSERT_TRUE(direct->waitForOutput("frames " + std::to_string(frames) + " ok", 60s)) << direct->output();
  std::this_thread::sleep_for(200ms);
  display = controlA->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  withDepth = 0;
  for (const auto& shown : display.value().shown) withDepth += shown.depthSwapchainId != 0;
  EXPECT_EQ(withDepth, 2u);
  direct->closeStdin();
  EXPECT_EQ(direct->wait(20s), 0) << direct->output();
}

// XR_KHR_visibility_mask: B takes its runtime's masks (A's runtime face offers them: each view's
// fov rectangle as two triangles, its outline, and a hidden mesh of one zero-area triangle) and
// hands them to its clients in the system description (1.9), which B's OpenXR face answers with.
// A's headless display has no masks of its own, so A describes none.
TEST(OpenXrBackend, VisibilityMasksComeFromTheRuntime) {
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto b = startDaemonOver(a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();
  auto onA = client::describe(a.socket());
  ASSERT_TRUE(onA) << onA.error().describe();
  auto onB = client::describe(b->socket());
  ASSERT_TRUE(onB) << onB.error().describe();
  ASSERT_EQ(onB.value().views.size(), onA.value().views.size());
  for (size_t i = 0; i < onA.value().views.size(); ++i) {
    EXPECT_TRUE(onA.value().views[i].visibilityMasks.empty());
    const auto& fov = onA.value().views[i].fov;
    const float l = std::tan(fov[0]), r = std::tan(fov[1]), u = std::tan(fov[2]), d = std::tan(fov[3]);
    const std::vector<float> rectangle{l, d, r, d, r, u, l, u};
    const auto& masks = onB.value().views[i].visibilityMasks;
    ASSERT_EQ(masks.size(), 3u) << "view " << i;
    for (const auto& mask : masks) {
      const std::vector<uint32_t> indices = mask.type == 1   ? std::vector<uint32_t>{0, 1, 2}
                                            : mask.type == 2 ? std::vector<uint32_t>{0, 1, 2, 0, 2, 3}
                                                             : std::vector<uint32_t>{0, 1, 2, 3};
      EXPECT_EQ(mask.indices, indices) << "view " << i << " type " << mask.type;
      const std::vector<float> vertices =
          mask.type == 1 ? std::vector<float>{l, d, l, d, l, d} : rectangle;  // hidden: nothing
      ASSERT_EQ(mask.vertices.size(), vertices.size()) << "view " << i << " type " << mask.type;
      for (size_t k = 0; k < vertices.size(); ++k) EXPECT_NEAR(mask.vertices[k], vertices[k], 1e-5f) << k;
    }
  }
  expectNoValidationProblems(*b);
}

TEST(OpenXrBackend, HelloXrRendersThroughBothHops) {
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto b = startDaemonOver(a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();
  auto app = startHelloXr(*b, dirB, "Vulkan2", "hello_xr.log");
  ASSERT_TRUE(app->waitForOutput("XR_SESSION_STATE_VISIBLE->XR_SESSION_STATE_FOCUSED", 30s)) << app->output();
  ASSERT_TRUE(b->waitForStatus(
      [](const control::DaemonStatus& s) {
        auto c = findClient(s, "HelloXR");
        return c != nullptr && c->framesDisplayed >= 90;
      },
      30s))
      << app->output();

  auto controlA = a.control();
  ASSERT_TRUE(controlA);
  auto display = controlA->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  EXPECT_EQ(helloXrDisplayProblem(display.value().pixels), "");

  app->closeStdin();
  EXPECT_EQ(app->wait(30s), 0) << app->output();
  const auto problems = problemsIn(app->output());
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems.front();
  expectNoValidationProblems(*b);
}

TEST(OpenXrBackend, RuntimeLossDisconnectsClientsAndDaemonReconnects) {
  TempDir dirA, dirB;
  auto a = std::make_unique<Daemon>(dirA);
  ASSERT_TRUE(a->ready()) << a->process().output();
  auto b = startDaemonOver(*a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();

  DemoSpec endless{"endless", 5, 100000};
  auto demo = startDemo(*b, dirB, endless);
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  ASSERT_TRUE(b->waitForStatus(
      [](const control::DaemonStatus& s) { return s.clients.size() == 1 && s.clients[0].framesDisplayed > 20; }, 30s));

  // A dies: B's client loses its session (its connection is closed), B stays up.
  a->process().signal(SIGKILL);
  ASSERT_NE(a->process().wait(10s), -1);
  const int demoExit = demo->wait(20s);
  EXPECT_NE(demoExit, -1) << "B's client hung after the runtime was lost:\n" << demo->output();
  EXPECT_NE(demoExit, 0) << "B's client finished its frames although the runtime was gone:\n" << demo->output();
  ASSERT_TRUE(b->process().waitForOutput("OpenXR runtime lost", 10s)) << b->process().output();
  ASSERT_TRUE(b->waitForStatus([](const control::DaemonStatus& s) { return s.clients.empty(); }, 10s));
  // While A is gone, B keeps serving: it answers status, and refuses swapchains with a reason.
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(b->process().running()) << b->process().output();
  auto controlB = b->control();
  ASSERT_TRUE(controlB);
  ASSERT_TRUE(controlB->status());

  // A comes back at the same socket: B reconnects and serves new clients through it.
  a = std::make_unique<Daemon>(dirA);
  ASSERT_TRUE(a->ready()) << a->process().output();
  ASSERT_TRUE(b->process().waitForOutput("OpenXR runtime back", 20s)) << b->process().output();
  DemoSpec again{"again", 6, 60};
  auto second = startDemo(*b, dirB, again);
  ASSERT_TRUE(second->waitForOutput("frames 60 ok", 60s)) << second->output() << b->process().output();
  ASSERT_TRUE(a->waitForStatus(
      [](const control::DaemonStatus& s) { return s.clients.size() == 1 && s.clients[0].framesDisplayed > 30; }, 20s));
  // The last frame reaches A's display within a few of B's and A's display frames (B latches it,
  // A copies and composes it): poll, bounded, rather than guess how long that takes here.
  const uint32_t want = pattern::color({again.seed, 0, 59, 0, 0}, 100, 100);
  uint32_t got = 0;
  for (int attempt = 0; attempt < 100 && got != want; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(50ms);
    auto display = a->control()->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    const auto& px = display.value().pixels;
    std::memcpy(&got, &px.data[(size_t(100) * px.width + 100) * 4], 4);
  }
  EXPECT_EQ(got, want);
  second->closeStdin();
  EXPECT_EQ(second->wait(20s), 0) << second->output();
  expectNoValidationProblems(*b);
}

// The display's environment blend modes travel up both hops (A's, in A's order, are what B's
// clients may ask for), and the mode B's primary client asks for comes down to A's display.
TEST(OpenXrBackend, EnvironmentBlendModesComeFromTheRuntime) {
  TempDir dirA, dirB;
  Daemon a(dirA, {"--environment-blend-modes", "additive,opaque"});
  ASSERT_TRUE(a.ready()) << a.process().output();
  auto b = startDaemonOver(a, dirB);
  ASSERT_TRUE(b->ready()) << b->process().output();
  auto systemB = client::describe(b->socket());
  ASSERT_TRUE(systemB) << systemB.error().describe();
  EXPECT_EQ(systemB.value().environmentBlendModes,
            (std::vector<EnvironmentBlendMode>{EnvironmentBlendMode::additive, EnvironmentBlendMode::opaque}));

  auto controlA = a.control();
  auto controlB = b->control();
  ASSERT_TRUE(controlA && controlB);
  // Before any frame: the display's preferred mode.
  auto status = controlA->status();
  ASSERT_TRUE(status) << status.error().describe();
  EXPECT_EQ(status.value().environmentBlendMode, EnvironmentBlendMode::additive);

  // B's client renders opaque: B's xrEndFrame, then A's display, blend opaque.
  DemoSpec demo{"opaque-app", 5, 60};
  demo.blendMode = "opaque";
  auto process = startDemo(*b, dirB, demo);
  ASSERT_TRUE(process->waitForOutput("frames 60 ok", 60s)) << process->output() << b->process().output();
  std::this_thread::sleep_for(200ms);
  for (auto* control : {&controlA, &controlB}) {
    status = (*control)->status();
    ASSERT_TRUE(status) << status.error().describe();
    EXPECT_EQ(status.value().environmentBlendMode, EnvironmentBlendMode::opaque) << status.value().backend;
  }
  process->closeStdin();
  EXPECT_EQ(process->wait(20s), 0) << process->output();

  // A mode A's display does not have is refused by B's own validation, with the list.
  demo = DemoSpec{"alpha-app", 6, 10};
  demo.blendMode = "alpha_blend";
  process = startDemo(*b, dirB, demo);
  EXPECT_NE(process->wait(30s), 0) << process->output();
  EXPECT_NE(process->output().find("environment blend mode alpha_blend is not one of the display's (additive, opaque)"),
            std::string::npos)
      << process->output();
  EXPECT_TRUE(b->process().running());
  expectNoValidationProblems(*b);
}

// A recenter of A's display reaches B as a reference space change, and B's clients see LOCAL
// where A put it. B, whose runtime owns the spaces, refuses to recenter itself.
TEST(OpenXrBackend, RecenterOfTheRuntimeMovesLocalForTheClients) {
  SwayingPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.start());
  Daemon& a = *pair.a;
  auto& b = pair.b;
  RawSession& onA = pair.onA;
  RawSession& onB = pair.onB;
  auto waitFrame = [](RawSession& raw) {
    auto response = raw.session.waitFrameRequest().send().wait(raw.link->waitScope());
    EXPECT_EQ(response.getError().getCode(), wire::ErrorCode::NONE) << response.getError().getMessage().cStr();
    return std::pair{fromWire(response.getTiming().getLocalInStage()), response.getTiming().getLocalSpaceChanges()};
  };
  const auto [before, changesBefore] = waitFrame(onB);
  EXPECT_EQ(changesBefore, 0u);
  expectSamePose(before, pair.system.localInStage, "LOCAL before");

  auto controlA = a.control();
  auto controlB = b->control();
  ASSERT_TRUE(controlA && controlB);
  auto refused = controlB->recenter();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::unsupported);
  ASSERT_TRUE(controlA->recenter());
  const auto [recentred, changesOnA] = waitFrame(onA);
  EXPECT_EQ(changesOnA, 1u);
  // The swaying head turned LOCAL away from STAGE's heading.
  EXPECT_GT(std::abs(recentred.orientation[1]), 1e-4f);

  std::pair<Pose, uint32_t> seen{};
  for (int frame = 0; frame < 90 && seen.second == 0; ++frame) seen = waitFrame(onB);
  ASSERT_EQ(seen.second, 1u) << b->process().output();
  expectSamePose(seen.first, recentred, "LOCAL on B after A's recenter");
  EXPECT_NE(b->process().output().find("LOCAL moved"), std::string::npos);
  // New sessions on B are described with the new LOCAL.
  auto systemB = client::describe(b->socket());
  ASSERT_TRUE(systemB) << systemB.error().describe();
  expectSamePose(systemB.value().localInStage, recentred, "B's description");
  expectNoValidationProblems(*b);
}

// A's simulated head sways, so a pose says which time it was located for. B answers its clients'
// locateHead and waitFrame with what the runtime (A, through our runtime face) locates at exactly
// the time asked: in the past, right now, a frame or a second ahead.
TEST(OpenXrBackend, HeadIsLocatedAtTheRequestedTimeThroughBothHops) {
  SwayingPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.start());
  auto& b = pair.b;
  RawSession& onA = pair.onA;
  RawSession& onB = pair.onB;

  const int64_t now = monotonicNowNs();
  std::vector<Pose> poses;
  for (int64_t offsetMs : {-400, 0, 3, 11, 250, 1100}) {
    const int64_t t = now + offsetMs * 1'000'000;
    const Pose viaB = onB.locateHead(t);
    expectSamePose(viaB, onA.locateHead(t), fmt::format("t = now {:+} ms", offsetMs));
    poses.push_back(viaB);
  }
  // The poses differ with the time: the answers are not one cached pose.
  float lowest = 2, highest = -2;
  for (const Pose& p : poses) {
    lowest = std::min(lowest, p.orientation[1]);
    highest = std::max(highest, p.orientation[1]);
  }
  EXPECT_GT(highest - lowest, 0.02f) << "the head did not turn between the times asked for";

  // waitFrame's head is the runtime's at the display time it predicts.
  for (int i = 0; i < 5; ++i) {
    auto response = onB.session.waitFrameRequest().send().wait(onB.link->waitScope());
    ASSERT_EQ(response.getError().getCode(), wire::ErrorCode::NONE) << response.getError().getMessage().cStr();
    const int64_t predicted = response.getTiming().getPredictedDisplayTime();
    expectSamePose(fromWire(response.getTiming().getHeadInStage()), onA.locateHead(predicted),
                   fmt::format("waitFrame {}", i));
    auto begin = onB.session.beginFrameRequest();
    begin.setFrameId(response.getTiming().getFrameId());
    ASSERT_EQ(begin.send().wait(onB.link->waitScope()).getError().getCode(), wire::ErrorCode::NONE);
    auto end = onB.session.endFrameRequest();
    end.setFrameId(response.getTiming().getFrameId());
    end.setDisplayTime(predicted);
    ASSERT_EQ(end.send().wait(onB.link->waitScope()).getError().getCode(), wire::ErrorCode::NONE);
  }
  expectNoValidationProblems(*b);
}

// B's waitFrame answers carry the views its runtime located for that frame (xrLocateViews in
// VIEW space), so an IPD or fov change of the runtime reaches B's clients; A's headless display
// has fixed views and sends none (its system description holds).
TEST(OpenXrBackend, PerFrameViewsComeFromTheRuntime) {
  SwayingPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.start());
  EXPECT_TRUE(pair.onA.waitFrameViews().empty());
  const auto views = pair.onB.waitFrameViews();
  ASSERT_EQ(views.size(), pair.system.views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    expectSamePose(views[i].eyeInHead, pair.system.views[i].eyeInHead, fmt::format("eye {}", i));
    for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(views[i].fov[k], pair.system.views[i].fov[k], 1e-6f);
  }
}

// --openxr-overlay: daemon B's session on A is an overlay (XR_EXTX_overlay) over A's own primary
// client, so B's clients draw on top of it; B's session is visible, never focused.
TEST(OpenXrBackend, OverlaySessionDrawsOverTheRuntimesPrimary) {
  TempDir dirA, dirB;
  Daemon a(dirA);
  ASSERT_TRUE(a.ready()) << a.process().output();
  const uint64_t frames = 60;
  DemoSpec primary{"primary", 31, frames};
  auto primaryProcess = startDemo(a, dirA, primary);
  ASSERT_TRUE(primaryProcess->waitForOutput("connected", 30s)) << primaryProcess->output();
  auto env = openxrEnv(a.socket());
  // Debian's OpenXR core validation layer (1.0.20) refuses every next chain that holds
  // XrSessionCreateInfoOverlayEXTX (its table allows nothing after it, nor it after the graphics
  // binding), so this daemon runs without it; Vulkan validation stays on.
  env.erase("XR_ENABLE_API_LAYERS");
  Daemon b(dirB, {"--backend", "openxr", "--openxr-overlay"}, env);
  ASSERT_TRUE(b.ready()) << b.process().output();
  DemoSpec quad{"quad", 32, frames};
  quad.projection = false;
  quad.quadPx = 40;
  quad.quadX = 30;
  quad.quadY = 50;
  auto quadProcess = startDemo(b, dirB, quad);
  const std::string done = "frames " + std::to_string(frames) + " ok";
  ASSERT_TRUE(primaryProcess->waitForOutput(done, 60s)) << primaryProcess->output();
  ASSERT_TRUE(quadProcess->waitForOutput(done, 60s)) << quadProcess->output() << b.process().output();
  // B's client is B's primary: visible (A shows B's overlay session), not focused.
  EXPECT_NE(quadProcess->output().find("visible=1 focused=0"), std::string::npos) << quadProcess->output();
  std::this_thread::sleep_for(200ms);
  auto controlA = a.control();
  ASSERT_TRUE(controlA);
  auto status = controlA->status();
  ASSERT_TRUE(status);
  const control::ClientStatus* bOnA = findClient(status.value(), "xr-compositord");
  ASSERT_NE(bOnA, nullptr);
  EXPECT_EQ(bOnA->role, control::SessionRole::overlay);
  auto display = controlA->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  std::string first;
  EXPECT_EQ(countDisplayMismatches(display.value().pixels, kView, primary.seed, frames - 1,
                                   {{quad.seed, quad.quadX, quad.quadY, quad.quadPx}}, &first),
            0u)
      << first;
  primaryProcess->closeStdin();
  quadProcess->closeStdin();
  EXPECT_EQ(primaryProcess->wait(20s), 0);
  EXPECT_EQ(quadProcess->wait(20s), 0);
}

}  // namespace
}  // namespace xrc::test
