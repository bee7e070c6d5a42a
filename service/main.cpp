// xr-compositord: wires the GPU, the backend, the frame worker and the RPC listener together,
// and turns SIGTERM/SIGINT into a clean shutdown.
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/ranges.h>
#include <kj/async-io.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <pthread.h>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>
#include <thread>

#include "backends/headless/headless_output.hpp"
#include "backends/headless/simulated_hmd.hpp"
#include "backends/openxr/openxr_backend.hpp"
#include "compositor/daemon_context.hpp"
#include "compositor/health_monitor.hpp"
#include "compositor/hung_client_watch.hpp"
#include "config/daemon_config.hpp"
#include "display/display_core.hpp"
#include "display/mirror_compositor.hpp"
#include "log.hpp"
#include "platform/cpu_affinity.hpp"
#include "platform/cpu_priority.hpp"
#include "platform/systemd.hpp"
#include "present/window_presenter.hpp"
#include "rpc/copy_batch.hpp"
#include "rpc/end_frame_copies.hpp"
#include "rpc/frame_wakes.hpp"
#include "rpc/listener.hpp"
#include "rpc/rpc_cpu_keeper.hpp"
#include "rpc/state_changes.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/socket_path.hpp"

namespace {

// The backend's display thread asks the KJ thread to disconnect every client (its runtime was
// lost) through an eventfd, so it never waits for the KJ loop.
kj::Promise<void> disconnectAllOnSignal(kj::AsyncInputStream& signal, xrc::ClientRegistry& clients, uint64_t& buffer) {
  return signal.tryRead(&buffer, sizeof(buffer), sizeof(buffer)).then([&](size_t n) -> kj::Promise<void> {
    if (n == 0) return kj::READY_NOW;
    for (const auto& client : clients.snapshot()) {
      if (client->disconnect) client->disconnect();
    }
    return disconnectAllOnSignal(signal, clients, buffer);
  });
}

// Declared in the order they are built; destroyed in reverse, but for the openxr backend's
// mirror, which goes once that backend's display thread no longer sends it frames, and before
// the backend itself (the frames it holds keep the backend's swapchains).
struct Backends {
  Backends() = default;
  Backends(const Backends&) = delete;
  Backends& operator=(const Backends&) = delete;
  ~Backends() {
    if (mirror) {
      backend->stop();
      mirror.reset();
    }
  }

