// How many bytes of copies one client's releases may make the GPU do per display period. A
// client that releases faster than its frames can be shown (one image back to back, without
// frames) would otherwise take the copy queue from everybody. A release over the budget is
// skipped: acknowledged without its copy (as a frame superseded before its display is dropped),
// its semaphores passed through. The first copy of a period always fits, however large; what it
// overdraws is taken from the next periods, so a client of very large images gets fewer copies
// instead of none.
#pragma once

#include <cstdint>

namespace xrc {

class CopyBudget {
 public:
  explicit CopyBudget(uint64_t bytesPerPeriod) : perPeriod_(bytesPerPeriod > 0 ? bytesPerPeriod : 1) {}
  // Charges a copy of `bytes` at `nowNs` if it fits; false: skip it.
  bool tryCharge(uint64_t bytes, int64_t nowNs, int64_t periodNs);

 private:
  uint64_t perPeriod_;
  int64_t windowStartNs_ = 0;
  uint64_t used_ = 0;  // in the current window, overdraft of earlier ones included
};

}  // namespace xrc
