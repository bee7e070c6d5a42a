// The openxr backend: the daemon is an application of the system's OpenXR runtime. It owns one
// session there; runtime swapchains are xrCreateSwapchain swapchains that client images are
// copied into (seed 000's server half: xrAcquire, xrWait, copy, xrRelease); a display thread
// runs the system frame loop on xrWaitFrame/xrBeginFrame/xrEndFrame and submits every visible
// client's layers in one xrEndFrame. When the runtime is lost, every client is disconnected
// (their sessions cannot outlive the runtime's) and the runtime is retried with backoff.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "../../common/job_thread.hpp"
#include "../../gpu/gpu_device.hpp"
#include "../../gpu/timeline.hpp"
#include "../backend.hpp"
#include "../display_feed.hpp"
#include "../layer_mirror.hpp"
#include "openxr_input.hpp"
#include "openxr_instance.hpp"
#include "refresh_tracker.hpp"

namespace xrc {

struct OpenXrOptions {
  double refreshHz = 90.0;  // until the runtime's first frame gives its display period
  bool overlay = false;     // the session is an overlay (XR_EXTX_overlay, enabled on the instance)
  // Called on the display thread when the runtime is lost: disconnect every client.
  std::function<void()> disconnectAllClients;
};

struct OpenXrLink;
class OpenXrSwapchain;

class OpenXrBackend final : public Backend {
 public:
  // `instance` is the one `gpu` was created through.
  // `copyTimeline` is what the daemon's copies signal (the runtime's queue waits for it when the
  // copies run on another queue).
  static Result<std::unique_ptr<OpenXrBackend>> create(std::unique_ptr<OpenXrInstance> instance, gpu::GpuDevice& gpu,
                                                       gpu::Timeline& copyTimeline, DisplayFeed& feed,
                                                       OpenXrOptions options);
  OpenXrBackend(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline, DisplayFeed& feed, OpenXrOptions options);
  ~OpenXrBackend() override;

  const SystemInfo& systemInfo() const override { return system_; }
  DisplayClock clock() const override XRC_EXCLUDES(timingMutex_);
  double refreshHz() const override;
  uint64_t displayFrames() const override { return displayFrames_.load(); }
  uint64_t loopIterations() const override { return loopIterations_.load(); }
  // Display times the display loop located the head at are known; other times are located on
  // the locator thread (the runtime may take a while: ours asks its own daemon).
  std::optional<Pose> knownHeadPose(int64_t timeNs) const override XRC_EXCLUDES(timingMutex_);
  void locateHead(int64_t timeNs, std::function<void(const Pose&)> done) override;
  // The runtime's LOCAL in STAGE; moves when the runtime says a reference space changed.
  LocalSpace localSpace() const override XRC_EXCLUDES(localMutex_);
  // The runtime's controllers as of the last display frame (OpenXrInputBinding); haptics go to
  // the runtime and are counted as they are sent.
  InputSnapshot input(int64_t timeNs) const override;
  // xrLocateViews in VIEW space at each display frame's predicted time.
  std::vector<EyeView> views() const override XRC_EXCLUDES(timingMutex_);
  Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) override
      XRC_EXCLUDES(hapticMutex_);
  Status stopHaptic(uint32_t hand, const std::string& output) override XRC_EXCLUDES(hapticMutex_);
  std::array<HapticStatus, kHandCount> haptics() const override XRC_EXCLUDES(hapticMutex_);

  Result<std::shared_ptr<RuntimeSwapchain>> createSwapchain(const VkImageCreateInfo& info) override
      XRC_EXCLUDES(linkMutex_);
  Result<RuntimeImageLease> acquireImage(RuntimeSwapchain& swapchain, std::chrono::milliseconds timeout) override;
  void releaseImage(RuntimeSwapchain& swapchain, uint32_t index, uint64_t copyValue) override;
  void abandonImage(RuntimeSwapchain& swapchain, uint32_t index) override;
  void commitFrame(CommittedFrame frame) override;
  void removeClient(uint32_t clientId) override;
  bool readRuntimeImage(std::shared_ptr<RuntimeSwapchain> swapchain, uint32_t index, uint64_t copyValue,
                        std::function<void(Result<Pixels>)> done) override;
  void readDisplay(std::function<void(Result<DisplaySnapshot>)> done) override;
  void start() override;
  void stop() override;
  // Before start(): what is sent to the runtime is also copied for `mirror` and told it (it
  // outlives the backend's display thread).
  void setMirror(LayerMirror* mirror) { mirror_ = mirror; }
  std::optional<present::PresenterStats> windowOutput() const override {
    return mirror_ != nullptr ? mirror_->windowStats() : std::nullopt;
  }

