#include "release_failures.hpp"

#include <utility>

namespace xrc {

void ReleaseFailures::add(uint32_t swapchainId, uint32_t index, Error error) {
  if (kept_.size() == kMaxKept) {
    kept_.pop_front();
    if (dropped_ < UINT32_MAX) dropped_++;
  }
  kept_.push_back(Failure{swapchainId, index, std::move(error)});
}

ReleaseFailures::Taken ReleaseFailures::take() {
  Taken out{{kept_.begin(), kept_.end()}, dropped_};
  kept_.clear();
  dropped_ = 0;
  return out;
}

}  // namespace xrc
