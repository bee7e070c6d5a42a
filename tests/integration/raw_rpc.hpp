// A bare Cap'n Proto connection to the daemon on the test's own thread, bypassing client-lib,
// so that tests can send what the library would never send.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <memory>
#include <string>

#include "xrc.capnp.h"

namespace xrc::test {

class RawRpc {
 public:
  static std::unique_ptr<RawRpc> open(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) return nullptr;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return nullptr;
    }
    return std::unique_ptr<RawRpc>(new RawRpc(fd));  // private constructor
  }

  kj::WaitScope& waitScope() { return io_->waitScope; }
  kj::Timer& timer() { return io_->provider->getTimer(); }
  wire::Compositor::Client& bootstrap() { return bootstrap_; }

 private:
  // One KJ event loop per thread, shared by the thread's raw connections.
  static std::shared_ptr<kj::AsyncIoContext> threadIo() {
    thread_local std::weak_ptr<kj::AsyncIoContext> shared;
    if (auto io = shared.lock()) return io;
    auto io = std::make_shared<kj::AsyncIoContext>(kj::setupAsyncIo());
    shared = io;
    return io;
  }

  explicit RawRpc(int fd)
      : io_(threadIo()),
        stream_(io_->lowLevelProvider->wrapUnixSocketFd(fd, kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP)),
        network_(*stream_, 16, capnp::rpc::twoparty::Side::CLIENT),
        rpc_(capnp::makeRpcClient(network_)),
        bootstrap_(serverBootstrap()) {}

  wire::Compositor::Client serverBootstrap() {
    capnp::MallocMessageBuilder message;
    auto vatId = message.initRoot<capnp::rpc::twoparty::VatId>();
    vatId.setSide(capnp::rpc::twoparty::Side::SERVER);
    return rpc_.bootstrap(vatId).castAs<wire::Compositor>();
  }

  std::shared_ptr<kj::AsyncIoContext> io_;
  kj::Own<kj::AsyncCapabilityStream> stream_;
  capnp::TwoPartyVatNetwork network_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc_;
  wire::Compositor::Client bootstrap_;
};

}  // namespace xrc::test
