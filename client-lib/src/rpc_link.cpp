#include "rpc_link.hpp"

#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include <kj/async-unix.h>

#include "xrc/socket_path.hpp"
#include "xrc/unix_socket_stream.hpp"

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

// Bounded: a daemon that stopped accepting (its backlog full) is an error after this long, not
// a connect() that never returns.
constexpr std::chrono::milliseconds kConnectTimeout{5000};

Result<UniqueFd> connectTo(const std::string& path) { return connectUnixSocket(path, kConnectTimeout); }
}  // namespace

Error connectionError(RpcLink& link, const kj::Exception& e, const char* what) {
  link.markDisconnected();
  return makeError(ErrorCode::internal, "{}: connection to xr-compositord failed: {}", what, e.getDescription().cStr());
}

IoState::IoState(kj::AsyncIoContext& io, kj::Own<kj::AsyncCapabilityStream> socket,
                 std::shared_ptr<std::atomic<uint64_t>> socketWrites)
    : io(io),
      stream(kj::heap<BatchingStream>(kj::mv(socket), BatchingStream::Reads::passThrough, std::move(socketWrites))),
      batching(&kj::downcast<BatchingStream>(*stream)),
      network(*stream, kMaxFdsPerMessage, capnp::rpc::twoparty::Side::CLIENT, readerOptions()),
      rpc(capnp::makeRpcClient(network)),
      bootstrap(serverBootstrap(rpc)),
      tasks(logFailures_) {}

IoState::~IoState() noexcept(false) = default;

RpcLink::RpcLink() : wakeFd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Result<std::unique_ptr<RpcLink>> RpcLink::open(const std::string& socketPathOrEmpty) {
  auto path = resolveSocketPath(socketPathOrEmpty);
  if (!path) return path.error();
  auto fd = connectTo(path.value());
  if (!fd) return fd.error();
  auto link = std::make_unique<RpcLink>();
  if (!link->wakeFd_.valid()) return makeError(ErrorCode::internal, "eventfd(): {}", std::strerror(errno));
  link->path_ = path.value();
  auto started = std::make_shared<AnswerSlot<bool>>();
  link->thread_ = std::thread(
      [raw = link.get(), started, socket = std::move(fd).value()]() mutable { raw->run(std::move(socket), started); });
  auto up = started->waitFor(std::chrono::milliseconds(10000));
  if (!up || !up->ok()) {
    // The thread reports failure only before it enters its loop; it is ending by itself.
    if (link->thread_.joinable()) link->thread_.join();
    if (!up) return makeError(ErrorCode::internal, "the client I/O thread did not start");
    return up->error();
  }
  return link;
}

RpcLink::~RpcLink() {
  if (!thread_.joinable()) return;
  {
    Lock lock(queueMutex_);
    stopping_ = true;
  }
  wake();
  thread_.join();
}

void RpcLink::post(Work work) {
  bool mustWake = false;
  {
    Lock lock(queueMutex_);
    queue_.push_back(kj::mv(work));
    mustWake = !std::exchange(wakePending_, true);
  }
  if (mustWake) wake();
}

void RpcLink::postDeferred(Work work) {
  Lock lock(queueMutex_);
  queue_.push_back(kj::mv(work));
}

void RpcLink::flush() {
  bool mustWake = false;
  {
    Lock lock(queueMutex_);
    mustWake = !queue_.empty() && !std::exchange(wakePending_, true);
  }
  if (mustWake) wake();
}

void RpcLink::wake() {
  const uint64_t one = 1;
  ssize_t n;
  do {
    n = ::write(wakeFd_.get(), &one, sizeof one);
  } while (n < 0 && errno == EINTR);
}

void RpcLink::run(UniqueFd socket, const std::shared_ptr<AnswerSlot<bool>>& started) {
  pthread_setname_np(pthread_self(), "xrc-client-io");
  std::optional<kj::AsyncIoContext> io;
  std::unique_ptr<IoState> state;
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] {
                 io.emplace(kj::setupAsyncIo());
                 // Woken only to read (docs/SYNC.md, "Batching on the wire").
                 kj::Own<kj::AsyncCapabilityStream> stream =
                     kj::heap<UnixSocketStream>(io->unixEventPort, std::move(socket));
                 state = std::make_unique<IoState>(*io, kj::mv(stream), socketWrites_);
               })) {
    started->set(makeError(ErrorCode::internal, "client I/O setup failed: {}", e->getDescription().cStr()));
    return;
  }
  auto lost = [this, io = state.get()] {
    markDisconnected();
    io->abandonReleaseAnswers();
  };
  auto watch =
      state->network.onDisconnect().then(kj::cp(lost), [lost](kj::Exception&&) { lost(); }).eagerlyEvaluate(nullptr);
  kj::UnixEventPort::FdObserver wakeups(io->unixEventPort, wakeFd_.get(), kj::UnixEventPort::FdObserver::OBSERVE_READ);
  started->set(true);

  for (;;) {
    // Edge-triggered: clear the counter, then take the queue. Work posted after the swap writes
    // the eventfd again (post() writes when no wake-up is pending), so nothing is missed. One read
    // clears it (not a semaphore eventfd); with nothing written it fails with EAGAIN, harmlessly.
    uint64_t count;
    ssize_t cleared;
    do {
      cleared = ::read(wakeFd_.get(), &count, sizeof count);
    } while (cleared < 0 && errno == EINTR);
    std::vector<Work> work;
    bool stop = false;
    {
      Lock lock(queueMutex_);
      work.swap(queue_);
      wakePending_ = false;
      stop = stopping_;
    }
    for (auto& w : work) {
      KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { w(*state); })) {
        (void)connectionError(*this, *e, "client I/O");
      }
    }
    if (stop) break;
    // Runs the RPC system (answers, the batched write of what `work` sent) until woken again.
    wakeups.whenBecomesReadable().wait(io->waitScope);
  }
  // Let the last messages (swapchain destroys) leave before the connection closes.
  kj::runCatchingExceptions([&] {
    kj::evalLast([] {}).wait(io->waitScope);
    state->batching->flushNow();
    state->batching->whenIdle()
        .exclusiveJoin(io->provider->getTimer().afterDelay(100 * kj::MILLISECONDS))
        .wait(io->waitScope);
  });
  kj::runCatchingExceptions([&] {
    watch = nullptr;
    state.reset();
  });
}

}  // namespace xrc::client
