#include "rendering_waiter.hpp"

#include <pthread.h>

#include <algorithm>

#include "../log.hpp"
#include "xrc/monotonic_clock.hpp"

namespace xrc::gpu {

namespace {
// The longest single wait: a bound, so that a driver that never wakes us cannot keep deadlines
// from being noticed.
constexpr int64_t kMaxWaitNs = 100'000'000;
}  // namespace

Result<std::unique_ptr<RenderingWaiter>> RenderingWaiter::create(VkDevice device, LetGoFor letGoFor,
                                                                 SleepBeforeLetGo sleep) {
  auto wake = vk::createSemaphore(device, VK_SEMAPHORE_TYPE_TIMELINE);
  if (!wake) return wake.error();
  return std::make_unique<RenderingWaiter>(device, std::move(wake).value(), std::move(letGoFor), sleep);
}

RenderingWaiter::RenderingWaiter(VkDevice device, vk::Semaphore wake, LetGoFor letGoFor, SleepBeforeLetGo sleep)
    : device_(device),
      letGoFor_(std::move(letGoFor)),
      lookAheadNs_(sleep.lookAhead.count()),
      maxSleepNs_(sleep.longest.count()),
      wake_(std::move(wake)),
      thread_([this] { run(); }) {}

RenderingWaiter::~RenderingWaiter() {
  {
    Lock lock(mutex_);
    stopping_ = true;
    (void)vk::signalTimeline(device_, wake_.get(), ++wakeValue_);
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RenderingWaiter::wait(VkSemaphore semaphore, uint64_t value, int64_t deadlineNs,
                           std::shared_ptr<const void> keepAlive, Done done, WhenReached whenReached) {
  {
    Lock lock(mutex_);
    if (!stopping_) {
      entries_.push_back(
          Entry{semaphore, value, deadlineNs, std::move(keepAlive), kj::mv(done), whenReached, false, false, LetGo{}});
      if (blocked_) {
        (void)vk::signalTimeline(device_, wake_.get(), ++wakeValue_);
        blocked_ = false;  // one wake is enough until the thread waits again
      } else if (entries_.size() == 1) {
        changed_.notify_one();  // it may sleep on the condition variable
      } else if (sleepingWhileOnlyHeld_ && whenReached == WhenReached::answer) {
        mustLook_ = true;  // this one is answered when done: no sleeping until the let-go
        changed_.notify_one();
      }
      return;
    }
  }
  done(Answer{});
}

bool RenderingWaiter::reached(VkSemaphore semaphore, uint64_t value) const {
  uint64_t current = 0;
  return vkGetSemaphoreCounterValue(device_, semaphore, &current) == VK_SUCCESS && current >= value;
}

void RenderingWaiter::answerHeld() {
  std::vector<Entry> due;
  {
    Lock lock(mutex_);
    if (held_.empty()) return;
    takeHeld(0, due);
  }
  for (Entry& e : due) e.done(answerOf(e));
}

RenderingWaiter::Answer RenderingWaiter::answerOf(const Entry& e) {
  // An entry was held exactly when it was given a let-go (one ahead of the time it was found).
  return Answer{e.reached, e.letGo.atNs != 0, e.letGo.latchNs};
}

size_t RenderingWaiter::held() const {
  Lock lock(mutex_);
  return held_.size();
}

void RenderingWaiter::takeHeld(int64_t nowNs, std::vector<Entry>& out) {
  for (size_t i = 0; i < held_.size();) {
    if (nowNs == 0 || held_[i].letGo.atNs <= nowNs) {
      out.push_back(std::move(held_[i]));
      out.back().reached = true;
      if (i + 1 != held_.size()) held_[i] = std::move(held_.back());
      held_.pop_back();
    } else {
      ++i;
    }
  }
}

void RenderingWaiter::sortOut(int64_t nowNs, const std::optional<LetGo>& current, const std::vector<bool>& reachedNow,
                              std::vector<Entry>& out) {
  // Marked before any entry moves: entries_ is in the order of the read until the loop swaps.
  for (size_t i = 0; i < entries_.size(); ++i) {
    entries_[i].looked = i < reachedNow.size();
    entries_[i].reached = entries_[i].looked && reachedNow[i];
  }
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    if (!e.looked) {
      ++i;
      continue;
    }
    if (e.reached && e.whenReached == WhenReached::holdForLetGo && current && current->atNs > nowNs) {
      e.letGo = *current;
      held_.push_back(std::move(e));
    } else if (e.reached || nowNs >= e.deadlineNs) {
      out.push_back(std::move(e));
    } else {
      ++i;
      continue;
    }
    if (i + 1 != entries_.size()) entries_[i] = std::move(entries_.back());
    entries_.pop_back();
  }
  if (current) {
    // The display clock moved the latch earlier (a runtime's xrWaitFrame came early): a rendering
    // held for the old let-go goes at the new one, or now within its lead, as a copy ready now would.
    const LetGo earliest = current->atNs > nowNs ? *current : LetGo{nowNs, current->latchNs};
    for (Entry& e : held_) {
      if (e.letGo.atNs > earliest.atNs) e.letGo = earliest;
    }
  }
  takeHeld(nowNs, out);
}

size_t RenderingWaiter::pending() const {
  Lock lock(mutex_);
  return entries_.size() + held_.size();
}

bool RenderingWaiter::onlyHeldWaitsLocked() const {
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const Entry& e) { return e.whenReached == WhenReached::holdForLetGo; });
}