  std::unique_ptr<xrc::gpu::GpuDevice> gpu;
  std::unique_ptr<xrc::gpu::Timeline> copyTimeline;
  std::unique_ptr<xrc::present::WindowPresenter> presenter;  // the window mirror's
  // The headless display: its headset and output, which the display core drives.
  std::unique_ptr<xrc::SimulatedHmd> hmd;
  std::unique_ptr<xrc::HeadlessOutput> output;
  std::unique_ptr<xrc::Backend> backend;
  std::unique_ptr<xrc::display::MirrorCompositor> mirror;  // --backend openxr --mirror window
};

// The window a mirror shows `width` x `height` in: at that size, halved until it fits a common
// desktop.
xrc::Result<std::unique_ptr<xrc::present::WindowPresenter>> openMirrorWindow(xrc::gpu::GpuDevice& gpu,
                                                                             xrc::present::WindowSystem system,
                                                                             uint32_t width, uint32_t height) {
  while (width > 1920 || height > 1080) width /= 2, height /= 2;
  auto opened = xrc::present::openWindow(system, "xr-compositor", width, height);
  if (!opened) return opened.error();
  return xrc::present::WindowPresenter::create(gpu, std::move(opened).value());
}

// What the headless display is made of, from the configuration.
struct HeadlessDisplay {
  xrc::SimulatedHmdOptions hmd;
  xrc::display::DisplayCoreOptions core;
};

// The GPU device and the configured backend. Under the openxr backend the OpenXR runtime creates
// the daemon's Vulkan instance and device.
xrc::Status createBackend(const xrc::DaemonConfig& config, const HeadlessDisplay& headless,
                          xrc::FrameScheduler& scheduler, int lossEventFd, Backends& out) {
  using namespace xrc;
  const bool openxr = config.backend == "openxr";
  std::unique_ptr<OpenXrInstance> instance;
  if (openxr) {
    auto created = OpenXrInstance::create(config.openxrOverlay);
    if (!created) return created.error();
    instance = std::move(created).value();
  }
  gpu::DeviceOptions deviceOptions;
  deviceOptions.deviceUuid = config.deviceUuid;
  deviceOptions.factory = instance.get();
  (void)gpu::parseQueuePriority(config.queuePriority, deviceOptions.maxQueuePriority);  // validated
  deviceOptions.hostCopies = config.hostCopies != "off";
  deviceOptions.hostCopyMaxBytes = uint64_t(config.hostCopyMaxKib) << 10;  // validated
  const bool window = config.backend == "window" || config.mirror == "window";
  std::optional<present::WindowSystem> windowSystem;
  if (window) {
    auto system = present::windowSystemFromEnvironment();
    if (!system) return system.error();
    windowSystem = system.value();
    deviceOptions.instanceExtensions = present::surfaceInstanceExtensions(*windowSystem);
  }
  auto gpu = gpu::GpuDevice::create(deviceOptions);
  if (!gpu) return gpu.error();
  out.gpu = std::move(gpu).value();
  auto timeline = gpu::Timeline::create(out.gpu->device());
  if (!timeline) return timeline.error();
  out.copyTimeline = std::move(timeline).value();
  if (openxr) {
    OpenXrOptions options;
    options.refreshHz = config.refreshHz;
    options.overlay = config.openxrOverlay;
    options.disconnectAllClients = [lossEventFd] {
      const uint64_t one = 1;
      if (::write(lossEventFd, &one, sizeof(one)) < 0) log::error("could not signal the runtime loss");
    };
    auto created =
        OpenXrBackend::create(std::move(instance), *out.gpu, *out.copyTimeline, scheduler, std::move(options));
    if (!created) return created.error();
    auto backend = std::move(created).value();
    if (window) {
      // What is sent to the runtime, composed as the headless display would: its views side by side.
      const auto& views = backend->systemInfo().views;
      if (views.empty()) return makeError(ErrorCode::unsupported, "the OpenXR runtime describes no views to mirror");
      auto presenter = openMirrorWindow(*out.gpu, *windowSystem, views[0].recommendedWidth * uint32_t(views.size()),
                                        views[0].recommendedHeight);
      if (!presenter) return presenter.error();
      out.presenter = std::move(presenter).value();
      auto mirror = display::MirrorCompositor::create(*out.gpu, views, *out.presenter);
      if (!mirror) return mirror.error();
      out.mirror = std::move(mirror).value();
      out.mirror->start();
      backend->setMirror(out.mirror.get());
    }
    out.backend = std::move(backend);
    return {};
  }
  const SimulatedHmdOptions& hmd = headless.hmd;
  HeadlessOutputOptions output;
  output.width = hmd.viewWidth * hmd.viewCount;
  output.height = hmd.viewHeight;
  output.refreshHz = hmd.refreshHz;
  if (window) {
    auto presenter = openMirrorWindow(*out.gpu, *windowSystem, output.width, output.height);
    if (!presenter) return presenter.error();
    out.presenter = std::move(presenter).value();
    output.mirror = out.presenter.get();
  }
  auto created = HeadlessOutput::create(*out.gpu, output);
  if (!created) return created.error();
  out.output = std::move(created).value();
  out.hmd = std::make_unique<SimulatedHmd>(hmd);
  auto backend =
      display::DisplayCore::create(*out.gpu, *out.copyTimeline, scheduler, *out.hmd, *out.output, headless.core);
  if (!backend) return backend.error();
  out.backend = std::move(backend).value();
  return {};
}

struct Options {
  xrc::DaemonConfig cli;           // values given on the command line
  std::set<std::string> cliGiven;  // config keys the command line set (they beat the files)
  std::string configFile;          // --config: instead of the default files
  bool testHooks = false;
};

// Files, then the command line on top; validated. What SIGHUP re-runs too.
xrc::Result<xrc::DaemonConfig> effectiveConfig(const Options& options) {
  using namespace xrc;
  std::vector<std::string> files = defaultConfigFiles();
  if (!options.configFile.empty()) {
    if (::access(options.configFile.c_str(), F_OK) != 0) {
      return makeError(ErrorCode::invalidArgument, "--config: '{}' does not exist", options.configFile);
    }
    files = {options.configFile};
  }
  auto loaded = loadConfigFiles(files, DaemonConfig{});
  if (!loaded) return loaded.error();
  DaemonConfig c = loaded.value();
  const DaemonConfig& cli = options.cli;
  const auto& given = options.cliGiven;
  if (given.count("backend")) c.backend = cli.backend;
  if (given.count("socket")) c.socket = cli.socket;
  if (given.count("refresh_hz")) c.refreshHz = cli.refreshHz;
  if (given.count("log_level")) c.logLevel = cli.logLevel;
  if (given.count("view_size")) c.viewSize = cli.viewSize;
  if (given.count("sync_mode")) c.syncMode = cli.syncMode;
  if (given.count("device_uuid")) c.deviceUuid = cli.deviceUuid;
  if (given.count("shutdown_grace_ms")) c.shutdownGraceMs = cli.shutdownGraceMs;
  if (given.count("copy_batch_us")) c.copyBatchUs = cli.copyBatchUs;
  if (given.count("copy_batch_before_latch_us")) c.copyBatchBeforeLatchUs = cli.copyBatchBeforeLatchUs;
  if (given.count("copy_batch_before_latch_max_us")) c.copyBatchBeforeLatchMaxUs = cli.copyBatchBeforeLatchMaxUs;
  if (given.count("copy_batch_copies_per_submission")) {
    c.copyBatchCopiesPerSubmission = cli.copyBatchCopiesPerSubmission;
  }
  if (given.count("mirror")) c.mirror = cli.mirror;
  if (given.count("head_motion")) c.headMotion = cli.headMotion;
  if (given.count("compose")) c.compose = cli.compose;
  if (given.count("environment_blend_modes")) c.environmentBlendModes = cli.environmentBlendModes;
  if (given.count("queue_priority")) c.queuePriority = cli.queuePriority;
  if (given.count("nice")) c.nice = cli.nice;
  if (given.count("rpc_cpu")) c.rpcCpu = cli.rpcCpu;
  if (given.count("host_copies")) c.hostCopies = cli.hostCopies;
  if (given.count("host_copy_max_kib")) c.hostCopyMaxKib = cli.hostCopyMaxKib;
  if (given.count("openxr_overlay")) c.openxrOverlay = cli.openxrOverlay;
  if (given.count("reprojection")) c.reprojection = cli.reprojection;
  for (const LimitKey& limit : limitKeys()) {
    if (given.count(limit.key)) c.limits.*limit.member = cli.limits.*limit.member;
  }
  if (auto s = validateConfig(c); !s) return s.error();
  return c;
}

// max_image_mib_total = 0: three quarters of the device's largest device-local heap (lavapipe:
// of the machine's memory), leaving room for the daemon's own images and other processes.
uint64_t defaultImageBudgetBytes(const xrc::gpu::GpuDevice& gpu) {
  uint64_t largest = 0;
  const VkPhysicalDeviceMemoryProperties& memory = gpu.memory();
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if ((memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) {
      largest = std::max<uint64_t>(largest, memory.memoryHeaps[i].size);
    }
  }
  return largest / 4 * 3;
}

// Every connection costs the daemon an fd, every shared image three: take what the hard limit
// allows (the soft limit is often 1024), as systemd asks of services that need many.
void raiseFdLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    xrc::log::debug("open file limit raised from {} to {}", before, limit.rlim_cur);
  }
}

