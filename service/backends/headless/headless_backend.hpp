// The embedded default backend: a simulated stereo HMD. Runtime swapchains are plain device
// images; a display thread ticks at the refresh rate from the steady clock, asks the
// FrameScheduler what each vsync shows, and has the shared layer renderer (display/) compose it
// into an output image that can be read back and shown in a window.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <thread>

#include "../../compositor/frame_scheduler.hpp"
#include "../../display/layer_renderer.hpp"
#include "../../gpu/gpu_device.hpp"
#include "../../gpu/timeline.hpp"
#include "../../input/simulated_controllers.hpp"
#include "../../present/display_presenter.hpp"
#include "../backend.hpp"

namespace xrc {

struct HeadlessOptions {
  uint32_t viewCount = 2;
  uint32_t viewWidth = 1440;
  uint32_t viewHeight = 1600;
  double refreshHz = 90.0;
  float eyeHeight = 1.6f;  // meters above the stage floor; the head stays there, looking down -z
  float ipd = 0.063f;      // meters between the two eyes (stereo)
  // The head turns left and right (yaw, kSwayAmplitude radians every kSwayPeriod), a function of
  // the time asked for: lets tests tell a pose located at one time from another.
  bool headSway = false;
  // What the simulated display offers, preferred first. Its environment is black, so the three
  // modes compose alike; the mode of each display frame shows in the status.
  std::vector<EnvironmentBlendMode> environmentBlendModes{EnvironmentBlendMode::opaque};
  // A projection view shown at a head orientation other than the one it was rendered for (a late
  // or reused frame, or one rendered for another pose) is rotated to the display's (rotational
  // reprojection, as Monado's and SteamVR's timewarp); off: drawn as rendered.
  bool reprojection = true;
  // Where each composition is also presented (the window output); outlives the backend.
  present::DisplayPresenter* presenter = nullptr;
  // With nothing to show the display loop sleeps, waking this often: at least twice per health
  // check, which wants to see it go round (the watchdog), and for the window output.
  std::chrono::milliseconds idleWake{500};
};

class HeadlessSwapchain;

class HeadlessBackend final : public Backend {
 public:
  static Result<std::unique_ptr<HeadlessBackend>> create(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline,
                                                         FrameScheduler& scheduler, const HeadlessOptions& options);
  HeadlessBackend(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline, FrameScheduler& scheduler,
                  const HeadlessOptions& options);
  ~HeadlessBackend() override;

  const SystemInfo& systemInfo() const override { return system_; }
  DisplayClock clock() const override { return clock_; }
  uint64_t displayFrames() const override { return displayFrames_.load(); }
  uint64_t loopIterations() const override { return loopIterations_.load(); }
  uint64_t layerViewsCulled() const override { return layerViewsCulled_.load(); }
  uint64_t displayFramesGpuLate() const override { return displayFramesGpuLate_.load(); }
  uint64_t framesReprojected(uint32_t clientId) const override XRC_EXCLUDES(reprojectedMutex_);
  // The simulated head rests at LOCAL's origin; with `headSway` it turns to and fro about y.
  std::optional<Pose> knownHeadPose(int64_t timeNs) const override { return headPoseAt(timeNs); }
  void locateHead(int64_t timeNs, std::function<void(const Pose&)> done) override { done(headPoseAt(timeNs)); }
  LocalSpace localSpace() const override XRC_EXCLUDES(localMutex_);
  // LOCAL moves to the head: its position, and its heading (yaw) only, so LOCAL stays level.
  Status recenter() override XRC_EXCLUDES(localMutex_);
  // Two simulated controllers (SimulatedControllers), driven by xr-compositorctl input.
  InputSnapshot input(int64_t) const override { return controllers_.snapshot(); }
  Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) override {
    return controllers_.haptic(hand, output, pulse);
  }
  Status stopHaptic(uint32_t hand, const std::string& output) override { return controllers_.stopHaptic(hand, output); }
  std::array<HapticStatus, kHandCount> haptics() const override { return controllers_.haptics(); }
  SimulatedControllers* simulatedControllers() override { return &controllers_; }

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
  std::optional<present::PresenterStats> windowOutput() const override {
    if (options_.presenter == nullptr) return std::nullopt;
    return options_.presenter->stats();
  }

 private:
  Pose headPoseAt(int64_t timeNs) const;
  Status init();
  // Display thread: arms the timer for nextTickNs_ (a wait armed before is ignored).
  void scheduleTick();
  // Returns whether the loop is idle now: nothing shown, nothing queued, the output already
  // blank. It then sleeps options_.idleWake at a time (the watchdog sees it alive) until a frame
  // comes.
  bool tick(int64_t vsyncNs);
  void wakeFromIdle();
  void presentOutput();  // display thread: the output image, as last composed, to the window
  Status compose(const std::vector<CommittedFrame>& frames, int64_t vsyncNs);
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
  std::optional<RuntimeImageLease> freeImageLocked(HeadlessSwapchain& swapchain) XRC_REQUIRES(stateMutex_);
  void release(const std::vector<CommittedFrame>& frames) XRC_REQUIRES(stateMutex_);

  gpu::GpuDevice& gpu_;
  gpu::Timeline& copyTimeline_;
  FrameScheduler& scheduler_;
  HeadlessOptions options_;
  SystemInfo system_;
  SimulatedControllers controllers_;
  DisplayClock clock_;
  std::atomic<uint64_t> displayFrames_{0};
  std::atomic<uint64_t> loopIterations_{0};
  std::atomic<uint64_t> layerViewsCulled_{0};
  std::atomic<uint64_t> displayFramesGpuLate_{0};

  // Graphics-queue work of the display thread: composition and readbacks.
  std::unique_ptr<gpu::Timeline> composeTimeline_;
  vk::CommandPool pool_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;  // display thread only
  vk::Fence fence_;
  bool submitted_ = false;                // display thread only: fence_ is pending
  std::vector<CommittedFrame> inFlight_;  // display thread only: read by the pending submission
  vk::Memory outputMemory_;
  vk::Image output_;
  vk::ImageView outputView_;
  std::optional<display::LayerRenderer> renderer_;          // display thread only
  VkImageLayout outputLayout_ = VK_IMAGE_LAYOUT_UNDEFINED;  // display thread only
  std::vector<ShownLayer> shown_;                           // display thread only: last compose
  uint64_t composedValue_ = 0;                              // display thread only: last compose's
  bool outputBlank_ = false;                                // display thread only: last compose showed nothing

  // Guards every runtime image's bookkeeping (HeadlessSwapchain::PerImage). Taken before the
  // scheduler's own mutex, never after it.
  mutable Mutex reprojectedMutex_;
  std::map<uint32_t, uint64_t> reprojected_ XRC_GUARDED_BY(reprojectedMutex_);  // client id -> display frames
  mutable Mutex localMutex_;
  std::optional<LocalSpace> local_ XRC_GUARDED_BY(localMutex_);  // none: never recentered
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

}  // namespace xrc
