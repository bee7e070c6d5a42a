// Optional per-call timing of the runtime face, for benchmarks: with XRC_OPENXR_STATS=<file>
// set, a session records how long the frame-path calls took, the CPU time they cost the calling
// (application) thread, and how many blocking round trips to the daemon each frame cost, and
// writes a JSON summary to <file> when it is destroyed. The CPU time is what this runtime costs
// the app's own threads (client-lib's I/O thread is apart): the part a comparison with another
// runtime's client library cannot read from the app's per-thread CPU.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xrc/thread_annotations.hpp"

namespace xrc::openxr {

enum class Call {
  waitFrame,
  beginFrame,
  endFrame,
  acquire,
  wait,
  release,
  locateViews,
  locateSpace,
  syncActions,
  count
};

class CallStats {
 public:
  // Null unless XRC_OPENXR_STATS names a file.
  static std::unique_ptr<CallStats> fromEnvironment();
  explicit CallStats(std::string path) : path_(std::move(path)) {}
  ~CallStats();  // writes the summary

  // `cpu`: the calling thread's CPU time during the call.
  void record(Call call, std::chrono::nanoseconds duration, std::chrono::nanoseconds cpu = {});
  // At each xrWaitFrame: the connection's blocking round trips so far.
  void frameBoundary(uint64_t blockingRoundTrips);

  // The JSON summary (also used by the destructor).
  std::string summary() const;

 private:
  static constexpr size_t kMaxSamples = 1 << 20;
  std::string path_;
  mutable Mutex mutex_;
  std::vector<std::vector<int64_t>> samples_ XRC_GUARDED_BY(mutex_) =
      std::vector<std::vector<int64_t>>(size_t(Call::count));
  std::vector<int64_t> cpuNs_ XRC_GUARDED_BY(mutex_) = std::vector<int64_t>(size_t(Call::count), 0);
  std::vector<uint64_t> roundTripsPerFrame_ XRC_GUARDED_BY(mutex_);
  uint64_t lastRoundTrips_ XRC_GUARDED_BY(mutex_) = 0;
  bool sawFrame_ XRC_GUARDED_BY(mutex_) = false;
};

// Times one call into `stats` (which may be null: then it costs a branch).
class CallTimer {
 public:
  CallTimer(CallStats* stats, Call call)
      : stats_(stats),
        call_(call),
        start_(stats ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}),
        cpuStart_(stats ? threadCpu() : std::chrono::nanoseconds{}) {}
  ~CallTimer() {
    if (stats_ != nullptr) stats_->record(call_, std::chrono::steady_clock::now() - start_, threadCpu() - cpuStart_);
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  CallStats* stats_;
  Call call_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::nanoseconds cpuStart_;

  static std::chrono::nanoseconds threadCpu() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
};

}  // namespace xrc::openxr
