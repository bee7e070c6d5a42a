#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "internal.hpp"
#include "xrc/monotonic_clock.hpp"
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
    for (auto m : v.getVisibilityMasks()) {
      VisibilityMask mask;
      mask.type = m.getType();
      if (m.getVertices().size() > 2 * kMaxVisibilityMaskVertices ||
          m.getIndices().size() > 3 * kMaxVisibilityMaskVertices) {
        continue;
      }
      for (float f : m.getVertices()) mask.vertices.push_back(f);
      for (uint32_t i : m.getIndices()) mask.indices.push_back(i);
      // A mask the rules refuse is left out: the view's rectangle stands for it.
      if (validateVisibilityMask(mask)) view.visibilityMasks.push_back(std::move(mask));
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
  out.daemonHasTimelineSemaphoreFd = in.getDaemonHasTimelineSemaphoreFd();
  out.environmentBlendModes = xrc::fromWire(in.getEnvironmentBlendModes());
  out.localInStage = xrc::fromWire(in.getLocalInStage());
  out.stageBoundsWidth = in.getStageBoundsWidth();
  out.stageBoundsDepth = in.getStageBoundsDepth();
  out.protocolMinor = in.getProtocolMinor();
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
  return link.value()->call<SystemDescription>(
      [](IoState& io) {
        return io.bootstrap.describeRequest().send().then(
            [](capnp::Response<wire::Compositor::DescribeResults>&& r) -> Result<SystemDescription> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              return fromWire(r.getSystem());
            });
      },
      "describe");
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
  const DeviceFacts facts = vk::queryDeviceFacts(physicalDevice, vk::PhysicalDeviceQueries::khr(instance));
  if (facts.externalSemaphoreFd) {
    out.push_back(VK_KHR_EXTERNAL_SEMAPHORE_EXTENSION_NAME);
    out.push_back(vk::semaphoreFdExtension());
  }
  if (facts.timelineSemaphoreFd && vk::deviceHasExtension(physicalDevice, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME)) {
    out.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
  }
  return out;
}

