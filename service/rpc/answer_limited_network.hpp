// The server side of a two-party connection that counts the answers its peer keeps open.
//
// Cap'n Proto keeps every answer (with its results, for promise pipelining) until the caller
// sends `Finish`. A client that calls and reads the answers but never finishes them grows the
// daemon's answer table without bound, below every other limit: the flow limit counts only calls
// not yet answered, and answers read leave nothing unsent. This network counts, per connection,
// the questions the peer has asked (calls, bootstraps) and not finished, and reports the first
// message that takes the count past the limit.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.capnp.h>
#include <kj/function.h>

#include <cstdint>

namespace xrc {

// Pure bookkeeping, kept apart from the network so it can be tested on its own.
class OpenAnswerCount {
 public:
  explicit OpenAnswerCount(int64_t limit) : limit_(limit) {}
  // One incoming message; true when it takes the count past the limit (reported once).
  bool onIncoming(capnp::rpc::Message::Which which);
  int64_t open() const { return open_; }

 private:
  int64_t limit_;
  int64_t open_ = 0;
  bool reported_ = false;
};

class AnswerLimitedNetwork final : public capnp::TwoPartyVatNetworkBase,
                                   private capnp::TwoPartyVatNetworkBase::Connection {
 public:
  // `inner` must outlive this; `onExceeded` runs once, on the event loop, when the peer keeps
  // more than `limit` answers open.
  AnswerLimitedNetwork(capnp::TwoPartyVatNetwork& inner, int64_t limit, kj::Function<void()> onExceeded);

  kj::Maybe<kj::Own<capnp::TwoPartyVatNetworkBase::Connection>> connect(
      capnp::rpc::twoparty::VatId::Reader ref) override;
  kj::Promise<kj::Own<capnp::TwoPartyVatNetworkBase::Connection>> accept() override;

 private:
  // Connection: every call goes to the inner network's connection.
  kj::Own<capnp::RpcFlowController> newStream() override { return connection().newStream(); }
  capnp::rpc::twoparty::VatId::Reader getPeerVatId() override { return connection().getPeerVatId(); }
  kj::Own<capnp::OutgoingRpcMessage> newOutgoingMessage(kj::uint firstSegmentWordSize) override {
    return connection().newOutgoingMessage(firstSegmentWordSize);
  }
  kj::Promise<kj::Maybe<kj::Own<capnp::IncomingRpcMessage>>> receiveIncomingMessage() override;
  kj::Promise<void> shutdown() override { return connection().shutdown(); }

  capnp::TwoPartyVatNetworkBase::Connection& connection();

  // The RPC system drops the connection it accepted when it is done with it; the inner network
  // learns of that (and resolves onDisconnect()) only when its own connection is dropped.
  class ReleaseInner final : public kj::Disposer {
   public:
    explicit ReleaseInner(AnswerLimitedNetwork& network) : network_(network) {}
    void disposeImpl(void*) const override { network_.innerConnection_ = nullptr; }

   private:
    AnswerLimitedNetwork& network_;
  };

  capnp::TwoPartyVatNetwork& inner_;
  ReleaseInner releaseInner_{*this};
  kj::Own<capnp::TwoPartyVatNetworkBase::Connection> innerConnection_;
  OpenAnswerCount count_;
  kj::Function<void()> onExceeded_;
};

}  // namespace xrc
