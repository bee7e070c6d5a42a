#include "release_settlements.hpp"

#include <algorithm>
#include <utility>

namespace xrc {

void ReleaseSettlements::accepted(uint32_t swapchainId, uint32_t index) {
  unsettled_.push_back(Image{swapchainId, index});
}

void ReleaseSettlements::settled(uint32_t swapchainId, uint32_t index, Status status) {
  auto it = std::find(unsettled_.begin(), unsettled_.end(), Image{swapchainId, index});
  if (it != unsettled_.end()) unsettled_.erase(it);
  if (kept_.size() == kMaxKept) {
    kept_.pop_front();
    dropped_++;
  }
  kept_.push_back(Settlement{swapchainId, index, std::move(status)});
}

bool ReleaseSettlements::isUnsettled(uint32_t swapchainId, uint32_t index) const {
  return std::find(unsettled_.begin(), unsettled_.end(), Image{swapchainId, index}) != unsettled_.end();
}

std::vector<ReleaseSettlements::Settlement> ReleaseSettlements::take() {
  std::vector<Settlement> out(std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
  return out;
}

}  // namespace xrc
