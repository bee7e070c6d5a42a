#include "copy_batch.hpp"

namespace xrc {

CopyBatch::CopyBatch(kj::Timer& timer, std::chrono::microseconds window) : timer_(timer), window_(window) {}

kj::Promise<void> CopyBatch::join() {
  if (window_.count() <= 0) return kj::READY_NOW;
  State& state = *state_;
  if (!state.taking) {
    // The previous batch (if any) has been let go: its forked promise resolved, so replacing it
    // here, outside its continuation, only drops this object's reference to it. Only the batch
    // opened here can end `taking`, as no other is open until it does.
    state.taking = true;
    state.batches++;
    batch_ =
        timer_.afterDelay(window_.count() * kj::MICROSECONDS).then([state = state_] { state->taking = false; }).fork();
  }
  state.copies++;
  return batch_->addBranch();
}

}  // namespace xrc
