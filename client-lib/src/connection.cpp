#include <unistd.h>

#include <cstring>

#include "internal.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::client {

namespace {

SystemDescription fromWire(wire::SystemDescription::Reader in) {
  SystemDescription out;
  out.daemonVersion = in.getDaemonVersion().cStr();
  out.backend = in.getBackend().cStr();
  for (auto v : in.getViews()) {
    ViewDescription view;
    view.recommendedWidth = v.getRecommendedWidth();
    view.recommendedHeight = v.getRecommendedHeight();
    view.maxWidth = v.getMaxWidth();
    view.maxHeight = v.getMaxHeight();
    view.eyeInHead = xrc::fromWire(v.getEyeInHead());
    if (v.getFov().size() == 4) {
      for (uint32_t i = 0; i < 4; ++i) view.fov[i] = v.getFov()[i];
    }
    out.views.push_back(view);
  }
  out.refreshHz = in.getRefreshHz();
  for (int64_t f : in.getSwapchainFormats()) out.swapchainFormats.push_back(VkFormat(f));
  auto device = xrc::fromWire(in.getDevice());
  if (device) out.device = device.value();
  out.maxLayers = in.getMaxLayers();
  out.maxSwapchains = in.getMaxSwapchains();
  out.maxArrayLayers = in.getMaxArrayLayers();
  out.daemonHasExternalSemaphoreFd = in.getDaemonHasExternalSemaphoreFd();
  out.localInStage = xrc::fromWire(in.getLocalInStage());
  out.stageBoundsWidth = in.getStageBoundsWidth();
  out.stageBoundsDepth = in.getStageBoundsDepth();
  return out;
}

void toWire(const SubImage& sub, wire::SubImage::Builder out) {
  out.setSwapchainId(sub.swapchainId);
  auto rect = out.initImageRect();
  rect.setX(sub.x);
  rect.setY(sub.y);
  rect.setWidth(sub.width);
  rect.setHeight(sub.height);
  out.setArrayIndex(sub.arrayIndex);
}

}  // namespace

// --- free functions ----------------------------------------------------------------------------

Result<SystemDescription> describe(const std::string& socketPath) {
  auto link = RpcLink::open(socketPath);
  if (!link) return link.error();
  auto reply =
      link.value()->wait(link.value()->bootstrap().describeRequest().send().then(
                             [](capnp::Response<wire::Compositor::DescribeResults>&& r) -> Result<SystemDescription> {
                               if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
                               return fromWire(r.getSystem());
                             }),
                         "describe");
  if (!reply) return reply.error();
  return std::move(reply).value();
}

std::vector<const char*> requiredInstanceExtensions() {
  return {std::begin(vk::kQueryInstanceExtensions), std::end(vk::kQueryInstanceExtensions)};
}

std::vector<const char*> requiredDeviceExtensions(VkInstance instance, VkPhysicalDevice physicalDevice) {
  // Named as extensions even where Vulkan 1.1 made them core, so that a version 1.0 device (an
  // OpenXR app's) may use them too.
  std::vector<const char*> out = {VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                                  VK_KHR_GET_MEMORY_REQUIREMENTS_2_EXTENSION_NAME,
                                  VK_KHR_DEDICATED_ALLOCATION_EXTENSION_NAME};
  if (vk::queryDeviceFacts(physicalDevice, vk::PhysicalDeviceQueries::khr(instance)).externalSemaphoreFd) {
    out.push_back(VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME);
    out.push_back(vk::semaphoreFdExtension());
  }
  return out;
}

VkPhysicalDevice findDaemonDevice(VkInstance instance, const SystemDescription& system) {
  const auto queries = vk::PhysicalDeviceQueries::khr(instance);
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  for (VkPhysicalDevice d : devices) {
    const DeviceFacts facts = vk::queryDeviceFacts(d, queries);
    if (facts.deviceUuid == system.device.deviceUuid && facts.driverUuid == system.device.driverUuid) return d;
  }
  return VK_NULL_HANDLE;
}

// --- Connection::Impl --------------------------------------------------------------------------

void Connection::Impl::track(kj::Promise<Status> promise, const char* what) {
  tasks.add(promise.then([this, what](Status status) {
    if (!status && !asyncError) asyncError = makeError(status.error().code, "{}: {}", what, status.error().message);
  }));
}

