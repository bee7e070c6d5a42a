// Per-client CPU frame pacing (seed 003): when waitFrame returns and which display time the
// frame targets. Pure logic on the KJ thread; one pacer per session.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../backends/backend.hpp"

namespace xrc {

class FramePacer {
 public:
  struct Plan {
    int64_t predictedNs = 0;  // the vsync the frame targets
    int64_t wakeNs = 0;       // when waitFrame answers: `periods` periods before the frame is latched
    uint32_t periods = 1;     // the client's cadence: every n-th display frame
  };

  // A waitFrame call arrived at `nowNs`. Frame n targets `periods` vsyncs after frame n-1, and the
  // client gets `periods` display periods to produce it, so that at most one frame waits beyond
  // the one on display. A client whose work (answer -> next call) takes longer than its budget
  // moves to the next whole multiple of the display period; one that speeds up comes back once
  // its work fits a shorter cadence with margin.
  Plan next(int64_t nowNs, const DisplayClock& clock);
  // The plan's answer left only at `nowNs`, after its wake (1.5: an endFrame standing for the
  // wait is answered once its releases and frame are done too). The client's work is measured
  // from then: the daemon's own delay must not count against the client's budget.
  void answeredAt(int64_t nowNs) { lastWakeNs_ = std::max(lastWakeNs_, nowNs); }
  uint32_t periods() const { return periods_; }

 private:
  int64_t lastPredictedNs_ = 0;
  int64_t lastWakeNs_ = 0;
  double workEmaNs_ = 0;  // smoothed client work per frame
  uint32_t periods_ = 1;
};

}  // namespace xrc
