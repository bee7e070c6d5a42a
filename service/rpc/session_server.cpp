#include "session_server.hpp"

#include "../input/simulated_controllers.hpp"

#include <array>
#include <cmath>
#include <span>

#include "../common/cross_thread_answer.hpp"
#include "../input/simulated_controllers.hpp"
#include "../log.hpp"
#include "copy_batch.hpp"
#include "end_frame_copies.hpp"
#include "frame_wakes.hpp"
#include "state_changes.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc {

namespace {

// A layer as validated on the KJ thread, resolved to runtime images on the frame worker.
struct PendingView {
  std::shared_ptr<SwapchainCore> core;
  SubImageRef ref;
  Pose pose;  // projection views: where the client rendered the view from
  std::array<float, 4> fov{};
};
struct PendingDepth {
  float minDepth, maxDepth, nearZ, farZ;
};
struct PendingLayer {
  CommittedLayer::Kind kind;
  uint64_t flags;
  std::vector<PendingView> views;
  std::vector<PendingView> depthViews;  // projection: one per view, or none
  std::vector<PendingDepth> depthRanges;
  float quadWidth = 0, quadHeight = 0;
  std::vector<float> orientation, position;
  LayerShape shape;
  std::optional<LayerColor> color;
};

// The head at `timeNs` as the backend's runtime locates it, off the KJ thread (which never waits
// for a runtime).
kj::Promise<Pose> headLocatedByRuntime(Backend& backend, int64_t timeNs) {
  auto located = crossThreadAnswer<Pose>();
  backend.locateHead(timeNs, located.fulfil);
  return kj::mv(located.promise);
}

// The head at `timeNs`: at once when the backend knows it, else once its runtime located it.
kj::Promise<Pose> headAt(Backend& backend, int64_t timeNs) {
  if (auto known = backend.knownHeadPose(timeNs)) return *known;
  return headLocatedByRuntime(backend, timeNs);
}

// A float list of a frame's message, copied out to be validated. The protocol's are at most 4
// long (poses, fovs, color scale and bias): those stay inline, a frame's views cost no heap
// allocation each; a longer one (invalid, but its size goes into the error) goes to the heap.
class WireFloats {
 public:
  explicit WireFloats(capnp::List<float>::Reader list) : size_(list.size()) {
    if (size_ > kInline) longer_.resize(size_);
    std::copy(list.begin(), list.end(), size_ <= kInline ? inline_.data() : longer_.data());
  }
  std::span<const float> span() const { return size_ <= kInline ? std::span(inline_.data(), size_) : longer_; }
  // Passed to the validators as the list it holds.
  operator std::span<const float>() const { return span(); }
  size_t size() const { return size_; }
  float operator[](size_t i) const { return span()[i]; }
  const float* begin() const { return span().data(); }
  const float* end() const { return span().data() + size_; }
  std::vector<float> vector() const { return {begin(), end()}; }

 private:
  static constexpr size_t kInline = 4;
  size_t size_;
  std::array<float, kInline> inline_{};
  std::vector<float> longer_;
};

WireFloats floats(capnp::List<float>::Reader list) { return WireFloats(list); }

SubImageRef readSubImage(wire::SubImage::Reader in) {
  auto rect = in.getImageRect();
  return SubImageRef{in.getSwapchainId(), rect.getX(),      rect.getY(),
                     rect.getWidth(),     rect.getHeight(), in.getArrayIndex()};
}

// Resolves a validated frame's layers to the runtime images holding each swapchain's newest
// content and hands the frame to the backend (on the session's frame path thread).
void commitLayers(DaemonContext& ctx, CommittedFrame frame, const std::vector<PendingLayer>& pending) {
  std::vector<CommittedLayer> layers;
  layers.reserve(pending.size());
  for (const auto& p : pending) {
    CommittedLayer layer;
    layer.kind = p.kind;
    layer.flags = p.flags;
    layer.quadWidth = p.quadWidth;
    layer.quadHeight = p.quadHeight;
    layer.quadOrientation = p.orientation;
    layer.quadPosition = p.position;
    layer.shape = p.shape;
    layer.color = p.color;
    auto resolve = [](const PendingView& v, uint32_t eye) -> std::optional<LayerView> {
      const SwapchainCore::Latest latest = v.core->latest();
      if (!latest.hasContent) return std::nullopt;  // its only release failed; nothing to show
      return LayerView{v.core->runtime,
                       v.core->id,
                       latest.runtimeIndex,
                       latest.ordinal,
                       latest.copyValue,
                       v.ref.x,
                       v.ref.y,
                       v.ref.width,
                       v.ref.height,
                       v.ref.arrayIndex,
                       eye,
                       v.pose,
                       v.fov};
    };
    for (uint32_t eye = 0; eye < p.views.size(); ++eye) {
      if (auto view = resolve(p.views[eye], eye)) layer.views.push_back(*view);
    }
    for (uint32_t eye = 0; eye < p.depthViews.size(); ++eye) {
      auto view = resolve(p.depthViews[eye], eye);
      if (!view) {
        layer.depth.clear();  // depth for some views only is no depth
        break;
      }
      const PendingDepth& r = p.depthRanges[eye];
      layer.depth.push_back(LayerDepth{*view, r.minDepth, r.maxDepth, r.nearZ, r.farZ});
    }
    layers.push_back(std::move(layer));
  }
  frame.layers = SharedLayers(std::move(layers));
  ctx.backend.commitFrame(std::move(frame));
}

// Copies shared image `index` into the leased runtime image and publishes it as the swapchain's
// newest content (the display waits for the copy on the GPU, through the copy timeline). A failed
// copy gives the lease back and, in binary mode, still passes the client's semaphores through so
// that its next acquire does not wait forever.
Result<gpu::CopyResult> settleCopy(DaemonContext& ctx, SwapchainCore& core, ClientRecord& client, uint32_t index,
                                   const RuntimeImageLease& lease, Result<gpu::CopyResult> copy) {
  if (!copy) {
    ctx.backend.abandonImage(*core.runtime, lease.index);
    if (auto s = core.shared->passThrough(index, ctx.gpuTimeout); !s) log::error("{}", s.error().describe());
    return copy.error();
  }
  if (copy.value().gpuCopyUs) client.gpuCopyUs.add(*copy.value().gpuCopyUs);
  if (copy.value().onHost()) {
    client.hostCopyUs.add(*copy.value().hostCopyUs);
    client.hostCopies++;
  }
  ctx.backend.releaseImage(*core.runtime, lease.index, copy.value().copyValue);
  core.copied(lease.index, copy.value().copyValue);
  return copy;
}

Result<gpu::CopyResult> copyRelease(DaemonContext& ctx, SwapchainCore& core, ClientRecord& client, uint32_t index,
                                    const RuntimeImageLease& lease, bool waitInHostMode) {
  bool queued = false;
  auto copy = core.shared->copyToRuntime(index, lease, ctx.gpuTimeout, waitInHostMode, &queued);
  if (queued) client.copySubmissions++;  // also when the wait after it failed, as the daemon's count
  return settleCopy(ctx, core, client, index, lease, std::move(copy));
}

// Runs `job` on the frame worker as the session's next queued frame-path job (counted in
// `workerJobs`, which keeps the session's later releases and endFrames behind it). The count is
// settled when the answer has been taken, also when the worker dropped the job while shutting
// down (then the job never ran, and the answer is an error) and when the caller's promise was
// dropped unanswered (a call that failed part-way).
kj::Promise<Status> runOnWorker(const std::shared_ptr<SessionState>& session, kj::Function<Status()> job) {
  session->workerJobs++;
  auto paf = kj::newPromiseAndCrossThreadFulfiller<Status>();
  session->ctx.worker.post(
      [job = kj::mv(job), fulfiller = kj::mv(paf.fulfiller)]() mutable { fulfiller->fulfill(job()); });
  // Settled when the answer has been taken, or when whoever waited for it dropped it.
  return paf.promise
      .then([](Status status) { return status; },
            [](kj::Exception&& e) {
              return Status(
                  makeError(ErrorCode::internal, "the frame worker dropped the job: {}", e.getDescription().cStr()));
            })
      .attach(kj::defer([session] { session->workerJobs--; }));
}

// First-segment sizes for the frame path's answers: without a hint every answer allocates (and
// zeroes) Cap'n Proto's default 8 KiB segment. Larger answers (error texts) just add a segment.
constexpr capnp::MessageSize kErrorOnlyResults{16, 0};
constexpr capnp::MessageSize kWaitFrameResults{96, 0};

template <typename Context>
kj::Promise<void> answer(Context& context, const Status& status) {
  toWire(status, context.getResults(kErrorOnlyResults).initError());
  return kj::READY_NOW;
}

// A request over one of the daemon's limits: answered `exhausted`, counted, and warned about
// (rate-limited) with the client named.
template <typename Context>
kj::Promise<void> refuse(Context& context, SessionState& s, std::string_view limit, const Error& error) {
  s.ctx.refusals.record(limit, fmt::format("client {} '{}': {}", s.client->id, s.client->name, error.message));
  return answer(context, Status(error));
}

template <typename Context>
kj::Promise<void> refuseImages(Context& context, SessionState& s, const SwapchainRequest& request, const char* limit,
                               const Error& error) {
  return refuse(context, s, limit,
                makeError(ErrorCode::exhausted, "createSwapchain {}x{} ({} layers, {} mips): {}", request.width,
                          request.height, request.arraySize, request.mipCount, error.message));
}

template <typename Context>
kj::Promise<void> answerLater(kj::Promise<Status> status, Context context) {
  return status.then([context](Status s) mutable { answer(context, s); });
}

// An endFrame whose message could not be read in full (a capnp reader's exception).
Status malformedFrame(const kj::Exception& e) {
  return makeError(ErrorCode::invalidArgument, "endFrame: malformed frame: {}", e.getDescription().cStr());
}

// An answer known now or later, as a promise.
kj::Promise<Status> answerPromise(std::variant<Status, kj::Promise<Status>>&& outcome) {
  if (auto* now = std::get_if<Status>(&outcome)) return std::move(*now);
  return std::move(std::get<kj::Promise<Status>>(outcome));
}

// What settles a release once its copy is submitted (or complete, in host mode), or has failed.
// The release's time is measured up to `settledNs` where given (a host-mode copy submitted on the
// KJ thread, whose completion is looked at later: up to its submission), else up to settling.
auto finishRelease(const std::shared_ptr<SessionState>& session, uint32_t id, uint32_t index, int64_t receivedNs,
                   std::optional<int64_t> settledNs = std::nullopt) {
  return [session, id, index, receivedNs, settledNs](Status status) {
    session->client->releaseUs.add(double(settledNs.value_or(monotonicNowNs()) - receivedNs) / 1e3);
    auto found = session->swapchains.find(id);
    if (found != session->swapchains.end()) (void)found->second->cycle.copyDone(index);
    return status;
  };
}

// A swapchain held by a pending frame-path step: if that step never runs (its session went
// away), the swapchain is let go on the frame worker, where its teardown belongs, not on the KJ
// thread.
class HeldOnWorker {
 public:
  HeldOnWorker(FrameWorker& worker, std::shared_ptr<SwapchainCore> core) : worker_(&worker), core_(std::move(core)) {}
  HeldOnWorker(HeldOnWorker&&) = default;
  HeldOnWorker& operator=(HeldOnWorker&&) = default;
  ~HeldOnWorker() {
    if (core_) worker_->post([core = std::move(core_)]() mutable { core.reset(); });
  }
  std::shared_ptr<SwapchainCore> take() { return std::move(core_); }
  const std::shared_ptr<SwapchainCore>& core() const { return core_; }

