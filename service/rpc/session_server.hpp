// Server objects of one client: its Session and its Swapchains. All state here lives on the KJ
// thread. A release or endFrame that can proceed without waiting is handled right there (copy
// submitted, frame committed); one that would wait goes to the frame worker and comes back
// through a cross-thread fulfiller, and so do the session's later ones until it has caught up.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "../compositor/copy_budget.hpp"
#include "../compositor/daemon_context.hpp"
#include "../compositor/frame_pacer.hpp"
#include "../compositor/release_settlements.hpp"
#include "../gpu/rendering_waiter.hpp"
#include "xrc.capnp.h"

namespace xrc {

class RenderedFrameCopies;

// What a frame's answer says of the session besides its timing; also all a watchState answer says.
struct SessionSnapshot {
  Visibility visibility;
  bool stopping = false;
  LocalSpace local;
  InputSnapshot input;  // the focused session's only
};

// What a waitFrame answers (also an endFrame standing for one, 1.5).
struct WaitAnswer {
  uint64_t frameId = 0;
  FramePacer::Plan plan;
  DisplayClock clock;
  Pose head;
  SessionSnapshot session;
  std::vector<EyeView> views;
  std::vector<ReleaseSettlements::Settlement> settledReleases;  // 1.13
  int64_t wakeNs = 0;                                           // 1.18: when the answer would have left
};

struct SwapchainState {
  std::shared_ptr<SwapchainCore> core;
  ImageCycle cycle;
  uint64_t releasesRequested = 0;
  uint64_t copyBytes = 0;           // what one release's copy moves
  uint64_t lastRenderingValue = 0;  // timeline mode: the newest release's
};

// Shared by the Session and its Swapchain capabilities; torn down when the last one goes.
class SessionState {
 public:
  SessionState(DaemonContext& ctx, kj::Timer& timer, std::shared_ptr<ClientRecord> client);
  ~SessionState();

  DaemonContext& ctx;
  kj::Timer& timer;
  std::shared_ptr<ClientRecord> client;
  std::map<uint32_t, std::unique_ptr<SwapchainState>> swapchains;
  uint32_t nextSwapchainId = 1;

  uint64_t nextFrameId = 1;
  std::optional<uint64_t> waitedFrame;
  std::optional<uint64_t> begunFrame;
  int64_t waitedTargetNs = 0;  // the vsync the pacer gave waitedFrame / begunFrame
  int64_t begunTargetNs = 0;
  bool waitPending = false;
  FramePacer pacer;
  // 1.5: the pacer as it was before an endFrame's implied waitFrame, and the frame that wait
  // handed out; a waitFrame that replaces it (the frame never begun) restores the pacer.
  std::optional<FramePacer> pacerBeforeImplicitWait;
  uint64_t implicitlyWaitedFrame = 0;
  // This session's releases and endFrames queued on the frame worker and not yet answered.
  // While there are any, later ones queue behind them there: the frame path stays in call order.
  uint32_t workerJobs = 0;
  // Timeline mode: releases whose rendering the daemon is still waiting for on the CPU (their
  // copies not yet submitted or queued), and a promise settled when the newest of them is past
  // that point. Later releases and endFrames follow it: the frame path stays in call order.
  uint32_t renderWaits = 0;
  // Frame commits chained behind renderTail that have not run yet.
  uint32_t commitsBehindRenders = 0;
  std::optional<kj::ForkedPromise<void>> renderTail;
  // Copy batching before the latch: the latch the copies of the frame to commit next were held
  // for (the latest, where they were held in more than one batch); 0: none held.
  int64_t heldForLatchNs = 0;
  CopyBudget copyBudget;  // max_copy_mib_per_period
  // The protocol minor the client connected with.
  uint16_t clientMinor = 0;
  // 1.13, timeline mode: an endFrame's releases are answered once accepted; their settlements
  // wait here for the next frame timing or settleReleases answer.
  bool answersReleasesEarly() const { return client->syncMode == SyncMode::timeline && clientMinor >= 13; }
  ReleaseSettlements settlements;
  // settleReleases calls waiting for a release answered early to settle: at most
  // kMaxSettleWaiters, each for one image.
  struct SettleWaiter {
    uint32_t swapchainId;
    uint32_t index;
    kj::Own<kj::PromiseFulfiller<void>> fulfiller;
  };
  static constexpr size_t kMaxSettleWaiters = 64;
  std::vector<SettleWaiter> settleWaiters;
  // 1.18: a watchState call is waiting for a change (one at a time).
  bool watchingState = false;
  void releaseSettled(uint32_t swapchainId, uint32_t index, Status status);

