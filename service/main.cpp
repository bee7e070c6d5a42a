// xr-compositord: wires the GPU, the backend, the frame worker and the RPC listener together,
// and turns SIGTERM/SIGINT into a clean shutdown.
#include <signal.h>
#include <unistd.h>

#include <kj/async-io.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <pthread.h>
#include <cstdio>

#include <thread>

#include "backends/headless/headless_backend.hpp"
#include "compositor/daemon_context.hpp"
#include "compositor/health_monitor.hpp"
#include "log.hpp"
#include "platform/systemd.hpp"
#include "rpc/listener.hpp"
#include "xrc/socket_path.hpp"

namespace {

struct Options {
  std::string backend = "headless";
  std::string socket;
  double refreshHz = 90.0;
  int shutdownGraceMs = 1000;
  std::string logLevel = "info";
  std::string viewSize = "1440x1600";
  std::string syncMode = "auto";
  std::string deviceUuid;
  bool testHooks = false;
};

bool parseSize(const std::string& text, uint32_t& w, uint32_t& h) {
  unsigned a = 0, b = 0;
  char x = 0;
  if (std::sscanf(text.c_str(), "%u%c%u", &a, &x, &b) != 3 || x != 'x' || a == 0 || b == 0 || a > 8192 || b > 8192) {
    return false;
  }
  w = a;
  h = b;
  return true;
}

int run(const Options& options) {
  using namespace xrc;
  log::Level level;
  if (!log::parseLevel(options.logLevel, level)) {
    log::error("--log-level must be one of trace, debug, info, warn, error (got '{}')", options.logLevel);
    return 2;
  }
  log::setLevel(level);
  if (options.backend != "headless") {
    log::error("unknown backend '{}' (available: headless)", options.backend);
    return 2;
  }
  HeadlessOptions headless;
  if (!parseSize(options.viewSize, headless.viewWidth, headless.viewHeight)) {
    log::error("--view-size must be WIDTHxHEIGHT within 1..8192 (got '{}')", options.viewSize);
    return 2;
  }
  if (!(options.refreshHz >= 1.0 && options.refreshHz <= 1000.0)) {
    log::error("--refresh-hz must be within 1..1000 (got {})", options.refreshHz);
    return 2;
  }
  headless.refreshHz = options.refreshHz;
  std::optional<SyncMode> forced;
  if (options.syncMode == "host")
    forced = SyncMode::host;
  else if (options.syncMode == "binary")
    forced = SyncMode::binary;
  else if (options.syncMode != "auto") {
    log::error("--sync-mode must be auto, host or binary (got '{}')", options.syncMode);
    return 2;
  }
  auto socketPath = resolveSocketPath(options.socket);
  if (!socketPath) {
    log::error("{}", socketPath.error().message);
    return 2;
  }

  auto gpu = gpu::GpuDevice::create(gpu::DeviceOptions{options.deviceUuid});
  if (!gpu) {
    log::error("GPU: {}", gpu.error().describe());
    return 1;
  }
  if (forced == SyncMode::binary && !gpu.value()->facts().externalSemaphoreFd) {
    log::error("--sync-mode binary needs VK_KHR_external_semaphore_fd, which '{}' lacks", gpu.value()->facts().name);
    return 2;
  }
  auto copyTimeline = gpu::Timeline::create(gpu.value()->device());
  if (!copyTimeline) {
    log::error("{}", copyTimeline.error().describe());
    return 1;
  }
  auto backend = HeadlessBackend::create(*gpu.value(), *copyTimeline.value(), headless);
  if (!backend) {
    log::error("headless backend: {}", backend.error().describe());
    return 1;
  }
  // Socket activation: systemd owns the socket file; otherwise we bind (and later remove) it.
  auto activated = platform::takeActivatedSocket();
  if (!activated) {
    log::error("{}", activated.error().message);
    return 1;
  }
  const bool socketActivated = activated.value().has_value();
  auto listenFd =
      socketActivated ? Result<UniqueFd>(std::move(*activated.value())) : bindListeningSocket(socketPath.value());
  if (!listenFd) {
    log::error("{}", listenFd.error().message);
    return 1;
  }

  ClientRegistry clients;
  {
    FrameWorker worker;
    DaemonContext ctx{*gpu.value(),
                      *copyTimeline.value(),
                      *backend.value(),
                      worker,
                      clients,
                      forced,
                      std::chrono::milliseconds(2000),
                      monotonicNowNs(),
                      uint32_t(::getuid())};
    auto io = kj::setupAsyncIo();
    auto stop = kj::newPromiseAndCrossThreadFulfiller<int>();

    // Boost.Asio owns signals: SIGTERM/SIGINT end the KJ loop from the Asio thread.
    boost::asio::io_context signalsIo;
    boost::asio::signal_set signals(signalsIo, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
      if (!ec) stop.fulfiller->fulfill(kj::cp(signal));
    });
    // --test-hooks: SIGUSR2 stalls (and un-stalls) the display loop, for the watchdog tests.
    boost::asio::signal_set stallSignal(signalsIo);
    bool stalled = false;
    std::function<void()> armStallHook = [&] {
      stallSignal.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        stalled = !stalled;
        log::warn("test hook: display loop {}", stalled ? "stalled" : "resumed");
        backend.value()->setStalledForTest(stalled);
        armStallHook();
      });
    };
    if (options.testHooks) {
      stallSignal.add(SIGUSR2);
      armStallHook();
    }
    HealthMonitor health(signalsIo, *backend.value(), worker, clients, platform::watchdogInterval());
    std::thread signalThread([&] {
      pthread_setname_np(pthread_self(), "xrc-signals");
      signalsIo.run();
    });

    backend.value()->start();
    boost::asio::post(signalsIo, [&] { health.start(); });
    {
      Listener listener(ctx, io, std::move(listenFd).value());
      auto accepting = listener.run().eagerlyEvaluate(
          [](kj::Exception&& e) { log::error("accept failed: {}", e.getDescription().cStr()); });
      log::info("xr-compositord {} serving '{}'{} (backend {}, {} Hz, views {}x{}x{})", XRC_VERSION, socketPath.value(),
                socketActivated ? " (socket from systemd)" : "", options.backend, options.refreshHz, headless.viewCount,
                headless.viewWidth, headless.viewHeight);
      // Ready only now: the GPU, the backend's display loop and the listener are all up.
      platform::notify(
          platform::readyMessage(fmt::format("serving, backend {}, {} Hz", options.backend, options.refreshHz)));
      const int signal = stop.promise.wait(io.waitScope);
      platform::notify(platform::stoppingMessage());
      log::info("signal {}: shutting down ({} connections)", signal, listener.connectionCount());
      // Ask the clients to end their sessions (waitFrame answers say `stopping`) and give them a
      // bounded time to leave on their own before their connections are closed.
      ctx.stopping = true;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.shutdownGraceMs);
      while (listener.connectionCount() > 0 && std::chrono::steady_clock::now() < deadline) {
        io.provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(io.waitScope);
      }
      if (listener.connectionCount() > 0) {
        log::info("closing {} connections whose clients did not leave within {} ms", listener.connectionCount(),
                  options.shutdownGraceMs);
      }
    }
    // Connections (and with them every session) are gone: their GPU teardown runs on the
    // frame worker, which needs the context and a running backend until it is drained.
    worker.drain();
    signalsIo.stop();
    signalThread.join();
    backend.value()->stop();
  }
  if (!socketActivated) ::unlink(socketPath.value().c_str());  // an activated socket is systemd's
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Options options;
  CLI::App app{"xr-compositord: out-of-process XR compositor daemon"};
  app.add_option("--backend", options.backend, "Display backend (headless)")->capture_default_str();
  app.add_option("--socket", options.socket,
                 "Socket path (default $XR_COMPOSITOR_SOCKET, else $XDG_RUNTIME_DIR/xr-compositor/socket)");
  app.add_option("--refresh-hz", options.refreshHz, "Display refresh rate")->capture_default_str();
  app.add_flag("--test-hooks", options.testHooks, "Enable test hooks (SIGUSR2 stalls/resumes the display loop)");
  app.add_option("--shutdown-grace-ms", options.shutdownGraceMs,
                 "On SIGTERM/SIGINT, how long clients may take to end their sessions")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  app.add_option("--log-level", options.logLevel, "trace, debug, info, warn or error")->capture_default_str();
  app.add_option("--view-size", options.viewSize, "Headless per-view recommended size WxH")->capture_default_str();
  app.add_option("--sync-mode", options.syncMode, "auto, host or binary")->capture_default_str();
  app.add_option("--device-uuid", options.deviceUuid, "Vulkan deviceUUID to use (default: first suitable)");
  app.set_version_flag("--version", XRC_VERSION);
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
