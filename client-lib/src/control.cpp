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
}  // namespace

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
            for (auto c : in.getClients()) {
              out.clients.push_back(ClientStatus{
                  c.getId(), c.getName().cStr(), c.getPid(), xrc::fromWire(c.getSyncMode()), c.getFramesSubmitted(),
                  c.getSwapchains(), c.getReleases(), c.getGpuCopyUsP50(), c.getGpuCopyUsP99()});
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
              out.shown.push_back({l.getClientId(), l.getFrameId(), l.getSwapchainId(), l.getReleaseOrdinal()});
            }
            return out;
          });
      },
      "readDisplay");
}

}  // namespace xrc::control
