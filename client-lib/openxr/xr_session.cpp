// Session lifecycle and the frame loop: xrWaitFrame is the one blocking round trip of a frame;
// xrBeginFrame and xrEndFrame are validated here and sent without waiting for the daemon.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "entry_points.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::openxr {

namespace {

constexpr size_t kRememberedHeadPoses = 8;
constexpr std::chrono::milliseconds kWaitForBeginTimeout{1000};

struct SubImageCheck {
  XrResult result = XR_SUCCESS;
  client::SubImage out;
};

// `cube`: for a cube layer, which needs a cube map; every other layer needs a 2D swapchain.
SubImageCheck checkSubImage(const Session& session, const XrSwapchainSubImage& sub, bool cube = false) {
  SubImageCheck check;
  auto swapchain = lookup<SwapchainObject>(sub.swapchain);
  if (!swapchain || swapchain->session.get() != &session) return {XR_ERROR_HANDLE_INVALID, {}};
  if ((swapchain->faceCount == 6) != cube) return {XR_ERROR_VALIDATION_FAILURE, {}};
  if (!swapchain->everReleased) return {XR_ERROR_LAYER_INVALID, {}};
  const XrRect2Di& r = sub.imageRect;
  if (r.offset.x < 0 || r.offset.y < 0 || r.extent.width <= 0 || r.extent.height <= 0 ||
      int64_t(r.offset.x) + r.extent.width > int64_t(swapchain->width) ||
      int64_t(r.offset.y) + r.extent.height > int64_t(swapchain->height)) {
    return {XR_ERROR_SWAPCHAIN_RECT_INVALID, {}};
  }
  if (sub.imageArrayIndex >= swapchain->arraySize) return {XR_ERROR_VALIDATION_FAILURE, {}};
  check.out.swapchainId = swapchain->impl->id();
  check.out.x = r.offset.x;
  check.out.y = r.offset.y;
  check.out.width = r.extent.width;
  check.out.height = r.extent.height;
  check.out.arrayIndex = sub.imageArrayIndex;
  return check;
}

bool isValidFov(const XrFovf& f) {
  return std::isfinite(f.angleLeft) && std::isfinite(f.angleRight) && std::isfinite(f.angleUp) &&
         std::isfinite(f.angleDown);
}

constexpr XrCompositionLayerFlags kKnownLayerFlags = XR_COMPOSITION_LAYER_CORRECT_CHROMATIC_ABERRATION_BIT |
                                                     XR_COMPOSITION_LAYER_BLEND_TEXTURE_SOURCE_ALPHA_BIT |
                                                     XR_COMPOSITION_LAYER_UNPREMULTIPLIED_ALPHA_BIT;

bool isEyeVisibility(XrEyeVisibility v) {
  return v == XR_EYE_VISIBILITY_BOTH || v == XR_EYE_VISIBILITY_LEFT || v == XR_EYE_VISIBILITY_RIGHT;
}

// A radius of a cylinder or sphere: non-negative, +infinity allowed (infinitely far).
bool isRadius(float r) { return !std::isnan(r) && r >= 0; }

// XR_KHR_composition_layer_cylinder, _equirect, _equirect2 and _cube (checked enabled),
// validated and converted; equirect2's angles become equirect's scale and bias (see xrc.capnp).
// `empty`: a valid layer that covers nothing (a zero angle), which is not sent.
XrResult convertShapedLayer(Session& session, const XrCompositionLayerBaseHeader* header, const Pose& spacePose,
                            client::Layer& out, bool& empty) XRC_REQUIRES(session.mutex) {
  constexpr float kTwoPi = 6.2831853f, kPi = 3.14159265f;
  empty = false;
  auto place = [&](const XrSwapchainSubImage& subImage, const XrPosef& xrPose, XrEyeVisibility eyes,
                   bool cube = false) -> XrResult {
    if (!isEyeVisibility(eyes)) return XR_ERROR_VALIDATION_FAILURE;
    const Pose pose = toPose(xrPose);
    if (!isValidPose(pose)) return XR_ERROR_POSE_INVALID;
    auto sub = checkSubImage(session, subImage, cube);
    if (XR_FAILED(sub.result)) return sub.result;
    out.quadSubImage = sub.out;
    out.quadPose = compose(spacePose, pose);
    out.eyeVisibility = uint32_t(eyes);
    return XR_SUCCESS;
  };
  if (header->type == XR_TYPE_COMPOSITION_LAYER_CUBE_KHR) {
    auto& layer = *reinterpret_cast<const XrCompositionLayerCubeKHR*>(header);
    // The cube map's whole extent; place() checks the eyes, and checkSubImage that it is a cube map.
    auto swapchain = lookup<SwapchainObject>(layer.swapchain);
    if (!swapchain || swapchain->session.get() != &session) return XR_ERROR_HANDLE_INVALID;
    XrSwapchainSubImage whole{
        layer.swapchain, {{0, 0}, {int32_t(swapchain->width), int32_t(swapchain->height)}}, layer.imageArrayIndex};
    if (XrResult r = place(whole, {layer.orientation, {0, 0, 0}}, layer.eyeVisibility, /*cube=*/true); XR_FAILED(r)) {
      return r;
    }
    out.kind = client::Layer::Kind::cube;
    out.quadPose.position = {0, 0, 0};  // infinitely far: only the orientation counts
    return XR_SUCCESS;
  }
  if (header->type == XR_TYPE_COMPOSITION_LAYER_CYLINDER_KHR) {
    auto& layer = *reinterpret_cast<const XrCompositionLayerCylinderKHR*>(header);
    if (!isRadius(layer.radius) || !(layer.centralAngle >= 0 && layer.centralAngle <= kTwoPi) ||
        !(layer.aspectRatio > 0 && std::isfinite(layer.aspectRatio))) {
      return XR_ERROR_VALIDATION_FAILURE;
    }
    out.kind = client::Layer::Kind::cylinder;
    empty = layer.centralAngle == 0;
    out.radius = layer.radius;
    out.centralAngle = layer.centralAngle;
    out.aspectRatio = layer.aspectRatio;
    return place(layer.subImage, layer.pose, layer.eyeVisibility);
  }
  out.kind = client::Layer::Kind::equirect;
  if (header->type == XR_TYPE_COMPOSITION_LAYER_EQUIRECT_KHR) {
    auto& layer = *reinterpret_cast<const XrCompositionLayerEquirectKHR*>(header);
    if (!isRadius(layer.radius) || !std::isfinite(layer.scale.x) || !std::isfinite(layer.scale.y) ||
        !std::isfinite(layer.bias.x) || !std::isfinite(layer.bias.y)) {
      return XR_ERROR_VALIDATION_FAILURE;
    }
    out.radius = layer.radius;
    out.scale[0] = layer.scale.x;
    out.scale[1] = layer.scale.y;
    out.bias[0] = layer.bias.x;
    out.bias[1] = layer.bias.y;
    return place(layer.subImage, layer.pose, layer.eyeVisibility);
  }
  auto& layer = *reinterpret_cast<const XrCompositionLayerEquirect2KHR*>(header);
  const float central = layer.centralHorizontalAngle, upper = layer.upperVerticalAngle,
              lower = layer.lowerVerticalAngle;
  if (!isRadius(layer.radius) || !(central >= 0 && central <= kTwoPi) || !(upper <= kPi / 2 && lower >= -kPi / 2) ||
      !(lower <= upper)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  out.radius = layer.radius;
  const EquirectMapping mapping = equirectMappingOf({central, upper, lower});
  std::copy(mapping.scale.begin(), mapping.scale.end(), out.scale);
  std::copy(mapping.bias.begin(), mapping.bias.end(), out.bias);
  // A zero-wide or zero-high window (or one so thin its mapping is not finite) shows nothing.
  empty = !(std::isfinite(out.scale[0]) && std::isfinite(out.bias[0]) && std::isfinite(out.scale[1]) &&
            std::isfinite(out.bias[1]));
  return place(layer.subImage, layer.pose, layer.eyeVisibility);
}

// One layer of xrEndFrame, validated and converted (poses into STAGE space). `skip`: the layer's
// space cannot be located now (an action space), so it is not shown.
XrResult convertLayer(Session& session, const XrCompositionLayerBaseHeader* header, XrTime displayTime,
                      client::Layer& out, bool& skip) XRC_REQUIRES(session.mutex) {
  skip = false;
  if (header == nullptr) return XR_ERROR_LAYER_INVALID;
  const Instance& instance = *session.instance;
  const bool known = header->type == XR_TYPE_COMPOSITION_LAYER_PROJECTION ||
                     header->type == XR_TYPE_COMPOSITION_LAYER_QUAD ||
                     (header->type == XR_TYPE_COMPOSITION_LAYER_CYLINDER_KHR &&
                      instance.enabled(XR_KHR_COMPOSITION_LAYER_CYLINDER_EXTENSION_NAME)) ||
                     (header->type == XR_TYPE_COMPOSITION_LAYER_EQUIRECT_KHR &&
                      instance.enabled(XR_KHR_COMPOSITION_LAYER_EQUIRECT_EXTENSION_NAME)) ||
                     (header->type == XR_TYPE_COMPOSITION_LAYER_EQUIRECT2_KHR &&
                      instance.enabled(XR_KHR_COMPOSITION_LAYER_EQUIRECT2_EXTENSION_NAME)) ||
                     (header->type == XR_TYPE_COMPOSITION_LAYER_CUBE_KHR &&
                      instance.enabled(XR_KHR_COMPOSITION_LAYER_CUBE_EXTENSION_NAME));
  if (!known) return XR_ERROR_LAYER_INVALID;
  if ((header->layerFlags & ~kKnownLayerFlags) != 0) return XR_ERROR_VALIDATION_FAILURE;
  auto space = lookup<Space>(header->space);
  if (!space || space->session.get() != &session) return XR_ERROR_HANDLE_INVALID;
  Pose spacePose;
  bool located = false;
  if (XrResult r = spaceInStage(session, *space, displayTime, spacePose, located); XR_FAILED(r)) return r;
  out.flags = header->layerFlags;
  if (instance.enabled(XR_KHR_COMPOSITION_LAYER_COLOR_SCALE_BIAS_EXTENSION_NAME)) {
    if (auto color = static_cast<const XrCompositionLayerColorScaleBiasKHR*>(
            findInChain(header->next, XR_TYPE_COMPOSITION_LAYER_COLOR_SCALE_BIAS_KHR))) {
      const XrColor4f& k = color->colorScale;
      const XrColor4f& b = color->colorBias;
      const float values[8] = {k.r, k.g, k.b, k.a, b.r, b.g, b.b, b.a};
      if (!std::all_of(std::begin(values), std::end(values), [](float v) { return std::isfinite(v); })) {
        return XR_ERROR_VALIDATION_FAILURE;
      }
      out.hasColor = true;
      std::copy_n(values, 4, out.colorScale);
      std::copy_n(values + 4, 4, out.colorBias);
    }
  }

  if (header->type == XR_TYPE_COMPOSITION_LAYER_PROJECTION) {
    auto& layer = *reinterpret_cast<const XrCompositionLayerProjection*>(header);
    out.kind = client::Layer::Kind::projection;
    if (layer.viewCount != session.instance->system.views.size() || layer.views == nullptr) {
      return XR_ERROR_VALIDATION_FAILURE;
    }
    for (uint32_t i = 0; i < layer.viewCount; ++i) {
      const XrCompositionLayerProjectionView& view = layer.views[i];
      if (view.type != XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW) return XR_ERROR_VALIDATION_FAILURE;
      const Pose pose = toPose(view.pose);
      if (!isValidPose(pose)) return XR_ERROR_POSE_INVALID;
      if (!isValidFov(view.fov)) return XR_ERROR_VALIDATION_FAILURE;
      auto sub = checkSubImage(session, view.subImage);
      if (XR_FAILED(sub.result)) return sub.result;
      client::ProjectionView pv;
      pv.pose = compose(spacePose, pose);
      pv.fov[0] = view.fov.angleLeft;
      pv.fov[1] = view.fov.angleRight;
      pv.fov[2] = view.fov.angleUp;
      pv.fov[3] = view.fov.angleDown;
      pv.subImage = sub.out;
      if (session.instance->enabled(XR_KHR_COMPOSITION_LAYER_DEPTH_EXTENSION_NAME)) {
        if (auto depth = static_cast<const XrCompositionLayerDepthInfoKHR*>(
                findInChain(view.next, XR_TYPE_COMPOSITION_LAYER_DEPTH_INFO_KHR))) {
          // nearZ or farZ may be +infinity (an infinite far plane, or reversed Z), not NaN.
          auto isDepthPlane = [](float z) { return !std::isnan(z) && z != -INFINITY; };
          if (!(depth->minDepth >= 0 && depth->minDepth < depth->maxDepth && depth->maxDepth <= 1) ||
              !isDepthPlane(depth->nearZ) || !isDepthPlane(depth->farZ) || depth->nearZ == depth->farZ) {
            return XR_ERROR_VALIDATION_FAILURE;
          }
          auto depthSub = checkSubImage(session, depth->subImage);
          if (XR_FAILED(depthSub.result)) return depthSub.result;
          pv.hasDepth = true;
          pv.depthSubImage = depthSub.out;
          pv.minDepth = depth->minDepth;
          pv.maxDepth = depth->maxDepth;
          pv.nearZ = depth->nearZ;
          pv.farZ = depth->farZ;
        }
      }
      out.views.push_back(pv);
    }
  } else if (header->type != XR_TYPE_COMPOSITION_LAYER_QUAD) {
    bool empty = false;
    if (XrResult r = convertShapedLayer(session, header, spacePose, out, empty); XR_FAILED(r)) return r;
    // A daemon before protocol 1.6 cannot show these; the frame goes on without them.
    skip = !located || empty || session.instance->system.protocolMinor < 6;
    return XR_SUCCESS;
  } else {
    auto& layer = *reinterpret_cast<const XrCompositionLayerQuad*>(header);
    out.kind = client::Layer::Kind::quad;
    if (layer.eyeVisibility != XR_EYE_VISIBILITY_BOTH && layer.eyeVisibility != XR_EYE_VISIBILITY_LEFT &&
        layer.eyeVisibility != XR_EYE_VISIBILITY_RIGHT) {
      return XR_ERROR_VALIDATION_FAILURE;
    }
    const Pose pose = toPose(layer.pose);
    if (!isValidPose(pose)) return XR_ERROR_POSE_INVALID;
    if (!(std::isfinite(layer.size.width) && std::isfinite(layer.size.height) && layer.size.width >= 0 &&
          layer.size.height >= 0)) {
      return XR_ERROR_VALIDATION_FAILURE;
    }
    auto sub = checkSubImage(session, layer.subImage);
    if (XR_FAILED(sub.result)) return sub.result;
    out.quadSubImage = sub.out;
    out.quadPose = compose(spacePose, pose);
    out.quadWidth = layer.size.width;
    out.quadHeight = layer.size.height;
  }
  // An empty quad is valid and shows nothing, so it is not sent.
  const bool empty = out.kind == client::Layer::Kind::quad && (out.quadWidth == 0 || out.quadHeight == 0);
  skip = !located || empty;
  return XR_SUCCESS;
}

}  // namespace

XrResult XRAPI_CALL CreateSession(XrInstance handle, const XrSessionCreateInfo* info, XrSession* out) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SESSION_CREATE_INFO) || out == nullptr || info->createFlags != 0) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->systemId != kSystemId) return XR_ERROR_SYSTEM_INVALID;
  // XR_EXTX_overlay: an overlay session, stacked over the primary app by its placement.
  auto overlay = static_cast<const XrSessionCreateInfoOverlayEXTX*>(
      findInChain(info->next, XR_TYPE_SESSION_CREATE_INFO_OVERLAY_EXTX));
  if (overlay != nullptr) {
    if (!instance->enabled(XR_EXTX_OVERLAY_EXTENSION_NAME)) {
      logError("xrCreateSession", "XrSessionCreateInfoOverlayEXTX needs XR_EXTX_overlay enabled");
      return XR_ERROR_VALIDATION_FAILURE;
    }
    if (overlay->createFlags != 0 || overlay->sessionLayersPlacement > kMaxOverlayPlacement) {
      logError("xrCreateSession",
               fmt::format("overlay createFlags must be 0 and sessionLayersPlacement at most {} (got {})",
                           kMaxOverlayPlacement, overlay->sessionLayersPlacement));
      return XR_ERROR_VALIDATION_FAILURE;
    }
  }
  {
    Lock lock(instance->mutex);
    if (!instance->graphicsRequirementsQueried) return XR_ERROR_GRAPHICS_REQUIREMENTS_CALL_MISSING;
    if (instance->sessionHandle != 0) return XR_ERROR_LIMIT_REACHED;
  }
  auto binding =
      static_cast<const XrGraphicsBindingVulkanKHR*>(findInChain(info->next, XR_TYPE_GRAPHICS_BINDING_VULKAN_KHR));
  if (binding == nullptr || binding->instance == VK_NULL_HANDLE || binding->physicalDevice == VK_NULL_HANDLE ||
      binding->device == VK_NULL_HANDLE) {
    return XR_ERROR_GRAPHICS_DEVICE_INVALID;
  }
  if (client::findDaemonDevice(binding->instance, instance->system) != binding->physicalDevice) {
    logError("xrCreateSession", "the graphics binding's physical device is not the daemon's");
    return XR_ERROR_GRAPHICS_DEVICE_INVALID;
  }
  uint32_t familyCount = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(binding->physicalDevice, &familyCount, nullptr);
  if (binding->queueFamilyIndex >= familyCount) return XR_ERROR_VALIDATION_FAILURE;

  auto session = std::make_shared<Session>();
  session->instance = instance;
  session->vulkan.instance = binding->instance;
  session->vulkan.physicalDevice = binding->physicalDevice;
  session->vulkan.device = binding->device;
  session->vulkan.queueFamilyIndex = binding->queueFamilyIndex;
  vkGetDeviceQueue(binding->device, binding->queueFamilyIndex, binding->queueIndex, &session->vulkan.queue);
  {
    Lock lock(instance->mutex);
    session->vulkan.timelineSemaphores = instance->timelineDevices.count(binding->device) != 0;
  }
  client::ConnectOptions options;
  options.socketPath = instance->socketPath;
  options.applicationName = instance->applicationName;
  options.vulkan = session->vulkan;
  options.overlay = overlay != nullptr;
  options.overlayPlacement = overlay != nullptr ? overlay->sessionLayersPlacement : 0;
  auto connection = client::Connection::connect(options);
  if (!connection) {
    logError("xrCreateSession", connection.error().describe());
    return connection.error().code == ErrorCode::deviceMismatch ? XR_ERROR_GRAPHICS_DEVICE_INVALID
                                                                : XR_ERROR_RUNTIME_FAILURE;
  }
  session->stats = CallStats::fromEnvironment();
  session->connection = std::move(connection).value();
  {
    Lock lock(session->mutex);
    session->localInStage = session->connection->system().localInStage;
  }
  session->handle = Handles::get().add(session);
  StateList states;
  {
    Lock lock(session->mutex);
    session->lifecycle.created(states);
  }
  {
    Lock lock(instance->mutex);
    instance->sessionHandle = session->handle;
  }
  queueStates(*session, states);
  *out = fromRaw<XrSession>(session->handle);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL DestroySession(XrSession handle) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  std::vector<uint64_t> children;
  {
    Lock lock(session->mutex);
    children.swap(session->childHandles);
  }
  // Children first: swapchains talk to the daemon through the session's connection.
  for (uint64_t child : children) Handles::get().remove(child);
  session->connection.reset();
  {
    Lock lock(session->mutex);
    session->attachedSets.clear();
    session->attachedSetsKeepAlive.clear();
  }
  {
    Lock lock(session->instance->mutex);
    if (session->instance->sessionHandle == session->handle) session->instance->sessionHandle = 0;
  }
  session->instance->dropSessionEvents(handle);
  Handles::get().remove(session->handle);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL BeginSession(XrSession handle, const XrSessionBeginInfo* info) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SESSION_BEGIN_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  const XrViewConfigurationType type = info->primaryViewConfigurationType;
  if (type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_MONO && type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO &&
      type != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_QUAD_VARJO &&
      type != XR_VIEW_CONFIGURATION_TYPE_SECONDARY_MONO_FIRST_PERSON_OBSERVER_MSFT) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (type != systemViewConfiguration(*session->instance)) return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  Lock lock(session->mutex);
  if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  if (XrResult r = session->lifecycle.begin(); XR_FAILED(r)) return r;
  sessionBegan(*session);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EndSession(XrSession handle) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  StateList states;
  {
    Lock lock(session->mutex);
    if (XrResult r = session->lifecycle.end(states); XR_FAILED(r)) return r;
    session->frames.reset();
    session->frameBegun.notify_all();
  }
  queueStates(*session, states);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL RequestExitSession(XrSession handle) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  StateList states;
  {
    Lock lock(session->mutex);
    if (XrResult r = session->lifecycle.requestExit(states); XR_FAILED(r)) return r;
  }
  queueStates(*session, states);
  return XR_SUCCESS;
}

