// A display with nothing to show sleeps: no display frames while no client has a frame, a frame
// that comes wakes it (and is shown, pixel-checked), a client that leaves lets it sleep again,
// and the vsyncs it slept through are not counted as missed. A display nobody watches (headless,
// composed only when read) does not wake at its vsyncs even while it shows frames.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <optional>
#include <thread>

#include "harness.hpp"
#include "thread_use.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kView = 256;  // harness daemons run with --view-size 256x256
constexpr uint64_t kStall = 30;

size_t nonBlackPixels(const control::Pixels& px) {
  size_t count = 0;
  for (size_t i = 0; i + 4 <= px.data.size(); i += 4) {
    if (px.data[i] != 0 || px.data[i + 1] != 0 || px.data[i + 2] != 0) count++;
  }
  return count;
}

// Polls until the display composes no frame for `quiet`; the status then.
std::optional<control::DaemonStatus> waitUntilAsleep(control::ControlClient& control, std::chrono::milliseconds quiet,
                                                     std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto before = control.status();
  while (before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(quiet);
    auto after = control.status();
    if (!after) return std::nullopt;
    if (after.value().displayFrames == before.value().displayFrames) return after.value();
    before = std::move(after);
  }
  return std::nullopt;
}

TEST(IdleDisplay, SleepsWithNothingToShowAndWakesForAFrame) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto control = daemon.control();
  ASSERT_TRUE(control);

  // No client: after its first (black) composition the display composes nothing more.
  auto asleep = waitUntilAsleep(*control, 1s, 30s);
  ASSERT_TRUE(asleep) << "the display kept composing with no client";
  EXPECT_GE(asleep->displayFrames, 1u);
  auto black = control->readDisplay();
  ASSERT_TRUE(black) << black.error().describe();
  EXPECT_EQ(nonBlackPixels(black.value().pixels), 0u);
  const uint64_t missedAsleep = asleep->missedDisplayFrames;

  // A client's frames wake it; its last frame (it stops submitting after kStall) stays shown.
  DemoSpec spec{"waker", 41, 1'000'000};
  spec.stallAfter = kStall;
  auto demo = startDemo(daemon, dir, spec);
  ASSERT_TRUE(demo->waitForOutput("stalled after 30 frames", 120s)) << demo->output();
  DemoIdentity id;
  ASSERT_TRUE(parseIdentity(demo->output(), id)) << demo->output();
  Result<DisplaySnapshot> display = makeError(ErrorCode::notFound, "no display frame yet");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    display = control->readDisplay();
    ASSERT_TRUE(display) << display.error().describe();
    if (!display.value().shown.empty() && display.value().shown[0].releaseOrdinal == kStall - 1) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_FALSE(display.value().shown.empty());
  ASSERT_EQ(display.value().shown[0].releaseOrdinal, kStall - 1);
  std::string first;
  EXPECT_EQ(countDisplayMismatches(display.value().pixels, kView, spec.seed, kStall - 1, {}, &first), 0u) << first;
  auto awake = control->status();
  ASSERT_TRUE(awake) << awake.error().describe();
  const auto* client = findClient(awake.value(), id.clientId);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->framesSubmitted, kStall);
  EXPECT_EQ(client->framesDisplayed + client->framesDropped, kStall);
  EXPECT_GT(client->framesDisplayed, 0u);
  // The vsyncs slept through before the first frame are not missed display frames. (Under a
  // sanitizer some may be missed for real; a second and more of sleep would count 90 or more.)
  EXPECT_LT(awake.value().missedDisplayFrames - missedAsleep, 45u);
  // A stalled client's last frame is still something to show: the display keeps composing.
  std::this_thread::sleep_for(500ms);
  auto stillAwake = control->status();
  ASSERT_TRUE(stillAwake);
  EXPECT_GT(stillAwake.value().displayFrames, awake.value().displayFrames);

  // The client leaves: one black composition, then sleep again.
  demo->signal(SIGKILL);
  demo->wait(10s);
  auto again = waitUntilAsleep(*control, 1s, 30s);
  ASSERT_TRUE(again) << "the display kept composing after the last client left";
  auto blackAgain = control->readDisplay();
  ASSERT_TRUE(blackAgain) << blackAgain.error().describe();
  EXPECT_TRUE(blackAgain.value().shown.empty());
  EXPECT_EQ(nonBlackPixels(blackAgain.value().pixels), 0u);
  EXPECT_TRUE(daemon.process().running());
}

// Nobody looks at a headless display whose frames are composed only when read, so which frames
// each vsync showed is settled when next asked (a commit, a client's next frame, a status read),
// not at the vsync: the display thread wakes only as a backstop, a few times a second, while a
// client's frames keep being shown at every vsync.
TEST(IdleDisplay, AnUnwatchedDisplayDoesNotWakeAtItsVsyncs) {
  TempDir dir;
  Daemon daemon(dir);
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  auto control = daemon.control();
  ASSERT_TRUE(control);
  auto demo = startDemo(daemon, dir, DemoSpec{"unwatched", 3, 1'000'000});
  ASSERT_TRUE(demo->waitForOutput("connected", 30s)) << demo->output();
  ASSERT_TRUE(keepsBeingDisplayed(daemon, "unwatched")) << demo->output();

  // How often the display thread went off a CPU: once per wake-up (or preemption).
  auto displayWakes = [&]() -> std::optional<uint64_t> {
    const auto threads = tools::useByThread(daemon.process().pid());
    auto it = threads.find("xrc-display");
    if (it == threads.end()) return std::nullopt;
    return it->second.switches;
  };
  const auto runsBefore = displayWakes();
  ASSERT_TRUE(runsBefore) << "the daemon has no xrc-display thread";
  auto before = control->status();
  ASSERT_TRUE(before) << before.error().describe();
  std::this_thread::sleep_for(2s);
  const auto runsAfter = displayWakes();
  auto after = control->status();
  ASSERT_TRUE(after) << after.error().describe();
  ASSERT_TRUE(runsAfter);

  const uint64_t vsyncs = after.value().displayFrames - before.value().displayFrames;
  const uint64_t runs = *runsAfter - *runsBefore;
  const auto* was = findClient(before.value(), "unwatched");
  const auto* is = findClient(after.value(), "unwatched");
  ASSERT_TRUE(was != nullptr && is != nullptr);
  std::printf("unwatched display: %llu display frames, %llu of the client's shown, display thread ran %llu times\n",
              static_cast<unsigned long long>(vsyncs),
              static_cast<unsigned long long>(is->framesDisplayed - was->framesDisplayed),
              static_cast<unsigned long long>(runs));
  EXPECT_GE(vsyncs, 20u);
  EXPECT_GT(is->framesDisplayed, was->framesDisplayed + 10);
  EXPECT_LT(runs * 4, vsyncs) << "the display thread woke for its vsyncs";
  EXPECT_EQ(after.value().missedDisplayFrames, before.value().missedDisplayFrames);
  // Once the client is gone, the display goes to sleep as it does when latched at each vsync.
  demo->signal(SIGTERM);
  demo->wait(10s);
  EXPECT_TRUE(waitUntilAsleep(*control, 1s, 30s)) << "the display did not go idle";
}

}  // namespace
}  // namespace xrc::test
