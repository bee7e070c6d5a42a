// The "runtime" behind the daemon (think wlroots' backends): it owns runtime swapchains, the
// display and its clock. The compositor core never knows which backend it drives.
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../present/display_presenter.hpp"
#include "xrc/input.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/pose.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/readback.hpp"
#include "xrc/result.hpp"

namespace xrc {

namespace gpu {
struct ComposableImage;
}

struct ViewInfo {
  uint32_t recommendedWidth = 0, recommendedHeight = 0;
  uint32_t maxWidth = 0, maxHeight = 0;
  Pose eyeInHead;
  std::array<float, 4> fov{};  // left right up down (radians)
  // The display's own masks (its runtime's XR_KHR_visibility_mask); empty: the whole rectangle.
  std::vector<VisibilityMask> visibilityMasks;
};

struct SystemInfo {
  std::string backendName;
  std::vector<ViewInfo> views;
  double refreshHz = 90.0;  // at start; Backend::refreshHz() follows a runtime that changes it
  Pose localInStage;        // see SystemDescription in xrc.capnp
  float stageBoundsWidth = 0, stageBoundsDepth = 0;
  // Swapchain formats the backend's runtime takes; empty: whatever the device can share.
  std::vector<int64_t> runtimeFormats;
  // The display's environment blend modes, preferred first.
  std::vector<EnvironmentBlendMode> environmentBlendModes{EnvironmentBlendMode::opaque};
};

// The formats clients may use: the device's, narrowed to the runtime's where it names them.
inline std::vector<int64_t> usableFormats(const std::vector<int64_t>& deviceFormats, const SystemInfo& system) {
  if (system.runtimeFormats.empty()) return deviceFormats;
  std::vector<int64_t> out;
  for (int64_t f : deviceFormats) {
    for (int64_t r : system.runtimeFormats) {
      if (f == r) out.push_back(f);
    }
  }
  return out;
}

// Display vsyncs at origin + k * period on CLOCK_MONOTONIC (ns).
struct DisplayClock {
  int64_t originNs = 0;
  int64_t periodNs = 0;
  // How long before a vsync the display takes the client frames it shows then: 0 where the
  // display composes at the vsync itself (headless); over another runtime, the daemon must hand
  // its frame over well before the runtime displays it, so clients' frames are due that much
  // earlier.
  int64_t latchLeadNs = 0;
  // First vsync strictly after `t`.
  int64_t nextVsyncAfter(int64_t t) const {
    if (t < originNs) return originNs;
    return originNs + ((t - originNs) / periodNs + 1) * periodNs;
  }
  // The lead as the display keeps it: a latch reported after its vsync is at the vsync.
  int64_t leadNs() const { return latchLeadNs > 0 ? latchLeadNs : 0; }
  // First vsync whose frames are latched strictly after `t`.
  int64_t nextLatchedVsyncAfter(int64_t t) const { return nextVsyncAfter(t + leadNs()); }
};

class RuntimeSwapchain {
 public:
  virtual ~RuntimeSwapchain() = default;
  virtual const VkImageCreateInfo& createInfo() const = 0;
  virtual uint32_t imageCount() const = 0;
  // A pass-through backend with a mirror (layer_mirror.hpp): the copy of the newest content it
  // keeps for the mirror, mip 0 of every layer, resting in the format's attachment layout; else
  // null.
  virtual const gpu::ComposableImage* mirrorCopy() const { return nullptr; }
  // Its images allow a copy on the host (VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT, docs/SYNC.md, host
  // mode step 6); another runtime's images never do.
  virtual bool hostTransfer() const { return false; }
};

// What a copy into a runtime image must wait for and where it goes (xrAcquire + xrWait).
struct RuntimeImageLease {
  uint32_t index = 0;
  VkImage image = VK_NULL_HANDLE;
  VkSemaphore waitSemaphore = VK_NULL_HANDLE;  // timeline; null: nothing to wait for
  uint64_t waitValue = 0;
  // The queue family that owns the (exclusive) image after the copy. When it is not the copy
  // queue's, the copy ends with the release half of an ownership transfer to it, and the backend
  // submits the acquire half on that family's queue. IGNORED: whatever queue the copy ran on.
  uint32_t ownerFamily = VK_QUEUE_FAMILY_IGNORED;
  // The image has VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT: a copy into it may run on the host, once
  // waitSemaphore has reached waitValue, writing it in vk::attachmentLayout of its format.
  bool hostTransfer = false;
};

// LOCAL space as the backend has it now; `changes` counts the moves since the daemon started.
struct LocalSpace {
  Pose localInStage;
  uint32_t changes = 0;
};

struct LayerView {
  std::shared_ptr<RuntimeSwapchain> swapchain;
  uint32_t swapchainId = 0;
  uint32_t runtimeIndex = 0;
  uint64_t releaseOrdinal = 0;
  uint64_t copyValue = 0;  // copy timeline value that completes the content
  int32_t x = 0, y = 0, width = 0, height = 0;
  uint32_t arrayIndex = 0;
  uint32_t eye = 0;  // projection: the view this sub-image is for
  Pose pose;         // projection: the view's pose in STAGE space, as the client rendered it
  std::array<float, 4> fov{};
};

// What a cylinder, equirect or cube layer adds to its pose and sub-image (xrc.capnp's meaning).
struct LayerShape {
  uint32_t eyeVisibility = 0;                    // XrEyeVisibility
  float radius = 0;                              // cylinder, equirect
  float centralAngle = 0, aspectRatio = 1;       // cylinder
  std::array<float, 2> scale{1, 1}, bias{0, 0};  // equirect
};

// XR_KHR_composition_layer_color_scale_bias: texel * scale + bias, before blending.
struct LayerColor {
  std::array<float, 4> scale{1, 1, 1, 1}, bias{0, 0, 0, 0};
  bool identity() const { return scale == std::array<float, 4>{1, 1, 1, 1} && bias == std::array<float, 4>{}; }
};

// A projection view's depth sub-image (XR_KHR_composition_layer_depth) and its range.
struct LayerDepth {
  LayerView view;
  float minDepth = 0, maxDepth = 1, nearZ = 0.1f, farZ = 100.f;
};

struct CommittedLayer {
  enum class Kind { projection, quad, cylinder, equirect, cube } kind = Kind::projection;
  uint64_t flags = 0;
  std::vector<LayerView> views;  // projection: one per view; the others: one
  // Projection: per view, its depth when the client gave one for every view (else empty).
  std::vector<LayerDepth> depth;
  float quadWidth = 0, quadHeight = 0;
  std::vector<float> quadOrientation, quadPosition;  // quad, cylinder, equirect, cube: the pose in STAGE
  LayerShape shape;                                  // cylinder, equirect, cube
  std::optional<LayerColor> color;                   // the client gave a color scale and bias
};

// A committed frame's layers, fixed once the frame is committed and shared by every copy of it:
// the scheduler's, each display frame's selection of the frames shown, a composition in flight.
// Such copies are made at every display frame for every client shown (FrameScheduler::select);
// copying the lists themselves there was heap work per client at every vsync.
class SharedLayers {
 public:
  SharedLayers() = default;
  explicit SharedLayers(std::vector<CommittedLayer> layers)
      : list_(layers.empty() ? nullptr : std::make_shared<const std::vector<CommittedLayer>>(std::move(layers))) {}

