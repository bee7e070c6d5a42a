// The pieces that bound what a client can make the daemon spend: the limits' configuration,
// message framing (half-sent messages), the image memory budget, the rate-limited refusal log
// and a hung primary's hand-over.
#include <gtest/gtest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <chrono>
#include <vector>

#include <kj/async-io.h>

#include "compositor/copy_budget.hpp"
#include "compositor/frame_scheduler.hpp"
#include "compositor/image_budget.hpp"
#include "compositor/refusals.hpp"
#include "config/daemon_config.hpp"
#include "rpc/answer_limited_network.hpp"
#include "xrc.capnp.h"
#include "xrc/batching_stream.hpp"
#include "xrc/message_frame_tracker.hpp"
#include "xrc/vk_util.hpp"

namespace xrc {
namespace {

TEST(Limits, EveryLimitIsAConfigKeyWithItsRangeChecked) {
  DaemonConfig c;
  ASSERT_TRUE(applyToml("max_connections = 10\nevict_hung_after_ms = 5000\n", "f.toml", c));
  EXPECT_EQ(c.limits.maxConnections, 10);
  EXPECT_EQ(c.limits.evictHungAfterMs, 5000);
  auto s = applyToml("\nmax_message_kib = 4\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "f.toml:2: max_message_kib must be within 16..65536 (got 4)");
  EXPECT_EQ(c.limits.maxMessageKib, Limits{}.maxMessageKib);  // left as it was
  s = applyToml("max_connections = \"many\"\n", "f.toml", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("'max_connections' must be an integer"), std::string::npos);
  DaemonConfig bad;
  bad.limits.maxConnectionsPerUid = 0;
  auto v = validateConfig(bad);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message, "--max-connections-per-uid must be within 1..65536 (got 0)");
  EXPECT_EQ(changedKeys(DaemonConfig{}, c), std::vector<std::string>({"max_connections", "evict_hung_after_ms"}));
}

std::vector<uint8_t> frame(capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return {bytes.begin(), bytes.end()};
}

TEST(MessageFrameTracker, FollowsSingleAndMultiSegmentMessagesFedInAnyPieces) {
  // One message of one segment, one of three (a 4-byte padded table), one of two.
  std::vector<uint8_t> stream;
  for (uint32_t firstSegmentWords : {64u, 1u, 2u}) {
    capnp::MallocMessageBuilder message(firstSegmentWords, capnp::AllocationStrategy::FIXED_SIZE);
    auto status = message.initRoot<wire::DaemonStatus>();
    status.setDaemonVersion("a version string long enough to spill into another segment");
    status.setBackend("headless");
    auto bytes = frame(message);
    stream.insert(stream.end(), bytes.begin(), bytes.end());
  }
  for (size_t piece : {size_t(1), size_t(3), size_t(7), size_t(64), stream.size()}) {
    MessageFrameTracker tracker;
    size_t completed = 0;
    for (size_t at = 0; at < stream.size(); at += piece) {
      completed += tracker.consume(stream.data() + at, std::min(piece, stream.size() - at));
    }
    EXPECT_EQ(completed, 3u) << "pieces of " << piece;
    EXPECT_EQ(tracker.messages(), 3u);
    EXPECT_FALSE(tracker.midMessage());
  }
  // A table announcing 64 MiB is known from its first 8 bytes.
  MessageFrameTracker tracker;
  const uint32_t header[2] = {0, 8u << 20};
  EXPECT_EQ(tracker.consume(reinterpret_cast<const uint8_t*>(header), 8), 0u);
  EXPECT_TRUE(tracker.midMessage());
  EXPECT_EQ(tracker.announcedBodyBytes(), uint64_t(64) << 20);
}

TEST(BatchingStream, AMessageOverTheLimitFailsTheReadOfItsTable) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto pipe = io.provider->newCapabilityPipe();
  BatchingStream reader(kj::mv(pipe.ends[1]), BatchingStream::Reads::readAhead);
  uint64_t announced = 0;
  reader.limitMessageBytes(1024, [&](uint64_t size) { announced = size; });
  const uint32_t small[2] = {0, 2};  // 16 bytes: fine
  const uint8_t body[16] = {};
  const uint32_t large[2] = {0, 1u << 20};
  pipe.ends[0]->write(small, 8).wait(io.waitScope);
  pipe.ends[0]->write(body, 16).wait(io.waitScope);
  pipe.ends[0]->write(large, 8).wait(io.waitScope);
  uint8_t buffer[16];
  EXPECT_EQ(reader.tryRead(buffer, 8, 8).wait(io.waitScope), 8u);
  EXPECT_EQ(reader.tryRead(buffer, 16, 16).wait(io.waitScope), 16u);
  EXPECT_EQ(reader.messagesRead(), 1u);
  EXPECT_ANY_THROW(reader.tryRead(buffer, 8, 8).wait(io.waitScope));
  EXPECT_EQ(announced, uint64_t(8) << 20);
  EXPECT_ANY_THROW(reader.tryRead(buffer, 1, 8).wait(io.waitScope));  // and stays failed
}

TEST(BatchingStream, AnswersThePeerDoesNotReadArePassedOnlyUpToTheLimit) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto pipe = io.provider->newCapabilityPipe();
  BatchingStream writer(kj::mv(pipe.ends[0]), BatchingStream::Reads::passThrough);
  int exceeded = 0;
  writer.limitUnsentBytes(256 * 1024, [&] { exceeded++; });
  const std::string chunk(4096, 'a');
  // Nobody reads: the socket's buffer fills, then the queue, then the limit is passed.
  for (int i = 0; i < 1024 && exceeded == 0; ++i) {
    (void)writer.write(chunk.data(), chunk.size());
    io.waitScope.poll();
  }
  EXPECT_EQ(exceeded, 1);
  EXPECT_ANY_THROW(writer.write(chunk.data(), chunk.size()).wait(io.waitScope));
  EXPECT_EQ(exceeded, 1);
}

