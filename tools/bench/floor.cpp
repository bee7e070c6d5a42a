#include "floor.hpp"

#include <capnp/ez-rpc.h>
#include <kj/async-io.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "../common/process.hpp"
#include "bench_util.hpp"
#include "floor_echo.capnp.h"
#include "xrc/monotonic_clock.hpp"
#include "xrc/thread_annotations.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc::bench {

namespace {

constexpr size_t kMessageBytes = 96;  // about an endFrame with one projection layer
constexpr int kAnswerTimeoutS = 2;

class EchoServer final : public FloorEcho::Server {
  kj::Promise<void> ping(PingContext context) override {
    context.getResults().setValue(context.getParams().getValue());
    return kj::READY_NOW;
  }
};

int serveSocket(const std::string& path) {
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (!listener.valid() || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener.get(), 256) != 0) {
    std::perror("floor server: listen");
    return 1;
  }
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

// CPU time (ns, scheduler-precise) and context switches of a single-threaded process.
struct ProcessUse {
  int64_t cpuNs = 0;
  uint64_t switches = 0;
};

ProcessUse processUse(pid_t pid) {
  ProcessUse use;
  std::ifstream schedstat("/proc/" + std::to_string(pid) + "/schedstat");
  schedstat >> use.cpuNs;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("voluntary_ctxt_switches:") || line.starts_with("nonvoluntary_ctxt_switches:")) {
      use.switches += std::stoull(line.substr(line.find(':') + 1));
    }
  }
  return use;
}

Result<UniqueFd> connectSocket(const std::string& path, int64_t deadlineNs) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  for (;;) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
    if (monotonicNowNs() > deadlineNs) {
      return makeError(ErrorCode::timeout, "floor: cannot connect to {}: {}", path, std::strerror(errno));
    }
    ::usleep(10000);
  }
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

// One paced client: connects, then from `firstTickNs` on sends one request per period (at
// `phaseNs` into it) and waits for the answer.
struct ClientRun {
  const FloorOptions& options;
  const std::string& socketPath;
  int64_t firstTickNs, endNs, periodNs, phaseNs;
  std::atomic<uint64_t>& answered;
  FirstError& firstError;

  void fail(Error e) { firstError.set(std::move(e)); }

  void operator()() {
    if (options.transport == FloorTransport::socket) {
      auto fd = connectSocket(socketPath, firstTickNs);
      if (!fd) return fail(fd.error());
      // A server that stops answering fails the measurement instead of hanging it.
      const timeval answerTimeout{kAnswerTimeoutS, 0};
      ::setsockopt(fd.value().get(), SOL_SOCKET, SO_RCVTIMEO, &answerTimeout, sizeof(answerTimeout));
      std::array<char, kMessageBytes> message{};
      for (int64_t tick = firstTickNs + phaseNs; tick < endNs; tick += periodNs) {
        sleepUntilNs(tick);
        if (::write(fd.value().get(), message.data(), message.size()) != ssize_t(message.size()) ||
            ::recv(fd.value().get(), message.data(), message.size(), MSG_WAITALL) != ssize_t(message.size())) {
          return fail(makeError(ErrorCode::internal, "floor: socket echo failed: {}", std::strerror(errno)));
        }
        answered++;
      }
      return;
    }
    // EzRpcClient connects asynchronously; a request sent before the server listens fails, so
    // the first one is retried until the first tick.
    try {
      for (;;) {
        capnp::EzRpcClient client("unix:" + socketPath);
        auto echo = client.getMain<FloorEcho>();
        try {
          echo.pingRequest().send().wait(client.getWaitScope());
        } catch (const kj::Exception&) {
          if (monotonicNowNs() > firstTickNs) throw;
          ::usleep(10000);
          continue;
        }
        for (int64_t tick = firstTickNs + phaseNs; tick < endNs; tick += periodNs) {
          sleepUntilNs(tick);
          auto request = echo.pingRequest();
          request.setValue(uint64_t(tick));
          request.send()
              .ignoreResult()
              .exclusiveJoin(client.getIoProvider().getTimer().afterDelay(kAnswerTimeoutS * kj::SECONDS).then([] {
                kj::throwFatalException(KJ_EXCEPTION(OVERLOADED, "the server did not answer in time"));
              }))
              .wait(client.getWaitScope());
          answered++;
        }
        return;
      }
    } catch (const kj::Exception& e) {
      fail(makeError(ErrorCode::internal, "floor: Cap'n Proto call failed: {}", e.getDescription().cStr()));
    }
  }
};

}  // namespace

int runFloorServer(FloorTransport transport, const std::string& socketPath) {
  if (transport == FloorTransport::socket) return serveSocket(socketPath);
  try {
    capnp::EzRpcServer server(kj::heap<EchoServer>(), "unix:" + socketPath);
    kj::NEVER_DONE.wait(server.getWaitScope());
  } catch (const kj::Exception& e) {
    std::fprintf(stderr, "floor server: %s\n", e.getDescription().cStr());
  }
  return 1;
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

  const int64_t periodNs = int64_t(1e9 / options.refreshHz);
  // One second to start the server and connect, then whole periods.
  const int64_t firstTickNs = (monotonicNowNs() + 1000000000) / periodNs * periodNs;
  const int64_t periods = std::max<int64_t>(3, int64_t(options.seconds * options.refreshHz));
  const int64_t endNs = firstTickNs + periods * periodNs;
  std::atomic<uint64_t> answered{0};
  FirstError firstError;
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < options.clients; ++i) {
    const int64_t phase = options.staggered ? periodNs * i / options.clients : 0;
    threads.emplace_back(ClientRun{options, socketPath, firstTickNs, endNs, periodNs, phase, answered, firstError});
  }
  // The window leaves out the first and last period (connections settling, threads ending);
  // sampled mid-period, so every client's request of a period lands on one side of it.
  sleepUntilNs(firstTickNs + periodNs + periodNs / 2);
  const uint64_t answeredBefore = answered;
  const ProcessUse before = processUse(server.pid());
  sleepUntilNs(endNs - periodNs + periodNs / 2);
  const uint64_t answeredAfter = answered;
  const ProcessUse after = processUse(server.pid());
  for (auto& t : threads) t.join();
  if (auto e = firstError.get()) return *e;
  if (!server.running()) return makeError(ErrorCode::internal, "floor: the server exited: {}", server.output());
  FloorResult result;
  result.requests = answeredAfter - answeredBefore;
  if (result.requests == 0) return makeError(ErrorCode::internal, "floor: no request answered in the window");
  result.serverCpuUsPerRequest = double(after.cpuNs - before.cpuNs) / 1e3 / double(result.requests);
  result.serverWakeupsPerRequest = double(after.switches - before.switches) / double(result.requests);
  return result;
}

}  // namespace xrc::bench
