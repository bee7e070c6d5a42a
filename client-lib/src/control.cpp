#include "xrc/control.hpp"

#include <algorithm>

#include "rpc_link.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::control {

struct ControlClient::Impl {
  std::unique_ptr<client::RpcLink> link;  // its I/O thread holds the Control capability
};

namespace {
Pixels fromWire(wire::Pixels::Reader in) {
  Pixels out;
  out.width = in.getWidth();
  out.height = in.getHeight();
  out.layers = in.getLayers();
  out.mips = std::max(1u, in.getMips());
  out.format = in.getFormat();
  auto data = in.getData();
  out.data.assign(data.begin(), data.end());
  return out;
}

Percentiles fromWire(wire::Percentiles::Reader in) { return {in.getP50(), in.getP99()}; }

SessionRole fromWire(wire::SessionRole role) {
  switch (role) {
    case wire::SessionRole::PRIMARY:
      return SessionRole::primary;
    case wire::SessionRole::OVERLAY:
      return SessionRole::overlay;
    default:
      return SessionRole::background;
  }
}

Status simpleCall(client::RpcLink& link, const char* what, client::RpcLink::CallWork<bool> send) {
  auto reply = link.call<bool>(std::move(send), what);
  if (!reply) return reply.error();
  return {};
}
}  // namespace

const char* sessionRoleName(SessionRole role) {
  switch (role) {
    case SessionRole::primary:
      return "primary";
    case SessionRole::overlay:
      return "overlay";
    default:
      return "background";
  }
}

ControlClient::ControlClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlClient::~ControlClient() = default;

Result<std::unique_ptr<ControlClient>> ControlClient::connect(const std::string& socketPath) {
  auto link = client::RpcLink::open(socketPath);
  if (!link) return link.error();
  auto impl = std::make_unique<Impl>();
  impl->link = std::move(link).value();
  auto reply = impl->link->call<bool>(
      [](client::IoState& io) {
        return io.bootstrap.controlRequest().send().then(
            [&io](capnp::Response<wire::Compositor::ControlResults>&& r) -> Result<bool> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              io.control = r.getControl();
              return true;
            });
      },
      "control");
  if (!reply) return reply.error();
  return std::make_unique<ControlClient>(std::move(impl));
}

Result<DaemonStatus> ControlClient::status() {
  return impl_->link->call<DaemonStatus>(
      [](client::IoState& io) {
        return io.control.statusRequest().send().then(
            [](capnp::Response<wire::Control::StatusResults>&& r) -> Result<DaemonStatus> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              auto in = r.getStatus();
              DaemonStatus out;
              out.daemonVersion = in.getDaemonVersion().cStr();
              out.backend = in.getBackend().cStr();
              out.uptimeNs = in.getUptimeNs();
              out.refreshHz = in.getRefreshHz();
              out.displayFrames = in.getDisplayFrames();
              out.layerViewsCulled = in.getLayerViewsCulled();
              out.displayFramesGpuLate = in.getDisplayFramesGpuLate();
              out.displayFramesComposed = in.getDisplayFramesComposed();
              out.gpuQueuePriority = in.getGpuQueuePriority().cStr();
              out.rpcThreadNice = in.getRpcThreadNice();
              out.rpcThreadCpu = in.getRpcThreadCpu();
              out.rpcThreadMoves = in.getRpcThreadMoves();
              out.copyBatchLeadUs = in.getCopyBatchLeadUs();
              out.missedDisplayFrames = in.getMissedDisplayFrames();
              out.displayWorkUs = fromWire(in.getDisplayWorkUs());
              out.displayWakeDelayUs = fromWire(in.getDisplayWakeDelayUs());
              out.daemonCpuUsPerDisplayFrame = fromWire(in.getDaemonCpuUsPerDisplayFrame());
              out.daemonCpuUsPerClientFrame = in.getDaemonCpuUsPerClientFrame();
              out.primaryClientId = in.getPrimaryClientId();
              out.daemonPid = in.getDaemonPid();
              out.environmentBlendMode = xrc::fromWire(in.getEnvironmentBlendMode());
              out.acceptFailures = in.getAcceptFailures();
              out.copyBatches = in.getCopyBatches();
              out.copiesBatched = in.getCopiesBatched();
              out.framesHeld = in.getFramesHeld();
              out.framesHeldPastLatch = in.getFramesHeldPastLatch();
              out.copyQueueSubmissions = in.getCopyQueueSubmissions();
              for (auto h : in.getLimitsHit()) {
                out.limitsHit.push_back(LimitHit{h.getLimit().cStr(), h.getCount(), h.getSecondsAgo()});
              }
              out.imageBytes = in.getImageBytes();
              out.imageBytesLimit = in.getImageBytesLimit();
              if (in.hasWindowOutput() && in.getWindowOutput().getPresent()) {
                auto w = in.getWindowOutput();
                out.windowOutput = WindowOutputStatus{w.getOpen(),
                                                      w.getWidth(),
                                                      w.getHeight(),
                                                      w.getPresents(),
                                                      w.getSkipped(),
                                                      w.getRecreations(),
                                                      w.getBacklogDrains(),
                                                      w.getSwapchainsLive(),
                                                      w.getPresentSemaphoresLive(),
                                                      w.getMaxSubmissionsInFlight()};
              }
              for (auto h : in.getHaptics()) {
                out.haptics.push_back(HapticStatus{
                    h.getPulses(), h.getStops(), {h.getLastDurationNs(), h.getLastFrequency(), h.getLastAmplitude()}});
              }
              for (auto c : in.getClients()) {
                ClientStatus s;
                s.id = c.getId();
                s.name = c.getName().cStr();
                s.pid = c.getPid();
                s.syncMode = xrc::fromWire(c.getSyncMode());
                s.framesSubmitted = c.getFramesSubmitted();
                s.swapchains = c.getSwapchains();
                s.releases = c.getReleases();
                s.gpuCopyUsP50 = c.getGpuCopyUsP50();
                s.gpuCopyUsP99 = c.getGpuCopyUsP99();
                s.role = fromWire(c.getRole());
                s.overlayPlacement = c.getOverlayPlacement();
                s.framesDisplayed = c.getFramesDisplayed();
                s.framesLate = c.getFramesLate();
                s.framesDropped = c.getFramesDropped();
                s.framesHidden = c.getFramesHidden();
                s.displayPeriods = c.getDisplayPeriods();
                s.releaseUs = fromWire(c.getReleaseUs());
                s.latencyUs = fromWire(c.getLatencyUs());
                s.frameIntervalUs = fromWire(c.getFrameIntervalUs());
                s.imageBytes = c.getImageBytes();
                s.hung = c.getHung();
                s.stalledMs = c.getStalledMs();
                s.framesStale = c.getFramesStale();
                s.releasesSkipped = c.getReleasesSkipped();
                s.releasesRenderTimedOut = c.getReleasesRenderTimedOut();
                s.copySubmissions = c.getCopySubmissions();
                s.hostCopies = c.getHostCopies();
                s.hostCopyUs = fromWire(c.getHostCopyUs());
                s.waitsAnsweredAtOnce = c.getWaitsAnsweredAtOnce();
                s.framesReprojected = c.getFramesReprojected();
                out.clients.push_back(std::move(s));
              }
              return out;
            });
      },
      "status");
}