bool RenderingWaiter::sleepWhileOnlyHeld() {
  {
    Lock lock(mutex_);
    if (stopping_ || entries_.empty() || !onlyHeldWaitsLocked()) return false;
  }
  // Read outside the lock: the display clock has a lock of its own.
  const int64_t now = monotonicNowNs();
  const LetGo letGo = letGoFor_(now);
  const int64_t lookNs = letGo.atNs - lookAheadNs_;
  if (letGo.atNs == 0 || lookNs <= now) return false;  // at once, or near enough to look
  Lock lock(mutex_);
  // Asked again: a wait to be answered when done may have joined since the look above, before the
  // flag below let wait() cut this sleep short; then no sleep.
  if (stopping_ || !onlyHeldWaitsLocked()) return false;
  int64_t untilNs = std::min(lookNs, now + maxSleepNs_);
  for (const Entry& e : entries_) untilNs = std::min(untilNs, e.deadlineNs);
  for (const Entry& e : held_) untilNs = std::min(untilNs, e.letGo.atNs);
  if (untilNs <= now) return false;
  sleepingWhileOnlyHeld_ = true;
  // To an absolute time (CLOCK_MONOTONIC, steady_clock's): a thread delayed since `now` was read
  // must not sleep past the look-ahead by that delay.
  const std::chrono::steady_clock::time_point until{std::chrono::nanoseconds(untilNs)};
  changed_.wait_until(lock.native(), until, [&]() XRC_REQUIRES(mutex_) { return stopping_ || mustLook_; });
  sleepingWhileOnlyHeld_ = false;
  mustLook_ = false;
  return true;  // the loop asks again: the let-go may be near now, or a wait may need a look
}

