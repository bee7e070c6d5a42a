// Private state of Connection and Swapchain.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <optional>

#include "release_answers.hpp"
#include "rpc_link.hpp"
#include "xrc/client.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::client {

// How long the application's rendering of a released image may take to complete (host mode).
constexpr std::chrono::seconds kReleaseFenceTimeout{2};

// Errors of calls sent without waiting (answered on the I/O thread): the first one is kept for
// the application's next call to return.
class AsyncErrors {
 public:
  void record(Error error) {
    Lock lock(mutex_);
    if (!first_) first_ = std::move(error);
  }
  std::optional<Error> take() {
    Lock lock(mutex_);
    std::optional<Error> out = std::move(first_);
    first_.reset();
    return out;
  }

 private:
  Mutex mutex_;
  std::optional<Error> first_ XRC_GUARDED_BY(mutex_);
};

// What the I/O thread runs to send release(index, alsoAcquireAndWait) on swapchain `id` and
// record its answer.
// `renderingValue`: timeline mode's (0 otherwise).
RpcLink::Work releaseCall(RpcLink& link, std::shared_ptr<ReleaseAnswers> answers, uint32_t id, uint32_t index,
                          bool alsoAcquireAndWait, uint64_t renderingValue);

// 1.5: a release not sent yet; the frame's endFrame carries it.
struct UnsentRelease {
  uint32_t swapchainId = 0;
  uint32_t index = 0;
  std::shared_ptr<ReleaseAnswers> answers;
  uint64_t renderingValue = 0;  // timeline mode
  // Host mode: signalled once the application's rendering of the image is complete; waited for
  // (with those of the frame's other releases, in one wait) before the release leaves.
  VkFence renderingFence = VK_NULL_HANDLE;
};

struct Connection::Impl {
  std::unique_ptr<RpcLink> link;
  SystemDescription system;
  SyncMode syncMode = SyncMode::host;
  uint32_t clientId = 0;
  VulkanBinding vulkan;
  PFN_vkImportSemaphoreFdKHR importSemaphoreFd = nullptr;
  std::atomic<uint64_t> roundTrips{0};
  std::atomic<uint64_t> acquiresPrepared{0};  // acquires whose submission a release made ahead
  // The daemon speaks protocol 1.4: acquire and wait travel with release, beginFrame with
  // endFrame (three calls per frame and swapchain fewer; docs/PROTOCOL.md).
  bool combinedFrameCalls = false;
  // The daemon speaks 1.5: endFrame carries the frame's releases and stands for the next
  // waitFrame (one call per frame; docs/PROTOCOL.md).
  bool oneCallFrames = false;
  // 1.13, timeline mode: the releases an endFrame carries are answered by their settlements, which
  // come with later frame timings (or a settleReleases answer), not by the endFrame's answer.
  bool settledLater = false;
  // 1.18: implied waits are asked to be answered at once (ConnectOptions::answerWaitsAtOnce);
  // waitFrame sleeps to their wake itself.
  bool answersAtOnce = false;
  // Asks the daemon for the settlement of image `index`'s release (an acquire waits for one that
  // has not come), and with it every other one no frame timing carried yet.
  void askForSettlement(uint32_t swapchainId, uint32_t index);
  std::shared_ptr<AsyncErrors> errors = std::make_shared<AsyncErrors>();
  // Our own submissions to the application's queue may come from several threads (one per
  // swapchain); Vulkan wants queue access serialized.
  Mutex queueMutex;

  Mutex frameMutex;
  std::optional<uint64_t> waitedFrame XRC_GUARDED_BY(frameMutex);
  std::optional<uint64_t> begunFrame XRC_GUARDED_BY(frameMutex);
  // 1.4: a begun frame whose beginFrame was not sent yet; endFrame carries it, or the next
  // waitFrame sends it first (an app that waits for frame N+1 before ending frame N must not
  // have the daemon see that wait before N's begin).
  std::optional<uint64_t> beginUnsent XRC_GUARDED_BY(frameMutex);
  // A waitFrame is on its way: a beginFrame made meanwhile (another thread beginning the frame
  // the previous wait returned) goes out at once, so that the daemon sees it before it answers
  // that wait, as with separate calls.
  bool waitInFlight XRC_GUARDED_BY(frameMutex) = false;
  // 1.5: releases made since the last endFrame, oldest first.
  std::vector<UnsentRelease> unsentReleases XRC_GUARDED_BY(frameMutex);
  // 1.5: where the answer to the waitFrame the last endFrame stood for arrives.
  std::shared_ptr<AnswerSlot<FrameTiming>> impliedWait XRC_GUARDED_BY(frameMutex);
  // Frames still to end without asking for the next wait: an implied wait's answer came too long
  // before the application asked for it (it renders, or sleeps, between endFrame and waitFrame).
  uint32_t impliedWaitBackoff XRC_GUARDED_BY(frameMutex) = 0;
  // 1.18: the earliest the next wait given at once can end (the last one's wake plus a display
  // period); 0 when the last was not given at once. Atomic: waitFrame may come from any thread.
  std::atomic<int64_t> expectedWakeNs{0};
  // 1.18: an answer came before its wake, so the daemon answers waits at once.
  std::atomic<bool> answersCameAtOnce{false};
  // 1.18: with answers at once, the daemon's state changes (Session.watchState) patch the answer
  // not taken yet, so that the application sees no older state than an answer sent at its wake
  // would have carried. I/O thread only.
  struct StateWatch {
    std::weak_ptr<AnswerSlot<FrameTiming>> pending;  // the latest implied wait's answer
    uint64_t seen = 0;                               // the daemon's change count last heard
  };
  std::shared_ptr<StateWatch> stateWatch = std::make_shared<StateWatch>();
  // Sends watchState, and again after each answer, until the connection goes.
  void watchState();

