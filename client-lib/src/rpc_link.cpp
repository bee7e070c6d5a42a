#include "rpc_link.hpp"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "xrc/batching_stream.hpp"
#include "xrc/socket_path.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::client {

namespace {
constexpr uint kMaxFdsPerMessage = 256;
// Readbacks of full-size stereo images are large; everything else is small.
capnp::ReaderOptions readerOptions() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 512ull * 1024 * 1024 / 8;
  return options;
}

wire::Compositor::Client serverBootstrap(capnp::RpcSystem<capnp::rpc::twoparty::VatId>& rpc) {
  capnp::MallocMessageBuilder message;
  auto vatId = message.initRoot<capnp::rpc::twoparty::VatId>();
  vatId.setSide(capnp::rpc::twoparty::Side::SERVER);
  return rpc.bootstrap(vatId).castAs<wire::Compositor>();
}
}  // namespace

std::shared_ptr<kj::AsyncIoContext> threadIo() {
  thread_local std::weak_ptr<kj::AsyncIoContext> shared;
  if (auto io = shared.lock()) return io;
  auto io = std::make_shared<kj::AsyncIoContext>(kj::setupAsyncIo());
  shared = io;
  return io;
}

Result<std::unique_ptr<RpcLink>> RpcLink::open(const std::string& socketPathOrEmpty) {
  auto path = resolveSocketPath(socketPathOrEmpty);
  if (!path) return path.error();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.value().size() >= sizeof(addr.sun_path)) {
    return makeError(ErrorCode::invalidArgument, "socket path '{}' is too long", path.value());
  }
  std::memcpy(addr.sun_path, path.value().c_str(), path.value().size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return makeError(ErrorCode::internal, "socket(): {}", std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return makeError(ErrorCode::notFound, "cannot reach xr-compositord at '{}': {} (is the daemon running?)",
                     path.value(), std::strerror(errno));
  }
  auto io = threadIo();
  auto stream = io->lowLevelProvider->wrapUnixSocketFd(fd.release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP);
  auto link = std::make_unique<RpcLink>(std::move(io), kj::mv(stream));
  link->path_ = path.value();
  return link;
}

RpcLink::RpcLink(std::shared_ptr<kj::AsyncIoContext> io, kj::Own<kj::AsyncCapabilityStream> stream)
    : io_(std::move(io)),
      stream_(kj::heap<BatchingStream>(kj::mv(stream), BatchingStream::Reads::passThrough)),
      batching_(&kj::downcast<BatchingStream>(*stream_)),
      network_(*stream_, kMaxFdsPerMessage, capnp::rpc::twoparty::Side::CLIENT, readerOptions()),
      rpc_(capnp::makeRpcClient(network_)),
      bootstrap_(serverBootstrap(rpc_)),
      watch_(
          network_.onDisconnect()
              .then([flag = disconnected_] { *flag = true; }, [flag = disconnected_](kj::Exception&&) { *flag = true; })
              .eagerlyEvaluate(nullptr)) {}

}  // namespace xrc::client
