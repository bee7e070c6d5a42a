#include "openxr_backend.hpp"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <optional>

#include <openxr/openxr_reflection.h>

#include "../../gpu/barriers.hpp"
#include "../../gpu/composable_image.hpp"
#include "../../log.hpp"

namespace xrc {

// The runtime connection: instance, session and spaces, destroyed in reverse order. Runtime
// swapchains hold it, so the session outlives every swapchain created on it. The runtime may use
// the daemon's queue inside session calls (XR_KHR_vulkan_enable2), so they run under its mutex.
struct OpenXrLink {
  OpenXrLink(gpu::Queue& q, std::unique_ptr<OpenXrInstance> i) : queue(q), instance(std::move(i)) {}
  ~OpenXrLink() {
    input.reset();
    stage.reset();
    view.reset();
    local.reset();
    Lock lock(queue.submitMutex);
    session.reset();
  }
  OpenXrLink(const OpenXrLink&) = delete;
  OpenXrLink& operator=(const OpenXrLink&) = delete;

  gpu::Queue& queue;
  std::unique_ptr<OpenXrInstance> instance;
  oxr::SessionOwner session;
  oxr::SpaceOwner stage, view, local;
  // The runtime's controllers; null when the runtime refused the bindings (no input then).
  std::unique_ptr<OpenXrInputBinding> input;
};

namespace {

constexpr int64_t kMinBackoffNs = 250'000'000;
constexpr int64_t kMaxBackoffNs = 4'000'000'000;

constexpr uint64_t kHandoffWaitNs = 2'000'000'000;

}  // namespace

class OpenXrSwapchain final : public RuntimeSwapchain {
 public:
  OpenXrSwapchain(std::shared_ptr<OpenXrLink> l, const VkImageCreateInfo& i) : link(std::move(l)), info(i) {
    info.pNext = nullptr;
  }
  ~OpenXrSwapchain() override {
    // The hand-off command buffers must be done before their pool goes.
    if (handoffTimeline != nullptr && lastHandoff > 0) {
      if (auto s = handoffTimeline->wait(lastHandoff, kHandoffWaitNs); !s) {
        log::warn("runtime swapchain teardown: {}", s.error().describe());
      }
    }
    Lock lock(link->queue.submitMutex);
    handle.reset();
  }
  const VkImageCreateInfo& createInfo() const override { return info; }
  uint32_t imageCount() const override { return uint32_t(images.size()); }
  const gpu::ComposableImage* mirrorCopy() const override { return mirror ? &*mirror : nullptr; }

