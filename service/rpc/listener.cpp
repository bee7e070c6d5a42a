#include "listener.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "../log.hpp"
#include "answer_limited_network.hpp"
#include "compositor_server.hpp"
#include "frame_wakes.hpp"
#include "state_changes.hpp"
#include "xrc/batching_stream.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/socket_path.hpp"
#include "xrc/unix_socket_stream.hpp"

namespace xrc {

namespace {
// Fds the daemon accepts per incoming message. Clients never send any; the limit applies to
// incoming messages only (the daemon's answers carry 3 per image), but 0 turns fd passing off in
// both directions, so 1. (256 before: every read then allocated, built and destroyed 256
// AutoCloseFd; perf put that at 5 % of the RPC thread, though an A/B of daemon CPU per client
// frame on lavapipe, 8 clients, could not tell the two apart.)
constexpr uint kMaxFdsPerMessage = 1;

// Between attempts while accept() fails (fds exhausted): long enough not to spin, short enough
// that a client waits at most this long once fds are free again.
constexpr int64_t kAcceptBackoffMs = 100;
// Bursts of accept failures are logged at most this often: with fds at the limit, a connection
// that closes lets one accept through and ends the burst, and the next starts a new one at once.
constexpr int64_t kAcceptWarnIntervalNs = 10'000'000'000;

// How often connections are looked at for idleness, and how long a refused one is kept open for
// its client to read why.
constexpr int64_t kSweepIntervalMs = 250;
// With no connection to sweep, only the socket file is looked at: an idle daemon wakes rarely.
constexpr int64_t kIdleSweepIntervalMs = 1000;
constexpr int64_t kRefusedLingerMs = 2000;
}  // namespace

Result<UniqueFd> bindListeningSocket(const std::string& path) {
  auto addr = unixSocketAddress(path);
  if (!addr) return addr.error();
  const auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return makeError(ErrorCode::invalidArgument, "cannot create socket directory '{}': {}", dir,
                       std::strerror(errno));
    }  // Whoever owns (or may rewrite) the directory could swap the socket for their own: serve only
    // from a directory that is ours or root's and not open to others for writing (unless sticky).
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      return makeError(ErrorCode::invalidArgument, "cannot inspect socket directory '{}': {}", dir,
                       std::strerror(errno));
    }
    if (st.st_uid != ::geteuid() && st.st_uid != 0) {
      return makeError(ErrorCode::permissionDenied,
                       "socket directory '{}' belongs to uid {}, not to this daemon (uid {}) or root; refusing to "
                       "serve there",
                       dir, st.st_uid, ::geteuid());
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return makeError(ErrorCode::permissionDenied,
                       "socket directory '{}' is writable by others (mode {:o}) without the sticky bit; refusing to "
                       "serve there",
                       dir, st.st_mode & 07777);
    }
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return makeError(ErrorCode::internal, "socket(): {}", std::strerror(errno));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un)) != 0) {
    if (errno != EADDRINUSE) {
      return makeError(ErrorCode::invalidArgument, "cannot bind '{}': {}", path, std::strerror(errno));
    }
    // Someone's file is there: a live daemon answers, a stale socket from a crash does not.
    // Probed without blocking: a daemon that stopped accepting (its backlog full) is still there.
    auto probe = connectUnixSocket(path, std::chrono::milliseconds(0));
    if (probe) return makeError(ErrorCode::exhausted, "another daemon is already serving '{}'", path);
    if (probe.error().code == ErrorCode::timeout) {
      return makeError(ErrorCode::exhausted,
                       "another daemon is listening on '{}' but not accepting connections (hung?); refusing to "
                       "replace it",
                       path);
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      return makeError(ErrorCode::invalidArgument, "'{}' exists and is not a socket; refusing to replace it", path);
    }
    log::warn("removing stale socket '{}' (nobody is listening on it)", path);
    ::unlink(path.c_str());
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un)) != 0) {
      return makeError(ErrorCode::invalidArgument, "cannot bind '{}': {}", path, std::strerror(errno));
    }
  }
  // The socket's mode is the daemon's choice, not its umask's: its owner only (a daemon for other
  // users is started by systemd's socket unit, which sets the group and mode).
  if (::chmod(path.c_str(), 0600) != 0) {
    return makeError(ErrorCode::internal, "chmod('{}', 0600): {}", path, std::strerror(errno));
  }
  if (::listen(fd.get(), 64) != 0) return makeError(ErrorCode::internal, "listen(): {}", std::strerror(errno));
  return fd;
}

