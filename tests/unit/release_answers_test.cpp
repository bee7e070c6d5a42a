// client-lib's record of release answers: an acquire waits for its image's answer, and a lost
// connection wakes it with an error instead of leaving it to its timeout.
#include "release_answers.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace xrc::client {
namespace {

using namespace std::chrono_literals;

TEST(ReleaseAnswers, AnImageIsAnsweredOnceEveryReleaseOfItIs) {
  ReleaseAnswers answers(3);
  EXPECT_TRUE(answers.isAnswered(1));
  answers.sent(1);
  answers.sent(1);
  EXPECT_FALSE(answers.isAnswered(1));
  answers.answered(1, Status{});
  EXPECT_FALSE(answers.isAnswered(1));
  answers.answered(1, makeError(ErrorCode::timeout, "rendering unfinished"));
  EXPECT_TRUE(answers.isAnswered(1));
  bool hadToWait = true;
  const Status first = answers.waitAnswered(1, 10ms, hadToWait);
  EXPECT_FALSE(hadToWait);
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, ErrorCode::timeout);
  EXPECT_TRUE(answers.waitAnswered(1, 10ms, hadToWait));  // an error is returned once
}

TEST(ReleaseAnswers, ALostConnectionWakesAWaitingAcquireWithItsError) {
  ReleaseAnswers answers(2);
  answers.sent(0);
  answers.sent(1);
  answers.answered(1, Status{});
  std::optional<Status> got;
  bool hadToWait = false;
  std::thread acquire([&] { got = answers.waitAnswered(0, 30s, hadToWait); });
  std::this_thread::sleep_for(20ms);
  answers.abandonAll(makeError(ErrorCode::internal, "the connection was lost"));
  acquire.join();
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(*got);
  // Woken by the loss, not by its 30 s bound.
  EXPECT_EQ(got->error().message, "the connection was lost");
  EXPECT_TRUE(hadToWait);
  // An image already answered keeps its answer.
  EXPECT_TRUE(answers.waitAnswered(1, 10ms, hadToWait));
}

}  // namespace
}  // namespace xrc::client
