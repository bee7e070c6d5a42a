#include "image_budget.hpp"

#include <algorithm>
#include <utility>

#include "xrc/vk_util.hpp"

namespace xrc {

namespace {
constexpr uint64_t kMiB = 1024 * 1024;
}

ImageBudget::Charge& ImageBudget::Charge::operator=(Charge&& other) noexcept {
  if (this != &other) {
    reset();
    budget_ = std::exchange(other.budget_, nullptr);
    clientId_ = other.clientId_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ImageBudget::Charge::reset() {
  if (budget_ != nullptr) std::exchange(budget_, nullptr)->giveBack(clientId_, std::exchange(bytes_, 0));
}

Result<ImageBudget::Charge> ImageBudget::charge(uint32_t clientId, uint64_t bytes, const char** limitHit) {
  Lock lock(mutex_);
  uint64_t& mine = byClient_[clientId];
  if (mine + bytes > perClient_) {
    const uint64_t had = mine;
    if (had == 0) byClient_.erase(clientId);
    if (limitHit != nullptr) *limitHit = "max_image_mib_per_client";
    return makeError(ErrorCode::exhausted,
                     "these images need {} MiB and the client holds {} MiB of its {} MiB (max_image_mib_per_client)",
                     (bytes + kMiB - 1) / kMiB, had / kMiB, perClient_ / kMiB);
  }
  if (used_ + bytes > total_) {
    if (mine == 0) byClient_.erase(clientId);
    if (limitHit != nullptr) *limitHit = "max_image_mib_total";
    return makeError(
        ErrorCode::exhausted,
        "these images need {} MiB and all clients hold {} MiB of the daemon's {} MiB (max_image_mib_total)",
        (bytes + kMiB - 1) / kMiB, used_ / kMiB, total_ / kMiB);
  }
  mine += bytes;
  used_ += bytes;
  Charge charge;
  charge.budget_ = this;
  charge.clientId_ = clientId;
  charge.bytes_ = bytes;
  return charge;
}

void ImageBudget::giveBack(uint32_t clientId, uint64_t bytes) {
  Lock lock(mutex_);
  auto it = byClient_.find(clientId);
  if (it != byClient_.end()) {
    it->second -= std::min(it->second, bytes);
    if (it->second == 0) byClient_.erase(it);
  }
  used_ -= std::min(used_, bytes);
}

uint64_t ImageBudget::clientBytes(uint32_t clientId) const {
  Lock lock(mutex_);
  auto it = byClient_.find(clientId);
  return it == byClient_.end() ? 0 : it->second;
}

uint64_t ImageBudget::totalBytes() const {
  Lock lock(mutex_);
  return used_;
}

}  // namespace xrc
