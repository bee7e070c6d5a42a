#include "xrc/control.hpp"

#include <algorithm>

#include "rpc_link.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::control {

struct ControlClient::Impl {
  std::unique_ptr<client::RpcLink> link;
  wire::Control::Client control{nullptr};
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
}  // namespace

ControlClient::ControlClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlClient::~ControlClient() = default;

Result<std::unique_ptr<ControlClient>> ControlClient::connect(const std::string& socketPath) {
  auto link = client::RpcLink::open(socketPath);
  if (!link) return link.error();
  auto impl = std::make_unique<Impl>();
  impl->link = std::move(link).value();
  Impl* raw = impl.get();
  auto reply = impl->link->wait(impl->link->bootstrap().controlRequest().send().then(
                                    [raw](capnp::Response<wire::Compositor::ControlResults>&& r) -> Status {
                                      if (auto s = xrc::fromWire(r.getError()); !s) return s;
                                      raw->control = r.getControl();
                                      return {};
                                    }),
                                "control");
  if (!reply) return reply.error();
  if (!reply.value()) return reply.value().error();
  return std::make_unique<ControlClient>(std::move(impl));
}

Result<DaemonStatus> ControlClient::status() {
  auto reply = impl_->link->wait(
      impl_->control.statusRequest().send().then(
          [](capnp::Response<wire::Control::StatusResults>&& r) -> Result<DaemonStatus> {
            if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
            auto in = r.getStatus();
            DaemonStatus out;
            out.daemonVersion = in.getDaemonVersion().cStr();
            out.backend = in.getBackend().cStr();
            out.uptimeNs = in.getUptimeNs();
            out.refreshHz = in.getRefreshHz();
            out.displayFrames = in.getDisplayFrames();
            for (auto c : in.getClients()) {
              out.clients.push_back(ClientStatus{
                  c.getId(), c.getName().cStr(), c.getPid(), xrc::fromWire(c.getSyncMode()), c.getFramesSubmitted(),
                  c.getSwapchains(), c.getReleases(), c.getGpuCopyUsP50(), c.getGpuCopyUsP99()});
            }
            return out;
          }),
      "status");
  if (!reply) return reply.error();
  return std::move(reply).value();
}

Result<SwapchainReadback> ControlClient::readSwapchain(uint32_t clientId, uint32_t swapchainId) {
  auto request = impl_->control.readSwapchainRequest();
  request.setClientId(clientId);
  request.setSwapchainId(swapchainId);
  auto reply = impl_->link->wait(
      request.send().then([](capnp::Response<wire::Control::ReadSwapchainResults>&& r) -> Result<SwapchainReadback> {
        if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
        return SwapchainReadback{fromWire(r.getPixels()), r.getReleaseOrdinal()};
      }),
      "readSwapchain");
  if (!reply) return reply.error();
  return std::move(reply).value();
}

Result<DisplayReadback> ControlClient::readDisplay() {
  auto reply = impl_->link->wait(
      impl_->control.readDisplayRequest().send().then(
          [](capnp::Response<wire::Control::ReadDisplayResults>&& r) -> Result<DisplayReadback> {
            if (auto s = xrc::fromWire(r.getError()); !s) return s.error();
            DisplayReadback out;
            out.pixels = fromWire(r.getPixels());
            out.displayFrame = r.getDisplayFrame();
            for (auto l : r.getShown()) {
              out.shown.push_back({l.getClientId(), l.getFrameId(), l.getSwapchainId(), l.getReleaseOrdinal()});
            }
            return out;
          }),
      "readDisplay");
  if (!reply) return reply.error();
  return std::move(reply).value();
}

}  // namespace xrc::control
