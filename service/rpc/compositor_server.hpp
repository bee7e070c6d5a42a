// The bootstrap capability of one connection: describe, connect (negotiation), control.
#pragma once

#include <kj/async-io.h>

#include <functional>
#include <memory>
#include <optional>

#include "../compositor/daemon_context.hpp"
#include "xrc.capnp.h"

namespace xrc {

struct PeerCredentials {
  static constexpr uint32_t kUnknownUid = UINT32_MAX;
  uint32_t pid = 0;
  uint32_t uid = kUnknownUid;  // SO_PEERCRED failed: never treated as privileged
};

// What the listener and the connection's bootstrap object know of each other. KJ thread only.
struct ConnectionFacts {
  bool hasSession = false;
  // Set when the connection was accepted over a limit: every call is answered with it (so the
  // client learns why), and the listener closes the connection shortly after.
  std::optional<Error> refusal;
};

class CompositorServer final : public wire::Compositor::Server {
 public:
  // `disconnect` closes this connection (Control.kick); KJ thread only.
  CompositorServer(DaemonContext& ctx, kj::Timer& timer, PeerCredentials peer, std::shared_ptr<ConnectionFacts> facts,
                   std::function<void()> disconnect)
      : ctx_(ctx), timer_(timer), peer_(peer), facts_(std::move(facts)), disconnect_(std::move(disconnect)) {}

  kj::Promise<void> describe(DescribeContext context) override;
  kj::Promise<void> connect(ConnectContext context) override;
  kj::Promise<void> control(ControlContext context) override;

 private:
  DaemonContext& ctx_;
  kj::Timer& timer_;
  PeerCredentials peer_;
  std::shared_ptr<ConnectionFacts> facts_;
  std::function<void()> disconnect_;
};

}  // namespace xrc
