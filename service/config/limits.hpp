// What one client (or all of them) may make the daemon spend: connections, message sizes,
// unanswered calls, unread answers, image memory, swapchains, and how long a
// client may make no progress. Every limit is a config key and a command-line option of the
// same name; docs/OPERATIONS.md lists them with their defaults.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xrc/result.hpp"

namespace xrc {

struct Limits {
  int64_t maxConnections = 256;             // all connections (clients, tools) at once
  int64_t maxConnectionsPerUid = 64;        // of one user at once
  int64_t maxSwapchainsPerSession = 64;     // at once
  int64_t maxImageMibPerClient = 2048;      // shared and runtime images of one client's swapchains
  int64_t maxImageMibTotal = 0;             // of all clients; 0: three quarters of the device's memory
  int64_t maxMessageKib = 256;              // one incoming message, checked before it is read
  int64_t maxUnansweredCallKib = 1024;      // calls of one connection not yet answered (Cap'n Proto flow limit)
  int64_t maxUnsentAnswerKib = 16384;       // answers a connection has not read: past this it is closed
  int64_t maxUnfinishedAnswers = 4096;      // answers a connection keeps (calls not yet finished): past this, closed
  int64_t maxCopyMibPerPeriod = 256;        // copies one client's releases cause per display period
  int64_t maxMessagesPerSecond = 10000;     // one connection's incoming messages (calls, finishes)
  int64_t hungClientTimeoutMs = 3000;       // no frame and no call for this long: marked hung
  int64_t evictHungAfterMs = 0;             // hung this long: disconnected (0: never)
  int64_t idleConnectionTimeoutMs = 10000;  // no session, no call for this long: closed

  bool operator==(const Limits&) const = default;
};

// One limit as it appears in files (`key`), on the command line (`--` + key with '-') and in
// messages; `member` points into Limits.
struct LimitKey {
  const char* key;
  int64_t Limits::*member;
  int64_t min;
  int64_t max;
  const char* help;
};

std::span<const LimitKey> limitKeys();
const LimitKey* findLimitKey(std::string_view key);
// "max_connections" -> "max-connections".
std::string limitOption(const LimitKey& key);

// max_messages_per_second is enforced in windows of about kMessageRateWindowNs, each taking its
// share of the limit. Short windows spread a flood's messages, and so the RPC thread's time
// answering them, over the second: with 100 ms windows the bursts of 1000 calls cost a rendering
// bystander on lavapipe 7-11 of its 90 frames a second, with 10 ms windows none
// (docs/BENCHMARKS.md). At least one message per window: below 100 messages a second the window
// grows instead, so the limit holds exactly.
inline constexpr int64_t kMessageRateWindowNs = 10'000'000;
struct MessageRateWindow {
  uint64_t messages;
  int64_t ns;
  bool operator==(const MessageRateWindow&) const = default;
};
MessageRateWindow messageRateWindow(int64_t messagesPerSecond);

// Each within its range; `prefix` as in validateConfig.
Status validateLimits(const Limits& limits, std::string_view prefix);
void changedLimitKeys(const Limits& a, const Limits& b, std::vector<std::string>& out);

}  // namespace xrc
