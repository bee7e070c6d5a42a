// The client's end of the wire: a Unix socket to the daemon carrying a two-party RPC system with
// fd passing, on a KJ event loop owned by the calling thread (shared by all links of a thread).
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <memory>
#include <string>

#include "xrc.capnp.h"
#include "xrc/batching_stream.hpp"
#include "xrc/result.hpp"

namespace xrc::client {

// One KJ event loop per thread, shared by every link created on it.
std::shared_ptr<kj::AsyncIoContext> threadIo();

class RpcLink {
 public:
  static Result<std::unique_ptr<RpcLink>> open(const std::string& socketPathOrEmpty);
  RpcLink(std::shared_ptr<kj::AsyncIoContext> io, kj::Own<kj::AsyncCapabilityStream> stream);

  kj::WaitScope& waitScope() { return io_->waitScope; }
  wire::Compositor::Client& bootstrap() { return bootstrap_; }
  // Runs the event loop's queued work, which hands the RPC system's outgoing messages to the
  // stream, then writes them to the socket, and returns without polling for I/O. Unlike
  // WaitScope::poll(), it does not read and process the answers that have arrived meanwhile: those
  // wait for the next blocking call, so the calls that must not block (release, endFrame) pay
  // only for their own write. Waiting for an evalLast event runs the queue and never sleeps.
  void flush() {
    kj::evalLast([] {}).wait(io_->waitScope);
    batching_->flushNow();
  }
  // Reads and processes whatever arrived, without blocking.
  void poll() { io_->waitScope.poll(); }
  bool disconnected() const { return *disconnected_; }
  void markDisconnected() { *disconnected_ = true; }
  const std::string& path() const { return path_; }

  // Waits for `promise`, turning a broken connection into an Error.
  template <typename T>
  Result<T> wait(kj::Promise<T>&& promise, const char* what);

 private:
  std::shared_ptr<kj::AsyncIoContext> io_;
  kj::Own<kj::AsyncCapabilityStream> stream_;
  BatchingStream* batching_;  // stream_, as what it is
  capnp::TwoPartyVatNetwork network_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc_;
  wire::Compositor::Client bootstrap_;
  std::shared_ptr<bool> disconnected_ = std::make_shared<bool>(false);
  kj::Promise<void> watch_;
  std::string path_;
};

template <typename T>
Result<T> RpcLink::wait(kj::Promise<T>&& promise, const char* what) {
  Result<T> result = makeError(ErrorCode::internal, "{}: no answer", what);
  kj::runCatchingExceptions([&] { result = promise.wait(io_->waitScope); }).map([&](kj::Exception&& e) {
    // The disconnect watch may not have run yet; a call that saw the connection break knows.
    if (e.getType() == kj::Exception::Type::DISCONNECTED) *disconnected_ = true;
    result =
        makeError(ErrorCode::internal, "{}: connection to xr-compositord failed: {}", what, e.getDescription().cStr());
    return 0;
  });
  return result;
}

}  // namespace xrc::client