// Fulfilled to close a connection on purpose (Control.kick, a limit). Outlives nothing: the
// server's closure holds it weakly, so closing a connection that is already gone does nothing.
struct KickSwitch {
  kj::Own<kj::PromiseFulfiller<void>> fulfiller;
  void pull() {
    if (fulfiller->isWaiting()) fulfiller->fulfill();
  }
};

struct Listener::Connection {
  Connection(Listener& listener, kj::Own<kj::AsyncCapabilityStream> s, PeerCredentials peerCredentials,
             std::optional<Error> refusal, kj::Own<kj::PromiseFulfiller<void>> kickFulfiller)
      : kick(std::make_shared<KickSwitch>(KickSwitch{kj::mv(kickFulfiller)})),
        facts(std::make_shared<ConnectionFacts>(ConnectionFacts{false, std::move(refusal)})),
        peer(peerCredentials),
        acceptedNs(monotonicNowNs()),
        stream(makeStream(kj::mv(s))),
        // The capability stream is what lets the daemon send fds. Clients never send any: the
        // read-ahead stream reads without ancillary data, so the kernel drops fds a client attaches.
        network(*stream, kMaxFdsPerMessage, capnp::rpc::twoparty::Side::SERVER),
        limitedNetwork(network, listener.ctx_.limits.maxUnfinishedAnswers,
                       [this, &listener] {
                         listener.close(*this, "max_unfinished_answers",
                                        fmt::format("keeps more than {} answers without finishing them",
                                                    listener.ctx_.limits.maxUnfinishedAnswers));
                       }),
        rpc(capnp::makeRpcServer(
            limitedNetwork, kj::heap<CompositorServer>(listener.ctx_, listener.io_.provider->getTimer(), peer, facts,
                                                       [weak = std::weak_ptr(kick)] {
                                                         if (auto k = weak.lock()) k->pull();
                                                       }))) {
    // Calls whose answers are not yet sent: past this the daemon reads no more of this
    // connection's messages until some are answered (Cap'n Proto's flow limit, in words).
    rpc.setFlowLimit(size_t(listener.ctx_.limits.maxUnansweredCallKib) * 1024 / 8);
    // A message larger than max_message_kib is refused from its header, before it is read (not
    // through Cap'n Proto's ReaderOptions, which 0.9 applies to the daemon's own answers too:
    // pixel readbacks are larger).
    batching->limitMessageBytes(uint64_t(listener.ctx_.limits.maxMessageKib) * 1024, [this, &listener](uint64_t size) {
      listener.close(*this, "max_message_kib",
                     size == UINT64_MAX ? std::string("sent a malformed message header (too many segments)")
                                        : fmt::format("announced a message of {} KiB (at most {})", size / 1024,
                                                      listener.ctx_.limits.maxMessageKib));
    });
    // A connection's messages beyond its share wait for the next window: a flood of calls leaves
    // the RPC thread to the others.
    const Limits& limits = listener.ctx_.limits;
    const MessageRateWindow window = messageRateWindow(limits.maxMessagesPerSecond);
    batching->limitMessageRate(listener.io_.provider->getTimer(), window.messages, window.ns, [this, &listener] {
      listener.ctx_.refusals.record("max_messages_per_second",
                                    fmt::format("connection from pid {} sends more than {} messages a second; the "
                                                "rest wait",
                                                peer.pid, listener.ctx_.limits.maxMessagesPerSecond));
    });
    // Answers the client does not read: past this the connection is closed.
    batching->limitUnsentBytes(size_t(listener.ctx_.limits.maxUnsentAnswerKib) * 1024, [this, &listener] {
      listener.close(*this, "max_unsent_answer_kib", "does not read its answers");
    });
  }

  kj::Own<kj::AsyncCapabilityStream> makeStream(kj::Own<kj::AsyncCapabilityStream> socket) {
    auto own = kj::heap<BatchingStream>(kj::mv(socket), BatchingStream::Reads::readAhead);
    batching = own.get();
    return own;
  }