// LOCAL moved on the daemon (a recenter): LOCAL spaces follow it from now on, and the app is told
// (XrEventDataReferenceSpaceChangePending, effective at this frame's display time).
namespace {
void noticeLocalSpace(Session& session, const client::FrameTiming& t) XRC_REQUIRES(session.mutex) {
  const bool moved = session.localSpaceChanges && *session.localSpaceChanges != t.localSpaceChanges;
  const Pose previous = session.localInStage;
  session.localSpaceChanges = t.localSpaceChanges;
  session.localInStage = t.localInStage;
  if (!moved) return;
  XrEventDataBuffer buffer{};
  auto& event = reinterpret_cast<XrEventDataReferenceSpaceChangePending&>(buffer);
  event.type = XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING;
  event.session = fromRaw<XrSession>(session.handle);
  event.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_LOCAL;
  event.changeTime = t.predictedDisplayTimeNs;
  event.poseValid = XR_TRUE;
  const Pose newInPrevious = compose(inverse(previous), t.localInStage);
  event.poseInPreviousSpace.orientation = {newInPrevious.orientation[0], newInPrevious.orientation[1],
                                           newInPrevious.orientation[2], newInPrevious.orientation[3]};
  event.poseInPreviousSpace.position = {newInPrevious.position[0], newInPrevious.position[1],
                                        newInPrevious.position[2]};
  session.instance->pushEvent(buffer);
  if (session.instance->hasLocalFloor()) {
    // LOCAL_FLOOR moves with LOCAL; its offset to the old one is the same (both keep their height).
    event.referenceSpaceType = XR_REFERENCE_SPACE_TYPE_LOCAL_FLOOR;
    const Pose floorInPrevious = compose(inverse(localFloorOf(previous)), localFloorOf(t.localInStage));
    event.poseInPreviousSpace = toXr(floorInPrevious);
    session.instance->pushEvent(buffer);
  }
}
}  // namespace

