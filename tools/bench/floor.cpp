#include "floor.hpp"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "../common/process.hpp"
#include "../common/thread_use.hpp"
#include "bench_util.hpp"
#include "floor_echo.capnp.h"
#include "xrc/batching_stream.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/socket_path.hpp"
#include "xrc/thread_annotations.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::bench {

namespace {

constexpr size_t kMessageBytes = 96;  // about an endFrame with one projection layer
constexpr int kAnswerTimeoutS = 2;
constexpr auto kStartTimeout = std::chrono::seconds(60);

class EchoServer final : public FloorEcho::Server {
  kj::Promise<void> ping(PingContext context) override {
    context.getResults().setValue(context.getParams().getValue());
    return kj::READY_NOW;
  }
};

// epoll, read, write: the least a server can do per request.
int serveSocket(UniqueFd listener) {
  UniqueFd poll(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listener.get();
  ::epoll_ctl(poll.get(), EPOLL_CTL_ADD, listener.get(), &event);
  std::vector<UniqueFd> connections;
  std::array<epoll_event, 64> ready{};
  std::array<char, 4096> buffer{};
  for (;;) {
    const int count = ::epoll_wait(poll.get(), ready.data(), int(ready.size()), -1);
    for (int i = 0; i < count; ++i) {
      const int fd = ready[i].data.fd;
      if (fd == listener.get()) {
        UniqueFd connection(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!connection.valid()) continue;
        epoll_event added{};
        added.events = EPOLLIN;
        added.data.fd = connection.get();
        ::epoll_ctl(poll.get(), EPOLL_CTL_ADD, connection.get(), &added);
        connections.push_back(std::move(connection));
        continue;
      }
      const ssize_t got = ::read(fd, buffer.data(), buffer.size());
      if (got <= 0) {
        ::epoll_ctl(poll.get(), EPOLL_CTL_DEL, fd, nullptr);
        continue;
      }
      if (::write(fd, buffer.data(), size_t(got)) != got) ::epoll_ctl(poll.get(), EPOLL_CTL_DEL, fd, nullptr);
    }
  }
}

// One connection the way the daemon serves it (service/rpc/listener.cpp): read-ahead batching
// stream, two-party network, an RPC system whose bootstrap is the echo.
struct EchoConnection {
  explicit EchoConnection(kj::Own<kj::AsyncIoStream> socket)
      : stream(
            kj::heap<BatchingStream>(socket.downcast<kj::AsyncCapabilityStream>(), BatchingStream::Reads::readAhead)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER),
        rpc(capnp::makeRpcServer(network, kj::heap<EchoServer>())) {}
  kj::Own<kj::AsyncCapabilityStream> stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

struct IgnoreFailures : kj::TaskSet::ErrorHandler {
  void taskFailed(kj::Exception&&) override {}  // a client that went away
};

kj::Promise<void> acceptEchoConnections(kj::ConnectionReceiver& receiver, kj::TaskSet& connections) {
  return receiver.accept().then([&receiver, &connections](kj::Own<kj::AsyncIoStream> socket) {
    auto connection = kj::heap<EchoConnection>(kj::mv(socket));
    auto ended = connection->network.onDisconnect();
    connections.add(ended.attach(kj::mv(connection)));
    return acceptEchoConnections(receiver, connections);
  });
}

int serveCapnp(UniqueFd listener) {
  try {
    auto io = kj::setupAsyncIo();
    auto receiver =
        io.lowLevelProvider->wrapListenSocketFd(listener.release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP);
    IgnoreFailures ignore;
    kj::TaskSet connections(ignore);
    acceptEchoConnections(*receiver, connections).wait(io.waitScope);
  } catch (const kj::Exception& e) {
    std::fprintf(stderr, "floor server: %s\n", e.getDescription().cStr());
  }
  return 1;
}

// CPU time (ns, scheduler-precise) and context switches of a single-threaded process: its main
// thread's, as the daemon's threads are read (thread_use.hpp).
struct ProcessUse {
  int64_t cpuNs = 0;
  uint64_t switches = 0;
};

ProcessUse processUse(pid_t pid) {
  return ProcessUse{std::llround(tools::cpuSeconds(pid, pid) * 1e9), tools::contextSwitches(pid, pid)};
}

Result<UniqueFd> connectSocket(const std::string& path) {
  auto address = unixSocketAddress(path);
  if (!address) return address.error();
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.value()), sizeof(sockaddr_un)) != 0) {
    return makeError(ErrorCode::internal, "floor: cannot connect to {}: {}", path, std::strerror(errno));
  }
  return fd;
}

