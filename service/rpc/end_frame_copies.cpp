#include "end_frame_copies.hpp"

#include <algorithm>

namespace xrc {

EndFrameCopies::~EndFrameCopies() { submit(); }

kj::Promise<Status> EndFrameCopies::add(uint32_t swapchainId, gpu::PreparedCopy copy, Settle settle) {
  auto paf = kj::newPromiseAndFulfiller<Status>();
  copies_.push_back(copy);
  held_.push_back(Held{swapchainId, kj::mv(settle), kj::mv(paf.fulfiller)});
  return kj::mv(paf.promise);
}

bool EndFrameCopies::holds(uint32_t swapchainId) const {
  return std::any_of(held_.begin(), held_.end(), [&](const Held& h) { return h.swapchainId == swapchainId; });
}

void EndFrameCopies::submit() {
  if (copies_.empty()) return;
  const Status submitted = gpu::submitCopies(copies_);
  const bool queued =
      std::any_of(copies_.begin(), copies_.end(), [](const gpu::PreparedCopy& c) { return !c.result.onHost(); });
  if (submitted && queued) submissions_++;
  // Taken out first: a settle may add to a new batch of this object's, never to this one.
  std::vector<gpu::PreparedCopy> copies = std::move(copies_);
  std::vector<Held> held = std::move(held_);
  copies_.clear();
  held_.clear();
  for (size_t i = 0; i < held.size(); ++i) {
    // A copy made on the host is done whatever became of the submission of the others.
    Result<gpu::CopyResult> result = submitted || copies[i].result.onHost()
                                         ? Result<gpu::CopyResult>(copies[i].result)
                                         : Result<gpu::CopyResult>(submitted.error());
    held[i].settled->fulfill(held[i].settle(std::move(result)));
  }
}

}  // namespace xrc