XrResult XRAPI_CALL WaitFrame(XrSession handle, const XrFrameWaitInfo* info, XrFrameState* state) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if ((info != nullptr && info->type != XR_TYPE_FRAME_WAIT_INFO) || !hasType(state, XR_TYPE_FRAME_STATE)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  CallTimer timer(session->stats.get(), Call::waitFrame);
  bool lost = false;
  int64_t lastPredicted = 0, period = 0;
  {
    Lock lock(session->mutex);
    if (!session->lifecycle.running()) return XR_ERROR_SESSION_NOT_RUNNING;
    // OpenXR: an xrWaitFrame before the previous frame's xrBeginFrame waits for that begin (the
    // engine split: the render thread begins frame n while the simulation asks for n + 1).
    // Bounded, so that a single-threaded app that calls it twice is not stuck for good.
    session->frameBegun.wait_for(lock.native(), kWaitForBeginTimeout,
                                 [&] { return !session->frames.waitedNotBegun() || !session->lifecycle.running(); });
    if (!session->lifecycle.running()) return XR_ERROR_SESSION_NOT_RUNNING;
    if (XrResult r = checkConnection(*session); XR_FAILED(r) && r != XR_ERROR_SESSION_LOST) return r;
    lost = session->lifecycle.lost();
    lastPredicted = session->lastPredictedNs;
    period = session->periodNs;
  }
  // The blocking part runs without the session lock, so that other threads (rendering the
  // previous frame: xrEndFrame, swapchain calls) carry on meanwhile.
  std::optional<client::FrameTiming> timing;
  std::optional<Error> failure;
  if (!lost) {
    auto answer = session->connection->waitFrame();
    if (session->stats) session->stats->frameBoundary(session->connection->blockingRoundTrips());
    if (answer) {
      timing = answer.value();
    } else if (answer.error().code == ErrorCode::timeout) {
      // The daemon did not answer in time (it may be hung): xrWaitFrame cannot say
      // XR_TIMEOUT_EXPIRED, so the app gets a frame not to render, paced below, and may go on.
      logError("xrWaitFrame", answer.error().describe());
    } else if (!session->connection->lost()) {
      failure = answer.error();
    }
  }
  if (failure) {
    logError("xrWaitFrame", failure->describe());
    return toXrResult(*failure);
  }
  if (!timing) {
    // The daemon is gone (LOSS_PENDING is queued) or late. The frame loop keeps its pace without
    // rendering until the app polls the event, so that an app that treats frame-call errors
    // as fatal still gets to see the loss and wind down as the spec intends.
    const int64_t next = std::max(lastPredicted + period, monotonicNowNs() + period);
    std::this_thread::sleep_for(std::chrono::nanoseconds(next - period - monotonicNowNs()));
    timing = client::FrameTiming{};
    timing->predictedDisplayTimeNs = next;
    timing->predictedDisplayPeriodNs = period;
    timing->shouldRender = false;
  }
  StateList states;
  {
    Lock lock(session->mutex);
    if (!lost && session->connection->lost()) noticeLoss(*session);
    const client::FrameTiming& t = *timing;
    Pose head = t.headInStage;
    if (session->lifecycle.lost() && !session->headPoses.empty()) head = session->headPoses.back().second;
    session->lastPredictedNs = t.predictedDisplayTimeNs;
    session->periodNs = t.predictedDisplayPeriodNs;
    session->frames.waited(t.frameId, t.predictedDisplayTimeNs);
    session->headPoses.emplace_back(t.predictedDisplayTimeNs, head);
    if (session->headPoses.size() > kRememberedHeadPoses) session->headPoses.pop_front();
    session->lifecycle.frameWaited(t.visible, t.focused, states);
    if (t.stopping) session->lifecycle.daemonStopping(states);
    if (!session->lifecycle.lost()) noticeLocalSpace(*session, t);
    // Input comes with the focused session's answers; the app sees it at its next
    // xrSyncActions (an unfocused session's actions go inactive there, and its interaction
    // profiles stay as they were).
    if (t.input.present) session->input.setInput(t.input);
    if (t.views.size() == session->instance->system.views.size()) session->views = t.views;
    const XrSessionState now = session->lifecycle.state();
    state->predictedDisplayTime = t.predictedDisplayTimeNs;
    state->predictedDisplayPeriod = t.predictedDisplayPeriodNs;
    state->shouldRender =
        t.shouldRender && (now == XR_SESSION_STATE_VISIBLE || now == XR_SESSION_STATE_FOCUSED) ? XR_TRUE : XR_FALSE;
  }
  queueStates(*session, states);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL BeginFrame(XrSession handle, const XrFrameBeginInfo* info) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (info != nullptr && info->type != XR_TYPE_FRAME_BEGIN_INFO) return XR_ERROR_VALIDATION_FAILURE;
  CallTimer timer(session->stats.get(), Call::beginFrame);
  Lock lock(session->mutex);
  if (!session->lifecycle.running()) return XR_ERROR_SESSION_NOT_RUNNING;
  if (XrResult r = checkConnection(*session); XR_FAILED(r) && r != XR_ERROR_SESSION_LOST) return r;
  uint64_t frameId = 0;
  const XrResult order = session->frames.begin(frameId);
  if (XR_FAILED(order)) return order;
  session->frameBegun.notify_all();
  session->metrics.frameBegun(monotonicNowNs());
  if (session->lifecycle.lost()) return order;  // frames after the loss go nowhere (see xrWaitFrame)
  if (auto s = session->connection->beginFrame(frameId); !s)
    return daemonCallFailed(*session, "xrBeginFrame", s.error());
  return order;  // XR_FRAME_DISCARDED when a begun frame was never ended
}

