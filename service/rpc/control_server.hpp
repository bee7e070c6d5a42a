// The operator's interface (xr-compositorctl): status, readbacks, primary switching and kicking
// clients. Handed out only to the daemon's own uid or root.
#pragma once

#include "../compositor/daemon_context.hpp"
#include "xrc.capnp.h"

namespace xrc {

class ControlServer final : public wire::Control::Server {
 public:
  explicit ControlServer(DaemonContext& ctx) : ctx_(ctx) {}

  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> readSwapchain(ReadSwapchainContext context) override;
  kj::Promise<void> readDisplay(ReadDisplayContext context) override;
  kj::Promise<void> setPrimary(SetPrimaryContext context) override;
  kj::Promise<void> kick(KickContext context) override;
  kj::Promise<void> recenter(RecenterContext context) override;
  kj::Promise<void> setInput(SetInputContext context) override;
  kj::Promise<void> setHandPose(SetHandPoseContext context) override;

 private:
  DaemonContext& ctx_;
};

void fillSystemDescription(DaemonContext& ctx, wire::SystemDescription::Builder out);

}  // namespace xrc