 private:
  FrameWorker* worker_;
  std::shared_ptr<SwapchainCore> core_;
};

// Host mode: a copy submitted on the KJ thread, already published (the display waits for it on
// the GPU through the copy timeline, as in the other modes), is complete when its fence is; only
// then may the client reuse the image. The fence is looked at, without waiting, once `checkAt`
// resolves: for a release carried by an endFrame, when the session's next waitFrame is answered
// (SessionState::hostCopyCheck), by which time a copy has normally long finished. A complete copy
// then costs no frame worker job and no cross-thread wake-up; one still running (or checked at
// once) is waited for on the frame worker, bounded, in the session's order.
kj::Promise<Status> settleHostCopy(const std::shared_ptr<SessionState>& session, std::shared_ptr<SwapchainCore> core,
                                   uint32_t id, uint32_t index, kj::Promise<void> checkAt) {
  return checkAt
      .catch_([](kj::Exception&&) {})  // an abandoned answer: checked now
      .then([session, held = HeldOnWorker(session->ctx.worker, std::move(core)), id,
             index]() mutable -> kj::Promise<Status> {
        DaemonContext& ctx = session->ctx;
        // Destroyed meanwhile: its retirement waits for the copy (`held` lets it go on the worker).
        if (session->swapchains.find(id) == session->swapchains.end()) return Status{};
        std::shared_ptr<SwapchainCore> core = held.take();  // not its last reference: the session holds it
        const bool complete = session->workerJobs == 0 && core->shared->readyForCopy(index);
        auto finish = [core = std::move(core), client = session->client, index](std::chrono::milliseconds timeout) {
          auto done = core->shared->finishCopy(index, timeout);
          if (!done) return Status(done.error());
          if (done.value()) client->gpuCopyUs.add(*done.value());
          return Status{};
        };
        if (complete) return finish(std::chrono::milliseconds(0));
        return runOnWorker(session, [&ctx, finish = std::move(finish)] { return finish(ctx.gpuTimeout); });
      });
}

// A release's copy. Submitted here when nothing of the session is queued on the frame worker,
// the backend has a free runtime image and the image's previous copy is done; otherwise the
// frame worker leases (possibly waiting) and copies, in the session's order. Resolves when the
// release may be answered; with `settleAtNextWait` a host-mode copy's completion is looked at
// when the session's next waitFrame is answered (settleHostCopy), else at once.
kj::Promise<Status> copyReleased(const std::shared_ptr<SessionState>& session, std::shared_ptr<SwapchainCore> core,
                                 uint32_t id, uint32_t index, uint64_t copyBytes, int64_t receivedNs,
                                 bool settleAtNextWait, EndFrameCopies* batch = nullptr) {
  DaemonContext& ctx = session->ctx;
  auto finish = finishRelease(session, id, index, receivedNs);
  const bool host = session->client->syncMode == SyncMode::host;
  std::optional<RuntimeImageLease> lease;
  const bool charged = session->copyBudget.tryCharge(copyBytes, receivedNs, ctx.backend.clock().periodNs);
  if (charged && session->workerJobs == 0) lease = ctx.backend.tryAcquireImage(*core->runtime);
  if (lease && !core->shared->readyForCopy(index)) {
    ctx.backend.abandonImage(*core->runtime, lease->index);
    lease.reset();
  }
  if (lease && batch != nullptr) {
    // Joins the frame's other copies, submitted together once its releases are all accepted.
    auto prepared = core->shared->prepareCopy(index, *lease, ctx.gpuTimeout);
    if (!prepared) {
      return finish(Status(settleCopy(ctx, *core, *session->client, index, *lease, prepared.error()).error()));
    }
    auto submitted = batch->add(
        std::move(prepared).value(),
        [&ctx, core, client = session->client, index, lease = *lease, host,
         finish](Result<gpu::CopyResult> copy) mutable -> Status {
          auto settled = settleCopy(ctx, *core, *client, index, lease, std::move(copy));
          const Status status = settled ? Status{} : Status(settled.error());
          // Binary mode: the image is free again once its copy is submitted, in the frame's order.
          if (!settled || !host) return finish(status);
          return status;
        },
        session->client->copySubmissions);
    if (!host) return submitted;
    return submitted.then([session, core, id, index, receivedNs, settleAtNextWait](Status s) -> kj::Promise<Status> {
      if (!s) return s;  // settled already
      return settleHostCopy(session, core, id, index, settleAtNextWait ? session->hostCopyCheck() : kj::READY_NOW)
          .then(finishRelease(session, id, index, receivedNs, monotonicNowNs()));
    });
  }
  // Anything else of this session's copies comes after the frame's copies held so far.
  if (batch != nullptr) batch->submit();
  if (!charged) {
    // Over max_copy_mib_per_period: acknowledged without its copy (its semaphores passed
    // through in binary and timeline mode), in the session's order like any release.
    session->client->releasesSkipped++;
    ctx.refusals.record("max_copy_mib_per_period",
                        fmt::format("client {} '{}': releases skipped, their copies passed {} MiB in a display period",
                                    session->client->id, session->client->name, ctx.limits.maxCopyMibPerPeriod));
    auto skip = [&ctx, core, index]() -> Status { return core->shared->passThrough(index, ctx.gpuTimeout); };
    if (session->workerJobs == 0 && core->shared->readyForCopy(index)) return finish(skip());
    return runOnWorker(session, kj::mv(skip)).then(kj::mv(finish));
  }
  if (lease) {
    auto copied = copyRelease(ctx, *core, *session->client, index, *lease, /*waitInHostMode=*/false);
    if (!copied || !host) {
      return finish(copied ? Status{} : Status(copied.error()));
    }
    return settleHostCopy(session, core, id, index, settleAtNextWait ? session->hostCopyCheck() : kj::READY_NOW)
        .then(finishRelease(session, id, index, receivedNs, monotonicNowNs()));
  }
  return runOnWorker(session,
                     [&ctx, core, client = session->client, index]() -> Status {
                       auto leased = ctx.backend.acquireImage(*core->runtime, ctx.gpuTimeout);
                       if (!leased) {
                         if (auto s = core->shared->passThrough(index, ctx.gpuTimeout); !s) {
                           log::error("{}", s.error().describe());
                         }
                         return leased.error();
                       }
                       auto copied = copyRelease(ctx, *core, *client, index, leased.value(), /*waitInHostMode=*/true);
                       return copied ? Status{} : Status(copied.error());
                     })
      .then(kj::mv(finish));
}

// Timeline mode, a release whose rendering never finished within hung_client_timeout_ms: not
// copied (the swapchain keeps its last complete content); copying_done still reaches the
// release's value, after the copies before it, so that nothing of the client waits forever.
kj::Promise<Status> renderingTimedOut(const std::shared_ptr<SessionState>& session, std::shared_ptr<SwapchainCore> core,
                                      uint32_t id, uint32_t index, int64_t receivedNs) {
  DaemonContext& ctx = session->ctx;
  const Error error = makeError(ErrorCode::timeout,
                                "release: the client's rendering of image {} did not finish within {} ms "
                                "(hung_client_timeout_ms); the image was not copied",
                                index, ctx.limits.hungClientTimeoutMs);
  session->client->releasesRenderTimedOut++;
  ctx.refusals.record(
      "hung_client_timeout_ms",
      fmt::format("client {} '{}': release of image {} not copied, its rendering unfinished after {} ms",
                  session->client->id, session->client->name, index, ctx.limits.hungClientTimeoutMs));
  auto finish = finishRelease(session, id, index, receivedNs);
  auto skip = [&ctx, core, index, error]() -> Status {
    if (auto s = core->shared->passThrough(index, ctx.gpuTimeout); !s) log::error("{}", s.error().describe());
    return error;
  };
  if (session->workerJobs == 0 && core->shared->readyForCopy(index)) return finish(skip());
  return runOnWorker(session, kj::mv(skip)).then(kj::mv(finish));
}

// Reached once the client's rendering_done timeline `semaphore` (owned by `owner`) reaches `value`,
// not at `deadlineNs`: waited for on the RenderingWaiter's thread.
kj::Promise<gpu::RenderingWaiter::Answer> renderingDone(
    DaemonContext& ctx, VkSemaphore semaphore, std::shared_ptr<const void> owner, uint64_t value, int64_t deadlineNs,
    gpu::RenderingWaiter::WhenReached whenReached = gpu::RenderingWaiter::WhenReached::answer) {
  auto rendered = crossThreadAnswer<gpu::RenderingWaiter::Answer>();  // on the waiter thread, or at a let-go
  ctx.renderingWaiter.wait(semaphore, value, deadlineNs, std::move(owner), kj::mv(rendered.fulfil), whenReached);
  return kj::mv(rendered.promise);
}

// Where a release's wait for its rendering (and copy batching) ended: whether the rendering was
// done, and the latch its copy was held for (0: not held, or held for a window).
struct RenderedRelease {
  bool reached = false;
  int64_t heldForLatchNs = 0;
};

// Rendered: submitted with the copies that became ready with it (copy batching), so it joins its
// batch before waiting its turn behind the session's earlier copies. A rendering done while its
// copy would be held anyway is answered at that batch's let-go, not when found (RenderingWaiter).
kj::Promise<RenderedRelease> renderedAndLetGo(const std::shared_ptr<SessionState>& session, VkSemaphore semaphore,
                                              std::shared_ptr<const void> owner, uint64_t value, int64_t deadlineNs) {
  return renderingDone(session->ctx, semaphore, std::move(owner), value, deadlineNs,
                       gpu::RenderingWaiter::WhenReached::holdForLetGo)
      .then([session](gpu::RenderingWaiter::Answer rendered) -> kj::Promise<RenderedRelease> {
        if (!rendered.reached) return RenderedRelease{};
        CopyBatch& batch = session->ctx.copyBatch;
        if (rendered.atLetGo) {
          // Answered at the let-go it was held for: it goes now, with (right after) that batch.
          batch.countHeldCopy();
          return RenderedRelease{true, rendered.latchNs};
        }
        return batch.join().then([](int64_t latchNs) { return RenderedRelease{true, latchNs}; });
      });
}

// Timeline mode: the copy of a release waits, on the CPU (RenderingWaiter), until the client's
// rendering_done timeline reaches the release's value; the daemon's queues never wait on it.
// Releases stay in the session's order: each follows the one before it (SessionState::renderTail).
// `frameCopies`: the copies of the endFrame that carried this release, which this one joins.
kj::Promise<Status> copyWhenRendered(const std::shared_ptr<SessionState>& session, std::shared_ptr<SwapchainCore> core,
                                     uint32_t id, uint32_t index, uint64_t value, uint64_t copyBytes,
                                     int64_t receivedNs, bool answeredEarly,
                                     std::shared_ptr<RenderedFrameCopies> frameCopies) {
  DaemonContext& ctx = session->ctx;
  const int64_t deadlineNs = receivedNs + ctx.limits.hungClientTimeoutMs * 1'000'000;
  const VkSemaphore semaphore = core->shared->renderingTimeline();
  std::shared_ptr<const void> owner = core->shared->renderingTimelineOwner();
  // Only a release already answered (`answeredEarly`) is held: a release call's answer, and a
  // 1.12 client's next frame, wait for the copy.
  kj::Promise<RenderedRelease> letGo = nullptr;
  if (!answeredEarly) {
    letGo = renderingDone(ctx, semaphore, std::move(owner), value, deadlineNs)
                .then([](gpu::RenderingWaiter::Answer rendered) { return RenderedRelease{rendered.reached}; });
  } else if (auto heldUntil = ctx.copyBatch.heldCopiesLetGo(deadlineNs)) {
    // Its copy would be held until then even if rendered now: its rendering is looked at once,
    // then, instead of waited for (no waiter thread, no hand-back to this one); unfinished, it is
    // waited for as any other. Not past the release's hung-client deadline, which stays where it was.
    letGo = heldUntil->then([session, semaphore, owner = std::move(owner), value, deadlineNs](int64_t latchNs) mutable {
      if (session->ctx.renderingWaiter.reached(semaphore, value)) {
        session->ctx.copyBatch.countHeldCopy();
        return kj::Promise<RenderedRelease>(RenderedRelease{true, latchNs});
      }
      return renderedAndLetGo(session, semaphore, std::move(owner), value, deadlineNs);
    });
  } else {
    letGo = renderedAndLetGo(session, semaphore, std::move(owner), value, deadlineNs);
  }
  // With no earlier release of the session still waiting and no frame committing behind one (the
  // usual case), everything renderTail orders has run: no need to wait for it.
  if (session->renderWaits > 0 || session->commitsBehindRenders > 0) {
    letGo = letGo.eagerlyEvaluate(nullptr);
    letGo = session->renderTail->addBranch().then([letGo = kj::mv(letGo)]() mutable { return kj::mv(letGo); });
  }
  auto past = kj::newPromiseAndFulfiller<void>();
  // Settled also when this release is dropped unanswered (its session going away).
  session->renderTail = past.promise.catch_([](kj::Exception&&) {}).fork();
  session->renderWaits++;
  if (frameCopies) frameCopies->expect();
  return letGo
      .then([session, held = HeldOnWorker(ctx.worker, std::move(core)), id, index, copyBytes, receivedNs,
             past = kj::mv(past.fulfiller),
             frameCopies = std::move(frameCopies)](RenderedRelease rendered) mutable -> kj::Promise<Status> {
        // During a let-go a frame's copies join the other frames' (LetGoCopies): a frame of one
        // release directly, a frame of several once its last is handled. Whether it gathers does
        // not change within this continuation.
        LetGoCopies& letGo = session->ctx.letGoCopies;
        const bool gathered = letGo.gathering();
        // A gathered copy is submitted only at the let-go's end: this release is counted until
        // then, so that a frame committed meanwhile waits for it (end()).
        if (!gathered) session->renderWaits--;
        const bool reached = rendered.reached;
        // In the session's order: the frame committed next is the one this release belongs to.
        session->heldForLatchNs = std::max(session->heldForLatchNs, rendered.heldForLatchNs);
        EndFrameCopies* batch = frameCopies ? &frameCopies->copies() : (gathered ? &letGo.copies() : nullptr);
        auto answer = kj::evalNow([&]() -> kj::Promise<Status> {
          if (session->swapchains.find(id) == session->swapchains.end()) {
            // Destroyed while its rendering was awaited: nothing left to copy into.
            return Status(makeError(ErrorCode::notFound,
                                    "release: swapchain {} was destroyed before its rendering finished", id));
          }
          // A second release of a swapchain in one frame: its first copy goes first.
          if (batch != nullptr && batch->holds(held.core()->shared.get())) batch->submit();
          return reached ? copyReleased(session, held.take(), id, index, copyBytes, receivedNs, false, batch)
                         : renderingTimedOut(session, held.take(), id, index, receivedNs);
        });
        // Whatever became of this release: the frame's last one submits its copies before the
        // frame, which follows `past`, can be committed.
        if (frameCopies) frameCopies->handled();
        if (gathered) {
          // Its copies go with the let-go's, once the loop has run the rest of that let-go.
          return letGo.submitted().then([session, past = kj::mv(past), answer = kj::mv(answer)]() mutable {
            session->renderWaits--;
            past->fulfill();
            return kj::mv(answer);
          });
        }
        past->fulfill();  // the copy is submitted or queued: what follows may go
        return answer;
      })
      .eagerlyEvaluate(nullptr);
}

// A release accepted: its checks passed and the image's cycle moved on; its copy not yet started.
struct AcceptedRelease {
  std::shared_ptr<SwapchainCore> core;
  uint64_t copyBytes = 0;
  int64_t receivedNs = 0;
};

// The checks and state change of one release of image `index` of swapchain `id` (with its acquire
// and wait when `alsoAcquireAndWait`), from a release call or an endFrame that carries it;
// `renderingValue` is timeline mode's.
Result<AcceptedRelease> acceptRelease(SessionState& session, uint32_t id, uint32_t index, bool alsoAcquireAndWait,
                                      uint64_t renderingValue) {
  auto it = session.swapchains.find(id);
  if (it == session.swapchains.end()) {
    return makeError(ErrorCode::notFound, "release: swapchain {} does not exist (or was destroyed)", id);
  }
  SwapchainState& sc = *it->second;
  if (session.client->syncMode == SyncMode::timeline) {
    if (auto v = checkRenderingValue(sc.lastRenderingValue, renderingValue); !v) return v.error();
  } else if (renderingValue != 0) {
    return makeError(ErrorCode::invalidArgument,
                     "release: a rendering value belongs to the timeline sync mode (this session's is {})",
                     syncModeName(session.client->syncMode));
  }
  const Status applied = alsoAcquireAndWait ? sc.cycle.acquireWaitRelease(index) : sc.cycle.release(index);
  if (!applied) return applied.error();
  sc.releasesRequested++;
  session.client->releases++;
  if (session.client->syncMode == SyncMode::timeline) {
    sc.lastRenderingValue = renderingValue;
    sc.core->shared->setReleaseValue(index, renderingValue);
  }
  return AcceptedRelease{sc.core, sc.copyBytes, monotonicNowNs()};
}

// The copy of an accepted release. Resolves when the release may be answered (see copyReleased
// and copyWhenRendered). An endFrame's releases share `batch` (host and binary mode) or
// `frameCopies` (timeline mode), where it has more than one.
kj::Promise<Status> copyAccepted(const std::shared_ptr<SessionState>& session, uint32_t id, uint32_t index,
                                 uint64_t renderingValue, AcceptedRelease accepted, bool settleAtNextWait,
                                 EndFrameCopies* batch = nullptr,
                                 std::shared_ptr<RenderedFrameCopies> frameCopies = nullptr) {
  if (session->client->syncMode != SyncMode::timeline) {
    return copyReleased(session, std::move(accepted.core), id, index, accepted.copyBytes, accepted.receivedNs,
                        settleAtNextWait, batch);
  }
  // An endFrame's releases (`settleAtNextWait`) are answered once accepted for a 1.13 client.
  return copyWhenRendered(session, std::move(accepted.core), id, index, renderingValue, accepted.copyBytes,
                          accepted.receivedNs, settleAtNextWait && session->answersReleasesEarly(),
                          std::move(frameCopies));
}

kj::Promise<Status> startRelease(const std::shared_ptr<SessionState>& session, uint32_t id, uint32_t index,
                                 bool alsoAcquireAndWait, uint64_t renderingValue) {
  auto accepted = acceptRelease(*session, id, index, alsoAcquireAndWait, renderingValue);
  if (!accepted) return Status(accepted.error());
  return copyAccepted(session, id, index, renderingValue, std::move(accepted).value(), /*settleAtNextWait=*/false);
}

void toWire(const std::vector<ReleaseSettlements::Settlement>& in, capnp::List<wire::ReleaseSettlement>::Builder out) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    out[i].setSwapchainId(in[i].swapchainId);
    out[i].setIndex(in[i].index);
    toWire(in[i].status, out[i].initError());
  }
}

