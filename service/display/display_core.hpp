// The display core of every composing output (headless, window; a direct-to-headset output
// later): it owns the runtime images clients' releases are copied into, runs the display loop
// (wake at the output's vsync, ask the FrameScheduler what each client shows, compose with the
// shared LayerRenderer, submit, hand the composition to the output, count) and the read-backs.
// Where nobody looks at the display frames (headless, composed only when read), nothing needs to
// happen at a vsync itself: which frames each vsync showed is decided when next asked ("latched
// on demand", latchDue()), and the loop only wakes as a backstop.
// The headset says what the display is and where the head is; the output says when its vsyncs
// are, gives the image to compose into and shows it. The openxr backend, which hands layers to
// its runtime instead of composing, is not built on it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "../backends/backend.hpp"
#include "../compositor/frame_scheduler.hpp"
#include "../gpu/gpu_device.hpp"
#include "../gpu/serial_submitter.hpp"
#include "../gpu/timeline.hpp"
#include "headset.hpp"
#include "layer_renderer.hpp"
#include "output.hpp"

namespace xrc::display {

struct DisplayCoreOptions {
  // A projection view shown at a head orientation other than the one it was rendered for (a late
  // or reused frame, or one rendered for another pose) is rotated to the display's (rotational
  // reprojection, as Monado's and SteamVR's timewarp); off: drawn as rendered.
  bool reprojection = true;
  // With nothing to show the display loop sleeps, waking this often: at least twice per health
  // check, which wants to see it go round (the watchdog), and for a window output.
  std::chrono::milliseconds idleWake{500};
  // Compose at every display frame even where the output shows none of them (headless without a
  // window): for a GPU load like a headset's. Off, such an output's frames are composed only when
  // read (readDisplay); an output that shows its frames (a window) has every one composed anyway.
  bool composeEveryFrame = false;
};

class LocalSwapchain;

class DisplayCore final : public Backend {
 public:
  // `headset` and `output` must outlive the core; the output's image is the headset's views side
  // by side.
  static Result<std::unique_ptr<DisplayCore>> create(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline,
                                                     FrameScheduler& scheduler, Headset& headset, Output& output,
                                                     const DisplayCoreOptions& options);
  DisplayCore(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline, FrameScheduler& scheduler, Headset& headset,
              Output& output, const DisplayCoreOptions& options);
  ~DisplayCore() override;

  const SystemInfo& systemInfo() const override { return headset_.systemInfo(); }
  DisplayClock clock() const override { return output_.clock(); }
  uint64_t displayFrames() const override { return displayFrames_.load(); }
  uint64_t loopIterations() const override { return loopIterations_.load(); }
  uint64_t layerViewsCulled() const override { return layerViewsCulled_.load(); }
  uint64_t displayFramesGpuLate() const override { return displayFramesGpuLate_.load(); }
  uint64_t displayFramesComposed() const override { return displayFramesComposed_.load(); }
  uint64_t framesReprojected(uint32_t clientId) const override XRC_EXCLUDES(reprojectedMutex_);
  std::optional<Pose> knownHeadPose(int64_t timeNs) const override { return headset_.headPoseAt(timeNs); }
  void locateHead(int64_t timeNs, std::function<void(const Pose&)> done) override { done(headset_.headPoseAt(timeNs)); }
  LocalSpace localSpace() const override { return headset_.localSpace(); }
  Status recenter() override { return headset_.recenter(); }
  InputSnapshot input(int64_t timeNs) const override;
  Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) override;
  Status stopHaptic(uint32_t hand, const std::string& output) override;
  std::array<HapticStatus, kHandCount> haptics() const override;
  SimulatedControllers* simulatedControllers() override { return headset_.simulatedControllers(); }

  Result<std::shared_ptr<RuntimeSwapchain>> createSwapchain(const VkImageCreateInfo& info) override;
  Result<RuntimeImageLease> acquireImage(RuntimeSwapchain& swapchain, std::chrono::milliseconds timeout) override;
  std::optional<RuntimeImageLease> tryAcquireImage(RuntimeSwapchain& swapchain) override;
  void releaseImage(RuntimeSwapchain& swapchain, uint32_t index, uint64_t copyValue) override;
  void commitFrame(CommittedFrame frame) override;
  void removeClient(uint32_t clientId) override;
  bool readRuntimeImage(std::shared_ptr<RuntimeSwapchain> swapchain, uint32_t index, uint64_t copyValue,
                        std::function<void(Result<Pixels>)> done) override;
  void readDisplay(std::function<void(Result<DisplaySnapshot>)> done) override;
  void start() override;
  void stop() override;
  void setStalledForTest(bool stalled) override { stalledForTest_.store(stalled); }
  // Latched on demand: settles every vsync up to now (what each showed, the stats, the runtime
  // images it let go, the clients waiting for its latch). Any thread holding none of the core's
  // locks; a no-op where the loop latches at each vsync itself.
  void latchDue() XRC_EXCLUDES(latchMutex_);
  std::optional<present::PresenterStats> windowOutput() const override { return output_.windowStats(); }