  std::shared_ptr<KickSwitch> kick;  // first member: destroyed last
  std::shared_ptr<ConnectionFacts> facts;
  PeerCredentials peer;
  int64_t acceptedNs;
  bool closing = false;
  BatchingStream* batching = nullptr;  // `stream`, as what it is
  kj::Own<kj::AsyncCapabilityStream> stream;
  capnp::TwoPartyVatNetwork network;
  AnswerLimitedNetwork limitedNetwork;  // `network`, with the answers its peer keeps open counted
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

Listener::Listener(DaemonContext& ctx, kj::AsyncIoContext& io, UniqueFd listenFd) : ctx_(ctx), io_(io), tasks_(*this) {
  receiver_ = io.lowLevelProvider->wrapListenSocketFd(listenFd.release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP);
}

Listener::~Listener() = default;

kj::Promise<void> Listener::run() { return acceptLoop(*receiver_).exclusiveJoin(sweepLoop()); }

kj::Promise<void> Listener::acceptLoop(kj::ConnectionReceiver& receiver) {
  return receiver.accept().then(
      [this, &receiver](kj::Own<kj::AsyncIoStream> stream) {
        return serve(kj::mv(stream)).then([this, &receiver] { return acceptLoop(receiver); });
      },
      [this, &receiver](kj::Exception&& e) -> kj::Promise<void> {
        return backOff(e.getDescription().cStr()).then([this, &receiver] { return acceptLoop(receiver); });
      });
}

void Listener::watchSocketFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  socketPath_ = path;
  socketInode_ = st.st_ino;
}

void Listener::checkSocketFile() {
  if (socketPath_.empty()) return;
  struct stat st {};
  if (::lstat(socketPath_.c_str(), &st) == 0) {
    if (st.st_ino != socketInode_ && !socketReplacedLogged_) {
      socketReplacedLogged_ = true;
      log::error("the socket file '{}' was replaced by another file: new clients cannot reach this daemon there",
                 socketPath_);
    }
    return;
  }
  if (errno != ENOENT) return;
  auto fd = bindListeningSocket(socketPath_);
  if (!fd) {
    if (!socketReplacedLogged_)
      log::error("the socket file '{}' was deleted and cannot be bound again: {}", socketPath_, fd.error().message);
    socketReplacedLogged_ = true;
    return;
  }
  reboundReceivers_.push_back(io_.lowLevelProvider->wrapListenSocketFd(std::move(fd).value().release(),
                                                                       kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP));
  tasks_.add(acceptLoop(*reboundReceivers_.back()));
  watchSocketFile(socketPath_);
  socketReplacedLogged_ = false;
  log::warn("the socket file '{}' was deleted; bound it again", socketPath_);
}

kj::Promise<void> Listener::backOff(const std::string& why) {
  // accept() (or taking the accepted fd) failed: EMFILE/ENFILE when the daemon's fds run out,
  // ENOMEM... The listener backs off and tries again, so it serves once fds are free, and says so
  // once per burst, not once per attempt.
  if (acceptFailures_++ == 0) {
    const int64_t now = monotonicNowNs();
    if (acceptWarnedAtNs_ == 0 || now - acceptWarnedAtNs_ >= kAcceptWarnIntervalNs) {
      acceptWarnedAtNs_ = now;
      log::warn("accepting connections failed ({}); retrying every {} ms while it lasts (status: accept_failures)", why,
                kAcceptBackoffMs);
    }
  }
  ctx_.acceptFailures++;
  return io_.provider->getTimer().afterDelay(kAcceptBackoffMs * kj::MILLISECONDS);
}

std::optional<Error> Listener::overLimit(const PeerCredentials& peer) {
  const Limits& limits = ctx_.limits;
  if (int64_t(connections_.size() - refusedOpen_) >= limits.maxConnections) {
    ctx_.refusals.record("max_connections", fmt::format("connection from pid {} refused: {} connections are open",
                                                        peer.pid, limits.maxConnections));
    return makeError(ErrorCode::exhausted, "the daemon serves at most {} connections at once (max_connections)",
                     limits.maxConnections);
  }
  const auto mine = connectionsByUid_.find(peer.uid);
  if (mine != connectionsByUid_.end() && int64_t(mine->second) >= limits.maxConnectionsPerUid) {
    ctx_.refusals.record("max_connections_per_uid",
                         fmt::format("connection from pid {} refused: uid {} has {} connections open", peer.pid,
                                     peer.uid, limits.maxConnectionsPerUid));
    return makeError(ErrorCode::exhausted,
                     "the daemon serves at most {} connections of one user at once (max_connections_per_uid)",
                     limits.maxConnectionsPerUid);
  }
  return std::nullopt;
}

