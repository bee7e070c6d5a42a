// Multi-client composition through the real daemon: session roles (primary, background,
// overlays by placement), alpha blending, pacing of slow clients, late frames, a client that
// stalls (its last frame stays) and one that is killed (it leaves the display). The display
// output is read back and checked pixel by pixel; the frame stats are checked against what each
// client did. Also the operator's side: set-primary, kick and `xr-compositorctl status`.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "pattern.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kView = 256;  // harness daemons run with --view-size 256x256
constexpr auto kLong = 120s;

struct Client {
  DemoSpec spec;
  std::unique_ptr<Process> process;
  DemoIdentity id;
};

// One channel of `src` blended over `dst` (premultiplied source alpha), as the blend shader does.
CtlResult ctl(const Daemon& daemon, const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--socket", daemon.socket()});
  return runCtl(dir, args);
}

// Occlusion culling: an opaque full-view overlay hides the primary, which the display then
// skips (and says so); a blended overlay above it hides nothing. Pixels prove the result.
TEST(Composition, OpaqueProjectionCullsWhatItCovers) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  constexpr uint64_t kStall = 30;
  std::vector<Client> clients(3);
  //                  name       seed frames   stereo     depth proj  quad x  y  mips overlay
  clients[0].spec = {"primary", 21, 1000000, "separate", false, true, 0, 0, 0, 1};
  clients[1].spec = {"opaque", 22, 1000000, "separate", false, true, 0, 0, 0, 1, 1};
  clients[2].spec = {"glass", 23, 1000000, "separate", false, true, 0, 0, 0, 1, 2};
  clients[2].spec.alpha = 128;
  for (auto& c : clients) c.spec.stallAfter = kStall;  // the last frames stay on the display
  clients[0].process = startDemo(daemon, dir, clients[0].spec);
  ASSERT_TRUE(clients[0].process->waitForOutput("connected", kLong)) << clients[0].process->output();
  for (size_t i = 1; i < clients.size(); ++i) clients[i].process = startDemo(daemon, dir, clients[i].spec);
  for (auto& c : clients) {
    ASSERT_TRUE(c.process->waitForOutput("stalled after 30 frames", kLong)) << c.spec.name << ":\n"
                                                                            << c.process->output();
    ASSERT_TRUE(parseIdentity(c.process->output(), c.id)) << c.process->output();
  }
  auto control = daemon.control();
  ASSERT_TRUE(control);
  // Wait until a display frame shows every client's last frame.
  Result<DisplaySnapshot> display = makeError(ErrorCode::notFound, "no display frame yet");
  const auto deadline = std::chrono::steady_clock::now() + kLong;
  while (std::chrono::steady_clock::now() < deadline) {
    display = control->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    size_t last = 0;
    for (const auto& l : display.value().shown) last += l.releaseOrdinal == kStall - 1 ? 1 : 0;
    if (last == 6) break;  // 3 clients x 2 views
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(display.value().shown.size(), 6u);
  for (const auto& l : display.value().shown) {
    EXPECT_EQ(l.releaseOrdinal, kStall - 1);
    // Only the primary lies entirely under an opaque projection view.
    EXPECT_EQ(l.drawn, l.clientId != clients[0].id.clientId) << "client " << l.clientId;
  }
  auto status = control->status();
  ASSERT_TRUE(status) << status.error().describe();
  EXPECT_GE(status.value().layerViewsCulled, 2u);

  size_t mismatches = 0;
  std::string first;
  const auto& px = display.value().pixels;
  ASSERT_EQ(px.width, 2 * kView);
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        const uint32_t opaque = pattern::color({clients[1].spec.seed, eye, kStall - 1, 0, 0}, x, y);
        const uint32_t glass = pattern::color({clients[2].spec.seed, eye, kStall - 1, 0, 0, 128}, x, y);
        const uint32_t want = blendOver(glass, opaque);
        uint32_t got;
        std::memcpy(&got, px.data.data() + (size_t(y) * px.width + eye * kView + x) * 4, 4);
        if (!closeEnough(got, want, 2)) {
          if (mismatches++ == 0) first = fmt::format("eye {} ({},{}): got {:08x} want {:08x}", eye, x, y, got, want);
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << first;
}

// Where nobody looks at the headless display (no window), a display frame is composed on the GPU
// only when read, from the frames it showed: the pixels are those every-frame composition gives.
// With --compose every-frame every display frame is composed, read or not. `env` goes to the
// daemon (the validation layers: nothing they report is allowed).
void composeWhenRead(bool everyFrame, const std::map<std::string, std::string>& env) {
  SCOPED_TRACE(everyFrame ? "every-frame" : "on-read");
  TempDir dir;
  Daemon daemon(dir, {"--compose", everyFrame ? "every-frame" : "on-read"}, env);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  constexpr uint64_t kStall = 20;
  Client c;
  c.spec = {"solo", 31, 1000000, "separate", false, true, 0, 0, 0, 1};
  c.spec.stallAfter = kStall;  // its last frame stays on the display
  c.process = startDemo(daemon, dir, c.spec);
  ASSERT_TRUE(c.process->waitForOutput("stalled after 20 frames", kLong)) << c.process->output();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  // The display keeps showing the stalled frame; give it some display frames to (not) compose,
  // counted from the stall: a slow (sanitized) build may not have shown the last frame yet then.
  auto stalled = control->status();
  ASSERT_TRUE(stalled) << stalled.error().describe();
  const uint64_t shownAtStall = stalled.value().displayFrames;
  ASSERT_TRUE(daemon.waitForStatus(
      [&](const control::DaemonStatus& s) { return s.displayFrames >= std::max<uint64_t>(30, shownAtStall + 10); },
      kLong));
  auto before = control->status();
  ASSERT_TRUE(before) << before.error().describe();
  if (everyFrame) {
    EXPECT_GE(before.value().displayFramesComposed + 1, before.value().displayFrames);
    EXPECT_LE(before.value().displayFramesComposed, before.value().displayFrames + 1);
  } else {
    EXPECT_EQ(before.value().displayFramesComposed, 0u) << before.value().displayFrames << " display frames";
  }

  auto display = control->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  ASSERT_EQ(display.value().shown.size(), 2u);
  for (const auto& l : display.value().shown) EXPECT_EQ(l.releaseOrdinal, kStall - 1);
  ASSERT_EQ(display.value().pixels.width, 2 * kView);
  std::string first;
  EXPECT_EQ(countDisplayMismatches(display.value().pixels, kView, c.spec.seed, kStall - 1, {}, &first), 0u) << first;

  auto after = control->status();
  ASSERT_TRUE(after) << after.error().describe();
  if (everyFrame) {
    EXPECT_GE(after.value().displayFramesComposed + 1, after.value().displayFrames);
    EXPECT_LE(after.value().displayFramesComposed, after.value().displayFrames + 1);  // a read adds none
  } else {
    EXPECT_EQ(after.value().displayFramesComposed, 1u);  // the one read, once
  }
  c.process->closeStdin();
  EXPECT_EQ(c.process->wait(30s), 0) << c.process->output();
  daemon.process().signal(SIGTERM);
  EXPECT_EQ(daemon.process().wait(std::chrono::seconds(20)), 0) << daemon.process().output();
  EXPECT_FALSE(hasValidationMessages(daemon.process().output())) << daemon.process().output();
}

TEST(Composition, HeadlessComposesOnlyTheFramesRead) {
  composeWhenRead(false, {});
  composeWhenRead(true, {});
}

// The composition a read makes reads the runtime images the display held for that frame: under
// synchronization validation (the sanitizer builds leave out `*UnderSynchronizationValidation`).
TEST(Composition, ComposedOnReadUnderSynchronizationValidation) { composeWhenRead(false, validationEnv()); }

// Eight clients: a primary, a hidden normal app, and six overlays (two overlapping, one blended,
// one slow, one stalling, one killed; the lowest also late on purpose).
TEST(Composition, EightClientsStackPaceAndCount) {
  TempDir dir;
  // Clients that finished their frames wait, idle, until the last one is done (the slow client
  // takes longest); on a loaded machine (sanitizer builds) that is past the default 3-s hung
  // timeout, which would rightly hand the primary role on. Hung clients have their own test.
  Daemon daemon(dir, {"--hung-client-timeout-ms", "600000"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  constexpr uint64_t kFrames = 240;
  std::vector<Client> clients(8);
  //                  name           seed frames   stereo     depth  proj   quad  x    y   mips overlay
  clients[0].spec = {"primary", 11, kFrames, "separate", false, true, 0, 0, 0, 1};
  clients[1].spec = {"background", 12, kFrames, "separate", false, true, 0, 0, 0, 1};
  clients[2].spec = {"low", 13, kFrames, "separate", false, false, 64, 16, 16, 1, 1};
  clients[2].spec.lateEvery = 10;
  clients[3].spec = {"high", 14, kFrames, "array", false, false, 64, 48, 48, 1, 2};
  clients[4].spec = {"blended", 15, kFrames, "separate", false, false, 48, 160, 16, 1, 3};
  clients[4].spec.alpha = 128;
  clients[5].spec = {"slow", 16, kFrames / 3, "separate", false, false, 32, 160, 96, 1, 4};
  clients[5].spec.workMs = 15;
  clients[5].spec.stats = true;
  clients[6].spec = {"stalls", 17, kFrames, "separate", false, false, 32, 160, 160, 1, 5};
  clients[6].spec.stallAfter = 30;
  clients[7].spec = {"killed", 18, 1000000, "separate", false, false, 48, 16, 176, 1, 6};

  // The primary connects first (the first normal session is the primary).
  clients[0].process = startDemo(daemon, dir, clients[0].spec);
  ASSERT_TRUE(clients[0].process->waitForOutput("connected", kLong)) << clients[0].process->output();
  for (size_t i = 1; i < clients.size(); ++i) clients[i].process = startDemo(daemon, dir, clients[i].spec);
  for (auto& c : clients) {
    ASSERT_TRUE(c.process->waitForOutput("connected", kLong)) << c.spec.name << ":\n" << c.process->output();
    ASSERT_TRUE(parseIdentity(c.process->output(), c.id)) << c.process->output();
  }
  Client& killed = clients[7];
  auto control = daemon.control();
  ASSERT_TRUE(control);
  ASSERT_TRUE(daemon.waitForStatus(
      [&](const control::DaemonStatus& s) {
        auto* k = findClient(s, killed.id.clientId);
        return k != nullptr && k->framesDisplayed > 20;
      },
      kLong));
  killed.process->signal(SIGKILL);
  ASSERT_EQ(killed.process->wait(10s), 128 + SIGKILL);

  for (size_t i = 0; i + 1 < clients.size(); ++i) {
    auto& c = clients[i];
    const std::string done =
        c.spec.stallAfter ? "stalled after 30 frames" : "frames " + std::to_string(c.spec.frames) + " ok";
    ASSERT_TRUE(c.process->waitForOutput(done, kLong)) << c.spec.name << ":\n" << c.process->output();
  }
  EXPECT_NE(clients[0].process->output().find("visibility visible=1 focused=1 frame=0"), std::string::npos);
  EXPECT_NE(clients[1].process->output().find("visibility visible=0 focused=0 frame=0"), std::string::npos);
  EXPECT_NE(clients[2].process->output().find("visibility visible=1 focused=0 frame=0"), std::string::npos);
  // Every last frame has reached the display (a frame shows at most two display periods later).
  std::this_thread::sleep_for(100ms);

  auto status = control->status();
  ASSERT_TRUE(status) << status.error().describe();
  const auto& s = status.value();
  EXPECT_EQ(s.clients.size(), 7u);
  EXPECT_EQ(findClient(s, killed.id.clientId), nullptr);
  EXPECT_EQ(s.primaryClientId, clients[0].id.clientId);
  for (size_t i = 0; i + 1 < clients.size(); ++i) {
    const Client& c = clients[i];
    auto* st = findClient(s, c.id.clientId);
    ASSERT_NE(st, nullptr) << c.spec.name;
    const uint64_t sent = c.spec.stallAfter ? c.spec.stallAfter : c.spec.frames;
    EXPECT_EQ(st->framesSubmitted, sent) << c.spec.name;
    // Every frame is accounted for once: displayed, dropped (superseded) or hidden.
    EXPECT_EQ(st->framesDisplayed + st->framesDropped + st->framesHidden, sent) << c.spec.name;
    EXPECT_EQ(st->role, i == 0   ? control::SessionRole::primary
                        : i == 1 ? control::SessionRole::background
                                 : control::SessionRole::overlay)
        << c.spec.name;
  }
  auto stat = [&](size_t i) { return *findClient(s, clients[i].id.clientId); };
  EXPECT_EQ(stat(1).framesDisplayed, 0u);
  EXPECT_EQ(stat(1).framesHidden, kFrames);
  // The deliberately late client: every tenth frame is shown late.
  EXPECT_GE(stat(2).framesLate, kFrames / 10 - 2) << "low: " << stat(2).framesLate << " late";
  // The slow client (15 ms of work per frame at 90 Hz) runs at a whole fraction of the display:
  // every target its waitFrame got lies a whole number of display periods after the previous
  // one, and (once the pacer has seen its work) at least two. How many depends on how slow the
  // machine makes its work, and may change during the run (sanitizer builds).
  const double periodUs = 1e6 / s.refreshHz;
  const int64_t periodNs = std::llround(1e9 / double(s.refreshHz));
  EXPECT_GE(stat(5).displayPeriods, 2u);
  {
    const std::string out = clients[5].process->output();
    const auto line = out.find("target_spacing_ns");
    ASSERT_NE(line, std::string::npos) << out;
    std::istringstream entries(out.substr(line + 17, out.find('\n', line) - line - 17));
    std::string entry;
    uint64_t frames = 0, atLeastTwo = 0;
    while (entries >> entry) {
      const int64_t spacing = std::stoll(entry.substr(0, entry.find(':')));
      const uint64_t count = std::stoull(entry.substr(entry.find(':') + 1));
      EXPECT_EQ(spacing % periodNs, 0) << "spacing " << spacing << " ns is not a whole number of periods";
      frames += count;
      if (spacing >= 2 * periodNs) atLeastTwo += count;
    }
    EXPECT_EQ(frames, clients[5].spec.frames - 1);
    EXPECT_GE(atLeastTwo, frames * 3 / 4) << out;
  }
  // Committed frames are as far apart as the cadence says, give or take the client's own jitter.
  EXPECT_GE(stat(5).frameIntervalUs.p50, 2 * periodUs * 0.9);
  EXPECT_GT(stat(0).latencyUs.p50, 0.f);
  EXPECT_GT(stat(0).releaseUs.p50, 0.f);

  // The display: the primary's projection, overlays over it by placement (high over low where
  // they overlap), the blended quad mixed with what is under it, the stalled client's last
  // frame, and the primary again where the killed client's quad was.
  auto display = control->readDisplay();
  ASSERT_TRUE(display) << display.error().describe();
  const auto& px = display.value().pixels;
  ASSERT_EQ(px.width, 2 * kView);
  std::map<uint32_t, uint64_t> ordinal;  // client id -> release ordinal shown
  std::vector<uint32_t> order;
  for (const auto& l : display.value().shown) {
    ordinal[l.clientId] = l.releaseOrdinal;
    if (order.empty() || order.back() != l.clientId) order.push_back(l.clientId);
  }
  std::vector<uint32_t> wantOrder;
  for (size_t i : {0, 2, 3, 4, 5, 6}) wantOrder.push_back(clients[i].id.clientId);
  EXPECT_EQ(order, wantOrder);
  for (size_t i : {0, 2, 3, 4, 5}) {
    EXPECT_EQ(ordinal[clients[i].id.clientId], clients[i].spec.frames - 1) << clients[i].spec.name;
  }
  EXPECT_EQ(ordinal[clients[6].id.clientId], 29u);

  size_t mismatches = 0;
  std::string first;
  for (uint32_t eye = 0; eye < 2; ++eye) {
    for (uint32_t y = 0; y < kView; ++y) {
      for (uint32_t x = 0; x < kView; ++x) {
        uint32_t want = pattern::color({clients[0].spec.seed, eye, kFrames - 1, 0, 0}, x, y);
        bool blended = false;
        for (size_t i : {2, 3, 4, 5, 6}) {
          const DemoSpec& q = clients[i].spec;
          if (x < q.quadX || x >= q.quadX + q.quadPx || y < q.quadY || y >= q.quadY + q.quadPx) continue;
          const uint32_t texel =
              pattern::color({q.seed, 0, ordinal[clients[i].id.clientId], 0, 0, q.alpha}, x - q.quadX, y - q.quadY);
          blended = q.alpha != 255;
          want = blended ? blendOver(texel, want) : texel;
        }
        uint32_t got;
        std::memcpy(&got, &px.data[(size_t(y) * px.width + eye * kView + x) * 4], 4);
        if (!closeEnough(got, want, blended ? 1 : 0) && mismatches++ == 0) {
          first = fmt::format("eye {} ({},{}): got {:#x} want {:#x}", eye, x, y, got, want);
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first at " << first;

  for (size_t i = 0; i + 1 < clients.size(); ++i) {
    clients[i].process->closeStdin();
    EXPECT_EQ(clients[i].process->wait(30s), 0) << clients[i].spec.name << ":\n" << clients[i].process->output();
  }
}

// The operator switches the primary and kicks a client, through xr-compositorctl.
TEST(Composition, SetPrimaryAndKickThroughCtl) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  std::vector<Client> clients(3);
  clients[0].spec = {"first", 21, 1000000, "separate", false, true, 0, 0, 0, 1};
  clients[1].spec = {"second", 22, 1000000, "separate", false, true, 0, 0, 0, 1};
  clients[2].spec = {"badge", 23, 1000000, "separate", false, false, 32, 8, 8, 1, 7};
  clients[0].process = startDemo(daemon, dir, clients[0].spec);
  ASSERT_TRUE(clients[0].process->waitForOutput("connected", kLong)) << clients[0].process->output();
  for (size_t i = 1; i < clients.size(); ++i) clients[i].process = startDemo(daemon, dir, clients[i].spec);
  for (auto& c : clients) {
    ASSERT_TRUE(c.process->waitForOutput("visibility", kLong)) << c.spec.name << ":\n" << c.process->output();
    ASSERT_TRUE(parseIdentity(c.process->output(), c.id)) << c.process->output();
  }
  const uint32_t first = clients[0].id.clientId, second = clients[1].id.clientId, badge = clients[2].id.clientId;

  CtlResult r = ctl(daemon, dir, {"set-primary", std::to_string(second)});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(clients[1].process->waitForOutput("visibility visible=1 focused=1", 10s)) << clients[1].process->output();
  EXPECT_TRUE(clients[0].process->waitForOutput("visibility visible=0 focused=0", 10s)) << clients[0].process->output();

  // Bad requests: clear errors, nothing changes.
  r = ctl(daemon, dir, {"set-primary", std::to_string(badge)});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("is an overlay session"), std::string::npos) << r.output;
  r = ctl(daemon, dir, {"set-primary", "9999"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("no client 9999"), std::string::npos) << r.output;
  r = ctl(daemon, dir, {"kick", "9999"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("no client 9999"), std::string::npos) << r.output;

  // status --json: stable field names, parsed.
  r = ctl(daemon, dir, {"status", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto json = nlohmann::json::parse(r.output);
  EXPECT_EQ(json["primary_client_id"], second);
  ASSERT_EQ(json["clients"].size(), 3u);
  for (const auto& c : json["clients"]) {
    for (const char* field : {"id", "name", "pid", "sync_mode", "role", "frames_submitted", "frames_displayed",
                              "frames_late", "frames_dropped", "frames_hidden", "release_rtt_us", "gpu_copy_us",
                              "latency_us", "frame_interval_us", "display_periods"}) {
      EXPECT_TRUE(c.contains(field)) << field << " missing in " << c.dump();
    }
    const uint32_t id = c["id"];
    EXPECT_EQ(c["role"], id == second ? "primary" : id == badge ? "overlay" : "background") << c.dump();
    EXPECT_TRUE(c["latency_us"].contains("p50") && c["latency_us"].contains("p99"));
  }
  for (const char* field :
       {"missed_display_frames", "display_frames_gpu_late", "display_work_us", "display_wake_delay_us",
        "daemon_cpu_us_per_display_frame", "daemon_cpu_us_per_client_frame", "gpu_queue_priority"}) {
    EXPECT_TRUE(json.contains(field)) << field;
  }
  // Counted among the display frames, never more.
  EXPECT_LE(json.value("display_frames_gpu_late", uint64_t(0)), json.value("display_frames", uint64_t(0)));
  // The headless loop begins each display frame at or after its vsync, never before.
  const auto& wake = json["display_wake_delay_us"];
  EXPECT_GE(wake.value("p50", -1.0), 0.0) << wake.dump();
  EXPECT_GE(wake.value("p99", -1.0), wake.value("p50", 0.0)) << wake.dump();
  // Whatever the driver granted, it is one of Vulkan's four.
  const std::string priority = json.value("gpu_queue_priority", "");
  EXPECT_TRUE(priority == "low" || priority == "medium" || priority == "high" || priority == "realtime") << priority;

  // Kick removes exactly that client; the others keep going.
  r = ctl(daemon, dir, {"kick", std::to_string(first)});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(clients[0].process->wait(20s), 0) << "a kicked client loses its daemon";
  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto before = control->status();
  ASSERT_TRUE(before);
  EXPECT_EQ(before.value().clients.size(), 2u);
  EXPECT_EQ(findClient(before.value(), first), nullptr);
  const uint64_t secondFrames = findClient(before.value(), second)->framesSubmitted;
  EXPECT_TRUE(daemon.waitForStatus(
      [&](const control::DaemonStatus& s) {
        auto* c = findClient(s, second);
        return s.clients.size() == 2 && c != nullptr && c->framesSubmitted > secondFrames + 30;
      },
      10s));

  // The human table names every client with its role.
  r = ctl(daemon, dir, {"status"});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("2 clients"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("primary"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overlay:7"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("first"), std::string::npos) << r.output;

  // watch: the same table, redrawn in place (cursor home before every refresh).
  r = ctl(daemon, dir, {"watch", "--count", "2", "--interval", "0.1"});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  size_t refreshes = 0;
  for (size_t pos = r.output.find("\x1b[H"); pos != std::string::npos; pos = r.output.find("\x1b[H", pos + 1)) {
    ++refreshes;
  }
  EXPECT_EQ(refreshes, 2u) << r.output;
  EXPECT_NE(r.output.find("overlay:7"), std::string::npos) << r.output;

  for (size_t i = 1; i < clients.size(); ++i) {
    clients[i].process->closeStdin();
    clients[i].process->signal(SIGTERM);
    clients[i].process->wait(20s);
  }
}

}  // namespace
}  // namespace xrc::test
