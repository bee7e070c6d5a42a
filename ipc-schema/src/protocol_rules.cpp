#include "xrc/protocol_rules.hpp"

#include <algorithm>
#include <cmath>

namespace xrc {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::none:
      return "ok";
    case ErrorCode::invalidArgument:
      return "invalid argument";
    case ErrorCode::callOrder:
      return "call order";
    case ErrorCode::versionMismatch:
      return "version mismatch";
    case ErrorCode::deviceMismatch:
      return "device mismatch";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::notFound:
      return "not found";
    case ErrorCode::exhausted:
      return "exhausted";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::internal:
      return "internal error";
    case ErrorCode::permissionDenied:
      return "permission denied";
  }
  return "unknown error";
}

const char* syncModeName(SyncMode mode) {
  switch (mode) {
    case SyncMode::binary:
      return "binary";
    case SyncMode::timeline:
      return "timeline";
    case SyncMode::host:
      break;
  }
  return "host";
}

std::optional<SyncMode> parseSyncMode(const std::string& text) {
  for (SyncMode mode : {SyncMode::host, SyncMode::binary, SyncMode::timeline}) {
    if (text == syncModeName(mode)) return mode;
  }
  return std::nullopt;
}

Status checkRenderingValue(uint64_t lastValue, uint64_t value) {
  if (value <= lastValue) {
    return makeError(ErrorCode::invalidArgument,
                     "release: rendering value {} is not above the swapchain's previous one ({})", value, lastValue);
  }
  return {};
}

const char* blendModeName(EnvironmentBlendMode mode) {
  switch (mode) {
    case EnvironmentBlendMode::opaque:
      return "opaque";
    case EnvironmentBlendMode::additive:
      return "additive";
    case EnvironmentBlendMode::alphaBlend:
      return "alpha_blend";
  }
  return "unknown";
}

