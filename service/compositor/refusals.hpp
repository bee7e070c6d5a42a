// What the daemon refused or cut off to protect itself and its clients, per limit (the config key
// that was hit: "max_connections", "max_message_kib", ...). Counted for status (`refusals`) and
// logged as warnings at most once per limit every few seconds, with how many were not logged,
// so a flood of bad clients cannot flood the log.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "xrc/thread_annotations.hpp"

namespace xrc {

class Refusals {
 public:
  static constexpr int64_t kLogIntervalNs = 10'000'000'000;

  struct Count {
    std::string limit;
    uint64_t count = 0;
    int64_t lastNs = 0;
  };

  // One refusal under `limit`; `what` says what happened (already escaped where it holds client
  // text). Any thread.
  void record(std::string_view limit, std::string_view what) XRC_EXCLUDES(mutex_);
  // Like record, at `nowNs` (tests); returns whether it was logged.
  bool recordAt(std::string_view limit, std::string_view what, int64_t nowNs) XRC_EXCLUDES(mutex_);
  std::vector<Count> snapshot() const XRC_EXCLUDES(mutex_);

 private:
  struct Entry {
    uint64_t count = 0;
    int64_t lastNs = 0;
    int64_t loggedNs = 0;
    uint64_t unlogged = 0;  // since the last warning
  };
  mutable Mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc
