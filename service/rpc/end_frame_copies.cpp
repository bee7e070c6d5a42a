#include "end_frame_copies.hpp"

#include <algorithm>

#include "../log.hpp"

namespace xrc {

EndFrameCopies::~EndFrameCopies() { submit(); }

kj::Promise<Status> EndFrameCopies::add(gpu::PreparedCopy copy, Settle settle, std::atomic<uint64_t>& submissions) {
  auto paf = kj::newPromiseAndFulfiller<Status>();
  copies_.push_back(copy);
  held_.push_back(Held{kj::mv(settle), kj::mv(paf.fulfiller), &submissions});
  return kj::mv(paf.promise);
}

bool EndFrameCopies::holds(const gpu::SharedSwapchain* swapchain) const {
  return std::any_of(copies_.begin(), copies_.end(),
                     [&](const gpu::PreparedCopy& c) { return c.swapchain == swapchain; });
}

void EndFrameCopies::handOver(EndFrameCopies& into) {
  into.copies_.insert(into.copies_.end(), copies_.begin(), copies_.end());
  for (Held& h : held_) into.held_.push_back(std::move(h));
  copies_.clear();
  held_.clear();
}

void EndFrameCopies::submit() {
  if (copies_.empty()) return;
  const Status submitted = gpu::submitCopies(copies_);
  // Taken out first: a settle may add to a new batch of this object's, never to this one.
  std::vector<gpu::PreparedCopy> copies = std::move(copies_);
  std::vector<Held> held = std::move(held_);
  copies_.clear();
  held_.clear();
  if (submitted) {
    // Counted once per client whose copies went to the queue in it.
    std::vector<std::atomic<uint64_t>*> counted;
    for (size_t i = 0; i < held.size(); ++i) {
      if (copies[i].result.onHost() ||
          std::find(counted.begin(), counted.end(), held[i].submissions) != counted.end()) {
        continue;
      }
      counted.push_back(held[i].submissions);
      (*held[i].submissions)++;
    }
  }
  for (size_t i = 0; i < held.size(); ++i) {
    // A copy made on the host is done whatever became of the submission of the others.
    Result<gpu::CopyResult> result = submitted || copies[i].result.onHost()
                                         ? Result<gpu::CopyResult>(copies[i].result)
                                         : Result<gpu::CopyResult>(submitted.error());
    held[i].settled->fulfill(held[i].settle(std::move(result)));
  }
}

void LetGoCopies::gatherUntilQueueEmpty() {
  if (gathering_ || copiesPerSubmission_ == 0) return;
  gathering_ = true;
  // The previous gathering's promise has run: replacing it here, outside it, only drops it.
  submission_ = kj::evalLast([this] { submit(); }).eagerlyEvaluate([](kj::Exception&& e) {
    log::error("the copies of a let-go could not be submitted: {}", e.getDescription().cStr());
  });
}

kj::Promise<void> LetGoCopies::submitted() {
  if (!gathering_) return kj::READY_NOW;
  auto paf = kj::newPromiseAndFulfiller<void>();
  waiting_.push_back(kj::mv(paf.fulfiller));
  if (copies_.size() >= copiesPerSubmission_) submitGathered();
  return kj::mv(paf.promise);
}

void LetGoCopies::submit() {
  gathering_ = false;
  submitGathered();
}

void LetGoCopies::submitGathered() {
  copies_.submit();
  std::vector<kj::Own<kj::PromiseFulfiller<void>>> waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& w : waiting) w->fulfill();
}

}  // namespace xrc