  std::shared_ptr<OpenXrLink> link;  // first: destroyed after the swapchain handle
  VkImageCreateInfo info{};
  oxr::SwapchainOwner handle;
  std::vector<VkImage> images;
  // Per image, the runtime queue's half of the hand-off after a copy: the ownership acquire when
  // the copies run in another family, and the copy into `mirror` when there is a mirror. None
  // when neither is needed (copies on the runtime's queue, no mirror).
  gpu::Timeline* handoffTimeline = nullptr;
  vk::CommandPool handoffPool;
  std::vector<VkCommandBuffer> handoffs;
  // With a mirror: the newest content, copied out by each hand-off (colour formats only).
  std::optional<gpu::ComposableImage> mirror;
  uint64_t lastHandoff = 0;  // frame worker thread (and the destructor)
  // Frame worker thread only: the image acquired and not yet waited on, either ahead of the next
  // lease (acquired at the previous release) or because its wait timed out; the next lease waits
  // on it (OpenXR waits images in acquisition order).
  std::optional<uint32_t> unwaited;
};

namespace {

XrSwapchainUsageFlags usageFor(const VkImageCreateInfo& info) {
  // Written by the daemon's copy, whatever the client asked for.
  XrSwapchainUsageFlags usage = XR_SWAPCHAIN_USAGE_TRANSFER_DST_BIT;
  if (info.usage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT) usage |= XR_SWAPCHAIN_USAGE_COLOR_ATTACHMENT_BIT;
  if (info.usage & VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT)
    usage |= XR_SWAPCHAIN_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
  if (info.usage & VK_IMAGE_USAGE_SAMPLED_BIT) usage |= XR_SWAPCHAIN_USAGE_SAMPLED_BIT;
  if (info.usage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) usage |= XR_SWAPCHAIN_USAGE_TRANSFER_SRC_BIT;
  if (info.usage & VK_IMAGE_USAGE_STORAGE_BIT) usage |= XR_SWAPCHAIN_USAGE_UNORDERED_ACCESS_BIT;
  if (info.flags & VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT) usage |= XR_SWAPCHAIN_USAGE_MUTABLE_FORMAT_BIT;
  return usage;
}

XrPosef toXr(const Pose& p) {
  XrPosef out;
  out.orientation = {p.orientation[0], p.orientation[1], p.orientation[2], p.orientation[3]};
  out.position = {p.position[0], p.position[1], p.position[2]};
  return out;
}

const char* stateName(XrSessionState state) {
  switch (state) {
#define XRC_STATE_NAME(name, value) \
  case name:                        \
    return #name;
    XR_LIST_ENUM_XrSessionState(XRC_STATE_NAME)
#undef XRC_STATE_NAME
  }
  return "XR_SESSION_STATE_(unknown)";
}

Pose fromXr(const XrPosef& p) {
  Pose out;
  out.orientation = {p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w};
  out.position = {p.position.x, p.position.y, p.position.z};
  return out;
}

// Layer structs for one xrEndFrame; deques keep the addresses the headers point at stable.
struct FrameLayers {
  std::deque<XrCompositionLayerProjection> projections;
  std::deque<std::vector<XrCompositionLayerProjectionView>> projectionViews;
  std::deque<std::vector<XrCompositionLayerDepthInfoKHR>> depthInfos;
  std::deque<XrCompositionLayerQuad> quads;
  std::deque<XrCompositionLayerCylinderKHR> cylinders;
  std::deque<XrCompositionLayerEquirectKHR> equirects;
  std::deque<XrCompositionLayerEquirect2KHR> equirects2;
  std::deque<XrCompositionLayerCubeKHR> cubes;
  std::deque<XrCompositionLayerColorScaleBiasKHR> colors;
  std::vector<const XrCompositionLayerBaseHeader*> order;  // bottom to top
  // Client layers of a kind the runtime does not take (its extension missing): left out.
  uint64_t leftOut = 0;
};

XrSwapchainSubImage subImage(const LayerView& view) {
  XrSwapchainSubImage out{};
  out.swapchain = static_cast<OpenXrSwapchain&>(*view.swapchain).handle.get();
  out.imageRect = {{view.x, view.y}, {view.width, view.height}};
  out.imageArrayIndex = view.arrayIndex;
  return out;
}

// The client layer flags are OpenXR's (protocol_rules.hpp's layer_flags mirror them).
constexpr XrCompositionLayerFlags kForwardedFlags = XR_COMPOSITION_LAYER_CORRECT_CHROMATIC_ABERRATION_BIT |
                                                    XR_COMPOSITION_LAYER_BLEND_TEXTURE_SOURCE_ALPHA_BIT |
                                                    XR_COMPOSITION_LAYER_UNPREMULTIPLIED_ALPHA_BIT;

XrPosef layerPose(const CommittedLayer& layer) {
  XrPosef pose{};
  pose.orientation = {layer.quadOrientation[0], layer.quadOrientation[1], layer.quadOrientation[2],
                      layer.quadOrientation[3]};
  pose.position = {layer.quadPosition[0], layer.quadPosition[1], layer.quadPosition[2]};
  return pose;
}

// Appends the layer's header to the frame, with its color scale and bias chained where the
// client gave one and the runtime takes it.
template <typename XrLayer>
void push(const CommittedLayer& layer, XrLayer& xrLayer, XrSpace stage, const OpenXrInstance::LayerExtensions& takes,
          FrameLayers& out) {
  xrLayer.layerFlags = layer.flags & kForwardedFlags;
  xrLayer.space = stage;
  if (layer.color && takes.colorScaleBias) {
    XrCompositionLayerColorScaleBiasKHR& c = out.colors.emplace_back();
    c = oxr::make<XrCompositionLayerColorScaleBiasKHR>(XR_TYPE_COMPOSITION_LAYER_COLOR_SCALE_BIAS_KHR);
    const auto& k = layer.color->scale;
    const auto& b = layer.color->bias;
    c.colorScale = {k[0], k[1], k[2], k[3]};
    c.colorBias = {b[0], b[1], b[2], b[3]};
    c.next = xrLayer.next;
    xrLayer.next = &c;
  }
  out.order.push_back(reinterpret_cast<const XrCompositionLayerBaseHeader*>(&xrLayer));
}

void addProjection(const CommittedLayer& layer, XrSpace stage, size_t viewCount,
                   const OpenXrInstance::LayerExtensions& takes, FrameLayers& out) {
  // A view whose only release failed has no content: the layer cannot be shown whole.
  if (layer.views.size() != viewCount) return;
  auto& views = out.projectionViews.emplace_back();
  // Sized once: the views point into it.
  auto& depths = out.depthInfos.emplace_back(takes.depth && layer.depth.size() == viewCount ? viewCount : 0);
  for (size_t i = 0; i < layer.views.size(); ++i) {
    const LayerView& v = layer.views[i];
    auto pv = oxr::make<XrCompositionLayerProjectionView>(XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW);
    pv.pose = toXr(v.pose);
    pv.fov = {v.fov[0], v.fov[1], v.fov[2], v.fov[3]};
    pv.subImage = subImage(v);
    if (!depths.empty()) {
      const LayerDepth& d = layer.depth[i];
      auto& info = depths[i];
      info = oxr::make<XrCompositionLayerDepthInfoKHR>(XR_TYPE_COMPOSITION_LAYER_DEPTH_INFO_KHR);
      info.subImage = subImage(d.view);
      info.minDepth = d.minDepth;
      info.maxDepth = d.maxDepth;
      info.nearZ = d.nearZ;
      info.farZ = d.farZ;
      pv.next = &info;
    }
    views.push_back(pv);
  }
  XrCompositionLayerProjection& p = out.projections.emplace_back();
  p = oxr::make<XrCompositionLayerProjection>(XR_TYPE_COMPOSITION_LAYER_PROJECTION);
  p.viewCount = uint32_t(views.size());
  p.views = views.data();
  push(layer, p, stage, takes, out);
}

// A new layer struct of `type` in `into`, showing `view` at the layer's pose to `eyes`.
template <typename XrLayer>
XrLayer& placedLayer(std::deque<XrLayer>& into, XrStructureType type, const CommittedLayer& layer,
                     const LayerView& view, XrEyeVisibility eyes) {
  XrLayer& out = into.emplace_back();
  out = oxr::make<XrLayer>(type);
  out.eyeVisibility = eyes;
  out.subImage = subImage(view);
  out.pose = layerPose(layer);
  return out;
}

// Every layer kind but projection: one view, and a pose (a cube's position is unused).
void addPlaced(const CommittedLayer& layer, XrSpace stage, const OpenXrInstance::LayerExtensions& takes,
               FrameLayers& out) {
  if (layer.views.size() != 1 || layer.quadOrientation.size() != 4 || layer.quadPosition.size() != 3) return;
  const LayerView& view = layer.views[0];
  const LayerShape& shape = layer.shape;
  const auto eyes = XrEyeVisibility(shape.eyeVisibility);
  switch (layer.kind) {
    case CommittedLayer::Kind::quad: {
      auto& q = placedLayer(out.quads, XR_TYPE_COMPOSITION_LAYER_QUAD, layer, view, XR_EYE_VISIBILITY_BOTH);
      q.size = {layer.quadWidth, layer.quadHeight};
      return push(layer, q, stage, takes, out);
    }
    case CommittedLayer::Kind::cylinder: {
      if (!takes.cylinder) break;
      auto& c = placedLayer(out.cylinders, XR_TYPE_COMPOSITION_LAYER_CYLINDER_KHR, layer, view, eyes);
      c.radius = shape.radius;
      c.centralAngle = shape.centralAngle;
      c.aspectRatio = shape.aspectRatio;
      return push(layer, c, stage, takes, out);
    }
    case CommittedLayer::Kind::equirect: {
      if (takes.equirect) {
        auto& e = placedLayer(out.equirects, XR_TYPE_COMPOSITION_LAYER_EQUIRECT_KHR, layer, view, eyes);
        e.radius = shape.radius;
        e.scale = {shape.scale[0], shape.scale[1]};
        e.bias = {shape.bias[0], shape.bias[1]};
        return push(layer, e, stage, takes, out);
      }
      // Equirect2 where the window is centred on -z, as equirect2's always is.
      const auto window = takes.equirect2 ? equirect2WindowOf({shape.scale, shape.bias}) : std::nullopt;
      if (!window) break;
      auto& e = placedLayer(out.equirects2, XR_TYPE_COMPOSITION_LAYER_EQUIRECT2_KHR, layer, view, eyes);
      e.radius = shape.radius;
      e.centralHorizontalAngle = window->central;
      e.upperVerticalAngle = window->upper;
      e.lowerVerticalAngle = window->lower;
      return push(layer, e, stage, takes, out);
    }
    case CommittedLayer::Kind::cube: {
      if (!takes.cube) break;
      XrCompositionLayerCubeKHR& c = out.cubes.emplace_back();
      c = oxr::make<XrCompositionLayerCubeKHR>(XR_TYPE_COMPOSITION_LAYER_CUBE_KHR);
      c.eyeVisibility = eyes;
      c.swapchain = static_cast<OpenXrSwapchain&>(*view.swapchain).handle.get();
      c.imageArrayIndex = view.arrayIndex;
      c.orientation = layerPose(layer).orientation;
      return push(layer, c, stage, takes, out);
    }
    case CommittedLayer::Kind::projection:
      return;
  }
  out.leftOut++;
}

void addLayers(const CommittedFrame& frame, XrSpace stage, size_t viewCount,
               const OpenXrInstance::LayerExtensions& takes, FrameLayers& out) {
  for (const CommittedLayer& layer : frame.layers) {
    if (layer.kind == CommittedLayer::Kind::projection) {
      addProjection(layer, stage, viewCount, takes, out);
    } else {
      addPlaced(layer, stage, takes, out);
    }
  }
}

// The runtime's three visibility masks of `view`; one it cannot give is logged and left out.
std::vector<VisibilityMask> runtimeVisibilityMasks(const OpenXrInstance& xr, XrSession session, uint32_t view) {
  std::vector<VisibilityMask> out;
  for (auto type : {XR_VISIBILITY_MASK_TYPE_HIDDEN_TRIANGLE_MESH_KHR, XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR,
                    XR_VISIBILITY_MASK_TYPE_LINE_LOOP_KHR}) {
    if (auto mask = xr.visibilityMaskOf(session, view, type)) {
      out.push_back(std::move(mask).value());
    } else {
      log::warn("view {}: the runtime's visibility mask is not passed on: {}", view, mask.error().describe());
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<OpenXrBackend>> OpenXrBackend::create(std::unique_ptr<OpenXrInstance> instance,
                                                             gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline,
                                                             DisplayFeed& feed, OpenXrOptions options) {
  auto backend = std::make_unique<OpenXrBackend>(gpu, copyTimeline, feed, std::move(options));
  auto handoffs = gpu::Timeline::create(gpu.device());
  if (!handoffs) return handoffs.error();
  backend->handoffTimeline_ = std::move(handoffs).value();
  if (auto s = backend->openSession(std::move(instance)); !s) return s.error();
  return backend;
}

OpenXrBackend::OpenXrBackend(gpu::GpuDevice& gpu, gpu::Timeline& copyTimeline, DisplayFeed& feed, OpenXrOptions options)
    : gpu_(gpu), copyTimeline_(copyTimeline), feed_(feed), options_(std::move(options)) {
  clock_.periodNs = int64_t(std::llround(1e9 / options_.refreshHz));
  clock_.originNs = monotonicNowNs();
  // Until the runtime says the session is visible, nothing a client renders can be seen.
  feed_.setSystemVisibility({false, false});
}

OpenXrBackend::~OpenXrBackend() { stop(); }

std::shared_ptr<OpenXrLink> OpenXrBackend::link() const {
  Lock lock(linkMutex_);
  return link_;
}

Status OpenXrBackend::openSession(std::unique_ptr<OpenXrInstance> instance) {
  auto link = std::make_shared<OpenXrLink>(gpu_.graphicsQueue(), std::move(instance));
  const OpenXrInstance& xr = *link->instance;
  const XrInstance inst = xr.handle();

  auto binding = oxr::make<XrGraphicsBindingVulkan2KHR>(XR_TYPE_GRAPHICS_BINDING_VULKAN2_KHR);
  binding.instance = gpu_.instance();
  binding.physicalDevice = gpu_.physical();
  binding.device = gpu_.device();
  binding.queueFamilyIndex = gpu_.graphicsQueue().family;
  binding.queueIndex = 0;
  // Over the runtime's own primary application, as one of its overlays (the lowest placement:
  // the daemon's clients stack among themselves by their own placements).
  auto overlay = oxr::make<XrSessionCreateInfoOverlayEXTX>(XR_TYPE_SESSION_CREATE_INFO_OVERLAY_EXTX);
  overlay.sessionLayersPlacement = 0;
  auto sessionInfo = oxr::make<XrSessionCreateInfo>(XR_TYPE_SESSION_CREATE_INFO);
  sessionInfo.next = &binding;
  if (xr.overlay()) {
    // Chained to the create info itself (the graphics binding's chain takes nothing).
    overlay.next = &binding;
    sessionInfo.next = &overlay;
  }
  sessionInfo.systemId = xr.system();
  XrSession session = XR_NULL_HANDLE;
  {
    Lock lock(gpu_.graphicsQueue().submitMutex);
    if (auto s = xr.check(xrCreateSession(inst, &sessionInfo, &session), "xrCreateSession"); !s) return s;
  }
  link->session = oxr::SessionOwner(session);

  auto makeSpace = [&](XrReferenceSpaceType type, oxr::SpaceOwner& out) -> Status {
    auto info = oxr::make<XrReferenceSpaceCreateInfo>(XR_TYPE_REFERENCE_SPACE_CREATE_INFO);
    info.referenceSpaceType = type;
    info.poseInReferenceSpace.orientation.w = 1;
    XrSpace space = XR_NULL_HANDLE;
    if (auto s = xr.check(xrCreateReferenceSpace(session, &info, &space), "xrCreateReferenceSpace"); !s) return s;
    out = oxr::SpaceOwner(space);
    return {};
  };
  if (auto s = makeSpace(XR_REFERENCE_SPACE_TYPE_STAGE, link->stage); !s) return s;
  if (auto s = makeSpace(XR_REFERENCE_SPACE_TYPE_VIEW, link->view); !s) return s;
  if (auto s = makeSpace(XR_REFERENCE_SPACE_TYPE_LOCAL, link->local); !s) return s;
  if (auto input = OpenXrInputBinding::create(xr, session, link->stage.get())) {
    link->input = std::move(input).value();
  } else {
    log::warn("controller input of the OpenXR runtime is not forwarded: {}", input.error().describe());
  }

  // The system description the daemon's clients get is the runtime's.
  SystemInfo system;
  system.backendName = "openxr";
  uint32_t count = 0;
  if (auto s = xr.check(xrEnumerateViewConfigurationViews(inst, xr.system(), XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO,
                                                          0, &count, nullptr),
                        "xrEnumerateViewConfigurationViews");
      !s) {
    return s;
  }
  std::vector<XrViewConfigurationView> configViews(count,
                                                   oxr::make<XrViewConfigurationView>(XR_TYPE_VIEW_CONFIGURATION_VIEW));
  xrEnumerateViewConfigurationViews(inst, xr.system(), XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, count, &count,
                                    configViews.data());
  const auto now = xr.toXrTime(monotonicNowNs());
  if (!now) return now.error();
  std::vector<XrView> located(count, oxr::make<XrView>(XR_TYPE_VIEW));
  auto locateInfo = oxr::make<XrViewLocateInfo>(XR_TYPE_VIEW_LOCATE_INFO);
  locateInfo.viewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
  locateInfo.displayTime = now.value();
  locateInfo.space = link->view.get();
  auto viewState = oxr::make<XrViewState>(XR_TYPE_VIEW_STATE);
  if (auto s =
          xr.check(xrLocateViews(session, &locateInfo, &viewState, count, &count, located.data()), "xrLocateViews");
      !s) {
    return s;
  }
  for (uint32_t i = 0; i < count; ++i) {
    ViewInfo view;
    view.recommendedWidth = configViews[i].recommendedImageRectWidth;
    view.recommendedHeight = configViews[i].recommendedImageRectHeight;
    view.maxWidth = configViews[i].maxImageRectWidth;
    view.maxHeight = configViews[i].maxImageRectHeight;
    view.eyeInHead = fromXr(located[i].pose);
    view.fov = {located[i].fov.angleLeft, located[i].fov.angleRight, located[i].fov.angleUp, located[i].fov.angleDown};
    // As of the session's start: a change the runtime announces later is not followed.
    if (xr.visibilityMask()) view.visibilityMasks = runtimeVisibilityMasks(xr, session, i);
    system.views.push_back(view);
  }
  auto localInStage = oxr::make<XrSpaceLocation>(XR_TYPE_SPACE_LOCATION);
  if (auto s = xr.check(xrLocateSpace(link->local.get(), link->stage.get(), now.value(), &localInStage),
                        "xrLocateSpace(LOCAL in STAGE)");
      !s) {
    return s;
  }
  system.localInStage = fromXr(localInStage.pose);
  setLocal(system.localInStage);
  XrExtent2Df bounds{};
  if (XR_SUCCEEDED(xrGetReferenceSpaceBoundsRect(session, XR_REFERENCE_SPACE_TYPE_STAGE, &bounds))) {
    system.stageBoundsWidth = bounds.width;
    system.stageBoundsDepth = bounds.height;
  }
  system.refreshHz = options_.refreshHz;

  uint32_t formatCount = 0;
  if (auto s = xr.check(xrEnumerateSwapchainFormats(session, 0, &formatCount, nullptr), "xrEnumerateSwapchainFormats");
      !s) {
    return s;
  }
  system.runtimeFormats.resize(formatCount);
  xrEnumerateSwapchainFormats(session, formatCount, &formatCount, system.runtimeFormats.data());

  count = 0;
  if (auto s = xr.check(xrEnumerateEnvironmentBlendModes(inst, xr.system(), XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO,
                                                         0, &count, nullptr),
                        "xrEnumerateEnvironmentBlendModes");
      !s) {
    return s;
  }
  std::vector<XrEnvironmentBlendMode> modes(count);
  xrEnumerateEnvironmentBlendModes(inst, xr.system(), XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, count, &count,
                                   modes.data());
  // The three of OpenXR 1.0, in the runtime's order of preference; vendor modes are not offered.
  system.environmentBlendModes.clear();
  for (XrEnvironmentBlendMode mode : modes) {
    if (mode >= XR_ENVIRONMENT_BLEND_MODE_OPAQUE && mode <= XR_ENVIRONMENT_BLEND_MODE_ALPHA_BLEND) {
      system.environmentBlendModes.push_back(EnvironmentBlendMode(mode));
    }
  }
  if (system.environmentBlendModes.empty()) {
    return makeError(ErrorCode::unsupported, "the runtime offers none of OpenXR's environment blend modes");
  }
  runtimeBlendModes_ = system.environmentBlendModes;

  const bool first = system_.views.empty();
  if (first) {
    system_ = system;
  } else if (system.views.size() != system_.views.size() ||
             system.views[0].recommendedWidth != system_.views[0].recommendedWidth ||
             system.views[0].recommendedHeight != system_.views[0].recommendedHeight) {
    log::warn("the OpenXR runtime's views changed since the daemon started; clients keep the old description");
  }
  {
    Lock lock(timingMutex_);
    head_ = system.localInStage;
  }
  log::info("OpenXR session on '{}': {} views {}x{}", xr.runtimeName(), system.views.size(),
            system.views.empty() ? 0 : system.views[0].recommendedWidth,
            system.views.empty() ? 0 : system.views[0].recommendedHeight);
  {
    Lock lock(linkMutex_);
    link_ = std::move(link);
  }
  // Before serving, learn the runtime's display period: wait (bounded) for READY, begin the
  // session and run one (empty) frame. A runtime that keeps the session idle is waited for by
  // the display loop instead, and clients get --refresh-hz meanwhile.
  const int64_t deadline = monotonicNowNs() + 5'000'000'000;
  while (!running_ && !lost_ && monotonicNowNs() < deadline) {
    pollEvents();
    if (!running_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  refresh_.reset();
  if (running_) frame();
  // Until the period repeats (bounded): past a placeholder period of the runtime's first frames,
  // so that the rate clients are told at connect is the display's.
  for (int extra = 0; running_ && !lost_ && !refresh_.settled() && extra < 8; ++extra) frame();
  if (lost_) return makeError(ErrorCode::unsupported, "the OpenXR runtime was lost while the session started");
  // refreshHz() and every waitFrame answer follow the runtime's frames from here on.
  if (first && running_) system_.refreshHz = refreshHz();
  if (!running_) log::warn("the OpenXR runtime has not made the session ready within 5 s; waiting for it");
  return {};
}

DisplayClock OpenXrBackend::clock() const {
  Lock lock(timingMutex_);
  return clock_;
}

double OpenXrBackend::refreshHz() const {
  const int64_t period = refreshPeriodNs_.load();
  return period > 0 ? 1e9 / double(period) : system_.refreshHz;
}

std::optional<Pose> OpenXrBackend::knownHeadPose(int64_t timeNs) const {
  Lock lock(timingMutex_);
  for (auto it = locatedHeads_.rbegin(); it != locatedHeads_.rend(); ++it) {
    if (it->first == timeNs) return it->second;
  }
  return std::nullopt;
}

void OpenXrBackend::locateHead(int64_t timeNs, std::function<void(const Pose&)> done) {
  locator_.post([this, timeNs, done = std::move(done)] {
    std::optional<Pose> head = locateNow(timeNs);
    if (!head) {
      // Untracked, or no runtime right now: the last pose it gave, as runtimes do.
      Lock lock(timingMutex_);
      head = head_;
    }
    done(*head);
  });
}

LocalSpace OpenXrBackend::localSpace() const {
  Lock lock(localMutex_);
  return local_.value_or(LocalSpace{system_.localInStage, 0});
}

void OpenXrBackend::setLocal(const Pose& localInStage) {
  auto differs = [](const Pose& a, const Pose& b) {
    for (size_t i = 0; i < 4; ++i) {
      if (std::abs(a.orientation[i] - b.orientation[i]) > 1e-6f) return true;
    }
    for (size_t i = 0; i < 3; ++i) {
      if (std::abs(a.position[i] - b.position[i]) > 1e-6f) return true;
    }
    return false;
  };
  Lock lock(localMutex_);
  if (!local_) {
    local_ = LocalSpace{localInStage, 0};
  } else if (differs(local_->localInStage, localInStage)) {
    local_->localInStage = localInStage;
    local_->changes++;
    log::info("LOCAL moved: now at ({:.3f}, {:.3f}, {:.3f}) in STAGE", localInStage.position[0],
              localInStage.position[1], localInStage.position[2]);
  }
}

namespace {

// `space`'s pose in STAGE at `timeNs`; nullopt when the runtime cannot tell (or is failing).
std::optional<Pose> locateInStage(const OpenXrLink& link, XrSpace space, int64_t timeNs) {
  const auto time = link.instance->toXrTime(timeNs);
  if (!time) return std::nullopt;
  auto location = oxr::make<XrSpaceLocation>(XR_TYPE_SPACE_LOCATION);
  if (XR_FAILED(xrLocateSpace(space, link.stage.get(), time.value(), &location))) return std::nullopt;
  constexpr XrSpaceLocationFlags kValid =
      XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
  if ((location.locationFlags & kValid) != kValid) return std::nullopt;
  return fromXr(location.pose);
}

}  // namespace

void OpenXrBackend::relocateLocal(int64_t timeNs) {
  auto link = this->link();
  if (!link) return;
  if (auto local = locateInStage(*link, link->local.get(), timeNs)) setLocal(*local);
}

std::optional<Pose> OpenXrBackend::locateNow(int64_t timeNs) const {
  auto link = this->link();
  if (!link) return std::nullopt;
  return locateInStage(*link, link->view.get(), timeNs);
}

void OpenXrBackend::rememberHead(int64_t timeNs, const Pose& head) {
  constexpr size_t kRemembered = 8;
  Lock lock(timingMutex_);
  head_ = head;
  for (auto& [time, pose] : locatedHeads_) {
    if (time == timeNs) {
      pose = head;
      return;
    }
  }
  locatedHeads_.emplace_back(timeNs, head);
  if (locatedHeads_.size() > kRemembered) locatedHeads_.pop_front();
}

Result<std::shared_ptr<RuntimeSwapchain>> OpenXrBackend::createSwapchain(const VkImageCreateInfo& info) {
  auto link = this->link();
  if (!link) return makeError(ErrorCode::unsupported, "the OpenXR runtime is not available (reconnecting)");
  auto swapchain = std::make_shared<OpenXrSwapchain>(link, info);
  auto create = oxr::make<XrSwapchainCreateInfo>(XR_TYPE_SWAPCHAIN_CREATE_INFO);
  create.usageFlags = usageFor(info);
  if (mirror_ != nullptr) create.usageFlags |= XR_SWAPCHAIN_USAGE_TRANSFER_SRC_BIT;  // copied out for the mirror
  create.format = int64_t(info.format);
  create.sampleCount = 1;
  create.width = info.extent.width;
  create.height = info.extent.height;
  // A cube map (a client's cube layer): six faces per array element, as the runtime counts them.
  const bool cube = (info.flags & VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT) != 0 && info.arrayLayers % 6 == 0;
  create.faceCount = cube ? 6 : 1;
  create.arraySize = cube ? info.arrayLayers / 6 : info.arrayLayers;
  create.mipCount = info.mipLevels;
  const OpenXrInstance& xr = *link->instance;
  Lock lock(link->queue.submitMutex);
  XrSwapchain handle = XR_NULL_HANDLE;
  if (auto s = xr.check(xrCreateSwapchain(link->session.get(), &create, &handle), "xrCreateSwapchain"); !s) {
    return s.error();
  }
  swapchain->handle = oxr::SwapchainOwner(handle);
  uint32_t count = 0;
  if (auto s = xr.check(xrEnumerateSwapchainImages(handle, 0, &count, nullptr), "xrEnumerateSwapchainImages"); !s) {
    return s.error();
  }
  std::vector<XrSwapchainImageVulkan2KHR> images(
      count, oxr::make<XrSwapchainImageVulkan2KHR>(XR_TYPE_SWAPCHAIN_IMAGE_VULKAN2_KHR));
  if (auto s = xr.check(xrEnumerateSwapchainImages(handle, count, &count,
                                                   reinterpret_cast<XrSwapchainImageBaseHeader*>(images.data())),
                        "xrEnumerateSwapchainImages");
      !s) {
    return s.error();
  }
  for (const auto& image : images) swapchain->images.push_back(image.image);
  if (auto s = prepareHandoffs(*swapchain); !s) return s.error();
  return std::shared_ptr<RuntimeSwapchain>(std::move(swapchain));
}

namespace {

// Mip 0 of every layer of a runtime image, just copied into, to its mirror copy. The mirror's
// compositions read that copy on this queue: the first barrier also orders this write after
// them, and the composition's own first barrier orders its reads after this.
void recordMirrorCopy(VkCommandBuffer cb, VkImage runtimeImage, VkImage mirror, const VkImageCreateInfo& info) {
  const VkImageLayout attachment = vk::attachmentLayout(info.format);
  const VkImageSubresourceRange range{vk::aspectMask(info.format), 0, 1, 0, info.arrayLayers};
  VkMemoryBarrier earlier{};
  earlier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  earlier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  earlier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const std::array<VkImageMemoryBarrier, 2> before{
      gpu::imageBarrier(runtimeImage, attachment, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_MEMORY_WRITE_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT, range),
      // Wholly overwritten: what it held need not be kept.
      gpu::imageBarrier(mirror, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                        VK_ACCESS_TRANSFER_WRITE_BIT, range)};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &earlier, 0,
                       nullptr, uint32_t(before.size()), before.data());
  VkImageCopy region{};
  region.srcSubresource = {range.aspectMask, 0, 0, info.arrayLayers};
  region.dstSubresource = region.srcSubresource;
  region.extent = {info.extent.width, info.extent.height, 1};
  vkCmdCopyImage(cb, runtimeImage, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, mirror, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                 1, &region);
  const std::array<VkImageMemoryBarrier, 2> after{
      gpu::imageBarrier(runtimeImage, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, attachment, VK_ACCESS_TRANSFER_READ_BIT,
                        VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, range),
      gpu::imageBarrier(mirror, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, attachment, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_ACCESS_MEMORY_READ_BIT, range)};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
                       nullptr, uint32_t(after.size()), after.data());
}

// xrAcquireSwapchainImage; the index becomes the swapchain's `unwaited` image. Frame worker.
Status acquireNext(OpenXrSwapchain& swapchain) {
  const OpenXrInstance& xr = *swapchain.link->instance;
  uint32_t index = 0;
  auto acquire = oxr::make<XrSwapchainImageAcquireInfo>(XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO);
  {
    // The runtime may submit on the daemon's queue here (XR_KHR_vulkan_enable2).
    Lock lock(swapchain.link->queue.submitMutex);
    if (auto s = xr.check(xrAcquireSwapchainImage(swapchain.handle.get(), &acquire, &index), "xrAcquireSwapchainImage");
        !s) {
      return s;
    }
  }
  if (index >= swapchain.images.size()) {
    return makeError(ErrorCode::internal, "xrAcquireSwapchainImage gave image {} of {}", index,
                     swapchain.images.size());
  }
  swapchain.unwaited = index;
  return {};
}

}  // namespace

Result<RuntimeImageLease> OpenXrBackend::acquireImage(RuntimeSwapchain& base, std::chrono::milliseconds timeout) {
  auto& swapchain = static_cast<OpenXrSwapchain&>(base);
  const OpenXrInstance& xr = *swapchain.link->instance;
  // Usually the image was acquired when the previous one was released (releaseImage), and the
  // runtime has long been done with it: this wait returns at once.
  if (!swapchain.unwaited) {
    if (auto s = acquireNext(swapchain); !s) return s.error();
  }
  // Not under the queue's mutex: the runtime must not use the queue in xrWaitSwapchainImage, and
  // the display thread's xrEndFrame must not wait behind a client's image.
  auto wait = oxr::make<XrSwapchainImageWaitInfo>(XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO);
  wait.timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  const XrResult r = xrWaitSwapchainImage(swapchain.handle.get(), &wait);
  if (r == XR_TIMEOUT_EXPIRED) {
    return makeError(ErrorCode::timeout, "xrWaitSwapchainImage: the runtime did not free image {} within {} ms",
                     *swapchain.unwaited, timeout.count());
  }
  if (auto s = xr.check(r, "xrWaitSwapchainImage"); !s) return s.error();
  const uint32_t index = *swapchain.unwaited;
  swapchain.unwaited.reset();
  // The copy only needs the image: xrWaitSwapchainImage returned, the runtime is done with it.
  // Afterwards the image belongs to the runtime's queue family again (XR_KHR_vulkan_enable2).
  return RuntimeImageLease{index, swapchain.images[index], VK_NULL_HANDLE, 0, gpu_.graphicsQueue().family};
}

void OpenXrBackend::releaseImage(RuntimeSwapchain& base, uint32_t index, uint64_t copyValue) {
  giveBack(static_cast<OpenXrSwapchain&>(base), index, copyValue);
}

void OpenXrBackend::abandonImage(RuntimeSwapchain& swapchain, uint32_t index) {
  // OpenXR has no way to hand an image back unused; it is released with what it held (the copy
  // never ran, so there is nothing to hand over between queues).
  giveBack(static_cast<OpenXrSwapchain&>(swapchain), index, std::nullopt);
}

Status OpenXrBackend::prepareHandoffs(OpenXrSwapchain& swapchain) {
  gpu::Queue& runtimeQueue = gpu_.graphicsQueue();
  const gpu::Queue& copyQueue = gpu_.copyQueue();
  const VkImageCreateInfo& info = swapchain.info;
  const bool acquire = copyQueue.family != runtimeQueue.family;
  const bool mirrored = mirror_ != nullptr && !vk::isDepthFormat(info.format);
  // Copies on the runtime's queue run in order before the release; the wait is all it takes.
  if (!acquire && !mirrored && &copyQueue == &runtimeQueue) return {};
  VkDevice device = gpu_.device();
  if (mirrored) {
    VkImageCreateInfo mirrorInfo = info;
    mirrorInfo.mipLevels = 1;  // what composition reads
    auto image = gpu::createComposableImage(gpu_, mirrorInfo, "mirror");
    if (!image) return image.error();
    swapchain.mirror = std::move(image).value();
  }
  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.queueFamilyIndex = runtimeQueue.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool(handoff)"); !s) {
    return s;
  }
  swapchain.handoffPool = vk::CommandPool(device, pool);
  swapchain.handoffTimeline = handoffTimeline_.get();
  swapchain.handoffs.resize(swapchain.images.size());
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = uint32_t(swapchain.handoffs.size());
  if (auto s =
          vk::check(vkAllocateCommandBuffers(device, &alloc, swapchain.handoffs.data()), "vkAllocateCommandBuffers");
      !s) {
    return s;
  }
  const VkImageLayout attachment = vk::attachmentLayout(info.format);
  for (size_t i = 0; i < swapchain.images.size(); ++i) {
    VkCommandBuffer cb = swapchain.handoffs[i];
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;  // resubmitted while pending
    vkBeginCommandBuffer(cb, &begin);
    if (acquire) {
      // The acquire half of the copy's release (SharedSwapchain::recordCopy, step 4): the same
      // layouts and families. Its first scope chains with the wait on the copy timeline.
      VkImageMemoryBarrier acquireBarrier{};
      acquireBarrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
      acquireBarrier.srcAccessMask = 0;
      acquireBarrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
      acquireBarrier.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      acquireBarrier.newLayout = attachment;
      acquireBarrier.srcQueueFamilyIndex = copyQueue.family;
      acquireBarrier.dstQueueFamilyIndex = runtimeQueue.family;
      acquireBarrier.image = swapchain.images[i];
      acquireBarrier.subresourceRange = {vk::aspectMask(info.format), 0, info.mipLevels, 0, info.arrayLayers};
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
                           nullptr, 1, &acquireBarrier);
    }
    if (mirrored) recordMirrorCopy(cb, swapchain.images[i], swapchain.mirror->image.get(), info);
    if (auto s = vk::check(vkEndCommandBuffer(cb), "vkEndCommandBuffer(handoff)"); !s) return s;
  }
  return {};
}

void OpenXrBackend::giveBack(OpenXrSwapchain& swapchain, uint32_t index, std::optional<uint64_t> copyValue) {
  auto release = oxr::make<XrSwapchainImageReleaseInfo>(XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO);
  {
    Lock lock(swapchain.link->queue.submitMutex);
    if (copyValue && index < swapchain.handoffs.size()) {
      // The runtime's queue waits for the copy (and takes the image back into its family, and
      // copies it for the mirror) before anything the runtime submits after
      // xrReleaseSwapchainImage.
      const uint64_t handoff = handoffTimeline_->next();
      std::array<VkSemaphore, 1> waits{copyTimeline_.get()};
      std::array<VkSemaphore, 1> signals{handoffTimeline_->get()};
      const VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
      VkTimelineSemaphoreSubmitInfo values{};
      values.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
      values.waitSemaphoreValueCount = 1;
      values.pWaitSemaphoreValues = &*copyValue;
      values.signalSemaphoreValueCount = 1;
      values.pSignalSemaphoreValues = &handoff;
      VkSubmitInfo submit{};
      submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
      submit.pNext = &values;
      submit.waitSemaphoreCount = 1;
      submit.pWaitSemaphores = waits.data();
      submit.pWaitDstStageMask = &waitStage;
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &swapchain.handoffs[index];
      submit.signalSemaphoreCount = 1;
      submit.pSignalSemaphores = signals.data();
      if (auto s = vk::check(vkQueueSubmit(swapchain.link->queue.queue, 1, &submit, VK_NULL_HANDLE),
                             "vkQueueSubmit(handoff)");
          !s) {
        log::warn("runtime image {}: {}", index, s.error().describe());
      } else {
        swapchain.lastHandoff = handoff;
      }
    }
    if (auto s = swapchain.link->instance->check(xrReleaseSwapchainImage(swapchain.handle.get(), &release),
                                                 "xrReleaseSwapchainImage");
        !s) {
      log::warn("runtime image {}: {}", index, s.error().describe());
      return;
    }
  }
  // Acquire the next image now and wait for it only at the next release: by then the runtime
  // is done with it, so the frame worker, which serves every client in turn, does not block in
  // xrWaitSwapchainImage while the GPU drains. A failure here is reported by the next lease.
  if (auto s = acquireNext(swapchain); !s) log::debug("runtime swapchain: acquiring ahead: {}", s.error().describe());
}

void OpenXrBackend::locateViews(const OpenXrLink& link, XrTime displayTime) {
  auto info = oxr::make<XrViewLocateInfo>(XR_TYPE_VIEW_LOCATE_INFO);
  info.viewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
  info.displayTime = displayTime;
  info.space = link.view.get();
  auto viewState = oxr::make<XrViewState>(XR_TYPE_VIEW_STATE);
  std::vector<XrView> located(system_.views.size(), oxr::make<XrView>(XR_TYPE_VIEW));
  uint32_t count = 0;
  const XrResult r =
      xrLocateViews(link.session.get(), &info, &viewState, uint32_t(located.size()), &count, located.data());
  constexpr XrViewStateFlags kValid = XR_VIEW_STATE_ORIENTATION_VALID_BIT | XR_VIEW_STATE_POSITION_VALID_BIT;
  // Keep the last good ones when the runtime cannot tell (untracked) or has another count.
  if (XR_FAILED(r) || count != located.size() || (viewState.viewStateFlags & kValid) != kValid) return;
  std::vector<EyeView> views;
  for (const XrView& v : located) {
    views.push_back(EyeView{fromXr(v.pose), {v.fov.angleLeft, v.fov.angleRight, v.fov.angleUp, v.fov.angleDown}});
  }
  Lock lock(timingMutex_);
  views_ = std::move(views);
}

std::vector<EyeView> OpenXrBackend::views() const {
  Lock lock(timingMutex_);
  return views_;
}

InputSnapshot OpenXrBackend::input(int64_t) const {
  auto link = this->link();
  return link && link->input ? link->input->snapshot() : InputSnapshot{};
}

Status OpenXrBackend::applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
  auto link = this->link();
  if (!link || !link->input) return makeError(ErrorCode::unsupported, "the OpenXR runtime's controllers are not bound");
  if (auto s = link->input->applyHaptic(hand, output, pulse); !s) return s;
  Lock lock(hapticMutex_);
  if (hand < haptics_.size()) {
    haptics_[hand].pulses++;
    haptics_[hand].last = pulse;
  }
  return {};
}

Status OpenXrBackend::stopHaptic(uint32_t hand, const std::string& output) {
  auto link = this->link();
  if (!link || !link->input) return makeError(ErrorCode::unsupported, "the OpenXR runtime's controllers are not bound");
  if (auto s = link->input->stopHaptic(hand, output); !s) return s;
  Lock lock(hapticMutex_);
  if (hand < haptics_.size()) haptics_[hand].stops++;
  return {};
}

std::array<HapticStatus, kHandCount> OpenXrBackend::haptics() const {
  Lock lock(hapticMutex_);
  return haptics_;
}

void OpenXrBackend::commitFrame(CommittedFrame frame) {
  // Frames the scheduler lets go of need nothing: the runtime owns its images' lifetimes.
  (void)feed_.commit(std::move(frame), monotonicNowNs());
}

void OpenXrBackend::removeClient(uint32_t clientId) { (void)feed_.removeClient(clientId); }

bool OpenXrBackend::readRuntimeImage(std::shared_ptr<RuntimeSwapchain>, uint32_t, uint64_t,
                                     std::function<void(Result<Pixels>)> done) {
  done(makeError(ErrorCode::unsupported,
                 "the openxr backend cannot read runtime images back: they belong to the OpenXR runtime"));
  return true;
}

void OpenXrBackend::readDisplay(std::function<void(Result<DisplaySnapshot>)> done) {
  done(makeError(ErrorCode::unsupported, "the openxr backend's display is the OpenXR runtime's; read it back there"));
}

void OpenXrBackend::start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "xrc-display");
    run();
  });
}

