// The compositor's frame policy as pure logic: pacing (FramePacer) and which frame of which
// client each display frame shows, in what order, with what accounting (FrameScheduler).
#include <gtest/gtest.h>

#include <cstdlib>

#include "compositor/frame_pacer.hpp"
#include "compositor/frame_scheduler.hpp"

namespace xrc {
namespace {

constexpr int64_t kPeriod = 11'111'111;  // 90 Hz
const DisplayClock kClock{1'000'000'000, kPeriod};
int64_t vsync(int64_t n) { return kClock.originNs + n * kPeriod; }

TEST(FramePacer, FastClientTargetsEveryVsyncOnePeriodAhead) {
  FramePacer pacer;
  int64_t now = vsync(10) + 1'000'000;
  auto plan = pacer.next(now, kClock);
  EXPECT_EQ(plan.predictedNs, vsync(12));
  EXPECT_EQ(plan.wakeNs, vsync(11));
  for (int i = 0; i < 20; ++i) {
    now = plan.wakeNs + 2'000'000;  // 2 ms of work per frame
    const auto next = pacer.next(now, kClock);
    EXPECT_EQ(next.predictedNs, plan.predictedNs + kPeriod);
    EXPECT_EQ(next.wakeNs, next.predictedNs - kPeriod);
    EXPECT_EQ(next.periods, 1u);
    plan = next;
  }
}

// Over another runtime the daemon latches frames `latchLeadNs` before the vsync they are for:
// the client is woken a full period before that latch, and targets the vsync after it.
TEST(FramePacer, ALatchLeadMovesTheWakeBeforeTheLatch) {
  DisplayClock clock = kClock;
  clock.latchLeadNs = kPeriod * 3 / 2;  // e.g. a runtime predicting 1.5 periods ahead
  FramePacer pacer;
  int64_t now = vsync(10) + 1'000'000;
  auto plan = pacer.next(now, clock);
  // The next latch after `now` is that of vsync(12) (vsync(11)'s was before vsync(10)).
  EXPECT_EQ(plan.wakeNs, vsync(12) - clock.latchLeadNs);
  EXPECT_GT(plan.wakeNs, now);
  EXPECT_EQ(plan.predictedNs, vsync(13));
  for (int i = 0; i < 20; ++i) {
    now = plan.wakeNs + 2'000'000;
    const auto next = pacer.next(now, clock);
    EXPECT_EQ(next.predictedNs, plan.predictedNs + kPeriod);
    // Done by the latch of its vsync: one whole period from the wake.
    EXPECT_EQ(next.predictedNs - clock.latchLeadNs - next.wakeNs, kPeriod);
    plan = next;
  }
}

TEST(FramePacer, SlowClientMovesToAWholeMultipleAndBack) {
  FramePacer pacer;
  auto plan = pacer.next(vsync(10), kClock);
  for (int i = 0; i < 30; ++i) plan = pacer.next(plan.wakeNs + kPeriod * 3 / 2, kClock);  // 16.7 ms of work
  EXPECT_EQ(plan.periods, 2u);
  auto next = pacer.next(plan.wakeNs + kPeriod * 3 / 2, kClock);
  EXPECT_EQ(next.predictedNs - plan.predictedNs, 2 * kPeriod);
  EXPECT_EQ((next.predictedNs - kClock.originNs) % kPeriod, 0);
  EXPECT_EQ(next.wakeNs, next.predictedNs - 2 * kPeriod);  // two periods to render in
  plan = next;
  for (int i = 0; i < 30; ++i) plan = pacer.next(plan.wakeNs + 1'000'000, kClock);  // fast again
  EXPECT_EQ(plan.periods, 1u);
}

// Over another runtime the display's vsyncs move: the runtime gives the daemon every other one
// while the daemon's frames run long, or moves it half its period. A target left between the
// new vsyncs would be latched only at the one after, and the client's next frame, woken by the
// bounded latch wait (afterLatch), would supersede it there: frame after frame dropped. Targets
// follow the clock onto its new vsyncs.
TEST(FramePacer, TargetsFollowTheDisplaysVsyncsWhenTheyMove) {
  DisplayClock clock{kClock.originNs, 2 * kPeriod, kPeriod};  // every other vsync, latched a period ahead
  auto onGrid = [&](int64_t t) { return (t - clock.originNs) % clock.periodNs == 0; };
  FramePacer pacer;
  auto plan = pacer.next(clock.originNs + 20 * kPeriod + 1'000'000, clock);
  for (int i = 0; i < 5; ++i) plan = pacer.next(plan.wakeNs + 2'000'000, clock);
  ASSERT_TRUE(onGrid(plan.predictedNs));
  // The runtime moves the daemon by one of its own periods: half the display's.
  clock.originNs += kPeriod;
  for (int i = 0; i < 5; ++i) {
    const auto next = pacer.next(plan.wakeNs + 2'000'000, clock);
    EXPECT_TRUE(onGrid(next.predictedNs)) << "frame " << i << " targets between vsyncs";
    EXPECT_GE(next.predictedNs - plan.predictedNs, clock.periodNs);  // never faster than its cadence
    EXPECT_EQ(next.wakeNs, next.predictedNs - clock.latchLeadNs - clock.periodNs);
    plan = next;
  }
  // The runtime gives it every vsync again, on a grid through none of the old targets.
  clock = DisplayClock{clock.originNs + kPeriod / 2, kPeriod, kPeriod / 2};
  for (int i = 0; i < 5; ++i) {
    plan = pacer.next(plan.wakeNs + 2'000'000, clock);
    EXPECT_TRUE(onGrid(plan.predictedNs)) << "frame " << i << " targets between vsyncs";
  }
}

// A runtime's predicted display times jitter by microseconds from frame to frame (and their
// periods by rounding): a vsync a little before the target is the same one, measured again. The
// target does not jump to the vsync after it, which would cost the client a frame each time.
TEST(FramePacer, JitterOfTheDisplaysVsyncsCostsNoFrame) {
  DisplayClock clock{kClock.originNs, kPeriod, kPeriod / 2};
  FramePacer pacer;
  auto plan = pacer.next(clock.originNs + 10 * kPeriod + 1'000'000, clock);
  for (int i = 0; i < 40; ++i) {
    // The runtime's newest prediction, up to 50 us either side of the ideal grid.
    clock.originNs = plan.predictedNs - kPeriod + ((i % 3) - 1) * 50'000;
    const auto next = pacer.next(plan.wakeNs + 2'000'000, clock);
    EXPECT_LE(std::llabs(next.predictedNs - plan.predictedNs - kPeriod), 50'000) << "frame " << i;
    plan = next;
  }
}

// An answer held back by the daemon (1.5: behind the frame's copies) does not count as client
// work: a client that renders 2 ms after each answer stays at every vsync however late it comes.
TEST(FramePacer, DelayedAnswersAreNotTheClientsWork) {
  FramePacer pacer;
  auto plan = pacer.next(vsync(10), kClock);
  for (int i = 0; i < 30; ++i) {
    const int64_t answered = plan.wakeNs + kPeriod * 3 / 4;  // the daemon took 8 ms more
    pacer.answeredAt(answered);
    plan = pacer.next(answered + 2'000'000, kClock);
    EXPECT_EQ(plan.periods, 1u) << "frame " << i;
  }
  // Without answeredAt the same timeline reads as 10 ms of work per 11 ms frame: slower cadence.
  FramePacer blamed;
  plan = blamed.next(vsync(10), kClock);
  for (int i = 0; i < 30; ++i) plan = blamed.next(plan.wakeNs + kPeriod * 3 / 4 + 2'000'000, kClock);
  EXPECT_EQ(plan.periods, 2u);
}

std::shared_ptr<ClientRecord> client(uint32_t id, bool overlay = false, uint32_t placement = 0) {
  auto c = std::make_shared<ClientRecord>();
  c->id = id;
  c->overlay = overlay;
  c->overlayPlacement = placement;
  return c;
}

CommittedFrame frame(uint32_t clientId, uint64_t frameId, int64_t targetNs) {
  CommittedFrame f;
  f.clientId = clientId;
  f.frameId = frameId;
  f.targetNs = targetNs;
  f.displayTimeNs = targetNs;
  return f;
}

std::vector<std::pair<uint32_t, uint64_t>> shown(const DisplaySelection& s) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& f : s.shown) out.emplace_back(f.clientId, f.frameId);
  return out;
}

TEST(FrameScheduler, RolesPrimaryElectionAndSwitching) {
  FrameScheduler scheduler;
  scheduler.addClient(client(1, true, 3));  // an overlay is never the primary
  scheduler.addClient(client(2));
  scheduler.addClient(client(3));
  EXPECT_EQ(scheduler.displayStats().primaryClientId, 2u);
  EXPECT_TRUE(scheduler.visibility(1).visible);
  EXPECT_FALSE(scheduler.visibility(1).focused);
  EXPECT_TRUE(scheduler.visibility(2).focused);
  EXPECT_FALSE(scheduler.visibility(3).visible);

  EXPECT_EQ(scheduler.setPrimary(1).error().code, ErrorCode::invalidArgument);
  EXPECT_EQ(scheduler.setPrimary(9).error().code, ErrorCode::notFound);
  ASSERT_TRUE(scheduler.setPrimary(3));
  EXPECT_FALSE(scheduler.visibility(2).visible);
  EXPECT_TRUE(scheduler.visibility(3).focused);

  scheduler.removeClient(3);  // the longest-connected normal session takes over
  EXPECT_EQ(scheduler.displayStats().primaryClientId, 2u);
  scheduler.removeClient(2);
  EXPECT_EQ(scheduler.displayStats().primaryClientId, 0u);
}

TEST(FrameScheduler, EveryDisplayFrameSharesAFramesLayersInsteadOfCopyingThem) {
  FrameScheduler scheduler;
  scheduler.addClient(client(1));
  CommittedFrame f = frame(1, 1, vsync(1));
  CommittedLayer quad;
  quad.kind = CommittedLayer::Kind::quad;
  quad.quadWidth = 0.5f;
  f.layers = SharedLayers({quad});
  const CommittedLayer* committed = f.layers.begin();
  scheduler.commit(std::move(f), vsync(0));
  // Shown at this vsync and the next ones (nothing newer came): the same list each time.
  for (int v = 1; v <= 3; ++v) {
    auto s = scheduler.select(vsync(v), kPeriod);
    ASSERT_EQ(s.shown.size(), 1u);
    ASSERT_EQ(s.shown[0].layers.size(), 1u);
    EXPECT_EQ(s.shown[0].layers.begin(), committed);
    EXPECT_EQ(s.shown[0].layers.begin()->quadWidth, 0.5f);
  }
  // No layers: an empty list, nothing to share.
  EXPECT_TRUE(SharedLayers().empty());
  EXPECT_TRUE(SharedLayers(std::vector<CommittedLayer>{}).empty());
  EXPECT_EQ(SharedLayers().begin(), SharedLayers().end());
}

TEST(FrameScheduler, FramesShowAtTheirTimeNewestWinsAndAreCounted) {
  FrameScheduler scheduler;
  auto c = client(1);
  scheduler.addClient(c);
  EXPECT_TRUE(scheduler.commit(frame(1, 1, vsync(2)), vsync(0)).empty());
  // Not before its time.
  EXPECT_TRUE(scheduler.select(vsync(1), kPeriod).shown.empty());
  auto s = scheduler.select(vsync(2), kPeriod);
  EXPECT_EQ(shown(s), (std::vector<std::pair<uint32_t, uint64_t>>{{1, 1}}));
  EXPECT_EQ(c->framesDisplayed, 1u);
  EXPECT_EQ(c->framesLate, 0u);
  // A stalled client keeps its last frame on screen, counted stale.
  EXPECT_EQ(c->framesStale, 0u);
  EXPECT_EQ(shown(scheduler.select(vsync(3), kPeriod)).size(), 1u);
  EXPECT_EQ(c->framesStale, 1u);

  // Superseded before its time: dropped and released.
  scheduler.commit(frame(1, 2, vsync(5)), vsync(3));
  auto released = scheduler.commit(frame(1, 3, vsync(5)), vsync(4));
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].frameId, 2u);
  EXPECT_EQ(c->framesDropped, 1u);
  s = scheduler.select(vsync(5), kPeriod);
  EXPECT_EQ(shown(s), (std::vector<std::pair<uint32_t, uint64_t>>{{1, 3}}));
  ASSERT_EQ(s.released.size(), 1u);  // frame 1 left the display
  EXPECT_EQ(s.released[0].frameId, 1u);