void RenderingWaiter::run() {
  pthread_setname_np(pthread_self(), "xrc-render-wait");
  std::vector<VkSemaphore> semaphores;
  std::vector<uint64_t> values;
  std::vector<std::pair<VkSemaphore, uint64_t>> toRead;
  std::vector<bool> reachedNow;
  std::vector<Entry> finished;
  for (;;) {
    {
      Lock lock(mutex_);
      // Nothing to wait for: sleep until wait() or the destructor (not a wait on a client).
      changed_.wait(lock.native(), [&]() XRC_REQUIRES(mutex_) { return hasWorkLocked(); });
    }
    if (letGoFor_ && sleepWhileOnlyHeld()) continue;
    int64_t timeoutNs = kMaxWaitNs;
    bool mayHold = false;
    {
      Lock lock(mutex_);
      // Answered meanwhile by answerHeld(): nothing left to wait for again.
      changed_.wait(lock.native(), [&]() XRC_REQUIRES(mutex_) { return hasWorkLocked(); });
      if (stopping_) {
        finished = std::move(entries_);
        entries_.clear();
        for (Entry& e : held_) finished.push_back(std::move(e));
        held_.clear();
        break;
      }
      const int64_t now = monotonicNowNs();
      for (const Entry& e : entries_) {
        timeoutNs = std::min(timeoutNs, std::max<int64_t>(0, e.deadlineNs - now));
        mayHold = mayHold || e.whenReached == WhenReached::holdForLetGo;
      }
      for (const Entry& e : held_) timeoutNs = std::min(timeoutNs, std::max<int64_t>(0, e.letGo.atNs - now));
      mayHold = letGoFor_ && (mayHold || !held_.empty());
      semaphores.clear();
      if (entries_.empty()) {
        // Only held renderings: sleep to the first let-go, cut short by a new wait() or the destructor.
        changed_.wait_for(lock.native(), std::chrono::nanoseconds(timeoutNs),
                          [&]() XRC_REQUIRES(mutex_) { return stopping_ || !entries_.empty(); });
      } else if (entries_.size() > kMaxBlockingEntries) {
        // Poll: sleep a poll interval (or to the first deadline), cut short only by the destructor.
        const auto sleep = std::min<std::chrono::nanoseconds>(kPollInterval, std::chrono::nanoseconds(timeoutNs));
        changed_.wait_for(lock.native(), sleep, [&]() XRC_REQUIRES(mutex_) { return stopping_; });
      } else {
        semaphores.assign(1, wake_.get());
        values.assign(1, wakeValue_ + 1);  // what the next wait() signals
        blocked_ = true;
        for (const Entry& e : entries_) {
          semaphores.push_back(e.semaphore);
          values.push_back(e.value);
        }
      }
    }
    if (!semaphores.empty()) {
      VkSemaphoreWaitInfo info{};
      info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
      info.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
      info.semaphoreCount = uint32_t(semaphores.size());
      info.pSemaphores = semaphores.data();
      info.pValues = values.data();
      const VkResult r = vkWaitSemaphores(device_, &info, uint64_t(timeoutNs));
      if (r != VK_SUCCESS && r != VK_TIMEOUT) {
        // A lost device answers every pending wait as not reached, at its deadline.
        log::error("rendering waiter: vkWaitSemaphores: {}", vk::resultName(r));
      }
    }
    const int64_t now = monotonicNowNs();
    // Read outside the lock (the display clock has a lock of its own), and only while a
    // rendering may be held.
    std::optional<LetGo> current;
    if (mayHold) current = letGoFor_(now);
    {
      Lock lock(mutex_);
      blocked_ = false;
      toRead.clear();
      for (const Entry& e : entries_) toRead.emplace_back(e.semaphore, e.value);
    }
    // The counters are read outside the lock (a driver call each), so that wait() and
    // answerHeld() on the event loop's thread never wait for this pass. Entries only join at the
    // end of entries_ meanwhile, and only this thread removes them (their semaphores stay alive).
    reachedNow.clear();
    for (const auto& [semaphore, value] : toRead) reachedNow.push_back(reached(semaphore, value));
    if (!toRead.empty()) passes_.fetch_add(1, std::memory_order_relaxed);
    {
      Lock lock(mutex_);
      sortOut(now, current, reachedNow, finished);
    }
    // Answered outside the lock: `done` may call wait() again.
    for (Entry& e : finished) e.done(answerOf(e));
    finished.clear();
  }
  for (Entry& e : finished) e.done(Answer{});
}

}  // namespace xrc::gpu