 private:
  Status init();
  // Display thread: arms the timer for nextTickNs_ (a wait armed before is ignored).
  void scheduleTick();
  // Returns whether the loop is idle now: nothing shown, nothing queued, the output already
  // blank. It then sleeps options_.idleWake at a time (the watchdog sees it alive) until a frame
  // comes.
  bool tick(int64_t vsyncNs) XRC_REQUIRES(latchMutex_);
  // Latched on demand: tick() for every vsync from nextLatchNs_ up to `nowNs`.
  void latchDueLocked(int64_t nowNs) XRC_REQUIRES(latchMutex_);
  void commitToScheduler(CommittedFrame frame) XRC_EXCLUDES(stateMutex_);
  void wakeFromIdle();
  void presentOutput();  // display thread: the output image, as last composed, to the output
  // Display thread: what `frames` show at `vsyncNs` (culling, reprojection), counted in the stats.
  // The caller sets shown_ from it once it stands for the output.
  Composition plan(const std::vector<CommittedFrame>& frames, int64_t vsyncNs);
  // Display thread: records and submits `composition` of `frames` into the output image.
  Status compose(const std::vector<CommittedFrame>& frames, const Composition& composition);
  // Display thread: one graphics-queue submission that waits for `copyValue`, runs `record` and
  // signals the compose timeline. It first waits for the previous submission (waitSubmitted).
  Status submit(uint64_t copyValue, const std::function<void(VkCommandBuffer)>& record, uint64_t& composeValue);
  // Display thread: waits for the outstanding submission, if any, and drops what it kept alive.
  Status waitSubmitted();
  // Every mip level and layer, tightly packed (mip-major, then layer-major).
  Result<Pixels> readImage(VkImage image, VkFormat format, uint32_t width, uint32_t height, uint32_t layers,
                           uint32_t mips, VkImageLayout restingLayout, uint64_t copyValue, uint64_t& composeValue);
  void adjustHolds(const CommittedFrame& frame, int delta) XRC_REQUIRES(stateMutex_);
  // A runtime image neither shown, nor newest, nor pinned, leased round-robin; none if all are.
  std::optional<RuntimeImageLease> freeImageLocked(LocalSwapchain& swapchain) XRC_REQUIRES(stateMutex_);
  void release(const std::vector<CommittedFrame>& frames) XRC_REQUIRES(stateMutex_);

  gpu::GpuDevice& gpu_;
  gpu::Timeline& copyTimeline_;
  FrameScheduler& scheduler_;
  Headset& headset_;
  Output& output_;
  DisplayCoreOptions options_;
  std::atomic<uint64_t> displayFrames_{0};
  std::atomic<uint64_t> loopIterations_{0};
  std::atomic<uint64_t> layerViewsCulled_{0};
  std::atomic<uint64_t> displayFramesGpuLate_{0};
  std::atomic<uint64_t> displayFramesComposed_{0};

  // Graphics-queue work of the display thread: composition and readbacks. Display thread only.
  std::unique_ptr<gpu::SerialSubmitter> submitter_;
  std::vector<CommittedFrame> inFlight_;                       // display thread only: read by the pending submission
  std::optional<LayerRenderer> renderer_;                      // display thread only
  VkImageLayout outputLayout_ = VK_IMAGE_LAYOUT_UNDEFINED;     // display thread only
  std::vector<ShownLayer> shown_ XRC_GUARDED_BY(latchMutex_);  // the last display frame's
  uint64_t composedValue_ = 0;                                 // display thread only: last compose's
  bool outputBlank_ XRC_GUARDED_BY(latchMutex_) = false;       // the last display frame showed nothing
  // Whether every display frame is composed (options_.composeEveryFrame, or an output that shows
  // them); otherwise the last one waits in unreadFrame_ until a read composes it, and display
  // frames are latched on demand (latchOnDemand_).
  bool composeEveryFrame_ = true;
  bool latchOnDemand_ = false;
  struct UnreadFrame {
    std::vector<CommittedFrame> frames;  // their runtime images held (displayHolds) until the next display frame
    Composition composition;
    bool composed = false;
  };
  std::optional<UnreadFrame> unreadFrame_ XRC_GUARDED_BY(latchMutex_);
  // Serializes latching display frames (tick()), on the display thread or, latched on demand, on
  // any thread that asks. Taken before stateMutex_, never after it.
  mutable Mutex latchMutex_;
  // Latched on demand: the next vsync to latch; 0 while the display is idle (the next commit
  // restarts it).
  int64_t nextLatchNs_ XRC_GUARDED_BY(latchMutex_) = 0;

  mutable Mutex reprojectedMutex_;
  std::map<uint32_t, uint64_t> reprojected_ XRC_GUARDED_BY(reprojectedMutex_);  // client id -> display frames
  // Guards every runtime image's bookkeeping (LocalSwapchain::PerImage). Taken before the
  // scheduler's own mutex, never after it.
  Mutex stateMutex_;
  std::condition_variable_any stateChanged_;
  // The display loop sleeps (nothing to show); the next commitFrame wakes it.
  bool idle_ XRC_GUARDED_BY(stateMutex_) = false;

  boost::asio::io_context io_;
  boost::asio::steady_timer timer_{io_};
  std::thread thread_;
  int64_t nextTickNs_ = 0;       // display thread only
  uint64_t tickGeneration_ = 0;  // display thread only: which armed wait is the live one
  std::atomic<bool> stalledForTest_{false};
};

}  // namespace xrc::display