Result<SwapchainReadback> ControlClient::readSwapchain(uint32_t clientId, uint32_t swapchainId) {
  return impl_->link->call<SwapchainReadback>(
      [clientId, swapchainId](client::IoState& io) {
        auto request = io.control.readSwapchainRequest();
        request.setClientId(clientId);
        request.setSwapchainId(swapchainId);
        return request.send().then(
            [](capnp::Response<wire::Control::ReadSwapchainResults>&& r) -> Result<SwapchainReadback> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              return SwapchainReadback{fromWire(r.getPixels()), r.getReleaseOrdinal()};
            });
      },
      "readSwapchain");
}

Result<DisplayReadback> ControlClient::readDisplay() {
  return impl_->link->call<DisplayReadback>(
      [](client::IoState& io) {
        return io.control.readDisplayRequest().send().then(
            [](capnp::Response<wire::Control::ReadDisplayResults>&& r) -> Result<DisplayReadback> {
              if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
              DisplayReadback out;
              out.pixels = fromWire(r.getPixels());
              out.displayFrame = r.getDisplayFrame();
              for (auto l : r.getShown()) {
                out.shown.push_back({l.getClientId(), l.getFrameId(), l.getSwapchainId(), l.getReleaseOrdinal(),
                                     l.getDrawn(), l.getDepthSwapchainId()});
              }
              return out;
            });
      },
      "readDisplay");
}

Status ControlClient::setPrimary(uint32_t clientId) {
  return simpleCall(*impl_->link, "setPrimary", [clientId](client::IoState& io) {
    auto request = io.control.setPrimaryRequest();
    request.setClientId(clientId);
    return request.send().then([](capnp::Response<wire::Control::SetPrimaryResults>&& r) -> Result<bool> {
      if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
      return true;
    });
  });
}

Status ControlClient::kick(uint32_t clientId) {
  return simpleCall(*impl_->link, "kick", [clientId](client::IoState& io) {
    auto request = io.control.kickRequest();
    request.setClientId(clientId);
    return request.send().then([](capnp::Response<wire::Control::KickResults>&& r) -> Result<bool> {
      if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
      return true;
    });
  });
}

Status ControlClient::recenter() {
  return simpleCall(*impl_->link, "recenter", [](client::IoState& io) {
    return io.control.recenterRequest().send().then(
        [](capnp::Response<wire::Control::RecenterResults>&& r) -> Result<bool> {
          if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
          return true;
        });
  });
}

Status ControlClient::setInput(uint32_t hand, const std::string& profile, const std::string& component, float x,
                               float y) {
  return simpleCall(*impl_->link, "setInput", [=](client::IoState& io) {
    auto request = io.control.setInputRequest();
    request.setHand(uint8_t(std::min<uint32_t>(hand, 255)));
    request.setProfile(profile);
    request.setComponent(component);
    request.setX(x);
    request.setY(y);
    return request.send().then([](capnp::Response<wire::Control::SetInputResults>&& r) -> Result<bool> {
      if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
      return true;
    });
  });
}

Status ControlClient::setHandPose(uint32_t hand, const Pose& grip, const Pose& aim) {
  return simpleCall(*impl_->link, "setHandPose", [=](client::IoState& io) {
    auto request = io.control.setHandPoseRequest();
    request.setHand(uint8_t(std::min<uint32_t>(hand, 255)));
    xrc::toWire(grip, request.initGrip());
    xrc::toWire(aim, request.initAim());
    return request.send().then([](capnp::Response<wire::Control::SetHandPoseResults>&& r) -> Result<bool> {
      if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
      return true;
    });
  });
}

}  // namespace xrc::control
