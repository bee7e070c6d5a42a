// Watches the frame loop and tells systemd about it: WATCHDOG=1 only while display frames keep
// coming and the frame worker is not stuck in one job (so a hung loop stops feeding the
// watchdog, and systemd restarts the daemon), and a STATUS= line with clients and frame rate.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "../backends/backend.hpp"
#include "client_registry.hpp"
#include "frame_worker.hpp"

namespace xrc {

// The health rule, apart from clocks and threads (unit-tested).
class FrameLoopHealth {
 public:
  // One check: healthy when the display loop went round since the last check and the frame
  // worker's current job (if any) has run for less than `stuckAfterNs`.
  bool update(uint64_t loopIterations, int64_t workerBusyNs, int64_t stuckAfterNs);

 private:
  std::optional<uint64_t> lastIterations_;
};

std::string statusLine(size_t clients, double displayFps);

class HealthMonitor {
 public:
  // `watchdog`: systemd's WatchdogSec (from WATCHDOG_USEC), if the unit has one.
  HealthMonitor(boost::asio::io_context& io, Backend& backend, FrameWorker& worker, ClientRegistry& clients,
                std::optional<std::chrono::microseconds> watchdog);
  void start();  // checks run on `io`'s thread from now on
  void stop();
  // How often it checks: twice per watchdog interval (systemd's advice), at most once a second.
  static std::chrono::milliseconds checkPeriod(std::optional<std::chrono::microseconds> watchdog);

 private:
  void schedule();
  void check();

  Backend& backend_;
  FrameWorker& worker_;
  ClientRegistry& clients_;
  std::optional<std::chrono::microseconds> watchdog_;
  std::chrono::milliseconds period_;
  boost::asio::steady_timer timer_;
  FrameLoopHealth health_;
  bool healthy_ = true;
  uint64_t lastDisplayFrames_ = 0;
  std::chrono::steady_clock::time_point lastCheck_;
  std::string lastStatus_;
};

}  // namespace xrc