TEST(BatchingStream, MessagesBeyondAWindowsShareWaitForTheNextWindow) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto pipe = io.provider->newCapabilityPipe();
  BatchingStream reader(kj::mv(pipe.ends[1]), BatchingStream::Reads::readAhead);
  int limited = 0;
  constexpr int64_t kWindowNs = 50'000'000;
  reader.limitMessageRate(io.provider->getTimer(), 10, kWindowNs, [&] { limited++; });
  // 30 empty messages (a one-segment table announcing 0 words), all sent at once.
  std::vector<uint32_t> words;
  for (int i = 0; i < 30; ++i) words.insert(words.end(), {0u, 0u});
  pipe.ends[0]->write(words.data(), words.size() * 4).wait(io.waitScope);
  const auto start = std::chrono::steady_clock::now();
  uint8_t buffer[8];
  for (int i = 0; i < 30; ++i) ASSERT_EQ(reader.tryRead(buffer, 8, 8).wait(io.waitScope), 8u);
  EXPECT_EQ(reader.messagesRead(), 30u);
  // Ten per window: the last ten could not come before two windows had passed.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::nanoseconds(2 * kWindowNs));
  EXPECT_EQ(limited, 2);
}

TEST(ImageBudget, ChargesPerClientAndInTotalAndGivesBack) {
  VkImageCreateInfo info{};
  info.format = VK_FORMAT_R8G8B8A8_UNORM;
  info.extent = {1024, 1024, 1};
  info.mipLevels = 1;
  info.arrayLayers = 2;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  EXPECT_EQ(vk::imageBytes(info), uint64_t(8) << 20);
  info.mipLevels = 11;  // 1024 .. 1: a third more
  EXPECT_EQ(vk::imageBytes(info), (uint64_t(1398101) * 4) * 2);
  info.format = VK_FORMAT_D24_UNORM_S8_UINT;  // no size of its own: 16 bytes a texel
  info.mipLevels = 1;
  info.arrayLayers = 6;  // a cube map
  EXPECT_EQ(vk::imageBytes(info), (uint64_t(1024) * 1024 * 16) * 6);

  ImageBudget budget(100, 150);
  auto a = budget.charge(1, 60);
  ASSERT_TRUE(a);
  const char* limit = nullptr;
  auto tooMuch = budget.charge(1, 41, &limit);
  ASSERT_FALSE(tooMuch);
  EXPECT_STREQ(limit, "max_image_mib_per_client");
  EXPECT_EQ(tooMuch.error().code, ErrorCode::exhausted);
  EXPECT_NE(tooMuch.error().message.find("max_image_mib_per_client"), std::string::npos);
  auto b = budget.charge(2, 80);
  ASSERT_TRUE(b);
  auto overTotal = budget.charge(3, 20, &limit);
  ASSERT_FALSE(overTotal);
  EXPECT_STREQ(limit, "max_image_mib_total");
  EXPECT_NE(overTotal.error().message.find("max_image_mib_total"), std::string::npos);
  EXPECT_EQ(budget.clientBytes(3), 0u);
  EXPECT_EQ(budget.totalBytes(), 140u);
  {
    ImageBudget::Charge moved = std::move(a).value();
    EXPECT_EQ(budget.clientBytes(1), 60u);
  }  // given back
  EXPECT_EQ(budget.clientBytes(1), 0u);
  EXPECT_EQ(budget.totalBytes(), 80u);
  EXPECT_TRUE(budget.charge(3, 20));  // a temporary: given back at once
  EXPECT_EQ(budget.totalBytes(), 80u);
}