bool timelineSemaphoresAvailable(VkInstance instance, VkPhysicalDevice physicalDevice) {
  return vk::queryDeviceFacts(physicalDevice, vk::PhysicalDeviceQueries::khr(instance)).timelineSemaphoreFd;
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

void Connection::Impl::sendTracked(kj::Function<kj::Promise<Status>(IoState&)> send, const char* what) {
  link->post([link = link.get(), errors = errors, what, send = kj::mv(send)](IoState& io) mutable {
    io.tasks.add(send(io).then(
        [errors, what](Status status) {
          if (!status) errors->record(makeError(status.error().code, "{}: {}", what, status.error().message));
        },
        [link, errors, what](kj::Exception&& e) { errors->record(connectionError(*link, e, what)); }));
  });
}

Status Connection::Impl::finishUnsentRenderings() {
  std::vector<VkFence> fences;
  for (const UnsentRelease& r : unsentReleases) {
    if (r.renderingFence != VK_NULL_HANDLE) fences.push_back(r.renderingFence);
  }
  if (fences.empty()) return {};
  const VkResult r = waitFencesRunnable(vulkan.device, fences.data(), uint32_t(fences.size()), kReleaseFenceTimeout);
  Status status = r == VK_TIMEOUT ? Status(makeError(ErrorCode::timeout,
                                                     "release: the GPU did not finish the application's rendering of "
                                                     "{} released image(s) in {} s",
                                                     fences.size(), kReleaseFenceTimeout.count()))
                                  : vk::check(r, "vkWaitForFences(release)");
  if (!status) {
    // Never sent: the daemon would copy unfinished images. Each one's acquire gets the error.
    std::erase_if(unsentReleases, [&](const UnsentRelease& u) {
      if (u.renderingFence == VK_NULL_HANDLE) return false;
      u.answers->answered(u.index, status);
      return true;
    });
    return status;
  }
  // The fences stay signalled: each is reset by its image's next release, before it is submitted.
  for (UnsentRelease& u : unsentReleases) u.renderingFence = VK_NULL_HANDLE;
  return {};
}

void Connection::Impl::sendUnsentReleases() {
  // A failure is answered to those releases; the application's next call returns it too.
  if (auto s = finishUnsentRenderings(); !s) errors->record(s.error());
  for (UnsentRelease& r : unsentReleases)
    link->post(releaseCall(*link, std::move(r.answers), r.swapchainId, r.index, true, r.renderingValue));
  unsentReleases.clear();
}

namespace {
// 1.13: settlements of releases the daemon answered before their copy (timeline mode): each one
// is that release's answer, which the image's next acquire waits for.
void applySettlements(IoState& io, capnp::List<wire::ReleaseSettlement>::Reader settled) {
  for (auto r : settled) {
    auto it = io.releaseAnswers.find(r.getSwapchainId());
    if (it == io.releaseAnswers.end()) continue;
    if (auto answers = it->second.lock()) answers->answered(r.getIndex(), xrc::fromWire(r.getError()));
  }
}

}  // namespace

void Connection::Impl::flushReleases() {
  {
    Lock lock(frameMutex);
    sendUnsentReleases();
  }
  link->flush();
}

void Connection::Impl::askForSettlement(uint32_t swapchainId, uint32_t index) {
  link->post([swapchainId, index, link = link.get()](IoState& io) {
    auto request = io.session.settleReleasesRequest(capnp::MessageSize{4, 0});
    request.setSwapchainId(swapchainId);
    request.setIndex(index);
    io.tasks.add(request.send().then(
        [&io](capnp::Response<wire::Session::SettleReleasesResults>&& r) { applySettlements(io, r.getSettled()); },
        [link, &io](kj::Exception&& e) {
          (void)connectionError(*link, e, "settleReleases");
          io.abandonReleaseAnswers();
        }));
  });
}

void IoState::abandonReleaseAnswers() {
  const Error lost = makeError(ErrorCode::internal, "the connection to xr-compositord was lost");
  for (auto& [id, weak] : releaseAnswers) {
    if (auto answers = weak.lock()) answers->abandonAll(lost);
  }
}

Status Connection::Impl::takeAsyncError() {
  if (link->disconnected()) return makeError(ErrorCode::internal, "the connection to xr-compositord was lost");
  if (auto error = errors->take()) return std::move(*error);
  return {};
}

// --- Connection --------------------------------------------------------------------------------

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::~Connection() {
  impl_->flushReleases();  // 1.5: releases no endFrame took; the daemon still copies them
}

const SystemDescription& Connection::system() const { return impl_->system; }
SyncMode Connection::syncMode() const { return impl_->syncMode; }
uint32_t Connection::clientId() const { return impl_->clientId; }
uint64_t Connection::blockingRoundTrips() const { return impl_->roundTrips; }
uint64_t Connection::acquiresPrepared() const { return impl_->acquiresPrepared; }

uint64_t Connection::socketWrites() const { return impl_->link->socketWrites(); }

namespace {
// FrameTiming and FrameState (watchState) carry the session's state in fields of the same names.
template <typename Reader>
void readSessionState(Reader in, FrameTiming& t) {
  t.visible = in.getVisible();
  t.focused = in.getFocused();
  t.stopping = in.getStopping();
  t.localInStage = xrc::fromWire(in.getLocalInStage());
  t.localSpaceChanges = in.getLocalSpaceChanges();
  t.input = xrc::fromWire(in.getInput());
}

// XRC_ANSWER_WAITS_AT_ONCE=0 or =1, where set, decides over the application's option: a switch
// for someone running the application, to compare or to work around.
bool answerWaitsAtOnce(const ConnectOptions& options) {
  const char* env = std::getenv("XRC_ANSWER_WAITS_AT_ONCE");
  if (env != nullptr && std::string_view(env) == "0") return false;
  if (env != nullptr && std::string_view(env) == "1") return true;
  return options.answerWaitsAtOnce;
}

void watchStateFrom(IoState& io, std::shared_ptr<Connection::Impl::StateWatch> watch) {
  auto request = io.session.watchStateRequest(capnp::MessageSize{4, 0});
  request.setAfter(watch->seen);
  io.tasks.add(request.send().then(
      [&io, watch](capnp::Response<wire::Session::WatchStateResults>&& r) mutable {
        if (auto s = xrc::fromWire(r.getError()); !s) return;  // refused: answers stay as sent
        watch->seen = r.getCount();
        auto state = r.getState();
        if (auto pending = watch->pending.lock()) {
          pending->patch([&](FrameTiming& t) {
            readSessionState(state, t);
            t.shouldRender = t.visible;
          });
        }
        watchStateFrom(io, std::move(watch));
      },
      [](kj::Exception&&) {}));  // the connection went: nothing left to watch
}
}  // namespace

void Connection::Impl::watchState() {
  link->post([watch = stateWatch](IoState& io) { watchStateFrom(io, watch); });
}

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
  if (vkb.instance == VK_NULL_HANDLE)
    return makeError(ErrorCode::invalidArgument, "connect: the VkInstance is required");
  const auto queries = vk::PhysicalDeviceQueries::khr(vkb.instance);
  if (queries.properties2 == nullptr) {
    return makeError(ErrorCode::invalidArgument,
                     "connect: the VkInstance must enable {} (see requiredInstanceExtensions())",
                     VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);
  }
  DeviceFacts facts = vk::queryDeviceFacts(vkb.physicalDevice, queries);
  facts.externalSemaphoreFd = facts.externalSemaphoreFd && impl->importSemaphoreFd != nullptr;
  facts.timelineSemaphoreFd = facts.timelineSemaphoreFd && facts.externalSemaphoreFd && vkb.timelineSemaphores;

  auto link = RpcLink::open(options.socketPath);
  if (!link) return link.error();
  impl->link = std::move(link).value();

  struct Accepted {
    SystemDescription system;
    SyncMode syncMode;
    uint32_t clientId;
  };
  auto reply = impl->link->call<Accepted>(
      // By value: after a timeout the work may still run, after this frame is gone.
      [major = options.protocolMajor, minor = options.protocolMinor, name = options.applicationName,
       overlay = options.overlay, placement = options.overlayPlacement, facts](IoState& io) {
        auto request = io.bootstrap.connectRequest();
        auto info = request.initClient();
        info.initVersion().setMajor(major);
        info.getVersion().setMinor(minor);
        info.setName(name);
        info.setPid(uint32_t(::getpid()));
        xrc::toWire(facts, info.initDevice());
        info.setHasExternalSemaphoreFd(facts.externalSemaphoreFd);
        info.setHasTimelineSemaphoreFd(facts.timelineSemaphoreFd);
        info.setOverlay(overlay);
        info.setOverlayPlacement(placement);
        return request.send().then([&io](capnp::Response<wire::Compositor::ConnectResults>&& r) -> Result<Accepted> {
          if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
          io.session = r.getSession();
          return Accepted{fromWire(r.getSystem()), xrc::fromWire(r.getSyncMode()), r.getClientId()};
        });
      },
      "connect");
  if (!reply) return reply.error();
  impl->system = std::move(reply.value().system);
  impl->syncMode = reply.value().syncMode;
  impl->clientId = reply.value().clientId;
  const uint16_t minor = std::min(options.protocolMinor, impl->system.protocolMinor);
  impl->combinedFrameCalls = minor >= 4;
  impl->oneCallFrames = minor >= 5;
  impl->settledLater = minor >= 13 && impl->syncMode == SyncMode::timeline;
  impl->answersAtOnce = minor >= 18 && answerWaitsAtOnce(options);
  if (impl->answersAtOnce) impl->watchState();
  impl->roundTrips++;
  return std::make_unique<Connection>(std::move(impl));
}

