// Changes to what a frame timing carries besides its timing: a session's visibility and focus,
// `stopping`, LOCAL and input (protocol 1.18, Session.watchState). A wait answered at once
// carries them as of its endFrame; a client that sleeps to the wake hears of a change before it
// through a watch, so that what it sees is no older than an answer sent at the wake. KJ thread
// only.
#pragma once

#include <kj/async.h>

#include <cstdint>
#include <vector>

namespace xrc {

class StateChanges {
 public:
  // How many changes so far: a watch that saw an older count is answered at once.
  uint64_t count() const { return count_; }
  // Something a session's state depends on may have changed (a control call, a session came or
  // left, a client was found hung or resumed, the daemon is stopping): every watch resolves.
  void changed();
  // Resolves at the next changed(). One per session at a time (the session enforces it), so at
  // most as many are kept as there are sessions.
  kj::Promise<void> next();
  // Before the event loop goes: drops every watch; changes after it are only counted.
  void stop();

 private:
  uint64_t count_ = 0;
  bool stopped_ = false;
  std::vector<kj::Own<kj::PromiseFulfiller<void>>> waiting_;
};

}  // namespace xrc