TEST(Refusals, CountsEveryOneAndWarnsOncePerIntervalPerLimit) {
  Refusals refusals;
  const int64_t t0 = 1'000'000'000;
  EXPECT_TRUE(refusals.recordAt("max_connections", "first", t0));
  EXPECT_FALSE(refusals.recordAt("max_connections", "second", t0 + 1));
  EXPECT_TRUE(refusals.recordAt("max_message_kib", "another limit", t0 + 2));
  EXPECT_FALSE(refusals.recordAt("max_connections", "third", t0 + Refusals::kLogIntervalNs - 1));
  EXPECT_TRUE(refusals.recordAt("max_connections", "fourth", t0 + Refusals::kLogIntervalNs));
  const auto counts = refusals.snapshot();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].limit, "max_connections");
  EXPECT_EQ(counts[0].count, 4u);
  EXPECT_EQ(counts[0].lastNs, t0 + Refusals::kLogIntervalNs);
  EXPECT_EQ(counts[1].count, 1u);
}

std::shared_ptr<ClientRecord> record(uint32_t id) {
  auto r = std::make_shared<ClientRecord>();
  r->id = id;
  return r;
}

TEST(FrameScheduler, AHungPrimaryHandsItsRoleToTheNextNormalClient) {
  FrameScheduler scheduler;
  auto a = record(1), b = record(2), c = record(3);
  scheduler.addClient(a);
  scheduler.addClient(b);
  scheduler.addClient(c);
  EXPECT_TRUE(scheduler.visibility(1).visible);
  scheduler.setHung(1, true);
  EXPECT_FALSE(scheduler.visibility(1).visible);
  EXPECT_TRUE(scheduler.visibility(2).focused);
  scheduler.setHung(2, true);
  EXPECT_TRUE(scheduler.visibility(3).focused);
  // Resumed clients do not take the role back; with nobody else left, a hung one keeps it.
  scheduler.setHung(1, false);
  EXPECT_TRUE(scheduler.visibility(3).focused);
  scheduler.setHung(1, true);
  scheduler.setHung(3, true);
  EXPECT_TRUE(scheduler.visibility(3).focused);
  scheduler.setHung(2, false);
  (void)scheduler.removeClient(3);
  EXPECT_TRUE(scheduler.visibility(2).focused);
}