namespace {
FrameTiming fromWire(wire::FrameTiming::Reader t) {
  FrameTiming timing;
  timing.frameId = t.getFrameId();
  timing.predictedDisplayTimeNs = t.getPredictedDisplayTime();
  timing.predictedDisplayPeriodNs = t.getPredictedDisplayPeriod();
  timing.shouldRender = t.getShouldRender();
  timing.headInStage = xrc::fromWire(t.getHeadInStage());
  readSessionState(t, timing);
  for (auto v : t.getViews()) {
    EyeView view;
    view.eyeInHead = xrc::fromWire(v.getEyeInHead());
    auto fov = v.getFov();
    for (uint32_t k = 0; k < 4 && k < fov.size(); ++k) view.fov[k] = fov[k];
    timing.views.push_back(view);
  }
  timing.wakeTimeNs = t.getWakeTime();
  return timing;
}

// Sleeps until `ns` on CLOCK_MONOTONIC (nothing when it has passed or is 0).
void sleepUntil(int64_t ns) {
  if (ns <= 0 || ns <= monotonicNowNs()) return;
  const timespec at{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

// An implied wait's answer is used only while the frame it hands out still has most of its time:
// later, a waitFrame of its own gives the application a frame it can make.
constexpr uint32_t kImpliedWaitBackoffFrames = 64;
bool stillTimely(const FrameTiming& t) {
  const int64_t startNs = t.predictedDisplayTimeNs - t.predictedDisplayPeriodNs;  // when the daemon answered
  return monotonicNowNs() - startNs <= t.predictedDisplayPeriodNs / 4;
}
}  // namespace

Result<FrameTiming> Connection::waitFrame() {
  if (auto s = impl_->takeAsyncError(); !s) return s.error();
  std::shared_ptr<AnswerSlot<FrameTiming>> implied;
  {
    Lock lock(impl_->frameMutex);
    if (impl_->beginUnsent) impl_->sendBeginFrame(*std::exchange(impl_->beginUnsent, std::nullopt));
    // Releases into a frame that was never ended (none is begun now); those of a frame that
    // another thread renders (a split loop) stay for its endFrame.
    if (!impl_->begunFrame) impl_->sendUnsentReleases();
    implied = std::exchange(impl_->impliedWait, nullptr);
    impl_->waitInFlight = true;
  }
  if (implied) {
    // 1.5: the last endFrame stood for this wait; its answer comes when this one's would have.
    // 1.18, asked for at once: the answer came long before its wake, which this thread sleeps to.
    // It sleeps first to the earliest the wake can be (the last one's plus a display period), so
    // that the answer is there when it looks and handing it over woke nobody. The answer stays
    // in its slot until the wake: a state change until then patches it there (watchState).
    sleepUntil(impl_->expectedWakeNs.load());
    const bool came = implied->waitUntilSet(RpcLink::kDefaultCallTimeout);
    impl_->expectedWakeNs.store(0);
    if (came && impl_->answersAtOnce) {
      const int64_t wakeNs = implied->look([](const FrameTiming& t) { return t.wakeTimeNs; }).value_or(0);
      // An answer there before its wake was given at once: the daemon's display allows it, and
      // it answers every one so. The next wait is slept to its earliest wake also when this one
      // was slept through already (above): an answer the daemon gives at its wake instead is
      // never waited for that way, which would race its arrival.
      if (wakeNs > monotonicNowNs()) impl_->answersCameAtOnce.store(true);
      if (impl_->answersCameAtOnce.load() && wakeNs > 0) {
        sleepUntil(wakeNs);
        const double hz = impl_->system.refreshHz;
        if (hz > 0) impl_->expectedWakeNs.store(wakeNs + int64_t(1e9 / hz));
      }
    }
    auto answer = came ? implied->waitFor(RpcLink::kDefaultCallTimeout) : std::nullopt;
    impl_->roundTrips++;
    if (answer && *answer && stillTimely(answer->value())) {
      Lock lock(impl_->frameMutex);
      impl_->waitInFlight = false;
      impl_->waitedFrame = answer->value().frameId;
      return std::move(*answer).value();
    }
    if (impl_->link->disconnected()) {
      Lock lock(impl_->frameMutex);
      impl_->waitInFlight = false;
      return makeError(ErrorCode::internal, "waitFrame: the connection to xr-compositord was lost");
    }
    // Too old to use, refused or lost: a waitFrame of its own (the daemon paces as if the implied
    // one had never been answered), and no implied waits for a while.
    Lock lock(impl_->frameMutex);
    impl_->impliedWaitBackoff = kImpliedWaitBackoffFrames;
  }
  auto reply = impl_->link->call<FrameTiming>(
      [](IoState& io) {
        return io.session.waitFrameRequest(capnp::MessageSize{4, 0})
            .send()
            .then([&io](capnp::Response<wire::Session::WaitFrameResults>&& r) -> Result<FrameTiming> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              applySettlements(io, r.getTiming().getSettledReleases());
              return fromWire(r.getTiming());
            });
      },
      "waitFrame");
  impl_->roundTrips++;
  Lock lock(impl_->frameMutex);
  impl_->waitInFlight = false;
  if (!reply) return reply.error();
  impl_->waitedFrame = reply.value().frameId;
  return std::move(reply).value();
}

Result<Pose> Connection::locateHead(int64_t timeNs) {
  if (auto s = impl_->takeAsyncError(); !s) return s.error();
  if (timeNs <= 0) return makeError(ErrorCode::invalidArgument, "locateHead: time {} is not positive", timeNs);
  auto reply = impl_->link->call<Pose>(
      [timeNs](IoState& io) {
        auto request = io.session.locateHeadRequest();
        request.setTime(timeNs);
        return request.send().then([](capnp::Response<wire::Session::LocateHeadResults>&& r) -> Result<Pose> {
          if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
          return xrc::fromWire(r.getHeadInStage());
        });
      },
      "locateHead");
  impl_->roundTrips++;
  return reply;
}

Status Connection::applyHaptic(uint32_t hand, const std::string& output, const HapticPulse& pulse) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  auto reply = impl_->link->call<bool>(
      [hand, output, pulse](IoState& io) {
        auto request = io.session.applyHapticRequest();
        request.setHand(uint8_t(std::min<uint32_t>(hand, 255)));
        request.setOutput(output);
        request.setDurationNs(pulse.durationNs);
        request.setFrequency(pulse.frequency);
        request.setAmplitude(pulse.amplitude);
        return request.send().then([](capnp::Response<wire::Session::ApplyHapticResults>&& r) -> Result<bool> {
          if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
          return true;
        });
      },
      "applyHaptic");
  impl_->roundTrips++;
  if (!reply) return reply.error();
  return {};
}

