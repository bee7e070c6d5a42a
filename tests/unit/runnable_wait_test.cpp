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

// In a child process: waits (1 s bound) for a byte the parent writes 50 ms after resuming it from
// a 1.5-s SIGSTOP; a plain wait_for would wake up timed out.
TEST(RunnableWait, AnAnswerRightAfterALongStopIsNotATimeout) {
  int toChild[2];
  ASSERT_EQ(::pipe(toChild), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(toChild[1]);
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
      ready = waitRunnable(cv, lock, 1s, [&] { return arrived; });
    }
    reader.join();
    ::_exit(ready ? 0 : 1);
  }
  ::close(toChild[0]);
  std::this_thread::sleep_for(200ms);  // the child is waiting
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  std::this_thread::sleep_for(1500ms);
  ASSERT_EQ(::kill(child, SIGCONT), 0);
  std::this_thread::sleep_for(50ms);
  ASSERT_EQ(::write(toChild[1], "x", 1), 1);
  ::close(toChild[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the wait timed out although the answer came 50 ms after the stop";
}

}  // namespace
}  // namespace xrc::client