  const CommittedLayer* begin() const { return list_ ? list_->data() : nullptr; }
  const CommittedLayer* end() const { return list_ ? list_->data() + list_->size() : nullptr; }
  size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }

 private:
  std::shared_ptr<const std::vector<CommittedLayer>> list_;  // null: none
};

struct CommittedFrame {
  uint32_t clientId = 0;
  uint64_t frameId = 0;
  int64_t displayTimeNs = 0;  // what the client asked for (informational)
  int64_t targetNs = 0;       // the vsync the daemon's pacing gave this frame: shown no earlier
  int64_t committedNs = 0;    // when the frame was complete (for latency)
  EnvironmentBlendMode environmentBlendMode = EnvironmentBlendMode::opaque;  // validated: the display's
  SharedLayers layers;
};

class SimulatedControllers;

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const SystemInfo& systemInfo() const = 0;
  // Any thread: the display's refresh rate now (a runtime under the daemon may change it, and
  // says so only once its frames run).
  virtual double refreshHz() const { return systemInfo().refreshHz; }
  virtual DisplayClock clock() const = 0;
  virtual uint64_t displayFrames() const = 0;
  // Layer views skipped because an opaque projection view above filled their eye.
  virtual uint64_t layerViewsCulled() const { return 0; }
  // Display frames whose composition the GPU had not finished by the next vsync (it waited for
  // copies of late client rendering, or the GPU was busy): shown late, though the display loop
  // itself ran in time. 0 where the backend cannot tell.
  virtual uint64_t displayFramesGpuLate() const { return 0; }
  virtual uint64_t displayFramesComposed() const { return 0; }
  // Any thread: display frames in which the display rotated one of the client's projection views
  // to the head orientation of that vsync (0 where the backend does not reproject).
  virtual uint64_t framesReprojected(uint32_t /*clientId*/) const { return 0; }
  // Advances while the display loop is alive, also when it has nothing to display (a backend
  // waiting for its runtime); what the watchdog checks.
  virtual uint64_t loopIterations() const { return displayFrames(); }
  // Any thread, without waiting: the head's (predicted) pose in STAGE space at `timeNs`, when
  // the backend can tell at once (the headless head; a time the openxr display loop located).
  virtual std::optional<Pose> knownHeadPose(int64_t timeNs) const = 0;
  // Any thread: the same, asking the backend's runtime when it has to; `done` runs on a backend
  // thread, or on the caller's when the pose is known.
  virtual void locateHead(int64_t timeNs, std::function<void(const Pose&)> done) = 0;
  // Any thread: LOCAL as of now (systemInfo().localInStage until it first moves).
  virtual LocalSpace localSpace() const = 0;
  // Any thread, without waiting: the eye poses (in the head) and fovs as of the latest display
  // frame, where the display gives them per frame; empty: the system description's hold.
  virtual std::vector<EyeView> views() const { return {}; }
  // Any thread, without waiting: the display's controllers as of now, their poses for `timeNs`
  // where the backend can predict them (not present where the display has no controllers).
  virtual InputSnapshot input(int64_t timeNs) const {
    (void)timeNs;
    return {};
  }
  // Any thread: haptic feedback on a hand's output ("/output/haptic").
  virtual Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
    (void)hand, (void)output, (void)pulse;
    return makeError(ErrorCode::unsupported, "the {} backend has no controllers to vibrate", systemInfo().backendName);
  }
  virtual Status stopHaptic(uint32_t hand, const std::string& output) {
    (void)hand, (void)output;
    return makeError(ErrorCode::unsupported, "the {} backend has no controllers to vibrate", systemInfo().backendName);
  }
  virtual std::array<HapticStatus, kHandCount> haptics() const { return {}; }
  // The controllers an operator drives (Control.setInput); null where they are real or absent.
  virtual SimulatedControllers* simulatedControllers() { return nullptr; }

  // Any thread: moves LOCAL to the head's current position and heading (a recenter).
  virtual Status recenter() {
    return makeError(ErrorCode::unsupported, "the {} backend's runtime owns its spaces; recenter there",
                     systemInfo().backendName);
  }

  // Any thread. `info` is the shared images' create info; the backend adds what it needs.
  virtual Result<std::shared_ptr<RuntimeSwapchain>> createSwapchain(const VkImageCreateInfo& info) = 0;
  // Frame worker thread: xrAcquireSwapchainImage + xrWaitSwapchainImage, bounded by `timeout`.
  virtual Result<RuntimeImageLease> acquireImage(RuntimeSwapchain& swapchain, std::chrono::milliseconds timeout) = 0;
  // Any thread: a lease that needs no waiting, or none (then acquireImage on the frame worker).
  // Lets the RPC thread copy a release at once instead of handing it to the frame worker.
  virtual std::optional<RuntimeImageLease> tryAcquireImage(RuntimeSwapchain& /*swapchain*/) { return std::nullopt; }
  // The thread that leased: xrReleaseSwapchainImage. The copy signals copyValue on the copy timeline.
  virtual void releaseImage(RuntimeSwapchain& swapchain, uint32_t index, uint64_t copyValue) = 0;
  // The thread that leased: a leased image whose copy failed goes back unchanged.
  virtual void abandonImage(RuntimeSwapchain& /*swapchain*/, uint32_t /*index*/) {}

  // The session's frame path (RPC thread or frame worker): the client's frame is complete (all
  // its releases are submitted).
  virtual void commitFrame(CommittedFrame frame) = 0;
  // Any thread: the client is gone; its frames leave the display.
  virtual void removeClient(uint32_t clientId) = 0;

  // Readbacks for tests and snapshots; `done` runs on a backend thread. readRuntimeImage returns
  // false (and never calls `done`) when image `index` no longer holds the newest content, the
  // copy that signalled `copyValue`: a later release replaced it; look the newest up again.
  virtual bool readRuntimeImage(std::shared_ptr<RuntimeSwapchain> swapchain, uint32_t index, uint64_t copyValue,
                                std::function<void(Result<Pixels>)> done) = 0;
  virtual void readDisplay(std::function<void(Result<DisplaySnapshot>)> done) = 0;

  virtual void start() = 0;
  virtual void stop() = 0;

  // Test hook (--test-hooks, SIGUSR2): while stalled the display loop composes nothing and
  // counts no frames, as if it hung; the health monitor must notice. Backends without a loop of
  // their own ignore it.
  virtual void setStalledForTest(bool) {}

  // The window output's state, where the display is also shown in a window.
  virtual std::optional<present::PresenterStats> windowOutput() const { return std::nullopt; }
};

}  // namespace xrc
