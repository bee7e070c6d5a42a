// The bootstrap capability of one connection: describe, connect (negotiation), control.
#pragma once

#include <kj/async-io.h>

#include <functional>

#include "../compositor/daemon_context.hpp"
#include "xrc.capnp.h"

namespace xrc {

struct PeerCredentials {
  static constexpr uint32_t kUnknownUid = UINT32_MAX;
  uint32_t pid = 0;
  uint32_t uid = kUnknownUid;  // SO_PEERCRED failed: never treated as privileged
};

class CompositorServer final : public wire::Compositor::Server {
 public:
  // `disconnect` closes this connection (Control.kick); KJ thread only.
  CompositorServer(DaemonContext& ctx, kj::Timer& timer, PeerCredentials peer, std::function<void()> disconnect)
      : ctx_(ctx), timer_(timer), peer_(peer), disconnect_(std::move(disconnect)) {}

  kj::Promise<void> describe(DescribeContext context) override;
  kj::Promise<void> connect(ConnectContext context) override;
  kj::Promise<void> control(ControlContext context) override;

 private:
  DaemonContext& ctx_;
  kj::Timer& timer_;
  PeerCredentials peer_;
  std::function<void()> disconnect_;
  bool connected_ = false;
};

}  // namespace xrc