// FrameTiming and FrameState (watchState) carry the session's state in fields of the same names.
template <typename Builder>
void toWire(const SessionSnapshot& in, Builder out) {
  out.setVisible(in.visibility.visible);
  out.setFocused(in.visibility.focused);
  out.setStopping(in.stopping);
  toWire(in.local.localInStage, out.initLocalInStage());
  out.setLocalSpaceChanges(in.local.changes);
  toWire(in.input, out.initInput());
}

void toWire(const WaitAnswer& in, wire::FrameTiming::Builder timing) {
  timing.setFrameId(in.frameId);
  timing.setPredictedDisplayTime(in.plan.predictedNs);
  timing.setPredictedDisplayPeriod(in.clock.periodNs * in.plan.periods);
  timing.setShouldRender(in.session.visibility.visible);
  toWire(in.head, timing.initHeadInStage());
  toWire(in.session, timing);
  auto views = timing.initViews(uint32_t(in.views.size()));
  for (uint32_t i = 0; i < views.size(); ++i) {
    toWire(in.views[i].eyeInHead, views[i].initEyeInHead());
    auto fov = views[i].initFov(4);
    for (uint32_t k = 0; k < 4; ++k) fov.set(k, in.views[i].fov[k]);
  }
  if (!in.settledReleases.empty())
    toWire(in.settledReleases, timing.initSettledReleases(uint32_t(in.settledReleases.size())));
  timing.setWakeTime(in.wakeNs);
}

}  // namespace

