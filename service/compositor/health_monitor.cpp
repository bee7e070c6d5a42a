#include "health_monitor.hpp"

#include <fmt/format.h>

#include "../log.hpp"
#include "../platform/systemd.hpp"

namespace xrc {

bool FrameLoopHealth::update(uint64_t loopIterations, int64_t workerBusyNs, int64_t stuckAfterNs) {
  const bool advanced = !lastIterations_ || loopIterations > *lastIterations_;
  lastIterations_ = loopIterations;
  return advanced && workerBusyNs < stuckAfterNs;
}

std::string statusLine(size_t clients, double displayFps) {
  return fmt::format("serving {} client{}, display {:.1f} fps", clients, clients == 1 ? "" : "s", displayFps);
}

HealthMonitor::HealthMonitor(boost::asio::io_context& io, Backend& backend, FrameWorker& worker,
                             ClientRegistry& clients, std::optional<std::chrono::microseconds> watchdog)
    : backend_(backend),
      worker_(worker),
      clients_(clients),
      watchdog_(watchdog),
      period_(checkPeriod(watchdog)),
      timer_(io) {}

std::chrono::milliseconds HealthMonitor::checkPeriod(std::optional<std::chrono::microseconds> watchdog) {
  const std::chrono::milliseconds second(1000);
  if (!watchdog) return second;
  return std::max(std::chrono::milliseconds(1),
                  std::min(second, std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog / 2)));
}

void HealthMonitor::start() {
  lastCheck_ = std::chrono::steady_clock::now();
  lastDisplayFrames_ = backend_.displayFrames();
  schedule();
}

void HealthMonitor::stop() { timer_.cancel(); }

void HealthMonitor::schedule() {
  timer_.expires_after(period_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    check();
    schedule();
  });
}

void HealthMonitor::check() {
  const auto now = std::chrono::steady_clock::now();
  const uint64_t frames = backend_.loopIterations();
  const uint64_t displayFrames = backend_.displayFrames();
  // A job may legitimately take up to the GPU timeout (2 s); past the watchdog interval (or 5 s
  // without one) the worker counts as stuck.
  const int64_t stuckAfterNs = watchdog_ ? int64_t(watchdog_->count()) * 1000 : 5'000'000'000;
  const bool healthy = health_.update(frames, worker_.busyForNs(monotonicNowNs()), stuckAfterNs);
  if (healthy && watchdog_) platform::notify(platform::watchdogMessage());
  if (healthy != healthy_) {
    if (healthy) {
      log::info("frame loop is running again");
    } else {
      log::warn("frame loop stalled (display loop iterations stopped at {}; frame worker busy {} ms){}", frames,
                worker_.busyForNs(monotonicNowNs()) / 1000000, watchdog_ ? ": no longer feeding the watchdog" : "");
    }
    healthy_ = healthy;
  }
  const double seconds = std::chrono::duration<double>(now - lastCheck_).count();
  // Display frames, not loop iterations: a display with nothing to show sleeps, and says 0 fps.
  const double fps = seconds > 0 ? double(displayFrames - lastDisplayFrames_) / seconds : 0;
  std::string status = statusLine(clients_.snapshot().size(), fps);
  if (!healthy) status += ", frame loop stalled";
  if (status != lastStatus_) {
    platform::notify(platform::statusMessage(status));
    lastStatus_ = status;
  }
  lastCheck_ = now;
  lastDisplayFrames_ = displayFrames;
}

}  // namespace xrc
