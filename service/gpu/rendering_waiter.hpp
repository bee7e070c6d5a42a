// Waits on the CPU, on a thread of its own, until clients' timeline semaphores reach the values
// their releases name (timeline sync mode). The daemon submits a copy only once the client's
// rendering is done, so no queue of the daemon ever waits on a client's semaphore: a client whose
// GPU work never finishes delays its own frames, nobody else's (docs/SYNC.md). Every wait has a
// deadline.
//
// A few pending waits are one blocking vkWaitSemaphores; past kMaxBlockingEntries the thread
// polls the timelines every kPollInterval instead. The NVIDIA driver's multi-semaphore wait costs
// CPU that grows with the semaphores in it: at 64 clients on an H100 the thread spent 179 µs per
// client frame blocking, 18 polling every 500 µs (docs/BENCHMARKS.md).
//
// A rendering whose copy a batch would hold until its let-go anyway (copy batching before the
// latch) is not answered when found done but held until that let-go, where the event loop takes
// it with the batch (answerHeld): one wake of the event loop per batch instead of one per poll
// that finds a rendering done. Should no batch be let go then, the thread answers it itself at
// that time, which is when the copy would have gone.
//
// While every pending wait is one whose rendering would only be held if found done, and the
// let-go it would be held for is further off than the look-ahead (SleepBeforeLetGo), the thread
// does not look at all: it sleeps until the look-ahead before that let-go, at most 2 ms at a time
// so that a display clock that moves the let-go earlier is followed, cut short by a wait that must
// be answered when done, a deadline, or the destructor. A display period's passes over the
// timelines shrink to those near its let-go and latch (docs/BENCHMARKS.md).
#pragma once

#include <kj/function.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "xrc/result.hpp"
#include "xrc/thread_annotations.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::gpu {

// The rendering waiter's sleep before a let-go (see RenderingWaiter): how long before the let-go
// renderings that would be held for it are looked at again, two of its poll intervals so that a
// polling thread's first read comes a poll interval before the let-go; and the longest sleep at a
// time, so that a display clock that moves the let-go earlier is followed. The defaults are the
// daemon's; a test that watches renderings being found and held takes a longer look-ahead.
struct SleepBeforeLetGo {
  std::chrono::nanoseconds lookAhead = std::chrono::microseconds(1000);
  std::chrono::nanoseconds longest = std::chrono::microseconds(2000);
};

class RenderingWaiter {
 public:
  struct Answer {
    bool reached = false;  // false at the deadline, or when the waiter stops first
    bool atLetGo = false;  // held, and answered at its let-go (by answerHeld or by the thread)
    int64_t latchNs = 0;   // held: the latch its let-go comes before (CLOCK_MONOTONIC)
  };
  // Called on the waiter thread, or by answerHeld's caller.
  using Done = kj::Function<void(Answer)>;
  // Where a copy whose rendering is done at some time would be let go: `atNs` 0 when at once;
  // `latchNs` the display's next latch then (0 without batching before the latch).
  struct LetGo {
    int64_t atNs = 0;
    int64_t latchNs = 0;
  };
  // Any thread: the let-go of a copy ready at `readyNs` (CLOCK_MONOTONIC;
  // CopyBatch::letGoForCopyReadyAt).
  using LetGoFor = std::function<LetGo(int64_t readyNs)>;
  enum class WhenReached {
    answer,        // at once
    holdForLetGo,  // at the let-go of the batch its copy would join (LetGoFor), or at once
  };

  static Result<std::unique_ptr<RenderingWaiter>> create(VkDevice device, LetGoFor letGoFor = nullptr,
                                                         SleepBeforeLetGo sleep = {});
  RenderingWaiter(VkDevice device, vk::Semaphore wake, LetGoFor letGoFor = nullptr, SleepBeforeLetGo sleep = {});
  ~RenderingWaiter();  // answers what is still pending with false, then joins
  RenderingWaiter(const RenderingWaiter&) = delete;
  RenderingWaiter& operator=(const RenderingWaiter&) = delete;