TEST(CopyBudget, AFullPeriodSkipsAndLargeCopiesOverdrawTheNextOnes) {
  constexpr int64_t kPeriod = 10'000'000;
  CopyBudget budget(100);
  int64_t t = 1'000'000'000;
  EXPECT_TRUE(budget.tryCharge(60, t, kPeriod));
  EXPECT_TRUE(budget.tryCharge(60, t + 1, kPeriod));  // 120: the one that crosses still goes
  EXPECT_FALSE(budget.tryCharge(1, t + 2, kPeriod));
  EXPECT_TRUE(budget.tryCharge(60, t + kPeriod, kPeriod));  // next period: 20 carried over, fits
  // A copy of three periods' worth takes the next two periods too.
  t += 10 * kPeriod;
  EXPECT_TRUE(budget.tryCharge(300, t, kPeriod));
  EXPECT_FALSE(budget.tryCharge(1, t + kPeriod, kPeriod));
  EXPECT_FALSE(budget.tryCharge(1, t + 2 * kPeriod - 1, kPeriod));
  EXPECT_TRUE(budget.tryCharge(1, t + 3 * kPeriod, kPeriod));
  // A long pause clears any debt.
  EXPECT_TRUE(budget.tryCharge(1000, t + 4 * kPeriod, kPeriod));
  EXPECT_TRUE(budget.tryCharge(1, t + 1000 * kPeriod, kPeriod));
}

// Questions asked (calls, bootstraps) and not finished are what the daemon's answer table keeps.
TEST(OpenAnswers, CallsAndBootstrapsOpenFinishesCloseAndThePeakIsReportedOnce) {
  using W = capnp::rpc::Message::Which;
  OpenAnswerCount count(3);
  EXPECT_FALSE(count.onIncoming(W::BOOTSTRAP));
  EXPECT_FALSE(count.onIncoming(W::CALL));
  EXPECT_FALSE(count.onIncoming(W::CALL));
  EXPECT_EQ(count.open(), 3);
  // Returns travel the other way; releases, resolves and disembargoes open nothing.
  for (W other : {W::RELEASE, W::RESOLVE, W::DISEMBARGO, W::RETURN, W::ABORT}) EXPECT_FALSE(count.onIncoming(other));
  EXPECT_EQ(count.open(), 3);
  EXPECT_FALSE(count.onIncoming(W::FINISH));
  EXPECT_FALSE(count.onIncoming(W::CALL));
  EXPECT_TRUE(count.onIncoming(W::CALL));   // the fourth open answer
  EXPECT_FALSE(count.onIncoming(W::CALL));  // reported once
  EXPECT_EQ(count.open(), 5);
  for (int i = 0; i < 10; ++i) (void)count.onIncoming(W::FINISH);
  EXPECT_EQ(count.open(), 0);  // more finishes than questions do not bank credit
}

// A hundredth of the limit every 10 ms; below 100 a second, one message per longer window: the
// rate is the limit exactly.
TEST(Limits, MessageRateWindowsAreShortAndKeepTheRate) {
  EXPECT_EQ(messageRateWindow(10000), (MessageRateWindow{100, 10'000'000}));
  EXPECT_EQ(messageRateWindow(10'000'000), (MessageRateWindow{100'000, 10'000'000}));
  EXPECT_EQ(messageRateWindow(10), (MessageRateWindow{1, 100'000'000}));
  EXPECT_EQ(messageRateWindow(150), (MessageRateWindow{1, 6'666'666}));
  for (int64_t perSecond : {10, 99, 100, 101, 5000, 12345}) {
    const MessageRateWindow w = messageRateWindow(perSecond);
    const double rate = double(w.messages) * 1e9 / double(w.ns);
    EXPECT_NEAR(rate, double(perSecond), double(perSecond) * 0.01) << perSecond;
    EXPECT_LE(w.ns, 100'000'000) << perSecond;
  }
}

}  // namespace
}  // namespace xrc