SessionState::SessionState(DaemonContext& ctx, kj::Timer& timer, std::shared_ptr<ClientRecord> client)
    : ctx(ctx), timer(timer), client(std::move(client)), copyBudget(uint64_t(ctx.limits.maxCopyMibPerPeriod) << 20) {}

kj::Promise<void> SessionState::hostCopyCheck() {
  // One check per waitFrame for all the copies released before it; a new one once it resolved
  // (answered, or past its bound, when the join dropped the fulfiller's promise).
  if (!hostCopyCheck_ || !hostCopyCheckFulfiller_->isWaiting()) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    hostCopyCheckFulfiller_ = kj::mv(paf.fulfiller);
    // Bounded: a client that does not wait for its next frame still gets its releases answered.
    const int64_t boundNs = kHostCopyCheckPeriods * ctx.backend.clock().periodNs;
    hostCopyCheck_ = paf.promise.exclusiveJoin(timer.afterDelay(boundNs * kj::NANOSECONDS)).fork();
  }
  return hostCopyCheck_->addBranch();
}

std::shared_ptr<RenderedFrameCopies> SessionState::newFrameCopies() {
  std::erase_if(frameCopies_, [](const std::weak_ptr<RenderedFrameCopies>& f) { return f.expired(); });
  auto copies = std::make_shared<RenderedFrameCopies>(client, &ctx.letGoCopies);
  frameCopies_.push_back(copies);
  return copies;
}

void SessionState::submitFrameCopiesHolding(const gpu::SharedSwapchain* swapchain) {
  for (const auto& weak : frameCopies_) {
    if (auto copies = weak.lock(); copies && copies->copies().holds(swapchain)) copies->copies().submit();
  }
  if (ctx.letGoCopies.copies().holds(swapchain)) ctx.letGoCopies.copies().submit();
}

bool SessionState::answersWaitsAtOnce() const {
  return ctx.scheduler.latchesOnDemand() && ctx.backend.knownHeadPose(monotonicNowNs()).has_value();
}

SessionSnapshot SessionState::snapshot(int64_t inputAtNs) const {
  // Input goes to the focused session only.
  const Visibility visibility = ctx.scheduler.visibility(client->id);
  return {visibility, ctx.stopping, ctx.backend.localSpace(),
          visibility.focused ? ctx.backend.input(inputAtNs) : InputSnapshot{}};
}

void SessionState::answeringWait() {
  if (!hostCopyCheck_) return;
  hostCopyCheckFulfiller_->fulfill();
  hostCopyCheck_.reset();
  hostCopyCheckFulfiller_ = nullptr;
}

SessionState::~SessionState() {
  // The client left (or dropped every capability): its frames leave the display and its
  // swapchains are destroyed once the copies already queued for them are done.
  ctx.backend.removeClient(client->id);
  for (auto& [id, state] : swapchains) {
    // On the worker: after the frame-path jobs already queued for it; retired without waiting.
    ctx.worker.post(
        [&retired = ctx.retired, core = std::move(state->core)]() mutable { retired.retire(std::move(core)); });
  }
  ctx.clients.remove(client->id);
  ctx.stateChanges.changed();  // another session may become the primary
  log::client(log::Level::info, {client->id, client->pid, client->name}, "client {} '{}' (pid {}) disconnected",
              client->id, client->name, client->pid);
}