Status Connection::stopHaptic(uint32_t hand, const std::string& output) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  auto reply = impl_->link->call<bool>(
      [hand, output](IoState& io) {
        auto request = io.session.stopHapticRequest();
        request.setHand(uint8_t(std::min<uint32_t>(hand, 255)));
        request.setOutput(output);
        return request.send().then([](capnp::Response<wire::Session::StopHapticResults>&& r) -> Result<bool> {
          if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
          return true;
        });
      },
      "stopHaptic");
  impl_->roundTrips++;
  if (!reply) return reply.error();
  return {};
}

Status Connection::poll() {
  // The I/O thread reads all the time; there is nothing to pump here any more.
  if (impl_->link->disconnected()) return makeError(ErrorCode::internal, "the connection to xr-compositord was lost");
  return {};
}

bool Connection::lost() const { return impl_->link->disconnected(); }

Status Connection::beginFrame(uint64_t frameId) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  {
    Lock lock(impl_->frameMutex);
    if (!impl_->waitedFrame || *impl_->waitedFrame != frameId) {
      return makeError(ErrorCode::callOrder, "beginFrame: frame {} was not returned by the last waitFrame", frameId);
    }
    impl_->waitedFrame.reset();
    impl_->begunFrame = frameId;
    if (impl_->combinedFrameCalls && !impl_->waitInFlight) {
      impl_->beginUnsent = frameId;  // endFrame (or the next waitFrame) sends it
      return {};
    }
  }
  impl_->sendBeginFrame(frameId);
  return {};
}