kj::Promise<void> Listener::serve(kj::Own<kj::AsyncIoStream> stream) {
  PeerCredentials peer;
  KJ_IF_MAYBE (fd, stream->getFd()) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(*fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      peer.pid = uint32_t(cred.pid);
      peer.uid = cred.uid;
    }
  }
  std::optional<Error> refusal = overLimit(peer);
  // A refused connection is answered (every call gets the refusal) and closed within
  // kRefusedLingerMs; beyond kMaxRefusedOpen of them at once, it is closed unanswered.
  if (refusal && refusedOpen_ >= kMaxRefusedOpen) return kj::READY_NOW;
  // Served through our own stream, which the event loop wakes only to read (KJ's would wake
  // the daemon each time the client reads an answer): it takes a duplicate of the fd, and
  // KJ's stream closes the original.
  kj::Own<kj::AsyncCapabilityStream> capStream;
  KJ_IF_MAYBE (fd, stream->getFd()) {
    UniqueFd own(::fcntl(*fd, F_DUPFD_CLOEXEC, 0));
    if (own.valid()) capStream = kj::heap<UnixSocketStream>(io_.unixEventPort, std::move(own));
  }
  if (capStream.get() == nullptr) return backOff(fmt::format("dup of an accepted fd: {}", std::strerror(errno)));
  acceptFailures_ = 0;  // the burst is over
  stream = nullptr;
  auto kick = kj::newPromiseAndFulfiller<void>();
  const bool refused = refusal.has_value();
  auto connection = kj::heap<Connection>(*this, kj::mv(capStream), peer, std::move(refusal), kj::mv(kick.fulfiller));
  Connection* raw = connection.get();
  connections_.insert(raw);
  if (refused) {
    ++refusedOpen_;
  } else {
    ++connectionsByUid_[peer.uid];
  }
  // The connection ends when the client goes or when it is closed, whichever comes first.
  auto ended = connection->network.onDisconnect().exclusiveJoin(kj::mv(kick.promise));
  tasks_.add(ended.attach(kj::mv(connection), kj::defer([this, raw, refused, uid = peer.uid] {
                            connections_.erase(raw);
                            if (refused) {
                              --refusedOpen_;
                            } else if (auto it = connectionsByUid_.find(uid);
                                       it != connectionsByUid_.end() && --it->second == 0) {
                              connectionsByUid_.erase(it);
                            }
                            // A session left (and its primary role may pass on). This also
                            // ends the gone client's own waiting watchState call, which would
                            // otherwise keep its session until the next change.
                            ctx_.stateChanges.changed();
                          })));
  return kj::READY_NOW;
}

void Listener::close(Connection& connection, std::string_view limit, std::string_view why) {
  if (connection.closing) return;
  connection.closing = true;
  if (!limit.empty()) {
    ctx_.refusals.record(limit, fmt::format("connection from pid {} closed: it {}", connection.peer.pid, why));
  }
  connection.kick->pull();
}

kj::Promise<void> Listener::sweepLoop() {
  const int64_t intervalMs = connections_.empty() ? kIdleSweepIntervalMs : kSweepIntervalMs;
  const int64_t wakeNs = housekeepingWakeNs(ctx_.backend.clock(), monotonicNowNs(), intervalMs * 1'000'000);
  return atMonotonicNs(io_.provider->getTimer(), wakeNs).then([this] {
    sweep(monotonicNowNs());
    checkSocketFile();
    return sweepLoop();
  });
}

void Listener::sweep(int64_t nowNs) {
  const int64_t idleNs = ctx_.limits.idleConnectionTimeoutMs * 1'000'000;
  std::vector<std::pair<Connection*, const char*>> toClose;
  for (Connection* c : connections_) {
    if (c->facts->refusal) {
      if (nowNs - c->acceptedNs > kRefusedLingerMs * 1'000'000) toClose.emplace_back(c, "");
    } else if (c->batching->midMessage() && nowNs - c->batching->messageStartedNs() > idleNs) {
      toClose.emplace_back(c, "sent part of a message and not the rest in time");
    } else if (!c->facts->hasSession && c->batching->messagesRead() == 0 && nowNs - c->acceptedNs > idleNs) {
      toClose.emplace_back(c, "sent nothing in time");
    }
  }
  for (auto [c, why] : toClose) close(*c, *why == '\0' ? "" : "idle_connection_timeout_ms", why);
}

void Listener::taskFailed(kj::Exception&& exception) {
  // A broken connection is that client's problem only.
  log::warn("connection ended with an error: {}", exception.getDescription().cStr());
}

}  // namespace xrc
