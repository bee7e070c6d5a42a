// The daemon's Unix socket: binding (with stale-socket detection), accepting, and one two-party
// RPC system per connection with fd passing enabled. Connections are independent: one failing
// or disconnecting never touches another.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <string>

#include "../compositor/daemon_context.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc {

// Creates the socket's directory if needed (0700), refuses a path a live daemon serves,
// removes a stale socket file left by a crash.
Result<UniqueFd> bindListeningSocket(const std::string& path);

class Listener final : private kj::TaskSet::ErrorHandler {
 public:
  Listener(DaemonContext& ctx, kj::AsyncIoContext& io, UniqueFd listenFd);
  // Accepts until the returned promise is dropped.
  kj::Promise<void> run();
  size_t connectionCount() const { return connections_; }

 private:
  struct Connection;
  kj::Promise<void> acceptLoop();
  kj::Promise<void> serve(kj::Own<kj::AsyncIoStream> stream);  // one accepted connection, then acceptLoop()
  kj::Promise<void> backOff(const std::string& why);           // accepting failed: retry later
  void taskFailed(kj::Exception&& exception) override;

  DaemonContext& ctx_;
  kj::AsyncIoContext& io_;
  kj::Own<kj::ConnectionReceiver> receiver_;
  kj::TaskSet tasks_;
  size_t connections_ = 0;
  uint64_t acceptFailures_ = 0;  // in the current burst (0: accepting works)
};

}  // namespace xrc
