#include "compositor_server.hpp"

#include "../log.hpp"
#include "control_server.hpp"
#include "session_server.hpp"
#include "state_changes.hpp"
#include "xrc/client_text.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc {

kj::Promise<void> CompositorServer::describe(DescribeContext context) {
  auto results = context.getResults();
  if (facts_->refusal) {
    toWire(*facts_->refusal, results.initError());
    return kj::READY_NOW;
  }
  setOk(results.initError());
  fillSystemDescription(ctx_, results.initSystem());
  return kj::READY_NOW;
}

kj::Promise<void> CompositorServer::connect(ConnectContext context) {
  auto info = context.getParams().getClient();
  auto results = context.getResults();
  auto fail = [&](const Error& error) {
    log::warn("connection from pid {} refused: {}", peer_.pid, error.describe());
    toWire(error, results.initError());
    return kj::READY_NOW;
  };
  if (facts_->refusal) {
    toWire(*facts_->refusal, results.initError());
    return kj::READY_NOW;
  }
  if (facts_->hasSession) return fail(makeError(ErrorCode::callOrder, "this connection already has a session"));
  auto device = fromWire(info.getDevice());
  if (!device) return fail(device.error());
  NegotiationInput in;
  in.clientMajor = info.getVersion().getMajor();
  in.clientMinor = info.getVersion().getMinor();
  in.client = device.value();
  in.client.externalSemaphoreFd = info.getHasExternalSemaphoreFd();
  in.client.timelineSemaphoreFd = info.getHasTimelineSemaphoreFd();
  in.daemon = ctx_.gpu.facts();
  in.forcedMode = ctx_.forcedSyncMode;
  auto mode = negotiate(in);
  if (!mode) return fail(mode.error());

  const bool overlay = info.getOverlay();
  const uint32_t placement = info.getOverlayPlacement();
  if (auto v = validateOverlayPlacement(overlay, placement); !v) return fail(v.error());

  // Cut on a character boundary and with its control characters escaped: the name is printed in
  // the log, status tables and JSON.
  std::string name = printableClientText(info.getName().cStr(), kMaxClientNameBytes);
  if (name.empty()) name = "unnamed";
  facts_->hasSession = true;
  auto record = ctx_.clients.add({name, peer_.pid, peer_.uid, mode.value(), overlay, placement});
  // Closing a client's connection on purpose (kick, runtime lost) takes it out of the status at
  // once: the connection is torn down, and the session removes its record, on a later turn,
  // which a client that reacts to its socket closing can outrun.
  record->disconnect = [disconnect = disconnect_, &clients = ctx_.clients, id = record->id] {
    clients.remove(id);
    disconnect();
  };
  ctx_.scheduler.addClient(record);
  ctx_.stateChanges.changed();  // a first session becomes the primary
  auto session = std::make_shared<SessionState>(ctx_, timer_, record);
  session->clientMinor = in.clientMinor;
  log::client(log::Level::info, {record->id, record->pid, record->name},
              "client {} '{}' (pid {}) connected, sync mode {}{}", record->id, record->name, record->pid,
              syncModeName(record->syncMode), overlay ? fmt::format(", overlay at placement {}", placement) : "");

  setOk(results.initError());
  results.setSession(kj::heap<SessionServer>(session));
  fillSystemDescription(ctx_, results.initSystem());
  results.setSyncMode(toWire(mode.value()));
  results.setClientId(record->id);
  return kj::READY_NOW;
}

kj::Promise<void> CompositorServer::control(ControlContext context) {
  auto results = context.getResults();
  if (facts_->refusal) {
    toWire(*facts_->refusal, results.initError());
    return kj::READY_NOW;
  }
  if (peer_.uid == PeerCredentials::kUnknownUid || (peer_.uid != ctx_.daemonUid && peer_.uid != 0)) {
    toWire(
        makeError(ErrorCode::permissionDenied, "uid {} may not control a daemon of uid {}", peer_.uid, ctx_.daemonUid),
        results.initError());
    return kj::READY_NOW;
  }
  setOk(results.initError());
  results.setControl(kj::heap<ControlServer>(ctx_));
  return kj::READY_NOW;
}

}  // namespace xrc
