#include "control_server.hpp"

#include <thread>

#include <unistd.h>

#include "../common/cross_thread_answer.hpp"
#include "../input/simulated_controllers.hpp"
#include "../log.hpp"
#include "../platform/cpu_affinity.hpp"
#include "../platform/cpu_priority.hpp"
#include "copy_batch.hpp"
#include "rpc_cpu_keeper.hpp"
#include "state_changes.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc {

namespace {
void toWire(const SampleRing& ring, wire::Percentiles::Builder out) {
  out.setP50(float(ring.percentile(50)));
  out.setP99(float(ring.percentile(99)));
}

void toWire(const Pixels& pixels, wire::Pixels::Builder out) {
  out.setWidth(pixels.width);
  out.setHeight(pixels.height);
  out.setLayers(pixels.layers);
  out.setMips(pixels.mips);
  out.setFormat(pixels.format);
  out.setData(kj::arrayPtr(pixels.data.data(), pixels.data.size()));
}
}  // namespace

void fillSystemDescription(DaemonContext& ctx, wire::SystemDescription::Builder out) {
  const SystemInfo& system = ctx.backend.systemInfo();
  out.setDaemonVersion(XRC_VERSION);
  out.setBackend(system.backendName);
  auto views = out.initViews(uint32_t(system.views.size()));
  for (uint32_t i = 0; i < system.views.size(); ++i) {
    views[i].setRecommendedWidth(system.views[i].recommendedWidth);
    views[i].setRecommendedHeight(system.views[i].recommendedHeight);
    views[i].setMaxWidth(system.views[i].maxWidth);
    views[i].setMaxHeight(system.views[i].maxHeight);
    toWire(system.views[i].eyeInHead, views[i].initEyeInHead());
    auto fov = views[i].initFov(4);
    for (uint32_t k = 0; k < 4; ++k) fov.set(k, system.views[i].fov[k]);
    const auto& masks = system.views[i].visibilityMasks;
    auto wireMasks = views[i].initVisibilityMasks(uint32_t(masks.size()));
    for (uint32_t m = 0; m < masks.size(); ++m) {
      wireMasks[m].setType(masks[m].type);
      wireMasks[m].setVertices(kj::arrayPtr(masks[m].vertices.data(), masks[m].vertices.size()));
      wireMasks[m].setIndices(kj::arrayPtr(masks[m].indices.data(), masks[m].indices.size()));
    }
  }
  toWire(ctx.backend.localSpace().localInStage, out.initLocalInStage());
  out.setStageBoundsWidth(system.stageBoundsWidth);
  out.setStageBoundsDepth(system.stageBoundsDepth);
  out.setRefreshHz(float(ctx.backend.refreshHz()));
  const auto formats = usableFormats(ctx.gpu.swapchainFormats(), system);
  auto list = out.initSwapchainFormats(uint32_t(formats.size()));
  for (uint32_t i = 0; i < formats.size(); ++i) list.set(i, formats[i]);
  toWire(ctx.gpu.facts(), out.initDevice());
  out.setMaxLayers(kMaxLayersPerFrame);
  out.setMaxSwapchains(kMaxSwapchainsPerSession);
  out.setMaxArrayLayers(kMaxArrayLayers);
  out.setMaxOverlayPlacement(kMaxOverlayPlacement);
  out.setDaemonHasExternalSemaphoreFd(ctx.gpu.facts().externalSemaphoreFd);
  out.setDaemonHasTimelineSemaphoreFd(ctx.gpu.facts().timelineSemaphoreFd);
  out.setProtocolMinor(kProtocolMinor);
  auto modes = out.initEnvironmentBlendModes(uint32_t(system.environmentBlendModes.size()));
  for (uint32_t i = 0; i < modes.size(); ++i) modes.set(i, toWire(system.environmentBlendModes[i]));
}