// --- Session -----------------------------------------------------------------------------------

kj::Promise<void> SessionServer::createSwapchain(CreateSwapchainContext context) {
  SessionState& s = *state_;
  const SwapchainRequest request = fromWire(context.getParams().getInfo());
  SwapchainLimits limits;
  limits.formats = usableFormats(s.ctx.gpu.swapchainFormats(), s.ctx.backend.systemInfo());
  limits.depthFormats = usableFormats(s.ctx.gpu.depthFormats(), s.ctx.backend.systemInfo());
  if (auto v = validateSwapchainRequest(request, limits); !v) return answer(context, v);
  if (int64_t(s.swapchains.size()) >= s.ctx.limits.maxSwapchainsPerSession) {
    return refuse(context, s, "max_swapchains_per_session",
                  makeError(ErrorCode::exhausted,
                            "createSwapchain: a session may have at most {} swapchains "
                            "(max_swapchains_per_session)",
                            s.ctx.limits.maxSwapchainsPerSession));
  }

  const VkImageCreateInfo info = vk::sharedImageCreateInfo(request);
  // Charged before any memory is taken: first one shared and one runtime image (so that an
  // oversized request allocates nothing), then all of them once the runtime says how many.
  const uint64_t imageBytes = vk::imageBytes(info);
  const char* limit = nullptr;
  auto charge = s.ctx.images.charge(s.client->id, 2 * imageBytes, &limit);
  if (!charge) return refuseImages(context, s, request, limit, charge.error());
  auto runtime = s.ctx.backend.createSwapchain(info);
  if (!runtime) return answer(context, runtime.error());
  // A static swapchain has one image (released once); copies of it go to any runtime image.
  const bool isStatic = (request.createFlags & swapchain_flags::staticImage) != 0;
  const uint32_t sharedCount = isStatic ? 1 : runtime.value()->imageCount();
  charge.value().reset();
  charge = s.ctx.images.charge(s.client->id, imageBytes * (sharedCount + runtime.value()->imageCount()), &limit);
  if (!charge) return refuseImages(context, s, request, limit, charge.error());
  std::vector<gpu::ExportedImage> exported;
  gpu::ExportedTimelines timelines;
  auto shared = gpu::SharedSwapchain::create(s.ctx.gpu, s.ctx.copyTimeline, info, sharedCount, s.client->syncMode,
                                             exported, timelines, runtime.value()->hostTransfer());
  if (!shared) return answer(context, shared.error());

  auto core = std::make_shared<SwapchainCore>();
  core->charge = std::move(charge).value();
  core->id = s.nextSwapchainId++;
  core->clientId = s.client->id;
  core->request = request;
  core->shared = std::move(shared).value();
  core->runtime = std::move(runtime).value();
  const uint32_t count = core->shared->imageCount();
  {
    Lock lock(s.client->swapchainsMutex);
    s.client->swapchains[core->id] = core;
  }
  s.swapchains[core->id] = std::make_unique<SwapchainState>(SwapchainState{core, ImageCycle(count), 0, imageBytes});

  auto results = context.getResults();
  setOk(results.initError());
  results.setSwapchain(kj::heap<SwapchainServer>(state_, core->id));
  results.setId(core->id);
  toWire(info, results.initImage());
  if (timelines.renderingFd.valid()) {
    results.setRenderingTimeline(makeFdCarrier(std::move(timelines.renderingFd)));
    results.setCopyingTimeline(makeFdCarrier(std::move(timelines.copyingFd)));
  }
  auto images = results.initImages(count);
  for (uint32_t i = 0; i < count; ++i) {
    auto out = images[i];
    out.setMemory(makeFdCarrier(std::move(exported[i].memoryFd)));
    out.setAllocationSize(exported[i].allocationSize);
    out.setMemoryTypeIndex(exported[i].memoryTypeIndex);
    out.setDedicated(true);
    if (exported[i].renderingDoneFd.valid()) {
      out.setRenderingDone(makeFdCarrier(std::move(exported[i].renderingDoneFd)));
      out.setCopyingDone(makeFdCarrier(std::move(exported[i].copyingDoneFd)));
    }
  }
  log::debug("client {}: swapchain {} {}x{} format {} layers {} mips {} ({} images)", s.client->id, core->id,
             request.width, request.height, request.format, request.arraySize, request.mipCount, count);
  return kj::READY_NOW;
}

kj::Promise<Result<WaitAnswer>> SessionServer::startWait(bool implicit, bool atOnce) {
  SessionState& s = *state_;
  if (s.waitPending)
    return Result<WaitAnswer>(makeError(ErrorCode::callOrder, "waitFrame: a previous waitFrame is still pending"));
  // A waitFrame replacing an endFrame's implied one (answered, its frame never begun): pace as if
  // that one had never been handed out.
  if (s.pacerBeforeImplicitWait && s.waitedFrame && *s.waitedFrame == s.implicitlyWaitedFrame) {
    s.pacer = *s.pacerBeforeImplicitWait;
  }
  s.pacerBeforeImplicitWait.reset();
  if (implicit) s.pacerBeforeImplicitWait = s.pacer;
  // Pace the client to the display (FramePacer, seed 003's CPU pacing).
  const DisplayClock clock = s.ctx.backend.clock();
  const int64_t now = monotonicNowNs();
  s.client->lastProgressNs.store(now);
  const FramePacer::Plan plan = s.pacer.next(now, clock);
  s.client->displayPeriods.store(plan.periods);
  const uint64_t frameId = s.nextFrameId++;
  if (implicit) s.implicitlyWaitedFrame = frameId;
  s.waitPending = true;
  auto state = state_;
  // The frame before this one is latched at the wake (plan.periods periods before its target).
  const int64_t latchedBeforeNs = plan.predictedNs - int64_t(plan.periods) * clock.periodNs;
  // 1.18, asked for by the endFrame and allowed by the display (answersWaitsAtOnce): answered
  // now, for the client to sleep to the wake itself. The display latches the vsyncs that passed
  // before it takes the client's next frame, so that frame cannot overtake the one due.
  const std::optional<Pose> knownHead = atOnce ? s.ctx.backend.knownHeadPose(plan.predictedNs) : std::nullopt;
  auto answer = [state, frameId, plan, clock](Pose head) -> Result<WaitAnswer> {
    // The client's work is measured from here: the wait for the latch (or for the runtime to
    // locate the head) was the daemon's, not the client's (FramePacer::answeredAt). An answer
    // given at once: from its wake, where the client starts.
    state->pacer.answeredAt(std::max(monotonicNowNs(), plan.wakeNs));
    state->waitPending = false;
    state->answeringWait();
    state->waitedFrame = frameId;
    state->waitedTargetNs = plan.predictedNs;
    // Visibility as of now: a primary switch shows in the next answer.
    return WaitAnswer{frameId,
                      plan,
                      clock,
                      head,
                      state->snapshot(plan.predictedNs),
                      state->ctx.backend.views(),
                      state->settlements.take(),
                      plan.wakeNs};
  };
  if (knownHead) {
    s.client->waitsAnsweredAtOnce++;
    return answer(*knownHead);
  }
  // A session that never ended a frame has none for its next one to overtake (asked when woken:
  // an endFrame may come in while this wait is pending).
  kj::Promise<void> woken = waitFrameWake(s.ctx.scheduler, s.timer, plan.wakeNs, latchedBeforeNs, clock.periodNs,
                                          [state] { return state->client->framesSubmitted.load() != 0; });
  // A head the backend knows at once is answered in the wake's own continuation: one promise
  // step per frame fewer than through headAt's.
  return woken.then([state, plan, answer = std::move(answer)]() mutable -> kj::Promise<Result<WaitAnswer>> {
    if (auto known = state->ctx.backend.knownHeadPose(plan.predictedNs)) return answer(*known);
    return headLocatedByRuntime(state->ctx.backend, plan.predictedNs).then(std::move(answer));
  });
}

kj::Promise<void> SessionServer::waitFrame(WaitFrameContext context) {
  return startWait(/*implicit=*/false).then([context](Result<WaitAnswer> waited) mutable {
    auto results = context.getResults(kWaitFrameResults);
    if (!waited) {
      toWire(waited.error(), results.initError());
      return;
    }
    setOk(results.initError());
    toWire(waited.value(), results.initTiming());
  });
}

kj::Promise<void> SessionServer::locateHead(LocateHeadContext context) {
  const int64_t time = context.getParams().getTime();
  if (time <= 0)
    return answer(context, makeError(ErrorCode::invalidArgument, "locateHead: time {} is not positive", time));
  return headAt(state_->ctx.backend, time).then([context](Pose head) mutable {
    auto results = context.getResults();
    setOk(results.initError());
    toWire(head, results.initHeadInStage());
  });
}

