#include "release_settlements.hpp"

#include <utility>

namespace xrc {

void ReleaseSettlements::settled(uint32_t swapchainId, uint32_t index, Status status) {
  if (unsettled_ > 0) unsettled_--;
  if (kept_.size() == kMaxKept) {
    kept_.pop_front();
    dropped_++;
  }
  kept_.push_back(Settlement{swapchainId, index, std::move(status)});
}

std::vector<ReleaseSettlements::Settlement> ReleaseSettlements::take() {
  std::vector<Settlement> out(std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
  return out;
}

}  // namespace xrc