kj::Promise<void> ControlServer::status(StatusContext context) {
  ctx_.scheduler.latchDue();  // a display latched on demand: the vsyncs up to now count
  auto results = context.getResults();
  setOk(results.initError());
  auto status = results.initStatus();
  status.setDaemonVersion(XRC_VERSION);
  status.setBackend(ctx_.backend.systemInfo().backendName);
  status.setUptimeNs(monotonicNowNs() - ctx_.startNs);
  status.setRefreshHz(float(ctx_.backend.refreshHz()));
  status.setDisplayFrames(ctx_.backend.displayFrames());
  status.setLayerViewsCulled(ctx_.backend.layerViewsCulled());
  status.setDisplayFramesGpuLate(ctx_.backend.displayFramesGpuLate());
  status.setDisplayFramesComposed(ctx_.backend.displayFramesComposed());
  status.setGpuQueuePriority(gpu::toString(ctx_.gpu.queuePriority()));
  status.setRpcThreadNice(platform::currentNice());  // status is answered on the RPC thread
  status.setRpcThreadCpu(platform::keptCpu());
  status.setRpcThreadMoves(ctx_.rpcCpuKeeper != nullptr ? ctx_.rpcCpuKeeper->moves() : 0);
  const DisplayStats display = ctx_.scheduler.displayStats();
  status.setMissedDisplayFrames(display.missedFrames);
  status.initDisplayWorkUs().setP50(float(display.workUsP50));
  status.getDisplayWorkUs().setP99(float(display.workUsP99));
  status.initDisplayWakeDelayUs().setP50(float(display.wakeDelayUsP50));
  status.getDisplayWakeDelayUs().setP99(float(display.wakeDelayUsP99));
  status.initDaemonCpuUsPerDisplayFrame().setP50(float(display.cpuUsP50));
  status.getDaemonCpuUsPerDisplayFrame().setP99(float(display.cpuUsP99));
  status.setDaemonCpuUsPerClientFrame(float(display.cpuUsPerClientFrame));
  status.setEnvironmentBlendMode(
      toWire(display.environmentBlendMode.value_or(ctx_.backend.systemInfo().environmentBlendModes.at(0))));
  status.setPrimaryClientId(display.primaryClientId);
  status.setDaemonPid(uint32_t(::getpid()));
  status.setAcceptFailures(ctx_.acceptFailures);
  status.setCopyBatches(ctx_.copyBatch.batches());
  status.setCopiesBatched(ctx_.copyBatch.copies());
  status.setFramesHeld(ctx_.copyBatch.framesHeld());
  status.setFramesHeldPastLatch(ctx_.copyBatch.framesHeldPastLatch());
  status.setCopyQueueSubmissions(ctx_.gpu.copySubmissions());
  status.setCopyBatchLeadUs(uint32_t(ctx_.copyBatch.leadNs() / 1000));
  const int64_t nowNs = monotonicNowNs();
  const auto hits = ctx_.refusals.snapshot();
  auto hitList = status.initLimitsHit(uint32_t(hits.size()));
  for (uint32_t i = 0; i < hits.size(); ++i) {
    hitList[i].setLimit(hits[i].limit);
    hitList[i].setCount(hits[i].count);
    hitList[i].setSecondsAgo(float(double(nowNs - hits[i].lastNs) / 1e9));
  }
  status.setImageBytes(ctx_.images.totalBytes());
  status.setImageBytesLimit(ctx_.images.totalLimit());
  if (const auto window = ctx_.backend.windowOutput()) {
    auto w = status.initWindowOutput();
    w.setPresent(true);
    w.setOpen(window->open);
    w.setWidth(window->width);
    w.setHeight(window->height);
    w.setPresents(window->presents);
    w.setSkipped(window->skipped);
    w.setRecreations(window->recreations);
    w.setSwapchainsLive(window->swapchainsLive);
    w.setPresentSemaphoresLive(window->presentSemaphoresLive);
    w.setMaxSubmissionsInFlight(window->maxSubmissionsInFlight);
    w.setBacklogDrains(window->backlogDrains);
  }
  const auto haptics = ctx_.backend.haptics();
  auto hapticList = status.initHaptics(uint32_t(haptics.size()));
  for (uint32_t h = 0; h < haptics.size(); ++h) {
    hapticList[h].setPulses(haptics[h].pulses);
    hapticList[h].setStops(haptics[h].stops);
    hapticList[h].setLastAmplitude(haptics[h].last.amplitude);
    hapticList[h].setLastDurationNs(haptics[h].last.durationNs);
    hapticList[h].setLastFrequency(haptics[h].last.frequency);
  }
  auto clients = ctx_.clients.snapshot();
  auto list = status.initClients(uint32_t(clients.size()));
  for (uint32_t i = 0; i < clients.size(); ++i) {
    const ClientRecord& c = *clients[i];
    auto out = list[i];
    out.setId(c.id);
    out.setName(c.name);
    out.setPid(c.pid);
    out.setSyncMode(xrc::toWire(c.syncMode));
    out.setFramesSubmitted(c.framesSubmitted.load());
    out.setReleases(c.releases.load());
    out.setGpuCopyUsP50(float(c.gpuCopyUs.percentile(50)));
    out.setGpuCopyUsP99(float(c.gpuCopyUs.percentile(99)));
    out.setRole(c.overlay                         ? wire::SessionRole::OVERLAY
                : c.id == display.primaryClientId ? wire::SessionRole::PRIMARY
                                                  : wire::SessionRole::BACKGROUND);
    out.setOverlayPlacement(c.overlayPlacement);
    out.setFramesDisplayed(c.framesDisplayed.load());
    out.setFramesLate(c.framesLate.load());
    out.setFramesDropped(c.framesDropped.load());
    out.setFramesHidden(c.framesHidden.load());
    out.setDisplayPeriods(c.displayPeriods.load());
    toWire(c.releaseUs, out.initReleaseUs());
    toWire(c.latencyUs, out.initLatencyUs());
    toWire(c.frameIntervalUs, out.initFrameIntervalUs());
    out.setImageBytes(ctx_.images.clientBytes(c.id));
    out.setHung(c.hung.load());
    out.setFramesStale(c.framesStale.load());
    out.setReleasesSkipped(c.releasesSkipped.load());
    out.setReleasesRenderTimedOut(c.releasesRenderTimedOut.load());
    out.setCopySubmissions(c.copySubmissions.load());
    out.setHostCopies(c.hostCopies.load());
    toWire(c.hostCopyUs, out.initHostCopyUs());
    out.setWaitsAnsweredAtOnce(c.waitsAnsweredAtOnce.load());
    out.setFramesReprojected(ctx_.backend.framesReprojected(c.id));
    const int64_t lastProgressNs = c.lastProgressNs.load();
    out.setStalledMs(
        lastProgressNs == 0 ? 0 : uint32_t(std::min<int64_t>((nowNs - lastProgressNs) / 1'000'000, UINT32_MAX)));
    Lock lock(c.swapchainsMutex);
    out.setSwapchains(uint32_t(c.swapchains.size()));
  }
  return kj::READY_NOW;
}