Status Connection::Impl::takeAsyncError() {
  // No socket I/O here: answers are read while a call blocks (waitFrame), so the calls that must
  // not block (acquire, wait, release, endFrame) do not pay for processing them.
  if (link->disconnected()) return makeError(ErrorCode::internal, "the connection to xr-compositord was lost");
  if (!asyncError) return {};
  Error error = std::move(*asyncError);
  asyncError.reset();
  return error;
}

void Connection::Impl::taskFailed(kj::Exception&& exception) {
  if (exception.getType() == kj::Exception::Type::DISCONNECTED) link->markDisconnected();
  if (!asyncError) {
    asyncError =
        makeError(ErrorCode::internal, "connection to xr-compositord failed: {}", exception.getDescription().cStr());
  }
}

// --- Connection --------------------------------------------------------------------------------

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::~Connection() = default;

const SystemDescription& Connection::system() const { return impl_->system; }
SyncMode Connection::syncMode() const { return impl_->syncMode; }
uint32_t Connection::clientId() const { return impl_->clientId; }
uint64_t Connection::blockingRoundTrips() const { return impl_->roundTrips; }

Result<std::unique_ptr<Connection>> Connection::connect(const ConnectOptions& options) {
  const VulkanBinding& vkb = options.vulkan;
  if (vkb.device == VK_NULL_HANDLE || vkb.physicalDevice == VK_NULL_HANDLE || vkb.queue == VK_NULL_HANDLE) {
    return makeError(ErrorCode::invalidArgument, "connect: the Vulkan device, physical device and queue are required");
  }
  // Device-level entry points of extensions that were not enabled resolve to null.
  if (vkGetDeviceProcAddr(vkb.device, "vkGetMemoryFdKHR") == nullptr) {
    return makeError(ErrorCode::invalidArgument,
                     "connect: the VkDevice must enable {} (see requiredDeviceExtensions())",
                     VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  }
  auto impl = std::make_unique<Impl>();
  impl->vulkan = vkb;
  impl->importSemaphoreFd =
      reinterpret_cast<PFN_vkImportSemaphoreFdKHR>(vkGetDeviceProcAddr(vkb.device, "vkImportSemaphoreFdKHR"));
  if (vkb.instance == VK_NULL_HANDLE) return makeError(ErrorCode::invalidArgument, "connect: the VkInstance is required");
  const auto queries = vk::PhysicalDeviceQueries::khr(vkb.instance);
  if (queries.properties2 == nullptr) {
    return makeError(ErrorCode::invalidArgument,
                     "connect: the VkInstance must enable {} (see requiredInstanceExtensions())",
                     VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);
  }
  DeviceFacts facts = vk::queryDeviceFacts(vkb.physicalDevice, queries);
  facts.externalSemaphoreFd = facts.externalSemaphoreFd && impl->importSemaphoreFd != nullptr;

  auto link = RpcLink::open(options.socketPath);
  if (!link) return link.error();
  impl->link = std::move(link).value();

  auto request = impl->link->bootstrap().connectRequest();
  auto info = request.initClient();
  info.initVersion().setMajor(options.protocolMajor);
  info.getVersion().setMinor(options.protocolMinor);
  info.setName(options.applicationName);
  info.setPid(uint32_t(::getpid()));
  xrc::toWire(facts, info.initDevice());
  info.setHasExternalSemaphoreFd(facts.externalSemaphoreFd);
  Impl* raw = impl.get();
  auto reply =
      impl->link->wait(request.send().then([raw](capnp::Response<wire::Compositor::ConnectResults>&& r) -> Status {
        if (auto s = xrc::fromWire(r.getError()); !s) return s;
        raw->session = r.getSession();
        raw->system = fromWire(r.getSystem());
        raw->syncMode = xrc::fromWire(r.getSyncMode());
        raw->clientId = r.getClientId();
        return {};
      }),
                       "connect");
  if (!reply) return reply.error();
  if (!reply.value()) return reply.value().error();
  impl->roundTrips++;
  return std::make_unique<Connection>(std::move(impl));
}

Result<FrameTiming> Connection::waitFrame() {
  if (auto s = impl_->takeAsyncError(); !s) return s.error();
  auto reply = impl_->link->wait(impl_->session.waitFrameRequest().send().then([](capnp::Response<
                                                                                   wire::Session::WaitFrameResults>&& r)
                                                                                   -> Result<FrameTiming> {
    if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
    auto t = r.getTiming();
    FrameTiming timing;
    timing.frameId = t.getFrameId();
    timing.predictedDisplayTimeNs = t.getPredictedDisplayTime();
    timing.predictedDisplayPeriodNs = t.getPredictedDisplayPeriod();
    timing.shouldRender = t.getShouldRender();
    timing.headInStage = xrc::fromWire(t.getHeadInStage());
    timing.visible = t.getVisible();
    timing.focused = t.getFocused();
    timing.stopping = t.getStopping();
    return timing;
  }),
                                 "waitFrame");
  impl_->roundTrips++;
  if (!reply) return reply.error();
  if (reply.value()) impl_->waitedFrame = reply.value().value().frameId;
  return std::move(reply).value();
}

Result<Pose> Connection::locateHead(int64_t timeNs) {
  if (auto s = impl_->takeAsyncError(); !s) return s.error();
  if (timeNs <= 0) return makeError(ErrorCode::invalidArgument, "locateHead: time {} is not positive", timeNs);
  auto request = impl_->session.locateHeadRequest();
  request.setTime(timeNs);
  auto reply = impl_->link->wait(
      request.send().then([](capnp::Response<wire::Session::LocateHeadResults>&& r) -> Result<Pose> {
        if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
        return xrc::fromWire(r.getHeadInStage());
      }),
      "locateHead");
  impl_->roundTrips++;
  if (!reply) return reply.error();
  return std::move(reply).value();
}

Status Connection::poll() {
  impl_->link->poll();
  if (impl_->link->disconnected()) return makeError(ErrorCode::internal, "the connection to xr-compositord was lost");
  return {};
}

bool Connection::lost() const { return impl_->link->disconnected(); }

Status Connection::beginFrame(uint64_t frameId) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  if (!impl_->waitedFrame || *impl_->waitedFrame != frameId) {
    return makeError(ErrorCode::callOrder, "beginFrame: frame {} was not returned by the last waitFrame", frameId);
  }
  auto request = impl_->session.beginFrameRequest();
  request.setFrameId(frameId);
  // Not flushed: it travels with the frame's first release or its endFrame.
  impl_->track(request.send().then([](auto&& r) { return xrc::fromWire(r.getError()); }), "beginFrame");
  impl_->waitedFrame.reset();
  impl_->begunFrame = frameId;
  return {};
}