void Connection::Impl::sendBeginFrame(uint64_t frameId) {
  sendTracked(
      [frameId](IoState& io) {
        auto request = io.session.beginFrameRequest();
        request.setFrameId(frameId);
        return request.send().then([](auto&& r) { return xrc::fromWire(r.getError()); });
      },
      "beginFrame");
}

namespace {
using EndFrameRequest = capnp::Request<wire::Session::EndFrameParams, wire::Session::EndFrameResults>;
EndFrameRequest endFrameRequest(IoState& io, uint64_t frameId, int64_t displayTimeNs, const std::vector<Layer>& layers,
                                EnvironmentBlendMode blendMode, bool alsoBegin);
}  // namespace

Status Connection::endFrame(uint64_t frameId, int64_t displayTimeNs, const std::vector<Layer>& layers,
                            EnvironmentBlendMode blendMode) {
  if (auto s = impl_->takeAsyncError(); !s) return s;
  Lock lock(impl_->frameMutex);  // held while posting: the daemon sees begin, end and wait in order
  if (!impl_->begunFrame || *impl_->begunFrame != frameId) {
    return makeError(ErrorCode::callOrder, "endFrame: frame {} was not begun", frameId);
  }
  // Host mode: the frame's releases leave once their rendering is complete, all in one wait.
  if (auto s = impl_->finishUnsentRenderings(); !s) return s;
  impl_->begunFrame.reset();
  const bool alsoBegin = impl_->beginUnsent == frameId;
  impl_->beginUnsent.reset();
  if (!impl_->oneCallFrames) {
    // The message is built on the I/O thread from a copy of the layers.
    impl_->sendTracked(
        [frameId, displayTimeNs, layers, blendMode, alsoBegin](IoState& io) {
          return endFrameRequest(io, frameId, displayTimeNs, layers, blendMode, alsoBegin).send().then([](auto&& r) {
            return xrc::fromWire(r.getError());
          });
        },
        "endFrame");
    return {};
  }
  // 1.5: the frame's releases travel with it, and it stands for the next waitFrame unless one is
  // on its way or done already (a split frame loop), or implied waits came too early lately.
  std::vector<UnsentRelease> releases = std::exchange(impl_->unsentReleases, {});
  std::shared_ptr<AnswerSlot<FrameTiming>> implied;
  if (impl_->impliedWaitBackoff > 0) {
    impl_->impliedWaitBackoff--;
  } else if (!impl_->waitInFlight && !impl_->waitedFrame && !impl_->impliedWait) {
    implied = std::make_shared<AnswerSlot<FrameTiming>>();
    impl_->impliedWait = implied;
  }
  impl_->link->post([link = impl_->link.get(), errors = impl_->errors, frameId, displayTimeNs, layers, blendMode,
                     alsoBegin, releases = std::move(releases), implied, settledLater = impl_->settledLater,
                     answersAtOnce = impl_->answersAtOnce, stateWatch = impl_->stateWatch](IoState& io) mutable {
    auto request = endFrameRequest(io, frameId, displayTimeNs, layers, blendMode, alsoBegin);
    auto wireReleases = request.initReleases(uint32_t(releases.size()));
    for (uint32_t i = 0; i < releases.size(); ++i) {
      wireReleases[i].setSwapchainId(releases[i].swapchainId);
      wireReleases[i].setIndex(releases[i].index);
      wireReleases[i].setRenderingValue(releases[i].renderingValue);
    }
    request.setAlsoWaitNext(implied != nullptr);
    request.setAnswerNextAtOnce(implied != nullptr && answersAtOnce);
    if (implied != nullptr && answersAtOnce) stateWatch->pending = implied;
    for (const UnsentRelease& rel : releases) io.releaseAnswers.try_emplace(rel.swapchainId, rel.answers);
    auto shared = std::make_shared<std::vector<UnsentRelease>>(std::move(releases));
    auto sent = request.send();
    io.heldEndFrameAnswer = nullptr;  // its Finish follows this call in the same write
    io.tasks.add(sent.then(
        [&io, errors, shared, implied, settledLater](capnp::Response<wire::Session::EndFrameResults>&& r) {
          if (auto s = xrc::fromWire(r.getError()); !s) {
            errors->record(makeError(s.error().code, "endFrame: {}", s.error().message));
          }
          auto releaseErrors = r.getReleaseErrors();
          for (uint32_t i = 0; i < shared->size(); ++i) {
            const UnsentRelease& rel = (*shared)[i];
            const Status status =
                i < releaseErrors.size()
                    ? xrc::fromWire(releaseErrors[i])
                    : Status(makeError(ErrorCode::internal, "endFrame: the daemon did not answer a release"));
            // 1.13 timeline: an accepted release is answered by its settlement, which comes later.
            if (!settledLater || !status) rel.answers->answered(rel.index, status);
          }
          if (implied) {
            if (auto s = xrc::fromWire(r.getNextError()); !s) {
              implied->set(s.error());
            } else if (!r.hasNext()) {
              implied->set(makeError(ErrorCode::internal, "endFrame: the daemon did not answer the implied waitFrame"));
            } else {
              applySettlements(io, r.getNext().getSettledReleases());
              implied->set(fromWire(r.getNext()));
            }
          }
          io.heldEndFrameAnswer = kj::mv(r);
        },
        [link, errors, shared, implied](kj::Exception&& e) {
          const Error lost = connectionError(*link, e, "endFrame");
          errors->record(lost);
          for (const UnsentRelease& rel : *shared) rel.answers->answered(rel.index, lost);
          if (implied) implied->set(lost);
        }));
  });
  return {};
}