  // Arrived after its vsync: shown at the next one, counted late.
  scheduler.commit(frame(1, 4, vsync(6)), vsync(6) + 1000);
  scheduler.select(vsync(7), kPeriod);
  EXPECT_EQ(c->framesLate, 1u);
  EXPECT_EQ(c->framesDisplayed, 3u);
  EXPECT_EQ(c->framesStale, 1u);
}

// A client paced to every second vsync is stale only where its frame was due.
TEST(FrameScheduler, StaleFramesFollowTheClientsCadence) {
  FrameScheduler scheduler;
  auto c = client(1);
  c->displayPeriods = 2;
  scheduler.addClient(c);
  scheduler.commit(frame(1, 1, vsync(2)), vsync(0));
  scheduler.select(vsync(2), kPeriod);
  scheduler.select(vsync(3), kPeriod);  // between its frames
  EXPECT_EQ(c->framesStale, 0u);
  scheduler.select(vsync(4), kPeriod);  // frame 2 was due
  EXPECT_EQ(c->framesStale, 1u);
  scheduler.commit(frame(1, 2, vsync(5)), vsync(4) + 1000);
  scheduler.select(vsync(5), kPeriod);
  EXPECT_EQ(c->framesStale, 1u);
  EXPECT_EQ(c->framesDisplayed, 2u);
}