namespace {
// Haptics are the focused session's, as input is.
Status checkHapticCall(const SessionState& s, uint32_t hand, const std::string& output) {
  if (auto v = checkHand(hand); !v) return v;
  if (auto v = checkInputPath(output, "/output/", "the output"); !v) return v;
  if (!s.ctx.scheduler.visibility(s.client->id).focused) {
    return makeError(ErrorCode::callOrder, "haptics: only the focused session may vibrate the controllers");
  }
  return {};
}
}  // namespace

kj::Promise<void> SessionServer::applyHaptic(ApplyHapticContext context) {
  auto p = context.getParams();
  const std::string output = p.getOutput().cStr();
  if (auto v = checkHapticCall(*state_, p.getHand(), output); !v) return answer(context, v);
  const HapticPulse pulse{p.getDurationNs(), p.getFrequency(), p.getAmplitude()};
  return answer(context, state_->ctx.backend.applyHaptic(p.getHand(), output, pulse));
}

kj::Promise<void> SessionServer::stopHaptic(StopHapticContext context) {
  auto p = context.getParams();
  const std::string output = p.getOutput().cStr();
  if (auto v = checkHapticCall(*state_, p.getHand(), output); !v) return answer(context, v);
  return answer(context, state_->ctx.backend.stopHaptic(p.getHand(), output));
}

Status SessionServer::begin(uint64_t frameId) {
  SessionState& s = *state_;
  if (!s.waitedFrame || *s.waitedFrame != frameId) {
    return makeError(ErrorCode::callOrder, "beginFrame: frame {} was not returned by the last waitFrame", frameId);
  }
  s.waitedFrame.reset();
  s.pacerBeforeImplicitWait.reset();
  s.begunFrame = frameId;  // a frame begun and never ended is discarded here
  s.begunTargetNs = s.waitedTargetNs;
  return {};
}

kj::Promise<void> SessionServer::beginFrame(BeginFrameContext context) {
  return answer(context, begin(context.getParams().getFrameId()));
}

SessionServer::EndAnswer SessionServer::end(wire::Session::EndFrameParams::Reader params, bool commitLater) {
  SessionState& s = *state_;
  const uint64_t frameId = params.getFrameId();
  // A failed check below leaves the frame begun, as a separate beginFrame would have.
  if (params.getAlsoBegin()) {
    if (auto b = begin(frameId); !b) return b;
  }
  if (!s.begunFrame || *s.begunFrame != frameId) {
    return Status(makeError(ErrorCode::callOrder, "endFrame: frame {} was not begun", frameId));
  }
  if (params.getDisplayTime() <= 0) {
    return Status(
        makeError(ErrorCode::invalidArgument, "endFrame: display time {} is not positive", params.getDisplayTime()));
  }
  auto layers = params.getLayers();
  if (layers.size() > kMaxLayersPerFrame) {
    return Status(makeError(ErrorCode::invalidArgument, "endFrame: {} layers exceed the maximum of {}", layers.size(),
                            kMaxLayersPerFrame));
  }
  const EnvironmentBlendMode blendMode = fromWire(params.getEnvironmentBlendMode());
  if (const auto& supported = s.ctx.backend.systemInfo().environmentBlendModes;
      !blendModeSupported(supported, blendMode)) {
    std::string names;
    for (auto m : supported) names += fmt::format("{}{}", names.empty() ? "" : ", ", blendModeName(m));
    return Status(makeError(ErrorCode::unsupported,
                            "endFrame: environment blend mode {} is not one of the display's ({})",
                            blendModeName(blendMode), names));
  }

  // Validate everything before touching any state.
  auto lookup = [&](const SubImageRef& ref, bool depth, const char* what, std::vector<PendingView>& out,
                    bool cube = false) -> Status {
    auto it = s.swapchains.find(ref.swapchainId);
    std::optional<SwapchainFacts> facts;
    if (it != s.swapchains.end()) {
      const auto& req = it->second->core->request;
      facts = SwapchainFacts{req.width,
                             req.height,
                             req.arraySize,
                             vk::isDepthFormat(VkFormat(req.format)),
                             it->second->releasesRequested > 0,
                             req.faceCount};
    }
    if (auto v = validateSubImage(ref, facts ? &*facts : nullptr, depth, what, cube); !v) return v;
    out.push_back(PendingView{it->second->core, ref, Pose{}, {}});
    return {};
  };
  const uint32_t viewCount = uint32_t(s.ctx.backend.systemInfo().views.size());
  std::vector<PendingLayer> pending;
  for (auto layer : layers) {
    PendingLayer p;
    p.flags = layer.getFlags();
    if (layer.hasColorScale() || layer.hasColorBias()) {
      const auto scale = floats(layer.getColorScale()), bias = floats(layer.getColorBias());
      if (auto v = validateColorScaleBias(scale, bias); !v) return v;
      p.color = LayerColor{};
      std::copy(scale.begin(), scale.end(), p.color->scale.begin());
      std::copy(bias.begin(), bias.end(), p.color->bias.begin());
    }
    if (layer.isProjection()) {
      p.kind = CommittedLayer::Kind::projection;
      auto views = layer.getProjection();
      if (views.size() != viewCount) {
        return Status(makeError(ErrorCode::invalidArgument, "projection layer has {} views, the system has {}",
                                views.size(), viewCount));
      }
      for (auto view : views) {
        auto pose = view.getPose();
        if (auto v = validatePose(floats(pose.getOrientation()), floats(pose.getPosition())); !v) {
          return v;
        }
        auto fov = floats(view.getFov());
        if (fov.size() != 4 || !std::all_of(fov.begin(), fov.end(), [](float f) { return std::isfinite(f); })) {
          return Status(makeError(ErrorCode::invalidArgument, "projection view fov needs 4 finite angles"));
        }
        if (auto v = lookup(readSubImage(view.getSubImage()), false, "projection view", p.views); !v) {
          return v;
        }
        p.views.back().pose = fromWire(pose);
        std::copy(fov.begin(), fov.end(), p.views.back().fov.begin());
        if (view.getHasDepth()) {
          auto depth = view.getDepth();
          if (auto v = lookup(readSubImage(depth.getSubImage()), true, "depth info", p.depthViews); !v) return v;
          if (auto v = validateDepthRange(depth.getMinDepth(), depth.getMaxDepth(), depth.getNearZ(), depth.getFarZ());
              !v) {
            return v;
          }
          p.depthRanges.push_back({depth.getMinDepth(), depth.getMaxDepth(), depth.getNearZ(), depth.getFarZ()});
        }
      }
      // Depth goes with every view or with none (OpenXR lets each view have its own).
      if (p.depthViews.size() != p.views.size()) {
        p.depthViews.clear();
        p.depthRanges.clear();
      }
    } else if (layer.isCylinder() || layer.isEquirect()) {
      const bool cylinder = layer.isCylinder();
      auto pose = cylinder ? layer.getCylinder().getPose() : layer.getEquirect().getPose();
      p.orientation = floats(pose.getOrientation()).vector();
      p.position = floats(pose.getPosition()).vector();
      if (auto v = validatePose(p.orientation, p.position); !v) return v;
      if (cylinder) {
        auto c = layer.getCylinder();
        p.kind = CommittedLayer::Kind::cylinder;
        if (auto v = validateCylinder(c.getRadius(), c.getCentralAngle(), c.getAspectRatio(), c.getEyeVisibility());
            !v) {
          return v;
        }
        p.shape.radius = c.getRadius();
        p.shape.centralAngle = c.getCentralAngle();
        p.shape.aspectRatio = c.getAspectRatio();
        p.shape.eyeVisibility = c.getEyeVisibility();
        if (auto v = lookup(readSubImage(c.getSubImage()), false, "cylinder layer", p.views); !v) return v;
      } else {
        auto e = layer.getEquirect();
        p.kind = CommittedLayer::Kind::equirect;
        const auto scale = floats(e.getScale()), bias = floats(e.getBias());
        if (auto v = validateEquirect(e.getRadius(), scale, bias, e.getEyeVisibility()); !v) return v;
        p.shape.radius = e.getRadius();
        p.shape.scale = {scale[0], scale[1]};
        p.shape.bias = {bias[0], bias[1]};
        p.shape.eyeVisibility = e.getEyeVisibility();
        if (auto v = lookup(readSubImage(e.getSubImage()), false, "equirect layer", p.views); !v) return v;
      }
    } else if (layer.isCube()) {
      auto c = layer.getCube();
      p.kind = CommittedLayer::Kind::cube;
      p.orientation = floats(c.getOrientation()).vector();
      p.position = {0, 0, 0};
      if (auto v = validatePose(p.orientation, p.position); !v) return v;
      if (c.getEyeVisibility() > 2) {
        return Status(makeError(ErrorCode::invalidArgument, "cube layer eye visibility {} is not 0, 1 or 2",
                                c.getEyeVisibility()));
      }
      p.shape.eyeVisibility = c.getEyeVisibility();
      if (auto v = lookup(readSubImage(c.getSubImage()), false, "cube layer", p.views, /*cube=*/true); !v) return v;
    } else if (layer.isQuad()) {
      p.kind = CommittedLayer::Kind::quad;
      auto quad = layer.getQuad();
      if (auto v = validateQuadExtent(quad.getWidth(), quad.getHeight()); !v) return v;
      p.orientation = floats(quad.getPose().getOrientation()).vector();
      p.position = floats(quad.getPose().getPosition()).vector();
      if (auto v = validatePose(p.orientation, p.position); !v) return v;
      if (auto v = lookup(readSubImage(quad.getSubImage()), false, "quad layer", p.views); !v) {
        return v;
      }
      p.quadWidth = quad.getWidth();
      p.quadHeight = quad.getHeight();
    } else {
      return Status(makeError(ErrorCode::invalidArgument, "layer of a kind this daemon does not know"));
    }
    pending.push_back(std::move(p));
  }

  s.begunFrame.reset();
  s.client->framesSubmitted++;
  s.client->lastProgressNs.store(monotonicNowNs());
  CommittedFrame frame;
  frame.clientId = s.client->id;
  frame.frameId = frameId;
  frame.displayTimeNs = params.getDisplayTime();
  frame.environmentBlendMode = blendMode;
  // Shown no earlier than the vsync the pacer gave this frame, whatever time the client names.
  frame.targetNs = s.begunTargetNs;

  // Committed after every release this client sent before this call: here when none of them
  // is still queued on the frame worker, else behind them there.
  // Timeline mode: behind the releases whose rendering is still awaited, too.
  auto commit = [state = state_, frame = std::move(frame), pending = std::move(pending)]() mutable -> EndAnswer {
    DaemonContext& ctx = state->ctx;
    // Its copies held for a latch (copy batching): counted, and whether holding them cost it a
    // vsync: committed after that latch when its own target's latch is no later (a frame whose
    // target is further out loses nothing by missing an earlier latch).
    const int64_t heldForLatchNs = std::exchange(state->heldForLatchNs, 0);
    const int64_t mustCommitByNs =
        heldForLatchNs > 0 ? std::max(heldForLatchNs, frame.targetNs - ctx.backend.clock().leadNs()) : 0;
    auto commitCounted = [&ctx, mustCommitByNs](CommittedFrame frame, const std::vector<PendingLayer>& pending) {
      commitLayers(ctx, std::move(frame), pending);
      if (mustCommitByNs > 0) ctx.copyBatch.countHeldFrame(mustCommitByNs, monotonicNowNs());
    };
    if (state->workerJobs == 0) {
      commitCounted(std::move(frame), pending);
      return Status{};
    }
    return runOnWorker(state,
                       [commitCounted, frame = std::move(frame), pending = std::move(pending)]() mutable -> Status {
                         commitCounted(std::move(frame), pending);
                         return {};
                       });
  };
  // A frame answered before it was committed (commitLater) may still wait for its turn after
  // the renders before it are done; a later frame commits behind it, never first.
  if (s.renderWaits == 0 && s.commitsBehindRenders == 0) return commit();
  s.commitsBehindRenders++;
  auto committed = s.renderTail->addBranch().then([state = state_, commit = kj::mv(commit)]() mutable {
    state->commitsBehindRenders--;
    return answerPromise(commit());
  });
  if (!commitLater) return committed;
  // Answered now; committed once the releases before it are (a commit fails only when the frame
  // worker shuts down with it queued).
  settling_.add(committed.then([client = s.client](Status status) {
    if (!status) log::warn("client {}: a frame was not committed: {}", client->id, status.error().describe());
  }));
  return Status{};
}

