#include "job_thread.hpp"

#include <pthread.h>

#include "xrc/monotonic_clock.hpp"

namespace xrc {

JobThread::JobThread(const char* threadName) : thread_([this, threadName] { run(threadName); }) {}

JobThread::~JobThread() { drain(); }

void JobThread::drain() {
  {
    Lock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JobThread::post(kj::Function<void()> job) {
  {
    Lock lock(mutex_);
    if (stopping_) return;
    jobs_.push_back(kj::mv(job));
  }
  wake_.notify_one();
}

void JobThread::run(const char* threadName) {
  pthread_setname_np(pthread_self(), threadName);
  for (;;) {
    kj::Function<void()> job;
    {
      Lock lock(mutex_);
      wake_.wait(lock.native(), [&]() XRC_REQUIRES(mutex_) { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = kj::mv(jobs_.front());
      jobs_.pop_front();
    }
    busySinceNs_.store(monotonicNowNs(), std::memory_order_relaxed);
    job();
    busySinceNs_.store(0, std::memory_order_relaxed);
  }
}

}  // namespace xrc