XrResult XRAPI_CALL EndFrame(XrSession handle, const XrFrameEndInfo* info) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_FRAME_END_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  CallTimer timer(session->stats.get(), Call::endFrame);
  Lock lock(session->mutex);
  if (!session->lifecycle.running()) return XR_ERROR_SESSION_NOT_RUNNING;
  if (!session->frames.begun()) return XR_ERROR_CALL_ORDER_INVALID;
  if (info->displayTime <= 0) return XR_ERROR_TIME_INVALID;
  const auto blendMode = EnvironmentBlendMode(info->environmentBlendMode);
  if (!blendModeSupported(session->instance->system.environmentBlendModes, blendMode)) {
    return XR_ERROR_ENVIRONMENT_BLEND_MODE_UNSUPPORTED;
  }
  if (info->layerCount > session->instance->system.maxLayers) return XR_ERROR_LAYER_LIMIT_EXCEEDED;
  if (info->layerCount > 0 && info->layers == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  std::vector<client::Layer> layers;
  layers.reserve(info->layerCount);
  for (uint32_t i = 0; i < info->layerCount; ++i) {
    client::Layer layer;
    bool skip = false;
    if (XrResult r = convertLayer(*session, info->layers[i], info->displayTime, layer, skip); XR_FAILED(r)) return r;
    if (!skip) layers.push_back(std::move(layer));
  }
  if (XrResult r = checkConnection(*session); XR_FAILED(r) && r != XR_ERROR_SESSION_LOST) return r;
  uint64_t frameId = 0;
  if (XrResult r = session->frames.end(frameId); XR_FAILED(r)) return r;
  session->metrics.frameEnded(monotonicNowNs());
  if (session->lifecycle.lost()) return XR_SUCCESS;  // see xrWaitFrame
  if (auto s = session->connection->endFrame(frameId, info->displayTime, layers, blendMode); !s) {
    return daemonCallFailed(*session, "xrEndFrame", s.error());
  }
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