  // `done` runs once `semaphore` reaches `value`, or at `deadlineNs` (CLOCK_MONOTONIC).
  // `keepAlive` owns the semaphore until then.
  void wait(VkSemaphore semaphore, uint64_t value, int64_t deadlineNs, std::shared_ptr<const void> keepAlive, Done done,
            WhenReached whenReached = WhenReached::answer) XRC_EXCLUDES(mutex_);
  // At a batch's let-go, on the thread that lets it go: answers every rendering held (reached,
  // at its let-go). Through cross-thread fulfillers, their copies go right after the batch's.
  void answerHeld() XRC_EXCLUDES(mutex_);
  // Renderings found done and held for a let-go now (status, tests).
  size_t held() const XRC_EXCLUDES(mutex_);
  // Any thread, without waiting: whether `semaphore` has reached `value` (false on an error,
  // which a wait() then reports).
  bool reached(VkSemaphore semaphore, uint64_t value) const;
  // Waits not answered yet (held ones included), for status.
  size_t pending() const XRC_EXCLUDES(mutex_);
  // Passes that read pending waits' timelines so far (tests, benchmarks).
  uint64_t passes() const { return passes_.load(std::memory_order_relaxed); }

  static constexpr size_t kMaxBlockingEntries = 4;
  static constexpr std::chrono::microseconds kPollInterval{500};

 private:
  struct Entry {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t value = 0;
    int64_t deadlineNs = 0;
    std::shared_ptr<const void> keepAlive;
    Done done;
    WhenReached whenReached = WhenReached::answer;
    bool reached = false;
    bool looked = false;  // its counter was read in the current pass (see sortOut)
    LetGo letGo;          // held: answered by the thread itself from letGo.atNs
  };
  void run();
  // While every pending wait would be held for a let-go further off than the look-ahead: sleeps until
  // then (see the class comment) and returns true; false, at once, when the thread should look.
  bool sleepWhileOnlyHeld() XRC_EXCLUDES(mutex_);
  // Whether every pending wait's rendering would only be held if found done (true with none).
  bool onlyHeldWaitsLocked() const XRC_REQUIRES(mutex_);
  // Something for the thread to do: a pending or held wait, or stopping.
  bool hasWorkLocked() const XRC_REQUIRES(mutex_) { return stopping_ || !entries_.empty() || !held_.empty(); }
  // What `done` is told of a reached, timed-out or held entry.
  static Answer answerOf(const Entry& e);
  // Moves the held entries whose let-go has come (all: `nowNs` 0) to `out`, reached.
  void takeHeld(int64_t nowNs, std::vector<Entry>& out) XRC_REQUIRES(mutex_);
  // A pass over the waits after the thread woke at `nowNs`, under the lock: the reached ones are
  // answered (to `out`) or held for `current`, the let-go of a copy ready now (read only when
  // `current` is given); held ones whose let-go the display clock moved earlier follow it.
  // `reachedNow[i]`: whether entries_[i]'s counter had reached its value, read outside the lock
  // just before; entries past those joined meanwhile and are looked at in the next pass.
  void sortOut(int64_t nowNs, const std::optional<LetGo>& current, const std::vector<bool>& reachedNow,
               std::vector<Entry>& out) XRC_REQUIRES(mutex_);

  VkDevice device_;
  const LetGoFor letGoFor_;
  const int64_t lookAheadNs_;
  const int64_t maxSleepNs_;
  // Signalled from the host by wait() to cut the thread's wait short: a new entry joins the set.
  vk::Semaphore wake_;
  mutable Mutex mutex_;
  std::condition_variable_any changed_;
  std::vector<Entry> entries_ XRC_GUARDED_BY(mutex_);
  std::vector<Entry> held_ XRC_GUARDED_BY(mutex_);  // reached, waiting for their let-go
  uint64_t wakeValue_ XRC_GUARDED_BY(mutex_) = 0;
  bool stopping_ XRC_GUARDED_BY(mutex_) = false;
  // The thread is in (or about to enter) vkWaitSemaphores with the wake timeline at
  // wakeValue_ + 1: only then does a new wait need the (driver-call) wake; otherwise (polling,
  // or busy answering) the thread takes the new entry when it next looks.
  bool blocked_ XRC_GUARDED_BY(mutex_) = false;
  // The thread sleeps in sleepWhileOnlyHeld(); a wait() that must be answered when done cuts it.
  bool sleepingWhileOnlyHeld_ XRC_GUARDED_BY(mutex_) = false;
  bool mustLook_ XRC_GUARDED_BY(mutex_) = false;
  std::atomic<uint64_t> passes_{0};
  std::thread thread_;
};

}  // namespace xrc::gpu
