// Notices clients that stopped making frames (stopped, deadlocked, stuck in a GPU wait of their
// own): after hung_client_timeout_ms without a waitFrame or endFrame a client that has shown
// frames is marked hung (status, one log line) and loses the primary role to the next normal
// client; its last complete frame stays where it was. After evict_hung_after_ms more (when
// configured) it is disconnected. A client that resumes within the limits carries on.
#pragma once

#include <cstdint>

#include "daemon_context.hpp"

namespace xrc {

class HungClientWatch {
 public:
  explicit HungClientWatch(DaemonContext& ctx) : ctx_(ctx) {}
  // Looks at every client once; KJ thread (eviction closes connections).
  // Says whether a client was found hung or making frames again (its visibility may change).
  bool check(int64_t nowNs);

 private:
  DaemonContext& ctx_;
};

}  // namespace xrc
