// client-lib: what applications link to render through xr-compositord.
//
//   auto system = xrc::client::describe(socket);          // pick the daemon's VkPhysicalDevice
//   ... create VkInstance/VkDevice with requiredDeviceExtensions() ...
//   auto conn = xrc::client::Connection::connect({...});  // negotiates version, device, sync mode
//   auto sc = conn.value()->createSwapchain({...});       // imports the daemon's shared images
//   loop: waitFrame -> beginFrame -> acquire/wait/render/release -> endFrame
//
// A Connection may be used from any thread: the library runs the connection on its own I/O
// thread. Calls on one Swapchain must not overlap (OpenXR's rule), and the library submits to
// the application's queue only inside acquire/release, which the application must not use
// concurrently with them (OpenXR's rule too).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xrc/input.hpp"
#include "xrc/pose.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/result.hpp"

namespace xrc::client {

struct ViewDescription {
  uint32_t recommendedWidth = 0, recommendedHeight = 0, maxWidth = 0, maxHeight = 0;
  Pose eyeInHead;                                              // the view relative to the head
  std::array<float, 4> fov{-0.785f, 0.785f, 0.785f, -0.785f};  // left right up down (radians)
  // 1.9: the display's own visibility masks (validated); empty: the whole rectangle is visible.
  std::vector<VisibilityMask> visibilityMasks;
};

struct SystemDescription {
  std::string daemonVersion;
  std::string backend;
  std::vector<ViewDescription> views;
  float refreshHz = 0;
  std::vector<VkFormat> swapchainFormats;
  DeviceFacts device;
  uint32_t maxLayers = 0, maxSwapchains = 0, maxArrayLayers = 0;
  bool daemonHasExternalSemaphoreFd = false;
  bool daemonHasTimelineSemaphoreFd = false;  // 1.11
  Pose localInStage;                          // LOCAL space's origin in STAGE space (the tracking origin, floor level)
  float stageBoundsWidth = 0, stageBoundsDepth = 0;  // meters; 0: unknown
  // The display's, preferred first; endFrame may ask for any of them (empty: opaque only).
  std::vector<EnvironmentBlendMode> environmentBlendModes;
  uint16_t protocolMinor = 0;  // the daemon's (0: before 1.4)
};

// Asks the daemon for its system description (including its Vulkan device UUIDs) without
// starting a session. `socketPath` empty: $XR_COMPOSITOR_SOCKET, else the default path.
Result<SystemDescription> describe(const std::string& socketPath = {});

// Instance extensions the app's VkInstance must enable (the KHR forms of the Vulkan 1.1 queries
// the library makes, so that a Vulkan 1.0 instance works too).
std::vector<const char*> requiredInstanceExtensions();
// Device extensions the app's VkDevice must enable: external memory fd (and what it needs on a
// 1.0 device) always, external semaphore fd when the device has it (then the sync mode can be
// `binary`), and VK_KHR_timeline_semaphore when it has that too.
std::vector<const char*> requiredDeviceExtensions(VkInstance instance, VkPhysicalDevice physicalDevice);
// Whether the device can share timeline semaphores with the daemon: then an app that enables
// VkPhysicalDeviceTimelineSemaphoreFeatures::timelineSemaphore (or Vulkan 1.2's) and says so in
// VulkanBinding::timelineSemaphores gets the `timeline` sync mode.
bool timelineSemaphoresAvailable(VkInstance instance, VkPhysicalDevice physicalDevice);
// The VkPhysicalDevice among `instance`'s whose UUIDs match the daemon's, or VK_NULL_HANDLE.
VkPhysicalDevice findDaemonDevice(VkInstance instance, const SystemDescription& system);

struct VulkanBinding {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queueFamilyIndex = 0;
  VkQueue queue = VK_NULL_HANDLE;
  // The device enables the timelineSemaphore feature (see timelineSemaphoresAvailable()).
  bool timelineSemaphores = false;
};

struct ConnectOptions {
  std::string socketPath;  // empty: $XR_COMPOSITOR_SOCKET, else the default path
  std::string applicationName;
  VulkanBinding vulkan;
  // An overlay session (XR_EXTX_overlay): always visible, drawn over the primary application,
  // stacked by placement (higher on top, 0..kMaxOverlayPlacement). A normal session is shown
  // only while it is the primary.
  bool overlay = false;
  uint32_t overlayPlacement = 0;
  // 1.18: each frame's wait is answered as its endFrame arrives, with the time the frame starts,
  // and waitFrame sleeps to that time itself: the daemon wakes once per frame instead of twice.
  // Visibility, focus, LOCAL and input changed before the wake still reach the answer (a
  // watchState call kept waiting, docs/PROTOCOL.md). Only where the display allows it (headless);
  // elsewhere the daemon answers at the wake whatever is asked. XRC_ANSWER_WAITS_AT_ONCE=0 or =1
  // in the environment decides over this.
  bool answerWaitsAtOnce = true;
  uint16_t protocolMajor = kProtocolMajor;  // for tests of version negotiation
  uint16_t protocolMinor = kProtocolMinor;
};

struct FrameTiming {
  uint64_t frameId = 0;
  int64_t predictedDisplayTimeNs = 0;
  int64_t predictedDisplayPeriodNs = 0;
  bool shouldRender = true;
  Pose headInStage;  // predicted head (VIEW space) pose at predictedDisplayTimeNs
  bool visible = true, focused = true;
  bool stopping = false;           // the daemon is shutting down: end the session
  Pose localInStage;               // LOCAL as of this answer
  uint32_t localSpaceChanges = 0;  // LOCAL moves (recenters) since the daemon started
  InputSnapshot input;             // the controllers, when this session has the input focus (1.7)
  std::vector<EyeView> views;      // per-frame views (1.7); empty: the system description's
  int64_t wakeTimeNs = 0;          // when the wait was due (1.18; 0 from older daemons)
};

using Pose = xrc::Pose;

struct SubImage {
  uint32_t swapchainId = 0;
  int32_t x = 0, y = 0, width = 0, height = 0;
  uint32_t arrayIndex = 0;
};

struct ProjectionView {
  Pose pose;
  float fov[4] = {-0.785f, 0.785f, 0.785f, -0.785f};  // left right up down (radians)
  SubImage subImage;
  bool hasDepth = false;
  SubImage depthSubImage;
  float minDepth = 0, maxDepth = 1, nearZ = 0.1f, farZ = 100.f;
};

struct Layer {
  // cylinder, equirect, cube: daemons of protocol 1.6 and later (SystemDescription::protocolMinor).
  // cube: only quadPose's orientation is used.
  enum class Kind { projection, quad, cylinder, equirect, cube } kind = Kind::projection;
  uint64_t flags = 0;
  std::vector<ProjectionView> views;  // projection
  SubImage quadSubImage;              // quad, cylinder, equirect: the image and where it is; cube: the cube
                                      // map swapchain (whole extent) and the cube's array index
  Pose quadPose;
  float quadWidth = 0, quadHeight = 0;        // quad
  uint32_t eyeVisibility = 0;                 // cylinder, equirect: XrEyeVisibility
  float radius = 0;                           // cylinder, equirect: 0 or +infinity: infinitely far
  float centralAngle = 0, aspectRatio = 1;    // cylinder
  float scale[2] = {1, 1}, bias[2] = {0, 0};  // equirect (see xrc.capnp)
  // Any kind (protocol 1.9, XR_KHR_composition_layer_color_scale_bias): each texel becomes
  // texel * colorScale + colorBias (r g b a) before it is blended.
  bool hasColor = false;
  float colorScale[4] = {1, 1, 1, 1}, colorBias[4] = {0, 0, 0, 0};
};

class Connection;

class Swapchain {
 public:
  ~Swapchain();
  Swapchain(const Swapchain&) = delete;
  Swapchain& operator=(const Swapchain&) = delete;