int run(const Options& options) {
  using namespace xrc;
  raiseFdLimit();
  // Everything is checked before anything starts: a bad setting leaves nothing half-started.
  auto effective = effectiveConfig(options);
  if (!effective) {
    log::error("{}", effective.error().message);
    return 2;
  }
  DaemonConfig config = effective.value();
  log::Level level = log::Level::info;
  (void)log::parseLevel(config.logLevel, level);
  log::setLevel(level);
  // Refused before anything starts: the CPU is only taken once the other threads run (below).
  if (config.rpcCpu >= 0) {
    if (auto allowed = platform::cpuAllowed(int(config.rpcCpu)); !allowed) {
      log::error("rpc_cpu: {}", allowed.error().message);
      return 2;
    }
  }
  // rpc_cpu auto: the load on each CPU is sampled from here, so that the first choice, once the
  // daemon is ready, sees how busy each was while it started.
  std::optional<RpcCpuKeeper> rpcCpuKeeper;
  if (config.rpcCpu == kRpcCpuAuto) rpcCpuKeeper.emplace();
  // Before any thread starts (the GPU driver's too): they all inherit it.
  if (const auto nice = platform::applyNice(int(config.nice)); !nice.refusal.empty()) {
    log::warn("{}; running at nice {}", nice.refusal, nice.applied);
  } else if (nice.applied != nice.before) {
    log::debug("running at nice {} (was {})", nice.applied, nice.before);
  }
  HeadlessDisplay headless;
  (void)parseViewSize(config.viewSize, headless.hmd.viewWidth, headless.hmd.viewHeight);
  headless.hmd.refreshHz = config.refreshHz;
  headless.hmd.headSway = config.headMotion == "sway";
  headless.hmd.environmentBlendModes = parseBlendModes(config.environmentBlendModes).value();
  headless.core.reprojection = config.reprojection;
  headless.core.composeEveryFrame = config.compose == "every-frame";
  headless.core.idleWake =
      std::min(std::chrono::milliseconds(500), HealthMonitor::checkPeriod(platform::watchdogInterval()) / 2);
  std::optional<SyncMode> forced;
  if (config.syncMode != "auto") forced = parseSyncMode(config.syncMode);
  std::atomic<int64_t> shutdownGraceMs{config.shutdownGraceMs};
  auto socketPath = resolveSocketPath(config.socket);
  if (!socketPath) {
    log::error("{}", socketPath.error().message);
    return 2;
  }

  UniqueFd lossEvent(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!lossEvent.valid()) {
    log::error("eventfd: {}", std::strerror(errno));
    return 1;
  }
  FrameScheduler scheduler;
  Backends backends;
  if (auto s = createBackend(config, headless, scheduler, lossEvent.get(), backends); !s) {
    log::error("{} backend: {}", config.backend, s.error().describe());
    return 1;
  }
  gpu::GpuDevice* gpu = backends.gpu.get();
  Backend* backend = backends.backend.get();
  if (forced == SyncMode::binary && !gpu->facts().externalSemaphoreFd) {
    log::error("--sync-mode binary needs VK_KHR_external_semaphore_fd, which '{}' lacks", gpu->facts().name);
    return 2;
  }
  if (forced == SyncMode::binary) {
    log::warn(
        "--sync-mode binary: copies wait for the clients' rendering on the GPU, so a client whose GPU work "
        "never finishes stalls the copy queue for every client (docs/SYNC.md)");
  }
  if (forced == SyncMode::timeline && !gpu->facts().timelineSemaphoreFd) {
    log::error("--sync-mode timeline needs timeline semaphores shared as OPAQUE_FD, which '{}' lacks",
               gpu->facts().name);
    return 2;
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
  Refusals refusals;
  // Declared before the swapchains (retired ones included) whose charges it holds.
  ImageBudget images(uint64_t(config.limits.maxImageMibPerClient) << 20,
                     config.limits.maxImageMibTotal > 0 ? uint64_t(config.limits.maxImageMibTotal) << 20
                                                        : defaultImageBudgetBytes(*gpu));
  log::debug("image memory budget: {} MiB per client, {} MiB in total", images.perClientLimit() >> 20,
             images.totalLimit() >> 20);
  // Outlives the event loop and every session (a session that goes counts a change); its
  // watches go before the event loop does.
  StateChanges stateChanges;
  {
    RetiredSwapchains retired;
    FrameWorker worker{kFrameWorkerThreadName};
    // The let-go's lead before the latch: the batch adapts it, the waiter reads it.
    auto letGoLead = std::make_shared<LetGoLead>(std::chrono::microseconds(config.copyBatchBeforeLatchUs),
                                                 std::chrono::microseconds(config.copyBatchBeforeLatchMaxUs));
    // A rendering found done whose copy a batch would hold is answered at that batch's let-go.
    auto renderingWaiter = gpu::RenderingWaiter::create(
        gpu->device(), [&backend = *backend, window = std::chrono::microseconds(config.copyBatchUs),
                        lead = letGoLead](int64_t readyNs) {
          const auto at = CopyBatch::letGoForCopyReadyAt(backend.clock(), window,
                                                         std::chrono::nanoseconds(lead->leadNs()), readyNs);
          if (!at) return gpu::RenderingWaiter::LetGo{};
          return gpu::RenderingWaiter::LetGo{at->letGoNs > readyNs ? at->letGoNs : 0, at->latchNs};
        });
    if (!renderingWaiter) {
      log::error("{}", renderingWaiter.error().describe());
      return 1;
    }
    auto io = kj::setupAsyncIo();
    KJ_DEFER(stateChanges.stop());
    auto letGoAlarm = MonotonicAlarm::create(*io.lowLevelProvider);
    if (!letGoAlarm) {
      log::error("{}", letGoAlarm.error().describe());
      return 1;
    }
    CopyBatch copyBatch(
        io.provider->getTimer(), std::chrono::microseconds(config.copyBatchUs), letGoLead,
        [&backend = *backend] { return backend.clock(); }, std::move(letGoAlarm).value());
    // Declared after the event loop, so destroyed (submitting anything gathered) before it.
    LetGoCopies letGoCopies(uint32_t(config.copyBatchCopiesPerSubmission));
    copyBatch.runAtLetGo([&letGoCopies, &waiter = *renderingWaiter.value()] {
      letGoCopies.gatherUntilQueueEmpty();
      waiter.answerHeld();
    });
    DaemonContext ctx{*gpu,
                      *backends.copyTimeline,
                      *backend,
                      worker,
                      retired,
                      clients,
                      scheduler,
                      config.limits,
                      images,
                      refusals,
                      *renderingWaiter.value(),
                      copyBatch,
                      letGoCopies,
                      stateChanges,
                      forced,
                      std::chrono::milliseconds(2000),
                      monotonicNowNs(),
                      uint32_t(::getuid())};
    auto lossSignal = io.lowLevelProvider->wrapInputFd(lossEvent.get());
    uint64_t lossBuffer = 0;
    auto disconnecting = disconnectAllOnSignal(*lossSignal, clients, lossBuffer).eagerlyEvaluate([](kj::Exception&& e) {
      log::error("runtime loss handling failed: {}", e.getDescription().cStr());
    });
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
        backend->setStalledForTest(stalled);
        armStallHook();
      });
    };
    if (options.testHooks) {
      stallSignal.add(SIGUSR2);
      armStallHook();
    }
    // SIGHUP re-reads the configuration. Log level and shutdown grace change at once; the rest
    // needs a restart (and says so). A bad file is reported and the running settings stay.
    boost::asio::signal_set hangup(signalsIo, SIGHUP);
    std::function<void()> armReload = [&] {
      hangup.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        auto next = effectiveConfig(options);
        if (!next) {
          log::error("configuration not reloaded, keeping the running one: {}", next.error().message);
        } else {
          std::vector<std::string> applied, restart;
          for (const std::string& key : changedKeys(config, next.value())) {
            if (key == "log_level") {
              log::Level newLevel = log::Level::info;
              (void)log::parseLevel(next.value().logLevel, newLevel);
              log::setLevel(newLevel);
              config.logLevel = next.value().logLevel;
              applied.push_back(key);
            } else if (key == "shutdown_grace_ms") {
              shutdownGraceMs = next.value().shutdownGraceMs;
              config.shutdownGraceMs = next.value().shutdownGraceMs;
              applied.push_back(key);
            } else {
              restart.push_back(key);
            }
            // Checked now, not only at the restart it waits for: that restart would refuse it.
            if (key == "rpc_cpu" && next.value().rpcCpu >= 0) {
              if (auto allowed = platform::cpuAllowed(int(next.value().rpcCpu)); !allowed) {
                log::error("rpc_cpu {} would stop the next start: {}", next.value().rpcCpu, allowed.error().message);
              }
            }
          }
          log::info("configuration reloaded: {}",
                    applied.empty() ? "nothing changed" : fmt::format("{}", fmt::join(applied, ", ")));
          if (!restart.empty()) log::warn("changed settings that need a restart: {}", fmt::join(restart, ", "));
        }
        armReload();
      });
    };
    armReload();
    // Retired swapchains are freed once their copies are done: looked at ten times a second while
    // some are kept, once a second otherwise (retire() frees an idle one at once, and tells this
    // thread when it keeps one). A connected client costs no wake-ups here.
    boost::asio::steady_timer collectTimer(signalsIo);
    constexpr auto kCollectSoon = std::chrono::milliseconds(100);
    std::function<void(size_t)> armCollect = [&](size_t kept) {
      collectTimer.expires_after(kept > 0 ? kCollectSoon : std::chrono::milliseconds(1000));
      collectTimer.async_wait([&](const boost::system::error_code& ec) {
        if (ec) return;
        armCollect(retired.collect());
      });
    };
    retired.onKept([&] {
      boost::asio::post(signalsIo, [&] {
        // Re-armed only where the next look is further off (re-arming cancels the pending wait).
        if (collectTimer.expiry() > std::chrono::steady_clock::now() + kCollectSoon) armCollect(1);
      });
    });
    armCollect(0);
    HealthMonitor health(signalsIo, *backend, worker, clients, platform::watchdogInterval());
    std::thread signalThread([&] {
      pthread_setname_np(pthread_self(), "xrc-signals");
      signalsIo.run();
    });

    backend->start();
    boost::asio::post(signalsIo, [&] { health.start(); });
    {
      Listener listener(ctx, io, std::move(listenFd).value());
      if (!socketActivated) listener.watchSocketFile(socketPath.value());
      auto accepting = listener.run().eagerlyEvaluate(
          [](kj::Exception&& e) { log::error("accept failed: {}", e.getDescription().cStr()); });
      // Clients that stopped making frames are looked at four times a second (once while there
      // is none: a client's first check may come a second late, well within any hung timeout).
      HungClientWatch hungWatch(ctx);
      std::function<kj::Promise<void>()> watchHung = [&] {
        const int64_t intervalNs = ctx.clients.empty() ? 1'000'000'000 : 250'000'000;
        const int64_t wakeNs = housekeepingWakeNs(ctx.backend.clock(), monotonicNowNs(), intervalNs);
        return atMonotonicNs(io.provider->getTimer(), wakeNs).then([&] {
          if (hungWatch.check(monotonicNowNs())) stateChanges.changed();
          if (rpcCpuKeeper) rpcCpuKeeper->tick(monotonicNowNs(), !ctx.clients.empty());
          return watchHung();
        });
      };
      auto watchingHung = watchHung().eagerlyEvaluate(
          [](kj::Exception&& e) { log::error("hung client watch failed: {}", e.getDescription().cStr()); });
      const SystemInfo& system = backend->systemInfo();
      log::info("xr-compositord {} serving '{}'{} (backend {}, {} Hz, views {}x{}x{})", XRC_VERSION, socketPath.value(),
                socketActivated ? " (socket from systemd)" : "", config.backend, system.refreshHz, system.views.size(),
                system.views.empty() ? 0 : system.views[0].recommendedWidth,
                system.views.empty() ? 0 : system.views[0].recommendedHeight);
      // Kept on its CPU only now that the daemon's other threads run: they would inherit it.
      if (rpcCpuKeeper) {
        rpcCpuKeeper->start();
        ctx.rpcCpuKeeper = &*rpcCpuKeeper;
      } else if (config.rpcCpu >= 0) {
        if (auto kept = platform::keepCallingThreadOn(int(config.rpcCpu)); !kept) {
          log::warn("rpc_cpu: {}; the RPC thread runs wherever the scheduler puts it", kept.error().message);
        } else {
          log::info("RPC thread kept on CPU {}", config.rpcCpu);
        }
      }
      // Ready only now: the GPU, the backend's display loop and the listener are all up.
      platform::notify(
          platform::readyMessage(fmt::format("serving, backend {}, {} Hz", config.backend, config.refreshHz)));
      const int signal = stop.promise.wait(io.waitScope);
      platform::notify(platform::stoppingMessage());
      log::info("signal {}: shutting down ({} connections)", signal, listener.connectionCount());
      // Ask the clients to end their sessions (waitFrame answers say `stopping`) and give them a
      // bounded time to leave on their own before their connections are closed.
      ctx.stopping = true;
      stateChanges.changed();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(shutdownGraceMs.load());
      while (listener.connectionCount() > 0 && std::chrono::steady_clock::now() < deadline) {
        io.provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(io.waitScope);
      }
      if (listener.connectionCount() > 0) {
        log::info("closing {} connections whose clients did not leave within {} ms", listener.connectionCount(),
                  shutdownGraceMs.load());
      }
      // A let-go's copies still gathered (the loop left while its kj::evalLast was queued) go
      // now, while their sessions and the context they settle into are all still there.
      letGoCopies.submit();
    }
    // Connections (and with them every session) are gone: their GPU teardown runs on the
    // frame worker, which needs the context and a running backend until it is drained.
    worker.drain();
    signalsIo.stop();
    signalThread.join();
    retired.onKept(nullptr);  // nothing retires any more (the worker is drained); the timer goes next
    if (size_t left = retired.drain(ctx.gpuTimeout); left > 0) {
      log::warn("{} destroyed swapchains still had copies in flight after {} ms", left, ctx.gpuTimeout.count());
    }
    backend->stop();
  }
  if (!socketActivated) ::unlink(socketPath.value().c_str());  // an activated socket is systemd's
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Options options;
  xrc::DaemonConfig& cli = options.cli;
  CLI::App app{"xr-compositord: out-of-process XR compositor daemon"};
  // Option name -> config key, to know which ones the command line set.
  std::vector<std::pair<CLI::Option*, const char*>> keyed = {
      {app.add_option("--backend", cli.backend,
                      "Display backend: headless, window (headless with --mirror window) or openxr")
           ->capture_default_str(),
       "backend"},
      {app.add_option("--socket", cli.socket,
                      "Socket path (default $XR_COMPOSITOR_SOCKET, else $XDG_RUNTIME_DIR/xr-compositor/socket)"),
       "socket"},
      {app.add_option("--refresh-hz", cli.refreshHz, "Display refresh rate")->capture_default_str(), "refresh_hz"},
      {app.add_option("--shutdown-grace-ms", cli.shutdownGraceMs,
                      "On SIGTERM/SIGINT, how long clients may take to end their sessions")
           ->capture_default_str(),
       "shutdown_grace_ms"},
      {app.add_option("--log-level", cli.logLevel, "trace, debug, info, warn or error")->capture_default_str(),
       "log_level"},
      {app.add_option("--view-size", cli.viewSize, "Headless per-view recommended size WxH")->capture_default_str(),
       "view_size"},
      {app.add_option("--sync-mode", cli.syncMode, "auto, host, binary or timeline")->capture_default_str(),
       "sync_mode"},
      {app.add_option("--device-uuid", cli.deviceUuid, "Vulkan deviceUUID to use (default: first suitable)"),
       "device_uuid"},
      {app.add_option("--mirror", cli.mirror,
                      "Also show the composition (headless: the display; openxr: what is sent to the runtime) in a "
                      "desktop window, Wayland or X11 (window), or not (none)")
           ->capture_default_str(),
       "mirror"},
      {app.add_option("--head-motion", cli.headMotion, "Headless simulated head: still or sway")->capture_default_str(),
       "head_motion"},
      {app.add_option("--compose", cli.compose,
                      "Headless display: compose when read (on-read: snapshots, tests) or at every display frame "
                      "(every-frame); a window mirror sees every frame either way")
           ->capture_default_str(),
       "compose"},
      {app.add_option("--environment-blend-modes", cli.environmentBlendModes,
                      "Headless display's environment blend modes, preferred first: opaque, additive, alpha_blend")
           ->capture_default_str(),
       "environment_blend_modes"},
      {app.add_option("--copy-batch-us", cli.copyBatchUs,
                      "Timeline mode: hold copies whose rendering is done up to this long, to submit them "
                      "together (many clients on one GPU); 0: each at once")
           ->capture_default_str(),
       "copy_batch_us"},
      {app.add_option("--copy-batch-before-latch-us", cli.copyBatchBeforeLatchUs,
                      "Timeline mode: hold copies whose rendering is done until this long before the "
                      "display's next latch, to submit them together; one ready nearer the latch goes at "
                      "once; 0: each at once. --copy-batch-us replaces it")
           ->capture_default_str(),
       "copy_batch_before_latch_us"},
      {app.add_option("--copy-batch-before-latch-max-us", cli.copyBatchBeforeLatchMaxUs,
                      "Timeline mode: the longest the let-go's lead before the latch grows to after held frames "
                      "missed their latch (it shrinks back to --copy-batch-before-latch-us while they make it); "
                      "not above that: fixed")
           ->capture_default_str(),
       "copy_batch_before_latch_max_us"},
      {app.add_option("--copy-batch-copies-per-submission", cli.copyBatchCopiesPerSubmission,
                      "Timeline mode: gather the copies let go together, of every client, into queue submissions "
                      "of this many copies (their frames are committed once submitted); 0: one per client frame")
           ->capture_default_str(),
       "copy_batch_copies_per_submission"},
      {app.add_option("--queue-priority", cli.queuePriority,
                      "Highest GPU queue priority to ask for (low, medium, high, realtime); lower ones are "
                      "tried when the driver refuses")
           ->capture_default_str(),
       "queue_priority"},
      {app.add_option(
              "--nice", cli.nice,
              "CPU nice value of the daemon's threads (-20..19), e.g. below its clients' on a machine with more "
              "busy processes than cores; where refused, the lowest RLIMIT_NICE allows")
           ->capture_default_str(),
       "nice"},
      {app.add_option_function<std::string>(
              "--rpc-cpu",
              [&cli](const std::string& text) {
                auto parsed = xrc::parseRpcCpu(text);
                if (!parsed) throw CLI::ValidationError("--rpc-cpu " + parsed.error().message);
                cli.rpcCpu = parsed.value();
              },
              "Where the RPC thread (the one that answers the clients) runs: auto keeps it on the idlest CPU and "
              "moves it off one that keeps it waiting; any leaves it to the scheduler; a CPU number keeps it "
              "there whatever else runs on it")
           ->default_str("auto"),
       "rpc_cpu"},
      {app.add_option("--host-copies", cli.hostCopies,
                      "Host sync mode on Mesa's llvmpipe (lavapipe) with VK_EXT_host_image_copy: auto copies "
                      "released images on the daemon's thread instead of the copy queue; off never does")
           ->capture_default_str(),
       "host_copies"},
      {app.add_option("--host-copy-max-kib", cli.hostCopyMaxKib,
                      "With --host-copies auto: copy on the daemon's thread only images (all layers and mips) up to "
                      "this size; larger ones go to the copy queue (0: none)")
           ->capture_default_str(),
       "host_copy_max_kib"},
      {app.add_flag("--openxr-overlay", cli.openxrOverlay,
                    "openxr backend: run the daemon's session as an overlay over the runtime's primary application "
                    "(XR_EXTX_overlay)"),
       "openxr_overlay"},
      {app.add_flag("--reprojection,!--no-reprojection", cli.reprojection,
                    "headless/window: rotate a projection view shown at another head orientation than it was "
                    "rendered for to the display's (default on)"),
       "reprojection"},
  };
  for (const xrc::LimitKey& limit : xrc::limitKeys()) {
    keyed.emplace_back(
        app.add_option("--" + xrc::limitOption(limit), cli.limits.*limit.member, limit.help)->capture_default_str(),
        limit.key);
  }
  app.add_option("--config", options.configFile,
                 "Configuration file instead of /etc/xr-compositor/config.toml and the user's "
                 "$XDG_CONFIG_HOME/xr-compositor/config.toml");
  app.add_flag("--test-hooks", options.testHooks, "Enable test hooks (SIGUSR2 stalls/resumes the display loop)");
  app.set_version_flag("--version", XRC_VERSION);
  CLI11_PARSE(app, argc, argv);
  for (const auto& [option, key] : keyed) {
    if (option->count() > 0) options.cliGiven.insert(key);
  }
  return run(options);
}