// The first error of any client thread.
class FirstError {
 public:
  void set(Error e) XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    if (!error_) error_ = std::move(e);
  }
  std::optional<Error> get() XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    return error_;
  }

 private:
  Mutex mutex_;
  std::optional<Error> error_ XRC_GUARDED_BY(mutex_);
};

// Where the clients meet before the paced run: each reports that it is connected (or has
// failed), and waits for the first tick, which the measuring thread sets once all have
// reported, so that slow starts (sanitizer builds) do not eat into the measured periods.
class StartGate {
 public:
  static constexpr int64_t kAbort = -1;

  void arrive() XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    ++arrived_;
    changed_.notify_all();
  }
  bool waitForAll(uint32_t count, std::chrono::seconds timeout) XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    return changed_.wait_for(lock.native(), timeout, [&] { return arrived_ >= count; });
  }
  void open(int64_t firstTickNs) XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    firstTickNs_ = firstTickNs;
    changed_.notify_all();
  }
  // The first tick, or kAbort. Bounded: the measuring thread opens (or aborts) within
  // kStartTimeout of starting the clients.
  int64_t waitOpen() XRC_EXCLUDES(mutex_) {
    Lock lock(mutex_);
    if (!changed_.wait_for(lock.native(), 2 * kStartTimeout, [&] { return firstTickNs_ != 0; })) return kAbort;
    return firstTickNs_;
  }

 private:
  Mutex mutex_;
  std::condition_variable changed_;
  uint32_t arrived_ XRC_GUARDED_BY(mutex_) = 0;
  int64_t firstTickNs_ XRC_GUARDED_BY(mutex_) = 0;
};

// One paced client: connects, meets the others at the gate, then sends one request per period
// (at `phaseNs` into it) and waits for the answer. A period already over when the client gets
// to it is skipped, not made up in a burst.
struct ClientRun {
  const FloorOptions& options;
  const std::string& socketPath;
  int64_t periods, periodNs, phaseNs;
  StartGate& gate;
  std::atomic<uint64_t>& answered;
  FirstError& firstError;

  template <typename Request>
  void paced(int64_t firstTickNs, Request&& request) {
    for (int64_t i = 0; i < periods; ++i) {
      const int64_t tick = firstTickNs + phaseNs + i * periodNs;
      if (monotonicNowNs() >= tick + periodNs) continue;
      sleepUntilNs(tick);
      if (!request(tick)) return;
      answered++;
    }
  }

  void operator()() {
    auto fd = connectSocket(socketPath);
    if (!fd) {
      firstError.set(fd.error());
      gate.arrive();
      return;
    }
    if (options.transport == FloorTransport::socket) {
      // A server that stops answering fails the measurement instead of hanging it.
      const timeval answerTimeout{kAnswerTimeoutS, 0};
      ::setsockopt(fd.value().get(), SOL_SOCKET, SO_RCVTIMEO, &answerTimeout, sizeof(answerTimeout));
      gate.arrive();
      const int64_t first = gate.waitOpen();
      if (first == StartGate::kAbort) return;
      std::array<char, kMessageBytes> message{};
      paced(first, [&](int64_t) {
        if (::write(fd.value().get(), message.data(), message.size()) != ssize_t(message.size()) ||
            ::recv(fd.value().get(), message.data(), message.size(), MSG_WAITALL) != ssize_t(message.size())) {
          firstError.set(makeError(ErrorCode::internal, "floor: socket echo failed: {}", std::strerror(errno)));
          return false;
        }
        return true;
      });
      return;
    }
    // The client end the way client-lib makes it (client-lib/src/rpc_link.cpp): batching stream
    // and two-party network; each answer is kept until the next call has been sent, so that its
    // Finish shares that call's write (docs/SYNC.md).
    bool arrived = false;
    try {
      auto io = kj::setupAsyncIo();
      auto stream = kj::heap<BatchingStream>(
          io.lowLevelProvider->wrapUnixSocketFd(fd.value().release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP),
          BatchingStream::Reads::passThrough);
      capnp::TwoPartyVatNetwork network(*stream, capnp::rpc::twoparty::Side::CLIENT);
      auto rpc = capnp::makeRpcClient(network);
      capnp::MallocMessageBuilder vatId;
      vatId.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
      auto echo = rpc.bootstrap(vatId.getRoot<capnp::rpc::twoparty::VatId>()).castAs<FloorEcho>();
      kj::Timer& timer = io.provider->getTimer();
      auto call = [&](uint64_t value) {
        auto request = echo.pingRequest();
        request.setValue(value);
        return request.send()
            .then([](capnp::Response<FloorEcho::PingResults>&& r) { return kj::mv(r); })
            .exclusiveJoin(
                timer.afterDelay(kAnswerTimeoutS * kj::SECONDS).then([]() -> capnp::Response<FloorEcho::PingResults> {
                  kj::throwFatalException(KJ_EXCEPTION(OVERLOADED, "the server did not answer in time"));
                }));
      };
      kj::Maybe<capnp::Response<FloorEcho::PingResults>> held = call(0).wait(io.waitScope);
      gate.arrive();
      arrived = true;
      const int64_t first = gate.waitOpen();
      if (first == StartGate::kAbort) return;
      paced(first, [&](int64_t tick) {
        auto answer = call(uint64_t(tick));
        held = nullptr;
        held = answer.wait(io.waitScope);
        return true;
      });
    } catch (const kj::Exception& e) {
      firstError.set(makeError(ErrorCode::internal, "floor: Cap'n Proto call failed: {}", e.getDescription().cStr()));
      if (!arrived) gate.arrive();
    }
  }
};

}  // namespace