TEST(FrameScheduler, DisplayWakeDelayIsKeptOnlyWhereTheLoopPacesItself) {
  FrameScheduler scheduler;
  scheduler.displayed(50'000);  // a runtime-paced loop: work only
  EXPECT_EQ(scheduler.displayStats().wakeDelayUsP99, 0.0);
  for (int i = 0; i < 98; ++i) scheduler.displayed(50'000, 20'000);    // 20 us after the vsync
  for (int i = 0; i < 2; ++i) scheduler.displayed(50'000, 6'000'000);  // twice 6 ms late
  const DisplayStats stats = scheduler.displayStats();
  EXPECT_DOUBLE_EQ(stats.wakeDelayUsP50, 20.0);
  EXPECT_DOUBLE_EQ(stats.wakeDelayUsP99, 6000.0);
  EXPECT_DOUBLE_EQ(stats.workUsP50, 50.0);
}

TEST(FrameScheduler, HiddenClientsShowNothingAndOverlaysStackByPlacement) {
  FrameScheduler scheduler;
  auto primary = client(1), hidden = client(2), top = client(3, true, 9), low = client(4, true, 2);
  for (auto& c : {primary, hidden, top, low}) scheduler.addClient(c);
  for (uint32_t id : {1, 2, 3, 4}) scheduler.commit(frame(id, 1, vsync(1)), vsync(0));
  auto s = scheduler.select(vsync(1), kPeriod);
  EXPECT_EQ(shown(s), (std::vector<std::pair<uint32_t, uint64_t>>{{1, 1}, {4, 1}, {3, 1}}));
  EXPECT_EQ(hidden->framesHidden, 1u);
  EXPECT_EQ(hidden->framesDisplayed, 0u);

  // Switching the primary: the old one's frame leaves the display at the next vsync.
  ASSERT_TRUE(scheduler.setPrimary(2));
  s = scheduler.select(vsync(2), kPeriod);
  EXPECT_EQ(shown(s), (std::vector<std::pair<uint32_t, uint64_t>>{{4, 1}, {3, 1}}));
  ASSERT_EQ(s.released.size(), 1u);
  EXPECT_EQ(s.released[0].clientId, 1u);

  // A client that leaves takes its frames with it.
  auto released = scheduler.removeClient(3);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(shown(scheduler.select(vsync(3), kPeriod)), (std::vector<std::pair<uint32_t, uint64_t>>{{4, 1}}));
  // Frames of a client the scheduler does not know come straight back.
  EXPECT_EQ(scheduler.commit(frame(77, 1, vsync(4)), vsync(3)).size(), 1u);
}

TEST(FrameScheduler, TheBottomFrameChoosesTheEnvironmentBlendMode) {
  FrameScheduler scheduler;
  auto primary = client(1), overlay = client(2, true, 1);
  for (auto& c : {primary, overlay}) scheduler.addClient(c);
  EXPECT_FALSE(scheduler.select(vsync(1), kPeriod).environmentBlendMode());  // nothing shown
  EXPECT_FALSE(scheduler.displayStats().environmentBlendMode);

  auto overlayFrame = frame(2, 1, vsync(2));
  overlayFrame.environmentBlendMode = EnvironmentBlendMode::alphaBlend;
  scheduler.commit(overlayFrame, vsync(1));
  auto s = scheduler.select(vsync(2), kPeriod);
  EXPECT_EQ(s.environmentBlendMode(), EnvironmentBlendMode::alphaBlend);  // the overlay alone is the bottom

  auto primaryFrame = frame(1, 1, vsync(3));
  primaryFrame.environmentBlendMode = EnvironmentBlendMode::additive;
  scheduler.commit(primaryFrame, vsync(2));
  s = scheduler.select(vsync(3), kPeriod);
  EXPECT_EQ(s.environmentBlendMode(), EnvironmentBlendMode::additive);  // the primary's, below the overlay
  EXPECT_EQ(scheduler.displayStats().environmentBlendMode, EnvironmentBlendMode::additive);
}

TEST(FrameScheduler, MissedDisplayFramesAreCounted) {
  FrameScheduler scheduler;
  scheduler.select(vsync(1), kPeriod);
  scheduler.select(vsync(2), kPeriod);
  scheduler.select(vsync(5), kPeriod);  // vsyncs 3 and 4 were never composed
  EXPECT_EQ(scheduler.displayStats().missedFrames, 2u);
}

// The display sleeps while it has nothing to show: those vsyncs are not missed frames.
TEST(FrameScheduler, VsyncsSleptThroughAreNotMissed) {
  FrameScheduler scheduler;
  scheduler.select(vsync(1), kPeriod);
  scheduler.displayIdle();
  scheduler.select(vsync(90), kPeriod);
  scheduler.select(vsync(91), kPeriod);
  EXPECT_EQ(scheduler.displayStats().missedFrames, 0u);
}

// A frame committed for a later vsync keeps the display awake although nothing shows yet.
TEST(FrameScheduler, AFrameForALaterVsyncCountsAsQueued) {
  FrameScheduler scheduler;
  scheduler.addClient(client(1));
  auto empty = scheduler.select(vsync(1), kPeriod);
  EXPECT_FALSE(empty.framesQueued);
  scheduler.commit(frame(1, 1, vsync(4)), vsync(1));
  auto early = scheduler.select(vsync(2), kPeriod);
  EXPECT_TRUE(early.shown.empty());
  EXPECT_TRUE(early.framesQueued);
  auto due = scheduler.select(vsync(4), kPeriod);
  EXPECT_EQ(shown(due).size(), 1u);
  EXPECT_FALSE(due.framesQueued);
}

// A client woken for its next frame before the display latched the frame before it waits for
// that latch (else its next frame, committed first, would supersede the one due now).
TEST(FrameScheduler, ALatchNotYetTakenIsWaitedForAndReleasedBySelect) {
  FrameScheduler scheduler;
  scheduler.addClient(client(1));
  scheduler.select(vsync(1), kPeriod);
  int released = 0;
  EXPECT_TRUE(scheduler.latchPending(vsync(2), kPeriod));
  ASSERT_TRUE(scheduler.whenLatched(vsync(2), kPeriod, [&] { released++; }));
  // What the wait protects: frame 1 for vsync 2, committed before the wake, is shown at vsync 2
  // while frame 2 (vsync 3) is only committed after it.
  scheduler.commit(frame(1, 1, vsync(2)), vsync(1));
  EXPECT_EQ(released, 0);
  auto due = scheduler.select(vsync(2), kPeriod);
  EXPECT_EQ(released, 1);
  EXPECT_EQ(shown(due), (std::vector<std::pair<uint32_t, uint64_t>>{{1, 1}}));
  // Latched now, within half a period of jitter in the display's vsync times: nothing to wait for.
  EXPECT_FALSE(scheduler.latchPending(vsync(2), kPeriod));
  EXPECT_FALSE(scheduler.whenLatched(vsync(2) + kPeriod / 3, kPeriod, [&] { released++; }));
  scheduler.select(vsync(3), kPeriod);
  EXPECT_EQ(released, 1);  // kept only while waiting
}

TEST(FrameScheduler, ALatchWaitEndsAtALaterVsyncOrWhenTheDisplayGoesIdle) {
  FrameScheduler scheduler;
  scheduler.select(vsync(1), kPeriod);
  int first = 0, second = 0;
  ASSERT_TRUE(scheduler.whenLatched(vsync(2), kPeriod, [&] { first++; }));
  ASSERT_TRUE(scheduler.whenLatched(vsync(3), kPeriod, [&] { second++; }));
  scheduler.select(vsync(3), kPeriod);  // vsync 2 was skipped: its latch has passed too
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);

  ASSERT_TRUE(scheduler.whenLatched(vsync(4), kPeriod, [&] { first++; }));
  scheduler.displayIdle();
  EXPECT_EQ(first, 2);
}

// Nothing to wait for where no latch is coming soon: an idle display (it sleeps until a frame
// comes), one that never ran, or one stalled more than two periods behind.
TEST(FrameScheduler, NoLatchWaitOnAnIdleOrStalledDisplay) {
  FrameScheduler scheduler;
  auto never = [] { ADD_FAILURE() << "kept a waiter with nothing to wait for"; };
  EXPECT_FALSE(scheduler.whenLatched(vsync(2), kPeriod, never));
  scheduler.select(vsync(1), kPeriod);
  EXPECT_FALSE(scheduler.whenLatched(vsync(5), kPeriod, never));
  EXPECT_TRUE(scheduler.latchPending(vsync(3), kPeriod));
  scheduler.displayIdle();
  EXPECT_FALSE(scheduler.whenLatched(vsync(2), kPeriod, never));
  scheduler.select(vsync(6), kPeriod);
}

}  // namespace
}  // namespace xrc