void OpenXrBackend::stop() {
  if (!thread_.joinable()) return;
  stopRequested_ = true;
  thread_.join();
  locator_.drain();  // later locates fail their callers instead of waiting for a gone runtime
  // The session ends with the daemon; the runtime sees its application leave.
  std::shared_ptr<OpenXrLink> link;
  {
    Lock lock(linkMutex_);
    link = std::move(link_);
  }
}

void OpenXrBackend::run() {
  while (!stopRequested_) {
    loopIterations_++;
    if (lost_) {
      reconnect();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    pollEvents();
    if (lost_) continue;
    if (!running_) {
      // Idle, synchronized to nothing: the runtime has not made the session ready (or stopped it).
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    frame();
  }
}

void OpenXrBackend::pollEvents() {
  auto link = this->link();
  if (!link) return;
  for (;;) {
    auto event = oxr::make<XrEventDataBuffer>(XR_TYPE_EVENT_DATA_BUFFER);
    const XrResult r = xrPollEvent(link->instance->handle(), &event);
    if (r == XR_EVENT_UNAVAILABLE) return;
    if (XR_FAILED(r)) {
      loseRuntime(fmt::format("xrPollEvent: {}", oxr::resultName(link->instance->handle(), r)));
      return;
    }
    switch (event.type) {
      case XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED:
        onSessionState(reinterpret_cast<const XrEventDataSessionStateChanged&>(event).state);
        if (lost_) return;
        break;
      case XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING:
        loseRuntime("the OpenXR instance is being lost");
        return;
      case XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING: {
        // Layers and poses are all in STAGE, which the daemon forwards as it is; what clients
        // must learn is where LOCAL went (a recenter, or STAGE itself moved).
        const auto& change = reinterpret_cast<const XrEventDataReferenceSpaceChangePending&>(event);
        log::info("the OpenXR runtime changes reference space {}", int(change.referenceSpaceType));
        auto when = change.changeTime > 0 ? link->instance->toMonotonicNs(change.changeTime) : Result<int64_t>(0);
        relocateLocal(when && when.value() > monotonicNowNs() ? when.value() : monotonicNowNs());
        break;
      }
      default:
        break;
    }
  }
}

void OpenXrBackend::onSessionState(XrSessionState state) {
  auto link = this->link();
  const OpenXrInstance& xr = *link->instance;
  log::info("OpenXR session state {}", stateName(state));
  switch (state) {
    case XR_SESSION_STATE_READY: {
      auto begin = oxr::make<XrSessionBeginInfo>(XR_TYPE_SESSION_BEGIN_INFO);
      begin.primaryViewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
      Lock lock(link->queue.submitMutex);
      if (auto s = xr.check(xrBeginSession(link->session.get(), &begin), "xrBeginSession"); !s) {
        log::error("{}", s.error().describe());
        return;
      }
      running_ = true;
      return;
    }
    case XR_SESSION_STATE_SYNCHRONIZED:
      feed_.setSystemVisibility({false, false});
      return;
    case XR_SESSION_STATE_VISIBLE:
      feed_.setSystemVisibility({true, false});
      return;
    case XR_SESSION_STATE_FOCUSED:
      feed_.setSystemVisibility({true, true});
      return;
    case XR_SESSION_STATE_STOPPING: {
      feed_.setSystemVisibility({false, false});
      Lock lock(link->queue.submitMutex);
      if (auto s = xr.check(xrEndSession(link->session.get()), "xrEndSession"); !s)
        log::warn("{}", s.error().describe());
      running_ = false;
      return;
    }
    case XR_SESSION_STATE_LOSS_PENDING:
      loseRuntime("the OpenXR session is being lost");
      return;
    case XR_SESSION_STATE_EXITING:
      loseRuntime("the OpenXR runtime ended the session");
      return;
    default:
      return;
  }
}

void OpenXrBackend::frame() {
  auto link = this->link();
  const OpenXrInstance& xr = *link->instance;
  XrSession session = link->session.get();
  auto state = oxr::make<XrFrameState>(XR_TYPE_FRAME_STATE);
  auto waitInfo = oxr::make<XrFrameWaitInfo>(XR_TYPE_FRAME_WAIT_INFO);
  XrResult r = xrWaitFrame(session, &waitInfo, &state);
  if (r == XR_ERROR_SESSION_LOST || r == XR_ERROR_INSTANCE_LOST) return loseRuntime("xrWaitFrame: runtime lost");
  if (r == XR_ERROR_SESSION_NOT_RUNNING) {
    running_ = false;
    return;
  }
  if (auto s = xr.check(r, "xrWaitFrame"); !s) {
    log::error("{}", s.error().describe());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return;
  }
  const int64_t start = monotonicNowNs();
  auto vsync = xr.toMonotonicNs(state.predictedDisplayTime);
  if (!vsync) return loseRuntime(vsync.error().describe());
  const int64_t period = state.predictedDisplayPeriod > 0 ? state.predictedDisplayPeriod : clock().periodNs;
  const int64_t refreshNs = refresh_.add(period);
  if (const int64_t before = refreshPeriodNs_.exchange(refreshNs);
      before == 0 || std::abs(1e9 / double(before) - 1e9 / double(refreshNs)) > 0.5) {
    log::info("the OpenXR runtime displays at {:.2f} Hz", 1e9 / double(refreshNs));
  }
  // Latch clients' frames late, so that a client paced to this vsync has time to finish: half a
  // refresh period before it. But never more than half a period after xrWaitFrame returned: the
  // runtime paces the daemon like any application, counting the time from xrWaitFrame's return
  // to the next call as its work, and a longer wait would look like a slow application and move
  // the daemon to a longer frame period, which lengthens the wait in turn. Runtimes predict
  // display times well ahead of xrWaitFrame's return (Monado: about two periods), so the latch
  // is usually the second bound; clients are paced to it (DisplayClock::latchLeadNs), not to
  // the display time, or their frames would miss it by the runtime's lead.
  // A runtime that wakes the daemon less than half a period before the display time (Monado at
  // 20 Hz: 17 ms of 50) is latched for at once.
  const int64_t latchNs = std::max(start, std::min(vsync.value() - refreshNs / 2, start + refreshNs / 2));
  {
    Lock lock(timingMutex_);
    clock_.originNs = vsync.value();
    clock_.periodNs = period;
    clock_.latchLeadNs = vsync.value() - latchNs;
  }
  {
    // At once, as applications do: what the runtime does in xrBeginFrame (under Monado, a round
    // trip to its service) overlaps the wait for clients' frames instead of delaying xrEndFrame.
    Lock lock(link->queue.submitMutex);
    auto begin = oxr::make<XrFrameBeginInfo>(XR_TYPE_FRAME_BEGIN_INFO);
    r = xrBeginFrame(session, &begin);
  }
  if (r == XR_ERROR_SESSION_LOST || r == XR_ERROR_INSTANCE_LOST) return loseRuntime("xrBeginFrame: runtime lost");
  if (auto s = xr.check(r, "xrBeginFrame"); !s) {
    log::error("{}", s.error().describe());
    return;
  }
  if (link->input) link->input->sync(state.predictedDisplayTime);
  locateViews(*link, state.predictedDisplayTime);
  // The head at this display time and the next one: the times clients' waitFrame targets (they
  // wake a period ahead), so answering them needs no call into the runtime.
  for (const int64_t t : {vsync.value(), vsync.value() + period}) {
    if (auto head = locateInStage(*link, link->view.get(), t)) rememberHead(t, *head);
  }
  if (const int64_t wait = latchNs - monotonicNowNs(); wait > 0) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
  }

  // Declared before the queue lock: dropping the last reference to a swapchain takes that lock.
  // Clients waiting to be woken for their next frame are woken by this latch (FrameScheduler::
  // whenLatched), after the input sync and the head locations above that their answers carry.
  DisplaySelection selection = feed_.select(vsync.value(), period);
  FrameLayers layers;
  if (state.shouldRender) {
    for (const CommittedFrame& f : selection.shown) {
      addLayers(f, link->stage.get(), system_.views.size(), xr.layerExtensions(), layers);
    }
  }
  if (layers.leftOut > 0 && !warnedLayersLeftOut_) {
    warnedLayersLeftOut_ = true;
    log::warn(
        "the OpenXR runtime lacks the extension of some client layers (cylinder, equirect or cube): "
        "they are left out of its frames");
  }
  if (layers.order.size() > xr.maxLayerCount()) {
    log::warn("{} layers this frame, the runtime takes {}: the top ones are left out", layers.order.size(),
              xr.maxLayerCount());
    layers.order.resize(xr.maxLayerCount());
  }
  auto end = oxr::make<XrFrameEndInfo>(XR_TYPE_FRAME_END_INFO);
  end.displayTime = state.predictedDisplayTime;
  // The bottom frame's mode (the primary's), if this runtime (after a reconnect, maybe another)
  // still offers it; else the runtime's preferred one.
  EnvironmentBlendMode blendMode = runtimeBlendModes_.front();
  if (auto wanted = selection.environmentBlendMode(); wanted && blendModeSupported(runtimeBlendModes_, *wanted)) {
    blendMode = *wanted;
  }
  end.environmentBlendMode = XrEnvironmentBlendMode(blendMode);
  end.layerCount = uint32_t(layers.order.size());
  end.layers = layers.order.data();
  {
    Lock lock(link->queue.submitMutex);
    r = xrEndFrame(session, &end);
  }
  if (r == XR_ERROR_SESSION_LOST || r == XR_ERROR_INSTANCE_LOST) return loseRuntime("xrEndFrame: runtime lost");
  if (auto s = xr.check(r, "xrEndFrame"); !s) {
    log::error("{}", s.error().describe());
    return;
  }
  displayFrames_++;
  feed_.displayed(monotonicNowNs() - start);
  if (mirror_ != nullptr && state.shouldRender) {
    mirror_->sent(std::move(selection.shown), knownHeadPose(vsync.value()).value_or(Pose{}));
  }
}

void OpenXrBackend::loseRuntime(const std::string& why) {
  if (lost_) return;
  log::error("OpenXR runtime lost ({}): disconnecting every client, then reconnecting", why);
  lost_ = true;
  running_ = false;
  feed_.setSystemVisibility({false, false});
  if (options_.disconnectAllClients) options_.disconnectAllClients();
  backoffNs_ = kMinBackoffNs;
  nextAttemptNs_ = monotonicNowNs() + backoffNs_;
}

void OpenXrBackend::reconnect() {
  if (monotonicNowNs() < nextAttemptNs_) return;
  std::shared_ptr<OpenXrLink> old;
  {
    // The old session goes once its last swapchain is gone (the clients' teardown runs on the
    // frame worker); until then the runtime's resources stay valid for it.
    Lock lock(linkMutex_);
    if (link_ && link_.use_count() > 1) {
      nextAttemptNs_ = monotonicNowNs() + kMinBackoffNs / 5;
      return;
    }
    old = std::move(link_);
  }
  old.reset();  // destroys the old session and instance
  auto attempt = [&]() -> Status {
    auto instance = OpenXrInstance::create(options_.overlay);
    if (!instance) return instance.error();
    if (auto s = instance.value()->adoptVulkan(gpu_.instance(), gpu_.physical()); !s) return s;
    return openSession(std::move(instance).value());
  };
  lost_ = false;  // openSession() runs the session's first frame, as at startup
  if (auto s = attempt(); !s) {
    lost_ = true;
    running_ = false;
    backoffNs_ = std::min(kMaxBackoffNs, backoffNs_ * 2);
    nextAttemptNs_ = monotonicNowNs() + backoffNs_;
    log::warn("OpenXR runtime still unavailable ({}); next attempt in {} ms", s.error().describe(),
              backoffNs_ / 1'000'000);
    return;
  }
  log::info("OpenXR runtime back: new session created");
  lost_ = false;
}

}  // namespace xrc
