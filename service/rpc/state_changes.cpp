#include "state_changes.hpp"

#include <algorithm>

namespace xrc {

void StateChanges::changed() {
  count_++;
  if (stopped_) return;
  for (auto& waiting : waiting_) waiting->fulfill();
  waiting_.clear();
}

void StateChanges::stop() {
  stopped_ = true;
  waiting_.clear();
}

kj::Promise<void> StateChanges::next() {
  if (stopped_) return kj::NEVER_DONE;
  // Watches whose call went away (the client left) are dropped here rather than kept.
  std::erase_if(waiting_, [](kj::Own<kj::PromiseFulfiller<void>>& f) { return !f->isWaiting(); });
  auto paf = kj::newPromiseAndFulfiller<void>();
  waiting_.push_back(kj::mv(paf.fulfiller));
  return kj::mv(paf.promise);
}

}  // namespace xrc
