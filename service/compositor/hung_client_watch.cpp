#include "hung_client_watch.hpp"

#include "../log.hpp"

namespace xrc {

bool HungClientWatch::check(int64_t nowNs) {
  bool changed = false;
  const int64_t hungAfterNs = ctx_.limits.hungClientTimeoutMs * 1'000'000;
  const int64_t evictAfterNs = ctx_.limits.evictHungAfterMs * 1'000'000;
  for (const auto& client : ctx_.clients.snapshot()) {
    const int64_t last = client->lastProgressNs.load();
    // Only sessions with frames to show: one that never submitted one (an OpenXR app before
    // xrBeginSession) has nothing on the display to go stale.
    if (last == 0 || client->framesSubmitted.load() == 0) continue;
    const int64_t stalledNs = nowNs - last;
    const log::ClientFields fields{client->id, client->pid, client->name};
    if (stalledNs <= hungAfterNs) {
      if (client->hung.load()) {
        ctx_.scheduler.setHung(client->id, false);
        changed = true;
        log::client(log::Level::info, fields, "client {} '{}' makes frames again", client->id, client->name);
      }
      continue;
    }
    if (!client->hung.load()) {
      ctx_.scheduler.setHung(client->id, true);
      changed = true;
      ctx_.refusals.record("hung_client_timeout_ms",
                           fmt::format("client {} '{}' (pid {}) made no frame calls for {} ms: marked hung", client->id,
                                       client->name, client->pid, stalledNs / 1'000'000));
    }
    if (evictAfterNs > 0 && stalledNs > hungAfterNs + evictAfterNs && client->disconnect) {
      ctx_.refusals.record("evict_hung_after_ms",
                           fmt::format("client {} '{}' (pid {}) hung for {} ms: disconnected", client->id, client->name,
                                       client->pid, (stalledNs - hungAfterNs) / 1'000'000));
      client->disconnect();
    }
  }
  return changed;
}

}  // namespace xrc
