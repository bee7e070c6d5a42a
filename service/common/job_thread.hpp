// A thread that runs posted jobs one at a time, in the order they were posted (the compositor's
// frame worker; the openxr backend's head locator).
#pragma once

#include <kj/function.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>

#include "xrc/thread_annotations.hpp"

namespace xrc {

class JobThread {
 public:
  // `threadName` (at most 15 characters) names the thread for ps and debuggers.
  explicit JobThread(const char* threadName);
  ~JobThread();  // runs the jobs already queued, then joins
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  void post(kj::Function<void()> job) XRC_EXCLUDES(mutex_);
  // Runs the jobs already queued, then stops the thread; later posts are dropped. Idempotent.
  void drain() XRC_EXCLUDES(mutex_);
  // How long the job now running has been running (0 when idle), for the health monitor.
  int64_t busyForNs(int64_t nowNs) const {
    const int64_t since = busySinceNs_.load(std::memory_order_relaxed);
    return since == 0 ? 0 : nowNs - since;
  }

 private:
  void run(const char* threadName);

  Mutex mutex_;
  std::condition_variable_any wake_;
  std::deque<kj::Function<void()>> jobs_ XRC_GUARDED_BY(mutex_);
  bool stopping_ XRC_GUARDED_BY(mutex_) = false;
  std::atomic<int64_t> busySinceNs_{0};  // CLOCK_MONOTONIC start of the running job, 0: idle
  std::thread thread_;
};

}  // namespace xrc