  uint32_t id() const;
  const VkImageCreateInfo& imageCreateInfo() const;
  const std::vector<VkImage>& images() const;

  // OpenXR semantics. acquire returns the next image (round-robin); before handing out an image
  // again it waits for the daemon's answer to that image's previous release.
  Result<uint32_t> acquire();
  // Waits until the oldest acquired image may be rendered to (its layout is the attachment
  // layout); bounded by `timeout`.
  Status wait(std::chrono::nanoseconds timeout);
  // Hands the oldest waited image to the daemon. Returns without waiting for the daemon: the
  // release leaves with the connection's next message (endFrame, normally; docs/SYNC.md).
  Status release();

  struct Impl;
  explicit Swapchain(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> connect(const ConnectOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const SystemDescription& system() const;
  SyncMode syncMode() const;
  uint32_t clientId() const;

  Result<std::unique_ptr<Swapchain>> createSwapchain(const SwapchainRequest& request);
  // The one blocking round trip per frame: returns when the daemon's pacing says so.
  Result<FrameTiming> waitFrame();
  Status beginFrame(uint64_t frameId);
  // Sent without waiting; an error the daemon answers is returned by a later call.
  Status endFrame(uint64_t frameId, int64_t displayTimeNs, const std::vector<Layer>& layers,
                  EnvironmentBlendMode blendMode = EnvironmentBlendMode::opaque);

  // The head's pose in STAGE space at `timeNs` (one round trip; waitFrame's answer already has
  // it for the predicted display time).
  Result<Pose> locateHead(int64_t timeNs);
  // Vibrates a hand's output ("/output/haptic"; hand 0 left, 1 right), or stops it (1.7). Only
  // the focused session may.
  Status applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse);
  Status stopHaptic(uint32_t hand, const std::string& output);
  // Processes what the daemon sent meanwhile without blocking, and reports a lost connection
  // (daemon gone) as an error. For event loops that must notice the daemon leaving while idle.
  Status poll();
  // True once the connection to the daemon is gone; every later call fails.
  bool lost() const;

  // Blocking round trips made so far (for benchmarks: the goal is one per frame).
  uint64_t blockingRoundTrips() const;
  // Writes to the daemon's socket made so far (for benchmarks: each one wakes the daemon unless
  // it is awake anyway; a steady frame loop makes one per frame).
  uint64_t socketWrites() const;
  // Swapchain acquires whose GPU submission the swapchain's previous release made already (the
  // image free of the daemon by then): such an acquire submits nothing, and the image's wait
  // usually finds its transition done.
  uint64_t acquiresPrepared() const;

  struct Impl;
  explicit Connection(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace xrc::client
