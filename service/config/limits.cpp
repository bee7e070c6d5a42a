#include "limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace xrc {

namespace {
constexpr int64_t kDay = 86'400'000;
constexpr std::array kKeys{
    LimitKey{"max_connections", &Limits::maxConnections, 1, 65536, "Connections (clients and tools) at once"},
    LimitKey{"max_connections_per_uid", &Limits::maxConnectionsPerUid, 1, 65536, "Connections of one user at once"},
    LimitKey{"max_swapchains_per_session", &Limits::maxSwapchainsPerSession, 1, 1024, "Swapchains of one session"},
    LimitKey{"max_image_mib_per_client", &Limits::maxImageMibPerClient, 1, int64_t(1) << 24,
             "MiB of swapchain images (shared and runtime) one client may make the daemon hold"},
    LimitKey{"max_image_mib_total", &Limits::maxImageMibTotal, 0, int64_t(1) << 24,
             "MiB of swapchain images of all clients (0: three quarters of the device's memory)"},
    LimitKey{"max_message_kib", &Limits::maxMessageKib, 16, 65536,
             "KiB of one incoming message, refused before it is read"},
    LimitKey{"max_unanswered_call_kib", &Limits::maxUnansweredCallKib, 16, int64_t(1) << 20,
             "KiB of one connection's calls not yet answered; past it, the daemon reads no more from it"},
    LimitKey{"max_unsent_answer_kib", &Limits::maxUnsentAnswerKib, 256, int64_t(1) << 20,
             "KiB of answers a connection has not read; past it, the connection is closed"},
    LimitKey{"max_unfinished_answers", &Limits::maxUnfinishedAnswers, 16, 1'000'000,
             "Answers one connection keeps open (calls it has not finished); past it, the connection is closed"},
    LimitKey{"max_messages_per_second", &Limits::maxMessagesPerSecond, 10, 10'000'000,
             "Messages one connection may send per second (in 10 ms windows); more wait for the next window"},
    LimitKey{"max_copy_mib_per_period", &Limits::maxCopyMibPerPeriod, 1, int64_t(1) << 20,
             "MiB of copies one client's releases may cause per display period; releases past it are skipped"},
    LimitKey{"hung_client_timeout_ms", &Limits::hungClientTimeoutMs, 100, kDay,
             "A session with frames to show that makes no progress this long is marked hung"},
    LimitKey{"evict_hung_after_ms", &Limits::evictHungAfterMs, 0, kDay,
             "A client hung this long is disconnected (0: never)"},
    LimitKey{"idle_connection_timeout_ms", &Limits::idleConnectionTimeoutMs, 100, kDay,
             "A connection with no session that sends nothing this long is closed"},
};
}  // namespace

std::span<const LimitKey> limitKeys() { return kKeys; }

MessageRateWindow messageRateWindow(int64_t messagesPerSecond) {
  const int64_t perSecond = std::max<int64_t>(messagesPerSecond, 1);
  const uint64_t messages = uint64_t(std::max<int64_t>(perSecond * kMessageRateWindowNs / 1'000'000'000, 1));
  return {messages, int64_t(messages * 1'000'000'000 / uint64_t(perSecond))};
}

const LimitKey* findLimitKey(std::string_view key) {
  for (const LimitKey& k : kKeys) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

std::string limitOption(const LimitKey& key) {
  std::string out = key.key;
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

Status validateLimits(const Limits& limits, std::string_view prefix) {
  for (const LimitKey& k : kKeys) {
    const int64_t value = limits.*k.member;
    if (value < k.min || value > k.max) {
      return makeError(ErrorCode::invalidArgument, "{}{} must be within {}..{} (got {})", prefix,
                       prefix == "--" ? limitOption(k) : std::string(k.key), k.min, k.max, value);
    }
  }
  return {};
}

void changedLimitKeys(const Limits& a, const Limits& b, std::vector<std::string>& out) {
  for (const LimitKey& k : kKeys) {
    if (a.*k.member != b.*k.member) out.emplace_back(k.key);
  }
}

}  // namespace xrc