 private:
  // Session, spaces and system description on `link_`'s instance; display thread or create().
  Status openSession(std::unique_ptr<OpenXrInstance> instance) XRC_EXCLUDES(linkMutex_);
  void run();                                 // display thread
  void pollEvents();                          // display thread
  void onSessionState(XrSessionState state);  // display thread
  void frame();                               // display thread: one xrWaitFrame .. xrEndFrame
  void loseRuntime(const std::string& why);   // display thread
  void reconnect();                           // display thread: one attempt when the backoff allows
  std::shared_ptr<OpenXrLink> link() const XRC_EXCLUDES(linkMutex_);
  // The runtime queue's half of each hand-off after a copy: an ownership acquire, a mirror copy.
  Status prepareHandoffs(OpenXrSwapchain& swapchain);
  // Frame worker: after a copy (`copyValue`) or without one, back to the runtime
  // (xrReleaseSwapchainImage), then the next image is acquired ahead.
  void giveBack(OpenXrSwapchain& swapchain, uint32_t index, std::optional<uint64_t> copyValue);
  // The head (VIEW) in STAGE at `timeNs`; nullopt when the runtime cannot tell (or is gone).
  std::optional<Pose> locateNow(int64_t timeNs) const XRC_EXCLUDES(linkMutex_);
  void rememberHead(int64_t timeNs, const Pose& head) XRC_EXCLUDES(timingMutex_);
  // The eyes in the head and their fovs at `displayTime` (display thread).
  void locateViews(const OpenXrLink& link, XrTime displayTime) XRC_EXCLUDES(timingMutex_);
  // LOCAL in STAGE at `timeNs` from the runtime; a pose that differs from the last counts as a
  // change clients are told of. Display thread (or create()).
  void relocateLocal(int64_t timeNs) XRC_EXCLUDES(localMutex_);
  void setLocal(const Pose& localInStage) XRC_EXCLUDES(localMutex_);

  gpu::GpuDevice& gpu_;
  gpu::Timeline& copyTimeline_;
  // Signalled by the hand-offs of copied images to the runtime's queue (see releaseImage), so a
  // swapchain can wait for its last one before its command buffers go.
  std::unique_ptr<gpu::Timeline> handoffTimeline_;
  DisplayFeed& feed_;
  OpenXrOptions options_;
  LayerMirror* mirror_ = nullptr;  // fixed before start()
  SystemInfo system_;              // fixed after create()
  std::atomic<uint64_t> displayFrames_{0};
  std::atomic<uint64_t> loopIterations_{0};
  std::atomic<int64_t> refreshPeriodNs_{0};  // refresh_'s, for any thread; 0 before the first frame

  mutable Mutex linkMutex_;
  // Instance, session and spaces; swapchains keep it alive so it goes after the last of them.
  std::shared_ptr<OpenXrLink> link_ XRC_GUARDED_BY(linkMutex_);

  mutable Mutex hapticMutex_;
  std::array<HapticStatus, kHandCount> haptics_ XRC_GUARDED_BY(hapticMutex_);

  mutable Mutex localMutex_;
  std::optional<LocalSpace> local_ XRC_GUARDED_BY(localMutex_);

  mutable Mutex timingMutex_;
  DisplayClock clock_ XRC_GUARDED_BY(timingMutex_);
  Pose head_ XRC_GUARDED_BY(timingMutex_);  // the latest located: the answer when locating fails
  // Head poses at the display times xrWaitFrame predicted (clients' waitFrame targets), newest last.
  std::deque<std::pair<int64_t, Pose>> locatedHeads_ XRC_GUARDED_BY(timingMutex_);
  std::vector<EyeView> views_ XRC_GUARDED_BY(timingMutex_);  // of the latest display frame

  // Display thread only.
  bool running_ = false;  // between xrBeginSession and xrEndSession
  bool lost_ = false;     // the runtime is gone; reconnect() retries
  int64_t nextAttemptNs_ = 0;
  int64_t backoffNs_ = 0;
  // The runtime's refresh period (RefreshTracker): its display period, past a placeholder of the
  // first frames (Monado: 16 ms) and not a multiple it gives a slow application.
  RefreshTracker refresh_;
  std::vector<EnvironmentBlendMode> runtimeBlendModes_;  // the current runtime's, preferred first
  bool warnedLayersLeftOut_ = false;

  std::atomic<bool> stopRequested_{false};
  std::thread thread_;
  // Last: destroyed (and drained) first, while what its jobs use is still there.
  JobThread locator_{"xrc-locate"};
};

}  // namespace xrc