kj::Promise<void> ControlServer::readSwapchain(ReadSwapchainContext context) {
  auto params = context.getParams();
  auto client = ctx_.clients.find(params.getClientId());
  std::shared_ptr<SwapchainCore> core;
  if (client) {
    Lock lock(client->swapchainsMutex);
    auto it = client->swapchains.find(params.getSwapchainId());
    if (it != client->swapchains.end()) core = it->second.lock();
  }
  if (!core) {
    xrc::toWire(
        makeError(ErrorCode::notFound, "no swapchain {} of client {}", params.getSwapchainId(), params.getClientId()),
        context.getResults().initError());
    return kj::READY_NOW;
  }
  using Reply = std::pair<Result<Pixels>, uint64_t>;
  auto read = crossThreadAnswer<kj::Own<Reply>>();
  // The frame worker knows which runtime image holds the newest content.
  DaemonContext& ctx = ctx_;
  ctx.worker.post([&ctx, core, fulfil = read.fulfil]() {
    // The client's releases may be copied on the RPC thread meanwhile: when the newest content
    // moves on between the lookup and the backend's pin, look again.
    for (int attempt = 0; attempt < 16; ++attempt) {
      const SwapchainCore::Latest latest = core->latest();
      if (!latest.hasContent) {
        fulfil(kj::heap<Reply>(makeError(ErrorCode::callOrder, "swapchain {} has no content yet", core->id), 0));
        return;
      }
      const uint64_t ordinal = latest.ordinal;
      if (ctx.backend.readRuntimeImage(core->runtime, latest.runtimeIndex, latest.copyValue,
                                       [ordinal, fulfil](Result<Pixels> pixels) mutable {
                                         fulfil(kj::heap<Reply>(std::move(pixels), ordinal));
                                       })) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    fulfil(kj::heap<Reply>(
        makeError(ErrorCode::timeout, "swapchain {}'s content kept changing while it was being read", core->id), 0));
  });
  return read.promise.then([context](kj::Own<Reply> reply) mutable {
    auto results = context.getResults();
    if (!reply->first) {
      xrc::toWire(reply->first.error(), results.initError());
      return;
    }
    setOk(results.initError());
    toWire(reply->first.value(), results.initPixels());
    results.setReleaseOrdinal(reply->second);
  });
}

kj::Promise<void> ControlServer::readDisplay(ReadDisplayContext context) {
  auto read = crossThreadAnswer<kj::Own<Result<DisplaySnapshot>>>();
  ctx_.backend.readDisplay([fulfil = read.fulfil](Result<DisplaySnapshot> snapshot) {
    fulfil(kj::heap<Result<DisplaySnapshot>>(std::move(snapshot)));
  });
  return read.promise.then([context](kj::Own<Result<DisplaySnapshot>> snapshot) mutable {
    auto results = context.getResults();
    if (!*snapshot) {
      xrc::toWire(snapshot->error(), results.initError());
      return;
    }
    setOk(results.initError());
    const DisplaySnapshot& s = snapshot->value();
    toWire(s.pixels, results.initPixels());
    results.setDisplayFrame(s.displayFrame);
    auto shown = results.initShown(uint32_t(s.shown.size()));
    for (uint32_t i = 0; i < s.shown.size(); ++i) {
      shown[i].setClientId(s.shown[i].clientId);
      shown[i].setFrameId(s.shown[i].frameId);
      shown[i].setSwapchainId(s.shown[i].swapchainId);
      shown[i].setReleaseOrdinal(s.shown[i].releaseOrdinal);
      shown[i].setDrawn(s.shown[i].drawn);
      shown[i].setDepthSwapchainId(s.shown[i].depthSwapchainId);
    }
  });
}

kj::Promise<void> ControlServer::setPrimary(SetPrimaryContext context) {
  const uint32_t id = context.getParams().getClientId();
  auto error = context.getResults().initError();
  if (auto s = ctx_.scheduler.setPrimary(id); !s) {
    xrc::toWire(s.error(), error);
    return kj::READY_NOW;
  }
  log::info("client {} is now the primary session", id);
  ctx_.stateChanges.changed();
  setOk(error);
  return kj::READY_NOW;
}

kj::Promise<void> ControlServer::kick(KickContext context) {
  const uint32_t id = context.getParams().getClientId();
  auto error = context.getResults().initError();
  auto client = ctx_.clients.find(id);
  if (!client) {
    xrc::toWire(makeError(ErrorCode::notFound, "no client {}", id), error);
    return kj::READY_NOW;
  }
  log::client(log::Level::info, {client->id, client->pid, client->name}, "client {} '{}' (pid {}) kicked", client->id,
              client->name, client->pid);
  if (client->disconnect) client->disconnect();  // also takes it out of the status
  setOk(error);
  return kj::READY_NOW;
}

kj::Promise<void> ControlServer::recenter(RecenterContext context) {
  auto error = context.getResults().initError();
  if (auto s = ctx_.backend.recenter(); !s) {
    xrc::toWire(s.error(), error);
    return kj::READY_NOW;
  }
  ctx_.stateChanges.changed();
  setOk(error);
  return kj::READY_NOW;
}

namespace {
Result<SimulatedControllers*> simulated(Backend& backend) {
  if (auto* controllers = backend.simulatedControllers()) return controllers;
  return makeError(ErrorCode::unsupported, "the {} backend's controllers are real; it has no simulated ones",
                   backend.systemInfo().backendName);
}
}  // namespace

kj::Promise<void> ControlServer::setInput(SetInputContext context) {
  auto p = context.getParams();
  auto controllers = simulated(ctx_.backend);
  Status done = controllers ? Status{} : Status(controllers.error());
  // The profile first: a new device starts at rest, then the component is set on it.
  if (done && p.getProfile().size() > 0) done = controllers.value()->setProfile(p.getHand(), p.getProfile().cStr());
  if (done && p.getComponent().size() > 0) {
    done =
        controllers.value()->setComponent(p.getHand(), p.getComponent().cStr(), p.getX(), p.getY(), monotonicNowNs());
  }
  if (done) ctx_.stateChanges.changed();
  xrc::toWire(done, context.getResults().initError());
  return kj::READY_NOW;
}

kj::Promise<void> ControlServer::setHandPose(SetHandPoseContext context) {
  auto p = context.getParams();
  auto controllers = simulated(ctx_.backend);
  Status done = controllers ? controllers.value()->setPose(p.getHand(), fromWire(p.getGrip()), fromWire(p.getAim()))
                            : Status(controllers.error());
  if (done) ctx_.stateChanges.changed();
  xrc::toWire(done, context.getResults().initError());
  return kj::READY_NOW;
}

}  // namespace xrc
