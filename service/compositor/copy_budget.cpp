#include "copy_budget.hpp"

namespace xrc {

bool CopyBudget::tryCharge(uint64_t bytes, int64_t nowNs, int64_t periodNs) {
  if (periodNs <= 0) periodNs = 1;
  if (windowStartNs_ == 0 || nowNs < windowStartNs_) {
    windowStartNs_ = nowNs;
  } else if (nowNs - windowStartNs_ >= periodNs) {
    const uint64_t windows = uint64_t((nowNs - windowStartNs_) / periodNs);
    const uint64_t windowsToClear = (used_ + perPeriod_ - 1) / perPeriod_;  // perPeriod_ >= 1
    used_ = windows >= windowsToClear ? 0 : used_ - windows * perPeriod_;
    windowStartNs_ += int64_t(windows) * periodNs;
  }
  if (used_ >= perPeriod_) return false;
  used_ += bytes;
  return true;
}

}  // namespace xrc
