// The daemon's Unix socket: binding (with stale-socket detection), accepting, and one two-party
// RPC system per connection with fd passing enabled. Connections are independent: one failing
// or disconnecting never touches another.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../compositor/daemon_context.hpp"
#include "compositor_server.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc {

// Creates the socket's directory if needed (0700), refuses a path a live daemon serves,
// removes a stale socket file left by a crash.
Result<UniqueFd> bindListeningSocket(const std::string& path);

class Listener final : private kj::TaskSet::ErrorHandler {
 public:
  Listener(DaemonContext& ctx, kj::AsyncIoContext& io, UniqueFd listenFd);
  ~Listener();
  // Accepts (and closes idle connections) until the returned promise is dropped.
  kj::Promise<void> run();
  // The daemon bound `path` itself: if the file is deleted while it serves, it is bound again
  // (and logged); if something else takes its place, that is logged and left alone.
  void watchSocketFile(const std::string& path);
  size_t connectionCount() const { return connections_.size(); }

  // Connections accepted over max_connections / max_connections_per_uid that are answered with
  // the refusal before they close; more than this at once are closed unanswered.
  static constexpr size_t kMaxRefusedOpen = 16;

 private:
  struct Connection;
  kj::Promise<void> acceptLoop(kj::ConnectionReceiver& receiver);
  kj::Promise<void> serve(kj::Own<kj::AsyncIoStream> stream);   // one accepted connection
  kj::Promise<void> backOff(const std::string& why);            // accepting failed: resolves when to retry
  std::optional<Error> overLimit(const PeerCredentials& peer);  // a new connection's refusal, if any
  // Closes `connection` (once); a non-empty `limit` counts it as a refusal under that limit.
  void close(Connection& connection, std::string_view limit, std::string_view why);
  kj::Promise<void> sweepLoop();
  void sweep(int64_t nowNs);  // closes idle, slow and refused connections
  void checkSocketFile();
  void taskFailed(kj::Exception&& exception) override;

  DaemonContext& ctx_;
  kj::AsyncIoContext& io_;
  kj::Own<kj::ConnectionReceiver> receiver_;
  std::vector<kj::Own<kj::ConnectionReceiver>> reboundReceivers_;  // the socket file bound again
  std::string socketPath_;                                         // empty: not watched
  uint64_t socketInode_ = 0;
  bool socketReplacedLogged_ = false;
  std::set<Connection*> connections_;
  std::map<uint32_t, size_t> connectionsByUid_;  // of the connections served (not refused)
  size_t refusedOpen_ = 0;
  uint64_t acceptFailures_ = 0;   // in the current burst (0: accepting works)
  int64_t acceptWarnedAtNs_ = 0;  // when the last burst was logged (0: never)
  // Last: its tasks own the connections, whose ends update the members above.
  kj::TaskSet tasks_;
};

}  // namespace xrc