kj::Promise<void> SessionServer::endFrame(EndFrameContext context) {
  auto params = context.getParams();
  auto releases = params.getReleases();
  if (releases.size() > kMaxReleasesPerEndFrame) {
    // Refused whole, before anything is applied; the client's next waitFrame is its own call.
    const Error error = makeError(ErrorCode::invalidArgument, "endFrame: {} releases exceed the maximum of {}",
                                  releases.size(), kMaxReleasesPerEndFrame);
    auto results = context.getResults(kErrorOnlyResults);
    toWire(error, results.initError());
    toWire(error, results.initNextError());
    return kj::READY_NOW;
  }
  // 1.5: the frame's releases first, as release calls sent before it would be; then the frame;
  // then the next waitFrame it stands for. Each part answers as its own call would.
  // Read in full first: a malformed message fails here, before any state changes.
  struct Release {
    uint32_t id, index;
    uint64_t renderingValue;
  };
  std::vector<Release> toRelease;
  toRelease.reserve(releases.size());
  for (auto r : releases) toRelease.push_back({r.getSwapchainId(), r.getIndex(), r.getRenderingValue()});
  // 1.13, timeline mode: a release is answered once accepted; its copy, which waits for the
  // client's rendering, settles on its own, and its settlement goes out with a later frame timing
  // (or settleReleases answer). So the client's next frame (this call's answer, when it stands
  // for the wait) never waits for the GPU to finish its last one.
  const bool answerEarly = state_->answersReleasesEarly();
  // 1.18: the wait this call stands for answered at once; host mode's copies are then looked at
  // now (they are done: copied on the host, or their fence is waited for on the frame worker).
  const bool waitAtOnce = params.getAlsoWaitNext() && params.getAnswerNextAtOnce() && state_->answersWaitsAtOnce();
  const bool checkCopiesAtWait = !(waitAtOnce && state_->client->syncMode == SyncMode::host);
  // Each release's answer: known at once when answered early (or refused), else its copy's.
  std::vector<Status> answeredNow;
  kj::Vector<kj::Promise<Status>> released(answerEarly ? 0 : toRelease.size());
  auto answerRelease = [&](Status status) {
    if (answerEarly) {
      answeredNow.push_back(std::move(status));
    } else {
      released.add(std::move(status));
    }
  };
  // A single release is copied as a release call's is: holding it would save no submission.
  // Host and binary mode: the frame's copies are prepared here and submitted below, together.
  // Timeline mode: each is prepared once its rendering is done, and they are submitted together
  // after the last (`copies` stays empty).
  EndFrameCopies copies;
  EndFrameCopies* batch = nullptr;
  std::shared_ptr<RenderedFrameCopies> frameCopies;
  if (toRelease.size() > 1 && state_->client->syncMode == SyncMode::timeline) {
    frameCopies = state_->newFrameCopies();
    frameCopies->expect();  // held while the releases are added
  } else if (toRelease.size() > 1) {
    batch = &copies;
  }
  for (const Release& r : toRelease) {
    // A second release of a swapchain in one frame: its first copy goes first.
    if (auto it = state_->swapchains.find(r.id);
        it != state_->swapchains.end() && copies.holds(it->second->core->shared.get())) {
      copies.submit();
    }
    auto accepted = acceptRelease(*state_, r.id, r.index, true, r.renderingValue);
    if (!accepted) {
      answerRelease(Status(accepted.error()));
      continue;
    }
    auto copied = copyAccepted(state_, r.id, r.index, r.renderingValue, std::move(accepted).value(),
                               /*settleAtNextWait=*/checkCopiesAtWait, batch, frameCopies);
    if (!answerEarly) {
      released.add(kj::mv(copied));
      continue;
    }
    state_->settlements.accepted(r.id, r.index);
    // Settled whatever happens to the copy: a failure must not leave the client's acquire of the
    // image (or a settleReleases call) waiting for a settlement that never comes.
    auto settle = [state = state_, id = r.id, index = r.index](Status status) {
      state->releaseSettled(id, index, std::move(status));
    };
    // KJ's then() keeps what it is given as it is given: a copy, not a reference to this local.
    settling_.add(copied.then(kj::cp(settle), [settle](kj::Exception&& e) {
      settle(Status(makeError(ErrorCode::internal, "release: the copy failed: {}", e.getDescription().cStr())));
    }));
    answerRelease(Status{});
  }
  // The frame's copies are submitted and published before the frame that shows them is committed.
  copies.submit();
  if (frameCopies) frameCopies->handled();
  // The releases are under way now: a frame that fails to decode is answered as an error.
  EndAnswer ended = endOrRefuse(params, answerEarly);
  const bool waitNext = params.getAlsoWaitNext();
  auto writeResults = [context](std::span<const Status> releases, const Status& frame,
                                const Result<WaitAnswer>* waited) mutable {
    auto results = context.getResults(releases.size() > 0 || waited ? kWaitFrameResults : kErrorOnlyResults);
    toWire(frame, results.initError());
    if (releases.size() > 0) {
      auto errors = results.initReleaseErrors(uint32_t(releases.size()));
      for (uint32_t i = 0; i < releases.size(); ++i) toWire(releases[i], errors[i]);
    }
    if (waited != nullptr) {
      if (*waited) {
        setOk(results.initNextError());
        toWire(waited->value(), results.initNext());
      } else {
        toWire(waited->error(), results.initNextError());
      }
    }
  };
  if (auto* endedNow = std::get_if<Status>(&ended); endedNow != nullptr && answerEarly) {
    // The usual 1.13 frame: everything but the next frame's timing is answered now, so the
    // answer is one continuation of that wait (no join of the parts, each a promise step).
    if (!waitNext) {
      writeResults(answeredNow, *endedNow, nullptr);
      return kj::READY_NOW;
    }
    return startWait(/*implicit=*/true, waitAtOnce)
        .then([writeResults, releases = std::move(answeredNow), ended = std::move(*endedNow),
               state = state_](Result<WaitAnswer> waited) mutable {
          if (waited) state->pacer.answeredAt(std::max(monotonicNowNs(), waited.value().wakeNs));
          writeResults(releases, ended, &waited);
        });
  }
  for (Status& status : answeredNow) released.add(std::move(status));
  kj::Promise<Status> endedLater = answerPromise(std::move(ended))
                                       .catch_([](kj::Exception&& e) { return malformedFrame(e); })
                                       .eagerlyEvaluate(nullptr);
  kj::Promise<std::optional<Result<WaitAnswer>>> next = std::optional<Result<WaitAnswer>>();
  if (waitNext) {
    next = startWait(/*implicit=*/true, waitAtOnce)
               .then([](Result<WaitAnswer> w) { return std::optional<Result<WaitAnswer>>(std::move(w)); })
               .eagerlyEvaluate(nullptr);
  }
  struct Parts {
    kj::Array<Status> releases;
    Status ended;
  };
  return kj::joinPromises(released.releaseAsArray())
      .then([ended = kj::mv(endedLater)](kj::Array<Status> r) mutable {
        return ended.then([r = kj::mv(r)](Status e) mutable { return Parts{kj::mv(r), std::move(e)}; });
      })
      .then([next = kj::mv(next), writeResults, state = state_](Parts parts) mutable {
        return next.then(
            [parts = kj::mv(parts), writeResults, state](std::optional<Result<WaitAnswer>> waited) mutable {
              if (waited && *waited) state->pacer.answeredAt(std::max(monotonicNowNs(), waited->value().wakeNs));
              writeResults(std::span<const Status>(parts.releases.begin(), parts.releases.size()), parts.ended,
                           waited ? &*waited : nullptr);
            });
      });
}