int runFloorServer(FloorTransport transport, const std::string& socketPath) {
  // Goes with the bench, also when the bench is killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto address = unixSocketAddress(socketPath);
  if (!address) {
    std::fprintf(stderr, "floor server: %s\n", address.error().describe().c_str());
    return 1;
  }
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener.valid() ||
      ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address.value()), sizeof(sockaddr_un)) != 0 ||
      ::listen(listener.get(), 256) != 0) {
    std::perror("floor server: listen");
    return 1;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  return transport == FloorTransport::socket ? serveSocket(std::move(listener)) : serveCapnp(std::move(listener));
}

Result<FloorResult> measureFloor(const FloorOptions& options) {
  if (options.clients == 0 || !(options.refreshHz > 0) || !(options.seconds > 0)) {
    return makeError(ErrorCode::invalidArgument, "floor: needs clients, a refresh rate and a duration");
  }
  const bool capnp = options.transport == FloorTransport::capnp;
  const std::string socketPath = options.dir + (capnp ? "/floor-capnp.sock" : "/floor-socket.sock");
  ::unlink(socketPath.c_str());
  tools::Process server({options.selfExe, "--floor-server", capnp ? "capnp" : "socket", "--floor-socket", socketPath},
                        {}, options.dir + (capnp ? "/floor-capnp.log" : "/floor-socket.log"));
  if (!server.waitForOutput("listening", kStartTimeout)) {
    return makeError(ErrorCode::internal, "floor: the server did not start: {}", server.output());
  }

  const int64_t periodNs = int64_t(1e9 / options.refreshHz);
  const int64_t periods = std::max<int64_t>(3, std::llround(options.seconds * options.refreshHz));
  StartGate gate;
  std::atomic<uint64_t> answered{0};
  FirstError firstError;
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < options.clients; ++i) {
    const int64_t phase = options.staggered ? periodNs * i / options.clients : 0;
    threads.emplace_back(ClientRun{options, socketPath, periods, periodNs, phase, gate, answered, firstError});
  }
  const bool allArrived = gate.waitForAll(options.clients, kStartTimeout);
  if (!allArrived || firstError.get()) {
    gate.open(StartGate::kAbort);
    for (auto& t : threads) t.join();
    if (auto e = firstError.get()) return *e;
    return makeError(ErrorCode::timeout, "floor: the clients did not connect in time");
  }
  // Two periods for every client to get to its first tick, on a period boundary.
  const int64_t firstTickNs = (monotonicNowNs() / periodNs + 2) * periodNs;
  gate.open(firstTickNs);
  const int64_t endNs = firstTickNs + periods * periodNs;
  // The window leaves out the first and last period (threads starting and ending); sampled
  // mid-period, so every client's request of a period lands on one side of it.
  sleepUntilNs(firstTickNs + periodNs + periodNs / 2);
  const int64_t windowFromNs = monotonicNowNs();
  const uint64_t answeredBefore = answered;
  const ProcessUse before = processUse(server.pid());
  sleepUntilNs(endNs - periodNs + periodNs / 2);
  const uint64_t answeredAfter = answered;
  const ProcessUse after = processUse(server.pid());
  const int64_t windowToNs = monotonicNowNs();
  for (auto& t : threads) t.join();
  if (auto e = firstError.get()) return *e;
  if (!server.running()) return makeError(ErrorCode::internal, "floor: the server exited: {}", server.output());
  FloorResult result;
  result.requests = answeredAfter - answeredBefore;
  if (result.requests == 0) return makeError(ErrorCode::internal, "floor: no request answered in the window");
  result.serverCpuUsPerRequest = double(after.cpuNs - before.cpuNs) / 1e3 / double(result.requests);
  result.serverWakeupsPerRequest = double(after.switches - before.switches) / double(result.requests);
  result.windowFromNs = windowFromNs;
  result.windowToNs = windowToNs;
  return result;
}

}  // namespace xrc::bench
