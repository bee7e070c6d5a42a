// Rules both ends of the wire agree on, as pure logic (no Vulkan, no Cap'n Proto) so that unit
// tests cover them directly: negotiation, swapchain request validation, the per-image
// acquire/wait/release state machine, and layer validation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xrc/result.hpp"

namespace xrc {

inline constexpr uint16_t kProtocolMajor = 1;
inline constexpr uint16_t kProtocolMinor = 22;  // = protocolMinor in xrc.capnp (checked)

// Documented limits (docs/PROTOCOL.md).
inline constexpr uint32_t kMaxLayersPerFrame = 16;
// Releases one endFrame may carry (1.5); a client with more sends the rest as release calls.
inline constexpr uint32_t kMaxReleasesPerEndFrame = 64;
inline constexpr uint32_t kMaxSwapchainsPerSession = 64;
inline constexpr uint32_t kMaxArrayLayers = 16;
inline constexpr uint32_t kMaxExtent = 8192;
// Overlay sessions stack by placement 0..kMaxOverlayPlacement (higher on top).
inline constexpr uint32_t kMaxOverlayPlacement = 1000;
// A client's name is kept to this many bytes (cut on a UTF-8 character boundary).
inline constexpr size_t kMaxClientNameBytes = 128;

enum class SyncMode { host, binary, timeline };
const char* syncModeName(SyncMode mode);

// XrEnvironmentBlendMode's values (OpenXR 1.0), repeated so the rules need no OpenXR header.
enum class EnvironmentBlendMode : uint32_t { opaque = 1, additive = 2, alphaBlend = 3 };
const char* blendModeName(EnvironmentBlendMode mode);  // "opaque", "additive", "alpha_blend"
// "opaque,additive": at least one, each at most once, preferred first.
Result<std::vector<EnvironmentBlendMode>> parseBlendModes(const std::string& text);
// Whether `mode` is among `supported` (empty: opaque only, as before protocol 1.3).
bool blendModeSupported(const std::vector<EnvironmentBlendMode>& supported, EnvironmentBlendMode mode);

using Uuid = std::array<uint8_t, 16>;
std::string uuidToString(const Uuid& uuid);

struct DeviceFacts {
  Uuid deviceUuid{};
  Uuid driverUuid{};
  std::string name;
  bool externalSemaphoreFd = false;
  // OPAQUE_FD timeline semaphores can be exported and imported (and, on a client, its VkDevice
  // enables the timelineSemaphore feature).
  bool timelineSemaphoreFd = false;
};

struct NegotiationInput {
  uint16_t clientMajor = 0;
  uint16_t clientMinor = 0;
  DeviceFacts client;
  DeviceFacts daemon;
  // Daemon policy: force a mode (e.g. --sync-mode host on a GPU that could do binary).
  std::optional<SyncMode> forcedMode;
};

// Major must match; device and driver UUIDs must match. Unless forced: timeline where both sides
// can (and the client speaks 1.11), else binary where both can, else host.
Result<SyncMode> negotiate(const NegotiationInput& in);
// "host", "binary", "timeline".
std::optional<SyncMode> parseSyncMode(const std::string& text);

// Timeline mode: a release's rendering value must rise above every earlier one of its
// swapchain (the copy signals copying_done at it; a timeline never goes back).
Status checkRenderingValue(uint64_t lastValue, uint64_t value);

// XrSwapchainUsageFlags bits (OpenXR 1.0), repeated here so the rules need no OpenXR header.
namespace xr_usage {
inline constexpr uint64_t colorAttachment = 0x1;
inline constexpr uint64_t depthStencilAttachment = 0x2;
inline constexpr uint64_t unorderedAccess = 0x4;
inline constexpr uint64_t transferSrc = 0x8;
inline constexpr uint64_t transferDst = 0x10;
inline constexpr uint64_t sampled = 0x20;
inline constexpr uint64_t mutableFormat = 0x40;
inline constexpr uint64_t inputAttachment = 0x80;
inline constexpr uint64_t all = 0xff;
}  // namespace xr_usage

// XrSwapchainCreateFlags bits the daemon implements (protocol 1.6).
namespace swapchain_flags {
// One image, acquired and released once; its content is shown until the swapchain goes.
inline constexpr uint64_t staticImage = 0x2;
}  // namespace swapchain_flags

// XrCompositionLayerFlags bits (OpenXR 1.0), as Layer.flags carries them.
namespace layer_flags {
inline constexpr uint64_t blendTextureSourceAlpha = 0x2;
inline constexpr uint64_t unpremultipliedAlpha = 0x4;
}  // namespace layer_flags

struct SwapchainRequest {
  uint64_t createFlags = 0;
  uint64_t usageFlags = 0;
  int64_t format = 0;
  uint32_t sampleCount = 1;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t faceCount = 1;
  uint32_t arraySize = 1;
  uint32_t mipCount = 1;
};

struct SwapchainLimits {
  uint32_t maxWidth = kMaxExtent;
  uint32_t maxHeight = kMaxExtent;
  uint32_t maxArrayLayers = kMaxArrayLayers;
  std::vector<int64_t> formats;       // supported VkFormat values
  std::vector<int64_t> depthFormats;  // the subset that are depth/stencil formats
};

Status validateSwapchainRequest(const SwapchainRequest& request, const SwapchainLimits& limits);

// Per-swapchain image cycle. Images are acquired round-robin from 0; each image goes
// free -> acquired -> waited -> copying -> free (the daemon frees it once the copy is submitted
// or done, depending on the sync mode; the client once the release answer arrived).
class ImageCycle {
 public:
  enum class State { free, acquired, waited, copying };