  // Host mode: when the completion of copies released by an endFrame is looked at: as the
  // session's next waitFrame (or implied one) is answered, at the latest kHostCopyCheckPeriods
  // display periods after the first of them was released.
  kj::Promise<void> hostCopyCheck();
  // 1.18: an implied wait may be answered at once: nothing in the answer needs its wake. The
  // display latches on demand (the vsyncs that passed are latched before the client's next frame
  // is taken, not at the wake) and knows the head's pose ahead of time (a simulated headset).
  bool answersWaitsAtOnce() const;
  // Visibility, stopping and LOCAL as of now; the input predicted for `inputAtNs` if focused.
  SessionSnapshot snapshot(int64_t inputAtNs) const;
  // A waitFrame of this session is being answered.
  void answeringWait();

  // Timeline mode: the copies of an endFrame's releases (RenderedFrameCopies), kept track of
  // while they may hold a copy, so that a swapchain destroyed meanwhile has its copy submitted
  // before it is retired (the retirement then waits for it).
  std::shared_ptr<RenderedFrameCopies> newFrameCopies();
  void submitFrameCopiesHolding(const gpu::SharedSwapchain* swapchain);
  static constexpr int64_t kHostCopyCheckPeriods = 2;

 private:
  std::optional<kj::ForkedPromise<void>> hostCopyCheck_;
  kj::Own<kj::PromiseFulfiller<void>> hostCopyCheckFulfiller_;
  std::vector<std::weak_ptr<RenderedFrameCopies>> frameCopies_;
};

class SessionServer final : public wire::Session::Server, private kj::TaskSet::ErrorHandler {
 public:
  explicit SessionServer(std::shared_ptr<SessionState> state) : state_(std::move(state)), settling_(*this) {}

  kj::Promise<void> createSwapchain(CreateSwapchainContext context) override;
  kj::Promise<void> waitFrame(WaitFrameContext context) override;
  kj::Promise<void> beginFrame(BeginFrameContext context) override;
  kj::Promise<void> endFrame(EndFrameContext context) override;
  kj::Promise<void> locateHead(LocateHeadContext context) override;
  kj::Promise<void> applyHaptic(ApplyHapticContext context) override;
  kj::Promise<void> stopHaptic(StopHapticContext context) override;
  kj::Promise<void> settleReleases(SettleReleasesContext context) override;
  kj::Promise<void> watchState(WatchStateContext context) override;

 private:
  // beginFrame's check and state change (also applied by an endFrame with `alsoBegin`).
  Status begin(uint64_t frameId);
  // endFrame's frame part: checks, then commits here or behind the session's worker jobs (and,
  // timeline mode, its releases still waiting for the rendering; with `commitLater` the answer
  // does not wait for those). The answer is known at once (a refusal, or a frame that commits
  // later) or once the frame is committed.
  using EndAnswer = std::variant<Status, kj::Promise<Status>>;
  EndAnswer end(wire::Session::EndFrameParams::Reader params, bool commitLater);
  // end(), with a message too malformed to read answered as an error.
  EndAnswer endOrRefuse(wire::Session::EndFrameParams::Reader params, bool commitLater);
  // A waitFrame (or, `implicit`, the one an endFrame stands for), answered when the pacing says.
  kj::Promise<Result<WaitAnswer>> startWait(bool implicit, bool atOnce = false);

  void taskFailed(kj::Exception&& exception) override;

  std::shared_ptr<SessionState> state_;
  // 1.13: the copies and commits of endFrames answered before they settled. Dropped with the
  // session's capability, as an unanswered call's would be: the client acquires an image again
  // only once its release settled, so none of its GPU work waits for what these would submit.
  kj::TaskSet settling_;
};

class SwapchainServer final : public wire::Swapchain::Server {
 public:
  SwapchainServer(std::shared_ptr<SessionState> session, uint32_t id) : session_(std::move(session)), id_(id) {}

  kj::Promise<void> acquire(AcquireContext context) override;
  kj::Promise<void> wait(WaitContext context) override;
  kj::Promise<void> release(ReleaseContext context) override;
  kj::Promise<void> destroy(DestroyContext context) override;

 private:
  // Null (with an error written) when this swapchain was destroyed.
  SwapchainState* state(wire::Error::Builder error);

  std::shared_ptr<SessionState> session_;
  uint32_t id_;
};

}  // namespace xrc