Status Connection::endFrame(uint64_t frameId, int64_t displayTimeNs, const std::vector<Layer>& layers) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  if (!impl_->begunFrame || *impl_->begunFrame != frameId) {
    return makeError(ErrorCode::callOrder, "endFrame: frame {} was not begun", frameId);
  }
  auto request = impl_->session.endFrameRequest();
  request.setFrameId(frameId);
  request.setDisplayTime(displayTimeNs);
  auto out = request.initLayers(uint32_t(layers.size()));
  for (uint32_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = layers[i];
    out[i].setFlags(layer.flags);
    if (layer.kind == Layer::Kind::projection) {
      auto views = out[i].initProjection(uint32_t(layer.views.size()));
      for (uint32_t v = 0; v < layer.views.size(); ++v) {
        const ProjectionView& pv = layer.views[v];
        xrc::toWire(pv.pose, views[v].initPose());
        auto fov = views[v].initFov(4);
        for (uint32_t k = 0; k < 4; ++k) fov.set(k, pv.fov[k]);
        toWire(pv.subImage, views[v].initSubImage());
        views[v].setHasDepth(pv.hasDepth);
        if (pv.hasDepth) {
          auto depth = views[v].initDepth();
          toWire(pv.depthSubImage, depth.initSubImage());
          depth.setMinDepth(pv.minDepth);
          depth.setMaxDepth(pv.maxDepth);
          depth.setNearZ(pv.nearZ);
          depth.setFarZ(pv.farZ);
        }
      }
    } else {
      auto quad = out[i].initQuad();
      toWire(layer.quadSubImage, quad.initSubImage());
      xrc::toWire(layer.quadPose, quad.initPose());
      quad.setWidth(layer.quadWidth);
      quad.setHeight(layer.quadHeight);
    }
  }
  impl_->track(request.send().then([](auto&& r) { return xrc::fromWire(r.getError()); }), "endFrame");
  impl_->link->flush();
  impl_->begunFrame.reset();
  return {};
}

}  // namespace xrc::client
