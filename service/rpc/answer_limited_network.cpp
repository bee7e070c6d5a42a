#include "answer_limited_network.hpp"

#include <kj/debug.h>

namespace xrc {

bool OpenAnswerCount::onIncoming(capnp::rpc::Message::Which which) {
  using W = capnp::rpc::Message::Which;
  if (which == W::CALL || which == W::BOOTSTRAP) {
    ++open_;
  } else if (which == W::FINISH && open_ > 0) {
    --open_;  // a Finish for no open question ends the connection in the RPC system anyway
  }
  if (open_ <= limit_ || reported_) return false;
  reported_ = true;
  return true;
}

AnswerLimitedNetwork::AnswerLimitedNetwork(capnp::TwoPartyVatNetwork& inner, int64_t limit,
                                           kj::Function<void()> onExceeded)
    : inner_(inner), count_(limit), onExceeded_(kj::mv(onExceeded)) {}

kj::Maybe<kj::Own<capnp::TwoPartyVatNetworkBase::Connection>> AnswerLimitedNetwork::connect(
    capnp::rpc::twoparty::VatId::Reader ref) {
  return inner_.connect(ref);  // the daemon never connects out: this is the local vat (null)
}

kj::Promise<kj::Own<capnp::TwoPartyVatNetworkBase::Connection>> AnswerLimitedNetwork::accept() {
  // The inner network accepts exactly once (its one peer); this network is then that connection.
  return inner_.accept().then([this](kj::Own<capnp::TwoPartyVatNetworkBase::Connection> c) {
    innerConnection_ = kj::mv(c);
    return kj::Own<capnp::TwoPartyVatNetworkBase::Connection>(
        static_cast<capnp::TwoPartyVatNetworkBase::Connection*>(this), releaseInner_);
  });
}

capnp::TwoPartyVatNetworkBase::Connection& AnswerLimitedNetwork::connection() {
  KJ_REQUIRE(innerConnection_.get() != nullptr, "connection used before accept");
  return *innerConnection_;
}

kj::Promise<kj::Maybe<kj::Own<capnp::IncomingRpcMessage>>> AnswerLimitedNetwork::receiveIncomingMessage() {
  return connection().receiveIncomingMessage().then([this](kj::Maybe<kj::Own<capnp::IncomingRpcMessage>>&& message) {
    KJ_IF_MAYBE (m, message) {
      // The RPC system reads the same root next; a message it cannot read, it rejects itself.
      capnp::rpc::Message::Which which = capnp::rpc::Message::UNIMPLEMENTED;
      try {
        which = (*m)->getBody().getAs<capnp::rpc::Message>().which();
      } catch (const kj::Exception&) {
      }
      if (count_.onIncoming(which)) onExceeded_();
    }
    return kj::mv(message);
  });
}

}  // namespace xrc
