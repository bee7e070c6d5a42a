// Client-lib's bounded waits count time the process could run: an application stopped longer
// than a wait's bound still gets the answer that arrives right after it is resumed.
#include "runnable_wait.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace xrc::client {
namespace {

using namespace std::chrono_literals;

TEST(RunnableBudget, ChargesAStretchLongerThanTwoSlicesAsTwo) {
  RunnableBudget budget(1s);
  EXPECT_EQ(budget.slice(), RunnableBudget::kSlice);
  budget.charge(RunnableBudget::Clock::now() - 10s);
  EXPECT_FALSE(budget.exhausted());
  EXPECT_EQ(budget.slice(), RunnableBudget::kSlice);
  for (int i = 0; i < 4; ++i) budget.charge(RunnableBudget::Clock::now() - 10s);
  EXPECT_TRUE(budget.exhausted());
  EXPECT_EQ(budget.slice(), RunnableBudget::Clock::duration::zero());
}

TEST(RunnableWait, EndsAtItsBoundWhenNothingArrives) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(waitRunnable(cv, lock, 300ms, [] { return false; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}

// A child process waits (2-s bound) for a byte the parent writes 50 ms after resuming it from a
// 3-s SIGSTOP; a plain wait_for wakes up timed out then.
TEST(RunnableWait, AnAnswerRightAfterALongStopIsNotATimeout) {
  int toChild[2], fromChild[2];
  ASSERT_EQ(::pipe(toChild), 0);
  ASSERT_EQ(::pipe(fromChild), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(toChild[1]);
    ::close(fromChild[0]);
    std::mutex mutex;
    std::condition_variable cv;
    bool arrived = false;
    std::thread reader([&] {
      char byte = 0;
      const bool got = ::read(toChild[0], &byte, 1) == 1;
      std::lock_guard guard(mutex);
      arrived = got;
      cv.notify_all();
    });
    bool ready = false;
    {
      std::unique_lock lock(mutex);
      (void)!::write(fromChild[1], "w", 1);  // waiting from now on (the lock is held until it waits)
      ready = waitRunnable(cv, lock, 2s, [&] { return arrived; });
    }
    reader.join();
    ::_exit(ready ? 0 : 1);
  }
  ::close(toChild[0]);
  ::close(fromChild[1]);
  // Whatever happens below, the child does not outlive the test stopped.
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (reaped) return;
      ::kill(pid, SIGKILL);
      ::kill(pid, SIGCONT);
      ::waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  char byte = 0;
  ASSERT_EQ(::read(fromChild[0], &byte, 1), 1);
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  std::this_thread::sleep_for(3s);
  ASSERT_EQ(::kill(child, SIGCONT), 0);
  std::this_thread::sleep_for(50ms);
  ASSERT_EQ(::write(toChild[1], "x", 1), 1);
  ::close(toChild[1]);
  ::close(fromChild[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  reaper.reaped = true;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the wait timed out although the answer came 50 ms after the stop";
}

}  // namespace
}  // namespace xrc::client
