// A device-local timeline semaphore with the last value handed out. Orders the daemon's own
// queues against each other (copies -> composition -> next copy into the same runtime image).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "xrc/vk_util.hpp"

namespace xrc::gpu {

class Timeline {
 public:
  static Result<std::unique_ptr<Timeline>> create(VkDevice device);
  Timeline(VkDevice device, vk::Semaphore semaphore) : device_(device), semaphore_(std::move(semaphore)) {}
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Waits (bounded) until the last value handed out is reached: see timeline.cpp.
  ~Timeline();
  VkSemaphore get() const { return semaphore_.get(); }
  // Reserves the next value; the caller signals it in its submission.
  uint64_t next() { return ++last_; }
  uint64_t last() const { return last_.load(); }
  // Signals `value` from the host (a copy made on the host). The caller holds the copy queue's
  // submit lock and has seen every value handed out before reached: a timeline only rises.
  Status signalOnHost(uint64_t value);
  // Host wait with a bound, e.g. before a readback.
  Status wait(uint64_t value, uint64_t timeoutNs) const;
  // Whether `value` is reached now; never waits (false if the value cannot be read). A value at
  // or below one seen reached before is answered without asking the driver (on some a query of
  // the counter is a system call).
  bool reached(uint64_t value) const;

 private:
  VkDevice device_;
  vk::Semaphore semaphore_;
  std::atomic<uint64_t> last_{0};
  mutable std::atomic<uint64_t> seenReached_{0};  // the highest counter value read (timelines only rise)
};

}  // namespace xrc::gpu