SessionServer::EndAnswer SessionServer::endOrRefuse(wire::Session::EndFrameParams::Reader params, bool commitLater) {
  EndAnswer ended = Status{};
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { ended = end(params, commitLater); })) {
    return malformedFrame(*e);
  }
  return ended;
}

void SessionState::releaseSettled(uint32_t swapchainId, uint32_t index, Status status) {
  const uint64_t droppedBefore = settlements.dropped();
  settlements.settled(swapchainId, index, std::move(status));
  // Only a client that breaks the protocol gets here; warned once per kMaxKept dropped.
  if (settlements.dropped() != droppedBefore && droppedBefore % ReleaseSettlements::kMaxKept == 0) {
    log::warn("client {} '{}': release settlements dropped ({} so far): more than {} it never asked for", client->id,
              client->name, settlements.dropped(), ReleaseSettlements::kMaxKept);
  }
  std::erase_if(settleWaiters, [&](SettleWaiter& w) {
    if (w.swapchainId != swapchainId || w.index != index) return false;
    w.fulfiller->fulfill();
    return true;
  });
}

kj::Promise<void> SessionServer::settleReleases(SettleReleasesContext context) {
  const uint32_t id = context.getParams().getSwapchainId();
  const uint32_t index = context.getParams().getIndex();
  auto answer = [context, state = state_]() mutable {
    auto results = context.getResults();
    setOk(results.initError());
    auto settled = state->settlements.take();
    if (!settled.empty()) toWire(settled, results.initSettled(uint32_t(settled.size())));
  };
  if (!state_->settlements.isUnsettled(id, index)) {
    answer();
    return kj::READY_NOW;
  }
  if (state_->settleWaiters.size() >= SessionState::kMaxSettleWaiters) {
    toWire(makeError(ErrorCode::exhausted, "settleReleases: {} calls are already waiting for settlements",
                     SessionState::kMaxSettleWaiters),
           context.getResults().initError());
    return kj::READY_NOW;
  }
  // Bounded: each release settles by its rendering deadline (hung_client_timeout_ms), its copy
  // within the GPU timeout.
  auto paf = kj::newPromiseAndFulfiller<void>();
  state_->settleWaiters.push_back({id, index, kj::mv(paf.fulfiller)});
  return paf.promise.then(kj::mv(answer));
}

namespace {
constexpr kj::Duration kWatchStateLongestWait = 5 * kj::SECONDS;
}  // namespace

kj::Promise<void> SessionServer::watchState(WatchStateContext context) {
  SessionState& s = *state_;
  if (s.watchingState) {
    toWire(makeError(ErrorCode::callOrder, "watchState: one is already waiting"), context.getResults().initError());
    return kj::READY_NOW;
  }
  // The state as the answer leaves: what a wait's answer sent now would carry. A waiting watch
  // holds no session: a client that leaves with one waiting is gone at once, not at the next
  // change.
  auto answer = [context, weak = std::weak_ptr<SessionState>(state_)]() mutable {
    auto state = weak.lock();
    if (!state) return;
    auto results = context.getResults();
    setOk(results.initError());
    results.setCount(state->ctx.stateChanges.count());
    const int64_t inputAtNs = state->waitedTargetNs > 0 ? state->waitedTargetNs : monotonicNowNs();
    toWire(state->snapshot(inputAtNs), results.initState());
  };
  if (context.getParams().getAfter() != s.ctx.stateChanges.count()) {
    answer();
    return kj::READY_NOW;
  }
  s.watchingState = true;
  // Bounded like every wait: with no change for kWatchStateLongestWait it is answered as it is,
  // and the client asks again.
  return s.ctx.stateChanges.next()
      .exclusiveJoin(s.timer.afterDelay(kWatchStateLongestWait))
      .then(kj::mv(answer))
      .attach(kj::defer([weak = std::weak_ptr<SessionState>(state_)] {
        if (auto state = weak.lock()) state->watchingState = false;
      }));
}

void SessionServer::taskFailed(kj::Exception&& exception) {
  log::error("client {}: settling a frame failed: {}", state_->client->id, exception.getDescription().cStr());
}

// --- Swapchain ---------------------------------------------------------------------------------

SwapchainState* SwapchainServer::state(wire::Error::Builder error) {
  auto it = session_->swapchains.find(id_);
  if (it == session_->swapchains.end()) {
    toWire(makeError(ErrorCode::notFound, "swapchain {} was destroyed", id_), error);
    return nullptr;
  }
  return it->second.get();
}

kj::Promise<void> SwapchainServer::acquire(AcquireContext context) {
  auto error = context.getResults(kErrorOnlyResults).initError();
  SwapchainState* sc = state(error);
  if (sc == nullptr) return kj::READY_NOW;
  return answer(context, sc->cycle.acquire(context.getParams().getIndex()));
}

kj::Promise<void> SwapchainServer::wait(WaitContext context) {
  auto error = context.getResults(kErrorOnlyResults).initError();
  SwapchainState* sc = state(error);
  if (sc == nullptr) return kj::READY_NOW;
  return answer(context, sc->cycle.wait(context.getParams().getIndex()));
}

kj::Promise<void> SwapchainServer::release(ReleaseContext context) {
  auto params = context.getParams();
  return answerLater(
      startRelease(session_, id_, params.getIndex(), params.getAlsoAcquireAndWait(), params.getRenderingValue()),
      context);
}

kj::Promise<void> SwapchainServer::destroy(DestroyContext context) {
  auto error = context.getResults(kErrorOnlyResults).initError();
  SwapchainState* sc = state(error);
  if (sc == nullptr) return kj::READY_NOW;
  // Its copies held for a frame's later releases go now: its retirement waits for them.
  session_->submitFrameCopiesHolding(sc->core->shared.get());
  auto core = std::move(sc->core);
  session_->swapchains.erase(id_);
  {
    Lock lock(session_->client->swapchainsMutex);
    session_->client->swapchains.erase(id_);
  }
  session_->ctx.worker.post(
      [&retired = session_->ctx.retired, core = std::move(core)]() mutable { retired.retire(std::move(core)); });
  setOk(error);
  return kj::READY_NOW;
}

}  // namespace xrc