namespace {
EndFrameRequest endFrameRequest(IoState& io, uint64_t frameId, int64_t displayTimeNs, const std::vector<Layer>& layers,
                                EnvironmentBlendMode blendMode, bool alsoBegin) {
  // Sized for a projection layer and a quad; more layers add a segment (Cap'n Proto's default
  // first segment is 8 KiB, allocated and zeroed per message).
  auto request = io.session.endFrameRequest(capnp::MessageSize{256, 0});
  request.setFrameId(frameId);
  request.setAlsoBegin(alsoBegin);
  request.setEnvironmentBlendMode(xrc::toWire(blendMode));
  request.setDisplayTime(displayTimeNs);
  auto out = request.initLayers(uint32_t(layers.size()));
  for (uint32_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = layers[i];
    out[i].setFlags(layer.flags);
    if (layer.hasColor) {  // 1.9; a daemon before it shows the layer unchanged
      auto scale = out[i].initColorScale(4), bias = out[i].initColorBias(4);
      for (uint32_t k = 0; k < 4; ++k) {
        scale.set(k, layer.colorScale[k]);
        bias.set(k, layer.colorBias[k]);
      }
    }
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
    } else if (layer.kind == Layer::Kind::cylinder) {
      auto cylinder = out[i].initCylinder();
      toWire(layer.quadSubImage, cylinder.initSubImage());
      xrc::toWire(layer.quadPose, cylinder.initPose());
      cylinder.setRadius(layer.radius);
      cylinder.setCentralAngle(layer.centralAngle);
      cylinder.setAspectRatio(layer.aspectRatio);
      cylinder.setEyeVisibility(layer.eyeVisibility);
    } else if (layer.kind == Layer::Kind::cube) {
      auto cube = out[i].initCube();
      toWire(layer.quadSubImage, cube.initSubImage());
      auto orientation = cube.initOrientation(4);
      for (uint32_t k = 0; k < 4; ++k) orientation.set(k, layer.quadPose.orientation[k]);
      cube.setEyeVisibility(layer.eyeVisibility);
    } else if (layer.kind == Layer::Kind::equirect) {
      auto equirect = out[i].initEquirect();
      toWire(layer.quadSubImage, equirect.initSubImage());
      xrc::toWire(layer.quadPose, equirect.initPose());
      equirect.setRadius(layer.radius);
      auto scale = equirect.initScale(2), bias = equirect.initBias(2);
      for (uint32_t k = 0; k < 2; ++k) {
        scale.set(k, layer.scale[k]);
        bias.set(k, layer.bias[k]);
      }
      equirect.setEyeVisibility(layer.eyeVisibility);
    } else {
      auto quad = out[i].initQuad();
      toWire(layer.quadSubImage, quad.initSubImage());
      xrc::toWire(layer.quadPose, quad.initPose());
      quad.setWidth(layer.quadWidth);
      quad.setHeight(layer.quadHeight);
    }
  }
  return request;
}
}  // namespace

}  // namespace xrc::client