  explicit ImageCycle(uint32_t imageCount);

  uint32_t imageCount() const { return static_cast<uint32_t>(states_.size()); }
  uint32_t nextAcquireIndex() const { return next_; }
  State state(uint32_t index) const { return states_.at(index); }

  Status acquire(uint32_t index);
  Status wait(uint32_t index);
  Status release(uint32_t index);
  // acquire, wait and release of one image as a single step (protocol 1.4: one call stands for
  // all three); on error the cycle is left as it was.
  Status acquireWaitRelease(uint32_t index);
  // copying -> free
  Status copyDone(uint32_t index);

 private:
  Status checkIndex(uint32_t index, const char* call) const;

  std::vector<State> states_;
  std::vector<uint64_t> acquireOrder_;  // acquire sequence number per image (for FIFO rules)
  uint64_t acquireCounter_ = 0;
  uint32_t next_ = 0;
};

// --- layers ------------------------------------------------------------------------------------

struct SubImageRef {
  uint32_t swapchainId = 0;
  int32_t x = 0, y = 0, width = 0, height = 0;
  uint32_t arrayIndex = 0;
};

// What the layer validator needs to know about the swapchain a sub-image names.
struct SwapchainFacts {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t arraySize = 1;
  bool depth = false;
  bool hasContent = false;  // released at least once
  uint32_t faceCount = 1;   // 6: a cube map
};

// `facts` is null when the id does not name a swapchain of this session.
// Cube layers need a cube map swapchain (faceCount 6); no other layer may use one.
Status validateSubImage(const SubImageRef& ref, const SwapchainFacts* facts, bool wantDepth, const char* what,
                        bool wantCube = false);
Status validateQuadExtent(float width, float height);
// 1.6 layers: radius >= 0 (+infinity allowed), centralAngle in (0, 2 pi], aspectRatio finite > 0;
// equirect scale and bias finite; eye visibility 0..2.
Status validateCylinder(float radius, float centralAngle, float aspectRatio, uint32_t eyeVisibility);
Status validateEquirect(float radius, std::span<const float> scale, std::span<const float> bias,
                        uint32_t eyeVisibility);
Status validatePose(std::span<const float> orientation, std::span<const float> position);
// Equirect2's window (XR_KHR_composition_layer_equirect2: radians, central horizontal angle
// centred on the layer's -z, upper and lower vertical angles) as the wire's equirect scale and
// bias (xrc.capnp), and back where a scale and bias describe such a window. A zero-wide or
// zero-high window has no finite mapping (it shows nothing).
struct EquirectMapping {
  std::array<float, 2> scale{1, 1}, bias{0, 0};
};
struct Equirect2Window {
  float central = 0, upper = 0, lower = 0;
};
EquirectMapping equirectMappingOf(const Equirect2Window& window);
std::optional<Equirect2Window> equirect2WindowOf(const EquirectMapping& mapping);

// 1.9 color scale and bias of a layer: both empty, or 4 finite values each.
Status validateColorScaleBias(std::span<const float> scale, std::span<const float> bias);
// 1.9: one of the display's visibility masks of a view (XR_KHR_visibility_mask).
struct VisibilityMask {
  uint32_t type = 0;              // XrVisibilityMaskTypeKHR: 1 hidden mesh, 2 visible mesh, 3 line loop
  std::vector<float> vertices;    // x y pairs on the view's z = -1 plane
  std::vector<uint32_t> indices;  // triangles (meshes) or the loop
};
// At most this many vertices (and three times as many indices) per mask.
inline constexpr uint32_t kMaxVisibilityMaskVertices = 4096;
// A known type, finite vertices in pairs, within the bounds above, indices naming vertices,
// meshes made of whole triangles.
Status validateVisibilityMask(const VisibilityMask& mask);
// A projection view's depth range (XR_KHR_composition_layer_depth): 0 <= minDepth <= maxDepth <= 1;
// nearZ and farZ not NaN, not equal, and at least one of them finite (+infinity is allowed).
Status validateDepthRange(float minDepth, float maxDepth, float nearZ, float farZ);
Status validateOverlayPlacement(bool overlay, uint32_t placement);

}  // namespace xrc
