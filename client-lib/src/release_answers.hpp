// What client-lib knows of the daemon's answers to each image's releases.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <vector>

#include "runnable_wait.hpp"
#include "xrc/result.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc::client {

// The daemon's answers to each image's releases. An image may be acquired again only after the
// answer to its previous release (which proves the copy out of it was submitted or done; with a
// daemon of 1.13 in timeline mode, the settlement of a release its endFrame carried, which comes
// with a later frame timing).
class ReleaseAnswers {
 public:
  explicit ReleaseAnswers(uint32_t images) : sent_(images, 0), answered_(images, 0), errors_(images) {}
  void sent(uint32_t index) {
    Lock lock(mutex_);
    sent_[index]++;
  }
  void answered(uint32_t index, Status status) {
    {
      Lock lock(mutex_);
      answered_[index]++;
      if (!status && !errors_[index]) errors_[index] = status.error();
    }
    changed_.notify_all();
  }
  bool isAnswered(uint32_t index) {
    Lock lock(mutex_);
    return answered_[index] >= sent_[index];
  }
  // Every release of `index` answered, and none with an error that waitAnswered() would return.
  bool answeredWithoutError(uint32_t index) {
    Lock lock(mutex_);
    return answered_[index] >= sent_[index] && !errors_[index];
  }
  // The connection is gone: every answer still awaited is `error` (wakes a waiting acquire).
  void abandonAll(const Error& error) {
    {
      Lock lock(mutex_);
      for (size_t i = 0; i < sent_.size(); ++i) {
        if (answered_[i] >= sent_[i]) continue;
        answered_[i] = sent_[i];
        if (!errors_[i]) errors_[i] = error;
      }
    }
    changed_.notify_all();
  }
  // Local mode: no answer will come.
  void forget(uint32_t index) {
    Lock lock(mutex_);
    answered_[index] = sent_[index];
  }
  // Waits (bounded) until every release of `index` is answered; `hadToWait` says whether the
  // answer was not there yet (a blocking round trip).
  Status waitAnswered(uint32_t index, std::chrono::milliseconds timeout, bool& hadToWait) {
    Lock lock(mutex_);
    hadToWait = answered_[index] < sent_[index];
    if (!waitRunnable(changed_, lock.native(), timeout, [&] { return answered_[index] >= sent_[index]; })) {
      return makeError(ErrorCode::timeout, "acquire: no answer to image {}'s release within {} ms", index,
                       timeout.count());
    }
    if (errors_[index]) {
      Error e = std::move(*errors_[index]);
      errors_[index].reset();
      return e;
    }
    return {};
  }

 private:
  Mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint64_t> sent_ XRC_GUARDED_BY(mutex_);
  std::vector<uint64_t> answered_ XRC_GUARDED_BY(mutex_);
  std::vector<std::optional<Error>> errors_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc::client