  // Posts beginFrame(frameId) to the I/O thread.
  void sendBeginFrame(uint64_t frameId);
  // 1.5: posts the unsent releases as release calls, for when something must not wait for the
  // next endFrame (an acquire that needs their answers, a waitFrame, a swapchain's destruction).
  void sendUnsentReleases() XRC_REQUIRES(frameMutex);
  // Host mode: waits, once for all of them, until the rendering of every unsent release is
  // complete (the daemon copies without waiting on our GPU). Bounded; where it fails, those
  // releases are answered with the error and dropped (never sent), and the error is returned.
  Status finishUnsentRenderings() XRC_REQUIRES(frameMutex);
  void flushReleases();

  // Sends what `send` builds on the I/O thread without waiting; an error in its answer (or a
  // broken connection) is returned by a later call.
  void sendTracked(kj::Function<kj::Promise<Status>(IoState&)> send, const char* what);
  Status takeAsyncError();
};

struct Swapchain::Impl {
  struct PerImage {
    vk::Memory memory;  // declared first: destroyed after the image
    vk::Image image;
    vk::Semaphore renderingDone;         // binary mode
    vk::Semaphore copyingDone;           // binary mode
    uint64_t releaseValue = 0;           // timeline mode: the value of this image's last release
    vk::Fence fence;                     // "per-image fence", created signalled (seed 000)
    vk::Fence releaseFence;              // host mode: the application's rendering is complete
    bool releaseFenceSubmitted = false;  // reset before it is submitted again
    VkCommandBuffer acquireCommands = VK_NULL_HANDLE;
    VkCommandBuffer releaseCommands = VK_NULL_HANDLE;
    bool everAcquired = false;
    // Its next acquire's submission is made already, with the swapchain's previous release
    // (prepareNextAcquire): acquire() submits nothing and wait() usually finds the fence signalled.
    bool acquireSubmitted = false;
    bool releasedLocally = false;  // last release happened after the daemon was gone
    // Timeline mode: the last release was answered with an error, so the daemon copied nothing
    // out of the image and may not have signalled copying_done at its value.
    bool releaseFailed = false;
  };

  Connection::Impl* connection = nullptr;
  uint32_t id = 0;
  VkImageCreateInfo info{};
  vk::CommandPool pool;
  std::vector<PerImage> perImage;  // destroyed after `images` users are done (see ~Swapchain)
  // Timeline mode: the swapchain's pair, and the value of its last release.
  vk::Semaphore renderingTimeline, copyingTimeline;
  uint64_t lastRenderingValue = 0;
  std::vector<VkImage> images;
  std::unique_ptr<ImageCycle> cycle;
  std::shared_ptr<ReleaseAnswers> answers;
  std::vector<uint32_t> acquiredOrder;  // indices acquired, oldest first, not yet released
  std::vector<uint32_t> waitedOrder;

  Status recordCommands(PerImage& image);
  // A value of 0 means a binary semaphore; any other, a timeline's value.
  struct SemaphoreAt {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t value = 0;
  };
  Status submit(VkCommandBuffer commands, SemaphoreAt wait, SemaphoreAt signal, VkFence fence);
  // The GPU side of acquiring image `index`: reset its fence, submit the transition to the
  // attachment layout (behind the copy out of its last release, except in host mode or where
  // `copyDone` says that copy has finished) signalling the fence. Its last release must be
  // answered (the copy submitted, or done in host mode).
  Status submitAcquire(uint32_t index, bool copyDone = false);
  // After a release: makes the next acquire's submission now, where the image it will return is
  // free of the daemon already (its last release answered without error; in timeline mode its
  // copy finished), so that the transition runs on the GPU while the application does the rest
  // of its frame. Not in binary mode.
  void prepareNextAcquire();
};

}  // namespace xrc::client
