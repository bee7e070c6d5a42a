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
  // Timeline mode: how long a release of the client waited for its rendering after it arrived,
  // which its frame's commit waits for too. A client whose frames would so reach the display
  // after their target's latch (many processes time-slicing one GPU finish its rendering late) is
  // told a target a period further ahead (`depth`), its cadence and wakes unchanged: its frames
  // are then shown at the time they were predicted, and rendered for it.
  void renderingWaited(int64_t waitNs);
  uint32_t periods() const { return periods_; }
  uint32_t depth() const { return depth_; }

 private:
  int64_t lastBaseNs_ = 0;  // the last target before `depth` periods were added
  int64_t lastWakeNs_ = 0;
  double workEmaNs_ = 0;           // smoothed client work per frame
  double renderingWaitEmaNs_ = 0;  // smoothed wait for the client's rendering (timeline mode)
  uint32_t periods_ = 1;
  uint32_t depth_ = 0;
};

}  // namespace xrc