Result<std::vector<EnvironmentBlendMode>> parseBlendModes(const std::string& text) {
  std::vector<EnvironmentBlendMode> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::optional<EnvironmentBlendMode> mode;
    for (auto m : {EnvironmentBlendMode::opaque, EnvironmentBlendMode::additive, EnvironmentBlendMode::alphaBlend}) {
      if (name == blendModeName(m)) mode = m;
    }
    if (!mode) {
      return makeError(ErrorCode::invalidArgument,
                       "unknown environment blend mode '{}' (known: opaque, additive, alpha_blend)", name);
    }
    for (auto m : out) {
      if (m == *mode) return makeError(ErrorCode::invalidArgument, "environment blend mode '{}' given twice", name);
    }
    out.push_back(*mode);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

bool blendModeSupported(const std::vector<EnvironmentBlendMode>& supported, EnvironmentBlendMode mode) {
  if (supported.empty()) return mode == EnvironmentBlendMode::opaque;
  for (auto m : supported) {
    if (m == mode) return true;
  }
  return false;
}

std::string uuidToString(const Uuid& uuid) {
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

Result<SyncMode> negotiate(const NegotiationInput& in) {
  if (in.clientMajor != kProtocolMajor) {
    return makeError(ErrorCode::versionMismatch, "client speaks protocol {}.{}, daemon speaks {}.{} (major must match)",
                     in.clientMajor, in.clientMinor, kProtocolMajor, kProtocolMinor);
  }
  if (in.client.deviceUuid != in.daemon.deviceUuid || in.client.driverUuid != in.daemon.driverUuid) {
    return makeError(ErrorCode::deviceMismatch,
                     "client device '{}' (device {}, driver {}) is not the daemon's device '{}' "
                     "(device {}, driver {}); create the VkDevice on the daemon's GPU",
                     in.client.name, uuidToString(in.client.deviceUuid), uuidToString(in.client.driverUuid),
                     in.daemon.name, uuidToString(in.daemon.deviceUuid), uuidToString(in.daemon.driverUuid));
  }
  const bool binaryPossible = in.client.externalSemaphoreFd && in.daemon.externalSemaphoreFd;
  const bool timelinePossible = in.clientMinor >= 11 && in.client.timelineSemaphoreFd && in.daemon.timelineSemaphoreFd;
  if (in.forcedMode) {
    const bool possible =
        *in.forcedMode == SyncMode::host || (*in.forcedMode == SyncMode::binary ? binaryPossible : timelinePossible);
    if (!possible) {
      const DeviceFacts& lacking = *in.forcedMode == SyncMode::binary
                                       ? (in.client.externalSemaphoreFd ? in.daemon : in.client)
                                       : (in.client.timelineSemaphoreFd ? in.daemon : in.client);
      const char* side = &lacking == &in.daemon ? "daemon's device" : "client's device";
      if (*in.forcedMode == SyncMode::binary) {
        return makeError(ErrorCode::unsupported,
                         "daemon requires sync mode 'binary' but the {} has no VK_KHR_external_semaphore_fd", side);
      }
      if (in.clientMinor < 11 && in.client.timelineSemaphoreFd && in.daemon.timelineSemaphoreFd) {
        return makeError(ErrorCode::unsupported,
                         "daemon requires sync mode 'timeline', which needs protocol 1.11 (the client speaks 1.{})",
                         in.clientMinor);
      }
      return makeError(ErrorCode::unsupported,
                       "daemon requires sync mode 'timeline' but the {} cannot share timeline semaphores "
                       "(VK_KHR_external_semaphore_fd and the timelineSemaphore feature)",
                       side);
    }
    return *in.forcedMode;
  }
  // Never binary unless forced: its copy waits on the client's semaphore on the GPU, so a client
  // whose rendering never finishes would stall the daemon's queue for everyone, and no driver we
  // run on lets the daemon watch a binary semaphore from the CPU (docs/SYNC.md, "Sync modes").
  return timelinePossible ? SyncMode::timeline : SyncMode::host;
}

Status validateSwapchainRequest(const SwapchainRequest& r, const SwapchainLimits& limits) {
  if ((r.createFlags & ~swapchain_flags::staticImage) != 0) {
    return makeError(ErrorCode::unsupported, "swapchain create flags 0x{:x} are not supported",
                     r.createFlags & ~swapchain_flags::staticImage);
  }
  if ((r.usageFlags & ~xr_usage::all) != 0) {
    return makeError(ErrorCode::invalidArgument, "unknown swapchain usage bits 0x{:x}", r.usageFlags & ~xr_usage::all);
  }
  if (std::find(limits.formats.begin(), limits.formats.end(), r.format) == limits.formats.end()) {
    return makeError(ErrorCode::unsupported, "swapchain format {} is not supported", r.format);
  }
  const bool depth =
      std::find(limits.depthFormats.begin(), limits.depthFormats.end(), r.format) != limits.depthFormats.end();
  if (depth && (r.usageFlags & (xr_usage::colorAttachment | xr_usage::unorderedAccess))) {
    return makeError(ErrorCode::invalidArgument,
                     "depth format {} cannot have color-attachment or unordered-access usage", r.format);
  }
  if (!depth && (r.usageFlags & xr_usage::depthStencilAttachment)) {
    return makeError(ErrorCode::invalidArgument, "color format {} cannot have depth-stencil-attachment usage",
                     r.format);
  }
  if (r.width == 0 || r.height == 0) {
    return makeError(ErrorCode::invalidArgument, "swapchain extent {}x{} is empty", r.width, r.height);
  }
  if (r.width > limits.maxWidth || r.height > limits.maxHeight) {
    return makeError(ErrorCode::invalidArgument, "swapchain extent {}x{} exceeds the maximum {}x{}", r.width, r.height,
                     limits.maxWidth, limits.maxHeight);
  }
  if (r.sampleCount != 1) {
    return makeError(ErrorCode::unsupported, "sample count {} is not supported (only 1)", r.sampleCount);
  }
  if (r.faceCount != 1 && r.faceCount != 6) {
    return makeError(ErrorCode::unsupported, "face count {} is not supported (1, or 6 for a cube map)", r.faceCount);
  }
  if (r.faceCount == 6 && r.width != r.height) {
    return makeError(ErrorCode::invalidArgument, "a cube map swapchain must be square (got {}x{})", r.width, r.height);
  }
  // A cube map's faces are image layers too: the bound is on the image's layers.
  if (r.arraySize == 0 || uint64_t(r.arraySize) * (r.faceCount == 6 ? 6 : 1) > limits.maxArrayLayers) {
    return makeError(ErrorCode::invalidArgument, "array size {} ({} image layers) is outside 1..{} layers", r.arraySize,
                     uint64_t(r.arraySize) * (r.faceCount == 6 ? 6 : 1), limits.maxArrayLayers);
  }
  uint32_t maxMips = 1;
  for (uint32_t extent = std::max(r.width, r.height); extent > 1; extent >>= 1) ++maxMips;
  if (r.mipCount == 0 || r.mipCount > maxMips) {
    return makeError(ErrorCode::invalidArgument, "mip count {} is outside 1..{} for {}x{}", r.mipCount, maxMips,
                     r.width, r.height);
  }
  return {};
}

// --- ImageCycle --------------------------------------------------------------------------------

ImageCycle::ImageCycle(uint32_t imageCount) : states_(imageCount, State::free), acquireOrder_(imageCount, 0) {}

Status ImageCycle::checkIndex(uint32_t index, const char* call) const {
  if (index >= states_.size()) {
    return makeError(ErrorCode::invalidArgument, "{}: image index {} is out of range (count {})", call, index,
                     states_.size());
  }
  return {};
}

Status ImageCycle::acquire(uint32_t index) {
  if (auto s = checkIndex(index, "acquire"); !s) return s;
  if (states_[next_] == State::acquired || states_[next_] == State::waited) {
    return makeError(ErrorCode::exhausted, "acquire: all {} images are already acquired; release one first",
                     states_.size());
  }
  if (index != next_) {
    return makeError(ErrorCode::callOrder, "acquire: image {} acquired out of order (next is {})", index, next_);
  }
  if (states_[index] == State::copying) {
    return makeError(ErrorCode::callOrder, "acquire: image {} is still being copied; wait for its release answer",
                     index);
  }
  states_[index] = State::acquired;
  acquireOrder_[index] = ++acquireCounter_;
  next_ = (next_ + 1) % imageCount();
  return {};
}

Status ImageCycle::wait(uint32_t index) {
  if (auto s = checkIndex(index, "wait"); !s) return s;
  if (states_[index] != State::acquired) {
    return makeError(ErrorCode::callOrder, "wait: image {} is not acquired (or already waited)", index);
  }
  for (uint32_t i = 0; i < imageCount(); ++i) {
    if (states_[i] == State::acquired && acquireOrder_[i] < acquireOrder_[index]) {
      return makeError(ErrorCode::callOrder, "wait: image {} must be waited before image {} (acquire order)", i, index);
    }
  }
  states_[index] = State::waited;
  return {};
}

Status ImageCycle::release(uint32_t index) {
  if (auto s = checkIndex(index, "release"); !s) return s;
  if (states_[index] == State::free || states_[index] == State::copying) {
    return makeError(ErrorCode::callOrder, "release: image {} is not acquired", index);
  }
  if (states_[index] == State::acquired) {
    return makeError(ErrorCode::callOrder, "release: image {} was acquired but not waited", index);
  }
  for (uint32_t i = 0; i < imageCount(); ++i) {
    if (states_[i] == State::waited && acquireOrder_[i] < acquireOrder_[index]) {
      return makeError(ErrorCode::callOrder, "release: image {} must be released before image {} (acquire order)", i,
                       index);
    }
  }
  states_[index] = State::copying;
  return {};
}

Status ImageCycle::acquireWaitRelease(uint32_t index) {
  // Only acquire can fail on its own: after it, wait and release of that image are in order
  // unless an earlier acquired image is still outstanding, which the steps report; undo then.
  const ImageCycle before = *this;
  Status s = acquire(index);
  if (s) s = wait(index);
  if (s) s = release(index);
  if (!s) *this = before;
  return s;
}

Status ImageCycle::copyDone(uint32_t index) {
  if (auto s = checkIndex(index, "copy"); !s) return s;
  if (states_[index] != State::copying) {
    return makeError(ErrorCode::internal, "copy finished for image {} that was not released", index);
  }
  states_[index] = State::free;
  return {};
}

// --- layers ------------------------------------------------------------------------------------

Status validateSubImage(const SubImageRef& ref, const SwapchainFacts* facts, bool wantDepth, const char* what,
                        bool wantCube) {
  if (facts == nullptr) {
    return makeError(ErrorCode::notFound, "{}: swapchain {} is not a swapchain of this session", what, ref.swapchainId);
  }
  if (facts->depth != wantDepth) {
    return makeError(ErrorCode::invalidArgument, "{}: swapchain {} is a {} swapchain", what, ref.swapchainId,
                     facts->depth ? "depth" : "color");
  }
  if ((facts->faceCount == 6) != wantCube) {
    return makeError(ErrorCode::invalidArgument, "{}: swapchain {} {} a cube map", what, ref.swapchainId,
                     wantCube ? "is not" : "is");
  }
  if (!facts->hasContent) {
    return makeError(ErrorCode::callOrder, "{}: swapchain {} has never been released", what, ref.swapchainId);
  }
  const int64_t right = int64_t(ref.x) + ref.width;
  const int64_t bottom = int64_t(ref.y) + ref.height;
  if (ref.x < 0 || ref.y < 0 || ref.width <= 0 || ref.height <= 0 || right > facts->width || bottom > facts->height) {
    return makeError(ErrorCode::invalidArgument, "{}: image rect ({},{} {}x{}) is not inside swapchain {} ({}x{})",
                     what, ref.x, ref.y, ref.width, ref.height, ref.swapchainId, facts->width, facts->height);
  }
  if (ref.arrayIndex >= facts->arraySize) {
    return makeError(ErrorCode::invalidArgument, "{}: array index {} >= array size {}", what, ref.arrayIndex,
                     facts->arraySize);
  }
  return {};
}

Status validateQuadExtent(float width, float height) {
  if (!std::isfinite(width) || !std::isfinite(height) || width <= 0.f || height <= 0.f) {
    return makeError(ErrorCode::invalidArgument, "quad size {}x{} must be finite and positive", width, height);
  }
  return {};
}

namespace {
Status validateShape(float radius, uint32_t eyeVisibility, const char* what) {
  if (std::isnan(radius) || radius < 0.f) {
    return makeError(ErrorCode::invalidArgument, "{} radius {} must be >= 0 (or infinite)", what, radius);
  }
  if (eyeVisibility > 2) {
    return makeError(ErrorCode::invalidArgument, "{} eye visibility {} is not 0, 1 or 2", what, eyeVisibility);
  }
  return {};
}
}  // namespace

Status validateCylinder(float radius, float centralAngle, float aspectRatio, uint32_t eyeVisibility) {
  if (auto s = validateShape(radius, eyeVisibility, "cylinder layer"); !s) return s;
  if (!(centralAngle > 0.f && centralAngle <= 6.2832f) || !(aspectRatio > 0.f && std::isfinite(aspectRatio))) {
    return makeError(ErrorCode::invalidArgument,
                     "cylinder layer central angle {} must be in (0, 2 pi] and aspect ratio {} finite and positive",
                     centralAngle, aspectRatio);
  }
  return {};
}

Status validateDepthRange(float minDepth, float maxDepth, float nearZ, float farZ) {
  if (!(minDepth >= 0.f && minDepth <= maxDepth && maxDepth <= 1.f)) {
    return makeError(ErrorCode::invalidArgument, "depth info range [{}, {}] must lie within [0, 1], min <= max",
                     minDepth, maxDepth);
  }
  if (std::isnan(nearZ) || std::isnan(farZ) || nearZ == farZ || (std::isinf(nearZ) && std::isinf(farZ))) {
    return makeError(ErrorCode::invalidArgument,
                     "depth info planes near {} and far {} must differ, and at most one may be infinite", nearZ, farZ);
  }
  return {};
}

Status validateEquirect(float radius, std::span<const float> scale, std::span<const float> bias,
                        uint32_t eyeVisibility) {
  if (auto s = validateShape(radius, eyeVisibility, "equirect layer"); !s) return s;
  auto finite2 = [](std::span<const float> v) { return v.size() == 2 && std::isfinite(v[0]) && std::isfinite(v[1]); };
  if (!finite2(scale) || !finite2(bias)) {
    return makeError(ErrorCode::invalidArgument, "equirect layer scale and bias need 2 finite values each");
  }
  return {};
}

namespace {
constexpr float kTwoPi = 6.2831853f, kPi = 3.14159265f;
}  // namespace

// u = lon / central + 1/2 and v = (upper - latitude) / (upper - lower), latitude = pi/2 - polar.
EquirectMapping equirectMappingOf(const Equirect2Window& w) {
  EquirectMapping m;
  m.scale[0] = kTwoPi / w.central;
  m.bias[0] = 0.5f - 0.5f * m.scale[0];
  m.scale[1] = kPi / (w.upper - w.lower);
  m.bias[1] = (w.upper - kPi / 2) / (w.upper - w.lower);
  return m;
}

std::optional<Equirect2Window> equirect2WindowOf(const EquirectMapping& m) {
  const float sx = m.scale[0], sy = m.scale[1], bx = m.bias[0], by = m.bias[1];
  // Centred on -z: u = 1/2 at longitude 0.
  if (!(sx > 0 && sy > 0) || std::abs(bx - (0.5f - 0.5f * sx)) > 1e-4f * std::max(1.f, sx)) return std::nullopt;
  const float central = kTwoPi / sx, height = kPi / sy;
  const float upper = kPi / 2 + by * height, lower = upper - height;
  if (!(central <= kTwoPi + 1e-4f && upper <= kPi / 2 + 1e-4f && lower >= -kPi / 2 - 1e-4f)) return std::nullopt;
  return Equirect2Window{std::min(central, kTwoPi), std::min(upper, kPi / 2), std::max(lower, -kPi / 2)};
}

Status validateColorScaleBias(std::span<const float> scale, std::span<const float> bias) {
  if (scale.empty() && bias.empty()) return {};
  auto finite4 = [](std::span<const float> v) {
    return v.size() == 4 && std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
  };
  if (!finite4(scale) || !finite4(bias)) {
    return makeError(ErrorCode::invalidArgument,
                     "layer color scale and bias need 4 finite values each (got {} and {} values)", scale.size(),
                     bias.size());
  }
  return {};
}

Status validateVisibilityMask(const VisibilityMask& mask) {
  if (mask.type < 1 || mask.type > 3)
    return makeError(ErrorCode::invalidArgument, "visibility mask type {}", mask.type);
  const size_t vertices = mask.vertices.size() / 2;
  if (mask.vertices.size() % 2 != 0 || vertices > kMaxVisibilityMaskVertices ||
      mask.indices.size() > 3 * size_t(kMaxVisibilityMaskVertices)) {
    return makeError(ErrorCode::invalidArgument, "visibility mask of {} values and {} indices", mask.vertices.size(),
                     mask.indices.size());
  }
  if (!std::all_of(mask.vertices.begin(), mask.vertices.end(), [](float v) { return std::isfinite(v); }) ||
      !std::all_of(mask.indices.begin(), mask.indices.end(), [&](uint32_t i) { return i < vertices; })) {
    return makeError(ErrorCode::invalidArgument, "visibility mask with a vertex not finite or an index out of range");
  }
  if (mask.type != 3 && mask.indices.size() % 3 != 0) {
    return makeError(ErrorCode::invalidArgument, "visibility mesh of {} indices is not whole triangles",
                     mask.indices.size());
  }
  return {};
}

Status validatePose(std::span<const float> orientation, std::span<const float> position) {
  if (orientation.size() != 4 || position.size() != 3) {
    return makeError(ErrorCode::invalidArgument, "pose needs 4 orientation and 3 position values (got {} and {})",
                     orientation.size(), position.size());
  }
  double norm = 0;
  for (float v : orientation) {
    if (!std::isfinite(v)) return makeError(ErrorCode::invalidArgument, "pose orientation is not finite");
    norm += double(v) * v;
  }
  for (float v : position) {
    if (!std::isfinite(v)) return makeError(ErrorCode::invalidArgument, "pose position is not finite");
  }
  if (std::abs(norm - 1.0) > 1e-2) {
    return makeError(ErrorCode::invalidArgument, "pose orientation is not unit length (|q|^2={})", norm);
  }
  return {};
}

Status validateOverlayPlacement(bool overlay, uint32_t placement) {
  if (!overlay && placement != 0) {
    return makeError(ErrorCode::invalidArgument, "overlay placement {} given for a session that is not an overlay",
                     placement);
  }
  if (placement > kMaxOverlayPlacement) {
    return makeError(ErrorCode::invalidArgument, "overlay placement {} is outside 0..{}", placement,
                     kMaxOverlayPlacement);
  }
  return {};
}

}  // namespace xrc
